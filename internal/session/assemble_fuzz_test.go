// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// asFuzzReader hands out the fuzz bytes one at a time (0 once exhausted).
type asFuzzReader struct {
	data []byte
	pos  int
}

func (r *asFuzzReader) next() int {
	if r.pos >= len(r.data) {
		return 0
	}
	r.pos++
	return int(r.data[r.pos-1])
}

func (r *asFuzzReader) pick(options ...string) string { return options[r.next()%len(options)] }

// asFuzzRecords builds up to 48 records with random parents (absent, self, missing, any
// span including later ones, so cycles), random classes, duplicate span ids, inverted
// times, handoff tools, requested calls, handoff spans, graph parents, LangGraph nodes and
// agents named only by their span name.
func asFuzzRecords(data []byte) []SpanRecord {
	r := &asFuzzReader{data: data}
	n := r.next()%48 + 1
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%02d", i)
		if i > 0 && r.next()%12 == 0 {
			ids[i] = ids[r.next()%i] // duplicate span id
		}
	}
	agents := []string{"A", "B", "C", "", "Math Agent"}
	tools := []string{"lookup", "transfer_to_B", "transfer_to_math_agent", "handoff_to_agent", "transfer_to_agent",
		"Delegate work to coworker", "ask_A", "transfer_back_to_A", ""}
	args := []string{"", "{}", `{"agent_name":"C","message":"m"}`, "not json", `{"coworker":"A","task":"t"}`, `[1,2]`, `{"input":"x"}`}
	callIDs := []string{"", "c1", "c2", "c3"}
	recs := make([]SpanRecord, n)
	for i := range recs {
		rec := SpanRecord{TraceID: "t", SpanID: ids[i], Class: SpanClass(r.next() % 7)}
		switch p := r.next() % 8; p {
		case 0:
		case 1:
			rec.ParentSpanID = rec.SpanID
		case 2:
			rec.ParentSpanID = "missing"
		default:
			rec.ParentSpanID = ids[r.next()%n]
		}
		rec.StartUnixNano = int64(r.next()) * 1e6
		rec.EndUnixNano = rec.StartUnixNano + int64(r.next()%64)*1e6
		if r.next()%10 == 0 {
			rec.EndUnixNano = rec.StartUnixNano - 5e6
		}
		rec.Name = r.pick("invoke_agent x", "chat", "execute_tool", "handoff to B", "X.agent", "root")
		rec.Error = r.next()%5 == 0
		if rec.Class == ClassAgent {
			rec.AgentName = r.pick(agents...)
			rec.GraphNodeID = rec.AgentName
			rec.GraphParentID = r.pick("", "", "A", "B", "C")
			rec.HandoffTargets = []string{r.pick(agents...)}
			rec.AllowedTools = []string{r.pick(tools...)}
		}
		rec.Input = r.pick("", "", "question")
		rec.UserMessage = r.pick("", "hello")
		rec.Output = r.pick("", "answer")
		rec.Reasoning = r.pick("", "", "thinking")
		rec.ContentCaptured = r.next()%2 == 0
		if r.next()%6 == 0 {
			v := r.next()%2 == 0
			rec.Outcome = &v
		}
		switch rec.Class {
		case ClassTool:
			rec.ToolName = r.pick(tools...)
			rec.ToolCallID = r.pick(callIDs...)
			rec.ToolArguments = r.pick(args...)
			if r.next()%4 == 0 {
				rec.HandoffTo = r.pick(agents...)
				rec.HandoffMode = r.pick("", "return_to_caller")
			}
		case ClassLLM:
			for range r.next() % 4 {
				rec.RequestedCalls = append(rec.RequestedCalls, RequestedToolCall{
					ID: r.pick(callIDs...), Name: r.pick(tools...), Arguments: r.pick(args...),
				})
			}
			rec.Usage = Usage{InputTokens: int64(r.next()), OutputTokens: int64(r.next())}
			rec.ToolDefs = []ToolDefinition{{Name: r.pick(tools...)}}
			rec.FinishReasons = []string{r.pick("stop", "tool_calls")}
		case ClassHandoff:
			rec.HandoffFrom = r.pick(agents...)
			rec.HandoffTo = r.pick(agents...)
		case ClassOther:
			// LangGraph node spans, promoted when the trace names them as agents.
			rec.LangGraphNode = r.pick("", "", "B", "math_agent", "tools")
		case ClassAgent:
			// Agents named only by their span name may be workflow wrappers.
			rec.AgentRule = r.pick("gen_ai.agent.name", agentRuleSpanName)
		}
		recs[i] = rec
	}
	return recs
}

// asFirstOccurrences keeps the first record of every span id (what AssembleTurn keeps).
func asFirstOccurrences(recs []SpanRecord) []SpanRecord {
	seen := map[string]bool{}
	var out []SpanRecord
	for _, r := range recs {
		if r.Class == ClassEvaluation || seen[r.SpanID] {
			continue
		}
		seen[r.SpanID] = true
		out = append(out, r)
	}
	return out
}

// asCheckTurn checks the invariants every assembled turn must hold.
func asCheckTurn(t *testing.T, recs []SpanRecord, got TurnAssembly) {
	t.Helper()
	kept := asFirstOccurrences(recs)
	known := map[string]SpanClass{}
	llms := 0
	for _, r := range kept {
		known[r.SpanID] = r.Class
		if r.Class == ClassLLM {
			llms++
		}
	}
	turn := got.Turn
	if turn.SpanCount != len(kept) {
		t.Fatalf("SpanCount %d, want %d", turn.SpanCount, len(kept))
	}
	if turn.Usage.LLMCalls != llms {
		t.Fatalf("usage counts %d LLM calls, want %d", turn.Usage.LLMCalls, llms)
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
		if known[in.SpanID] == ClassAgent {
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
			case StepLLMCall:
				once(llmSteps, s.SpanID, "an llm_call")
				own(s.SpanID, i)
			case StepReasoning:
				own(s.SpanID, i)
			case StepToolCall:
				if s.ToolCall.Executed && known[s.ToolCall.SpanID] == ClassTool {
					once(execCalls, s.ToolCall.SpanID, "an executed tool call")
					own(s.ToolCall.SpanID, i)
				}
			case StepHandoff:
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
	byID := map[string]SpanRecord{}
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
		if c != ClassAgent || agentSpans[id] {
			continue
		}
		r := byID[id]
		if wraps[id] && (r.AgentName == "" || r.AgentRule == agentRuleSpanName) {
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
	if turn.RootRule == RootRuleWorkflowAgent && known[turn.RootSpanID] != ClassAgent {
		t.Fatalf("workflow_agent root %s is not an agent span", turn.RootSpanID)
	}
}

func FuzzAssembleTurn(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 2, 3, 0, 10, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("a multi-agent trace with cycles, self parents and handoff tools...."))
	for _, n := range []int{7, 23, 41} {
		b := make([]byte, 600)
		for i := range b {
			b[i] = byte(i*n + i/3)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := asFuzzRecords(data)
		got := AssembleTurn(recs)
		asCheckTurn(t, recs, got)
		if again := AssembleTurn(recs); !reflect.DeepEqual(got, again) {
			t.Fatal("same input, different output")
		}
		kept := asFirstOccurrences(recs)
		base := AssembleTurn(kept)
		rev := slices.Clone(kept)
		slices.Reverse(rev)
		if !reflect.DeepEqual(base, AssembleTurn(rev)) {
			t.Fatal("record order changed the output")
		}
		rot := append(slices.Clone(kept[len(kept)/2:]), kept[:len(kept)/2]...)
		if !reflect.DeepEqual(base, AssembleTurn(rot)) {
			t.Fatal("record order changed the output")
		}
		got.Turn.Anomalies = slices.DeleteFunc(got.Turn.Anomalies, func(s string) bool { return s == AnomalyDuplicateSpan })
		if len(got.Turn.Anomalies) == 0 {
			got.Turn.Anomalies = nil
		}
		if !reflect.DeepEqual(base, got) {
			t.Fatal("dropping duplicates changed more than the duplicate_span anomaly")
		}
	})
}
