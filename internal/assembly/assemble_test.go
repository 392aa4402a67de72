// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/assembly"
	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

func TestAssembleTurnEmpty(t *testing.T) {
	for name, recs := range map[string][]session.SpanRecord{
		"nil":             nil,
		"evaluation only": {sessiontest.Span("e1", "", session.ClassEvaluation, 0, 10)},
	} {
		t.Run(name, func(t *testing.T) {
			got := assembly.Assemble(recs)
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
		recs      []session.SpanRecord
		anomalies []string
		root      string
		spans     int
		agents    []string // interaction agent ids in order
		parents   []string // interaction parent agent ids
	}{
		{
			name: "clean tree",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 0, 100, sessiontest.Agent("A")),
				sessiontest.Span("b", "a", session.ClassAgent, 10, 50, sessiontest.Agent("B")),
			},
			root: "a", spans: 2, agents: []string{"A", "B"}, parents: []string{"", "A"},
		},
		{
			name: "duplicate span keeps the first",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 0, 100, sessiontest.Agent("A")),
				sessiontest.Span("a", "", session.ClassAgent, 0, 100, sessiontest.Agent("Z")),
			},
			anomalies: []string{session.AnomalyDuplicateSpan}, root: "a", spans: 1, agents: []string{"A"}, parents: []string{""},
		},
		{
			name: "self parent becomes a root",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "a", session.ClassAgent, 0, 100, sessiontest.Agent("A")),
				sessiontest.Span("b", "a", session.ClassAgent, 10, 50, sessiontest.Agent("B")),
			},
			anomalies: []string{session.AnomalySelfParent}, root: "a", spans: 2, agents: []string{"A", "B"}, parents: []string{"", "A"},
		},
		{
			name: "two-span cycle is cut at the earliest span",
			recs: []session.SpanRecord{
				sessiontest.Span("b", "a", session.ClassAgent, 10, 50, sessiontest.Agent("B")),
				sessiontest.Span("a", "b", session.ClassAgent, 0, 100, sessiontest.Agent("A")),
			},
			anomalies: []string{session.AnomalyCycle}, root: "a", spans: 2, agents: []string{"A", "B"}, parents: []string{"", "A"},
		},
		{
			name: "cycle below a root",
			recs: []session.SpanRecord{
				sessiontest.Span("r", "", session.ClassTurn, 0, 100),
				sessiontest.Span("x", "z", session.ClassAgent, 20, 30, sessiontest.Agent("X")),
				sessiontest.Span("y", "x", session.ClassAgent, 21, 29, sessiontest.Agent("Y")),
				sessiontest.Span("z", "y", session.ClassOther, 22, 28),
			},
			anomalies: []string{session.AnomalyCycle}, root: "r", spans: 4, agents: []string{"X", "Y"}, parents: []string{"", "X"},
		},
		{
			name: "orphan HTTP root and orphan GenAI root are normal",
			recs: []session.SpanRecord{
				sessiontest.Span("http", "outside", session.ClassOther, 0, 100),
				sessiontest.Span("a", "outside2", session.ClassAgent, 1, 99, sessiontest.Agent("A")),
			},
			root: "a", spans: 2, agents: []string{"A"}, parents: []string{""},
		},
		{
			name: "a second GenAI span with a missing parent",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 0, 100, sessiontest.Agent("A")),
				sessiontest.Span("b", "gone", session.ClassAgent, 10, 50, sessiontest.Agent("B")),
			},
			anomalies: []string{session.AnomalyMissingParent}, root: "a", spans: 2, agents: []string{"A", "B"}, parents: []string{"", ""},
		},
		{
			name: "evaluation spans are ignored entirely",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 0, 100, sessiontest.Agent("A")),
				sessiontest.Span("ev", "a", session.ClassEvaluation, 100, 101),
				sessiontest.Span("ev2", "", session.ClassEvaluation, -5, 200),
			},
			root: "a", spans: 1, agents: []string{"A"}, parents: []string{""},
		},
		{
			name: "truncated text",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 0, 100, sessiontest.Agent("A"), sessiontest.With(func(r *session.SpanRecord) { r.Truncated = true })),
			},
			anomalies: []string{session.AnomalyTruncatedText}, root: "a", spans: 1, agents: []string{"A"}, parents: []string{""},
		},
		{
			name: "everything at once is sorted and deduplicated",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "a", session.ClassAgent, 0, 100, sessiontest.Agent("A")),
				sessiontest.Span("a", "", session.ClassAgent, 0, 100, sessiontest.Agent("A")),
				sessiontest.Span("b", "c", session.ClassOther, 10, 20),
				sessiontest.Span("c", "b", session.ClassOther, 11, 19),
				sessiontest.Span("d", "nowhere", session.ClassLLM, 30, 40),
				sessiontest.Span("e", "nowhere", session.ClassLLM, 50, 60),
			},
			anomalies: []string{session.AnomalyCycle, session.AnomalyDuplicateSpan, session.AnomalyMissingParent, session.AnomalySelfParent},
			root:      "a", spans: 5, agents: []string{"A"}, parents: []string{""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assembly.Assemble(tt.recs)
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
		recs    []session.SpanRecord
		root    string
		rule    string
		user    string
		final   string
		latency float64
		status  string
	}{
		{
			name: "turn marker wins over a higher agent span",
			recs: []session.SpanRecord{
				sessiontest.Span("http", "", session.ClassOther, 0, 1000),
				sessiontest.Span("a", "http", session.ClassAgent, 10, 900, sessiontest.Agent("outer")),
				sessiontest.Span("w", "a", session.ClassTurn, 20, 800, sessiontest.UserMsg("hello"), sessiontest.Output("bye")),
			},
			root: "w", rule: session.RootRuleTurnMarker, user: "hello", final: "bye", latency: 780, status: "ok",
		},
		{
			name: "highest turn marker among several",
			recs: []session.SpanRecord{
				sessiontest.Span("w1", "", session.ClassTurn, 0, 100),
				sessiontest.Span("w2", "w1", session.ClassTurn, 10, 90),
			},
			root: "w1", rule: session.RootRuleTurnMarker, latency: 100, status: "ok",
		},
		{
			name: "highest GenAI span under an HTTP span",
			recs: []session.SpanRecord{
				sessiontest.Span("http", "", session.ClassOther, 0, 1000),
				sessiontest.Span("a", "http", session.ClassAgent, 10, 510, sessiontest.Agent("A"), sessiontest.Failed("Boom")),
				sessiontest.Span("l", "a", session.ClassLLM, 20, 100, sessiontest.UserMsg("question"), sessiontest.Output("answer")),
			},
			root: "a", rule: session.RootRuleGenAIRoot, user: "question", final: "answer", latency: 500, status: "error",
		},
		{
			name: "only other spans",
			recs: []session.SpanRecord{
				sessiontest.Span("h2", "h1", session.ClassOther, 5, 10),
				sessiontest.Span("h1", "", session.ClassOther, 0, 20),
			},
			root: "h1", rule: session.RootRuleSpanRoot, latency: 20, status: "ok",
		},
		{
			name: "root without a usable end time uses the trace extent",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 0, 0, sessiontest.Agent("A")),
				sessiontest.Span("l", "a", session.ClassLLM, 5, 40),
			},
			root: "a", rule: session.RootRuleGenAIRoot, latency: 40, status: "ok",
		},
		{
			name: "final response is the output of the interaction that ended last",
			recs: []session.SpanRecord{
				sessiontest.Span("w", "", session.ClassTurn, 0, 100),
				sessiontest.Span("a", "w", session.ClassAgent, 10, 50, sessiontest.Agent("triage"), sessiontest.UserMsg("first"), sessiontest.Output("routing")),
				sessiontest.Span("b", "w", session.ClassAgent, 55, 95, sessiontest.Agent("expert"), sessiontest.Output("the answer")),
				sessiontest.Span("c", "w", session.ClassAgent, 60, 70, sessiontest.Agent("helper")),
			},
			root: "w", rule: session.RootRuleTurnMarker, user: "first", final: "the answer", latency: 100, status: "ok",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assembly.Assemble(tt.recs).Turn
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
	recs := []session.SpanRecord{
		sessiontest.Span("w", "", session.ClassTurn, 0, 1000),
		sessiontest.Span("a", "w", session.ClassAgent, 10, 900, sessiontest.Agent("planner"), sessiontest.UsageOf(999, 999)),
		sessiontest.Span("cyc", "a", session.ClassOther, 15, 800),
		sessiontest.Span("l1", "cyc", session.ClassLLM, 20, 100, sessiontest.UsageOf(10, 5), sessiontest.With(func(r *session.SpanRecord) {
			r.Reasoning = "I should look it up"
			r.FinishReasons = []string{"tool_calls"}
			r.Model = "gpt-x"
		})),
		sessiontest.Span("t1", "cyc", session.ClassTool, 110, 130, sessiontest.Tool("search", "c1", `{"q":"x"}`)),
		sessiontest.Span("sub", "t1", session.ClassAgent, 111, 129, sessiontest.Agent("researcher")),
		sessiontest.Span("l3", "sub", session.ClassLLM, 112, 120, sessiontest.UsageOf(3, 3), sessiontest.Output("found it")),
		sessiontest.Span("l2", "cyc", session.ClassLLM, 140, 200, sessiontest.UsageOf(20, 7), sessiontest.Output("done"), sessiontest.With(func(r *session.SpanRecord) {
			r.FinishReasons = []string{"stop"}
		})),
	}
	got := assembly.Assemble(recs)
	turn := got.Turn
	require.Len(t, turn.Interactions, 2)
	planner, researcher := turn.Interactions[0], turn.Interactions[1]
	var kinds []session.StepKind
	var ids []string
	for _, s := range planner.Steps {
		kinds = append(kinds, s.Kind)
		ids = append(ids, s.SpanID)
	}
	assert.Equal(t, []session.StepKind{session.StepReasoning, session.StepLLMCall, session.StepToolCall, session.StepHandoff, session.StepLLMCall}, kinds)
	assert.Equal(t, []string{"l1", "l1", "t1", "t1", "l2"}, ids)
	assert.Equal(t, "I should look it up", planner.Steps[0].Text)
	assert.Equal(t, "gpt-x", planner.Steps[1].LLMCall.Model)
	assert.InDelta(t, 80.0, planner.Steps[1].LLMCall.LatencyMs, 1e-9)
	assert.Equal(t, "stop", planner.FinishReason)
	assert.Equal(t, "done", planner.Output, "an agent span without output answers with its last LLM text")
	assert.Equal(t, session.Usage{InputTokens: 30, OutputTokens: 12, LLMCalls: 2}, planner.Usage, "agent span usage is never summed")
	assert.Equal(t, "planner", researcher.ParentAgentID)
	assert.Equal(t, session.Usage{InputTokens: 3, OutputTokens: 3, LLMCalls: 1}, researcher.Usage)
	require.Len(t, researcher.Steps, 1)
	assert.Equal(t, session.Usage{InputTokens: 33, OutputTokens: 15, LLMCalls: 3}, turn.Usage)
	h := planner.Steps[3].Handoff
	assert.Equal(t, session.Handoff{FromAgent: "planner", ToAgent: "researcher", Mode: "return_to_caller",
		Payload: `{"q":"x"}`, PayloadCaptured: true, SourceRule: session.HandoffSourceAgentAsTool, Inferred: true}, *h)
}

func TestAssembleTurnSyntheticInteraction(t *testing.T) {
	t.Run("no agent span: one synthetic interaction", func(t *testing.T) {
		recs := []session.SpanRecord{
			sessiontest.Span("root", "", session.ClassTurn, 0, 100, sessiontest.Named("ai.generateText"), sessiontest.UserMsg("weather?"), sessiontest.Output("sunny")),
			sessiontest.Span("llm1", "root", session.ClassLLM, 1, 40, sessiontest.Requests(sessiontest.Req("c1", "weather", `{"city":"Paris"}`)), sessiontest.ToolDefs("weather")),
			sessiontest.Span("tool", "root", session.ClassTool, 41, 50, sessiontest.Tool("weather", "c1", `{"city":"Paris"}`), sessiontest.Result("sunny")),
			sessiontest.Span("llm2", "root", session.ClassLLM, 51, 99, sessiontest.Output("sunny")),
		}
		got := assembly.Assemble(recs)
		require.Len(t, got.Turn.Interactions, 1)
		in := got.Turn.Interactions[0]
		assert.Equal(t, session.SyntheticAgentID, in.AgentID)
		assert.Equal(t, session.AgentRuleSynthetic, in.AgentRule)
		assert.Equal(t, "root", in.SpanID)
		assert.Equal(t, "weather?", in.Input)
		assert.Equal(t, "sunny", in.Output)
		assert.Len(t, in.Steps, 3)
		require.Len(t, got.Agents, 1)
		assert.Equal(t, "trace", got.Agents[0].ToolsSource)
		assert.Equal(t, "weather", got.Agents[0].Tools[0].Name)
	})
	t.Run("agent id derived from the root name", func(t *testing.T) {
		recs := []session.SpanRecord{
			sessiontest.Span("root", "", session.ClassTurn, 0, 100, sessiontest.Named("invoke_workflow billing")),
			sessiontest.Span("llm1", "root", session.ClassLLM, 1, 40),
		}
		in := assembly.Assemble(recs).Turn.Interactions
		require.Len(t, in, 1)
		assert.Equal(t, "billing", in[0].AgentID)
		assert.Equal(t, session.AgentRuleSyntheticRootName, in[0].AgentRule)
	})
	t.Run("orphan tool spans of a multi-agent trace stay unattributed", func(t *testing.T) {
		recs := []session.SpanRecord{
			sessiontest.Span("w", "", session.ClassTurn, 0, 100),
			sessiontest.Span("router", "w", session.ClassLLM, 1, 10, sessiontest.UsageOf(5, 1)),
			sessiontest.Span("tool", "w", session.ClassTool, 11, 12, sessiontest.Tool("lookup", "", "")),
			sessiontest.Span("a", "w", session.ClassAgent, 20, 90, sessiontest.Agent("A")),
		}
		got := assembly.Assemble(recs).Turn
		require.Len(t, got.Interactions, 1)
		assert.Empty(t, got.Interactions[0].Steps)
		assert.Equal(t, session.Usage{InputTokens: 5, OutputTokens: 1, LLMCalls: 1}, got.Usage, "their usage still counts")
	})
}

func TestAssembleTurnOrphanToolsAndWrappers(t *testing.T) {
	t.Run("LangGraph tools node beside the agent node joins the requesting interaction", func(t *testing.T) {
		recs := []session.SpanRecord{
			sessiontest.Span("g", "", session.ClassTurn, 0, 1000, sessiontest.Named("LangGraph")),
			sessiontest.Span("a", "g", session.ClassAgent, 10, 100, sessiontest.Agent("agent")),
			sessiontest.Span("l", "a", session.ClassLLM, 20, 90, sessiontest.Requests(sessiontest.Req("", "search", `{"q":"otel"}`), sessiontest.Req("c7", "fetch", `{}`))),
			sessiontest.Span("tools", "g", session.ClassOther, 110, 200, sessiontest.Named("tools")),
			sessiontest.Span("x1", "tools", session.ClassTool, 120, 130, sessiontest.Tool("search", "", "")),
			sessiontest.Span("x2", "tools", session.ClassTool, 121, 131, sessiontest.Tool("fetch", "c7", "")),
			sessiontest.Span("x3", "tools", session.ClassTool, 122, 132, sessiontest.Tool("unrelated", "", "")),
			sessiontest.Span("a2", "g", session.ClassAgent, 210, 300, sessiontest.Agent("agent")),
		}
		turn := assembly.Assemble(recs).Turn
		require.Len(t, turn.Interactions, 2)
		calls := sessiontest.ToolCalls(turn)
		require.Len(t, calls, 2, "the unrequested orphan stays unattributed")
		for _, c := range calls {
			assert.True(t, c.Requested && c.Executed, "%s joined its execution span", c.ToolName)
		}
		assert.Equal(t, []string{"x1", "x2"}, []string{calls[0].SpanID, calls[1].SpanID})
	})
	t.Run("ADK call_llm wrapper content is used by its generate_content span", func(t *testing.T) {
		recs := []session.SpanRecord{
			sessiontest.Span("inv", "", session.ClassTurn, 0, 1000, sessiontest.Named("invocation")),
			sessiontest.Span("a", "inv", session.ClassAgent, 1, 999, sessiontest.Agent("math_agent")),
			sessiontest.Span("w1", "a", session.ClassOther, 10, 100, sessiontest.Named("call_llm"), sessiontest.UserMsg("15*37?"), sessiontest.ToolDefs("calculator"),
				sessiontest.Requests(sessiontest.Req("u1", "calculator", `{"expression":"15 * 37"}`))),
			sessiontest.Span("g1", "w1", session.ClassLLM, 11, 99, sessiontest.Named("generate_content gemini")),
			sessiontest.Span("x", "a", session.ClassTool, 101, 110, sessiontest.Tool("calculator", "u1", `{"expression":"15 * 37"}`)),
			sessiontest.Span("w2", "a", session.ClassOther, 120, 200, sessiontest.Named("call_llm"), sessiontest.Output("555")),
			sessiontest.Span("g2", "w2", session.ClassLLM, 121, 199, sessiontest.Named("generate_content gemini"), sessiontest.Output("own text")),
		}
		got := assembly.Assemble(recs)
		turn := got.Turn
		assert.Equal(t, "15*37?", turn.UserMessage)
		calls := sessiontest.ToolCalls(turn)
		require.Len(t, calls, 1)
		assert.True(t, calls[0].Requested && calls[0].Executed)
		require.Len(t, turn.Interactions, 1)
		assert.Equal(t, "own text", turn.Interactions[0].Output, "the LLM span's own content wins")
		assert.Equal(t, "calculator", got.Agents[0].Tools[0].Name)
		assert.Equal(t, "", recs[3].UserMessage, "records are not modified")
	})
	t.Run("a model call recorded by two instrumentations counts once", func(t *testing.T) {
		// OpenInference's openai-agents and openai instrumentors together
		// (Arize-ai/openinference#2101): each response span has a nested LLM span of the
		// same request, with the same usage and requested calls.
		req := sessiontest.Requests(sessiontest.Req("c1", "add", `{"a":1,"b":2}`))
		recs := []session.SpanRecord{
			sessiontest.Span("a", "", session.ClassAgent, 0, 1000, sessiontest.Agent("math")),
			sessiontest.Span("r1", "a", session.ClassLLM, 10, 100, sessiontest.UsageOf(100, 20), req, sessiontest.UserMsg("1+2?")),
			sessiontest.Span("o1", "r1", session.ClassLLM, 11, 99, sessiontest.UsageOf(100, 20), req),
			sessiontest.Span("x", "a", session.ClassTool, 110, 120, sessiontest.Tool("add", "c1", `{"a":1,"b":2}`)),
			sessiontest.Span("r2", "a", session.ClassLLM, 130, 200, sessiontest.UsageOf(130, 5), sessiontest.Output("3")),
			sessiontest.Span("o2", "r2", session.ClassLLM, 131, 199, sessiontest.Output("3")),
		}
		turn := assembly.Assemble(recs).Turn
		assert.Equal(t, session.Usage{InputTokens: 230, OutputTokens: 25, LLMCalls: 2}, turn.Usage,
			"each call once; the inner span without usage takes its wrapper's")
		calls := sessiontest.ToolCalls(turn)
		require.Len(t, calls, 1, "the requested call is not doubled")
		assert.True(t, calls[0].Requested && calls[0].Executed)
		llm, _ := sessiontest.Steps(turn, session.StepLLMCall)
		assert.Equal(t, []string{"o1", "o2"}, []string{llm[0].SpanID, llm[1].SpanID}, "the span nearest the wire is the call")
		assert.Equal(t, "1+2?", turn.UserMessage)
		assert.Equal(t, session.ClassLLM, recs[1].Class, "records are not modified")
	})
	t.Run("the inner span takes the wrapper's cost when it has tokens but no cost", func(t *testing.T) {
		cost := 0.25
		recs := []session.SpanRecord{
			sessiontest.Span("a", "", session.ClassAgent, 0, 1000, sessiontest.Agent("math")),
			sessiontest.Span("r", "a", session.ClassLLM, 10, 100, sessiontest.UsageOf(100, 20), sessiontest.With(func(r *session.SpanRecord) { r.Cost = &cost })),
			sessiontest.Span("o", "r", session.ClassLLM, 11, 99, sessiontest.UsageOf(100, 20)),
		}
		got := assembly.Assemble(recs)
		require.NotNil(t, got.Cost)
		assert.InDelta(t, 0.25, *got.Cost, 1e-12)
		assert.Equal(t, session.Usage{InputTokens: 100, OutputTokens: 20, LLMCalls: 1}, got.Turn.Usage)
	})
	t.Run("a turn without LLM span counts its outermost agent totals", func(t *testing.T) {
		// The Claude Agent SDK through OpenInference: only the query AGENT span carries
		// usage; a sub-agent's totals, when it has some, are inside its parent's.
		recs := []session.SpanRecord{
			sessiontest.Span("q", "", session.ClassAgent, 0, 1000, sessiontest.Agent("claude"), sessiontest.UsageOf(132, 850), sessiontest.With(func(r *session.SpanRecord) { r.Usage.LLMCalls = 0 })),
			sessiontest.Span("t", "q", session.ClassTool, 10, 900, sessiontest.Tool("Agent", "c1", `{"subagent_type":"researcher"}`)),
			sessiontest.Span("sub", "t", session.ClassAgent, 11, 899, sessiontest.Agent("researcher"), sessiontest.UsageOf(40, 60), sessiontest.With(func(r *session.SpanRecord) { r.Usage.LLMCalls = 0 })),
		}
		turn := assembly.Assemble(recs).Turn
		assert.Equal(t, session.Usage{InputTokens: 132, OutputTokens: 850}, turn.Usage, "the query's totals, once; the call count unknown")
		require.Len(t, turn.Interactions, 2)
		assert.Equal(t, int64(132), turn.Interactions[0].Usage.InputTokens)
		assert.Equal(t, int64(40), turn.Interactions[1].Usage.InputTokens)

		// With an LLM span in the turn, an agent's totals are never counted, not even for
		// an interaction without LLM span of its own (review: boss's 100 repeated
		// worker's call).
		recs = []session.SpanRecord{
			sessiontest.Span("boss", "", session.ClassAgent, 0, 1000, sessiontest.Agent("boss"), sessiontest.UsageOf(100, 10), sessiontest.With(func(r *session.SpanRecord) { r.Usage.LLMCalls = 0 })),
			sessiontest.Span("worker", "boss", session.ClassAgent, 10, 900, sessiontest.Agent("worker")),
			sessiontest.Span("l", "worker", session.ClassLLM, 20, 800, sessiontest.UsageOf(100, 10)),
		}
		turn = assembly.Assemble(recs).Turn
		assert.Equal(t, session.Usage{InputTokens: 100, OutputTokens: 10, LLMCalls: 1}, turn.Usage)
		require.Len(t, turn.Interactions, 2)
		assert.Equal(t, session.Usage{}, turn.Interactions[0].Usage, "boss: its totals are worker's call")
		assert.Equal(t, session.Usage{InputTokens: 100, OutputTokens: 10, LLMCalls: 1}, turn.Interactions[1].Usage)
	})
	t.Run("a Claude sub-agent without content of its own takes its Agent tool's prompt and answer text", func(t *testing.T) {
		// The Claude Agent SDK (OpenInference) records a sub-agent's task and answer only on
		// the Agent tool that launched it: the prompt argument, and the text parts of the
		// result's content. The result's other fields repeat the prompt: never the output.
		launched := sessiontest.With(func(r *session.SpanRecord) {
			r.HandoffTo, r.HandoffMode, r.HandoffRule = "researcher", "return_to_caller", conventions.RuleHandoffTool
		})
		wrapper := `{"status":"completed","prompt":"Find X","agentId":"a1","content":[{"type":"text","text":"X is 42"}],"resolvedModel":"m"}`
		recs := []session.SpanRecord{
			sessiontest.Span("q", "", session.ClassAgent, 0, 1000, sessiontest.Agent("claude"), sessiontest.UserMsg("Research X")),
			sessiontest.Span("t", "q", session.ClassTool, 10, 500, sessiontest.Tool("Agent", "c1", `{"subagent_type":"researcher","prompt":"Find X"}`),
				sessiontest.Result(wrapper), launched),
			sessiontest.Span("sub", "t", session.ClassAgent, 11, 499, sessiontest.Agent("Agent")),
			sessiontest.Span("t2", "q", session.ClassTool, 510, 900, sessiontest.Tool("Agent", "c2", `{"subagent_type":"researcher","prompt":"Find Y"}`),
				sessiontest.Result(wrapper), launched),
			sessiontest.Span("sub2", "t2", session.ClassAgent, 511, 899, sessiontest.Agent("Agent"), sessiontest.Input("own task")),
			sessiontest.Span("l2", "sub2", session.ClassLLM, 520, 890, sessiontest.Output("own answer")),
		}
		turn := assembly.Assemble(recs).Turn
		require.Len(t, turn.Interactions, 3)
		sub := turn.Interactions[1]
		assert.Equal(t, "researcher", sub.AgentID)
		assert.Equal(t, "Find X", sub.Input, "the task handed over: the prompt argument")
		assert.Equal(t, "X is 42", sub.Output, "the answer: the result's text parts, not its wrapper")
		assert.Equal(t, "own task", turn.Interactions[2].Input, "a sub-agent's own input wins")
		assert.Equal(t, "own answer", turn.Interactions[2].Output, "a sub-agent's own output wins")
		assert.Equal(t, "Research X", turn.Interactions[0].Input, "the caller keeps its own")
	})
	t.Run("a sub-agent lifted out of the tool span that ran it has the tool's agent as parent", func(t *testing.T) {
		// OpenLLMetry openai-agents, agents as tools: the sub-agent span is a child of the
		// workflow, its time inside the caller's ask_<agent> tool span.
		recs := []session.SpanRecord{
			sessiontest.Span("wf", "", session.ClassTurn, 0, 1000, sessiontest.Named("Agent Workflow")),
			sessiontest.Span("c", "wf", session.ClassAgent, 1, 999, sessiontest.Agent("coordinator")),
			sessiontest.Span("x", "c", session.ClassTool, 100, 400, sessiontest.Tool("ask_research_specialist", "", `{"input":"NVDA price"}`)),
			sessiontest.Span("r", "wf", session.ClassAgent, 101, 399, sessiontest.Agent("research_specialist")),
			sessiontest.Span("o", "wf", session.ClassAgent, 500, 600, sessiontest.Agent("observer")),
		}
		turn := assembly.Assemble(recs).Turn
		require.Len(t, turn.Interactions, 3)
		assert.Equal(t, "", turn.Interactions[0].ParentAgentID)
		assert.Equal(t, "research_specialist", turn.Interactions[1].AgentID)
		assert.Equal(t, "coordinator", turn.Interactions[1].ParentAgentID, "the agent whose tool ran it")
		assert.Equal(t, "", turn.Interactions[2].ParentAgentID, "a sibling run by no tool has no parent")
	})
	t.Run("an LLM span over several model calls is no duplicate", func(t *testing.T) {
		recs := []session.SpanRecord{
			sessiontest.Span("a", "", session.ClassAgent, 0, 1000, sessiontest.Agent("writer")),
			sessiontest.Span("g", "a", session.ClassLLM, 10, 500, sessiontest.UsageOf(50, 50)),
			sessiontest.Span("s1", "g", session.ClassLLM, 20, 200, sessiontest.UsageOf(20, 20)),
			sessiontest.Span("s2", "g", session.ClassLLM, 210, 490, sessiontest.UsageOf(30, 30)),
		}
		turn := assembly.Assemble(recs).Turn
		llm, _ := sessiontest.Steps(turn, session.StepLLMCall)
		assert.Len(t, llm, 3, "only a span over one model call is taken for its duplicate")
	})
}

func TestAssembleTurnToolCallJoin(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	agentSpan := sessiontest.Span("a", "", session.ClassAgent, 0, 1000, sessiontest.Agent("A"))
	tests := []struct {
		name string
		recs []session.SpanRecord
		want []session.ToolCall
	}{
		{
			name: "joined by call id",
			recs: []session.SpanRecord{
				agentSpan,
				sessiontest.Span("l1", "a", session.ClassLLM, 10, 20, sessiontest.Requests(sessiontest.Req("c1", "lookup", `{"id": 7}`), sessiontest.Req("c2", "lookup", `{"id":8}`))),
				sessiontest.Span("x2", "a", session.ClassTool, 21, 25, sessiontest.Tool("lookup", "c2", `{"id":8,"extra":1}`), sessiontest.Result("eight")),
				sessiontest.Span("x1", "a", session.ClassTool, 22, 30, sessiontest.Tool("lookup", "c1", ""), sessiontest.Result("seven")),
			},
			want: []session.ToolCall{
				{ToolName: "lookup", CallID: "c2", Parameters: json.RawMessage(`{"id":8}`), ArgumentsSource: "llm_output",
					Result: "eight", Requested: true, Executed: true, Status: "ok", LatencyMs: f(4), SpanID: "x2", RequestSpanID: "l1"},
				{ToolName: "lookup", CallID: "c1", Parameters: json.RawMessage(`{"id":7}`), ArgumentsSource: "llm_output",
					Result: "seven", Requested: true, Executed: true, Status: "ok", LatencyMs: f(8), SpanID: "x1", RequestSpanID: "l1"},
			},
		},
		{
			name: "joined by name and order; the rejected call was not executed",
			recs: []session.SpanRecord{
				agentSpan,
				sessiontest.Span("l1", "a", session.ClassLLM, 10, 20, sessiontest.Requests(sessiontest.Req("", "refund", `{"order":"A1","bogus":true}`))),
				sessiontest.Span("l2", "a", session.ClassLLM, 30, 40, sessiontest.Requests(sessiontest.Req("", "refund", `{"order":"A1"}`))),
				sessiontest.Span("x", "a", session.ClassTool, 41, 45, sessiontest.Tool("refund", "", ""), sessiontest.Result("ok")),
			},
			want: []session.ToolCall{
				{ToolName: "refund", Parameters: json.RawMessage(`{"order":"A1","bogus":true}`), ArgumentsSource: "llm_output",
					Requested: true, Executed: false, Status: "not_executed", SpanID: "l1", RequestSpanID: "l1"},
				{ToolName: "refund", Parameters: json.RawMessage(`{"order":"A1"}`), ArgumentsSource: "llm_output",
					Result: "ok", Requested: true, Executed: true, Status: "ok", LatencyMs: f(4), SpanID: "x", RequestSpanID: "l2"},
			},
		},
		{
			name: "parallel calls of one tool pair in order",
			recs: []session.SpanRecord{
				agentSpan,
				sessiontest.Span("l1", "a", session.ClassLLM, 10, 20, sessiontest.Requests(sessiontest.Req("", "add", `{"a":1}`), sessiontest.Req("", "add", `{"a":2}`))),
				sessiontest.Span("x1", "a", session.ClassTool, 21, 22, sessiontest.Tool("add", "", `{"a":1}`)),
				sessiontest.Span("x2", "a", session.ClassTool, 21, 23, sessiontest.Tool("add", "", `{"a":2}`)),
			},
			want: []session.ToolCall{
				{ToolName: "add", Parameters: json.RawMessage(`{"a":1}`), ArgumentsSource: "llm_output",
					Requested: true, Executed: true, Status: "ok", LatencyMs: f(1), SpanID: "x1", RequestSpanID: "l1"},
				{ToolName: "add", Parameters: json.RawMessage(`{"a":2}`), ArgumentsSource: "llm_output",
					Requested: true, Executed: true, Status: "ok", LatencyMs: f(2), SpanID: "x2", RequestSpanID: "l1"},
			},
		},
		{
			name: "different call ids never pair by name",
			recs: []session.SpanRecord{
				agentSpan,
				sessiontest.Span("l1", "a", session.ClassLLM, 10, 20, sessiontest.Requests(sessiontest.Req("c1", "add", `{}`))),
				sessiontest.Span("x1", "a", session.ClassTool, 21, 22, sessiontest.Tool("add", "c9", `{}`)),
			},
			want: []session.ToolCall{
				{ToolName: "add", CallID: "c1", Parameters: json.RawMessage(`{}`), ArgumentsSource: "llm_output",
					Requested: true, Status: "not_executed", SpanID: "l1", RequestSpanID: "l1"},
				{ToolName: "add", CallID: "c9", Parameters: json.RawMessage(`{}`), ArgumentsSource: "gen_ai.tool.call.arguments",
					Executed: true, Status: "ok", LatencyMs: f(1), SpanID: "x1"},
			},
		},
		{
			name: "execution without request; non-JSON arguments; tool error",
			recs: []session.SpanRecord{
				agentSpan,
				sessiontest.Span("x1", "a", session.ClassTool, 21, 31, sessiontest.Tool("shell", "", "ls -la <dir>"), sessiontest.Failed("TimeoutError"), sessiontest.Result("timed out")),
			},
			want: []session.ToolCall{
				{ToolName: "shell", Parameters: json.RawMessage(`"ls -la <dir>"`), ArgumentsSource: "gen_ai.tool.call.arguments",
					Result: "timed out", Error: "TimeoutError", Executed: true, Status: "error", LatencyMs: f(10), SpanID: "x1"},
			},
		},
		{
			name: "tool error: the status description, not the error class",
			recs: []session.SpanRecord{
				agentSpan,
				sessiontest.Span("x1", "a", session.ClassTool, 21, 31, sessiontest.Tool("refund_order", "c1", `{}`), sessiontest.FailedWith("tool_error", "payment gateway timeout")),
			},
			want: []session.ToolCall{
				{ToolName: "refund_order", CallID: "c1", Parameters: json.RawMessage(`{}`), ArgumentsSource: "gen_ai.tool.call.arguments",
					Error: "payment gateway timeout", Executed: true, Status: "error", LatencyMs: f(10), SpanID: "x1"},
			},
		},
		{
			name: "no arguments captured; execution span name as tool name",
			recs: []session.SpanRecord{
				agentSpan,
				sessiontest.Span("x1", "a", session.ClassTool, 21, 31, sessiontest.Named("calculator")),
			},
			want: []session.ToolCall{
				{ToolName: "calculator", Executed: true, Status: "ok", LatencyMs: f(10), SpanID: "x1"},
			},
		},
		{
			name: "requested handoff call rejected (target never ran)",
			recs: []session.SpanRecord{
				agentSpan,
				sessiontest.Span("l1", "a", session.ClassLLM, 10, 20, sessiontest.Requests(sessiontest.Req("c1", "transfer_to_billing", `{}`))),
			},
			want: []session.ToolCall{
				{ToolName: "transfer_to_billing", CallID: "c1", Parameters: json.RawMessage(`{}`), ArgumentsSource: "llm_output",
					Requested: true, Status: "not_executed", SpanID: "l1", RequestSpanID: "l1", IsHandoff: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sessiontest.ToolCalls(assembly.Assemble(tt.recs).Turn)
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
		recs  []session.SpanRecord
		want  []hw
		calls func(t *testing.T, calls []session.ToolCall)
	}{
		{
			name: "(a) gen_ai.transfer on a tool span",
			recs: []session.SpanRecord{
				sessiontest.Span("w", "", session.ClassTurn, 0, 1000),
				sessiontest.Span("a", "w", session.ClassAgent, 10, 100, sessiontest.Agent("triage")),
				sessiontest.Span("x", "a", session.ClassTool, 50, 60, sessiontest.Tool("route", "c1", `{"message":"refund order 42"}`),
					sessiontest.With(func(r *session.SpanRecord) { r.HandoffTo, r.HandoffMode = "billing", "pass_control" })),
				sessiontest.Span("b", "w", session.ClassAgent, 110, 200, sessiontest.Agent("billing"), sessiontest.Input("please refund")),
			},
			want: []hw{{"triage", "billing", "pass_control", session.HandoffSourceTransfer, "refund order 42", true, false}},
		},
		{
			name: "(b) handoff span, de-duplicated with the tool call and the siblings",
			recs: []session.SpanRecord{
				sessiontest.Span("w", "", session.ClassTurn, 0, 1000),
				sessiontest.Span("a", "w", session.ClassAgent, 10, 100, sessiontest.Agent("coordinator")),
				sessiontest.Span("l", "a", session.ClassLLM, 20, 40, sessiontest.Requests(sessiontest.Req("c1", "transfer_to_math_specialist", `{}`))),
				sessiontest.Span("h", "a", session.ClassHandoff, 41, 42, sessiontest.HandoffFromTo("coordinator", "math_specialist"), sessiontest.Named("agent_handoff OpenAI Agent")),
				sessiontest.Span("b", "w", session.ClassAgent, 110, 200, sessiontest.Agent("math_specialist"), sessiontest.Input("what is 6*7")),
			},
			want: []hw{{"coordinator", "math_specialist", "pass_control", session.HandoffSourceHandoffSpan, "what is 6*7", true, false}},
			calls: func(t *testing.T, calls []session.ToolCall) {
				require.Len(t, calls, 1)
				assert.True(t, calls[0].Executed, "the handoff span executed the requested transfer")
				assert.Equal(t, "h", calls[0].SpanID)
				assert.Equal(t, "ok", calls[0].Status)
				assert.NotNil(t, calls[0].LatencyMs)
			},
		},
		{
			name: "(c) OpenInference handoff span with the target in its name",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 10, 100, sessiontest.Agent("Triage Agent")),
				sessiontest.Span("h", "a", session.ClassHandoff, 41, 42, sessiontest.Named("handoff to Spanish Agent")),
				sessiontest.Span("b", "", session.ClassAgent, 110, 200, sessiontest.Agent("Spanish Agent")),
			},
			want: []hw{{"Triage Agent", "Spanish Agent", "pass_control", session.HandoffSourceOpenInference, "", false, false}},
		},
		{
			name: "(c) graph.node.parent_id naming the previous agent",
			recs: []session.SpanRecord{
				sessiontest.Span("k", "", session.ClassTurn, 0, 1000, sessiontest.Named("crew.kickoff")),
				sessiontest.Span("a", "k", session.ClassAgent, 10, 100, sessiontest.Agent("Researcher"), sessiontest.With(func(r *session.SpanRecord) { r.GraphNodeID = "Researcher" })),
				sessiontest.Span("b", "k", session.ClassAgent, 90, 200, sessiontest.Agent("Writer"), sessiontest.With(func(r *session.SpanRecord) {
					r.GraphNodeID, r.GraphParentID = "Writer", "Researcher"
				})),
			},
			want: []hw{{"Researcher", "Writer", "pass_control", session.HandoffSourceOpenInference, "", false, false}},
		},
		{
			name: "(d) transfer_to_agent{agent_name} with a message payload",
			recs: []session.SpanRecord{
				sessiontest.Span("inv", "", session.ClassTurn, 0, 1000, sessiontest.Named("invocation")),
				sessiontest.Span("a", "inv", session.ClassAgent, 10, 500, sessiontest.Agent("root_agent")),
				sessiontest.Span("l", "a", session.ClassLLM, 20, 40, sessiontest.Requests(sessiontest.Req("c1", "transfer_to_agent", `{"agent_name":"weather_agent"}`))),
				sessiontest.Span("x", "a", session.ClassTool, 41, 42, sessiontest.Tool("transfer_to_agent", "c1", `{"agent_name":"weather_agent"}`)),
				sessiontest.Span("b", "a", session.ClassAgent, 50, 400, sessiontest.Agent("weather_agent"), sessiontest.Input("weather in Paris")),
			},
			want: []hw{{"root_agent", "weather_agent", "pass_control", session.HandoffSourceTool, "weather in Paris", true, true}},
		},
		{
			name: "(d) handoff_to_agent with message and context; target normalised",
			recs: []session.SpanRecord{
				sessiontest.Span("s", "", session.ClassTurn, 0, 1000, sessiontest.Named("invoke_swarm")),
				sessiontest.Span("a", "s", session.ClassAgent, 10, 100, sessiontest.Agent("researcher")),
				sessiontest.Span("x", "a", session.ClassTool, 41, 42, sessiontest.Tool("handoff_to_agent", "c1",
					`{"agent_name":"Code Reviewer","message":"review PR 12","context":{"repo":"x/y"}}`)),
				sessiontest.Span("b", "s", session.ClassAgent, 110, 200, sessiontest.Agent("code-reviewer")),
			},
			want: []hw{{"researcher", "code-reviewer", "pass_control", session.HandoffSourceTool, "review PR 12\n{\"repo\":\"x/y\"}", true, true}},
		},
		{
			name: "(d) CrewAI delegate to coworker returns to the caller",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 10, 500, sessiontest.Agent("Manager")),
				sessiontest.Span("x", "a", session.ClassTool, 41, 300, sessiontest.Tool("Delegate work to coworker", "",
					`{"task":"write intro","context":"about otel","coworker":"Writer"}`)),
				sessiontest.Span("b", "x", session.ClassAgent, 50, 250, sessiontest.Agent("Writer")),
			},
			want: []hw{{"Manager", "Writer", "return_to_caller", session.HandoffSourceTool, "write intro\nabout otel", true, true}},
		},
		{
			name: "(d) transfer_back_to_supervisor and a rejected transfer",
			recs: []session.SpanRecord{
				sessiontest.Span("g", "", session.ClassTurn, 0, 1000),
				sessiontest.Span("sup", "g", session.ClassAgent, 0, 100, sessiontest.Agent("supervisor")),
				sessiontest.Span("l0", "sup", session.ClassLLM, 1, 2, sessiontest.Requests(sessiontest.Req("c0", "transfer_to_nobody", `{}`))),
				sessiontest.Span("l1", "sup", session.ClassLLM, 5, 9, sessiontest.Requests(sessiontest.Req("c1", "transfer_to_math", `{}`))),
				sessiontest.Span("m", "g", session.ClassAgent, 110, 200, sessiontest.Agent("math"), sessiontest.Input("2+2")),
				sessiontest.Span("l2", "m", session.ClassLLM, 120, 130, sessiontest.Requests(sessiontest.Req("c2", "transfer_back_to_supervisor", `{}`))),
				sessiontest.Span("sup2", "g", session.ClassAgent, 210, 300, sessiontest.Agent("supervisor")),
			},
			want: []hw{
				{"supervisor", "math", "pass_control", session.HandoffSourceTool, "2+2", true, true},
				{"math", "supervisor", "pass_control", session.HandoffSourceTool, "", true, true},
			},
			calls: func(t *testing.T, calls []session.ToolCall) {
				require.Len(t, calls, 3)
				assert.False(t, calls[0].Executed, "nobody never ran: a rejected call, no handoff")
				assert.True(t, calls[1].Executed, "math ran after the transfer")
				assert.True(t, calls[2].Executed)
			},
		},
		{
			name: "(d) wins over (e): the Claude Agent tool names its sub-agent type, and the nested agent span agrees",
			recs: []session.SpanRecord{
				sessiontest.Span("q", "", session.ClassAgent, 0, 1000, sessiontest.Agent("ClaudeAgentSDK.query")),
				sessiontest.Span("x", "q", session.ClassTool, 10, 500, sessiontest.Tool("Agent", "", `{"subagent_type":"explorer","prompt":"list files"}`)),
				sessiontest.Span("s", "x", session.ClassAgent, 20, 400, sessiontest.Agent("Agent")),
			},
			want: []hw{{"ClaudeAgentSDK.query", "Agent", "return_to_caller", session.HandoffSourceTool, "list files", true, true}},
		},
		{
			name: "(e) sub-agent lifted out of the tool span named after it (OpenLLMetry)",
			recs: []session.SpanRecord{
				sessiontest.Span("wf", "", session.ClassTurn, 0, 1000, sessiontest.Named("Agent Workflow")),
				sessiontest.Span("c", "wf", session.ClassAgent, 1, 999, sessiontest.Agent("coordinator")),
				sessiontest.Span("x", "c", session.ClassTool, 100, 400, sessiontest.Tool("ask_research_specialist", "", `{"input":"NVDA price"}`)),
				sessiontest.Span("r", "wf", session.ClassAgent, 101, 399, sessiontest.Agent("research_specialist")),
				sessiontest.Span("y", "c", session.ClassTool, 500, 800, sessiontest.Tool("ask_math_specialist", "", `{"input":"2*3"}`)),
				sessiontest.Span("m", "wf", session.ClassAgent, 501, 799, sessiontest.Agent("math_specialist")),
			},
			want: []hw{
				{"coordinator", "research_specialist", "return_to_caller", session.HandoffSourceAgentAsTool, "NVDA price", true, true},
				{"coordinator", "math_specialist", "return_to_caller", session.HandoffSourceAgentAsTool, "2*3", true, true},
			},
		},
		{
			name: "(f) consecutive siblings of different agents; overlapping and same-agent siblings are not",
			recs: []session.SpanRecord{
				sessiontest.Span("s", "", session.ClassTurn, 0, 1000),
				sessiontest.Span("a", "s", session.ClassAgent, 10, 100, sessiontest.Agent("A")),
				sessiontest.Span("a2", "s", session.ClassAgent, 100, 150, sessiontest.Agent("A")),
				sessiontest.Span("b", "s", session.ClassAgent, 160, 300, sessiontest.Agent("B"), sessiontest.Input("ctx for B")),
				sessiontest.Span("c", "s", session.ClassAgent, 250, 400, sessiontest.Agent("C")),
			},
			want: []hw{{"A", "B", "pass_control", session.HandoffSourceSibling, "ctx for B", true, true}},
		},
		{
			name: "parallel transfer requests: the SDK ignores the second and marks the handoff span ERROR",
			recs: []session.SpanRecord{
				sessiontest.Span("w", "", session.ClassTurn, 0, 1000),
				sessiontest.Span("a", "w", session.ClassAgent, 10, 100, sessiontest.Agent("coordinator")),
				sessiontest.Span("l", "a", session.ClassLLM, 20, 40, sessiontest.Requests(sessiontest.Req("c1", "transfer_to_math_specialist", `{}`),
					sessiontest.Req("c2", "transfer_to_research_specialist", `{}`))),
				sessiontest.Span("h", "a", session.ClassHandoff, 41, 42, sessiontest.HandoffFromTo("coordinator", "math_specialist"), sessiontest.Failed("")),
				sessiontest.Span("b", "w", session.ClassAgent, 110, 200, sessiontest.Agent("math_specialist")),
			},
			want: []hw{{"coordinator", "math_specialist", "pass_control", session.HandoffSourceHandoffSpan, "", true, false}},
			calls: func(t *testing.T, calls []session.ToolCall) {
				require.Len(t, calls, 2)
				assert.Equal(t, []string{"ok", "not_executed"}, []string{calls[0].Status, calls[1].Status})
				assert.Equal(t, "h", calls[0].SpanID)
			},
		},
		{
			name: "handoff target recorded by the extractor on an agent-launching tool (Claude Agent tool)",
			recs: []session.SpanRecord{
				sessiontest.Span("q", "", session.ClassAgent, 0, 1000, sessiontest.Agent("ClaudeAgentSDK.query"),
					sessiontest.Requests(sessiontest.Req("t1", "Agent", `{"subagent_type":"research-specialist","prompt":"NY weather"}`))),
				sessiontest.Span("x", "q", session.ClassTool, 10, 500, sessiontest.Tool("Agent", "t1", ""), sessiontest.With(func(r *session.SpanRecord) {
					r.HandoffTo, r.HandoffMode, r.HandoffRule = "research-specialist", "return_to_caller", "handoff_tool"
				})),
				sessiontest.Span("s", "x", session.ClassAgent, 20, 400, sessiontest.Agent("Agent")),
			},
			// The sub-agent span carries only the launching tool's name: it is named after
			// the sub-agent the tool's arguments name.
			want: []hw{{"ClaudeAgentSDK.query", "research-specialist", "return_to_caller", session.HandoffSourceTool, "NY weather", true, true}},
			calls: func(t *testing.T, calls []session.ToolCall) {
				require.Len(t, calls, 1)
				assert.True(t, calls[0].Requested, "requested on the agent span: the interaction has no LLM span")
				assert.Equal(t, "q", calls[0].RequestSpanID)
			},
		},
		{
			name: "no self handoff",
			recs: []session.SpanRecord{
				sessiontest.Span("a", "", session.ClassAgent, 10, 100, sessiontest.Agent("A")),
				sessiontest.Span("x", "a", session.ClassTool, 20, 30, sessiontest.Tool("transfer_to_a", "", "")),
			},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := assembly.Assemble(tt.recs).Turn
			var got []hw
			steps, owners := sessiontest.Steps(turn, session.StepHandoff)
			for i, s := range steps {
				h := s.Handoff
				got = append(got, hw{h.FromAgent, h.ToAgent, h.Mode, h.SourceRule, h.Payload, h.PayloadCaptured, h.Inferred})
				assert.Equal(t, h.FromAgent, owners[i], "the handoff step is in the sending agent's interaction")
			}
			assert.Equal(t, tt.want, got)
			if tt.calls != nil {
				tt.calls(t, sessiontest.ToolCalls(turn))
			}
		})
	}
}

func TestAssembleTurnAgentsAndOutcome(t *testing.T) {
	yes, no := true, false
	cost := 0.25
	recs := []session.SpanRecord{
		sessiontest.Span("w", "", session.ClassTurn, 0, 1000, sessiontest.With(func(r *session.SpanRecord) { r.Outcome = &no })),
		sessiontest.Span("a", "w", session.ClassAgent, 10, 100, sessiontest.Agent("triage"), sessiontest.With(func(r *session.SpanRecord) {
			r.AgentDescription = "routes requests"
			r.AllowedTools = []string{"lookup", "transfer_to_billing"}
			r.HandoffTargets = []string{"Billing"}
		})),
		sessiontest.Span("l", "a", session.ClassLLM, 20, 30, sessiontest.ToolDefs("lookup", "transfer_to_refunds"), sessiontest.With(func(r *session.SpanRecord) { r.Cost = &cost })),
		sessiontest.Span("b", "w", session.ClassAgent, 110, 1100, sessiontest.Agent("billing"), sessiontest.With(func(r *session.SpanRecord) { r.Outcome = &yes })),
		sessiontest.Span("c", "w", session.ClassAgent, 120, 130, sessiontest.Agent("refunds")),
	}
	got := assembly.Assemble(recs)
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
	recs := sessiontest.TurnRecords(40)
	want := assembly.Assemble(recs)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(recs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := assembly.Assemble(shuffled)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("order changed the result")
		}
	}
}

// TestAssembledTurnKeepsNothingOfItsRecords pins what Closed.Assemble relies on to pool
// the record slice: the assembly copies what it keeps, so clearing and reusing the records
// afterwards leaves it unchanged.
func TestAssembledTurnKeepsNothingOfItsRecords(t *testing.T) {
	outcome := func(r *session.SpanRecord) {
		done, cost := true, 0.25
		r.Outcome, r.Cost = &done, &cost
	}
	build := func() []session.SpanRecord {
		recs := sessiontest.TurnRecords(60)
		outcome(&recs[0])
		return recs
	}
	want := assembly.Assemble(build())
	recs := build()
	got := assembly.Assemble(recs)
	clear(recs)
	for i := range recs {
		recs[i] = session.SpanRecord{SpanID: "reused", Name: "reused", UserMessage: "reused", Class: session.ClassLLM}
	}
	assert.Equal(t, want, got)
}
