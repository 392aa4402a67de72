// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

// TestTrackerCallAfterTheAnswerIsLate: an LLM call of request 1's agent started after it
// answered (title generation, a memory update) that arrives after request 1 closed is a
// late span of request 1, not a new request. Before, it opened the trace's next turn and
// was evaluated as turn 1 (found by review).
func TestTrackerCallAfterTheAnswerIsLate(t *testing.T) {
	tk := New(Config{})
	require.Empty(t, tk.Observe(conversationRun("c", "conv-1", 1, 0, "weather in Paris?"), atSec(0)))
	ev := tk.Advance(atSec(2))
	require.Len(t, turnsOf(ev), 1)
	bg := sessiontest.Span("c-r1-bg", "c-r1-a", session.ClassLLM, 150, 400, sessiontest.Trace("c"),
		sessiontest.Session("conv-1"), sessiontest.UserMsg("summarise the conversation for memory"), sessiontest.UsageOf(5, 5))
	bg.Service, bg.SessionKey = "shop", "gen_ai.conversation.id"
	require.Empty(t, tk.Observe([]session.SpanRecord{bg}, atSec(3)))
	ev = tk.Advance(atSec(70))
	assert.Empty(t, turnsOf(ev), "a child of request 1's agent is a late span of request 1, not a turn")
	checkAccounting(t, tk)
}

// TestTrackerGraphLoopIsOneRequest: LangGraph corrective RAG (OpenInference): the
// graph's root CHAIN (a turn) runs retrieve, grade_documents, generate, transform_query,
// retrieve, grade_documents, generate for ONE user question, each node's LLM call with
// its own prompt: one turn, since nothing below a turn is split (but conversation turn
// markers). Before, the second grade_documents started a second turn (found by review).
func TestTrackerGraphLoopIsOneRequest(t *testing.T) {
	var recs []session.SpanRecord
	add := func(r session.SpanRecord) { r.TraceID, r.Service = "g", "rag"; recs = append(recs, r) }
	node := func(id, name string, start int64, llmUser string) {
		add(sessiontest.Span(id, "g-root", session.ClassOther, start, start+90, sessiontest.Named(name)))
		if llmUser != "" {
			add(sessiontest.Span(id+"-llm", id, session.ClassLLM, start+5, start+80, sessiontest.Named("ChatOpenAI"),
				sessiontest.UserMsg(llmUser), sessiontest.Output("..."), sessiontest.UsageOf(10, 2)))
		}
	}
	add(sessiontest.Span("g-root", "", session.ClassTurn, 0, 1000, sessiontest.Named("LangGraph"), sessiontest.UserMsg("what is agent memory?")))
	node("n1", "retrieve", 0, "")
	node("n2", "grade_documents", 100, "Document: doc A. Question: what is agent memory? Relevant?")
	node("n3", "generate", 200, "Context: doc A. Question: what is agent memory?")
	node("n4", "transform_query", 300, "Rewrite: what is agent memory?")
	node("n5", "retrieve", 400, "")
	node("n6", "grade_documents", 500, "Document: doc B. Question: how do LLM agents store memory? Relevant?")
	node("n7", "generate", 600, "Context: doc B. Question: how do LLM agents store memory?")
	tk := New(Config{})
	require.Empty(t, tk.Observe(recs, atSec(0)))
	ev := tk.Advance(atSec(2))
	assert.Len(t, turnsOf(ev), 1, "one user question, one turn: %v", turnsOf(ev))
	checkAccounting(t, tk)
}

// TestTrackerTraceSessionsEvictedWhole: sessions kept open for a trace's next requests
// (a trace without session key whose marker's parent is never exported, the live OpenAI
// Agents shape) that max_sessions evicts end not partial: their turn was whole. Before,
// they ended partial (found by review). They end as max_sessions, not single_trace: their
// root has not arrived, so the trace's next request continues the session
// (docs/decisions/sessions.md §2.4.1; a second review found single_trace made it late).
func TestTrackerTraceSessionsEvictedWhole(t *testing.T) {
	tk := New(Config{MaxSessions: 2})
	var ended []string
	for i, tid := range []string{"a", "b", "c"} {
		at := float64(i) * 3
		ended = append(ended, kinds(tk.Observe(conversationRun(tid, "", 1, int64(at*1000), "hi "+tid), atSec(at)))...)
		for _, e := range tk.Advance(atSec(at + 2)) {
			if e.Kind == EventSessionEnded {
				ended = append(ended, kinds([]Event{e})...)
			}
		}
	}
	assert.Equal(t, uint64(1), tk.Stats().SessionsEvicted, "ended: %v", ended)
	require.NotEmpty(t, ended)
	for _, k := range ended {
		assert.NotContains(t, k, "partial")
		assert.Contains(t, k, ":max_sessions")
	}
	checkAccounting(t, tk)
}

// TestTrackerNextRequestsFirstSpanStaysOpen: a non-GenAI child of request 2's agent (a
// guardrail that ended at once) that arrives in the same batch as request 1's last spans
// stays open with request 2, since its parent has not arrived. Before, it was taken for
// an HTTP call after request 1's answer and closed with request 1, which moved the
// closed end past request 2's start: request 2's agent and marker were late, and its LLM
// call alone became turn 1 (found by review).
func TestTrackerNextRequestsFirstSpanStaysOpen(t *testing.T) {
	tk := New(Config{})
	run1 := conversationRun("c", "conv-1", 1, 0, "weather in Paris?")
	run2 := conversationRun("c", "conv-1", 2, 5000, "no, Paris in Texas")
	guard := sessiontest.Span("c-r2-guard", "c-r2-a", session.ClassOther, 5006, 5008, sessiontest.Trace("c"), sessiontest.Session("conv-1"))
	guard.Service, guard.SessionKey = "shop", "gen_ai.conversation.id"
	require.Empty(t, tk.Observe(append(run1, guard), atSec(5.1)))
	ev := tk.Advance(atSec(7.1))
	assert.Equal(t, []string{"0:weather in Paris?:c-r1-m"}, turnsOf(ev))
	require.Len(t, ev, 1)
	assert.Equal(t, 3, ev[0].Session.Turns[0].SpanCount, "request 2's guardrail span is not request 1's")
	require.Empty(t, tk.Observe(run2, atSec(8)))
	ev = tk.Advance(atSec(70))
	assert.Equal(t, []string{"1:no, Paris in Texas:c-r2-m"}, turnsOf(ev))
	assert.Zero(t, tk.Stats().LateSpans)
	checkAccounting(t, tk)
}

// TestTrackerTraceEndsWithItsRoot: once a trace's root arrived (late, while its next turn
// was open) the trace never goes on: a later record of it is late. Before, the close of
// that open turn made the trace continue again, and a later record opened yet another
// turn, in a new session of the same id (found by review).
func TestTrackerTraceEndsWithItsRoot(t *testing.T) {
	tk := New(Config{})
	require.Empty(t, tk.Observe(conversationRun("c", "", 1, 0, "first"), atSec(0)))
	require.Len(t, turnsOf(tk.Advance(atSec(2))), 1)
	require.Empty(t, tk.Observe(conversationRun("c", "", 2, 5000, "second")[:1], atSec(5))) // run 2's LLM call
	require.Empty(t, tk.Observe([]session.SpanRecord{conversationRoot("c", 0, 9000)}, atSec(5.5)))
	require.Empty(t, tk.Observe(conversationRun("c", "", 2, 5000, "second")[1:], atSec(6)))
	ev := tk.Advance(atSec(8.1))
	require.Equal(t, []string{"turn_closed:c", "session_ended:c:single_trace"}, kinds(ev))
	// A straggler of the trace (an HTTP span and the LLM call it made, before the root
	// ended) comes after.
	llm := sessiontest.Span("c-x-l", "c-x", session.ClassLLM, 6000, 6500, sessiontest.Trace("c"), sessiontest.UserMsg("classify"))
	http := sessiontest.Span("c-x", "c-conv", session.ClassOther, 5900, 6600, sessiontest.Trace("c"))
	require.Empty(t, tk.Observe([]session.SpanRecord{llm, http}, atSec(9)))
	ev = tk.Advance(atSec(200))
	assert.Empty(t, turnsOf(ev), "the trace's root arrived: nothing of it is a new turn; got %v", kinds(ev))
	checkAccounting(t, tk)
}

// TestTrackerCompleteTraceLeavesNothingOpen: in a trace whose root arrived, a GenAI span
// whose parent did not arrive, started after the last request, closes with the last
// turn: nothing of the trace can follow its root. Before, it stayed open as the trace's
// next turn, and closed later as a second session of the same id, whose spans the
// processor then dropped as late (found by review).
func TestTrackerCompleteTraceLeavesNothingOpen(t *testing.T) {
	tk := New(Config{})
	recs := append(conversationRun("c", "", 1, 0, "first"), conversationRun("c", "", 2, 300, "second")...)
	orphan := sessiontest.Span("c-o-l", "c-missing", session.ClassLLM, 500, 600, sessiontest.Trace("c"), sessiontest.UserMsg("summarise"))
	recs = append(recs, orphan, conversationRoot("c", 0, 1000))
	require.Empty(t, tk.Observe(recs, atSec(0)))
	ev := tk.Advance(atSec(2))
	t.Log(kinds(ev), turnsOf(ev))
	assert.Zero(t, tk.Stats().OpenTurns, "the trace is complete: nothing stays open")
	ev = tk.Advance(atSec(100))
	t.Log(kinds(ev), turnsOf(ev))
	checkAccounting(t, tk)
}

// TestTrackerEndSignalOfATraceSession: a trace without session key whose marker carries
// the end signal (agent_eval.session.end), its root not arrived, ends its session once
// its turn closed. Before, the session kept open for the trace's next requests ignored
// the signal until session_timeout (found by review).
func TestTrackerEndSignalOfATraceSession(t *testing.T) {
	tk := New(Config{})
	recs := conversationRun("c", "", 1, 0, "bye")
	recs[2].EndSignal = true
	require.Empty(t, tk.Observe(recs, atSec(0)))
	ev := tk.Advance(atSec(2))
	ev = append(ev, tk.Advance(atSec(3))...)
	ended := slices.ContainsFunc(kinds(ev), func(k string) bool { return strings.HasPrefix(k, "session_ended:c:") })
	assert.True(t, ended, "the end signal ends the session once its turn closed: %v", kinds(ev))
	checkAccounting(t, tk)
}
