// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
)

// BenchmarkEmit measures the emitter alone: what the evaluation spans of a session cost
// to build, encode and sign, on the three golden sessions of three turns (bench/e2e's
// shape), with the default emit policies. One op is one session: per turn its
// provisional spans (addTurn: the turn span and the tool-call and interaction spans
// the policies ask for) and its final turn span, then the session span (addSession).
// spans/op says how many evaluation spans an op writes.
//
//	go test -run '^$' -bench Emit -count=6 ./processor/agentsessionprocessor/
func BenchmarkEmit(b *testing.B) { benchEmit(b, nil) }

// BenchmarkEmitHandoff is BenchmarkEmit with a handoff (the handoff setting): each turn
// and session span's result is also put in it (its summary built in memory of its own
// rather than pooled). The handoff is never taken from, so past its bound every put
// also drops the oldest entry, as the exporter's take would remove it.
func BenchmarkEmitHandoff(b *testing.B) {
	h := handoff.New(4096)
	h.Attach() // as the exporter does: without a taker nothing is stored
	benchEmit(b, h)
}

func benchEmit(b *testing.B, h *handoff.Handoff) {
	var as []evaluation.Analysis
	for _, name := range []string{"langgraph_multi_turn", "openai_agents_multi_turn", "vercel_ai_multi_turn"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", name+".analyses.json"))
		if err != nil {
			b.Fatal(err)
		}
		var a []evaluation.Analysis
		if err := json.Unmarshal(raw, &a); err != nil {
			b.Fatal(err)
		}
		as = append(as, a[0])
	}
	e := newEmitter(createDefaultConfig().(*Config).Emit, "0123456789abcdef-bench")
	e.handoff = h
	now := time.Unix(1_700_000_000, 0)
	b.ReportAllocs()
	spans, i := 0, 0
	for b.Loop() {
		a := &as[i%len(as)]
		i++
		bt := e.newBatch(now)
		for k := range a.TurnResults {
			tr := a.TurnResults[k]
			tr.Final = false
			bt.addTurn(a.SessionID, &tr)
			tr.Final = true
			bt.addTurnSpan(a.SessionID, &tr)
		}
		if err := bt.addSession(a); err != nil {
			b.Fatal(err)
		}
		spans += bt.spans.Len()
	}
	b.ReportMetric(float64(spans)/float64(b.N), "spans/op")
}
