// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAssembleTurnEmpty(t *testing.T) {
	for name, recs := range map[string][]SpanRecord{
		"nil":             nil,
		"evaluation only": {asSpan("e1", "", ClassEvaluation, 0, 10)},
	} {
		t.Run(name, func(t *testing.T) {
			got := AssembleTurn(recs)
			assert.Equal(t, 0, got.Turn.SpanCount)
			assert.Empty(t, got.Turn.Interactions)
			assert.NotNil(t, got.Turn.Interactions, "interactions encode as [] not null")
			assert.Equal(t, "ok", got.Turn.Status)
			assert.Empty(t, got.Agents)
			assert.Nil(t, got.Outcome)
		})
	}
}

func TestAssembleTurnTreeAnomalies(t *testing.T) {
	tests := []struct {
		name      string
		recs      []SpanRecord
		anomalies []string
		root      string
		spans     int
		agents    []string // interaction agent ids in order
		parents   []string // interaction parent agent ids
	}{
		{
			name: "clean tree",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 0, 100, asAgent("A")),
				asSpan("b", "a", ClassAgent, 10, 50, asAgent("B")),
			},
			root: "a", spans: 2, agents: []string{"A", "B"}, parents: []string{"", "A"},
		},
		{
			name: "duplicate span keeps the first",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 0, 100, asAgent("A")),
				asSpan("a", "", ClassAgent, 0, 100, asAgent("Z")),
			},
			anomalies: []string{AnomalyDuplicateSpan}, root: "a", spans: 1, agents: []string{"A"}, parents: []string{""},
		},
		{
			name: "self parent becomes a root",
			recs: []SpanRecord{
				asSpan("a", "a", ClassAgent, 0, 100, asAgent("A")),
				asSpan("b", "a", ClassAgent, 10, 50, asAgent("B")),
			},
			anomalies: []string{AnomalySelfParent}, root: "a", spans: 2, agents: []string{"A", "B"}, parents: []string{"", "A"},
		},
		{
			name: "two-span cycle is cut at the earliest span",
			recs: []SpanRecord{
				asSpan("b", "a", ClassAgent, 10, 50, asAgent("B")),
				asSpan("a", "b", ClassAgent, 0, 100, asAgent("A")),
			},
			anomalies: []string{AnomalyCycle}, root: "a", spans: 2, agents: []string{"A", "B"}, parents: []string{"", "A"},
		},
		{
			name: "cycle below a root",
			recs: []SpanRecord{
				asSpan("r", "", ClassTurn, 0, 100),
				asSpan("x", "z", ClassAgent, 20, 30, asAgent("X")),
				asSpan("y", "x", ClassAgent, 21, 29, asAgent("Y")),
				asSpan("z", "y", ClassOther, 22, 28),
			},
			anomalies: []string{AnomalyCycle}, root: "r", spans: 4, agents: []string{"X", "Y"}, parents: []string{"", "X"},
		},
		{
			name: "orphan HTTP root and orphan GenAI root are normal",
			recs: []SpanRecord{
				asSpan("http", "outside", ClassOther, 0, 100),
				asSpan("a", "outside2", ClassAgent, 1, 99, asAgent("A")),
			},
			root: "a", spans: 2, agents: []string{"A"}, parents: []string{""},
		},
		{
			name: "a second GenAI span with a missing parent",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 0, 100, asAgent("A")),
				asSpan("b", "gone", ClassAgent, 10, 50, asAgent("B")),
			},
			anomalies: []string{AnomalyMissingParent}, root: "a", spans: 2, agents: []string{"A", "B"}, parents: []string{"", ""},
		},
		{
			name: "evaluation spans are ignored entirely",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 0, 100, asAgent("A")),
				asSpan("ev", "a", ClassEvaluation, 100, 101),
				asSpan("ev2", "", ClassEvaluation, -5, 200),
			},
			root: "a", spans: 1, agents: []string{"A"}, parents: []string{""},
		},
		{
			name: "truncated text",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 0, 100, asAgent("A"), asWith(func(r *SpanRecord) { r.Truncated = true })),
			},
			anomalies: []string{AnomalyTruncatedText}, root: "a", spans: 1, agents: []string{"A"}, parents: []string{""},
		},
		{
			name: "everything at once is sorted and deduplicated",
			recs: []SpanRecord{
				asSpan("a", "a", ClassAgent, 0, 100, asAgent("A")),
				asSpan("a", "", ClassAgent, 0, 100, asAgent("A")),
				asSpan("b", "c", ClassOther, 10, 20),
				asSpan("c", "b", ClassOther, 11, 19),
				asSpan("d", "nowhere", ClassLLM, 30, 40),
				asSpan("e", "nowhere", ClassLLM, 50, 60),
			},
			anomalies: []string{AnomalyCycle, AnomalyDuplicateSpan, AnomalyMissingParent, AnomalySelfParent},
			root:      "a", spans: 5, agents: []string{"A"}, parents: []string{""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AssembleTurn(tt.recs)
			assert.Equal(t, tt.anomalies, got.Turn.Anomalies)
			assert.Equal(t, tt.root, got.Turn.RootSpanID)
			assert.Equal(t, tt.spans, got.Turn.SpanCount)
			var agents, parents []string
			for _, in := range got.Turn.Interactions {
				agents = append(agents, in.AgentID)
				parents = append(parents, in.ParentAgentID)
			}
			assert.Equal(t, tt.agents, agents)
			assert.Equal(t, tt.parents, parents)
		})
	}
}

func TestAssembleTurnRoot(t *testing.T) {
	tests := []struct {
		name    string
		recs    []SpanRecord
		root    string
		rule    string
		user    string
		final   string
		latency float64
		status  string
	}{
		{
			name: "turn marker wins over a higher agent span",
			recs: []SpanRecord{
				asSpan("http", "", ClassOther, 0, 1000),
				asSpan("a", "http", ClassAgent, 10, 900, asAgent("outer")),
				asSpan("w", "a", ClassTurn, 20, 800, asUserMsg("hello"), asOutput("bye")),
			},
			root: "w", rule: RootRuleTurnMarker, user: "hello", final: "bye", latency: 780, status: "ok",
		},
		{
			name: "highest turn marker among several",
			recs: []SpanRecord{
				asSpan("w1", "", ClassTurn, 0, 100),
				asSpan("w2", "w1", ClassTurn, 10, 90),
			},
			root: "w1", rule: RootRuleTurnMarker, latency: 100, status: "ok",
		},
		{
			name: "highest GenAI span under an HTTP span",
			recs: []SpanRecord{
				asSpan("http", "", ClassOther, 0, 1000),
				asSpan("a", "http", ClassAgent, 10, 510, asAgent("A"), asFailed("Boom")),
				asSpan("l", "a", ClassLLM, 20, 100, asUserMsg("question"), asOutput("answer")),
			},
			root: "a", rule: RootRuleGenAIRoot, user: "question", final: "answer", latency: 500, status: "error",
		},
		{
			name: "only other spans",
			recs: []SpanRecord{
				asSpan("h2", "h1", ClassOther, 5, 10),
				asSpan("h1", "", ClassOther, 0, 20),
			},
			root: "h1", rule: RootRuleSpanRoot, latency: 20, status: "ok",
		},
		{
			name: "root without a usable end time uses the trace extent",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 0, 0, asAgent("A")),
				asSpan("l", "a", ClassLLM, 5, 40),
			},
			root: "a", rule: RootRuleGenAIRoot, latency: 40, status: "ok",
		},
		{
			name: "final response is the output of the interaction that ended last",
			recs: []SpanRecord{
				asSpan("w", "", ClassTurn, 0, 100),
				asSpan("a", "w", ClassAgent, 10, 50, asAgent("triage"), asUserMsg("first"), asOutput("routing")),
				asSpan("b", "w", ClassAgent, 55, 95, asAgent("expert"), asOutput("the answer")),
				asSpan("c", "w", ClassAgent, 60, 70, asAgent("helper")),
			},
			root: "w", rule: RootRuleTurnMarker, user: "first", final: "the answer", latency: 100, status: "ok",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AssembleTurn(tt.recs).Turn
			assert.Equal(t, tt.root, got.RootSpanID)
			assert.Equal(t, tt.rule, got.RootRule)
			assert.Equal(t, tt.user, got.UserMessage)
			assert.Equal(t, tt.final, got.FinalResponse)
			assert.InDelta(t, tt.latency, got.LatencyMs, 1e-9)
			assert.Equal(t, tt.status, got.Status)
			assert.Equal(t, "t1", got.TraceID)
		})
	}
}

func TestAssembleTurnStepsAndUsage(t *testing.T) {
	recs := []SpanRecord{
		asSpan("w", "", ClassTurn, 0, 1000),
		asSpan("a", "w", ClassAgent, 10, 900, asAgent("planner"), asUsage(999, 999)),
		asSpan("cyc", "a", ClassOther, 15, 800),
		asSpan("l1", "cyc", ClassLLM, 20, 100, asUsage(10, 5), asWith(func(r *SpanRecord) {
			r.Reasoning = "I should look it up"
			r.FinishReasons = []string{"tool_calls"}
			r.Model = "gpt-x"
		})),
		asSpan("t1", "cyc", ClassTool, 110, 130, asTool("search", "c1", `{"q":"x"}`)),
		asSpan("sub", "t1", ClassAgent, 111, 129, asAgent("researcher")),
		asSpan("l3", "sub", ClassLLM, 112, 120, asUsage(3, 3), asOutput("found it")),
		asSpan("l2", "cyc", ClassLLM, 140, 200, asUsage(20, 7), asOutput("done"), asWith(func(r *SpanRecord) {
			r.FinishReasons = []string{"stop"}
		})),
	}
	got := AssembleTurn(recs)
	turn := got.Turn
	require.Len(t, turn.Interactions, 2)
	planner, researcher := turn.Interactions[0], turn.Interactions[1]
	var kinds []StepKind
	var ids []string
	for _, s := range planner.Steps {
		kinds = append(kinds, s.Kind)
		ids = append(ids, s.SpanID)
	}
	assert.Equal(t, []StepKind{StepReasoning, StepLLMCall, StepToolCall, StepHandoff, StepLLMCall}, kinds)
	assert.Equal(t, []string{"l1", "l1", "t1", "t1", "l2"}, ids)
	assert.Equal(t, "I should look it up", planner.Steps[0].Text)
	assert.Equal(t, "gpt-x", planner.Steps[1].LLMCall.Model)
	assert.InDelta(t, 80.0, planner.Steps[1].LLMCall.LatencyMs, 1e-9)
	assert.Equal(t, "stop", planner.FinishReason)
	assert.Equal(t, "done", planner.Output, "an agent span without output answers with its last LLM text")
	assert.Equal(t, Usage{InputTokens: 30, OutputTokens: 12, LLMCalls: 2}, planner.Usage, "agent span usage is never summed")
	assert.Equal(t, "planner", researcher.ParentAgentID)
	assert.Equal(t, Usage{InputTokens: 3, OutputTokens: 3, LLMCalls: 1}, researcher.Usage)
	require.Len(t, researcher.Steps, 1)
	assert.Equal(t, Usage{InputTokens: 33, OutputTokens: 15, LLMCalls: 3}, turn.Usage)
	h := planner.Steps[3].Handoff
	assert.Equal(t, Handoff{FromAgent: "planner", ToAgent: "researcher", Mode: "return_to_caller",
		Payload: `{"q":"x"}`, PayloadCaptured: true, SourceRule: HandoffSourceAgentAsTool, Inferred: true}, *h)
}

func TestAssembleTurnSyntheticInteraction(t *testing.T) {
	t.Run("no agent span: one synthetic interaction", func(t *testing.T) {
		recs := []SpanRecord{
			asSpan("root", "", ClassTurn, 0, 100, asNamed("ai.generateText"), asUserMsg("weather?"), asOutput("sunny")),
			asSpan("llm1", "root", ClassLLM, 1, 40, asRequests(asReq("c1", "weather", `{"city":"Paris"}`)), asToolDefs("weather")),
			asSpan("tool", "root", ClassTool, 41, 50, asTool("weather", "c1", `{"city":"Paris"}`), asResult("sunny")),
			asSpan("llm2", "root", ClassLLM, 51, 99, asOutput("sunny")),
		}
		got := AssembleTurn(recs)
		require.Len(t, got.Turn.Interactions, 1)
		in := got.Turn.Interactions[0]
		assert.Equal(t, SyntheticAgentID, in.AgentID)
		assert.Equal(t, AgentRuleSynthetic, in.AgentRule)
		assert.Equal(t, "root", in.SpanID)
		assert.Equal(t, "weather?", in.Input)
		assert.Equal(t, "sunny", in.Output)
		assert.Len(t, in.Steps, 3)
		require.Len(t, got.Agents, 1)
		assert.Equal(t, "trace", got.Agents[0].ToolsSource)
		assert.Equal(t, "weather", got.Agents[0].Tools[0].Name)
	})
	t.Run("agent id derived from the root name", func(t *testing.T) {
		recs := []SpanRecord{
			asSpan("root", "", ClassTurn, 0, 100, asNamed("invoke_workflow billing")),
			asSpan("llm1", "root", ClassLLM, 1, 40),
		}
		in := AssembleTurn(recs).Turn.Interactions
		require.Len(t, in, 1)
		assert.Equal(t, "billing", in[0].AgentID)
		assert.Equal(t, AgentRuleSyntheticRootName, in[0].AgentRule)
	})
	t.Run("orphan tool spans of a multi-agent trace stay unattributed", func(t *testing.T) {
		recs := []SpanRecord{
			asSpan("w", "", ClassTurn, 0, 100),
			asSpan("router", "w", ClassLLM, 1, 10, asUsage(5, 1)),
			asSpan("tool", "w", ClassTool, 11, 12, asTool("lookup", "", "")),
			asSpan("a", "w", ClassAgent, 20, 90, asAgent("A")),
		}
		got := AssembleTurn(recs).Turn
		require.Len(t, got.Interactions, 1)
		assert.Empty(t, got.Interactions[0].Steps)
		assert.Equal(t, Usage{InputTokens: 5, OutputTokens: 1, LLMCalls: 1}, got.Usage, "their usage still counts")
	})
}

func TestAssembleTurnOrphanToolsAndWrappers(t *testing.T) {
	t.Run("LangGraph tools node beside the agent node joins the requesting interaction", func(t *testing.T) {
		recs := []SpanRecord{
			asSpan("g", "", ClassTurn, 0, 1000, asNamed("LangGraph")),
			asSpan("a", "g", ClassAgent, 10, 100, asAgent("agent")),
			asSpan("l", "a", ClassLLM, 20, 90, asRequests(asReq("", "search", `{"q":"otel"}`), asReq("c7", "fetch", `{}`))),
			asSpan("tools", "g", ClassOther, 110, 200, asNamed("tools")),
			asSpan("x1", "tools", ClassTool, 120, 130, asTool("search", "", "")),
			asSpan("x2", "tools", ClassTool, 121, 131, asTool("fetch", "c7", "")),
			asSpan("x3", "tools", ClassTool, 122, 132, asTool("unrelated", "", "")),
			asSpan("a2", "g", ClassAgent, 210, 300, asAgent("agent")),
		}
		turn := AssembleTurn(recs).Turn
		require.Len(t, turn.Interactions, 2)
		calls := asToolCalls(turn)
		require.Len(t, calls, 2, "the unrequested orphan stays unattributed")
		for _, c := range calls {
			assert.True(t, c.Requested && c.Executed, "%s joined its execution span", c.ToolName)
		}
		assert.Equal(t, []string{"x1", "x2"}, []string{calls[0].SpanID, calls[1].SpanID})
	})
	t.Run("ADK call_llm wrapper content is used by its generate_content span", func(t *testing.T) {
		recs := []SpanRecord{
			asSpan("inv", "", ClassTurn, 0, 1000, asNamed("invocation")),
			asSpan("a", "inv", ClassAgent, 1, 999, asAgent("math_agent")),
			asSpan("w1", "a", ClassOther, 10, 100, asNamed("call_llm"), asUserMsg("15*37?"), asToolDefs("calculator"),
				asRequests(asReq("u1", "calculator", `{"expression":"15 * 37"}`))),
			asSpan("g1", "w1", ClassLLM, 11, 99, asNamed("generate_content gemini")),
			asSpan("x", "a", ClassTool, 101, 110, asTool("calculator", "u1", `{"expression":"15 * 37"}`)),
			asSpan("w2", "a", ClassOther, 120, 200, asNamed("call_llm"), asOutput("555")),
			asSpan("g2", "w2", ClassLLM, 121, 199, asNamed("generate_content gemini"), asOutput("own text")),
		}
		got := AssembleTurn(recs)
		turn := got.Turn
		assert.Equal(t, "15*37?", turn.UserMessage)
		calls := asToolCalls(turn)
		require.Len(t, calls, 1)
		assert.True(t, calls[0].Requested && calls[0].Executed)
		require.Len(t, turn.Interactions, 1)
		assert.Equal(t, "own text", turn.Interactions[0].Output, "the LLM span's own content wins")
		assert.Equal(t, "calculator", got.Agents[0].Tools[0].Name)
		assert.Equal(t, "", recs[3].UserMessage, "records are not modified")
	})
}

func TestAssembleTurnToolCallJoin(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	agentSpan := asSpan("a", "", ClassAgent, 0, 1000, asAgent("A"))
	tests := []struct {
		name string
		recs []SpanRecord
		want []ToolCall
	}{
		{
			name: "joined by call id",
			recs: []SpanRecord{
				agentSpan,
				asSpan("l1", "a", ClassLLM, 10, 20, asRequests(asReq("c1", "lookup", `{"id": 7}`), asReq("c2", "lookup", `{"id":8}`))),
				asSpan("x2", "a", ClassTool, 21, 25, asTool("lookup", "c2", `{"id":8,"extra":1}`), asResult("eight")),
				asSpan("x1", "a", ClassTool, 22, 30, asTool("lookup", "c1", ""), asResult("seven")),
			},
			want: []ToolCall{
				{ToolName: "lookup", CallID: "c2", Parameters: json.RawMessage(`{"id":8}`), ArgumentsSource: "llm_output",
					Result: "eight", Requested: true, Executed: true, Status: "ok", LatencyMs: f(4), SpanID: "x2", RequestSpanID: "l1"},
				{ToolName: "lookup", CallID: "c1", Parameters: json.RawMessage(`{"id":7}`), ArgumentsSource: "llm_output",
					Result: "seven", Requested: true, Executed: true, Status: "ok", LatencyMs: f(8), SpanID: "x1", RequestSpanID: "l1"},
			},
		},
		{
			name: "joined by name and order; the rejected call was not executed",
			recs: []SpanRecord{
				agentSpan,
				asSpan("l1", "a", ClassLLM, 10, 20, asRequests(asReq("", "refund", `{"order":"A1","bogus":true}`))),
				asSpan("l2", "a", ClassLLM, 30, 40, asRequests(asReq("", "refund", `{"order":"A1"}`))),
				asSpan("x", "a", ClassTool, 41, 45, asTool("refund", "", ""), asResult("ok")),
			},
			want: []ToolCall{
				{ToolName: "refund", Parameters: json.RawMessage(`{"order":"A1","bogus":true}`), ArgumentsSource: "llm_output",
					Requested: true, Executed: false, Status: "not_executed", SpanID: "l1", RequestSpanID: "l1"},
				{ToolName: "refund", Parameters: json.RawMessage(`{"order":"A1"}`), ArgumentsSource: "llm_output",
					Result: "ok", Requested: true, Executed: true, Status: "ok", LatencyMs: f(4), SpanID: "x", RequestSpanID: "l2"},
			},
		},
		{
			name: "parallel calls of one tool pair in order",
			recs: []SpanRecord{
				agentSpan,
				asSpan("l1", "a", ClassLLM, 10, 20, asRequests(asReq("", "add", `{"a":1}`), asReq("", "add", `{"a":2}`))),
				asSpan("x1", "a", ClassTool, 21, 22, asTool("add", "", `{"a":1}`)),
				asSpan("x2", "a", ClassTool, 21, 23, asTool("add", "", `{"a":2}`)),
			},
			want: []ToolCall{
				{ToolName: "add", Parameters: json.RawMessage(`{"a":1}`), ArgumentsSource: "llm_output",
					Requested: true, Executed: true, Status: "ok", LatencyMs: f(1), SpanID: "x1", RequestSpanID: "l1"},
				{ToolName: "add", Parameters: json.RawMessage(`{"a":2}`), ArgumentsSource: "llm_output",
					Requested: true, Executed: true, Status: "ok", LatencyMs: f(2), SpanID: "x2", RequestSpanID: "l1"},
			},
		},
		{
			name: "different call ids never pair by name",
			recs: []SpanRecord{
				agentSpan,
				asSpan("l1", "a", ClassLLM, 10, 20, asRequests(asReq("c1", "add", `{}`))),
				asSpan("x1", "a", ClassTool, 21, 22, asTool("add", "c9", `{}`)),
			},
			want: []ToolCall{
				{ToolName: "add", CallID: "c1", Parameters: json.RawMessage(`{}`), ArgumentsSource: "llm_output",
					Requested: true, Status: "not_executed", SpanID: "l1", RequestSpanID: "l1"},
				{ToolName: "add", CallID: "c9", Parameters: json.RawMessage(`{}`), ArgumentsSource: "gen_ai.tool.call.arguments",
					Executed: true, Status: "ok", LatencyMs: f(1), SpanID: "x1"},
			},
		},
		{
			name: "execution without request; non-JSON arguments; tool error",
			recs: []SpanRecord{
				agentSpan,
				asSpan("x1", "a", ClassTool, 21, 31, asTool("shell", "", "ls -la <dir>"), asFailed("TimeoutError"), asResult("timed out")),
			},
			want: []ToolCall{
				{ToolName: "shell", Parameters: json.RawMessage(`"ls -la <dir>"`), ArgumentsSource: "gen_ai.tool.call.arguments",
					Result: "timed out", Error: "TimeoutError", Executed: true, Status: "error", LatencyMs: f(10), SpanID: "x1"},
			},
		},
		{
			name: "tool error: the status description, not the error class",
			recs: []SpanRecord{
				agentSpan,
				asSpan("x1", "a", ClassTool, 21, 31, asTool("refund_order", "c1", `{}`), asFailedWith("tool_error", "payment gateway timeout")),
			},
			want: []ToolCall{
				{ToolName: "refund_order", CallID: "c1", Parameters: json.RawMessage(`{}`), ArgumentsSource: "gen_ai.tool.call.arguments",
					Error: "payment gateway timeout", Executed: true, Status: "error", LatencyMs: f(10), SpanID: "x1"},
			},
		},
		{
			name: "no arguments captured; execution span name as tool name",
			recs: []SpanRecord{
				agentSpan,
				asSpan("x1", "a", ClassTool, 21, 31, asNamed("calculator")),
			},
			want: []ToolCall{
				{ToolName: "calculator", Executed: true, Status: "ok", LatencyMs: f(10), SpanID: "x1"},
			},
		},
		{
			name: "requested handoff call rejected (target never ran)",
			recs: []SpanRecord{
				agentSpan,
				asSpan("l1", "a", ClassLLM, 10, 20, asRequests(asReq("c1", "transfer_to_billing", `{}`))),
			},
			want: []ToolCall{
				{ToolName: "transfer_to_billing", CallID: "c1", Parameters: json.RawMessage(`{}`), ArgumentsSource: "llm_output",
					Requested: true, Status: "not_executed", SpanID: "l1", RequestSpanID: "l1", IsHandoff: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := asToolCalls(AssembleTurn(tt.recs).Turn)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestAssembleTurnHandoffs(t *testing.T) {
	type hw struct {
		from, to, mode, rule, payload string
		captured, inferred            bool
	}
	tests := []struct {
		name  string
		recs  []SpanRecord
		want  []hw
		calls func(t *testing.T, calls []ToolCall)
	}{
		{
			name: "(a) gen_ai.transfer on a tool span",
			recs: []SpanRecord{
				asSpan("w", "", ClassTurn, 0, 1000),
				asSpan("a", "w", ClassAgent, 10, 100, asAgent("triage")),
				asSpan("x", "a", ClassTool, 50, 60, asTool("route", "c1", `{"message":"refund order 42"}`),
					asWith(func(r *SpanRecord) { r.HandoffTo, r.HandoffMode = "billing", "pass_control" })),
				asSpan("b", "w", ClassAgent, 110, 200, asAgent("billing"), asInput("please refund")),
			},
			want: []hw{{"triage", "billing", "pass_control", HandoffSourceTransfer, "refund order 42", true, false}},
		},
		{
			name: "(b) handoff span, de-duplicated with the tool call and the siblings",
			recs: []SpanRecord{
				asSpan("w", "", ClassTurn, 0, 1000),
				asSpan("a", "w", ClassAgent, 10, 100, asAgent("coordinator")),
				asSpan("l", "a", ClassLLM, 20, 40, asRequests(asReq("c1", "transfer_to_math_specialist", `{}`))),
				asSpan("h", "a", ClassHandoff, 41, 42, asHandoff("coordinator", "math_specialist"), asNamed("agent_handoff OpenAI Agent")),
				asSpan("b", "w", ClassAgent, 110, 200, asAgent("math_specialist"), asInput("what is 6*7")),
			},
			want: []hw{{"coordinator", "math_specialist", "pass_control", HandoffSourceHandoffSpan, "what is 6*7", true, false}},
			calls: func(t *testing.T, calls []ToolCall) {
				require.Len(t, calls, 1)
				assert.True(t, calls[0].Executed, "the handoff span executed the requested transfer")
				assert.Equal(t, "h", calls[0].SpanID)
				assert.Equal(t, "ok", calls[0].Status)
				assert.NotNil(t, calls[0].LatencyMs)
			},
		},
		{
			name: "(c) OpenInference handoff span with the target in its name",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 10, 100, asAgent("Triage Agent")),
				asSpan("h", "a", ClassHandoff, 41, 42, asNamed("handoff to Spanish Agent")),
				asSpan("b", "", ClassAgent, 110, 200, asAgent("Spanish Agent")),
			},
			want: []hw{{"Triage Agent", "Spanish Agent", "pass_control", HandoffSourceOpenInference, "", false, false}},
		},
		{
			name: "(c) graph.node.parent_id naming the previous agent",
			recs: []SpanRecord{
				asSpan("k", "", ClassTurn, 0, 1000, asNamed("crew.kickoff")),
				asSpan("a", "k", ClassAgent, 10, 100, asAgent("Researcher"), asWith(func(r *SpanRecord) { r.GraphNodeID = "Researcher" })),
				asSpan("b", "k", ClassAgent, 90, 200, asAgent("Writer"), asWith(func(r *SpanRecord) {
					r.GraphNodeID, r.GraphParentID = "Writer", "Researcher"
				})),
			},
			want: []hw{{"Researcher", "Writer", "pass_control", HandoffSourceOpenInference, "", false, false}},
		},
		{
			name: "(d) transfer_to_agent{agent_name} with a message payload",
			recs: []SpanRecord{
				asSpan("inv", "", ClassTurn, 0, 1000, asNamed("invocation")),
				asSpan("a", "inv", ClassAgent, 10, 500, asAgent("root_agent")),
				asSpan("l", "a", ClassLLM, 20, 40, asRequests(asReq("c1", "transfer_to_agent", `{"agent_name":"weather_agent"}`))),
				asSpan("x", "a", ClassTool, 41, 42, asTool("transfer_to_agent", "c1", `{"agent_name":"weather_agent"}`)),
				asSpan("b", "a", ClassAgent, 50, 400, asAgent("weather_agent"), asInput("weather in Paris")),
			},
			want: []hw{{"root_agent", "weather_agent", "pass_control", HandoffSourceTool, "weather in Paris", true, true}},
		},
		{
			name: "(d) handoff_to_agent with message and context; target normalised",
			recs: []SpanRecord{
				asSpan("s", "", ClassTurn, 0, 1000, asNamed("invoke_swarm")),
				asSpan("a", "s", ClassAgent, 10, 100, asAgent("researcher")),
				asSpan("x", "a", ClassTool, 41, 42, asTool("handoff_to_agent", "c1",
					`{"agent_name":"Code Reviewer","message":"review PR 12","context":{"repo":"x/y"}}`)),
				asSpan("b", "s", ClassAgent, 110, 200, asAgent("code-reviewer")),
			},
			want: []hw{{"researcher", "code-reviewer", "pass_control", HandoffSourceTool, "review PR 12\n{\"repo\":\"x/y\"}", true, true}},
		},
		{
			name: "(d) CrewAI delegate to coworker returns to the caller",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 10, 500, asAgent("Manager")),
				asSpan("x", "a", ClassTool, 41, 300, asTool("Delegate work to coworker", "",
					`{"task":"write intro","context":"about otel","coworker":"Writer"}`)),
				asSpan("b", "x", ClassAgent, 50, 250, asAgent("Writer")),
			},
			want: []hw{{"Manager", "Writer", "return_to_caller", HandoffSourceTool, "write intro\nabout otel", true, true}},
		},
		{
			name: "(d) transfer_back_to_supervisor and a rejected transfer",
			recs: []SpanRecord{
				asSpan("g", "", ClassTurn, 0, 1000),
				asSpan("sup", "g", ClassAgent, 0, 100, asAgent("supervisor")),
				asSpan("l0", "sup", ClassLLM, 1, 2, asRequests(asReq("c0", "transfer_to_nobody", `{}`))),
				asSpan("l1", "sup", ClassLLM, 5, 9, asRequests(asReq("c1", "transfer_to_math", `{}`))),
				asSpan("m", "g", ClassAgent, 110, 200, asAgent("math"), asInput("2+2")),
				asSpan("l2", "m", ClassLLM, 120, 130, asRequests(asReq("c2", "transfer_back_to_supervisor", `{}`))),
				asSpan("sup2", "g", ClassAgent, 210, 300, asAgent("supervisor")),
			},
			want: []hw{
				{"supervisor", "math", "pass_control", HandoffSourceTool, "2+2", true, true},
				{"math", "supervisor", "pass_control", HandoffSourceTool, "", true, true},
			},
			calls: func(t *testing.T, calls []ToolCall) {
				require.Len(t, calls, 3)
				assert.False(t, calls[0].Executed, "nobody never ran: a rejected call, no handoff")
				assert.True(t, calls[1].Executed, "math ran after the transfer")
				assert.True(t, calls[2].Executed)
			},
		},
		{
			name: "(d) wins over (e): the Claude Agent tool names its sub-agent type, and the nested agent span agrees",
			recs: []SpanRecord{
				asSpan("q", "", ClassAgent, 0, 1000, asAgent("ClaudeAgentSDK.query")),
				asSpan("x", "q", ClassTool, 10, 500, asTool("Agent", "", `{"subagent_type":"explorer","prompt":"list files"}`)),
				asSpan("s", "x", ClassAgent, 20, 400, asAgent("Agent")),
			},
			want: []hw{{"ClaudeAgentSDK.query", "Agent", "return_to_caller", HandoffSourceTool, "list files", true, true}},
		},
		{
			name: "(e) sub-agent lifted out of the tool span named after it (OpenLLMetry)",
			recs: []SpanRecord{
				asSpan("wf", "", ClassTurn, 0, 1000, asNamed("Agent Workflow")),
				asSpan("c", "wf", ClassAgent, 1, 999, asAgent("coordinator")),
				asSpan("x", "c", ClassTool, 100, 400, asTool("ask_research_specialist", "", `{"input":"NVDA price"}`)),
				asSpan("r", "wf", ClassAgent, 101, 399, asAgent("research_specialist")),
				asSpan("y", "c", ClassTool, 500, 800, asTool("ask_math_specialist", "", `{"input":"2*3"}`)),
				asSpan("m", "wf", ClassAgent, 501, 799, asAgent("math_specialist")),
			},
			want: []hw{
				{"coordinator", "research_specialist", "return_to_caller", HandoffSourceAgentAsTool, "NVDA price", true, true},
				{"coordinator", "math_specialist", "return_to_caller", HandoffSourceAgentAsTool, "2*3", true, true},
			},
		},
		{
			name: "(f) consecutive siblings of different agents; overlapping and same-agent siblings are not",
			recs: []SpanRecord{
				asSpan("s", "", ClassTurn, 0, 1000),
				asSpan("a", "s", ClassAgent, 10, 100, asAgent("A")),
				asSpan("a2", "s", ClassAgent, 100, 150, asAgent("A")),
				asSpan("b", "s", ClassAgent, 160, 300, asAgent("B"), asInput("ctx for B")),
				asSpan("c", "s", ClassAgent, 250, 400, asAgent("C")),
			},
			want: []hw{{"A", "B", "pass_control", HandoffSourceSibling, "ctx for B", true, true}},
		},
		{
			name: "parallel transfer requests: the SDK ignores the second and marks the handoff span ERROR",
			recs: []SpanRecord{
				asSpan("w", "", ClassTurn, 0, 1000),
				asSpan("a", "w", ClassAgent, 10, 100, asAgent("coordinator")),
				asSpan("l", "a", ClassLLM, 20, 40, asRequests(asReq("c1", "transfer_to_math_specialist", `{}`),
					asReq("c2", "transfer_to_research_specialist", `{}`))),
				asSpan("h", "a", ClassHandoff, 41, 42, asHandoff("coordinator", "math_specialist"), asFailed("")),
				asSpan("b", "w", ClassAgent, 110, 200, asAgent("math_specialist")),
			},
			want: []hw{{"coordinator", "math_specialist", "pass_control", HandoffSourceHandoffSpan, "", true, false}},
			calls: func(t *testing.T, calls []ToolCall) {
				require.Len(t, calls, 2)
				assert.Equal(t, []string{"ok", "not_executed"}, []string{calls[0].Status, calls[1].Status})
				assert.Equal(t, "h", calls[0].SpanID)
			},
		},
		{
			name: "handoff target recorded by the extractor on an agent-launching tool (Claude Agent tool)",
			recs: []SpanRecord{
				asSpan("q", "", ClassAgent, 0, 1000, asAgent("ClaudeAgentSDK.query"),
					asRequests(asReq("t1", "Agent", `{"subagent_type":"research-specialist","prompt":"NY weather"}`))),
				asSpan("x", "q", ClassTool, 10, 500, asTool("Agent", "t1", ""), asWith(func(r *SpanRecord) {
					r.HandoffTo, r.HandoffMode, r.HandoffRule = "research-specialist", "return_to_caller", "handoff_tool"
				})),
				asSpan("s", "x", ClassAgent, 20, 400, asAgent("Agent")),
			},
			// The sub-agent span carries only the launching tool's name: it is named after
			// the sub-agent the tool's arguments name.
			want: []hw{{"ClaudeAgentSDK.query", "research-specialist", "return_to_caller", HandoffSourceTool, "NY weather", true, true}},
			calls: func(t *testing.T, calls []ToolCall) {
				require.Len(t, calls, 1)
				assert.True(t, calls[0].Requested, "requested on the agent span: the interaction has no LLM span")
				assert.Equal(t, "q", calls[0].RequestSpanID)
			},
		},
		{
			name: "no self handoff",
			recs: []SpanRecord{
				asSpan("a", "", ClassAgent, 10, 100, asAgent("A")),
				asSpan("x", "a", ClassTool, 20, 30, asTool("transfer_to_a", "", "")),
			},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := AssembleTurn(tt.recs).Turn
			var got []hw
			steps, owners := asSteps(turn, StepHandoff)
			for i, s := range steps {
				h := s.Handoff
				got = append(got, hw{h.FromAgent, h.ToAgent, h.Mode, h.SourceRule, h.Payload, h.PayloadCaptured, h.Inferred})
				assert.Equal(t, h.FromAgent, owners[i], "the handoff step is in the sending agent's interaction")
			}
			assert.Equal(t, tt.want, got)
			if tt.calls != nil {
				tt.calls(t, asToolCalls(turn))
			}
		})
	}
}

func TestAssembleTurnAgentsAndOutcome(t *testing.T) {
	yes, no := true, false
	cost := 0.25
	recs := []SpanRecord{
		asSpan("w", "", ClassTurn, 0, 1000, asWith(func(r *SpanRecord) { r.Outcome = &no })),
		asSpan("a", "w", ClassAgent, 10, 100, asAgent("triage"), asWith(func(r *SpanRecord) {
			r.AgentDescription = "routes requests"
			r.AllowedTools = []string{"lookup", "transfer_to_billing"}
			r.HandoffTargets = []string{"Billing"}
		})),
		asSpan("l", "a", ClassLLM, 20, 30, asToolDefs("lookup", "transfer_to_refunds"), asWith(func(r *SpanRecord) { r.Cost = &cost })),
		asSpan("b", "w", ClassAgent, 110, 1100, asAgent("billing"), asWith(func(r *SpanRecord) { r.Outcome = &yes })),
		asSpan("c", "w", ClassAgent, 120, 130, asAgent("refunds")),
	}
	got := AssembleTurn(recs)
	require.Len(t, got.Agents, 3)
	tr := got.Agents[0]
	assert.Equal(t, "triage", tr.ID)
	assert.Equal(t, "routes requests", tr.Description)
	assert.Equal(t, "trace", tr.ToolsSource)
	var names []string
	for _, d := range tr.Tools {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"lookup", "transfer_to_billing", "transfer_to_refunds"}, names)
	assert.JSONEq(t, `{"type":"object"}`, string(tr.Tools[0].Parameters), "a later schema completes a name-only tool")
	assert.Equal(t, []string{"billing", "refunds"}, tr.HandoffTargets)
	assert.Equal(t, "", got.Agents[1].ToolsSource, "no tool information: unknown")
	require.NotNil(t, got.Outcome)
	assert.True(t, *got.Outcome, "the outcome of the span that ended last")
	require.NotNil(t, got.Cost)
	assert.InDelta(t, 0.25, *got.Cost, 1e-12)
}

// TestAssembleTurnOrderIndependent checks that any permutation of the records gives the
// same turn.
func TestAssembleTurnOrderIndependent(t *testing.T) {
	recs := benchTurnRecords(40)
	want := AssembleTurn(recs)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(recs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := AssembleTurn(shuffled)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("order changed the result")
		}
	}
}

// TestAssembledTurnKeepsNothingOfItsRecords pins what Closed.Assemble relies on to pool
// the record slice: the assembly copies what it keeps, so clearing and reusing the records
// afterwards leaves it unchanged.
func TestAssembledTurnKeepsNothingOfItsRecords(t *testing.T) {
	outcome := func(r *SpanRecord) {
		done, cost := true, 0.25
		r.Outcome, r.Cost = &done, &cost
	}
	build := func() []SpanRecord {
		recs := benchTurnRecords(60)
		outcome(&recs[0])
		return recs
	}
	want := AssembleTurn(build())
	recs := build()
	got := AssembleTurn(recs)
	clear(recs)
	for i := range recs {
		recs[i] = SpanRecord{SpanID: "reused", Name: "reused", UserMessage: "reused", Class: ClassLLM}
	}
	assert.Equal(t, want, got)
}
