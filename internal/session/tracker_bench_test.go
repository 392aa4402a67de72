// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkTracker measures the per-turn cost of the lifecycle: observing a 21-span turn
// of one of 500 interleaved sessions, then a clock tick that closes the settled turns
// (assembly included) and ends idle sessions.
func BenchmarkTracker(b *testing.B) {
	template := benchTurnRecords(20)
	const sessions = 500
	batches := make([][]SpanRecord, sessions)
	for i := range batches {
		batches[i] = make([]SpanRecord, len(template))
		copy(batches[i], template)
	}
	b.ReportAllocs()
	tk := NewTracker(TrackerConfig{MaxSessions: 2 * sessions, SessionTimeout: time.Minute})
	clock := trkT0
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
