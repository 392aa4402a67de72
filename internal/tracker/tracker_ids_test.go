// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrackerCopiesTraceIDs: a record's trace id may be a view of memory the caller
// reuses once the batch is handled (conventions.IDBuffer). The Tracker keeps its own
// copy of the ids of open and dead traces: rewriting the memory changes nothing.
func TestTrackerCopiesTraceIDs(t *testing.T) {
	view := func(b []byte) string { return unsafe.String(&b[0], len(b)) }
	tk := New(Config{MaxSpansPerSession: 4})

	open := []byte("trace-a")
	recs := turnRecs("x", "s1", 0, "hello")[:2] // no root: the turn stays open
	for i := range recs {
		recs[i].TraceID = view(open)
	}
	assert.Empty(t, tk.Observe(recs, atSec(0)))
	copy(open, "trace-b")

	// Session s2 passes max_spans_per_session: its trace is dead.
	dead := []byte("trace-c")
	big := turnRecs("y", "s2", 0, "hi")
	big = append(big, turnRecs("y", "s2", 30, "hi")[:2]...)
	for i := range big {
		big[i].TraceID = view(dead)
	}
	require.NotEmpty(t, tk.Observe(big, atSec(1)))
	// A new trace of the dead session is dead too (kept under its own copy).
	late := []byte("trace-d")
	more := turnRecs("z", "s2", 0, "again")[:1]
	more[0].TraceID = view(late)
	tk.Observe(more, atSec(2))
	copy(dead, "trace-e")
	copy(late, "trace-f")

	dropped := tk.Stats().SpansDropped
	for _, id := range []string{"trace-c", "trace-d"} {
		r := turnRecs("w", "", 0, "")[:1]
		r[0].TraceID = id
		tk.Observe(r, atSec(3))
	}
	assert.Equal(t, dropped+2, tk.Stats().SpansDropped, "records of the dead traces are still dropped")

	ev := tk.Advance(atSec(100))
	var traces []string
	for _, e := range ev {
		if e.Kind == EventTurnClosed {
			traces = append(traces, e.Session.Turns[e.TurnIndex].TraceID)
		}
	}
	assert.Equal(t, []string{"trace-a"}, traces)
	checkAccounting(t, tk)
}
