// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSession runs every deterministic evaluator a dataset session gets (selection,
// sequence, classification, confidence, unordered trajectory with exact arguments,
// interactions) on a session with 10 expected tools, 11 actual calls (one repeated, one
// out of order) and 5 expected interactions. Reports µs/session.
func BenchmarkSession(b *testing.B) {
	var wantTools []any
	var gotCalls []any
	for i := range 10 {
		name := fmt.Sprintf("tool_%d", i)
		wantTools = append(wantTools, map[string]any{"name": name, "args": map[string]any{"id": float64(i), "q": "x"}})
	}
	for _, i := range []int{0, 1, 3, 2, 4, 5, 5, 6, 7, 8, 9} {
		gotCalls = append(gotCalls, map[string]any{"name": fmt.Sprintf("tool_%d", i), "arguments": fmt.Sprintf(`{"id":%d,"q":"x"}`, i)})
	}
	var wantInter, gotInter []any
	prev := []any{}
	for i := range 5 {
		n := fmt.Sprintf("agent_%d", i)
		wantInter = append(wantInter, map[string]any{"node_name": n, "dependencies": prev, "messages": "m"})
		gotInter = append(gotInter, map[string]any{"node_name": n, "dependencies": prev, "messages": "m"})
		prev = []any{n}
	}
	ex := Example{Input: "q", Reference: "search", Metadata: map[string]any{
		MetaExpectedTools: wantTools, MetaExpectedSequence: wantTools, MetaExpectedTrajectory: wantTools,
		MetaExpectedInteractions: wantInter,
	}}
	output := map[string]any{"route_type": "search", "confidence": 0.9, "tool_calls": gotCalls}
	inter := map[string]any{"output": "done", "interactions": gotInter}
	evs := []Evaluator{
		NewToolSelectionEvaluator(""), NewToolCallSequenceEvaluator(""),
		NewClassificationEvaluator("", []string{"search", "question"}), NewConfidenceEvaluator("", 0.7),
		NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryUnordered}),
	}
	ie := NewInteractionsEvaluator("", InteractionsOptions{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, ev := range evs {
			if _, err := ev.Evaluate(ctx, ex, output); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := ie.Evaluate(ctx, ex, inter); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/session")
}
