// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestExtractClassification covers the classification order of docs/decisions/sessions.md §1.5 on
// hand-built spans: operation name, OpenInference kind, Traceloop kind, span names.
func TestExtractClassification(t *testing.T) {
	tests := []struct {
		name, span string
		attrs      map[string]any
		scope      string
		root       bool
		class      session.SpanClass
		rule       string
		agent      string
	}{
		{"op invoke_agent", "invoke_agent triage", map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"}, "", false, session.ClassAgent, "gen_ai.operation.name=invoke_agent", "triage"},
		{"op invoke_agent name from span", "invoke_agent billing", map[string]any{"gen_ai.operation.name": "invoke_agent"}, "", false, session.ClassAgent, "gen_ai.operation.name=invoke_agent", "billing"},
		{"op invoke_agent unnamed is a turn", "Agent workflow", map[string]any{"gen_ai.operation.name": "invoke_agent"}, "", false, session.ClassTurn, "gen_ai.operation.name=invoke_agent;unnamed", ""},
		{"op create_agent is other", "create_agent x", map[string]any{"gen_ai.operation.name": "create_agent", "gen_ai.agent.name": "x"}, "", false, session.ClassOther, "gen_ai.operation.name=create_agent", ""},
		{"op execute_tool", "execute_tool search", map[string]any{"gen_ai.operation.name": "execute_tool"}, "", false, session.ClassTool, "gen_ai.operation.name=execute_tool", ""},
		{"op chat ignores the default agent name", "chat gpt-4o", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.agent.name": "OpenAI Agent"}, "", false, session.ClassLLM, "gen_ai.operation.name=chat", ""},
		{"op generate_content", "generate_content gemini", map[string]any{"gen_ai.operation.name": "generate_content"}, "", false, session.ClassLLM, "gen_ai.operation.name=generate_content", ""},
		{"op text_completion", "x", map[string]any{"gen_ai.operation.name": "text_completion"}, "", false, session.ClassLLM, "gen_ai.operation.name=text_completion", ""},
		{"op upper case", "x", map[string]any{"gen_ai.operation.name": "Chat"}, "", false, session.ClassLLM, "gen_ai.operation.name=chat", ""},
		{"op agent_handoff", "agent_handoff OpenAI Agent", map[string]any{"gen_ai.operation.name": "agent_handoff"}, "", false, session.ClassHandoff, "gen_ai.operation.name=agent_handoff", ""},
		{"op handoff", "a → b.handoff", map[string]any{"gen_ai.operation.name": "handoff"}, "", false, session.ClassHandoff, "gen_ai.operation.name=handoff", ""},
		{"op handle_conversation_turn", "handle_conversation_turn", map[string]any{"gen_ai.operation.name": "handle_conversation_turn"}, "", false, session.ClassTurn, "gen_ai.operation.name=handle_conversation_turn", ""},
		{"op invoke_workflow", "invoke_workflow crew", map[string]any{"gen_ai.operation.name": "invoke_workflow"}, "", false, session.ClassTurn, "gen_ai.operation.name=invoke_workflow", ""},
		{"op invoke_swarm is a turn, not the agent swarm", "invoke_swarm", map[string]any{"gen_ai.operation.name": "invoke_swarm", "gen_ai.agent.name": "swarm"}, "", false, session.ClassTurn, "gen_ai.operation.name=invoke_swarm", ""},
		{"op invoke_graph", "invoke_graph", map[string]any{"gen_ai.operation.name": "invoke_graph"}, "", false, session.ClassTurn, "gen_ai.operation.name=invoke_graph", ""},
		{"op unknown", "unknown", map[string]any{"gen_ai.operation.name": "unknown", "gen_ai.agent.name": "OpenAI Agent"}, "", false, session.ClassOther, "gen_ai.operation.name=unknown", ""},
		{"op cycle", "execute_event_loop_cycle", map[string]any{"gen_ai.operation.name": "execute_event_loop_cycle"}, "", false, session.ClassOther, "gen_ai.operation.name=execute_event_loop_cycle", ""},
		{"op agent_step", "step 1", map[string]any{"gen_ai.operation.name": "agent_step"}, "", false, session.ClassOther, "gen_ai.operation.name=agent_step", ""},
		{"op new value", "x", map[string]any{"gen_ai.operation.name": "summon_daemon"}, "", false, session.ClassOther, "gen_ai.operation.name=summon_daemon", ""},
		{"ADK merged parallel tool responses are no call", "execute_tool (merged)", map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "(merged tools)", "gcp.vertex.agent.tool_call_args": "N/A"}, "gcp.vertex.agent", false, session.ClassOther, "gen_ai.operation.name=execute_tool;adk_merged_tools", ""},
		{"op beats openinference kind", "x", map[string]any{"gen_ai.operation.name": "execute_tool", "openinference.span.kind": "LLM"}, "", false, session.ClassTool, "gen_ai.operation.name=execute_tool", ""},
		{"oi AGENT agent.name", "researcher", map[string]any{"openinference.span.kind": "AGENT", "agent.name": "researcher"}, "", false, session.ClassAgent, "openinference.span.kind=AGENT", "researcher"},
		{"oi AGENT span name", "CodeAgent.run", map[string]any{"openinference.span.kind": "AGENT"}, "", false, session.ClassAgent, "openinference.span.kind=AGENT", "CodeAgent.run"},
		{"oi AGENT workflow root", "Agent workflow", map[string]any{"openinference.span.kind": "AGENT"}, "", false, session.ClassTurn, "openinference.span.kind=AGENT;unnamed", ""},
		{"oi lower-case kind", "x", map[string]any{"openinference.span.kind": "tool"}, "", false, session.ClassTool, "openinference.span.kind=TOOL", ""},
		{"oi handoff span", "handoff to billing", map[string]any{"openinference.span.kind": "TOOL"}, "", false, session.ClassHandoff, "openinference.handoff_span", ""},
		{"oi handoff span dual-written", "handoff to billing", map[string]any{"openinference.span.kind": "TOOL", "gen_ai.operation.name": "execute_tool"}, "", false, session.ClassHandoff, "openinference.handoff_span", ""},
		{"oi LLM", "ChatOpenAI", map[string]any{"openinference.span.kind": "LLM"}, "", false, session.ClassLLM, "openinference.span.kind=LLM", ""},
		{"oi CHAIN root", "LangGraph", map[string]any{"openinference.span.kind": "CHAIN"}, "", true, session.ClassTurn, "openinference.span.kind=CHAIN;root", ""},
		{"oi CHAIN inner", "turn", map[string]any{"openinference.span.kind": "CHAIN"}, "", false, session.ClassOther, "openinference.span.kind=CHAIN", ""},
		{"oi RETRIEVER", "retrieve", map[string]any{"openinference.span.kind": "RETRIEVER"}, "", false, session.ClassOther, "openinference.span.kind=RETRIEVER", ""},
		{"traceloop workflow", "my_flow.workflow", map[string]any{"traceloop.span.kind": "workflow"}, "", false, session.ClassTurn, "traceloop.span.kind=workflow", ""},
		{"traceloop agent", "writer.agent", map[string]any{"traceloop.span.kind": "agent"}, "", false, session.ClassAgent, "traceloop.span.kind=agent", "writer"},
		{"traceloop agent entity name", "x.agent", map[string]any{"traceloop.span.kind": "agent", "traceloop.entity.name": "editor"}, "", false, session.ClassAgent, "traceloop.span.kind=agent", "editor"},
		{"traceloop tool", "search.tool", map[string]any{"traceloop.span.kind": "tool"}, "", false, session.ClassTool, "traceloop.span.kind=tool", ""},
		{"traceloop handoff", "a → b.handoff", map[string]any{"traceloop.span.kind": "handoff"}, "", false, session.ClassHandoff, "traceloop.span.kind=handoff", ""},
		{"traceloop task", "step.task", map[string]any{"traceloop.span.kind": "task"}, "", false, session.ClassOther, "traceloop.span.kind=task", ""},
		{"legacy openllmetry chat", "openai.chat", map[string]any{"llm.request.type": "chat"}, "", false, session.ClassLLM, "llm.request.type=chat", ""},
		{"handoff attributes only", "x", map[string]any{"gen_ai.handoff.from_agent": "a", "gen_ai.handoff.to_agent": "b"}, "", false, session.ClassHandoff, "gen_ai.handoff", ""},
		{"not nested invocation", "x", map[string]any{"gen_ai.invocation.is_nested": false}, "", false, session.ClassTurn, "gen_ai.invocation.is_nested=false", ""},
		{"name invoke_agent", "invoke_agent planner", nil, "", false, session.ClassAgent, "name:invoke_agent", "planner"},
		{"name execute_tool", "execute_tool search", nil, "", false, session.ClassTool, "name:execute_tool", ""},
		{"name chat", "chat claude-3", nil, "", false, session.ClassLLM, "name:chat", ""},
		{"name chatter is not chat", "chatter", nil, "", false, session.ClassOther, "", ""},
		{"vercel root with function id", "ai.generateText", map[string]any{"ai.telemetry.functionId": "support-agent"}, "", false, session.ClassAgent, "name:ai.generateText", "support-agent"},
		{"vercel root without function id", "ai.streamText", nil, "", false, session.ClassTurn, "name:ai.streamText;unnamed", ""},
		{"vercel doGenerate", "ai.generateText.doGenerate", nil, "", false, session.ClassLLM, "name:ai.*.doGenerate", ""},
		{"vercel doStream", "ai.streamText.doStream", nil, "", false, session.ClassLLM, "name:ai.*.doGenerate", ""},
		{"vercel tool call", "ai.toolCall", nil, "", false, session.ClassTool, "name:ai.toolCall", ""},
		{"vercel embed", "ai.embed", nil, "", false, session.ClassOther, "", ""},
		{"mcp tools/call", "tools/call search_docs", nil, "", false, session.ClassTool, "name:tools/call", ""},
		{"openai.response", "openai.response", nil, "", false, session.ClassLLM, "name:openai.response", ""},
		{"adk invocation", "invocation", nil, "gcp.vertex.agent", false, session.ClassTurn, "name:invocation", ""},
		{"invocation outside adk", "invocation", nil, "my-app", false, session.ClassOther, "", ""},
		{"adk call_llm", "call_llm", nil, "gcp.vertex.agent", false, session.ClassOther, "name:call_llm", ""},
		{"name *.agent", "researcher.agent", nil, "", false, session.ClassAgent, "name:*.agent", "researcher"},
		{"name *.tool", "search.tool", nil, "", false, session.ClassTool, "name:*.tool", ""},
		{"name *.workflow", "crewai.workflow", nil, "", false, session.ClassTurn, "name:*.workflow", ""},
		{"name *.handoff", "triage → billing.handoff", nil, "", false, session.ClassHandoff, "name:*.handoff", ""},
		{"http span", "GET /orders", map[string]any{"http.method": "GET"}, "", false, session.ClassOther, "", ""},
		{"evaluation span", "evaluate turn", map[string]any{"agent_eval.kind": "turn", "gen_ai.operation.name": "invoke_agent"}, "", false, session.ClassEvaluation, "agent_eval.kind", ""},
		{"judge call", "chat gpt-4o-mini", map[string]any{"gen_ai.operation.name": "chat", "agent_eval.judge": true}, "", false, session.ClassEvaluation, "agent_eval.judge", ""},
		{"evaluate without kind", "evaluate stuff", nil, "", false, session.ClassOther, "", ""},
		// contrib's gen_ai_normalizer: invoke_agent beside the source kind it was mapped from.
		{"normalized CHAIN root is the turn", "LangGraph", map[string]any{"gen_ai.operation.name": "invoke_agent", "openinference.span.kind": "CHAIN"}, "", true, session.ClassTurn, "gen_ai_normalizer:source_kind", ""},
		{"normalized CHAIN is no agent", "RunnableSequence", map[string]any{"gen_ai.operation.name": "invoke_agent", "openinference.span.kind": "CHAIN"}, "", false, session.ClassOther, "gen_ai_normalizer:source_kind", ""},
		{"normalized task is no agent", "format.task", map[string]any{"gen_ai.operation.name": "invoke_agent", "traceloop.span.kind": "task"}, "", false, session.ClassOther, "gen_ai_normalizer:source_kind", ""},
		{"normalized AGENT stays an agent", "triage", map[string]any{"gen_ai.operation.name": "invoke_agent", "openinference.span.kind": "AGENT", "agent.name": "triage"}, "", false, session.ClassAgent, "gen_ai.operation.name=invoke_agent", "triage"},
		{"mastra client_tool_call", "client_tool_call issue_refund", map[string]any{"gen_ai.operation.name": "client_tool_call"}, "", false, session.ClassTool, "gen_ai.operation.name=client_tool_call", ""},
		{"adk ts call_llm stays other in extraction", "call_llm", map[string]any{"gen_ai.request.model": "gemini"}, "gcp.vertex.agent", false, session.ClassOther, "name:call_llm", ""},
		// VoltAgent's own vocabulary.
		{"voltagent agent", "triage_agent", map[string]any{"entity.type": "agent", "entity.name": "triage_agent"}, "", true, session.ClassAgent, "voltagent.agent", "triage_agent"},
		{"voltagent sub-agent", "subagent:refund_agent", map[string]any{"entity.type": "agent", "entity.name": "triage_agent", "subagent.name": "refund_agent"}, "", false, session.ClassAgent, "voltagent.subagent", "refund_agent"},
		{"voltagent llm", "llm:streamText", map[string]any{"entity.type": "agent", "entity.name": "triage_agent", "span.type": "llm"}, "", false, session.ClassLLM, "voltagent.llm", ""},
		{"voltagent tool", "tool.execution:lookup_order", map[string]any{"entity.type": "agent", "entity.name": "triage_agent", "span.type": "tool", "tool.name": "lookup_order"}, "", false, session.ClassTool, "voltagent.tool", ""},
		{"voltagent memory", "memory.read", map[string]any{"entity.type": "agent", "entity.name": "triage_agent", "span.type": "memory"}, "", false, session.ClassOther, "voltagent", ""},
	}
	ex := NewExtractor(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSpan(t, tt.span, tt.attrs)
			if tt.root {
				s.SetParentSpanID(pcommon.SpanID{})
			}
			scope := pcommon.NewInstrumentationScope()
			scope.SetName(tt.scope)
			r := runExtract(t, ex, pcommon.NewResource(), scope, s)
			assert.Equal(t, tt.class, r.Class, "class (rule %q)", r.ClassRule)
			assert.Equal(t, tt.rule, r.ClassRule)
			assert.Equal(t, tt.agent, r.AgentName)
			checkInvariants(t, r, DefaultMaxTextBytes)
		})
	}
}

// TestExtractAgentNamePriority: gen_ai.agent.name → agent.name → graph.node.id → name.
func TestExtractAgentNamePriority(t *testing.T) {
	tests := []struct {
		attrs map[string]any
		agent string
		rule  string
	}{
		{map[string]any{"gen_ai.agent.name": "a", "agent.name": "b", "graph.node.id": "c"}, "a", "gen_ai.agent.name"},
		{map[string]any{"agent.name": "b", "graph.node.id": "c"}, "b", "agent.name"},
		{map[string]any{"graph.node.id": "c"}, "c", "graph.node.id"},
		{map[string]any{"gen_ai.agent.name": "  "}, "span", "span_name"},
	}
	for _, tt := range tests {
		tt.attrs["openinference.span.kind"] = "AGENT"
		r := extractOne(t, newSpan(t, "span", tt.attrs))
		assert.Equal(t, tt.agent, r.AgentName)
		assert.Equal(t, tt.rule, r.AgentRule)
	}
}

// TestExtractOpenLLMetryLegacy reads the indexed gen_ai.prompt.N / gen_ai.completion.N
// attributes and llm.request.functions.N of OpenLLMetry before about 0.61.
func TestExtractOpenLLMetryLegacy(t *testing.T) {
	s := newSpan(t, "openai.chat", map[string]any{
		"llm.request.type":                           "chat",
		"gen_ai.system":                              "openai",
		"gen_ai.request.model":                       "gpt-4o",
		"gen_ai.prompt.name":                         "not-a-message", // v1.39 key, not an index
		"gen_ai.prompt.0.role":                       "system",
		"gen_ai.prompt.0.content":                    "You are a refund agent.",
		"gen_ai.prompt.1.role":                       "user",
		"gen_ai.prompt.1.content":                    "Refund order 7",
		"gen_ai.prompt.2.role":                       "assistant",
		"gen_ai.prompt.2.content":                    "Which item?",
		"gen_ai.prompt.10.role":                      "user",
		"gen_ai.prompt.10.content":                   "The blue mug, order 7",
		"gen_ai.completion.0.role":                   "assistant",
		"gen_ai.completion.0.finish_reason":          "tool_calls",
		"gen_ai.completion.0.tool_calls.0.id":        "call_9",
		"gen_ai.completion.0.tool_calls.0.name":      "refund_order",
		"gen_ai.completion.0.tool_calls.0.arguments": `{"order_id": 7, "item": "blue mug"}`,
		"gen_ai.completion.0.tool_calls.1.name":      "notify",
		"gen_ai.completion.0.tool_calls.1.arguments": `{}`,
		"llm.request.functions.0.name":               "refund_order",
		"llm.request.functions.0.description":        "Refund an order",
		"llm.request.functions.0.parameters":         `{"type":"object","properties":{"order_id":{"type":"integer"}},"required":["order_id"]}`,
		"llm.request.functions.1.name":               "notify",
		"gen_ai.usage.prompt_tokens":                 int64(120),
		"gen_ai.usage.completion_tokens":             "17",
	})
	r := extractOne(t, s)
	assert.Equal(t, session.ClassLLM, r.Class)
	assert.Equal(t, "The blue mug, order 7", r.UserMessage, "the last user message (index 10 sorts after 2)")
	assert.Equal(t, []string{"tool_calls"}, r.FinishReasons)
	require.Len(t, r.RequestedCalls, 2)
	assert.Equal(t, session.RequestedToolCall{ID: "call_9", Name: "refund_order", Arguments: `{"order_id": 7, "item": "blue mug"}`}, r.RequestedCalls[0])
	assert.Equal(t, "notify", r.RequestedCalls[1].Name)
	require.Len(t, r.ToolDefs, 2)
	assert.Equal(t, "refund_order", r.ToolDefs[0].Name)
	assert.Equal(t, "Refund an order", r.ToolDefs[0].Description)
	jsonEq(t, `{"type":"object","properties":{"order_id":{"type":"integer"}},"required":["order_id"]}`, string(r.ToolDefs[0].Parameters))
	assert.Nil(t, r.ToolDefs[1].Parameters)
	assert.Equal(t, session.Usage{InputTokens: 120, OutputTokens: 17, LLMCalls: 1}, r.Usage)
	assert.Equal(t, "gpt-4o", r.Model)
	assert.True(t, r.ContentCaptured)
	assert.Empty(t, r.Problems)
}

// TestExtractOpenLLMetryAgentInput: an OpenLLMetry agent span's traceloop.entity.input is
// the Python call's {"args", "kwargs"} wrapper: the input is its named arguments, and an
// agent called with none has no input (the wrapper itself was the input before).
func TestExtractOpenLLMetryAgentInput(t *testing.T) {
	for _, tc := range []struct{ entityInput, want string }{
		{`{"args": [], "kwargs": {}}`, ""},
		{`{"args": [], "kwargs": {"question": "Where is order 7?"}}`, `{"question": "Where is order 7?"}`},
		{`Where is order 7?`, `Where is order 7?`},
	} {
		r := extractOne(t, newSpan(t, "support.agent", map[string]any{
			"traceloop.span.kind": "agent", "traceloop.entity.input": tc.entityInput,
		}))
		assert.Equal(t, session.ClassAgent, r.Class)
		assert.Equal(t, tc.want, r.Input, "entity input %s", tc.entityInput)
	}
}

// TestExtractVercel covers the Vercel AI SDK legacy telemetry (docs/decisions/conventions.md).
func TestExtractVercel(t *testing.T) {
	ex := NewExtractor(Config{})
	res, scope := pcommon.NewResource(), pcommon.NewInstrumentationScope()

	t.Run("generateText root", func(t *testing.T) {
		r := runExtract(t, ex, res, scope, newSpan(t, "ai.generateText", map[string]any{
			"operation.name":                  "ai.generateText support-agent",
			"ai.operationId":                  "ai.generateText",
			"ai.telemetry.functionId":         "support-agent",
			"ai.telemetry.metadata.sessionId": "sess-42",
			"ai.prompt":                       `{"system":"Be brief.","prompt":"Where is order 42?"}`,
			"ai.response.text":                "Order 42 ships today.",
			"ai.usage.promptTokens":           int64(30),
		}))
		assert.Equal(t, session.ClassAgent, r.Class)
		assert.Equal(t, "support-agent", r.AgentName)
		assert.Equal(t, "ai.telemetry.functionId", r.AgentRule)
		assert.Equal(t, "sess-42", r.SessionID)
		assert.Equal(t, "ai.telemetry.metadata.sessionId", r.SessionKey)
		assert.Equal(t, "Where is order 42?", r.UserMessage)
		assert.Equal(t, "Order 42 ships today.", r.Output)
		assert.Equal(t, session.Usage{InputTokens: 30}, r.Usage, "agent spans carry totals, counted only in a turn without LLM span (assembly)")
	})

	t.Run("doGenerate v4", func(t *testing.T) {
		r := runExtract(t, ex, res, scope, newSpan(t, "ai.generateText.doGenerate", map[string]any{
			"ai.prompt.messages": `[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Where is order 42?"}]},` +
				`{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c0","toolName":"lookup","args":{"id":1}}]},` +
				`{"role":"tool","content":[{"type":"tool-result","toolCallId":"c0","result":"x"}]}]`,
			"ai.prompt.tools": []any{
				`{"type":"function","name":"lookup_order","description":"Find an order","parameters":{"type":"object","properties":{"order_id":{"type":"integer"}},"required":["order_id"]}}`,
			},
			"ai.response.toolCalls":     `[{"toolCallType":"function","toolCallId":"c1","toolName":"lookup_order","args":"{\"order_id\":42}"}]`,
			"ai.response.finishReason":  "tool-calls",
			"ai.usage.promptTokens":     int64(30),
			"ai.usage.completionTokens": 5.0,
			"ai.model.id":               "gpt-4o-mini",
		}))
		assert.Equal(t, session.ClassLLM, r.Class)
		assert.Equal(t, "Where is order 42?", r.UserMessage)
		require.Len(t, r.RequestedCalls, 1)
		assert.Equal(t, session.RequestedToolCall{ID: "c1", Name: "lookup_order", Arguments: `{"order_id":42}`}, r.RequestedCalls[0])
		assert.Equal(t, []string{"tool-calls"}, r.FinishReasons)
		require.Len(t, r.ToolDefs, 1)
		assert.Equal(t, "lookup_order", r.ToolDefs[0].Name)
		assert.Equal(t, session.Usage{InputTokens: 30, OutputTokens: 5, LLMCalls: 1}, r.Usage)
		assert.Equal(t, "gpt-4o-mini", r.Model)
	})

	t.Run("doStream v5", func(t *testing.T) {
		r := runExtract(t, ex, res, scope, newSpan(t, "ai.streamText.doStream", map[string]any{
			"ai.prompt.messages":    `[{"role":"user","content":"hi"}]`,
			"ai.prompt.tools":       []any{`{"type":"function","name":"search","inputSchema":{"type":"OBJECT","properties":{"q":{"type":"STRING"}}}}`},
			"ai.response.text":      "Searching.",
			"ai.response.toolCalls": `[{"toolCallId":"c2","toolName":"search","input":{"q":"mugs"}}]`,
			"ai.usage.inputTokens":  int64(9),
			"ai.usage.outputTokens": int64(3),
		}))
		assert.Equal(t, "hi", r.UserMessage)
		assert.Equal(t, "Searching.", r.Output)
		require.Len(t, r.RequestedCalls, 1)
		jsonEq(t, `{"q":"mugs"}`, r.RequestedCalls[0].Arguments)
		require.Len(t, r.ToolDefs, 1)
		jsonEq(t, `{"type":"object","properties":{"q":{"type":"string"}}}`, string(r.ToolDefs[0].Parameters), "Gemini-style types lower-cased")
		assert.Equal(t, session.Usage{InputTokens: 9, OutputTokens: 3, LLMCalls: 1}, r.Usage)
	})

	t.Run("toolCall v4 and v5", func(t *testing.T) {
		r := runExtract(t, ex, res, scope, newSpan(t, "ai.toolCall", map[string]any{
			"ai.toolCall.name": "lookup_order", "ai.toolCall.id": "c1",
			"ai.toolCall.args": `{"order_id":42}`, "ai.toolCall.result": `{"status":"shipped"}`,
		}))
		assert.Equal(t, session.ClassTool, r.Class)
		assert.Equal(t, "lookup_order", r.ToolName)
		assert.Equal(t, "c1", r.ToolCallID)
		assert.Equal(t, `{"order_id":42}`, r.ToolArguments)
		assert.Equal(t, "ai.toolCall.args", r.ToolArgsSource)
		assert.Equal(t, `{"status":"shipped"}`, r.ToolResult)

		r = runExtract(t, ex, res, scope, newSpan(t, "ai.toolCall", map[string]any{
			"ai.toolCall.name": "search", "ai.toolCall.input": `{"q":"mugs"}`, "ai.toolCall.output": `["a"]`,
		}))
		assert.Equal(t, `{"q":"mugs"}`, r.ToolArguments)
		assert.Equal(t, "ai.toolCall.input", r.ToolArgsSource)
		assert.Equal(t, `["a"]`, r.ToolResult)
	})

	t.Run("conversationId is a fallback session key", func(t *testing.T) {
		r := runExtract(t, ex, res, scope, newSpan(t, "ai.toolCall", map[string]any{
			"ai.telemetry.metadata.conversationId": "conv-7", "ai.toolCall.name": "x",
		}))
		assert.Equal(t, "conv-7", r.SessionID)
		assert.Equal(t, "ai.telemetry.metadata.conversationId", r.SessionKey)
	})
}

// TestExtractStrands covers Strands' event-carried content (docs/decisions/conventions.md) in both
// its default (deprecated events) and latest (operation.details) modes.
func TestExtractStrands(t *testing.T) {
	ex := NewExtractor(Config{})
	res, scope := pcommon.NewResource(), pcommon.NewInstrumentationScope()

	t.Run("tool span, default mode", func(t *testing.T) {
		s := newSpan(t, "execute_tool get_weather", map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
			"gen_ai.tool.status": "error", "gen_ai.system": "strands-agents",
		})
		addEvent(t, s, "gen_ai.tool.message", map[string]any{"role": "tool", "content": `{"city": "Paris"}`, "id": "t1"})
		addEvent(t, s, "gen_ai.choice", map[string]any{"message": `[{"text": "service down"}]`, "id": "t1"})
		r := runExtract(t, ex, res, scope, s)
		assert.Equal(t, session.ClassTool, r.Class)
		jsonEq(t, `{"city":"Paris"}`, r.ToolArguments)
		assert.Equal(t, "event:gen_ai.tool.message", r.ToolArgsSource)
		assert.Equal(t, "t1", r.ToolCallID)
		assert.Equal(t, `[{"text": "service down"}]`, r.ToolResult)
		assert.True(t, r.Error, "gen_ai.tool.status=error")
		assert.True(t, r.ContentCaptured)
	})

	t.Run("tool span, latest mode", func(t *testing.T) {
		s := newSpan(t, "execute_tool get_weather", map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "t2",
			"gen_ai.tool.status": "success",
		})
		addEvent(t, s, "gen_ai.client.inference.operation.details", map[string]any{
			"gen_ai.input.messages": `[{"role":"tool","parts":[{"type":"tool_call","name":"get_weather","id":"t2","arguments":{"city":"Oslo"}}]}]`,
		})
		addEvent(t, s, "gen_ai.client.inference.operation.details", map[string]any{
			"gen_ai.output.messages": `[{"role":"tool","parts":[{"type":"tool_call_response","id":"t2","response":[{"text":"sunny"}]}]}]`,
		})
		r := runExtract(t, ex, res, scope, s)
		jsonEq(t, `{"city":"Oslo"}`, r.ToolArguments)
		assert.Equal(t, "event:gen_ai.client.inference.operation.details", r.ToolArgsSource)
		jsonEq(t, `[{"text":"sunny"}]`, r.ToolResult)
		assert.False(t, r.Error)
	})

	t.Run("model span, default mode", func(t *testing.T) {
		s := newSpan(t, "chat", map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.usage.prompt_tokens": int64(50), "gen_ai.usage.input_tokens": int64(50),
			"gen_ai.usage.completion_tokens": int64(12), "gen_ai.usage.output_tokens": int64(12),
			"gen_ai.usage.cache_read_input_tokens": int64(40),
		})
		addEvent(t, s, "gen_ai.system.message", map[string]any{"content": `[{"text": "You are helpful."}]`})
		addEvent(t, s, "gen_ai.user.message", map[string]any{"content": `[{"text": "Weather in Oslo?"}]`})
		addEvent(t, s, "gen_ai.choice", map[string]any{
			"finish_reason": "tool_use",
			"message": `[{"reasoningContent": {"reasoningText": {"text": "Need the weather tool."}}}, {"text": "Let me check."},` +
				` {"toolUse": {"toolUseId": "t2", "name": "get_weather", "input": {"city": "Oslo"}}}]`,
		})
		r := runExtract(t, ex, res, scope, s)
		assert.Equal(t, session.ClassLLM, r.Class)
		assert.Equal(t, "Weather in Oslo?", r.UserMessage)
		assert.Equal(t, "Let me check.", r.Output)
		assert.Equal(t, "Need the weather tool.", r.Reasoning)
		require.Len(t, r.RequestedCalls, 1)
		assert.Equal(t, "t2", r.RequestedCalls[0].ID)
		jsonEq(t, `{"city":"Oslo"}`, r.RequestedCalls[0].Arguments)
		assert.Equal(t, []string{"tool_use"}, r.FinishReasons)
		assert.Equal(t, session.Usage{InputTokens: 50, OutputTokens: 12, CacheReadTokens: 40, LLMCalls: 1}, r.Usage)
	})

	t.Run("agent span", func(t *testing.T) {
		s := newSpan(t, "invoke_agent planner", map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner",
			"gen_ai.agent.tools":        `["get_weather", "handoff_to_agent"]`,
			"gen_ai.tool.definitions":   `[{"name":"get_weather","description":"Weather","inputSchema":{"json":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},"outputSchema":null}]`,
			"gen_ai.usage.input_tokens": int64(999),
			"session.id":                "strands-1",
		})
		addEvent(t, s, "gen_ai.user.message", map[string]any{"content": `[{"text": "Plan my trip"}]`})
		addEvent(t, s, "gen_ai.choice", map[string]any{"message": "Trip planned.", "finish_reason": "end_turn"})
		r := runExtract(t, ex, res, scope, s)
		assert.Equal(t, "planner", r.AgentName)
		assert.Equal(t, []string{"get_weather", "handoff_to_agent"}, r.AllowedTools)
		require.Len(t, r.ToolDefs, 1)
		jsonEq(t, `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, string(r.ToolDefs[0].Parameters), "inputSchema.json unwrapped")
		assert.Equal(t, "Plan my trip", r.UserMessage)
		assert.Equal(t, "Trip planned.", r.Output)
		assert.Equal(t, session.Usage{InputTokens: 999}, r.Usage, "the agent's totals, no call count")
		assert.Equal(t, "strands-1", r.SessionID)
	})

	t.Run("choice event with a reasoning part only", func(t *testing.T) {
		// A Gemini-shaped {role, parts} message whose only part is a thought: msgText reads
		// it (no text, no call); the fallback for bare content values must not read the
		// same parts again (the {parts} object rule of contentText, 2026-11-27, did).
		s := newSpan(t, "chat gemini", map[string]any{"gen_ai.operation.name": "chat"})
		addEvent(t, s, "gen_ai.choice", map[string]any{
			"message": `{"role":"model","parts":[{"text":"Let me think about the refund.","thought":true}]}`})
		r := runExtract(t, ex, res, scope, s)
		assert.Equal(t, "Let me think about the refund.", r.Reasoning, "read once")
		assert.Empty(t, r.Output)
	})

	t.Run("swarm handoff tool", func(t *testing.T) {
		r := runExtract(t, ex, res, scope, newSpan(t, "execute_tool handoff_to_agent", map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "handoff_to_agent",
			"gen_ai.tool.call.arguments": `{"agent_name":"reviewer","message":"Please review","context":{"pr":12}}`,
		}))
		assert.Equal(t, session.ClassTool, r.Class)
		assert.Equal(t, "reviewer", r.HandoffTo)
		assert.Equal(t, "pass_control", r.HandoffMode)
		assert.Equal(t, "handoff_tool", r.HandoffRule)
		assert.Empty(t, r.HandoffFrom, "the source agent is resolved by ancestry")
	})
}

// TestExtractStructuredValues: messages, arguments and definitions as kvlist/array values
// (docs/decisions/conventions.md) are read like their JSON-string forms; arguments are serialised
// to canonical JSON (sorted keys).
func TestExtractStructuredValues(t *testing.T) {
	s := newSpan(t, "chat m", map[string]any{
		"gen_ai.operation.name": "chat",
		"gen_ai.input.messages": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": "first"}}},
			map[string]any{"role": "assistant", "parts": []any{map[string]any{"type": "text", "content": "ok"}}},
			map[string]any{"role": "user", "parts": []any{
				map[string]any{"type": "text", "content": "second"},
				map[string]any{"type": "text", "content": "question"},
			}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"type": "tool_call_response", "id": "x", "response": "42"}}},
		},
		"gen_ai.output.messages": []any{map[string]any{
			"role": "assistant", "finish_reason": "tool_call",
			"parts": []any{
				map[string]any{"type": "reasoning", "content": "I should search."},
				map[string]any{"type": "tool_call", "id": "c1", "name": "search", "arguments": map[string]any{"q": "mugs", "limit": int64(3), "filters": map[string]any{"z": true, "a": 1.5}}},
			},
		}},
		"gen_ai.tool.definitions": []any{map[string]any{"type": "function", "name": "search", "parameters": map[string]any{
			"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}},
		}}},
		"gen_ai.response.finish_reasons": []any{"TOOL_CALL"},
	})
	r := extractOne(t, s)
	assert.Equal(t, "second\nquestion", r.UserMessage, "last user message with text; tool responses skipped")
	assert.Equal(t, "I should search.", r.Reasoning)
	require.Len(t, r.RequestedCalls, 1)
	assert.Equal(t, `{"filters":{"a":1.5,"z":true},"limit":3,"q":"mugs"}`, r.RequestedCalls[0].Arguments, "canonical JSON")
	require.Len(t, r.ToolDefs, 1)
	jsonEq(t, `{"type":"object","properties":{"q":{"type":"string"}}}`, string(r.ToolDefs[0].Parameters))
	assert.Equal(t, []string{"tool_call"}, r.FinishReasons)

	tool := extractOne(t, newSpan(t, "execute_tool search", map[string]any{
		"gen_ai.operation.name":      "execute_tool",
		"gen_ai.tool.call.arguments": map[string]any{"q": "mugs", "limit": int64(3)},
		"gen_ai.tool.call.result":    []any{"a", "b"},
	}))
	assert.Equal(t, `{"limit":3,"q":"mugs"}`, tool.ToolArguments)
	assert.Equal(t, `["a","b"]`, tool.ToolResult)
	assert.Equal(t, "search", tool.ToolName, "from the span name")

	// A v1.36 gen_ai.choice event with a structured message and OpenAI tool_calls.
	c := newSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat"})
	addEvent(t, c, "gen_ai.choice", map[string]any{
		"index": int64(0), "finish_reason": "tool_calls",
		"message": map[string]any{"role": "assistant", "content": "Looking.", "tool_calls": []any{
			map[string]any{"id": "c9", "type": "function", "function": map[string]any{"name": "lookup", "arguments": `{"x":1}`}},
		}},
	})
	rc := extractOne(t, c)
	assert.Equal(t, "Looking.", rc.Output)
	require.Len(t, rc.RequestedCalls, 1)
	assert.Equal(t, session.RequestedToolCall{ID: "c9", Name: "lookup", Arguments: `{"x":1}`}, rc.RequestedCalls[0])
}

// TestExtractMessageShapes covers the message dialects the readers accept.
func TestExtractMessageShapes(t *testing.T) {
	tests := []struct {
		name      string
		attrs     map[string]any
		user      string
		output    string
		reasoning string
		calls     []string
	}{
		{"openai chat format", map[string]any{
			"gen_ai.input.messages":  `[{"role":"user","content":"hello"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"r"}]`,
			"gen_ai.output.messages": `[{"role":"assistant","content":"done","tool_calls":[{"id":"b","type":"function","function":{"name":"g","arguments":"{\"k\":1}"}}]}]`,
		}, "hello", "done", "", []string{"g"}},
		{"anthropic blocks", map[string]any{
			"gen_ai.input.messages":  `[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{}}]}]`,
			"gen_ai.output.messages": `[{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"yo"},{"type":"tool_use","id":"t","name":"calc","input":{"x":1}}]}]`,
		}, "hi", "yo", "hmm", []string{"calc"}},
		{"responses items", map[string]any{
			"gen_ai.input.messages":  `[{"type":"message","role":"user","content":[{"type":"input_text","text":"q1"}]},{"type":"function_call","name":"f","arguments":"{}","call_id":"c"},{"type":"function_call_output","call_id":"c","output":"x"}]`,
			"gen_ai.output.messages": `[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a1"}]},{"type":"function_call","name":"h","arguments":"{\"z\":2}","call_id":"c2"}]`,
		}, "q1", "a1", "", []string{"h"}},
		{"gemini parts", map[string]any{
			"gen_ai.input.messages":  `[{"role":"user","parts":[{"text":"g1"}]},{"role":"model","parts":[{"function_call":{"name":"f","args":{}}}]},{"role":"user","parts":[{"function_response":{"name":"f","response":{}}}]}]`,
			"gen_ai.output.messages": `[{"role":"model","parts":[{"text":"thinking...","thought":true},{"text":"g2"},{"functionCall":{"id":"x","name":"k","args":{"a":1}}}]}]`,
		}, "g1", "g2", "thinking...", []string{"k"}},
		{"langchain state", map[string]any{
			"input.value":  `{"messages":[{"lc":1,"type":"constructor","id":["langchain","schema","messages","HumanMessage"],"kwargs":{"content":"lc question"}}]}`,
			"output.value": `{"messages":[{"type":"human","content":"lc question"},{"type":"ai","content":"lc answer"}]}`,
		}, "lc question", "lc answer", "", nil},
		{"last assistant message is the answer", map[string]any{
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"step one"}]},{"role":"tool","parts":[{"type":"tool_call_response","response":"r"}]},{"role":"assistant","parts":[{"type":"text","content":"final"}]}]`,
		}, "", "final", "", nil},
		{"single message object", map[string]any{
			"gen_ai.input.messages": `{"role":"user","parts":[{"type":"text","content":"solo"}]}`,
		}, "solo", "", "", nil},
		{"null parts and tool calls are empty ones", map[string]any{
			"gen_ai.input.messages":  `[{"role":"user","parts":[null,{"type":"text","content":"n1"}]}]`,
			"gen_ai.output.messages": `[{"role":"assistant","content":[null,{"type":"text","text":"n2"}],"tool_calls":[null,{"id":"n","type":"function","function":{"name":"nf","arguments":"{}"}}]}]`,
		}, "n1", "n2", "", []string{"nf"}},
		{"plain text input.value", map[string]any{
			"input.value": "just text", "input.mime_type": "text/plain", "output.value": "plain answer",
		}, "just text", "plain answer", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.attrs["gen_ai.operation.name"] = "invoke_agent"
			tt.attrs["gen_ai.agent.name"] = "a"
			r := extractOne(t, newSpan(t, "invoke_agent a", tt.attrs))
			assert.Equal(t, tt.user, r.UserMessage)
			assert.Equal(t, tt.output, r.Output)
			assert.Equal(t, tt.reasoning, r.Reasoning)
			var calls []string
			for _, c := range r.RequestedCalls {
				calls = append(calls, c.Name)
			}
			assert.Equal(t, tt.calls, calls)
			assert.Empty(t, r.Problems)
			assert.True(t, r.ContentCaptured)
		})
	}
}

// TestExtractToolArguments covers the argument priority list of docs/decisions/sessions.md §1.5 and
// the OpenInference tool.parameters schema-vs-arguments rule (§2.3).
func TestExtractToolArguments(t *testing.T) {
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	tests := []struct {
		name   string
		span   string
		attrs  map[string]any
		args   string
		src    string
		schema string
		trunc  bool
	}{
		{"gen_ai beats input.value", "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool",
			"gen_ai.tool.call.arguments": `{"a":1}`, "input.value": `{"b":2}`}, `{"a":1}`, "gen_ai.tool.call.arguments", "", false},
		{"tool.parameters schema, input.value args", "get_weather", map[string]any{"openinference.span.kind": "TOOL",
			"tool.name": "get_weather", "tool.parameters": schema, "input.value": `{"city":"Paris"}`}, `{"city":"Paris"}`, "input.value", schema, false},
		{"tool.parameters are the args", "get_weather", map[string]any{"openinference.span.kind": "TOOL",
			"tool.name": "get_weather", "tool.parameters": `{"city":"Rome"}`}, `{"city":"Rome"}`, "tool.parameters", "", false},
		{"tool.json_schema in OpenAI format", "get_weather", map[string]any{"openinference.span.kind": "TOOL",
			"tool.json_schema": `{"type":"function","function":{"name":"get_weather","parameters":` + schema + `}}`,
			"input.value":      `{"city":"Oslo"}`}, `{"city":"Oslo"}`, "input.value", schema, false},
		{"adk args", "execute_tool calc", map[string]any{"gen_ai.operation.name": "execute_tool",
			"gcp.vertex.agent.tool_call_args": `{"expression":"1+1"}`}, `{"expression":"1+1"}`, "gcp.vertex.agent.tool_call_args", "", false},
		{"traceloop kwargs", "search.tool", map[string]any{"traceloop.span.kind": "tool",
			"traceloop.entity.input": `{"args": [], "kwargs": {"q": "mugs"}}`}, `{"q": "mugs"}`, "traceloop.entity.input", "", false},
		{"traceloop single positional object", "search.tool", map[string]any{"traceloop.span.kind": "tool",
			"traceloop.entity.input": `{"args": [{"q": "cups"}], "kwargs": {}}`}, `{"q": "cups"}`, "traceloop.entity.input", "", false},
		{"traceloop other json kept", "search.tool", map[string]any{"traceloop.span.kind": "tool",
			"traceloop.entity.input": `{"q": "plates"}`}, `{"q": "plates"}`, "traceloop.entity.input", "", false},
		{"raw text kept for malformed args", "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool",
			"gen_ai.tool.call.arguments": `{"city": "Paris"`}, `{"city": "Paris"`, "gen_ai.tool.call.arguments", "", false},
		{"blank values skipped", "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool",
			"gen_ai.tool.call.arguments": "  ", "input.value": `{"x":1}`}, `{"x":1}`, "input.value", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := extractOne(t, newSpan(t, tt.span, tt.attrs))
			require.Equal(t, session.ClassTool, r.Class)
			assert.Equal(t, tt.args, r.ToolArguments)
			assert.Equal(t, tt.src, r.ToolArgsSource)
			assert.Equal(t, tt.trunc, r.ToolArgsTruncated)
			if tt.schema == "" {
				assert.Nil(t, r.ToolSchema)
			} else {
				jsonEq(t, tt.schema, string(r.ToolSchema))
			}
		})
	}
	// Positional arguments that cannot be named are reported.
	r := extractOne(t, newSpan(t, "f.tool", map[string]any{"traceloop.span.kind": "tool",
		"traceloop.entity.input": `{"args": [1, 2], "kwargs": {"k": 3}}`}))
	assert.Equal(t, `{"k": 3}`, r.ToolArguments)
	assert.Contains(t, r.Problems, "traceloop.entity.input: positional arguments dropped")
}

// TestExtractHandoffs covers the explicit handoff signals (docs/decisions/sessions.md §1.5 (a)-(c)).
func TestExtractHandoffs(t *testing.T) {
	tests := []struct {
		name           string
		span           string
		attrs          map[string]any
		class          session.SpanClass
		from, to, mode string
		rule           string
	}{
		{"main-branch transfer", "execute_tool transfer_to_billing", map[string]any{"gen_ai.operation.name": "execute_tool",
			"gen_ai.tool.name": "transfer_to_billing", "gen_ai.agent.name": "triage",
			"gen_ai.transfer.target.name": "billing", "gen_ai.transfer.mode": "return_to_caller", "gen_ai.transfer.target.type": "agent"},
			session.ClassTool, "triage", "billing", "return_to_caller", "gen_ai.transfer"},
		{"transfer by id, default mode", "execute_tool x", map[string]any{"gen_ai.operation.name": "execute_tool",
			"gen_ai.transfer.target.id": "agent-7"}, session.ClassTool, "", "agent-7", "pass_control", "gen_ai.transfer"},
		{"contrib agent_handoff", "agent_handoff OpenAI Agent", map[string]any{"gen_ai.operation.name": "agent_handoff",
			"gen_ai.agent.name": "OpenAI Agent", "gen_ai.handoff.from_agent": "triage", "gen_ai.handoff.to_agent": "billing"},
			session.ClassHandoff, "triage", "billing", "pass_control", "gen_ai.handoff"},
		{"openllmetry handoff name", "triage → billing.handoff", map[string]any{"gen_ai.operation.name": "handoff"},
			session.ClassHandoff, "triage", "billing", "pass_control", "traceloop.handoff_span"},
		{"openinference handoff span", "handoff to billing", map[string]any{"openinference.span.kind": "TOOL",
			"input.value": "triage", "output.value": `"billing"`}, session.ClassHandoff, "triage", "billing", "pass_control", "openinference.handoff_span"},
		{"openinference handoff span without content", "handoff to billing", map[string]any{"openinference.span.kind": "TOOL"},
			session.ClassHandoff, "", "billing", "pass_control", "openinference.handoff_span"},
		{"adk transfer_to_agent", "execute_tool transfer_to_agent", map[string]any{"gen_ai.operation.name": "execute_tool",
			"gcp.vertex.agent.tool_call_args": `{"agent_name": "math_agent"}`}, session.ClassTool, "", "math_agent", "pass_control", "handoff_tool"},
		{"crewai delegation", "Delegate work to coworker", map[string]any{"openinference.span.kind": "TOOL",
			"tool.name": "Delegate work to coworker", "input.value": `{"task":"t","context":"c","coworker":"Writer"}`},
			session.ClassTool, "", "Writer", "return_to_caller", "handoff_tool"},
		{"openai agents transfer tool", "execute_tool transfer_to_math_specialist", map[string]any{"gen_ai.operation.name": "execute_tool"},
			session.ClassTool, "", "math_specialist", "pass_control", "handoff_tool"},
		{"handoff_parent on the receiving agent", "billing.agent", map[string]any{"traceloop.span.kind": "agent",
			"gen_ai.agent.name": "billing", "gen_ai.agent.handoff_parent": "triage", "openai.agent.handoffs": `[{"name":"refunds"},{"name":"triage","instructions":"x"}]`},
			session.ClassAgent, "triage", "billing", "pass_control", "gen_ai.agent.handoff_parent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := extractOne(t, newSpan(t, tt.span, tt.attrs))
			assert.Equal(t, tt.class, r.Class)
			assert.Equal(t, tt.from, r.HandoffFrom)
			assert.Equal(t, tt.to, r.HandoffTo)
			assert.Equal(t, tt.mode, r.HandoffMode)
			assert.Equal(t, tt.rule, r.HandoffRule)
			assert.NotEqual(t, "OpenAI Agent", r.AgentName)
		})
	}
	r := extractOne(t, newSpan(t, "billing.agent", map[string]any{"traceloop.span.kind": "agent",
		"openai.agent.handoffs": `[{"name":"refunds"},{"name":"triage","instructions":"x"}]`}))
	assert.Equal(t, []string{"refunds", "triage"}, r.HandoffTargets)
}

// TestExtractOpenInferenceHandoffValues: the "handoff to X" span's input/output values are
// plain names (Python) or {"from_agent"}/{"to_agent"} objects (JS).
func TestExtractOpenInferenceHandoffValues(t *testing.T) {
	tests := []struct {
		name     string
		in, out  any
		from, to string
	}{
		{"JS objects", `{"from_agent":"triage_agent"}`, `{"to_agent":"refund_agent"}`, "triage_agent", "refund_agent"},
		{"JS objects with spaces", ` { "from_agent" : " triage_agent " } `, `{"to_agent": "refund_agent"}`, "triage_agent", "refund_agent"},
		{"one object with both keys", `{"from_agent":"a","to_agent":"b"}`, nil, "a", "b"},
		{"plain names", "triage", "billing", "triage", "billing"},
		{"quoted names", `"triage"`, `"billing"`, "triage", "billing"},
		{"object without the keys falls back to the span name", `{"x":1}`, `{"agent":"zzz"}`, "", "refund_agent"},
		{"malformed JSON is a name", `{"from_agent":`, nil, `{"from_agent":`, "refund_agent"},
		{"structured values", map[string]any{"from_agent": "triage_agent"}, map[string]any{"to_agent": "refund_agent"}, "triage_agent", "refund_agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attrs := map[string]any{"openinference.span.kind": "TOOL", "tool.name": "handoff_to_refund_agent"}
			if tt.in != nil {
				attrs["input.value"] = tt.in
			}
			if tt.out != nil {
				attrs["output.value"] = tt.out
			}
			r := extractOne(t, newSpan(t, "handoff to refund_agent", attrs))
			assert.Equal(t, session.ClassHandoff, r.Class)
			assert.Equal(t, tt.from, r.HandoffFrom)
			assert.Equal(t, tt.to, r.HandoffTo)
			assert.Equal(t, "openinference.handoff_span", r.HandoffRule)
		})
	}
}

// TestExtractSessionAndSignals covers session keys (span, resource, priority), the end
// signal and the explicit outcome.
func TestExtractSessionAndSignals(t *testing.T) {
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "shop")
	res.Attributes().PutStr("session.id", "res-session")
	scope := pcommon.NewInstrumentationScope()

	ex := NewExtractor(Config{EndAttribute: "agent_eval.session.end"})
	r := runExtract(t, ex, res, scope, newSpan(t, "x", map[string]any{"langfuse.session.id": "lf", "gen_ai.conversation.id": "conv"}))
	assert.Equal(t, "conv", r.SessionID, "priority order, not attribute order")
	assert.Equal(t, "gen_ai.conversation.id", r.SessionKey)
	assert.Equal(t, "shop", r.Service)

	r = runExtract(t, ex, res, scope, newSpan(t, "x", map[string]any{"gen_ai.conversation.id": ""}))
	assert.Equal(t, "res-session", r.SessionID, "empty values are skipped, then the resource")
	assert.Equal(t, "resource:session.id", r.SessionKey)

	r = runExtract(t, ex, pcommon.NewResource(), scope, newSpan(t, "x", map[string]any{"session.id": int64(42)}))
	assert.Equal(t, "42", r.SessionID)

	custom := NewExtractor(Config{SessionKeys: []string{"app.thread", "session.id"}})
	r = runExtract(t, custom, res, scope, newSpan(t, "x", map[string]any{"gen_ai.conversation.id": "conv", "app.thread": "th-1"}))
	assert.Equal(t, "th-1", r.SessionID)
	assert.Equal(t, "app.thread", r.SessionKey)
	r = runExtract(t, custom, pcommon.NewResource(), scope, newSpan(t, "x", map[string]any{"gen_ai.conversation.id": "conv"}))
	assert.Empty(t, r.SessionID, "gen_ai.conversation.id is not configured")

	for _, v := range []any{true, "true", "TRUE"} {
		r = runExtract(t, ex, res, scope, newSpan(t, "x", map[string]any{"agent_eval.session.end": v}))
		assert.True(t, r.EndSignal, "%v", v)
	}
	for _, v := range []any{false, "no", int64(1)} {
		r = runExtract(t, ex, res, scope, newSpan(t, "x", map[string]any{"agent_eval.session.end": v}))
		assert.False(t, r.EndSignal, "%v", v)
	}
	r = runExtract(t, NewExtractor(Config{}), res, scope, newSpan(t, "x", map[string]any{"agent_eval.session.end": true}))
	assert.False(t, r.EndSignal, "no end attribute configured")

	r = runExtract(t, ex, res, scope, newSpan(t, "x", map[string]any{"agent_eval.task.completed": false}))
	require.NotNil(t, r.Outcome)
	assert.False(t, *r.Outcome)
	r = runExtract(t, ex, res, scope, newSpan(t, "x", map[string]any{"agent_eval.task.completed": "true"}))
	require.NotNil(t, r.Outcome)
	assert.True(t, *r.Outcome)
	r = runExtract(t, ex, res, scope, newSpan(t, "x", map[string]any{"agent_eval.task.completed": int64(3)}))
	assert.Nil(t, r.Outcome)
	assert.Contains(t, r.Problems, "agent_eval.task.completed: not a boolean")
}

// TestExtractErrors covers status ERROR, error.type, gen_ai.tool.status and exception
// events.
func TestExtractErrors(t *testing.T) {
	s := newSpan(t, "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool"})
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage("payment gateway timeout")
	addEvent(t, s, "exception", map[string]any{"exception.type": "ValueError", "exception.message": "bad"})
	r := extractOne(t, s)
	assert.True(t, r.Error)
	assert.Equal(t, "ValueError", r.ErrorType)
	assert.Equal(t, "payment gateway timeout", r.ErrorMessage, "the status description is kept")

	r = extractOne(t, newSpan(t, "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool", "error.type": "timeout"}))
	assert.True(t, r.Error)
	assert.Equal(t, "timeout", r.ErrorType)

	r = extractOne(t, newSpan(t, "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.status": "success"}))
	assert.False(t, r.Error)
	assert.Empty(t, r.ErrorType)

	ok := newSpan(t, "x", nil)
	ok.Status().SetCode(ptrace.StatusCodeOk)
	addEvent(t, ok, "exception", map[string]any{"exception.type": "Ignored"})
	r = extractOne(t, ok)
	assert.False(t, r.Error)
	assert.Empty(t, r.ErrorType, "exceptions on a successful span are not its error type")
}

// TestExtractUsageValues: token counts may be int, double or string; bad values are
// problems, not zeros silently taken from the wrong key.
func TestExtractUsageValues(t *testing.T) {
	tests := []struct {
		in       any
		want     int64
		problems int
	}{
		{int64(47), 47, 0}, {47.0, 47, 0}, {"47", 47, 0}, {" 47 ", 47, 0}, {"47.9", 47, 0},
		{int64(-1), 0, 1}, {"many", 0, 1}, {map[string]any{"x": 1}, 0, 1}, {true, 0, 1},
	}
	for _, tt := range tests {
		r := extractOne(t, newSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": tt.in}))
		assert.Equal(t, tt.want, r.Usage.OutputTokens, "%#v", tt.in)
		assert.Len(t, r.Problems, tt.problems, "%#v: %v", tt.in, r.Problems)
	}
	// The first readable key wins, in the order of the conventions.
	r := extractOne(t, newSpan(t, "x", map[string]any{"openinference.span.kind": "LLM",
		"llm.token_count.prompt": int64(10), "llm.token_count.completion": int64(2),
		"llm.token_count.prompt_details.cache_read": int64(8), "llm.token_count.completion_details.reasoning": int64(1),
		"llm.cost.total": 0.5}))
	assert.Equal(t, session.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 8, ReasoningTokens: 1, LLMCalls: 1}, r.Usage)
	require.NotNil(t, r.Cost)
	assert.InDelta(t, 0.5, *r.Cost, 1e-9)
}

// TestExtractResponseFunctionToolCallRepr reads the python repr the contrib
// openai-agents instrumentation writes instead of tool_call parts.
func TestExtractResponseFunctionToolCallRepr(t *testing.T) {
	tests := []struct {
		in   string
		want session.RequestedToolCall
		ok   bool
	}{
		{`ResponseFunctionToolCall(arguments='{"a":42,"b":7}', call_id='call_1', name='multiply', type='function_call', id='fc_1', status='completed')`,
			session.RequestedToolCall{ID: "call_1", Name: "multiply", Arguments: `{"a":42,"b":7}`}, true},
		{`ResponseFunctionToolCall(arguments="{\"q\": \"it's\"}", call_id='c', name='search', caller=None, namespace=Foo(x=1, y='a,b'))`,
			session.RequestedToolCall{ID: "c", Name: "search", Arguments: `{"q": "it's"}`}, true},
		{`ResponseFunctionToolCall(arguments='{"s":"a\\nb"}', name='esc', id='fc_2')`,
			session.RequestedToolCall{ID: "fc_2", Name: "esc", Arguments: `{"s":"a\nb"}`}, true},
		{`ResponseFunctionToolCall(arguments='{}'`, session.RequestedToolCall{}, false},
		{`ResponseFunctionToolCall(garbage`, session.RequestedToolCall{}, false},
	}
	for _, tt := range tests {
		got, ok := parseResponseFunctionToolCall(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.in)
		}
	}
}

// TestExtractFrameworkAdapters covers the framework-specific readings of
// docs/conventions.md on hand-built spans.
func TestExtractFrameworkAdapters(t *testing.T) {
	t.Run("voltagent tool: input/output, not the zod tool.parameters", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "tool.execution:delegate_task", map[string]any{
			"entity.type": "agent", "entity.name": "triage_agent", "span.type": "tool", "tool.name": "delegate_task",
			"tool.call.id": "call_1", "tool.parameters": `{"def":{"type":"object","shape":{}},"type":"object"}`,
			"input": `{"task":"refund","targetAgents":["refund_agent"]}`, "output": `[{"agentName":"refund_agent"}]`,
		}))
		assert.Equal(t, "call_1", r.ToolCallID)
		jsonEq(t, `{"task":"refund","targetAgents":["refund_agent"]}`, r.ToolArguments)
		assert.Equal(t, "refund_agent", r.HandoffTo)
		assert.Equal(t, "return_to_caller", r.HandoffMode)
	})
	t.Run("voltagent llm: tool names and request messages", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "llm:generateText", map[string]any{
			"entity.type": "agent", "entity.name": "triage_agent", "span.type": "llm", "llm.tools": "lookup_order, delegate_task",
			"llm.messages":            `[{"role":"system","content":"be nice"},{"role":"user","content":"refund 12345"}]`,
			"llm.usage.prompt_tokens": 12, "llm.usage.completion_tokens": 3, "llm.model": "gpt-4o-mini",
		}))
		require.Len(t, r.ToolDefs, 2)
		assert.Equal(t, "lookup_order", r.ToolDefs[0].Name)
		assert.Nil(t, r.ToolDefs[0].Parameters, "names only: schema unknown")
		assert.Equal(t, "refund 12345", r.UserMessage)
		assert.Equal(t, int64(12), r.Usage.InputTokens)
		assert.Equal(t, "gpt-4o-mini", r.Model)
	})
	t.Run("voltagent memory.write: the saved assistant message's tool calls", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "memory.write", map[string]any{
			"entity.type": "agent", "entity.name": "triage_agent", "span.type": "memory",
			"input": `{"conversationId":"c","message":{"role":"assistant","parts":[` +
				`{"type":"tool-issue_refund","toolCallId":"call_x","input":{"order_id":"1"},"output":{"type":"error-text","value":"unavailable"}},` +
				`{"type":"step-start"},{"type":"text","text":"done"}]}}`,
		}))
		require.Len(t, r.RequestedCalls, 1)
		assert.Equal(t, "issue_refund", r.RequestedCalls[0].Name)
		assert.Equal(t, "call_x", r.RequestedCalls[0].ID)
		jsonEq(t, `{"order_id":"1"}`, r.RequestedCalls[0].Arguments)
		u := extractOne(t, newSpan(t, "memory.write", map[string]any{
			"entity.type": "agent", "span.type": "memory",
			"input": `{"message":{"role":"user","parts":[{"type":"tool-x","toolCallId":"c"}]}}`,
		}))
		assert.Empty(t, u.RequestedCalls, "only the assistant's message holds its calls")
	})
	t.Run("voltagent agent input: a message list gives its last user message", func(t *testing.T) {
		// A chat UI with memory sends the new message as a UI message list; a sub-agent's
		// input is always one (the delegated task).
		for _, tt := range []struct{ name, span, input, user, raw string }{
			{"text", "triage_agent", `refund 123`, "refund 123", "refund 123"},
			{"ui message", "triage_agent", `[{"id":"m1","role":"user","parts":[{"type":"text","text":"refund 123"}]}]`, "refund 123", ""},
			{"history, new message last", "triage_agent", `[{"role":"user","parts":[{"type":"text","text":"refund 12345"}]},` +
				`{"role":"assistant","parts":[{"type":"text","text":"done"}]},{"role":"user","parts":[{"type":"text","text":"no, 123"}]}]`, "no, 123", ""},
			{"model message", "triage_agent", `[{"role":"user","content":"refund 123"}]`, "refund 123", ""},
			{"sub-agent task", "subagent:refund_agent", `[{"id":"m2","role":"user","parts":[{"type":"text","text":"Task handed off: refund 123"}],` +
				`"metadata":{"subAgentId":"refund_agent"}}]`, "Task handed off: refund 123", ""},
			{"no user message: kept as it is", "triage_agent", `[{"role":"assistant","parts":[{"type":"text","text":"hi"}]}]`, "",
				`[{"role":"assistant","parts":[{"type":"text","text":"hi"}]}]`},
			{"not a message list: kept as it is", "triage_agent", `{"order":"123"}`, "", `{"order":"123"}`},
		} {
			t.Run(tt.name, func(t *testing.T) {
				attrs := map[string]any{"entity.type": "agent", "entity.name": "triage_agent", "input": tt.input, "output": "ok"}
				if tt.span != "triage_agent" {
					attrs["subagent.name"] = "refund_agent"
				}
				r := extractOne(t, newSpan(t, tt.span, attrs))
				require.Equal(t, session.ClassAgent, r.Class)
				assert.Equal(t, tt.user, r.UserMessage)
				assert.Equal(t, tt.raw, r.Input)
				assert.Empty(t, r.Problems)
			})
		}
	})
	t.Run("mastra stored message: content {format, parts}", func(t *testing.T) {
		// A sub-agent run with memory: mastra.agent_run.input is the MastraDBMessage the
		// sub-agent's thread stores; its content is an object whose parts hold the text.
		sub := extractOne(t, newSpan(t, "invoke_agent refund_agent", map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refund_agent",
			"mastra.agent_run.input": `[{"id":"m1","role":"user","threadId":"t-1","resourceId":"r",` +
				`"content":{"format":2,"parts":[{"type":"step-start"},{"type":"text","text":"Order 123: refund it"}]}}]`,
		}))
		assert.Equal(t, "Order 123: refund it", sub.UserMessage)
		both := extractOne(t, newSpan(t, "invoke_agent triage_agent", map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage_agent",
			"mastra.agent_run.input": `[{"role":"user","content":{"format":2,"parts":[{"type":"text","text":"refund 123"}],"content":"refund 123"}}]`,
		}))
		assert.Equal(t, "refund 123", both.UserMessage, "the repeated content string is not read twice")
	})
	t.Run("mastra: bare tool names, error results, client tool calls", func(t *testing.T) {
		a := extractOne(t, newSpan(t, "invoke_agent triage_agent", map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage_agent",
			"gen_ai.tool.definitions": `["lookup_order","agent-refund_agent"]`,
			"mastra.agent_run.input":  `[{"role":"user","content":"refund 12345"}]`,
		}))
		require.Len(t, a.ToolDefs, 2)
		assert.Equal(t, "agent-refund_agent", a.ToolDefs[1].Name)
		assert.Equal(t, "refund 12345", a.UserMessage)
		rej := extractOne(t, newSpan(t, "execute_tool issue_refund", map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "issue_refund",
			"gen_ai.tool.call.result": `{"error":true,"message":"Tool input validation failed"}`,
		}))
		assert.True(t, rej.Error, "an error object is a failed call although the span ended OK")
		ok := extractOne(t, newSpan(t, "execute_tool x", map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x", "gen_ai.tool.call.result": `{"error":false}`,
		}))
		assert.False(t, ok.Error)
		c := extractOne(t, newSpan(t, "client_tool_call issue_refund", map[string]any{
			"gen_ai.operation.name": "client_tool_call", "mastra.metadata.args": `{"order_id":"12345"}`,
		}))
		assert.Equal(t, "issue_refund", c.ToolName)
		jsonEq(t, `{"order_id":"12345"}`, c.ToolArguments)
		assert.True(t, c.ClientSide())
	})
	t.Run("traceloop entity output is JSON-encoded", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "acme.workflow", map[string]any{
			"traceloop.span.kind": "workflow", "traceloop.entity.output": `"Refund approved."`,
		}))
		assert.Equal(t, "Refund approved.", r.Output)
	})
	t.Run("remote agent names its caller", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "invoke_agent refund_agent", map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refund_agent",
			"gen_ai.caller.type": "agent", "gen_ai.caller.name": "triage_agent",
		}))
		assert.Equal(t, "triage_agent", r.HandoffFrom)
		assert.Equal(t, "refund_agent", r.HandoffTo)
		assert.Equal(t, "return_to_caller", r.HandoffMode)
		w := extractOne(t, newSpan(t, "invoke_agent refund_agent", map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refund_agent",
			"gen_ai.caller.type": "workflow", "gen_ai.caller.name": "nightly",
		}))
		assert.Empty(t, w.HandoffFrom, "a workflow caller is no agent handoff")
	})
	t.Run("decision deny adds the denied call", func(t *testing.T) {
		s := newSpan(t, "chat gpt-4o", map[string]any{"gen_ai.operation.name": "chat"})
		addEvent(t, s, "gen_ai.tool.call.decision", map[string]any{
			"gen_ai.tool.call.decision.outcome": "deny", "gen_ai.tool.name": "issue_refund", "gen_ai.tool.call.id": "c1",
		})
		addEvent(t, s, "gen_ai.tool.call.decision", map[string]any{
			"gen_ai.tool.call.decision.outcome": "allow", "gen_ai.tool.name": "lookup_order", "gen_ai.tool.call.id": "c2",
		})
		r := extractOne(t, s)
		require.Len(t, r.RequestedCalls, 1)
		assert.Equal(t, session.RequestedToolCall{ID: "c1", Name: "issue_refund"}, r.RequestedCalls[0])
	})
	t.Run("handoff tool targets", func(t *testing.T) {
		for _, tt := range []struct{ tool, args, target, mode string }{
			{"transfer_to_agent", `{"agentName":"refund_agent"}`, "refund_agent", "pass_control"},
			{"transfer_to_agent", `{"agent_name":"refund_agent"}`, "refund_agent", "pass_control"},
			{"delegate_task", `{"task":"x","targetAgents":["refund_agent","other"]}`, "refund_agent", "return_to_caller"},
			{"delegate_task", `{"task":"x"}`, "", "return_to_caller"},
		} {
			target, mode, ok := HandoffToolTarget(tt.tool, tt.args)
			assert.True(t, ok, tt.args)
			assert.Equal(t, tt.target, target, tt.args)
			assert.Equal(t, tt.mode, mode, tt.args)
		}
	})
}
