// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly

import (
	"slices"
	"testing"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// firstOccurrences keeps the first record of every span id (what Assemble keeps).
func firstOccurrences(recs []session.SpanRecord) []session.SpanRecord {
	seen := map[string]bool{}
	var out []session.SpanRecord
	for _, r := range recs {
		if r.Class == session.ClassEvaluation || seen[r.SpanID] {
			continue
		}
		seen[r.SpanID] = true
		out = append(out, r)
	}
	return out
}

// checkTurn checks the invariants every assembled turn must hold.
func checkTurn(t *testing.T, recs []session.SpanRecord, got TurnAssembly) {
	t.Helper()
	kept := firstOccurrences(recs)
	known := map[string]session.SpanClass{}
	llms := 0
	for _, r := range kept {
		known[r.SpanID] = r.Class
		if r.Class == session.ClassLLM {
			llms++
		}
	}
	turn := got.Turn
	if turn.SpanCount != len(kept) {
		t.Fatalf("SpanCount %d, want %d", turn.SpanCount, len(kept))
	}
	// An LLM span over exactly one LLM child is that call's wrapper (demoteNestedLLM): at
	// most every LLM span with an LLM child is one.
	llmParents := map[string]bool{}
	for _, r := range kept {
		if r.Class == session.ClassLLM && r.ParentSpanID != r.SpanID && known[r.ParentSpanID] == session.ClassLLM {
			llmParents[r.ParentSpanID] = true
		}
	}
	if turn.Usage.LLMCalls > llms || turn.Usage.LLMCalls < llms-len(llmParents) {
		t.Fatalf("usage counts %d LLM calls, want %d LLM spans less at most %d wrappers", turn.Usage.LLMCalls, llms, len(llmParents))
	}
	if !slices.IsSorted(turn.Anomalies) || len(slices.Compact(slices.Clone(turn.Anomalies))) != len(turn.Anomalies) {
		t.Fatalf("anomalies not sorted and unique: %v", turn.Anomalies)
	}
	if len(kept) > 0 {
		if _, ok := known[turn.RootSpanID]; !ok {
			t.Fatalf("root %q is not a span of the trace", turn.RootSpanID)
		}
	}
	// Every span is owned by at most one interaction, and stands for at most one
	// interaction, one llm_call step and one executed tool call.
	owner := map[string]int{}
	own := func(id string, i int) {
		if j, ok := owner[id]; ok && j != i {
			t.Fatalf("span %s attributed to interactions %d and %d", id, j, i)
		}
		owner[id] = i
	}
	agentSpans, llmSteps, execCalls := map[string]bool{}, map[string]bool{}, map[string]bool{}
	once := func(set map[string]bool, id, what string) {
		if set[id] {
			t.Fatalf("span %s appears twice as %s", id, what)
		}
		set[id] = true
	}
	for i, in := range turn.Interactions {
		if _, ok := known[in.SpanID]; !ok {
			t.Fatalf("interaction span %q unknown", in.SpanID)
		}
		if known[in.SpanID] == session.ClassAgent {
			once(agentSpans, in.SpanID, "an interaction")
			own(in.SpanID, i)
		}
		for k, s := range in.Steps {
			if k > 0 && s.StartedAt.Before(in.Steps[k-1].StartedAt) {
				t.Fatalf("steps of %s out of order", in.AgentID)
			}
			if _, ok := known[s.SpanID]; !ok {
				t.Fatalf("step span %q unknown", s.SpanID)
			}
			switch s.Kind {
			case session.StepLLMCall:
				once(llmSteps, s.SpanID, "an llm_call")
				own(s.SpanID, i)
			case session.StepReasoning:
				own(s.SpanID, i)
			case session.StepToolCall:
				if s.ToolCall.Executed && known[s.ToolCall.SpanID] == session.ClassTool {
					once(execCalls, s.ToolCall.SpanID, "an executed tool call")
					own(s.ToolCall.SpanID, i)
				}
			case session.StepHandoff:
				h := s.Handoff
				if h.FromAgent != in.AgentID || h.ToAgent == "" || h.ToAgent == h.FromAgent {
					t.Fatalf("bad handoff %+v in %s", *h, in.AgentID)
				}
			}
		}
	}
	// An agent span without an interaction of its own is part of an enclosing interaction
	// of the same agent (folded), or a workflow wrapper (no agent name but its span name)
	// around other interactions.
	byID := map[string]session.SpanRecord{}
	for _, r := range kept {
		byID[r.SpanID] = r
	}
	interOf := map[string]string{}
	wraps := map[string]bool{}
	for _, in := range turn.Interactions {
		interOf[in.SpanID] = in.AgentID
		seen := map[string]bool{in.SpanID: true}
		for p := byID[in.SpanID].ParentSpanID; p != "" && !seen[p]; p = byID[p].ParentSpanID {
			seen[p], wraps[p] = true, true
		}
	}
	for id, c := range known {
		if c != session.ClassAgent || agentSpans[id] {
			continue
		}
		r := byID[id]
		if wraps[id] && (r.AgentName == "" || r.AgentRule == session.AgentRuleSpanName) {
			continue
		}
		folded := false
		seen := map[string]bool{id: true}
		for p := r.ParentSpanID; p != "" && !seen[p]; p = byID[p].ParentSpanID {
			seen[p] = true
			if agent, ok := interOf[p]; ok {
				folded = r.AgentName != "" && agent == r.AgentName
				break
			}
		}
		if !folded {
			t.Fatalf("agent span %s has no interaction", id)
		}
	}
	if turn.RootRule == session.RootRuleWorkflowAgent && known[turn.RootSpanID] != session.ClassAgent {
		t.Fatalf("workflow_agent root %s is not an agent span", turn.RootSpanID)
	}
}
