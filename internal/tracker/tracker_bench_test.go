// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"fmt"
	"testing"
	"time"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

// BenchmarkTracker measures the per-turn cost of the lifecycle: observing a 21-span turn
// of one of 500 interleaved sessions, then a clock tick that closes the settled turns
// (assembly included) and ends idle sessions.
func BenchmarkTracker(b *testing.B) {
	template := sessiontest.TurnRecords(20)
	const sessions = 500
	batches := make([][]session.SpanRecord, sessions)
	for i := range batches {
		batches[i] = make([]session.SpanRecord, len(template))
		copy(batches[i], template)
	}
	b.ReportAllocs()
	tk := New(Config{MaxSessions: 2 * sessions, SessionTimeout: time.Minute})
	clock := testT0
	n := 0
	for b.Loop() {
		batch := batches[n%sessions]
		tid, sid := fmt.Sprintf("t%d", n), fmt.Sprintf("s%d", n%sessions)
		for i := range batch {
			batch[i].TraceID, batch[i].SessionID = tid, sid
		}
		tk.Observe(batch, clock)
		clock = clock.Add(10 * time.Millisecond)
		if n%50 == 0 {
			tk.Advance(clock)
		}
		n++
	}
}

// BenchmarkTrackerLockedTimePerTurn measures, for one session of N turns, the time a
// turn's close spends in the calls the processor makes under its ingest mutex
// (ObserveClosing, AdvanceClosing, Finish) apart from the assembly, which it runs
// outside (Closed.Assemble): locked_ns/turn must not grow with N.
func BenchmarkTrackerLockedTimePerTurn(b *testing.B) {
	template := sessiontest.TurnRecords(20)
	for _, n := range []int{100, 400, 1600} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			tk := New(Config{SessionTimeout: time.Hour, MaxSessionDuration: 1000 * time.Hour, RetainTurns: 2})
			clock := testT0
			batch := make([]session.SpanRecord, len(template))
			k := 0
			var locked, unlocked time.Duration
			turn := func() {
				copy(batch, template)
				tid := fmt.Sprintf("t%d", k)
				for i := range batch {
					batch[i].TraceID, batch[i].SessionID = tid, "long"
				}
				k++
				start := time.Now()
				cs := tk.ObserveClosing(batch, clock)
				clock = clock.Add(3 * time.Second)
				cs = append(cs, tk.AdvanceClosing(clock)...)
				mid := time.Now()
				for i := range cs {
					cs[i].Assemble()
				}
				end := time.Now()
				tk.Finish(cs)
				locked += mid.Sub(start) + time.Since(end)
				unlocked += end.Sub(mid)
			}
			for range n {
				turn()
			}
			locked, unlocked = 0, 0
			b.ReportAllocs()
			for b.Loop() {
				turn()
			}
			b.ReportMetric(float64(locked.Nanoseconds())/float64(b.N), "locked_ns/turn")
			b.ReportMetric(float64(unlocked.Nanoseconds())/float64(b.N), "assembly_ns/turn")
		})
	}
}
