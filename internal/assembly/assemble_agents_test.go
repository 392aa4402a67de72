// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/assembly"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

func lgNode(node string) sessiontest.Opt {
	return func(r *session.SpanRecord) { r.LangGraphNode, r.Name = node, node }
}

func lgAgent(name, rule string) sessiontest.Opt {
	return func(r *session.SpanRecord) { r.AgentName, r.AgentRule = name, rule }
}

func spanNamed(name string) sessiontest.Opt {
	return func(r *session.SpanRecord) { r.Name, r.AgentName, r.AgentRule = name, name, session.AgentRuleSpanName }
}

// shape summarises a turn: interaction agents (with their span), handoffs and tool calls.
type shape struct {
	agents   []string // agent@span
	handoffs []string // from>to:rule:mode
	tools    []string // agent/tool:status
}

func shapeOf(t session.Turn) shape {
	var s shape
	for _, in := range t.Interactions {
		s.agents = append(s.agents, in.AgentID+"@"+in.SpanID)
		for _, st := range in.Steps {
			switch st.Kind {
			case session.StepHandoff:
				h := st.Handoff
				s.handoffs = append(s.handoffs, h.FromAgent+">"+h.ToAgent+":"+h.SourceRule+":"+h.Mode)
			case session.StepToolCall:
				s.tools = append(s.tools, in.AgentID+"/"+st.ToolCall.ToolName+":"+st.ToolCall.Status)
			}
		}
	}
	return s
}

// TestAssembleFoldsNestedSameAgent: an agent span directly inside a span of the same agent
// (no tool span between) is part of that interaction.
func TestAssembleFoldsNestedSameAgent(t *testing.T) {
	tests := []struct {
		name string
		recs []session.SpanRecord
		want shape
	}{
		{
			name: "node span, subgraph span and model node of one agent",
			recs: []session.SpanRecord{
				sessiontest.Span("r", "", session.ClassTurn, 0, 100),
				sessiontest.Span("n", "r", session.ClassAgent, 1, 90, sessiontest.Agent("triage")),
				sessiontest.Span("g", "n", session.ClassAgent, 2, 89, sessiontest.Agent("triage")),
				sessiontest.Span("m", "g", session.ClassAgent, 3, 40, sessiontest.Agent("triage")),
				sessiontest.Span("l", "m", session.ClassLLM, 4, 30, sessiontest.Requests(sessiontest.Req("c1", "lookup", `{}`))),
				sessiontest.Span("o", "g", session.ClassOther, 41, 60),
				sessiontest.Span("t", "o", session.ClassTool, 42, 50, sessiontest.Tool("lookup", "c1", `{}`)),
			},
			want: shape{agents: []string{"triage@n"}, tools: []string{"triage/lookup:ok"}},
		},
		{
			name: "a tool span between: a real nested run",
			recs: []session.SpanRecord{
				sessiontest.Span("r", "", session.ClassTurn, 0, 100),
				sessiontest.Span("n", "r", session.ClassAgent, 1, 90, sessiontest.Agent("triage")),
				sessiontest.Span("t", "n", session.ClassTool, 10, 80, sessiontest.Tool("ask_triage", "", `{}`)),
				sessiontest.Span("m", "t", session.ClassAgent, 11, 70, sessiontest.Agent("triage")),
			},
			want: shape{agents: []string{"triage@n", "triage@m"}, tools: []string{"triage/ask_triage:ok"}},
		},
		{
			name: "another agent nested",
			recs: []session.SpanRecord{
				sessiontest.Span("r", "", session.ClassTurn, 0, 100),
				sessiontest.Span("n", "r", session.ClassAgent, 1, 90, sessiontest.Agent("triage")),
				sessiontest.Span("m", "n", session.ClassAgent, 2, 80, sessiontest.Agent("refund")),
			},
			want: shape{agents: []string{"triage@n", "refund@m"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assembly.Assemble(tt.recs)
			assembly.CheckTurn(t, tt.recs, got)
			assert.Equal(t, tt.want, shapeOf(got.Turn))
		})
	}
}

// TestAssembleLangGraphPromotion: LangGraph node spans that the trace names as handoff
// targets, or whose subgraph holds their agent, become agents.
func TestAssembleLangGraphPromotion(t *testing.T) {
	supervisor := func(offered ...string) []session.SpanRecord {
		return []session.SpanRecord{
			sessiontest.Span("root", "", session.ClassTurn, 0, 1000, sessiontest.Named("LangGraph")),
			sessiontest.Span("sup", "root", session.ClassAgent, 10, 200, lgNode("supervisor"), lgAgent("supervisor", "metadata.langgraph_node")),
			sessiontest.Span("sl", "sup", session.ClassLLM, 20, 100, sessiontest.ToolDefs(offered...),
				sessiontest.Requests(sessiontest.Req("c1", "transfer_to_math_expert", `{}`))),
			sessiontest.Span("st", "sup", session.ClassTool, 110, 120, sessiontest.Tool("transfer_to_math_expert", "c1", `{}`)),
		}
	}
	worker := []session.SpanRecord{
		sessiontest.Span("mx", "root", session.ClassOther, 300, 600, lgNode("math_expert")),
		sessiontest.Span("mxg", "mx", session.ClassOther, 301, 599, lgNode("math_expert")),
		sessiontest.Span("ml", "mxg", session.ClassLLM, 310, 400, sessiontest.Requests(sessiontest.Req("c2", "multiply", `{"a":2,"b":3}`))),
		sessiontest.Span("mt", "mxg", session.ClassTool, 410, 420, sessiontest.Tool("multiply", "c2", `{"a":2,"b":3}`)),
		sessiontest.Span("tools", "mxg", session.ClassOther, 405, 430, lgNode("tools")),
	}
	tests := []struct {
		name  string
		recs  []session.SpanRecord
		want  shape
		rules []string
	}{
		{
			name: "handoff target",
			recs: append(supervisor("transfer_to_math_expert"), worker...),
			want: shape{
				agents:   []string{"supervisor@sup", "math_expert@mx"},
				handoffs: []string{"supervisor>math_expert:handoff_tool:pass_control"},
				tools:    []string{"supervisor/transfer_to_math_expert:ok", "math_expert/multiply:ok"},
			},
			rules: []string{"metadata.langgraph_node", session.AgentRuleLangGraphHandoffTarget},
		},
		{
			name: "target named only by an offered tool definition",
			recs: append(supervisor("transfer_to_math_expert")[:2], append([]session.SpanRecord{
				sessiontest.Span("sl", "sup", session.ClassLLM, 20, 100, sessiontest.ToolDefs("transfer_to_math_expert"))}, worker...)...),
			want: shape{
				agents: []string{"supervisor@sup", "math_expert@mx"},
				tools:  []string{"math_expert/multiply:ok"},
				// No handoff call: the sibling order is the only transfer signal.
				handoffs: []string{"supervisor>math_expert:sibling_agents:pass_control"},
			},
			rules: []string{"metadata.langgraph_node", session.AgentRuleLangGraphHandoffTarget},
		},
		{
			name: "subgraph of a ReAct model node",
			recs: append(supervisor("lookup")[:2], append([]session.SpanRecord{sessiontest.Span("sl", "sup", session.ClassLLM, 20, 100, sessiontest.ToolDefs("lookup")),
				sessiontest.Span("mm", "mxg", session.ClassAgent, 305, 402, sessiontest.Named("agent"), lgAgent("math_expert", "metadata.langgraph_checkpoint_ns"))},
				worker...)...),
			want: shape{
				agents:   []string{"supervisor@sup", "math_expert@mx"},
				tools:    []string{"math_expert/multiply:ok"},
				handoffs: []string{"supervisor>math_expert:sibling_agents:pass_control"},
			},
			rules: []string{"metadata.langgraph_node", session.AgentRuleLangGraphSubgraph},
		},
		{
			name:  "not an agent: the node's LLM and tools stay outside every agent",
			recs:  append(supervisor("lookup")[:2], worker...),
			want:  shape{agents: []string{"supervisor@sup"}},
			rules: []string{"metadata.langgraph_node"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assembly.Assemble(tt.recs)
			assembly.CheckTurn(t, tt.recs, got)
			assert.Equal(t, tt.want, shapeOf(got.Turn))
			var rules []string
			for _, in := range got.Turn.Interactions {
				rules = append(rules, in.AgentRule)
			}
			assert.Equal(t, tt.rules, rules)
			for _, r := range tt.recs {
				if r.SpanID == "mx" {
					assert.Equal(t, session.ClassOther, r.Class, "the records are not modified")
				}
			}
		})
	}
}

// TestAssembleWorkflowWrapper: a top-level agent span named only by its span name whose
// work is all done by nested agents is the turn root, not an interaction.
func TestAssembleWorkflowWrapper(t *testing.T) {
	agents := func(parent string) []session.SpanRecord {
		return []session.SpanRecord{
			sessiontest.Span("task", parent, session.ClassOther, 1, 99, sessiontest.Named("Acme support")),
			sessiontest.Span("a1", "task", session.ClassAgent, 2, 50, sessiontest.Agent("triage")),
			sessiontest.Span("l1", "a1", session.ClassLLM, 3, 20),
			sessiontest.Span("h1", "a1", session.ClassHandoff, 21, 22, sessiontest.HandoffFromTo("triage", "refund"), sessiontest.Named("handoff to refund")),
			sessiontest.Span("a2", "task", session.ClassAgent, 51, 98, sessiontest.Agent("refund")),
			sessiontest.Span("l2", "a2", session.ClassLLM, 52, 90),
		}
	}
	wrapper := func(opts ...sessiontest.Opt) session.SpanRecord {
		return sessiontest.Span("w", "", session.ClassAgent, 0, 100, append([]sessiontest.Opt{spanNamed("Acme support"), sessiontest.UserMsg("refund please"), sessiontest.Output("done")}, opts...)...)
	}
	tests := []struct {
		name     string
		recs     []session.SpanRecord
		rootRule string
		agents   []string
	}{
		{"OpenAI Agents trace span", append([]session.SpanRecord{wrapper()}, agents("w")...), session.RootRuleWorkflowAgent, []string{"triage@a1", "refund@a2"}},
		{"unnamed agent record", append([]session.SpanRecord{wrapper(sessiontest.With(func(r *session.SpanRecord) { r.AgentName, r.AgentRule = "", "" }))}, agents("w")...),
			session.RootRuleWorkflowAgent, []string{"triage@a1", "refund@a2"}},
		{"its own LLM call makes it an agent", append([]session.SpanRecord{wrapper(), sessiontest.Span("wl", "w", session.ClassLLM, 0, 1)}, agents("w")...),
			session.RootRuleGenAIRoot, []string{"Acme support@w", "triage@a1", "refund@a2"}},
		{"its own tool call makes it an agent", append([]session.SpanRecord{wrapper(), sessiontest.Span("wt", "w", session.ClassTool, 0, 1, sessiontest.Tool("search", "", ""))}, agents("w")...),
			session.RootRuleGenAIRoot, []string{"Acme support@w", "triage@a1", "refund@a2"}},
		{"its own requested calls make it an agent", append([]session.SpanRecord{wrapper(sessiontest.Requests(sessiontest.Req("c", "Agent", `{}`)))}, agents("w")...),
			session.RootRuleGenAIRoot, []string{"Acme support@w", "triage@a1", "refund@a2"}},
		{"named by an attribute: a real agent that delegates", append([]session.SpanRecord{sessiontest.Span("w", "", session.ClassAgent, 0, 100, sessiontest.Agent("coordinator"))}, agents("w")...),
			session.RootRuleGenAIRoot, []string{"coordinator@w", "triage@a1", "refund@a2"}},
		{"no nested agent", []session.SpanRecord{wrapper()}, session.RootRuleGenAIRoot, []string{"Acme support@w"}},
		{"a nested agent of the wrapper's name stays an interaction", []session.SpanRecord{wrapper(),
			sessiontest.Span("a1", "w", session.ClassAgent, 2, 50, sessiontest.Agent("Acme support")), sessiontest.Span("l1", "a1", session.ClassLLM, 3, 20)},
			session.RootRuleWorkflowAgent, []string{"Acme support@a1"}},
		{"not top-level", append([]session.SpanRecord{sessiontest.Span("top", "", session.ClassAgent, 0, 200, sessiontest.Agent("boss")), sessiontest.Span("bl", "top", session.ClassLLM, 0, 1),
			wrapper(sessiontest.With(func(r *session.SpanRecord) { r.ParentSpanID = "top" }))}, agents("w")...),
			session.RootRuleGenAIRoot, []string{"boss@top", "Acme support@w", "triage@a1", "refund@a2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assembly.Assemble(tt.recs)
			assembly.CheckTurn(t, tt.recs, got)
			assert.Equal(t, tt.rootRule, got.Turn.RootRule)
			assert.Equal(t, tt.agents, shapeOf(got.Turn).agents)
			if tt.rootRule == session.RootRuleWorkflowAgent {
				assert.Equal(t, "w", got.Turn.RootSpanID)
				assert.Equal(t, "refund please", got.Turn.UserMessage)
				assert.Equal(t, "done", got.Turn.FinalResponse)
				for _, in := range got.Turn.Interactions {
					assert.Empty(t, in.ParentAgentID, "the wrapper is no parent agent")
				}
				if hs := sessiontest.Handoffs(got.Turn); len(tt.agents) > 1 {
					require.Len(t, hs, 1)
					assert.Equal(t, "refund", hs[0].ToAgent)
				}
				for i, d := range got.Agents {
					assert.Equal(t, got.Turn.Interactions[i].AgentID, d.ID, "agents are those of the interactions")
				}
			}
		})
	}
}

// TestAssembleHandoffToolModeUnderNesting: a handoff tool whose target runs nested under
// it returns to the caller (the Vercel AI SDK agent-as-tool handoff), although the tool
// name alone says pass_control.
func TestAssembleHandoffToolModeUnderNesting(t *testing.T) {
	recs := []session.SpanRecord{
		sessiontest.Span("a", "", session.ClassAgent, 0, 100, sessiontest.Agent("triage")),
		sessiontest.Span("l", "a", session.ClassLLM, 1, 10, sessiontest.Requests(sessiontest.Req("c1", "transfer_to_refund", `{"request":"refund 12345"}`))),
		sessiontest.Span("t", "a", session.ClassTool, 11, 90, sessiontest.Tool("transfer_to_refund", "c1", `{"request":"refund 12345"}`),
			sessiontest.With(func(r *session.SpanRecord) {
				r.HandoffTo, r.HandoffMode, r.HandoffRule = "refund", "pass_control", "handoff_tool"
			})),
		sessiontest.Span("b", "t", session.ClassAgent, 12, 89, sessiontest.Agent("refund")),
	}
	got := assembly.Assemble(recs)
	assembly.CheckTurn(t, recs, got)
	hs := sessiontest.Handoffs(got.Turn)
	require.Len(t, hs, 1)
	assert.Equal(t, session.Handoff{FromAgent: "triage", ToAgent: "refund", Mode: "return_to_caller", Payload: "refund 12345",
		PayloadCaptured: true, SourceRule: session.HandoffSourceTool, Inferred: true}, hs[0])

	// Without the nested agent the tool name's default stands.
	flat := append(recs[:3:3], sessiontest.Span("b", "", session.ClassAgent, 95, 120, sessiontest.Agent("refund")))
	got = assembly.Assemble(flat)
	hs = sessiontest.Handoffs(got.Turn)
	require.Len(t, hs, 1)
	assert.Equal(t, "pass_control", hs[0].Mode)
}

// TestAssembleOpenInferenceHandoffDedup: the OpenInference handoff span, the receiver's
// graph.node.parent_id and the requested transfer call are one handoff.
func TestAssembleOpenInferenceHandoffDedup(t *testing.T) {
	recs := []session.SpanRecord{
		sessiontest.Span("w", "", session.ClassAgent, 0, 100, spanNamed("Acme support")),
		sessiontest.Span("a1", "w", session.ClassAgent, 1, 50, sessiontest.Agent("triage_agent"), sessiontest.With(func(r *session.SpanRecord) { r.GraphNodeID = "triage_agent" })),
		sessiontest.Span("l1", "a1", session.ClassLLM, 2, 10, sessiontest.Requests(sessiontest.Req("c1", "transfer_to_refund_agent", `{}`))),
		sessiontest.Span("h", "a1", session.ClassHandoff, 11, 12, sessiontest.Named("handoff to refund_agent"), sessiontest.HandoffFromTo("triage_agent", "refund_agent"),
			sessiontest.With(func(r *session.SpanRecord) { r.HandoffRule = "openinference.handoff_span" })),
		sessiontest.Span("a2", "w", session.ClassAgent, 51, 99, sessiontest.Agent("refund_agent"),
			sessiontest.With(func(r *session.SpanRecord) { r.GraphNodeID, r.GraphParentID = "refund_agent", "triage_agent" })),
	}
	got := assembly.Assemble(recs)
	assembly.CheckTurn(t, recs, got)
	assert.Equal(t, shape{
		agents:   []string{"triage_agent@a1", "refund_agent@a2"},
		handoffs: []string{"triage_agent>refund_agent:openinference.handoff_span:pass_control"},
		tools:    []string{"triage_agent/transfer_to_refund_agent:ok"},
	}, shapeOf(got.Turn))
}
