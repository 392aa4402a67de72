// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

// conversationRun is run n (from 1) of a conversation held in trace tid: a
// handle_conversation_turn marker under the application's span "conv", the agent and its
// LLM call, starting at startMs and lasting 100 ms; sid "" for no session key. Records
// come in the order they end: LLM, agent, marker.
func conversationRun(tid, sid string, n int, startMs int64, user string) []session.SpanRecord {
	id := func(s string) string { return fmt.Sprintf("%s-r%d-%s", tid, n, s) }
	recs := []session.SpanRecord{
		sessiontest.Span(id("l"), id("a"), session.ClassLLM, startMs+10, startMs+80, sessiontest.UsageOf(10, 2), sessiontest.UserMsg(user), sessiontest.Output("answer "+user)),
		sessiontest.Span(id("a"), id("m"), session.ClassAgent, startMs+5, startMs+90, sessiontest.Agent("helper"), sessiontest.UserMsg(user), sessiontest.Output("answer "+user)),
		sessiontest.Span(id("m"), tid+"-conv", session.ClassTurn, startMs, startMs+100, sessiontest.Named("handle_conversation_turn")),
	}
	for i := range recs {
		recs[i].TraceID, recs[i].Service = tid, "shop"
		if sid != "" {
			recs[i].SessionID, recs[i].SessionKey = sid, "gen_ai.conversation.id"
		}
	}
	return recs
}

// conversationRoot is the application's span around the runs of trace tid: the trace
// root, it ends last.
func conversationRoot(tid string, startMs, endMs int64) session.SpanRecord {
	r := sessiontest.Span(tid+"-conv", "", session.ClassOther, startMs, endMs, sessiontest.Trace(tid), sessiontest.Named("conversation"))
	r.Service = "shop"
	return r
}

// turnsOf lists the closed turns of ev as "index:user message:root span".
func turnsOf(ev []Event) []string {
	var out []string
	for _, e := range ev {
		if e.Kind == EventTurnClosed {
			tu := e.Session.Turns[e.TurnIndex]
			out = append(out, fmt.Sprintf("%d:%s:%s", tu.Index, tu.UserMessage, tu.RootSpanID))
		}
	}
	return out
}

// TestTrackerConversationInOneTrace: an application that runs a conversation inside one
// trace (a handle_conversation_turn per user request under its own span) gets one turn
// per request, whether the requests arrive seconds apart (each turn closes on settle and
// the next one opens) or all at once (a replay: the closing trace is split by its
// markers), and however long the user pauses. The application's span is in no turn.
func TestTrackerConversationInOneTrace(t *testing.T) {
	users := []string{"weather in Paris?", "no, Paris in Texas", "and on Sunday?"}
	want := []string{"0:weather in Paris?:c-r1-m", "1:no, Paris in Texas:c-r2-m", "2:and on Sunday?:c-r3-m"}
	for _, pause := range []float64{5, 90, 400} {
		t.Run(fmt.Sprintf("requests %gs apart", pause), func(t *testing.T) {
			tk := New(Config{}) // settle 2s, turn timeout 60s, session timeout 5m
			var got []string
			var sessions []string
			for i, u := range users {
				at := float64(i) * pause
				startMs := int64(at * 1000)
				if i > 0 {
					ended := kinds(tk.Advance(atSec(at - 1))) // the processor's ticker
					if pause > 300 {
						assert.Equal(t, []string{"session_ended:conv-1:session_timeout"}, ended)
					} else {
						assert.Empty(t, ended)
					}
				}
				require.Empty(t, tk.Observe(conversationRun("c", "conv-1", i+1, startMs, u), atSec(at)))
				ev := tk.Advance(atSec(at + 2))
				got = append(got, turnsOf(ev)...)
				for _, e := range ev {
					if e.Kind == EventTurnClosed {
						sessions = append(sessions, e.Session.ID)
					}
				}
			}
			end := float64(len(users)-1)*pause + 1
			assert.Empty(t, tk.Observe([]session.SpanRecord{conversationRoot("c", 0, int64(end*1000))}, atSec(end)))
			ev := tk.Advance(atSec(end + 400))
			if pause < 300 {
				assert.Equal(t, want, got, "one turn per request, in order")
				require.Equal(t, []string{"session_ended:conv-1:session_timeout"}, kinds(ev))
				assert.Len(t, ev[0].Session.Turns, 3)
			} else {
				// Each pause ends the session (session_timeout); the next request
				// continues it (the processor's continuation store numbers the turns
				// across): the tracker numbers each part from 0.
				assert.Equal(t, []string{"0:weather in Paris?:c-r1-m", "0:no, Paris in Texas:c-r2-m", "0:and on Sunday?:c-r3-m"}, got)
			}
			assert.Equal(t, []string{"conv-1", "conv-1", "conv-1"}, sessions)
			st := tk.Stats()
			assert.Equal(t, uint64(9), st.SpansAssembled)
			assert.Equal(t, uint64(1), st.LateSpans, "the application's span, ended after the turns closed")
			checkAccounting(t, tk)
		})
	}
	t.Run("all at once", func(t *testing.T) {
		tk := New(Config{})
		var recs []session.SpanRecord
		for i, u := range users {
			recs = append(recs, conversationRun("c", "conv-1", i+1, int64(i)*300, u)...)
		}
		recs = append(recs, conversationRoot("c", 0, 1000))
		require.Empty(t, tk.Observe(recs, atSec(0)))
		ev := tk.Advance(atSec(2))
		assert.Equal(t, want, turnsOf(ev))
		st := tk.Stats()
		assert.Equal(t, uint64(9), st.SpansAssembled)
		assert.Equal(t, uint64(1), st.SpansDiscarded, "the application's span is in no turn")
		assert.Equal(t, 0, st.OpenTurns)
		checkAccounting(t, tk)
	})
	t.Run("a request still running when the trace settles", func(t *testing.T) {
		tk := New(Config{})
		run1, run2 := conversationRun("c", "conv-1", 1, 0, users[0]), conversationRun("c", "conv-1", 2, 300, users[1])
		// Run 2's LLM call arrives with run 1; its agent and marker come 5 s later.
		require.Empty(t, tk.Observe(append(run1, run2[0]), atSec(0)))
		ev := tk.Advance(atSec(2))
		assert.Equal(t, want[:1], turnsOf(ev))
		assert.Equal(t, 1, tk.Stats().OpenTurns, "run 2 stays open")
		require.Empty(t, tk.Observe(run2[1:], atSec(5)))
		ev = tk.Advance(atSec(7))
		assert.Equal(t, want[1:2], turnsOf(ev))
		require.Len(t, ev, 1)
		assert.Equal(t, 3, ev[0].Session.Turns[1].SpanCount, "run 2 whole: its LLM call came before the close")
		checkAccounting(t, tk)
	})
	t.Run("a late span of a closed request", func(t *testing.T) {
		tk := New(Config{})
		require.Empty(t, tk.Observe(conversationRun("c", "conv-1", 1, 0, users[0]), atSec(0)))
		tk.Advance(atSec(2))
		run2 := conversationRun("c", "conv-1", 2, 5000, users[1])
		require.Empty(t, tk.Observe(run2[:1], atSec(5)))
		// A tool span of run 1 (it started within run 1) arrives while run 2 is open.
		late := sessiontest.Span("c-r1-late", "c-r1-a", session.ClassTool, 20, 30, sessiontest.Trace("c"), sessiontest.Tool("lookup", "x", "{}"))
		require.Empty(t, tk.Observe([]session.SpanRecord{late}, atSec(5.1)))
		require.Empty(t, tk.Observe(run2[1:], atSec(5.2)))
		ev := tk.Advance(atSec(8))
		assert.Equal(t, want[1:2], turnsOf(ev))
		require.Len(t, ev, 1)
		s := ev[0].Session
		assert.Equal(t, []string{session.AnomalyLateSpan}, s.Turns[0].Anomalies, "noted on run 1's turn")
		assert.Equal(t, 3, s.Turns[1].SpanCount, "not part of run 2")
		assert.Equal(t, uint64(1), tk.Stats().LateSpans)
		checkAccounting(t, tk)
	})
}

// TestTrackerConversationInOneTraceWithoutSessionKey: without a session key the trace is
// the session. One that holds a conversation stays open for its next turns and ends when
// its root arrives (single_trace), or after session_timeout.
func TestTrackerConversationInOneTraceWithoutSessionKey(t *testing.T) {
	tk := New(Config{})
	var got []string
	for i, u := range []string{"first", "second"} {
		at := float64(i) * 5
		require.Empty(t, tk.Observe(conversationRun("c", "", i+1, int64(at*1000), u), atSec(at)))
		ev := tk.Advance(atSec(at + 2))
		got = append(got, turnsOf(ev)...)
		require.Equal(t, []string{"turn_closed:c"}, kinds(ev), "the session stays open")
		assert.Equal(t, session.KeySourceTraceID, ev[0].Session.KeySource)
	}
	assert.Equal(t, []string{"0:first:c-r1-m", "1:second:c-r2-m"}, got)
	require.Empty(t, tk.Observe([]session.SpanRecord{conversationRoot("c", 0, 6000)}, atSec(8)))
	ev := tk.Advance(atSec(8.1))
	require.Equal(t, []string{"session_ended:c:single_trace"}, kinds(ev), "the trace's root ends it")
	assert.Len(t, ev[0].Session.Turns, 2)
	assert.False(t, ev[0].Session.Partial)
	checkAccounting(t, tk)
}

// TestTrackerTraceOfOneTurnIsNotSplit: the usual trace is one turn whatever its markers:
// a marker that is the trace's root, a marker under an agent (a sub-workflow), a marker
// whose parent is remote (its process's whole part of the trace), and a marker whose
// trace root (an HTTP span) arrived with it.
func TestTrackerTraceOfOneTurnIsNotSplit(t *testing.T) {
	withParent := func(parent string, remote bool) []session.SpanRecord {
		recs := conversationRun("c", "conv-1", 1, 0, "hello")
		recs[2].ParentSpanID, recs[2].ParentRemote = parent, remote
		// A second marker after the first (a later request in the same trace).
		more := conversationRun("c", "conv-1", 2, 300, "again")
		more[2].ParentSpanID, more[2].ParentRemote = parent, remote
		return append(recs, more...)
	}
	sub := withParent("c-top", false)
	sub = append(sub, sessiontest.Span("c-top", "", session.ClassAgent, 0, 1000, sessiontest.Trace("c"), sessiontest.Agent("boss"), sessiontest.Session("conv-1")))
	http := withParent("c-http", false)
	http = append(http, sessiontest.Span("c-http", "", session.ClassOther, 0, 1000, sessiontest.Trace("c")))
	t.Run("markers under an agent", func(t *testing.T) {
		tk := New(Config{})
		tk.Observe(sub, atSec(0))
		ev := tk.Advance(atSec(61))
		require.Len(t, turnsOf(ev), 1, "one turn")
		checkAccounting(t, tk)
	})
	t.Run("a caller in another process", func(t *testing.T) {
		// Two requests from a caller that does not export here: two turns, but the
		// process's part of the trace is whole (later records are late, as before).
		tk := New(Config{})
		tk.Observe(withParent("caller", true), atSec(0))
		ev := tk.Advance(atSec(2))
		require.Len(t, turnsOf(ev), 2, "one turn per request")
		tk.Observe(conversationRun("c", "conv-1", 3, 5000, "later")[:2], atSec(5))
		assert.Empty(t, turnsOf(tk.Advance(atSec(100))))
		assert.Equal(t, uint64(2), tk.Stats().LateSpans)
		checkAccounting(t, tk)
	})
	t.Run("the trace root arrived with the markers", func(t *testing.T) {
		tk := New(Config{})
		tk.Observe(http, atSec(0))
		ev := tk.Advance(atSec(2))
		assert.Len(t, turnsOf(ev), 2, "one turn per request")
		// Nothing of the trace can follow its root: a later record is late.
		tk.Observe(conversationRun("c", "conv-1", 3, 5000, "later"), atSec(5))
		assert.Empty(t, turnsOf(tk.Advance(atSec(7))))
		assert.Equal(t, uint64(3), tk.Stats().LateSpans)
		checkAccounting(t, tk)
	})
	t.Run("a server span around one request", func(t *testing.T) {
		// The Bedrock AgentCore shape: POST /invocations (its caller not exported) holds
		// the marker; an HTTP call of the application's follows the answer.
		tk := New(Config{})
		recs := conversationRun("c", "conv-1", 1, 0, "hello")
		recs[2].ParentSpanID = "c-post"
		recs = append(recs,
			sessiontest.Span("c-post", "caller", session.ClassOther, 0, 500, sessiontest.Trace("c"), sessiontest.Session("conv-1")),
			sessiontest.Span("c-after", "c-post", session.ClassOther, 200, 300, sessiontest.Trace("c"), sessiontest.Session("conv-1")))
		tk.Observe(recs, atSec(0))
		ev := tk.Advance(atSec(2))
		require.Len(t, turnsOf(ev), 1)
		assert.Equal(t, 5, ev[0].Session.Turns[0].SpanCount, "the server span and the call after the answer are the request's")
		checkAccounting(t, tk)
	})
	t.Run("the marker is the trace root", func(t *testing.T) {
		tk := New(Config{})
		recs := conversationRun("c", "conv-1", 1, 0, "hello")
		recs[2].ParentSpanID = ""
		tk.Observe(recs, atSec(0))
		require.Len(t, turnsOf(tk.Advance(atSec(2))), 1)
		tk.Observe(conversationRun("c", "conv-1", 2, 5000, "later")[:2], atSec(5))
		assert.Empty(t, turnsOf(tk.Advance(atSec(100))))
		assert.Equal(t, uint64(2), tk.Stats().LateSpans, "late, as before")
		checkAccounting(t, tk)
	})
}
