// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

var testT0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

// atSec is the tracker clock: seconds after testT0.
func atSec(sec float64) time.Time { return testT0.Add(time.Duration(sec * float64(time.Second))) }

// turnRecs is a small complete turn of trace tid in session sid ("" for none),
// starting at startMs: an agent root with one LLM call and one tool call.
func turnRecs(tid, sid string, startMs int64, user string) []session.SpanRecord {
	recs := []session.SpanRecord{
		sessiontest.Span(tid+"-l", tid+"-a", session.ClassLLM, startMs+1, startMs+10, sessiontest.UsageOf(10, 2), sessiontest.Requests(sessiontest.Req("c", "lookup", `{}`))),
		sessiontest.Span(tid+"-x", tid+"-a", session.ClassTool, startMs+11, startMs+12, sessiontest.Tool("lookup", "c", "")),
		sessiontest.Span(tid+"-a", "", session.ClassAgent, startMs, startMs+20, sessiontest.Agent("helper"), sessiontest.UserMsg(user), sessiontest.Output("done")),
	}
	for i := range recs {
		recs[i].TraceID = tid
		if sid != "" {
			recs[i].SessionID, recs[i].SessionKey = sid, "session.id"
		}
		recs[i].Service = "shop"
	}
	return recs
}

func kinds(ev []Event) []string {
	var out []string
	for _, e := range ev {
		s := e.Kind.String() + ":" + e.Session.ID
		if e.Kind == EventSessionEnded {
			s += ":" + string(e.Session.EndReason)
			if e.Session.Partial {
				s += ":partial"
			}
		}
		out = append(out, s)
	}
	return out
}

// checkAccounting asserts that every observed record is retained or counted once.
func checkAccounting(t *testing.T, tk *Tracker) {
	t.Helper()
	s := tk.Stats()
	assert.Equal(t, s.SpansObserved,
		uint64(s.RetainedSpans)+s.SpansAssembled+s.SpansDiscarded+s.SpansIgnored+s.SpansDropped+s.LateSpans,
		"every record is retained or counted: %+v", s)
	checkTimers(t, tk)
}

func TestTrackerSettleAndSessionTimeout(t *testing.T) {
	tk := New(Config{})
	recs := turnRecs("t1", "s1", 0, "hello")
	// The root arrives last; the first batch holds the children only.
	assert.Empty(t, tk.Observe(recs[:2], atSec(0)))
	assert.Empty(t, tk.Advance(atSec(1.4)))
	assert.Empty(t, tk.Observe(recs[2:], atSec(1.5)), "a new span restarts the settle window")
	assert.Empty(t, tk.Advance(atSec(3.4)))
	st := tk.Stats()
	assert.Equal(t, 1, st.OpenSessions)
	assert.Equal(t, 1, st.OpenTurns)
	assert.Equal(t, 3, st.RetainedSpans)

	ev := tk.Advance(atSec(3.5))
	require.Equal(t, []string{"turn_closed:s1"}, kinds(ev))
	s := ev[0].Session
	assert.Equal(t, 0, ev[0].TurnIndex)
	require.Len(t, s.Turns, 1)
	assert.False(t, s.Turns[0].Partial)
	assert.Equal(t, "hello", s.Turns[0].UserMessage)
	assert.Equal(t, "session.id", s.KeySource)
	assert.Equal(t, "shop", s.Service)
	assert.Equal(t, 0, tk.Stats().RetainedSpans, "closed turns keep no records")

	assert.Empty(t, tk.Advance(atSec(1.5+299.9)), "session_timeout runs from the last record")
	ev = tk.Advance(atSec(1.5 + 300))
	require.Equal(t, []string{"session_ended:s1:session_timeout"}, kinds(ev))
	s = ev[0].Session
	assert.False(t, s.Partial)
	assert.Equal(t, session.Usage{InputTokens: 10, OutputTokens: 2, LLMCalls: 1}, s.Usage)
	assert.InDelta(t, 20.0, s.TotalLatencyMs, 1e-9)
	assert.Equal(t, s.Turns[0].StartedAt, s.StartedAt)
	assert.Equal(t, s.Turns[0].EndedAt, s.EndedAt)
	require.Len(t, s.Agents, 1)
	assert.Equal(t, "helper", s.Agents[0].ID)
	assert.Equal(t, 0, tk.Stats().OpenSessions)
	checkAccounting(t, tk)
}

func TestTrackerTurnTimeoutWithoutRoot(t *testing.T) {
	tk := New(Config{TurnTimeout: 10 * time.Second})
	// A handoff span (not a root class) arrives, then an LLM span under it: the LLM's
	// parent is a GenAI span that is present, so no root record arrived.
	tk.Observe([]session.SpanRecord{sessiontest.Span("h", "gone", session.ClassHandoff, 0, 1, sessiontest.Session("s1"))}, atSec(0))
	tk.Observe([]session.SpanRecord{sessiontest.Span("l", "h", session.ClassLLM, 1, 9, sessiontest.Session("s1"))}, atSec(1))
	assert.Empty(t, tk.Advance(atSec(10.9)), "no root: settle does not apply")
	ev := tk.Advance(atSec(11))
	require.Equal(t, []string{"turn_closed:s1"}, kinds(ev))
	turn := ev[0].Session.Turns[0]
	assert.True(t, turn.Partial, "closed by turn_timeout without root")
	assert.Empty(t, turn.CutBy, "the run stopped, not the collector: its answer is judged")
	assert.Equal(t, 2, turn.SpanCount)
	checkAccounting(t, tk)
}

// TestTrackerRemoteParent: an agent span whose parent is in the caller's process (a W3C
// traceparent: the OTLP flags say the parent is remote) is no root on arrival, since the
// caller may export here too. When the caller's spans never come, the turn closes at
// turn_timeout, or with its idle session, whole (not partial): the spans here are all
// there is. When they come, the caller's root closes the turn with them all. The same
// span with a parent that is merely absent (a run that crashed) closes partial.
func TestTrackerRemoteParent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		remote      bool
		sessionIdle bool // session_timeout before turn_timeout
	}{{"remote", true, false}, {"remote, session idle first", true, true}, {"absent", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{TurnTimeout: 10 * time.Second}
			if tc.sessionIdle {
				cfg.SessionTimeout = 5 * time.Second
			}
			tk := New(cfg)
			recs := turnRecs("t1", "s1", 0, "hello")
			recs[2].ParentSpanID, recs[2].ParentRemote = "caller", tc.remote
			tk.Observe(recs, atSec(0))
			assert.Empty(t, tk.Advance(atSec(2.1)), "no root: settle does not apply")
			var ev []Event
			for sec := 3.0; len(ev) == 0 && sec <= 11; sec++ {
				ev = tk.Advance(atSec(sec))
			}
			require.NotEmpty(t, ev)
			require.Equal(t, "turn_closed:s1", kinds(ev)[0])
			turn := ev[0].Session.Turns[0]
			assert.Equal(t, !tc.remote, turn.Partial)
			assert.Equal(t, "hello", turn.UserMessage)
			checkAccounting(t, tk)
		})
	}
	// The caller exports here too: its root arrives after the callee's span went
	// quiet for longer than turn_settle, and the turn closes once, with both.
	tk := New(Config{TurnTimeout: 10 * time.Second})
	callee := turnRecs("t2", "s2", 0, "hello")
	callee[2].ParentSpanID, callee[2].ParentRemote = "caller", true
	tk.Observe(callee, atSec(0))
	assert.Empty(t, tk.Advance(atSec(5)))
	caller := sessiontest.Span("caller", "", session.ClassAgent, 0, 30, sessiontest.Agent("orchestrator"), sessiontest.UserMsg("hello"))
	caller.TraceID, caller.SessionID, caller.SessionKey = "t2", "s2", "session.id"
	tk.Observe([]session.SpanRecord{caller}, atSec(5))
	ev := tk.Advance(atSec(7.1))
	require.Equal(t, []string{"turn_closed:s2"}, kinds(ev))
	assert.False(t, ev[0].Session.Turns[0].Partial)
	assert.Equal(t, 4, ev[0].Session.Turns[0].SpanCount, "the callee's spans and the caller's root")
	checkAccounting(t, tk)
}

func TestTrackerTraceWithoutSessionKey(t *testing.T) {
	tk := New(Config{})
	tk.Observe(turnRecs("tA", "", 0, "hi"), atSec(0))
	st := tk.Stats()
	assert.Equal(t, 1, st.PendingTraces)
	assert.Equal(t, 0, st.OpenSessions)
	ev := tk.Advance(atSec(2))
	require.Equal(t, []string{"turn_closed:tA", "session_ended:tA:single_trace"}, kinds(ev))
	assert.Equal(t, "trace_id", ev[1].Session.KeySource)
	assert.False(t, ev[1].Session.Partial)
	// A late span of that trace is counted, not turned into a new session.
	assert.Empty(t, tk.Observe([]session.SpanRecord{sessiontest.Span("late", "tA-a", session.ClassLLM, 3, 4, sessiontest.Trace("tA"))}, atSec(3)))
	assert.Empty(t, tk.Advance(atSec(100)))
	assert.Equal(t, uint64(1), tk.Stats().LateSpans)
	checkAccounting(t, tk)
}

func TestTrackerSessionKeyOnALaterRecord(t *testing.T) {
	tk := New(Config{})
	recs := turnRecs("t1", "", 0, "hi")
	recs[2].SessionID, recs[2].SessionKey = "conv-9", "gen_ai.conversation.id"
	recs2 := turnRecs("t2", "conv-9", 1000, "more")
	recs2[0].SessionID = "other" // a trace joins the session of its first keyed record
	tk.Observe(recs[:2], atSec(0))
	assert.Equal(t, 1, tk.Stats().PendingTraces)
	tk.Observe(recs[2:], atSec(0.1))
	tk.Observe(recs2, atSec(1))
	assert.Equal(t, Stats{OpenSessions: 2, OpenTurns: 2, RetainedSpans: 6, SpansObserved: 6},
		tk.Stats(), "t2 joined 'other' (its first keyed record)")
	ev := tk.Advance(atSec(3))
	require.Equal(t, []string{"turn_closed:conv-9", "turn_closed:other"}, kinds(ev))
	require.Len(t, ev[0].Session.Turns, 1)
	assert.Equal(t, "gen_ai.conversation.id", ev[0].Session.KeySource)
}

func TestTrackerTurnOrderAndLateSpan(t *testing.T) {
	tk := New(Config{})
	// Turn 2 (later start) closes before turn 1.
	tk.Observe(turnRecs("t2", "s", 5000, "second"), atSec(0))
	ev := tk.Advance(atSec(2))
	require.Len(t, ev, 1)
	assert.Equal(t, 0, ev[0].TurnIndex)
	first := ev[0].Session
	tk.Observe(turnRecs("t1", "s", 0, "first"), atSec(3))
	ev = tk.Advance(atSec(5))
	require.Len(t, ev, 1)
	assert.Equal(t, 1, ev[0].TurnIndex, "the closed turn is the last of the window")
	s := ev[0].Session
	require.Len(t, s.Turns, 2, "the window: the previous closed turn and this one")
	assert.Equal(t, []string{"second", "first"}, []string{s.Turns[0].UserMessage, s.Turns[1].UserMessage})
	assert.Equal(t, []int{0, 1}, []int{s.Turns[0].Index, s.Turns[1].Index}, "indexes follow close order and never shift")
	assert.Equal(t, 0, first.Turns[0].Index, "an earlier snapshot is not modified")

	// A late span of t2: counted on the session as an anomaly of that turn, not assembled.
	assert.Empty(t, tk.Observe([]session.SpanRecord{sessiontest.Span("t2-late", "t2-a", session.ClassTool, 5001, 5002, sessiontest.Trace("t2"))}, atSec(6)))
	ev = tk.Advance(atSec(6 + 300))
	require.Equal(t, []string{"session_ended:s:session_timeout"}, kinds(ev))
	s = ev[0].Session
	assert.Equal(t, []string{session.AnomalyLateSpan}, s.Turns[0].Anomalies)
	assert.Equal(t, 3, s.Turns[0].SpanCount, "the late span was not re-assembled")
	assert.Empty(t, first.Turns[0].Anomalies, "copy on write")
	assert.Equal(t, uint64(1), tk.Stats().LateSpans)
	checkAccounting(t, tk)
}

// TestTrackerTurnsArrivingTogetherFollowTheirStart: the turns of a recorded session (the
// agentsession receiver, a replay) arrive in one request and close in one sweep; they are
// numbered in start order whatever their trace ids, on settle and on session end.
func TestTrackerTurnsArrivingTogetherFollowTheirStart(t *testing.T) {
	for _, ids := range [][2]string{{"t-a", "t-b"}, {"t-b", "t-a"}} {
		first, second := ids[0], ids[1]
		recs := append(turnRecs(second, "s", 5000, "second"), turnRecs(first, "s", 0, "first")...)

		tk := New(Config{})
		tk.Observe(recs, atSec(0))
		ev := tk.Advance(atSec(2))
		require.Len(t, ev, 2)
		s := ev[1].Session
		assert.Equal(t, []string{"first", "second"}, []string{s.Turns[0].UserMessage, s.Turns[1].UserMessage}, "trace ids %v", ids)

		// Without their roots the turns stay open until the session ends.
		var children []session.SpanRecord
		for _, r := range recs {
			if r.ParentSpanID != "" {
				children = append(children, r)
			}
		}
		tk = New(Config{})
		tk.Observe(children, atSec(0))
		ev = tk.CloseAll(session.EndReasonShutdown)
		require.Equal(t, []string{"turn_closed:s", "turn_closed:s", "session_ended:s:shutdown:partial"}, kinds(ev))
		s = ev[2].Session
		assert.Equal(t, []string{first, second}, []string{s.Turns[0].TraceID, s.Turns[1].TraceID}, "trace ids %v", ids)
	}
}

func TestTrackerEndSignal(t *testing.T) {
	tk := New(Config{})
	yes := true
	recs := turnRecs("t1", "s", 0, "submit")
	recs[2].EndSignal = true
	recs[2].Outcome = &yes
	tk.Observe(recs, atSec(0))
	assert.Empty(t, tk.Advance(atSec(1)), "the open turn closes first")
	ev := tk.Advance(atSec(2))
	require.Equal(t, []string{"turn_closed:s", "session_ended:s:end_signal"}, kinds(ev))
	s := ev[1].Session
	assert.False(t, s.Partial)
	require.NotNil(t, s.Outcome)
	assert.True(t, *s.Outcome)
}

// TestTrackerOutcomeOnATraceWithoutGenAI ends a session with the end signal and the
// outcome on a span of its own trace, outside any turn (the receiver's proctor submit
// after the candidate's last answer): the trace makes no turn, but its outcome is the
// session's.
func TestTrackerOutcomeOnATraceWithoutGenAI(t *testing.T) {
	for _, outcome := range []bool{true, false} {
		tk := New(Config{})
		tk.Observe(turnRecs("t1", "s", 0, "question"), atSec(0))
		submit := sessiontest.Span("sub", "", session.ClassOther, 30, 31, sessiontest.Trace("t-submit"), sessiontest.Session("s"))
		submit.EndSignal, submit.Outcome = true, &outcome
		tk.Observe([]session.SpanRecord{submit}, atSec(0.5))
		ev := tk.Advance(atSec(3))
		require.Equal(t, []string{"turn_closed:s", "session_ended:s:end_signal"}, kinds(ev))
		s := ev[1].Session
		require.Len(t, s.Turns, 1, "the submit trace is no turn")
		require.NotNil(t, s.Outcome)
		assert.Equal(t, outcome, *s.Outcome)
		checkAccounting(t, tk)
	}
}

// TestTrackerOutcomeAfterTheSessionEnded: the proctor's submit comes after the session
// went idle (session_timeout) or after a restart: its trace, with no GenAI span and no
// turn, still ends the session it names with its outcome, so that the processor makes a
// new revision of the stored turns with the verdict (audit f, finding 1). A trace without
// outcome and without turn (a plain end) ends nothing, as before.
func TestTrackerOutcomeAfterTheSessionEnded(t *testing.T) {
	tk := New(Config{SessionTimeout: 5 * time.Second})
	tk.Observe(turnRecs("t1", "s", 0, "question"), atSec(0))
	require.Equal(t, []string{"turn_closed:s", "session_ended:s:session_timeout"}, kinds(tk.Advance(atSec(10))))
	failed := false
	submit := sessiontest.Span("sub", "", session.ClassOther, 30, 31, sessiontest.Trace("t-submit"), sessiontest.Session("s"))
	submit.EndSignal, submit.Outcome = true, &failed
	tk.Observe([]session.SpanRecord{submit}, atSec(40))
	ev := tk.Advance(atSec(43))
	require.Equal(t, []string{"session_ended:s:end_signal"}, kinds(ev))
	s := ev[0].Session
	assert.Empty(t, s.Turns, "no turn of its own: the processor continues the stored ones")
	require.NotNil(t, s.Outcome)
	assert.False(t, *s.Outcome)
	checkAccounting(t, tk)

	end := sessiontest.Span("end", "", session.ClassOther, 50, 51, sessiontest.Trace("t-end"), sessiontest.Session("s"))
	end.EndSignal = true
	tk.Observe([]session.SpanRecord{end}, atSec(50))
	assert.Empty(t, kinds(tk.Advance(atSec(53))), "nothing to report without a turn or an outcome")
	checkAccounting(t, tk)
}

// TestTrackerBestSessionKeyOfTheTrace: the session key is the first present of the
// configured list on any span of the trace (DESIGN §4), whatever span arrives first.
// Bedrock AgentCore (ADOT) puts the runtime's session.id on every span; the agent span,
// which ends last, also holds gen_ai.conversation.id, which comes first in the list.
func TestTrackerBestSessionKeyOfTheTrace(t *testing.T) {
	ex := conventions.NewExtractor(conventions.Config{SessionKeys: conventions.DefaultSessionKeys()})
	tk := New(Config{Extractor: ex})
	for i, tid := range []string{"t1", "t2"} {
		recs := turnRecs(tid, "runtime-7", int64(i)*1000, "question")
		agent := &recs[2]
		agent.SessionID, agent.SessionKey = "conv-A", semconv.GenAIConversationID
		tk.Observe(recs, atSec(float64(i)*5))
		tk.Advance(atSec(float64(i)*5 + 3))
	}
	ev := tk.Advance(atSec(1000))
	require.Equal(t, []string{"session_ended:conv-A:session_timeout"}, kinds(ev), "no session runtime-7")
	assert.Len(t, ev[0].Session.Turns, 2)
	assert.Equal(t, semconv.GenAIConversationID, ev[0].Session.KeySource)
	checkAccounting(t, tk)

	// The same id under a better key (ADK: gcp.vertex.agent.session_id on the model
	// spans, gen_ai.conversation.id on the agent span) records that key.
	for _, agentKey := range []string{semconv.GenAIConversationID, "resource:" + semconv.GenAIConversationID} {
		tk = New(Config{Extractor: ex})
		recs := turnRecs("t3", "adk-1", 0, "question")
		for i := range recs[:2] {
			recs[i].SessionKey = semconv.ADKSessionID
		}
		recs[2].SessionKey = agentKey
		tk.Observe(recs[:2], atSec(0))
		tk.Observe(recs[2:], atSec(0.1))
		ev = tk.Advance(atSec(1000))
		require.Equal(t, []string{"turn_closed:adk-1", "session_ended:adk-1:session_timeout"}, kinds(ev))
		want := semconv.GenAIConversationID
		if agentKey != want {
			want = semconv.ADKSessionID // a key on a span beats any key on the resource
		}
		assert.Equal(t, want, ev[1].Session.KeySource)
	}
}

func TestTrackerMaxSessionDuration(t *testing.T) {
	tk := New(Config{MaxSessionDuration: time.Minute})
	tk.Observe(turnRecs("t1", "s", 0, "a"), atSec(0))
	tk.Advance(atSec(2))
	tk.Observe(turnRecs("t2", "s", 50_000, "b")[:2], atSec(59))
	ev := tk.Advance(atSec(60))
	require.Equal(t, []string{"turn_closed:s", "session_ended:s:max_session_duration:partial"}, kinds(ev))
	s := ev[1].Session
	require.Len(t, s.Turns, 2)
	assert.False(t, s.Turns[0].Partial)
	assert.True(t, s.Turns[1].Partial, "cut short by the partial close")
	checkAccounting(t, tk)
}

func TestTrackerMaxSessionsEviction(t *testing.T) {
	tk := New(Config{MaxSessions: 2})
	tk.Observe(turnRecs("t1", "s1", 0, "a"), atSec(0))
	tk.Observe(turnRecs("t2", "s2", 0, "b"), atSec(1))
	tk.Observe(turnRecs("t3", "s1", 10, "c")[:1], atSec(1.5)) // s1 becomes the most recent
	ev := tk.Observe(turnRecs("t4", "s3", 0, "d"), atSec(1.6))
	require.Equal(t, []string{"turn_closed:s2", "session_ended:s2:max_sessions:partial"}, kinds(ev),
		"the least recently active session is evicted")
	s := ev[1].Session
	require.Len(t, s.Turns, 1)
	assert.True(t, s.Turns[0].Partial)
	assert.Empty(t, s.Turns[0].CutBy, "its root arrived: its answer is there to judge")
	assert.Equal(t, 3, s.Turns[0].SpanCount, "nothing lost")
	// A pending trace (no key) counts as a session too.
	ev = tk.Observe(turnRecs("t5", "", 0, "e"), atSec(1.7))
	require.Equal(t, []string{"turn_closed:s1", "turn_closed:s1", "session_ended:s1:max_sessions:partial"}, kinds(ev),
		"both open turns of s1 (t1, t3) are closed")
	require.Len(t, ev[2].Session.Turns, 2)
	assert.Empty(t, ev[2].Session.Turns[0].CutBy, "t1 is whole")
	assert.Equal(t, session.EndReasonMaxSessions, ev[2].Session.Turns[1].CutBy, "t3, without its root: its answer may still come")
	st := tk.Stats()
	assert.Equal(t, uint64(2), st.SessionsEvicted)
	assert.Equal(t, 1, st.OpenSessions)
	assert.Equal(t, 1, st.PendingTraces)
	checkAccounting(t, tk)
	tk.Observe(turnRecs("t6", "s3", 50, "f")[:1], atSec(1.8)) // s3's next turn, its root not yet here
	ev = tk.CloseAll(session.EndReasonShutdown)
	require.Equal(t, []string{"turn_closed:s3", "turn_closed:s3", "session_ended:s3:shutdown:partial",
		"turn_closed:t5", "session_ended:t5:shutdown:partial"}, kinds(ev))
	require.Len(t, ev[2].Session.Turns, 2)
	assert.Empty(t, ev[2].Session.Turns[0].CutBy, "a turn whose root arrived is judged at shutdown too")
	assert.Equal(t, session.EndReasonShutdown, ev[2].Session.Turns[1].CutBy)
	assert.Equal(t, uint64(14), tk.Stats().SpansAssembled, "every record of the 6 traces")
	checkAccounting(t, tk)
}

func TestTrackerMaxSpansPerSession(t *testing.T) {
	tk := New(Config{MaxSpansPerSession: 4})
	tk.Observe(turnRecs("t1", "s", 0, "a"), atSec(0))
	tk.Advance(atSec(2))
	assert.Empty(t, tk.Observe(turnRecs("t2", "s", 100, "b"), atSec(3)),
		"the limit bounds retained spans: t1's were released when it closed")
	ev := tk.Observe(turnRecs("t2b", "s", 150, "b2"), atSec(3))
	require.Equal(t, []string{"turn_closed:s", "turn_closed:s", "session_ended:s:max_spans_per_session:partial"}, kinds(ev))
	s := ev[2].Session
	require.Len(t, s.Turns, 3)
	assert.Equal(t, 2, s.Turns[2].SpanCount, "closed with the record that exceeded the limit")
	assert.Equal(t, uint64(1), tk.Stats().SpansDropped, "the rest of the batch is counted, not retained")
	// Further records of that session (new trace) and trace are dropped until the timeout.
	assert.Empty(t, tk.Observe(turnRecs("t3", "s", 200, "c"), atSec(10)))
	assert.Empty(t, tk.Advance(atSec(11)))
	assert.Equal(t, uint64(4), tk.Stats().SpansDropped)
	assert.Equal(t, 0, tk.Stats().OpenSessions)
	// A pending trace that later names the dead session is dropped with its records.
	tk.Observe(turnRecs("t4", "", 300, "d")[:2], atSec(12))
	tk.Observe(turnRecs("t4", "s", 300, "d")[2:], atSec(12))
	assert.Equal(t, uint64(7), tk.Stats().SpansDropped)
	assert.Equal(t, 0, tk.Stats().OpenTurns)
	checkAccounting(t, tk)
	// After session_timeout of silence the id is accepted again.
	tk.Advance(atSec(12 + 300))
	tk.Observe(turnRecs("t5", "s", 400, "e"), atSec(313))
	assert.Equal(t, 1, tk.Stats().OpenSessions)
	checkAccounting(t, tk)
}

func TestTrackerMaxSpansPendingTrace(t *testing.T) {
	tk := New(Config{MaxSpansPerSession: 2})
	ev := tk.Observe(turnRecs("t1", "", 0, "a"), atSec(0))
	require.Equal(t, []string{"turn_closed:t1", "session_ended:t1:max_spans_per_session:partial"}, kinds(ev))
	assert.Empty(t, tk.Observe(turnRecs("t1", "", 0, "a")[:1], atSec(1)))
	assert.Equal(t, uint64(1), tk.Stats().SpansDropped)
	checkAccounting(t, tk)
}

func TestTrackerIgnoresEvaluationAndNonGenAITraces(t *testing.T) {
	tk := New(Config{})
	tk.Observe([]session.SpanRecord{
		sessiontest.Span("e", "x", session.ClassEvaluation, 0, 1, sessiontest.Session("s")),
		sessiontest.Span("h", "", session.ClassOther, 0, 1, sessiontest.Trace("http-only"), sessiontest.Session("s2")),
	}, atSec(0))
	st := tk.Stats()
	assert.Equal(t, uint64(1), st.SpansIgnored)
	assert.Equal(t, 1, st.OpenTurns)
	assert.Empty(t, tk.Advance(atSec(60)), "no GenAI span: no turn")
	assert.Empty(t, tk.Advance(atSec(60+300)), "a session without turns is not reported")
	st = tk.Stats()
	assert.Equal(t, uint64(1), st.SpansDiscarded)
	assert.Equal(t, uint64(1), st.EmptySessions)
	assert.Equal(t, 0, st.OpenSessions)
	checkAccounting(t, tk)
}

func TestTrackerRegistryWins(t *testing.T) {
	tk := New(Config{Registry: []session.AgentDefinition{{
		ID: "helper", Name: "helper", Tools: []session.ToolDefinition{{Name: "lookup", Parameters: []byte(`{"type":"object"}`)}},
	}}})
	recs := turnRecs("t1", "s", 0, "a")
	recs[0].ToolDefs = []session.ToolDefinition{{Name: "shell"}}
	recs2 := turnRecs("t2", "s", 100, "b")
	recs2[2].AgentName = "other"
	recs2[0].ToolDefs = []session.ToolDefinition{{Name: "search"}}
	recs3 := turnRecs("t3", "s", 200, "c")
	recs3[2].AgentName = "other"
	recs3[0].ToolDefs = []session.ToolDefinition{{Name: "fetch"}}
	tk.Observe(append(append(recs, recs2...), recs3...), atSec(0))
	tk.Advance(atSec(2))
	ev := tk.CloseAll(session.EndReasonShutdown)
	require.Len(t, ev, 1)
	agents := ev[0].Session.Agents
	require.Len(t, agents, 2)
	assert.Equal(t, "config", agents[0].ToolsSource)
	assert.Equal(t, []session.ToolDefinition{{Name: "lookup", Parameters: []byte(`{"type":"object"}`)}}, agents[0].Tools)
	assert.Equal(t, "other", agents[1].ID)
	assert.Equal(t, "trace", agents[1].ToolsSource)
	assert.Equal(t, []session.ToolDefinition{{Name: "search"}, {Name: "fetch"}}, agents[1].Tools, "merged across turns")
}

func TestTrackerShutdown(t *testing.T) {
	tk := New(Config{})
	tk.Observe(turnRecs("t1", "s1", 0, "a"), atSec(0))
	tk.Advance(atSec(2)) // t1 closed, s1 open without open turns
	tk.Observe(turnRecs("t2", "s2", 0, "b")[:1], atSec(3))
	ev := tk.CloseAll(session.EndReasonShutdown)
	require.Equal(t, []string{"session_ended:s1:shutdown:partial", "turn_closed:s2", "session_ended:s2:shutdown:partial"}, kinds(ev))
	assert.True(t, ev[1].Session.Turns[0].Partial)
	assert.Equal(t, Stats{SpansObserved: 4, SpansAssembled: 4, TurnsClosed: 2}, tk.Stats())
	assert.Empty(t, tk.CloseAll(session.EndReasonShutdown))
}

// TestTrackerManySessions drives many interleaved sessions and checks the accounting and
// that every turn is reported exactly once.
func TestTrackerManySessions(t *testing.T) {
	tk := New(Config{MaxSessions: 7, MaxSpansPerSession: 40})
	turns := map[string]int{}
	seen := func(ev []Event) {
		for _, e := range ev {
			if e.Kind == EventSessionEnded {
				for _, tu := range e.Session.Turns {
					turns[tu.TraceID]++
				}
			}
		}
	}
	clock := 0.0
	for i := range 200 {
		sid := fmt.Sprintf("s%d", i%13)
		if i%5 == 0 {
			sid = ""
		}
		recs := turnRecs(fmt.Sprintf("t%03d", i), sid, int64(i*100), "msg")
		seen(tk.Observe(recs[:2], atSec(clock)))
		clock += 0.7
		seen(tk.Observe(recs[2:], atSec(clock)))
		seen(tk.Advance(atSec(clock)))
		checkAccounting(t, tk)
	}
	seen(tk.CloseAll(session.EndReasonShutdown))
	st := tk.Stats()
	assert.Equal(t, 0, st.RetainedSpans)
	assert.Equal(t, uint64(600), st.SpansAssembled+st.SpansDropped)
	for id, n := range turns {
		assert.Equal(t, 1, n, "turn %s reported in more than one ended session", id)
	}
	checkAccounting(t, tk)
}

// An agent-as-tool sub-run ends long before its coordinator: its parent has not arrived,
// so it is not a root, and the silence while the coordinator thinks must not close the
// turn (seen in the openai_agents_genai_live fixture).
func TestTrackerOrphanSubtreeIsNotARoot(t *testing.T) {
	tk := New(Config{})
	sub := []session.SpanRecord{
		sessiontest.Span("sub-l", "sub-a", session.ClassLLM, 0, 5, sessiontest.Session("s1")),
		sessiontest.Span("sub-a", "coord", session.ClassAgent, 0, 10, sessiontest.Agent("research"), sessiontest.Session("s1")),
	}
	assert.Empty(t, tk.Observe(sub, atSec(0)))
	assert.Empty(t, tk.Advance(atSec(30)), "a GenAI span whose parent is still running is no root")
	rest := []session.SpanRecord{
		sessiontest.Span("coord", "wf", session.ClassAgent, 0, 40_000, sessiontest.Agent("coordinator"), sessiontest.Session("s1")),
		sessiontest.Span("wf", "http-parent-not-exported", session.ClassTurn, 0, 40_001, sessiontest.Session("s1")),
	}
	assert.Empty(t, tk.Observe(rest, atSec(40)))
	ev := tk.Advance(atSec(42))
	require.Equal(t, []string{"turn_closed:s1"}, kinds(ev), "the turn marker arrived: settle applies")
	turn := ev[0].Session.Turns[0]
	assert.False(t, turn.Partial)
	agents := []string{}
	for _, in := range turn.Interactions {
		agents = append(agents, in.AgentID)
	}
	assert.ElementsMatch(t, []string{"coordinator", "research"}, agents, "one turn, both agents")
	checkAccounting(t, tk)
}

// The trace root of any class (here an HTTP server span) ends the wait.
func TestTrackerTraceRootOfAnyClassClosesTheTurn(t *testing.T) {
	tk := New(Config{})
	tk.Observe([]session.SpanRecord{sessiontest.Span("a", "http", session.ClassAgent, 0, 10, sessiontest.Agent("helper"), sessiontest.Session("s1"))}, atSec(0))
	assert.Empty(t, tk.Advance(atSec(5)))
	tk.Observe([]session.SpanRecord{sessiontest.Span("http", "", session.ClassOther, 0, 11, sessiontest.Session("s1"))}, atSec(5))
	require.Equal(t, []string{"turn_closed:s1"}, kinds(tk.Advance(atSec(7.1))))
	checkAccounting(t, tk)
}

// TestTrackerLongSessionStaysWhole: max_spans_per_session bounds the spans retained for
// open turns, not the session's lifetime spans: 2,000 short turns (6,000 spans) under
// a limit of 100 all close, with stable indexes 0..1999, and the session ends whole.
func TestTrackerLongSessionStaysWhole(t *testing.T) {
	tk := New(Config{MaxSpansPerSession: 100, SessionTimeout: time.Minute, MaxSessionDuration: 10 * time.Hour})
	const n = 2000
	var closed []int
	for i := range n {
		at := float64(i) * 3
		require.Empty(t, tk.Observe(turnRecs(fmt.Sprintf("t%04d", i), "long", int64(i)*3000, fmt.Sprintf("question %d", i)), atSec(at)))
		for _, ev := range tk.Advance(atSec(at + 2.5)) {
			require.Equal(t, EventTurnClosed, ev.Kind)
			require.LessOrEqual(t, len(ev.Session.Turns), 2, "a turn's event is a window, not the session")
			closed = append(closed, ev.Session.Turns[ev.TurnIndex].Index)
		}
	}
	ev := tk.Advance(atSec(n*3 + 120))
	require.Equal(t, []string{"session_ended:long:session_timeout"}, kinds(ev))
	require.Len(t, ev[0].Session.Turns, n)
	require.Len(t, closed, n)
	for i, idx := range closed {
		require.Equal(t, i, idx)
		require.Equal(t, i, ev[0].Session.Turns[i].Index)
	}
	assert.Zero(t, tk.Stats().SpansDropped)
	checkAccounting(t, tk)
}

// TestTrackerIdleClosesCrashedTurn: a turn whose root never arrives closes as partial
// when its session goes idle (session_timeout), not at turn_timeout.
func TestTrackerIdleClosesCrashedTurn(t *testing.T) {
	tk := New(Config{SessionTimeout: 30 * time.Second, TurnTimeout: time.Hour})
	tk.Observe(turnRecs("t1", "s", 0, "a"), atSec(0))
	require.Equal(t, []string{"turn_closed:s"}, kinds(tk.Advance(atSec(2))))
	tk.Observe(turnRecs("t2", "s", 5000, "b")[:2], atSec(5)) // the root never comes
	assert.Empty(t, tk.Advance(atSec(34)))
	ev := tk.Advance(atSec(35))
	require.Equal(t, []string{"turn_closed:s", "session_ended:s:session_timeout"}, kinds(ev))
	s := ev[1].Session
	require.Len(t, s.Turns, 2)
	assert.False(t, s.Partial, "the session ended normally")
	assert.True(t, s.Turns[1].Partial, "its unfinished turn is partial")
	assert.Equal(t, 1, s.Turns[1].Index)
	checkAccounting(t, tk)
}

// TestTrackerRetainTurns: with RetainTurns the session keeps only its last turns for
// the session-end snapshot, while indexes and totals cover every turn.
func TestTrackerRetainTurns(t *testing.T) {
	all := New(Config{})
	few := New(Config{RetainTurns: 2})
	var ends [2]*session.AgentSession
	for k, tk := range []*Tracker{all, few} {
		for i := range 5 {
			tk.Observe(turnRecs(fmt.Sprintf("t%d", i), "s", int64(i)*3000, fmt.Sprintf("q%d", i)), atSec(float64(i)*3))
			ev := tk.Advance(atSec(float64(i)*3 + 2.5))
			require.Len(t, ev, 1)
			assert.Equal(t, i, ev[0].Session.Turns[ev[0].TurnIndex].Index)
		}
		ev := tk.Advance(atSec(1000))
		require.Equal(t, []string{"session_ended:s:session_timeout"}, kinds(ev))
		ends[k] = ev[0].Session
		checkAccounting(t, tk)
	}
	require.Len(t, ends[0].Turns, 5)
	require.Len(t, ends[1].Turns, 2)
	assert.Equal(t, []int{3, 4}, []int{ends[1].Turns[0].Index, ends[1].Turns[1].Index})
	assert.Equal(t, ends[0].Usage, ends[1].Usage)
	assert.Equal(t, ends[0].TotalLatencyMs, ends[1].TotalLatencyMs)
	assert.Equal(t, ends[0].StartedAt, ends[1].StartedAt)
	assert.Equal(t, ends[0].EndedAt, ends[1].EndedAt)
	assert.Equal(t, ends[0].Agents, ends[1].Agents)
}

// A sub-agent run under its own conversation id (<session>-<uuid>, Mastra's sub-agent
// memory thread) stays in its parent's session, whichever id the trace shows first.
func TestTrackerFoldsSubAgentSessionIDs(t *testing.T) {
	const sub = "thread-7-0f8fad5b-d9cb-469f-a165-70867728950e"
	assert.Equal(t, "thread-7", ParentSessionID(sub))
	assert.Empty(t, ParentSessionID("thread-7"))
	assert.Empty(t, ParentSessionID("-0f8fad5b-d9cb-469f-a165-70867728950e"), "no parent before the suffix")
	assert.Empty(t, ParentSessionID("thread-7-not-a-uuid"))

	t.Run("sub-agent spans first in the trace", func(t *testing.T) {
		tk := New(Config{})
		recs := turnRecs("t1", "thread-7", 0, "refund order 123")
		recs[0].SessionID = sub // the LLM call of the sub-agent, ended first
		assert.Empty(t, tk.Observe(recs[:1], atSec(0)))
		assert.Equal(t, 1, tk.Stats().OpenSessions)
		assert.Empty(t, tk.Observe(recs[1:], atSec(0.1)))
		assert.Equal(t, 1, tk.Stats().OpenSessions, "the sub-agent's session is folded, not kept")
		ev := tk.Advance(atSec(3))
		require.Equal(t, []string{"turn_closed:thread-7"}, kinds(ev))
		require.Len(t, ev[0].Session.Turns, 1)
		checkAccounting(t, tk)
	})
	t.Run("a sub-agent's own trace joins the open parent session", func(t *testing.T) {
		tk := New(Config{})
		assert.Empty(t, tk.Observe(turnRecs("t1", "thread-7", 0, "refund order 123"), atSec(0)))
		assert.Empty(t, tk.Observe(turnRecs("t2", sub, 100, "look up order 123"), atSec(0.1)))
		assert.Equal(t, 1, tk.Stats().OpenSessions)
		ev := tk.Advance(atSec(3))
		assert.Equal(t, []string{"turn_closed:thread-7", "turn_closed:thread-7"}, kinds(ev))
		checkAccounting(t, tk)
	})
	t.Run("an unrelated session is never folded", func(t *testing.T) {
		tk := New(Config{})
		assert.Empty(t, tk.Observe(turnRecs("t1", sub, 0, "hello"), atSec(0)))
		ev := tk.Advance(atSec(3))
		assert.Equal(t, []string{"turn_closed:" + sub}, kinds(ev), "no parent session is open")
	})
}
