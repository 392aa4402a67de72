// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestHexIDs checks hexIDs against pcommon's String methods, empty ids included.
func TestHexIDs(t *testing.T) {
	tid := pcommon.TraceID{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0, 0, 0, 0, 0, 0, 0xfe, 0xff}
	sid := pcommon.SpanID{0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3}
	pid := pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 1}
	for mask := 0; mask < 8; mask++ {
		var t1 pcommon.TraceID
		var s1, p1 pcommon.SpanID
		if mask&1 != 0 {
			t1 = tid
		}
		if mask&2 != 0 {
			s1 = sid
		}
		if mask&4 != 0 {
			p1 = pid
		}
		gt, gs, gp := (*IDBuffer)(nil).hexIDs(t1, s1, p1)
		require.Equal(t, t1.String(), gt, "mask %d", mask)
		require.Equal(t, s1.String(), gs, "mask %d", mask)
		require.Equal(t, p1.String(), gp, "mask %d", mask)
	}
}

// TestIDBuffer checks that ids formatted into a shared IDBuffer equal hexIDs' and stay
// unchanged while later ids are formatted, across new arrays (Grow).
func TestIDBuffer(t *testing.T) {
	var b IDBuffer
	b.Grow(3)
	type ids struct{ t, s, p string }
	var got, want []ids
	for i := range 200 {
		var tid pcommon.TraceID
		var sid, pid pcommon.SpanID
		if i%7 != 0 {
			tid[0], tid[15] = byte(i), byte(i>>8)
		}
		if i%5 != 0 {
			sid[7] = byte(i)
		}
		if i%3 != 0 {
			pid[0] = byte(i)
		}
		gt, gs, gp := b.hexIDs(tid, sid, pid)
		got = append(got, ids{gt, gs, gp})
		wt, ws, wp := (*IDBuffer)(nil).hexIDs(tid, sid, pid)
		want = append(want, ids{wt, ws, wp})
		require.Equal(t, tid.String(), gt)
		require.Equal(t, sid.String(), gs)
		require.Equal(t, pid.String(), gp)
	}
	require.Equal(t, want, got, "ids handed out earlier are never overwritten")
}

// TestParentRemote: the OTLP span flags' two is-remote bits (trace.proto SpanFlags) set
// ParentRemote; either bit alone, or a span without a parent, does not. An OpenInference
// CHAIN is the turn only without a parent: under a remote one it may be a callee's chain
// inside a turn whose caller exports here too.
func TestParentRemote(t *testing.T) {
	for _, tc := range []struct {
		flags  uint32
		parent bool
		want   bool
	}{
		{0x301, true, true},
		{0x300, true, true},
		{0x101, true, false}, // the flag is known: a local parent
		{0x200, true, false}, // is-remote without has-is-remote: unknown
		{0, true, false},
		{0x301, false, false},
	} {
		s := newSpan(t, "workflow", map[string]any{"openinference.span.kind": "CHAIN"})
		s.SetFlags(tc.flags)
		if !tc.parent {
			s.SetParentSpanID(pcommon.SpanID{})
		}
		r := extractOne(t, s)
		require.Equal(t, tc.want, r.ParentRemote, "flags %#x, parent %v", tc.flags, tc.parent)
		require.Equal(t, !tc.parent, r.Class == session.ClassTurn, "flags %#x, parent %v: class %v", tc.flags, tc.parent, r.Class)
	}
}
