// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly // import "github.com/agenteval/agenteval-collector/internal/assembly"

import (
	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/session"
) // Agent recognition that needs the whole trace, not one span (docs/decisions/sessions.md
// §1.7): LangGraph nodes named as handoff targets become agents, a top-level agent span
// that is only a workflow wrapper becomes the turn root, and an agent span nested
// directly in a span of the same agent is part of it. The rules work on copies of the
// records; the records themselves are never modified.

// reclass replaces n's record by a copy of another class (agent name and rule as given).
func (n *treeNode) reclass(c session.SpanClass, agent, rule string) {
	r := *n.rec
	r.Class = c
	if c == session.ClassAgent {
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
		if n.rec.LangGraphNode != "" && n.rec.Class == session.ClassOther {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return
	}
	targets := map[string]bool{}
	addTarget := func(name, args string) {
		if t, _, ok := conventions.HandoffToolTarget(name, args); ok {
			if k := session.AgentKey(t); k != "" {
				targets[k] = true
			}
		}
	}
	for _, n := range a.nodes {
		r := n.rec
		if r.Class == session.ClassTool {
			addTarget(execToolName(r), r.ToolArguments)
		}
		if k := session.AgentKey(r.HandoffTo); k != "" {
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
		if targets[session.AgentKey(n.rec.LangGraphNode)] {
			n.reclass(session.ClassAgent, n.rec.LangGraphNode, session.AgentRuleLangGraphHandoffTarget)
		}
	}
	for _, n := range a.nodes {
		if n.rec.Class != session.ClassAgent || n.rec.AgentName == "" {
			continue
		}
		for p := n.parent; p != nil; p = p.parent {
			if p.rec.Class == session.ClassAgent || p.rec.Class == session.ClassTool {
				break
			}
			if p.rec.LangGraphNode == n.rec.AgentName && p.rec.Class == session.ClassOther {
				p.reclass(session.ClassAgent, p.rec.LangGraphNode, session.AgentRuleLangGraphSubgraph)
			}
		}
	}
}

// foldsInto reports whether agent span n is part of its nearest agent ancestor rather than
// an interaction of its own: both name the same agent and no tool span lies between them
// (LangGraph records a node span and its subgraph span for one agent run, and the ReAct
// model node inside; an agent that calls itself through a tool is a real nested run).
func foldsInto(n *treeNode) bool {
	if n.rec.Class != session.ClassAgent || n.agentAnc == nil || n.toolAnc != nil {
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
		if n.rec.Class == session.ClassAgent && n.agentAnc == nil && len(n.rec.RequestedCalls) == 0 &&
			(n.rec.AgentName == "" || n.rec.AgentRule == session.AgentRuleSpanName) {
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
		case session.ClassAgent:
			t.agents++
		case session.ClassLLM, session.ClassTool, session.ClassHandoff:
			t.work++
		}
	}
	for n, t := range counts {
		if t.agents > 0 && t.work == 0 {
			n.reclass(session.ClassTurn, "", "")
			if a.wrappers == nil {
				a.wrappers = map[*treeNode]bool{}
			}
			a.wrappers[n] = true
		}
	}
}
