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

// BenchmarkTrackerTick measures a timer check that finds nothing due, as the processor's
// worker makes one every turn_settle and after every batch (rounded to 10 ms), with N
// open sessions: each has a closed turn and waits for session_timeout, and every fourth
// has a turn still open (its root not arrived).
func BenchmarkTrackerTick(b *testing.B) {
	template := sessiontest.TurnRecords(20)
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			tk := New(Config{MaxSessions: 2 * n, SessionTimeout: time.Hour, TurnTimeout: time.Hour})
			batch := make([]session.SpanRecord, len(template))
			for i := range n {
				copy(batch, template)
				for j := range batch {
					batch[j].TraceID, batch[j].SessionID = fmt.Sprintf("t%d", i), fmt.Sprintf("s%d", i)
				}
				tk.Observe(batch, testT0)
			}
			clock := testT0.Add(time.Minute)
			if ev := tk.Advance(clock); len(ev) != n {
				b.Fatalf("%d events, want %d", len(ev), n)
			}
			for i := 0; i < n; i += 4 {
				copy(batch, template[3:]) // no root
				for j := range batch[:len(template)-3] {
					batch[j].TraceID, batch[j].SessionID = fmt.Sprintf("u%d", i), fmt.Sprintf("s%d", i)
				}
				tk.Observe(batch[:len(template)-3], clock)
			}
			b.ReportAllocs()
			for b.Loop() {
				// Forward, never as far as a timeout: every check finds nothing due.
				clock = clock.Add(time.Microsecond)
				if ev := tk.AdvanceClosing(clock); len(ev) != 0 {
					b.Fatalf("%d closed", len(ev))
				}
			}
		})
	}
}
