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

// FuzzTracker drives a Tracker with random batches (random traces, session keys, end
// signals, classes, duplicates), clock steps (some back), limits and shutdowns. It checks
// that nothing panics, that every record is retained or counted once, that a turn (its
// trace and root span) is never two turns of one session, and that the timer lists find
// what a scan of every open trace and session finds (checkAccounting).
func FuzzTracker(f *testing.F) {
	f.Add([]byte{3, 1, 2, 9, 200, 17, 4, 4, 4, 80, 1, 0, 3})
	f.Add([]byte("sessions, traces, timeouts and limits in a random order............"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &sessiontest.FuzzReader{Data: data}
		tk := New(Config{
			TurnSettle:         time.Duration(r.Next()%4+1) * time.Second,
			TurnTimeout:        time.Duration(r.Next()%20+5) * time.Second,
			SessionTimeout:     time.Duration(r.Next()%60+10) * time.Second,
			MaxSessionDuration: time.Duration(r.Next()%200+30) * time.Second,
			MaxSessions:        r.Next()%6 + 1,
			MaxSpansPerSession: r.Next()%30 + 2,
		})
		seen := func(ev []Event) {
			for _, e := range ev {
				if e.Session == nil || (e.Kind == EventTurnClosed && (e.TurnIndex < 0 || e.TurnIndex >= len(e.Session.Turns))) {
					t.Fatalf("bad event %+v", e)
				}
				traces := map[string]bool{}
				// A turn event carries a window of the session's last turns (turnEvent),
				// a session end all of them: indexes are consecutive from the first.
				base := 0
				if e.Kind == EventTurnClosed && len(e.Session.Turns) > 0 {
					base = e.Session.Turns[0].Index
				}
				for i, tu := range e.Session.Turns {
					// A turn is its trace's, or a request of a conversation its trace
					// holds (splitTrace): its root span tells them apart.
					if k := tu.TraceID + "/" + tu.RootSpanID; traces[k] {
						t.Fatalf("trace %s root %s is two turns of session %s", tu.TraceID, tu.RootSpanID, e.Session.ID)
					} else {
						traces[k] = true
					}
					if tu.Index != base+i {
						t.Fatalf("turn %d has index %d, want %d", i, tu.Index, base+i)
					}
				}
			}
		}
		clock := testT0
		for steps := 0; steps < 40 && r.Pos < len(r.Data); steps++ {
			switch r.Next() % 6 {
			case 0, 1, 2:
				recs := sessiontest.FuzzRecords(r.Data[r.Pos:min(len(r.Data), r.Pos+r.Next()%64)])
				for i := range recs {
					recs[i].TraceID = fmt.Sprintf("t%d", r.Next()%5)
					if k := r.Next() % 4; k > 0 {
						recs[i].SessionID = fmt.Sprintf("s%d", k)
					}
					recs[i].EndSignal = r.Next()%17 == 0
				}
				seen(tk.Observe(recs, clock))
			case 3, 4:
				step := time.Duration(r.Next()) * 250 * time.Millisecond
				if r.Next()%7 == 0 {
					// A clock that goes back: the timer lists place such times exactly.
					step = -step / 8
				}
				clock = clock.Add(step)
				seen(tk.Advance(clock))
			case 5:
				seen(tk.CloseAll(session.EndReasonShutdown))
			}
			checkAccounting(t, tk)
		}
		seen(tk.CloseAll(session.EndReasonShutdown))
		st := tk.Stats()
		if st.RetainedSpans != 0 || st.OpenTurns != 0 || st.OpenSessions != 0 {
			t.Fatalf("CloseAll left state behind: %+v", st)
		}
		checkAccounting(t, tk)
	})
}
