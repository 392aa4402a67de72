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

// BenchmarkTrackerLateBatch: two batches of 400 traces (17 records each, a session each)
// observed in turn, the second with a time before the first's when late (two streams
// that took the tracker's lock in the opposite order of their clock reading). A late
// batch moves each of its traces and sessions back in the time lists once; its other
// records leave their node in place (timeList.set).
func BenchmarkTrackerLateBatch(b *testing.B) {
	template := sessiontest.TurnRecords(20)
	batch := func(prefix string) []session.SpanRecord {
		out := make([]session.SpanRecord, 0, 400*17)
		for i := range 400 {
			for _, r := range template[:17] {
				r.TraceID, r.SessionID = fmt.Sprintf("%s%d", prefix, i), fmt.Sprintf("%ss%d", prefix, i)
				out = append(out, r)
			}
		}
		return out
	}
	first, second := batch("a"), batch("c")
	for _, late := range []bool{false, true} {
		b.Run(fmt.Sprintf("late=%v", late), func(b *testing.B) {
			tk := New(Config{MaxSessions: 1 << 20, MaxSpansPerSession: 1 << 30, SessionTimeout: time.Hour, TurnTimeout: time.Hour, MaxSessionDuration: 100 * time.Hour})
			clock := testT0
			for b.Loop() {
				clock = clock.Add(2 * time.Millisecond)
				tk.Observe(first, clock)
				at := clock.Add(time.Millisecond)
				if late {
					at = clock.Add(-time.Millisecond)
				}
				tk.Observe(second, at)
			}
		})
	}
}

// BenchmarkTrackerInterleaved observes batches as an SDK's batch processor exports them
// under concurrency: 480 records of 24 new traces (one in each of 24 open sessions, 20
// records a trace) in round-robin order, each batch at its own time, so that
// consecutive records belong to different traces and sessions. Each trace's and
// session's node moves to the end of its time list once per batch (timeList.set), not
// once per record. The batches are built, and every 8 batches the tracker emptied,
// outside the timed part.
func BenchmarkTrackerInterleaved(b *testing.B) {
	template := sessiontest.TurnRecords(20)
	const traces = 24
	batch := make([]session.SpanRecord, traces*20)
	tk := New(Config{MaxSessions: 1 << 20, MaxSpansPerSession: 1 << 30, SessionTimeout: time.Hour, TurnTimeout: time.Hour, MaxSessionDuration: 100 * time.Hour})
	clock := testT0
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for j := range 20 {
			for i := range traces {
				r := template[j]
				r.TraceID, r.SessionID = fmt.Sprintf("t%d-%d", n, i), fmt.Sprintf("s%d", i)
				batch[j*traces+i] = r
			}
		}
		n++
		clock = clock.Add(time.Millisecond)
		if n%8 == 0 {
			// Every 8 batches all is closed and ended, so that the open state (and
			// with it the figure) does not grow with b.N.
			clock = clock.Add(2 * time.Hour)
			tk.Advance(clock)
		}
		b.StartTimer()
		tk.ObserveClosing(batch, clock)
	}
}
