// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// lgMeta is the OpenInference `metadata` attribute LangGraph writes for a run of node
// in namespace ns.
func lgMeta(t *testing.T, node, ns string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"ls_integration": "langgraph", "thread_id": "th-1", "langgraph_step": 1,
		"langgraph_node": node, "langgraph_checkpoint_ns": ns, "checkpoint_ns": ns})
	require.NoError(t, err)
	return string(b)
}

// TestExtractLangGraphNodes covers the LangGraph node rule (docs/decisions/conventions.md
// §3.1) on hand-built OpenInference spans shaped like the JS and Python tracers' output.
func TestExtractLangGraphNodes(t *testing.T) {
	tests := []struct {
		name, span string
		attrs      map[string]any
		root       bool
		class      session.SpanClass
		rule       string
		agent      string
		agentRule  string
		node       string
	}{
		{"JS node named *agent is an agent", "triage_agent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "triage_agent", "triage_agent:1")},
			false, session.ClassAgent, "openinference.span.kind=CHAIN;langgraph_node", "triage_agent", "metadata.langgraph_node", "triage_agent"},
		{"case-insensitive, as the Python rule", "RefundAgent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "RefundAgent", "RefundAgent:1")},
			false, session.ClassAgent, "openinference.span.kind=CHAIN;langgraph_node", "RefundAgent", "metadata.langgraph_node", "RefundAgent"},
		{"supervisor node", "supervisor",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "supervisor", "supervisor:1")},
			false, session.ClassAgent, "openinference.span.kind=CHAIN;langgraph_node", "supervisor", "metadata.langgraph_node", "supervisor"},
		{"ReAct model node inside a subgraph is the subgraph's agent", "agent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "agent", "math_expert:1|agent:2")},
			false, session.ClassAgent, "openinference.span.kind=CHAIN;langgraph_node", "math_expert", "metadata.langgraph_checkpoint_ns", "agent"},
		{"ReAct model node of a top-level graph is agent", "agent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "agent", "agent:1")},
			false, session.ClassAgent, "openinference.span.kind=CHAIN;langgraph_node", "agent", "metadata.langgraph_node", "agent"},
		{"Python AGENT model node is renamed too", "agent",
			map[string]any{"openinference.span.kind": "AGENT", "metadata": lgMeta(t, "agent", "triage_agent:1|agent:2")},
			false, session.ClassAgent, "openinference.span.kind=AGENT;langgraph_node", "triage_agent", "metadata.langgraph_checkpoint_ns", "agent"},
		{"AGENT with agent.name keeps it", "agent",
			map[string]any{"openinference.span.kind": "AGENT", "agent.name": "planner", "metadata": lgMeta(t, "agent", "x:1|agent:2")},
			false, session.ClassAgent, "openinference.span.kind=AGENT", "planner", "agent.name", ""},
		{"other node keeps its node name for the assembler", "math_expert",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "math_expert", "math_expert:1")},
			false, session.ClassOther, "openinference.span.kind=CHAIN", "", "", "math_expert"},
		{"tools node", "tools",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "tools", "triage_agent:1|tools:2")},
			false, session.ClassOther, "openinference.span.kind=CHAIN", "", "", "tools"},
		{"runnable inside a node is not the node", "RunnableSequence",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "agent", "triage_agent:1|agent:2")},
			false, session.ClassOther, "openinference.span.kind=CHAIN", "", "", ""},
		{"graph root stays the turn", "support_graph",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "support_graph", "")},
			true, session.ClassTurn, "openinference.span.kind=CHAIN;root", "", "", ""},
		{"namespace of another node gives no parent", "agent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "agent", "a:1|b:2")},
			false, session.ClassAgent, "openinference.span.kind=CHAIN;langgraph_node", "agent", "metadata.langgraph_node", "agent"},
		{"metadata without langgraph_node", "refund_agent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": `{"langgraph_step": 2}`},
			false, session.ClassOther, "openinference.span.kind=CHAIN", "", "", ""},
		{"malformed metadata", "refund_agent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": `{"langgraph_node": `},
			false, session.ClassOther, "openinference.span.kind=CHAIN", "", "", ""},
		{"non-string node", "refund_agent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": `{"langgraph_node": 7}`},
			false, session.ClassOther, "openinference.span.kind=CHAIN", "", "", ""},
		{"structured metadata", "billing_agent",
			map[string]any{"openinference.span.kind": "CHAIN", "metadata": map[string]any{"langgraph_node": "billing_agent"}},
			false, session.ClassAgent, "openinference.span.kind=CHAIN;langgraph_node", "billing_agent", "metadata.langgraph_node", "billing_agent"},
	}
	ex := NewExtractor(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSpan(t, tt.span, tt.attrs)
			if tt.root {
				s.SetParentSpanID(pcommon.SpanID{})
			}
			r := runExtract(t, ex, pcommon.NewResource(), pcommon.NewInstrumentationScope(), s)
			assert.Equal(t, tt.class, r.Class, "class (rule %q)", r.ClassRule)
			assert.Equal(t, tt.rule, r.ClassRule)
			assert.Equal(t, tt.agent, r.AgentName)
			assert.Equal(t, tt.agentRule, r.AgentRule)
			assert.Equal(t, tt.node, r.LangGraphNode)
		})
	}
}

// TestExtractControlFlowErrors: LangGraph's control-flow exceptions do not make a span
// failed; any other error does.
func TestExtractControlFlowErrors(t *testing.T) {
	tests := []struct {
		name     string
		attrs    map[string]any
		status   string
		event    map[string]any
		wantErr  bool
		wantType string
	}{
		{"JS: stack text in the status and exception.message",
			nil, "\n\nParentCommand\n    at RunnableCallable._controlBranch (state.js:773:47)",
			map[string]any{"exception.message": "\n\nParentCommand\n    at RunnableCallable._controlBranch"}, false, ""},
		{"JS: exception.message only", nil, "",
			map[string]any{"exception.message": "\n\nParentCommand\n    at x"}, false, ""},
		{"Python: qualified exception.type", nil, "",
			map[string]any{"exception.type": "langgraph.errors.ParentCommand", "exception.message": "Command(graph='__parent__')"}, false, ""},
		{"error.type GraphInterrupt", map[string]any{"error.type": "GraphInterrupt"}, "", nil, false, ""},
		{"NodeInterrupt with a message", nil, "NodeInterrupt: need approval", nil, false, ""},
		{"a real error", nil, "", map[string]any{"exception.type": "ValueError", "exception.message": "ParentCommand"}, true, "ValueError"},
		{"a longer name is not the control-flow one", nil, "ParentCommandFailed: x", nil, true, ""},
		{"a real error whose text mentions it later", nil, "Error: ParentCommand lost", nil, true, ""},
		{"status without message, no event", nil, "", nil, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attrs := map[string]any{"openinference.span.kind": "CHAIN"}
			for k, v := range tt.attrs {
				attrs[k] = v
			}
			s := newSpan(t, "tools", attrs)
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage(tt.status)
			if tt.event != nil {
				addEvent(t, s, "exception", tt.event)
			}
			r := extractOne(t, s)
			assert.Equal(t, tt.wantErr, r.Error)
			assert.Equal(t, tt.wantType, r.ErrorType)
		})
	}
}

// TestExtractLangChainSerialised covers the LangChain `lc` forms: tool-call ids recovered
// from an LLM span's LLMResult, a ToolMessage result with its call id, untyped tool calls
// and handoff announcements in a node's output state.
func TestExtractLangChainSerialised(t *testing.T) {
	aiMsg := func(id, content string, calls ...string) map[string]any {
		var tcs []any
		for i := 0; i+1 < len(calls); i += 2 {
			tcs = append(tcs, map[string]any{"id": calls[i], "name": calls[i+1], "args": map[string]any{}, "type": "tool_call"})
		}
		return map[string]any{"lc": 1, "type": "constructor", "id": []any{"langchain_core", "messages", "AIMessage"},
			"kwargs": map[string]any{"id": id, "content": content, "tool_calls": tcs}}
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}

	t.Run("ids from the LLMResult fill the flattened calls", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "ScriptedChatModel", map[string]any{
			"openinference.span.kind":                                                 "LLM",
			"llm.output_messages.0.message.role":                                      "assistant",
			"llm.output_messages.0.message.tool_calls.0.tool_call.function.name":      "lookup_order",
			"llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": `{"order_id":"1"}`,
			"llm.output_messages.0.message.tool_calls.1.tool_call.function.name":      "lookup_order",
			"llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments": `{"order_id":"2"}`,
			"llm.output_messages.0.message.tool_calls.2.tool_call.function.name":      "other",
			"output.value": js(map[string]any{"generations": []any{[]any{map[string]any{"text": "",
				"message": aiMsg("r1", "", "call_a", "lookup_order", "call_b", "lookup_order")}}}}),
		}))
		require.Len(t, r.RequestedCalls, 3)
		assert.Equal(t, "call_a", r.RequestedCalls[0].ID)
		assert.Equal(t, `{"order_id":"1"}`, r.RequestedCalls[0].Arguments, "the flattened arguments are kept")
		assert.Equal(t, "call_b", r.RequestedCalls[1].ID)
		assert.Empty(t, r.RequestedCalls[2].ID, "no call of that name in the LLMResult")
	})

	t.Run("ToolMessage result and call id", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "lookup_order", map[string]any{
			"openinference.span.kind": "TOOL", "tool.name": "lookup_order", "input.value": "12345",
			"output.value": js(map[string]any{"output": map[string]any{"lc": 1, "type": "constructor",
				"id":     []any{"langchain_core", "messages", "ToolMessage"},
				"kwargs": map[string]any{"status": "success", "content": `{"status":"delivered"}`, "tool_call_id": "call_t1_lookup_1", "name": "lookup_order"}}}),
		}))
		assert.Equal(t, "call_t1_lookup_1", r.ToolCallID)
		assert.Equal(t, `{"status":"delivered"}`, r.ToolResult)
		assert.Equal(t, "12345", r.ToolArguments)
	})

	t.Run("a Command result is kept as it is", func(t *testing.T) {
		out := `{"output":{"lg_name":"Command","goto":"refund_agent","graph":"__parent__"}}`
		r := extractOne(t, newSpan(t, "transfer_to_refund_agent", map[string]any{
			"openinference.span.kind": "TOOL", "tool.name": "transfer_to_refund_agent", "input.value": "{}", "output.value": out}))
		assert.Empty(t, r.ToolCallID)
		assert.Equal(t, out, r.ToolResult)
	})

	t.Run("node state: untyped transfer_back call, its announcement is not the answer", func(t *testing.T) {
		back := aiMsg("", "Transferring back to triage_agent")
		back["kwargs"].(map[string]any)["tool_calls"] = []any{map[string]any{"name": "transfer_back_to_triage_agent", "args": map[string]any{}, "id": "uuid-1"}}
		state := js(map[string]any{"messages": []any{aiMsg("r2", "Refund RF-1001 approved."), back}})
		r := extractOne(t, newSpan(t, "refund_agent", map[string]any{
			"openinference.span.kind": "CHAIN", "metadata": lgMeta(t, "refund_agent", "refund_agent:1"), "output.value": state}))
		assert.Equal(t, session.ClassAgent, r.Class)
		assert.Equal(t, "Refund RF-1001 approved.", r.Output)
		require.Len(t, r.RequestedCalls, 1)
		assert.Equal(t, session.RequestedToolCall{ID: "uuid-1", Name: "transfer_back_to_triage_agent", Arguments: "{}"}, r.RequestedCalls[0])
	})

	t.Run("a handoff announcement alone is the output", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Let me transfer you."},` +
				`{"type":"tool_call","id":"c1","name":"transfer_to_billing","arguments":{}}]}]`}))
		assert.Equal(t, "Let me transfer you.", r.Output)
	})

	t.Run("text after a handoff announcement wins", func(t *testing.T) {
		r := extractOne(t, newSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Transferring."},` +
				`{"type":"tool_call","id":"c1","name":"transfer_to_billing","arguments":{}}]},` +
				`{"role":"assistant","parts":[{"type":"text","content":"Done."}]}]`}))
		assert.Equal(t, "Done.", r.Output)
	})
}
