// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func asNode(node string) asOpt { return func(r *SpanRecord) { r.LangGraphNode, r.Name = node, node } }

func asLGAgent(name, rule string) asOpt {
	return func(r *SpanRecord) { r.AgentName, r.AgentRule = name, rule }
}

func asSpanNamed(name string) asOpt {
	return func(r *SpanRecord) { r.Name, r.AgentName, r.AgentRule = name, name, agentRuleSpanName }
}

// asShape summarises a turn: interaction agents (with their span), handoffs and tool calls.
type asShape struct {
	agents   []string // agent@span
	handoffs []string // from>to:rule:mode
	tools    []string // agent/tool:status
}

func asShapeOf(t Turn) asShape {
	var s asShape
	for _, in := range t.Interactions {
		s.agents = append(s.agents, in.AgentID+"@"+in.SpanID)
		for _, st := range in.Steps {
			switch st.Kind {
			case StepHandoff:
				h := st.Handoff
				s.handoffs = append(s.handoffs, h.FromAgent+">"+h.ToAgent+":"+h.SourceRule+":"+h.Mode)
			case StepToolCall:
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
		recs []SpanRecord
		want asShape
	}{
		{
			name: "node span, subgraph span and model node of one agent",
			recs: []SpanRecord{
				asSpan("r", "", ClassTurn, 0, 100),
				asSpan("n", "r", ClassAgent, 1, 90, asAgent("triage")),
				asSpan("g", "n", ClassAgent, 2, 89, asAgent("triage")),
				asSpan("m", "g", ClassAgent, 3, 40, asAgent("triage")),
				asSpan("l", "m", ClassLLM, 4, 30, asRequests(asReq("c1", "lookup", `{}`))),
				asSpan("o", "g", ClassOther, 41, 60),
				asSpan("t", "o", ClassTool, 42, 50, asTool("lookup", "c1", `{}`)),
			},
			want: asShape{agents: []string{"triage@n"}, tools: []string{"triage/lookup:ok"}},
		},
		{
			name: "a tool span between: a real nested run",
			recs: []SpanRecord{
				asSpan("r", "", ClassTurn, 0, 100),
				asSpan("n", "r", ClassAgent, 1, 90, asAgent("triage")),
				asSpan("t", "n", ClassTool, 10, 80, asTool("ask_triage", "", `{}`)),
				asSpan("m", "t", ClassAgent, 11, 70, asAgent("triage")),
			},
			want: asShape{agents: []string{"triage@n", "triage@m"}, tools: []string{"triage/ask_triage:ok"}},
		},
		{
			name: "another agent nested",
			recs: []SpanRecord{
				asSpan("r", "", ClassTurn, 0, 100),
				asSpan("n", "r", ClassAgent, 1, 90, asAgent("triage")),
				asSpan("m", "n", ClassAgent, 2, 80, asAgent("refund")),
			},
			want: asShape{agents: []string{"triage@n", "refund@m"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AssembleTurn(tt.recs)
			asCheckTurn(t, tt.recs, got)
			assert.Equal(t, tt.want, asShapeOf(got.Turn))
		})
	}
}

// TestAssembleLangGraphPromotion: LangGraph node spans that the trace names as handoff
// targets, or whose subgraph holds their agent, become agents.
func TestAssembleLangGraphPromotion(t *testing.T) {
	supervisor := func(offered ...string) []SpanRecord {
		return []SpanRecord{
			asSpan("root", "", ClassTurn, 0, 1000, asNamed("LangGraph")),
			asSpan("sup", "root", ClassAgent, 10, 200, asNode("supervisor"), asLGAgent("supervisor", "metadata.langgraph_node")),
			asSpan("sl", "sup", ClassLLM, 20, 100, asToolDefs(offered...),
				asRequests(asReq("c1", "transfer_to_math_expert", `{}`))),
			asSpan("st", "sup", ClassTool, 110, 120, asTool("transfer_to_math_expert", "c1", `{}`)),
		}
	}
	worker := []SpanRecord{
		asSpan("mx", "root", ClassOther, 300, 600, asNode("math_expert")),
		asSpan("mxg", "mx", ClassOther, 301, 599, asNode("math_expert")),
		asSpan("ml", "mxg", ClassLLM, 310, 400, asRequests(asReq("c2", "multiply", `{"a":2,"b":3}`))),
		asSpan("mt", "mxg", ClassTool, 410, 420, asTool("multiply", "c2", `{"a":2,"b":3}`)),
		asSpan("tools", "mxg", ClassOther, 405, 430, asNode("tools")),
	}
	tests := []struct {
		name  string
		recs  []SpanRecord
		want  asShape
		rules []string
	}{
		{
			name: "handoff target",
			recs: append(supervisor("transfer_to_math_expert"), worker...),
			want: asShape{
				agents:   []string{"supervisor@sup", "math_expert@mx"},
				handoffs: []string{"supervisor>math_expert:handoff_tool:pass_control"},
				tools:    []string{"supervisor/transfer_to_math_expert:ok", "math_expert/multiply:ok"},
			},
			rules: []string{"metadata.langgraph_node", AgentRuleLangGraphHandoffTarget},
		},
		{
			name: "target named only by an offered tool definition",
			recs: append(supervisor("transfer_to_math_expert")[:2], append([]SpanRecord{
				asSpan("sl", "sup", ClassLLM, 20, 100, asToolDefs("transfer_to_math_expert"))}, worker...)...),
			want: asShape{
				agents: []string{"supervisor@sup", "math_expert@mx"},
				tools:  []string{"math_expert/multiply:ok"},
				// No handoff call: the sibling order is the only transfer signal.
				handoffs: []string{"supervisor>math_expert:sibling_agents:pass_control"},
			},
			rules: []string{"metadata.langgraph_node", AgentRuleLangGraphHandoffTarget},
		},
		{
			name: "subgraph of a ReAct model node",
			recs: append(supervisor("lookup")[:2], append([]SpanRecord{asSpan("sl", "sup", ClassLLM, 20, 100, asToolDefs("lookup")),
				asSpan("mm", "mxg", ClassAgent, 305, 402, asNamed("agent"), asLGAgent("math_expert", "metadata.langgraph_checkpoint_ns"))},
				worker...)...),
			want: asShape{
				agents:   []string{"supervisor@sup", "math_expert@mx"},
				tools:    []string{"math_expert/multiply:ok"},
				handoffs: []string{"supervisor>math_expert:sibling_agents:pass_control"},
			},
			rules: []string{"metadata.langgraph_node", AgentRuleLangGraphSubgraph},
		},
		{
			name:  "not an agent: the node's LLM and tools stay outside every agent",
			recs:  append(supervisor("lookup")[:2], worker...),
			want:  asShape{agents: []string{"supervisor@sup"}},
			rules: []string{"metadata.langgraph_node"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AssembleTurn(tt.recs)
			asCheckTurn(t, tt.recs, got)
			assert.Equal(t, tt.want, asShapeOf(got.Turn))
			var rules []string
			for _, in := range got.Turn.Interactions {
				rules = append(rules, in.AgentRule)
			}
			assert.Equal(t, tt.rules, rules)
			for _, r := range tt.recs {
				if r.SpanID == "mx" {
					assert.Equal(t, ClassOther, r.Class, "the records are not modified")
				}
			}
		})
	}
}

// TestAssembleWorkflowWrapper: a top-level agent span named only by its span name whose
// work is all done by nested agents is the turn root, not an interaction.
func TestAssembleWorkflowWrapper(t *testing.T) {
	agents := func(parent string) []SpanRecord {
		return []SpanRecord{
			asSpan("task", parent, ClassOther, 1, 99, asNamed("Acme support")),
			asSpan("a1", "task", ClassAgent, 2, 50, asAgent("triage")),
			asSpan("l1", "a1", ClassLLM, 3, 20),
			asSpan("h1", "a1", ClassHandoff, 21, 22, asHandoff("triage", "refund"), asNamed("handoff to refund")),
			asSpan("a2", "task", ClassAgent, 51, 98, asAgent("refund")),
			asSpan("l2", "a2", ClassLLM, 52, 90),
		}
	}
	wrapper := func(opts ...asOpt) SpanRecord {
		return asSpan("w", "", ClassAgent, 0, 100, append([]asOpt{asSpanNamed("Acme support"), asUserMsg("refund please"), asOutput("done")}, opts...)...)
	}
	tests := []struct {
		name     string
		recs     []SpanRecord
		rootRule string
		agents   []string
	}{
		{"OpenAI Agents trace span", append([]SpanRecord{wrapper()}, agents("w")...), RootRuleWorkflowAgent, []string{"triage@a1", "refund@a2"}},
		{"unnamed agent record", append([]SpanRecord{wrapper(asWith(func(r *SpanRecord) { r.AgentName, r.AgentRule = "", "" }))}, agents("w")...),
			RootRuleWorkflowAgent, []string{"triage@a1", "refund@a2"}},
		{"its own LLM call makes it an agent", append([]SpanRecord{wrapper(), asSpan("wl", "w", ClassLLM, 0, 1)}, agents("w")...),
			RootRuleGenAIRoot, []string{"Acme support@w", "triage@a1", "refund@a2"}},
		{"its own tool call makes it an agent", append([]SpanRecord{wrapper(), asSpan("wt", "w", ClassTool, 0, 1, asTool("search", "", ""))}, agents("w")...),
			RootRuleGenAIRoot, []string{"Acme support@w", "triage@a1", "refund@a2"}},
		{"its own requested calls make it an agent", append([]SpanRecord{wrapper(asRequests(asReq("c", "Agent", `{}`)))}, agents("w")...),
			RootRuleGenAIRoot, []string{"Acme support@w", "triage@a1", "refund@a2"}},
		{"named by an attribute: a real agent that delegates", append([]SpanRecord{asSpan("w", "", ClassAgent, 0, 100, asAgent("coordinator"))}, agents("w")...),
			RootRuleGenAIRoot, []string{"coordinator@w", "triage@a1", "refund@a2"}},
		{"no nested agent", []SpanRecord{wrapper()}, RootRuleGenAIRoot, []string{"Acme support@w"}},
		{"a nested agent of the wrapper's name stays an interaction", []SpanRecord{wrapper(),
			asSpan("a1", "w", ClassAgent, 2, 50, asAgent("Acme support")), asSpan("l1", "a1", ClassLLM, 3, 20)},
			RootRuleWorkflowAgent, []string{"Acme support@a1"}},
		{"not top-level", append([]SpanRecord{asSpan("top", "", ClassAgent, 0, 200, asAgent("boss")), asSpan("bl", "top", ClassLLM, 0, 1),
			wrapper(asWith(func(r *SpanRecord) { r.ParentSpanID = "top" }))}, agents("w")...),
			RootRuleGenAIRoot, []string{"boss@top", "Acme support@w", "triage@a1", "refund@a2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AssembleTurn(tt.recs)
			asCheckTurn(t, tt.recs, got)
			assert.Equal(t, tt.rootRule, got.Turn.RootRule)
			assert.Equal(t, tt.agents, asShapeOf(got.Turn).agents)
			if tt.rootRule == RootRuleWorkflowAgent {
				assert.Equal(t, "w", got.Turn.RootSpanID)
				assert.Equal(t, "refund please", got.Turn.UserMessage)
				assert.Equal(t, "done", got.Turn.FinalResponse)
				for _, in := range got.Turn.Interactions {
					assert.Empty(t, in.ParentAgentID, "the wrapper is no parent agent")
				}
				if hs := asHandoffs(got.Turn); len(tt.agents) > 1 {
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
	recs := []SpanRecord{
		asSpan("a", "", ClassAgent, 0, 100, asAgent("triage")),
		asSpan("l", "a", ClassLLM, 1, 10, asRequests(asReq("c1", "transfer_to_refund", `{"request":"refund 12345"}`))),
		asSpan("t", "a", ClassTool, 11, 90, asTool("transfer_to_refund", "c1", `{"request":"refund 12345"}`),
			asWith(func(r *SpanRecord) {
				r.HandoffTo, r.HandoffMode, r.HandoffRule = "refund", "pass_control", "handoff_tool"
			})),
		asSpan("b", "t", ClassAgent, 12, 89, asAgent("refund")),
	}
	got := AssembleTurn(recs)
	asCheckTurn(t, recs, got)
	hs := asHandoffs(got.Turn)
	require.Len(t, hs, 1)
	assert.Equal(t, Handoff{FromAgent: "triage", ToAgent: "refund", Mode: "return_to_caller", Payload: "refund 12345",
		PayloadCaptured: true, SourceRule: HandoffSourceTool, Inferred: true}, hs[0])

	// Without the nested agent the tool name's default stands.
	flat := append(recs[:3:3], asSpan("b", "", ClassAgent, 95, 120, asAgent("refund")))
	got = AssembleTurn(flat)
	hs = asHandoffs(got.Turn)
	require.Len(t, hs, 1)
	assert.Equal(t, "pass_control", hs[0].Mode)
}

// TestAssembleOpenInferenceHandoffDedup: the OpenInference handoff span, the receiver's
// graph.node.parent_id and the requested transfer call are one handoff.
func TestAssembleOpenInferenceHandoffDedup(t *testing.T) {
	recs := []SpanRecord{
		asSpan("w", "", ClassAgent, 0, 100, asSpanNamed("Acme support")),
		asSpan("a1", "w", ClassAgent, 1, 50, asAgent("triage_agent"), asWith(func(r *SpanRecord) { r.GraphNodeID = "triage_agent" })),
		asSpan("l1", "a1", ClassLLM, 2, 10, asRequests(asReq("c1", "transfer_to_refund_agent", `{}`))),
		asSpan("h", "a1", ClassHandoff, 11, 12, asNamed("handoff to refund_agent"), asHandoff("triage_agent", "refund_agent"),
			asWith(func(r *SpanRecord) { r.HandoffRule = "openinference.handoff_span" })),
		asSpan("a2", "w", ClassAgent, 51, 99, asAgent("refund_agent"),
			asWith(func(r *SpanRecord) { r.GraphNodeID, r.GraphParentID = "refund_agent", "triage_agent" })),
	}
	got := AssembleTurn(recs)
	asCheckTurn(t, recs, got)
	assert.Equal(t, asShape{
		agents:   []string{"triage_agent@a1", "refund_agent@a2"},
		handoffs: []string{"triage_agent>refund_agent:openinference.handoff_span:pass_control"},
		tools:    []string{"triage_agent/transfer_to_refund_agent:ok"},
	}, asShapeOf(got.Turn))
}
