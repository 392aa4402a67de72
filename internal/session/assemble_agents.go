// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session // import "github.com/agenteval/agenteval-collector/internal/session"

// Agent recognition that needs the whole trace, not one span (docs/decisions/sessions.md
// §1.7): LangGraph nodes named as handoff targets become agents, a top-level agent span
// that is only a workflow wrapper becomes the turn root, and an agent span nested
// directly in a span of the same agent is part of it. The rules work on copies of the
// records; the records themselves are never modified.

// AgentInteraction.AgentRule of a LangGraph node promoted to an agent by the trace (see
// promoteLangGraphNodes).
const (
	// AgentRuleLangGraphHandoffTarget: a LangGraph node span named as the target of a
	// handoff tool (transfer_to_<node>, handoff_to_<node>...) seen in the trace.
	AgentRuleLangGraphHandoffTarget = "metadata.langgraph_node;handoff_target"
	// AgentRuleLangGraphSubgraph: a LangGraph node span whose subgraph holds an agent span
	// of the same name (the ReAct model node "agent", named after its subgraph).
	AgentRuleLangGraphSubgraph = "metadata.langgraph_node;subgraph"
)

// AgentRuleSpanName is the AgentRule of an agent named only by its span name.
const AgentRuleSpanName = "span_name"

// reclass replaces n's record by a copy of another class (agent name and rule as given).
func (n *treeNode) reclass(c SpanClass, agent, rule string) {
	r := *n.rec
	r.Class = c
	if c == ClassAgent {
		r.AgentName, r.AgentRule = agent, rule
	}
	n.rec, n.reclassed = &r, true
}

// promoteLangGraphNodes makes agents of the LangGraph node spans (SpanRecord.LangGraphNode,
// not already agents) that the trace identifies as agents:
//   - the node is the target of a handoff tool offered, requested or executed anywhere in
//     the trace (langgraph-supervisor and swarm: transfer_to_<agent>), matched after
//     normalisation (AgentKey), so "math_expert" is an agent although its name does
//     not contain "agent";
//   - the node's subgraph holds an agent span named after it (the extractor names the
//     ReAct model node "agent" after its enclosing node).
//
// Folding (annotate) then merges the nested spans of the same agent into the outermost.
func (a *assembler) promoteLangGraphNodes() {
	var nodes []*treeNode
	for _, n := range a.nodes {
		if n.rec.LangGraphNode != "" && n.rec.Class == ClassOther {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return
	}
	targets := map[string]bool{}
	addTarget := func(name, args string) {
		if t, _, ok := HandoffToolTarget(name, args); ok {
			if k := AgentKey(t); k != "" {
				targets[k] = true
			}
		}
	}
	for _, n := range a.nodes {
		r := n.rec
		if r.Class == ClassTool {
			addTarget(execToolName(r), r.ToolArguments)
		}
		if k := AgentKey(r.HandoffTo); k != "" {
			targets[k] = true
		}
		for _, c := range r.RequestedCalls {
			addTarget(c.Name, c.Arguments)
		}
		for _, d := range r.ToolDefs {
			addTarget(d.Name, "")
		}
	}
	for _, n := range nodes {
		if targets[AgentKey(n.rec.LangGraphNode)] {
			n.reclass(ClassAgent, n.rec.LangGraphNode, AgentRuleLangGraphHandoffTarget)
		}
	}
	for _, n := range a.nodes {
		if n.rec.Class != ClassAgent || n.rec.AgentName == "" {
			continue
		}
		for p := n.parent; p != nil; p = p.parent {
			if p.rec.Class == ClassAgent || p.rec.Class == ClassTool {
				break
			}
			if p.rec.LangGraphNode == n.rec.AgentName && p.rec.Class == ClassOther {
				p.reclass(ClassAgent, p.rec.LangGraphNode, AgentRuleLangGraphSubgraph)
			}
		}
	}
}

// foldsInto reports whether agent span n is part of its nearest agent ancestor rather than
// an interaction of its own: both name the same agent and no tool span lies between them
// (LangGraph records a node span and its subgraph span for one agent run, and the ReAct
// model node inside; an agent that calls itself through a tool is a real nested run).
func foldsInto(n *treeNode) bool {
	if n.rec.Class != ClassAgent || n.agentAnc == nil || n.toolAnc != nil {
		return false
	}
	return n.rec.AgentName != "" && n.rec.AgentName == n.agentAnc.rec.AgentName
}

// demoteWrappers turns into turn markers the top-level agent spans that are only workflow
// wrappers: named by nothing but their span name (no agent-name attribute), with nested
// agent spans, and with no LLM, tool or handoff span nor requested tool call of their
// own. This is the OpenAI Agents trace span through OpenInference (an AGENT span named
// after the trace, "Acme support"); a named agent that only delegates keeps its
// interaction. It runs before folding (foldsInto), so that an agent span of the wrapper's
// name nested in it stays an interaction. The tree must be re-annotated afterwards.
func (a *assembler) demoteWrappers() {
	type tally struct{ agents, work int }
	counts := map[*treeNode]*tally{}
	for _, n := range a.nodes {
		if n.rec.Class == ClassAgent && n.agentAnc == nil && len(n.rec.RequestedCalls) == 0 &&
			(n.rec.AgentName == "" || n.rec.AgentRule == AgentRuleSpanName) {
			counts[n] = &tally{}
		}
	}
	if len(counts) == 0 {
		return
	}
	for _, n := range a.nodes {
		t := counts[n.agentAnc]
		if t == nil {
			continue
		}
		switch n.rec.Class {
		case ClassAgent:
			t.agents++
		case ClassLLM, ClassTool, ClassHandoff:
			t.work++
		}
	}
	for n, t := range counts {
		if t.agents > 0 && t.work == 0 {
			n.reclass(ClassTurn, "", "")
			if a.wrappers == nil {
				a.wrappers = map[*treeNode]bool{}
			}
			a.wrappers[n] = true
		}
	}
}
