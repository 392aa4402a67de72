// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff/handofftest"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/tracker"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadatatest"
)

// chatTurn is one turn of a conversation: an agent root span with the user's message and
// the answer (withRoot false: only a child LLM span, as when the run crashed before its
// root span ended).
func chatTurn(sessionID string, seed int, start time.Time, user, answer string, withRoot bool) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "weather-bot")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	hi, lo := byte(seed>>8), byte(seed)
	tid := pcommon.TraceID{hi, lo, 9, 9, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	msg := func(role, text string) string {
		js, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]any{{"type": "text", "content": text}}}})
		return string(js)
	}
	llm := spans.AppendEmpty()
	llm.SetTraceID(tid)
	llm.SetSpanID(pcommon.SpanID{hi, lo, 0, 0, 0, 0, 0, 2})
	llm.SetParentSpanID(pcommon.SpanID{hi, lo, 0, 0, 0, 0, 0, 1})
	llm.SetName("chat gpt")
	llm.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(10 * time.Millisecond)))
	llm.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(90 * time.Millisecond)))
	llm.Attributes().PutStr("gen_ai.operation.name", "chat")
	llm.Attributes().PutStr("gen_ai.conversation.id", sessionID)
	llm.Attributes().PutStr("gen_ai.input.messages", msg("user", user))
	llm.Attributes().PutStr("gen_ai.output.messages", msg("assistant", answer))
	if !withRoot {
		return td
	}
	root := spans.AppendEmpty()
	root.SetTraceID(tid)
	root.SetSpanID(pcommon.SpanID{hi, lo, 0, 0, 0, 0, 0, 1})
	root.SetName("invoke_agent weather")
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(100 * time.Millisecond)))
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	root.Attributes().PutStr("gen_ai.agent.name", "weather")
	root.Attributes().PutStr("gen_ai.conversation.id", sessionID)
	root.Attributes().PutStr("gen_ai.input.messages", msg("user", user))
	root.Attributes().PutStr("gen_ai.output.messages", msg("assistant", answer))
	return td
}

// conversation is a three-turn conversation whose second user message corrects the
// first answer (RDM on turn 0).
var conversation = []struct{ user, answer string }{
	{"What is the weather in Paris tomorrow?", "Tomorrow in Paris: sunny."},
	{"No, that's wrong, I meant Paris in Texas.", "Tomorrow in Paris, Texas: rainy."},
	{"Thanks, and on Sunday?", "On Sunday it will be cloudy."},
}

// turnVerdicts returns, per turn index, the final verdicts emitted (turn spans with
// agent_eval.turn.final) and the provisional ones.
func turnVerdicts(t *testing.T, spans []ptrace.Span) (final, provisional map[int][]evaluation.TurnResult) {
	final, provisional = map[int][]evaluation.TurnResult{}, map[int][]evaluation.TurnResult{}
	for _, sp := range spans {
		tr, err := evalspan.DecodeTurn(sp.Attributes())
		require.NoError(t, err)
		if tr.Final {
			final[tr.TurnIndex] = append(final[tr.TurnIndex], tr)
		} else {
			provisional[tr.TurnIndex] = append(provisional[tr.TurnIndex], tr)
		}
	}
	return final, provisional
}

// assertCountedOnce checks that each of turns 0..n-1 has exactly one final verdict that
// counts (not Revised) in final (turnVerdicts): agent_eval_turns_total counts each turn
// once; and that the revisions correct that count to one verdict per turn
// (standingVerdict), which it returns by turn index.
func assertCountedOnce(t *testing.T, final map[int][]evaluation.TurnResult, n int) map[int]string {
	t.Helper()
	counted := countedVerdicts(final)
	standing := map[int]string{}
	for i := range n {
		assert.Equal(t, 1, counted[i], "turn %d has one final verdict that counts", i)
		standing[i] = standingVerdict(t, final[i])
	}
	return standing
}

// assertStanding checks that the verdicts the turn counters give (standing:
// assertCountedOnce by turn index, assertEachTraceCountedOnce by trace) are analysis a's,
// each turn found in standing by key (byIndex or turnTraceKey).
func assertStanding[K comparable](t *testing.T, standing map[K]string, a *evaluation.Analysis, key func(*evaluation.TurnResult) K) {
	t.Helper()
	for i := range a.TurnResults {
		tr := &a.TurnResults[i]
		assert.Equal(t, tr.DetectionType, standing[key(tr)], "turn %d: the counters, corrected by the revisions, give the analysis' verdict", tr.TurnIndex)
	}
}

// turnIndexKey and turnTraceKey are the keys of assertStanding.
func turnIndexKey(tr *evaluation.TurnResult) int    { return tr.TurnIndex }
func turnTraceKey(tr *evaluation.TurnResult) string { return tr.TraceID }

// standingVerdict returns the detection type that the exporter's counters give a turn
// from its final verdicts trs, in any order: agent_eval_turns_total counts the one not
// Revised; agent_eval_turns_revised_total counts each Revised one as its type in place of
// the one it replaces (ReplacedDetectionType). It fails t unless they add up to exactly
// one verdict.
func standingVerdict(t *testing.T, trs []evaluation.TurnResult) string {
	t.Helper()
	n := map[string]int{}
	for _, tr := range trs {
		n[tr.DetectionType]++
		if tr.Revised {
			if !assert.NotEmpty(t, tr.ReplacedDetectionType, "a revised verdict names the verdict it replaces: %+v", tr) {
				return ""
			}
			n[tr.ReplacedDetectionType]--
		}
	}
	maps.DeleteFunc(n, func(_ string, c int) bool { return c == 0 })
	assert.NotEmpty(t, n, "the counted verdicts and their revisions add up to one verdict, not none")
	for d, c := range n {
		if assert.Len(t, n, 1, "the counted verdicts and their revisions add up to one verdict: %v", n) &&
			assert.Equal(t, 1, c, "the counted verdicts and their revisions add up to one verdict: %v", n) {
			return d
		}
	}
	return ""
}

// turnSpansOf returns the turn evaluation spans both collectors emitted.
func turnSpansOf(sinks [2]*consumertest.TracesSink) []ptrace.Span {
	var spans []ptrace.Span
	for j := range sinks {
		spans = append(spans, evalSpans(sinks[j])[semconv.EvalKindTurn]...)
	}
	return spans
}

func analyses(t *testing.T, spans []ptrace.Span) []evaluation.Analysis {
	var out []evaluation.Analysis
	for _, sp := range spans {
		a, err := evalspan.DecodeAnalysis(sp.Attributes())
		require.NoError(t, err)
		out = append(out, a)
	}
	return out
}

// TestContinuationAcrossPauses: turns arriving more than session_timeout apart continue
// the session: indexes go on, the correction in turn 1 is RDM on turn 0, and each idle
// period emits a new analysis revision over all the turns so far.
func TestContinuationAcrossPauses(t *testing.T) {
	cfg := testConfig()
	cfg.SessionTimeout = 30 * time.Second
	p, sink, clk := newTestProcessor(t, cfg, nil)
	h := withHandoff(p) // revisions and continued turns: nothing handed off changes later
	ctx := context.Background()
	for i, c := range conversation {
		_, err := p.processTraces(ctx, chatTurn("conv-1", i+1, clk.now(), c.user, c.answer, true))
		require.NoError(t, err)
		clk.advance(3 * time.Second)
		p.step(ctx)
		clk.advance(2 * time.Minute) // the user thinks longer than session_timeout
		p.step(ctx)
	}
	spans := evalSpans(sink)
	as := analyses(t, spans[semconv.EvalKindAgentSession])
	require.Len(t, as, 3, "one analysis per idle period")
	for i, a := range as {
		assert.Equal(t, i+1, a.AnalysisRevision)
		require.Len(t, a.TurnResults, i+1, "revision %d covers every turn so far", i+1)
		for j, tr := range a.TurnResults {
			assert.Equal(t, j, tr.TurnIndex)
			assert.True(t, tr.Final)
		}
	}
	last := as[2]
	assert.Equal(t, evaluation.DetectionRDM, last.TurnResults[0].DetectionType, "the correction lands on turn 0")
	assert.Equal(t, 1, last.Conversation.RDMDetections)
	assert.Equal(t, evaluation.DetectionRDM, as[1].TurnResults[0].DetectionType)

	final, provisional := turnVerdicts(t, spans[semconv.EvalKindTurn])
	for i := range conversation {
		assert.Len(t, provisional[i], 1, "turn %d is evaluated once", i)
	}
	// The last turn of an idle period gets a verdict without follow-up, then the one
	// with the next user message when the session continues.
	assert.Len(t, final[0], 2)
	assert.False(t, final[0][0].Revised)
	assert.True(t, final[0][1].Revised, "the verdict with the follow-up revises the one given at idle")
	assert.Equal(t, evaluation.DetectionRDM, final[0][1].DetectionType)
	assert.Equal(t, final[0][0].DetectionType, final[0][1].ReplacedDetectionType, "it names the verdict given at idle")
	assertStanding(t, assertCountedOnce(t, final, len(conversation)), &last, turnIndexKey)
	assert.Equal(t, conversation[0].user, last.TurnResults[0].UserMessage, "the analysis holds the whole conversation")
	assert.Equal(t, conversation[2].answer, last.TurnResults[2].FinalResponse)
	assert.Len(t, final[2], 1)
	handofftest.AssertDecoded(t, takeHandedOff(t, h, sink))
}

// TestOutOfOrderTurnClose: a turn whose root never arrives (it closes at turn_timeout)
// and the correction after it, which closes first (settle), each get one provisional and
// one final verdict, with indexes that never change: the correction holds index 0. The
// follow-up of a turn is the next turn in the conversation (by start), not the next
// index: the correction is RDM on the earlier turn (docs/decisions/sessions.md §4.5).
func TestOutOfOrderTurnClose(t *testing.T) {
	cfg := testConfig()
	cfg.TurnTimeout = 10 * time.Second
	cfg.SessionTimeout = time.Minute
	p, sink, clk := newTestProcessor(t, cfg, nil)
	h := withHandoff(p)
	ctx := context.Background()
	t0 := clk.now()
	_, _ = p.processTraces(ctx, chatTurn("ooo", 1, t0, conversation[0].user, conversation[0].answer, false))
	clk.advance(time.Second)
	_, _ = p.processTraces(ctx, chatTurn("ooo", 2, t0.Add(time.Second), conversation[1].user, conversation[1].answer, true))
	for range 20 {
		clk.advance(time.Second)
		p.step(ctx)
	}
	clk.advance(2 * time.Minute)
	p.step(ctx)
	spans := evalSpans(sink)
	final, provisional := turnVerdicts(t, spans[semconv.EvalKindTurn])
	require.Len(t, final, 2)
	for i := range 2 {
		assert.Len(t, provisional[i], 1, "turn %d", i)
		require.Len(t, final[i], 1, "turn %d: exactly one final verdict", i)
	}
	require.Equal(t, conversation[1].user, final[0][0].UserMessage, "index 0 is the turn that closed first")
	assert.True(t, final[1][0].Partial, "the crashed run is partial")
	assert.Equal(t, evaluation.DetectionRDM, final[1][0].DetectionType, "the correction is RDM on the turn before it in the conversation")
	assert.NotEqual(t, evaluation.DetectionRDM, final[0][0].DetectionType)
	as := analyses(t, spans[semconv.EvalKindAgentSession])
	require.Len(t, as, 1)
	require.Len(t, as[0].TurnResults, 2)
	assert.Equal(t, 1, as[0].Conversation.RDMDetections)
	handofftest.AssertDecoded(t, takeHandedOff(t, h, sink))
}

// TestFollowUpWaitsForEarlierOpenTurn: the correction's run crashed (its root never
// arrives, it closes at turn_timeout) and the user's next message closes first: while the
// correction is open, or when both close in one step with the next message first (a
// slow batch; Tracker.Finish then tells it), the first turn does not get its final
// verdict from the later message: it gets one, counted once, from the correction when
// that closes (RDM), not a verdict from the wrong message first and the right one
// Revised after it (tracker.Event.EarlierOpen, docs/decisions/sessions.md §4.5; the
// same step was found by review).
func TestFollowUpWaitsForEarlierOpenTurn(t *testing.T) {
	for _, sameStep := range []bool{false, true} {
		t.Run(fmt.Sprintf("same step %v", sameStep), func(t *testing.T) {
			cfg := testConfig()
			cfg.TurnTimeout = 10 * time.Second
			cfg.SessionTimeout = time.Minute
			p, sink, clk := newTestProcessor(t, cfg, nil)
			ctx := context.Background()
			t0 := clk.now()
			send := func(i int, at time.Duration, withRoot bool) {
				_, err := p.processTraces(ctx, chatTurn("open-before", i+1, t0.Add(at), conversation[i].user, conversation[i].answer, withRoot))
				require.NoError(t, err)
			}
			send(0, 0, true)
			clk.advance(3 * time.Second)
			p.step(ctx) // turn 0 closes
			if sameStep {
				send(2, 5*time.Second, true) // the next message's spans arrive first
				clk.advance(time.Second)
				send(1, 4*time.Second, false) // the crashed correction's after them
				clk.advance(20 * time.Second) // both close in one step
				p.step(ctx)
			} else {
				send(1, 4*time.Second, false)
				clk.advance(time.Second)
				send(2, 5*time.Second, true)
				for range 20 { // turn 2 settles, then the correction closes at turn_timeout
					clk.advance(time.Second)
					p.step(ctx)
				}
			}
			clk.advance(2 * time.Minute)
			p.step(ctx)

			final, _ := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
			require.Len(t, final, 3)
			require.Len(t, final[0], 1, "the first turn's final verdict is given once")
			assert.Equal(t, evaluation.DetectionRDM, final[0][0].DetectionType, "from the correction")
			assert.False(t, final[0][0].Revised)
			standing := assertCountedOnce(t, final, 3)
			as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
			require.Len(t, as, 1)
			assertStanding(t, standing, &as[0], turnIndexKey)
			assert.Equal(t, 1, as[0].Conversation.RDMDetections)
		})
	}
}

// runRestart runs turn 0 on one processor, shuts it down after the session went idle,
// then turn 1 (a correction) on a new processor with the same continuation store.
func runRestart(t *testing.T, driver, dsn string) {
	ctx := context.Background()
	cfg := testConfig()
	cfg.SessionTimeout = 30 * time.Second
	cfg.Continuation = ContinuationConfig{Driver: driver, DSN: configopaque.String(dsn)}
	var all []ptrace.Span
	for i := range 2 {
		p, sink, clk := newTestProcessor(t, cfg, nil)
		require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
		clk.advance(time.Duration(i) * time.Hour)
		c := conversation[i]
		_, err := p.processTraces(ctx, chatTurn("restart-1", i+1, clk.now(), c.user, c.answer, true))
		require.NoError(t, err)
		clk.advance(3 * time.Second)
		p.step(ctx)
		clk.advance(time.Minute)
		p.step(ctx)
		require.NoError(t, p.shutdown(ctx))
		all = append(all, evalSpans(sink)[semconv.EvalKindAgentSession]...)
	}
	as := analyses(t, all)
	require.Len(t, as, 2)
	assert.Equal(t, []int{1, 2}, []int{as[0].AnalysisRevision, as[1].AnalysisRevision})
	require.Len(t, as[1].TurnResults, 2, "the second collector continues the session")
	assert.Equal(t, []int{0, 1}, []int{as[1].TurnResults[0].TurnIndex, as[1].TurnResults[1].TurnIndex})
	assert.Equal(t, evaluation.DetectionRDM, as[1].TurnResults[0].DetectionType, "RDM lands on the corrected turn")

	c := storedContinuation(t, driver, dsn, "restart-1")
	assert.Equal(t, 2, c.Revision)
	require.Len(t, c.Turns, 2, "every turn stored once")
}

// TestContinuationAfterRestart: the continuation state survives a restart in a real
// SQLite file, and in PostgreSQL when AGENTEVAL_TEST_POSTGRES_DSN is set.
func TestContinuationAfterRestart(t *testing.T) {
	onStores(t, runRestart)
}

// TestTrackerCountersExported: the tracker's counters reach the processor's telemetry:
// turns closed, late spans, spans of traces without GenAI spans, spans dropped by
// max_spans_per_session, retained spans, sessions continued.
func TestTrackerCountersExported(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig()
	cfg.SessionTimeout = 30 * time.Second
	cfg.MaxSpansPerSession = 3
	p, _, clk := newTestProcessor(t, cfg, tel)
	ctx := context.Background()

	first := chatTurn("counted", 1, clk.now(), "Weather in Paris?", "Sunny.", true)
	_, _ = p.processTraces(ctx, first)
	clk.advance(3 * time.Second)
	p.step(ctx)
	_, _ = p.processTraces(ctx, first) // both spans again: late
	plain := ptrace.NewTraces()        // a trace without GenAI spans
	sp := plain.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{0xee, 1})
	sp.SetSpanID(pcommon.SpanID{0xee, 1})
	sp.SetName("GET /health")
	_, _ = p.processTraces(ctx, plain)
	// Two open turns of 2 spans each exceed max_spans_per_session (3): the session
	// closes as partial, and the 2 spans of its next turn are dropped.
	_, _ = p.processTraces(ctx, chatTurn("big", 2, clk.now(), "a", "b", true))
	_, _ = p.processTraces(ctx, chatTurn("big", 3, clk.now(), "c", "d", true))
	_, _ = p.processTraces(ctx, chatTurn("big", 5, clk.now(), "e", "f", true))
	clk.advance(2 * time.Minute)
	p.step(ctx)
	_, _ = p.processTraces(ctx, chatTurn("counted", 4, clk.now(), "And Lyon?", "Rainy.", true))
	clk.advance(3 * time.Second)
	p.step(ctx)

	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	one := []metricdata.DataPoint[int64]{{Value: 1}}
	metadatatest.AssertEqualProcessorAgentsessionLateSpans(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, opts...)
	metadatatest.AssertEqualProcessorAgentsessionSpansDiscarded(t, tel, one, opts...)
	metadatatest.AssertEqualProcessorAgentsessionSpansDropped(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, opts...)
	metadatatest.AssertEqualProcessorAgentsessionTurnsClosed(t, tel, []metricdata.DataPoint[int64]{{Value: 4}}, opts...)
	metadatatest.AssertEqualProcessorAgentsessionSessionsContinued(t, tel, one, opts...)
	metadatatest.AssertEqualProcessorAgentsessionRetainedSpans(t, tel, []metricdata.DataPoint[int64]{{Value: 0}}, opts...)
}

// TestConcurrentIngestWithWorkerPool: four goroutines send turns of their own sessions
// while the worker closes, assembles and evaluates on two shards; at shutdown every span
// was passed on and every session has an analysis covering all its turns.
func TestConcurrentIngestWithWorkerPool(t *testing.T) {
	cfg := testConfig()
	cfg.TurnSettle = 20 * time.Millisecond
	cfg.TurnTimeout = time.Second
	cfg.SessionTimeout = time.Minute
	cfg.Workers = 2
	p, sink, _ := newTestProcessor(t, cfg, nil)
	p.now = time.Now
	p.tick = 10 * time.Millisecond
	ctx := context.Background()
	require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
	const senders, turns = 4, 5
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range turns {
				td := chatTurn(fmt.Sprintf("concurrent-%d", g), g*100+i+1, time.Now(), fmt.Sprintf("question %d", i), "answer", true)
				out, err := p.processTraces(ctx, td)
				assert.NoError(t, err)
				assert.Equal(t, td.SpanCount(), out.SpanCount(), "passed on whole, at once")
				time.Sleep(40 * time.Millisecond) // the turn settles before the next
			}
		}()
	}
	wg.Wait()
	require.NoError(t, p.shutdown(ctx))
	spans := evalSpans(sink)
	as := analyses(t, spans[semconv.EvalKindAgentSession])
	require.Len(t, as, senders)
	for _, a := range as {
		assert.Len(t, a.TurnResults, turns, a.SessionID)
		for i, tr := range a.TurnResults {
			assert.Equal(t, i, tr.TurnIndex)
		}
	}
	_, provisional := turnVerdicts(t, spans[semconv.EvalKindTurn])
	assert.Len(t, provisional, turns, "indexes 0..4 in every session")
}

// TestSingleTraceSessionsAreNotKept: a trace without a session key is a one-turn session
// keyed by its trace id; it is evaluated but never written to the continuation store.
func TestSingleTraceSessionsAreNotKept(t *testing.T) {
	p, sink, clk := newTestProcessor(t, testConfig(), nil)
	ctx := context.Background()
	td := chatTurn("", 7, clk.now(), "Weather in Rome?", "Warm.", true)
	forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) { sp.Attributes().Remove("gen_ai.conversation.id") })
	_, _ = p.processTraces(ctx, td)
	clk.advance(3 * time.Second)
	p.step(ctx)
	as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	require.Len(t, as, 1)
	traceID := as[0].SessionID
	assert.Equal(t, as[0].TurnResults[0].TraceID, traceID, "keyed by its trace id")
	c, err := p.cont.LoadContinuation(ctx, traceID, nil)
	require.NoError(t, err)
	assert.Equal(t, store.Continuation{}, c)
}

// storedContinuation reads session id's continuation from the store at driver/dsn, as a
// collector started after this one would.
func storedContinuation(t *testing.T, driver, dsn, id string) store.Continuation {
	t.Helper()
	cs, err := store.OpenContinuation(context.Background(), driver, dsn)
	require.NoError(t, err)
	defer cs.Close()
	c, err := cs.LoadContinuation(context.Background(), id, nil)
	require.NoError(t, err)
	return c
}

// TestSessionOpenOnTwoCollectors: two collectors sharing the continuation store hold
// one session open at the same time (routing by trace id: its turns alternate between
// them, less than session_timeout apart). Every turn is stored once with a distinct
// index, the correction in turn 1 (on the other collector) is RDM on turn 0, and the
// highest analysis revision covers every turn once.
func TestSessionOpenOnTwoCollectors(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		ps, sinks, clks := twoCollectors(t, driver, dsn)
		const turns = 6
		for i := range turns {
			user, answer := fmt.Sprintf("And on day %d?", i), fmt.Sprintf("Day %d: windy.", i)
			if i < len(conversation) {
				user, answer = conversation[i].user, conversation[i].answer
			}
			c := i % 2
			_, err := ps[c].processTraces(ctx, chatTurn("shared-1", i+1, clks[c].now(), user, answer, true))
			require.NoError(t, err)
			for j := range ps {
				clks[j].advance(5 * time.Second) // the turn closes; the session stays open on both
				ps[j].step(ctx)
			}
		}
		idleBoth(ctx, ps, clks)
		as := allAnalyses(t, sinks)
		require.Len(t, as, 2, "each collector emits an analysis when the session goes idle on it")
		last := highestRevision(t, as)
		require.Len(t, last.TurnResults, turns, "the highest revision covers every turn")
		traces := map[string]bool{}
		for i, tr := range last.TurnResults {
			assert.Equal(t, i, tr.TurnIndex)
			assert.True(t, tr.Final, "turn %d", i)
			assert.False(t, traces[tr.TraceID], "turn %d stored twice", i)
			traces[tr.TraceID] = true
		}
		assert.Equal(t, conversation[0].user, last.TurnResults[0].UserMessage)
		assert.Equal(t, evaluation.DetectionRDM, last.TurnResults[0].DetectionType, "the correction on the other collector lands on turn 0")

		c := storedContinuation(t, driver, dsn, "shared-1")
		require.Len(t, c.Turns, turns, "every turn stored once")
		for i, r := range c.Turns {
			assert.Equal(t, i, r.Result.TurnIndex)
			assert.True(t, r.Result.Final, "turn %d", i)
		}
		assert.Equal(t, last.AnalysisRevision, c.Revision)
	})
}

// twoCollectors starts two processors sharing the continuation store at driver/dsn
// (session_timeout 30s), each with its own clock and no worker (the test steps them),
// shut down at the end of the test.
func twoCollectors(t *testing.T, driver, dsn string) (ps [2]*agentSessionProcessor, sinks [2]*consumertest.TracesSink, clks [2]*testClock) {
	ctx := context.Background()
	cfg := recoveryConfig(driver, dsn)
	for i := range ps {
		ps[i], sinks[i], clks[i] = newTestProcessor(t, cfg, nil)
		startWithoutWorker(t, ps[i])
		t.Cleanup(func() { assert.NoError(t, ps[i].shutdown(ctx)) })
	}
	return ps, sinks, clks
}

// idleBoth runs both collectors on for two minutes in 10 s steps: their sessions go idle
// and their leases stay current.
func idleBoth(ctx context.Context, ps [2]*agentSessionProcessor, clks [2]*testClock) {
	runOn(ctx, ps[:], clks[:], 2*time.Minute)
}

// runOn runs the collectors on for d in 10 s steps.
func runOn(ctx context.Context, ps []*agentSessionProcessor, clks []*testClock, d time.Duration) {
	for range d / (10 * time.Second) {
		for j := range ps {
			clks[j].advance(10 * time.Second)
			ps[j].step(ctx)
		}
	}
}

// kill stops p as kill -9 would: no analysis, no release, its lease runs out. Its
// shutdown at the end of the test then writes to a memory store only.
func kill(t *testing.T, p *agentSessionProcessor) {
	t.Helper()
	require.NoError(t, p.cont.Close())
	p.cont, p.recovery = store.NewMemoryContinuation(1), nil
}

// allAnalyses returns the session analyses both collectors emitted.
func allAnalyses(t *testing.T, sinks [2]*consumertest.TracesSink) []evaluation.Analysis {
	var as []evaluation.Analysis
	for j := range sinks {
		as = append(as, analyses(t, evalSpans(sinks[j])[semconv.EvalKindAgentSession])...)
	}
	return as
}

// highestRevision returns the analysis of the highest revision in as, checking that
// no revision was emitted twice.
func highestRevision(t *testing.T, as []evaluation.Analysis) evaluation.Analysis {
	t.Helper()
	require.NotEmpty(t, as)
	seen := map[int]bool{}
	last := as[0]
	for _, a := range as {
		assert.False(t, seen[a.AnalysisRevision], "revision %d emitted twice", a.AnalysisRevision)
		seen[a.AnalysisRevision] = true
		if a.AnalysisRevision > last.AnalysisRevision {
			last = a
		}
	}
	return last
}

// gatedContinuation is one collector's continuation store under the test's control:
// while holding, its turn record writes wait (as when the batch that evaluated them is
// still running); afterLoad runs once after the next load, before its result returns
// (another collector acting while this one analyses what it read). A held save reports
// no record as the turn's first final verdict (SaveTurns' result): a final verdict in a
// held batch is emitted Revised, so the tests hold back provisional ones.
type gatedContinuation struct {
	store.ContinuationStore
	holding   bool
	pending   []store.TurnState
	afterLoad func()
}

func (g *gatedContinuation) SaveTurns(ctx context.Context, turns []store.TurnState) ([]store.SavedTurn, error) {
	if g.holding {
		g.pending = append(g.pending, turns...)
		return make([]store.SavedTurn, len(turns)), nil
	}
	return g.ContinuationStore.SaveTurns(ctx, turns)
}

func (g *gatedContinuation) LoadContinuation(ctx context.Context, id string, held store.Held) (store.Continuation, error) {
	c, err := g.ContinuationStore.LoadContinuation(ctx, id, held)
	if f := g.afterLoad; f != nil {
		g.afterLoad = nil
		f()
	}
	return c, err
}

// gatedCollectors is twoCollectors with collector A's (ps[0]) store under a gate.
func gatedCollectors(t *testing.T, driver, dsn string) ([2]*agentSessionProcessor, [2]*consumertest.TracesSink, [2]*testClock, *gatedContinuation) {
	ps, sinks, clks := twoCollectors(t, driver, dsn)
	gate := &gatedContinuation{ContinuationStore: ps[0].cont}
	ps[0].cont = gate
	return ps, sinks, clks, gate
}

// release writes the held records.
func (g *gatedContinuation) release(ctx context.Context) error {
	g.holding = false
	_, err := g.ContinuationStore.SaveTurns(ctx, g.pending)
	g.pending = nil
	return err
}

// sendTurn sends turn i of the conversation (conversation[i], then plain questions) to
// collector c, and lets it close on both collectors.
func sendTurn(t *testing.T, ps [2]*agentSessionProcessor, clks [2]*testClock, c int, id string, i int) {
	t.Helper()
	user, answer := fmt.Sprintf("And on day %d?", i), fmt.Sprintf("Day %d: windy.", i)
	if i < len(conversation) {
		user, answer = conversation[i].user, conversation[i].answer
	}
	sendChat(t, ps, clks, c, id, i+1, user, answer)
}

// sendChat sends a turn (trace seed) to collector c and lets it close on both.
func sendChat(t *testing.T, ps [2]*agentSessionProcessor, clks [2]*testClock, c int, id string, seed int, user, answer string) {
	t.Helper()
	ctx := context.Background()
	_, err := ps[c].processTraces(ctx, chatTurn(id, seed, clks[c].now(), user, answer, true))
	require.NoError(t, err)
	for j := range ps {
		clks[j].advance(3 * time.Second)
		ps[j].step(ctx)
	}
}

// TestQuickTurnsOnTwoCollectors: turn 1 closes on collector B while turn 0 (index
// reserved on collector A) is not stored yet, as when turns arrive less than one batch
// apart (docs/decisions/sessions.md §4.5). B evaluates turn 1 without turn 0; when the
// session goes idle, the analysis over the stored records gives turn 0 its final verdict
// with turn 1's user message: the correction is RDM on turn 0, counted once.
func TestQuickTurnsOnTwoCollectors(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		ps, sinks, clks, gate := gatedCollectors(t, driver, dsn)
		gate.holding = true
		sendTurn(t, ps, clks, 0, "quick-1", 0) // A: index 0, its record held back
		sendTurn(t, ps, clks, 1, "quick-1", 1) // B: index 1, record 0 not in the store
		require.NoError(t, gate.release(ctx))
		sendTurn(t, ps, clks, 0, "quick-1", 2)
		idleBoth(ctx, ps, clks)

		last := highestRevision(t, allAnalyses(t, sinks))
		require.Len(t, last.TurnResults, 3, "the highest revision covers every turn")
		for i, tr := range last.TurnResults {
			assert.Equal(t, i, tr.TurnIndex)
			assert.True(t, tr.Final, "turn %d", i)
		}
		assert.Equal(t, evaluation.DetectionRDM, last.TurnResults[0].DetectionType, "the correction lands on turn 0")
		assert.Equal(t, 1, last.Conversation.RDMDetections)

		final, provisional := turnVerdicts(t, turnSpansOf(sinks))
		for i := range 3 {
			assert.Len(t, provisional[i], 1, "turn %d is evaluated once", i)
		}
		assertStanding(t, assertCountedOnce(t, final, 3), &last, turnIndexKey)
		require.NotEmpty(t, final[0])
		assert.Equal(t, evaluation.DetectionRDM, final[0][len(final[0])-1].DetectionType)

		c := storedContinuation(t, driver, dsn, "quick-1")
		require.Len(t, c.Turns, 3, "every turn stored once")
		for i, r := range c.Turns {
			assert.Equal(t, i, r.Result.TurnIndex)
			assert.True(t, r.Result.Final, "turn %d", i)
		}
		assert.Equal(t, evaluation.DetectionRDM, c.Turns[0].Result.DetectionType, "the stored verdict of turn 0 is RDM")
		assert.Equal(t, last.AnalysisRevision, c.Revision)
	})
}

// TestTurnClosedLateOnOtherCollector: one collector closes a turn (its index reserved in
// the store) after the other collector closed the turn that followed it in the
// conversation, as when one collector's batch runs hundreds of milliseconds behind
// (e2e TestTwoTiersQuickTurns under CPU load, docs/decisions/sessions.md §4.5). Indexes
// stay as reserved (a provisional verdict went out with each), and a turn's follow-up is
// the next turn in the conversation (by start): the highest revision has the correction
// as RDM on the first turn and each turn's verdict with the right follow-up, whichever
// collector goes idle last, also the one that gave the first turn its verdict with the
// third turn's message before the second took its place; every turn is counted once.
func TestTurnClosedLateOnOtherCollector(t *testing.T) {
	type shape struct {
		name string
		// on is the collector each turn is sent to; late is the turn whose collector
		// closes it only after the next turn closed on the other one; idleLast is the
		// collector that goes idle last.
		on             [3]int
		late, idleLast int
	}
	var shapes []shape
	for _, s := range []shape{
		{name: "middle turn", on: [3]int{0, 1, 0}, late: 1},
		{name: "first turn", on: [3]int{1, 0, 1}, late: 0},
	} {
		for last := range 2 {
			s.idleLast = last
			shapes = append(shapes, s)
		}
	}
	for _, tc := range shapes {
		t.Run(fmt.Sprintf("%s, idle last on %d", tc.name, tc.idleLast), func(t *testing.T) {
			onStores(t, func(t *testing.T, driver, dsn string) {
				ctx := context.Background()
				ps, sinks, clks := twoCollectors(t, driver, dsn)
				const id = "late-close-1"
				for i, c := range tc.on {
					_, err := ps[c].processTraces(ctx, chatTurn(id, i+1, clks[c].now(), conversation[i].user, conversation[i].answer, true))
					require.NoError(t, err)
					for j := range ps {
						clks[j].advance(3 * time.Second) // past turn_settle
					}
					switch i {
					case tc.late: // its collector closes it only after the next turn closed
						ps[1-c].step(ctx)
					case tc.late + 1:
						ps[c].step(ctx)              // the next turn closes first ...
						ps[tc.on[tc.late]].step(ctx) // ... then the late one
					default:
						ps[0].step(ctx)
						ps[1].step(ctx)
					}
				}
				first := 1 - tc.idleLast
				runOn(ctx, []*agentSessionProcessor{ps[first], ps[tc.idleLast]}, []*testClock{clks[first], clks[tc.idleLast]}, 2*time.Minute)

				// Index by user message: the late turn holds the index after its next turn's.
				turnOf := func(t *testing.T, user string) int {
					t.Helper()
					i := slices.IndexFunc(conversation, func(c struct{ user, answer string }) bool { return c.user == user })
					require.GreaterOrEqual(t, i, 0, "a turn of the conversation")
					return i
				}
				all := allAnalyses(t, sinks)
				last := highestRevision(t, all)
				ownLast := analyses(t, evalSpans(sinks[tc.idleLast])[semconv.EvalKindAgentSession])
				require.Len(t, ownLast, 1)
				assert.Equal(t, last.AnalysisRevision, ownLast[0].AnalysisRevision, "the collector idle last has the highest revision")
				require.Len(t, last.TurnResults, 3, "the highest revision covers every turn")
				lateIndex := -1
				for i, tr := range last.TurnResults {
					assert.Equal(t, i, tr.TurnIndex, "distinct indexes")
					assert.True(t, tr.Final, "turn %d", i)
					if turnOf(t, tr.UserMessage) == tc.late {
						lateIndex = i
					}
					if turnOf(t, tr.UserMessage) == 0 {
						assert.Equal(t, evaluation.DetectionRDM, tr.DetectionType, "the correction lands on the first turn")
					} else {
						assert.NotEqual(t, evaluation.DetectionRDM, tr.DetectionType, "index %d", i)
					}
				}
				assert.Equal(t, tc.late+1, lateIndex, "the late turn's index is the one reserved after its next turn's")
				assert.Equal(t, 1, last.Conversation.RDMDetections)

				final, _ := turnVerdicts(t, turnSpansOf(sinks))
				assertStanding(t, assertCountedOnce(t, final, 3), &last, turnIndexKey)

				c := storedContinuation(t, driver, dsn, id)
				require.Len(t, c.Turns, 3, "every turn stored once")
				for i, r := range c.Turns {
					assert.Equal(t, i, r.Result.TurnIndex)
					wantRDM := turnOf(t, r.Result.UserMessage) == 0
					assert.Equal(t, wantRDM, r.Result.DetectionType == evaluation.DetectionRDM, "stored turn %d: RDM only on the first turn", i)
				}
			})
		})
	}
}

// TestBothCollectorsFinishTurnAtIdle: turn 0 closes on collector A, turn 1 on B; the
// session goes idle on both at about the same moment, so both read turn 1 provisional
// and both give it its final verdict (without follow-up). The store arbitrates: B saved
// first, so A's verdict is Revised and every turn has exactly one final verdict that
// counts (agent_eval_turns_total, docs/decisions/sessions.md §4.5).
func TestBothCollectorsFinishTurnAtIdle(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		ps, sinks, clks, gate := gatedCollectors(t, driver, dsn)
		sendTurn(t, ps, clks, 0, "both-idle-1", 0)
		sendTurn(t, ps, clks, 1, "both-idle-1", 1)
		clks[0].advance(time.Minute) // the session goes idle on A ...
		gate.afterLoad = func() {
			// ... and, after A read the session, on B, which finishes and saves turn 1.
			require.NoError(t, ps[0].recovery.Heartbeat(ctx, ps[0].instance, clks[1].now().Add(2*time.Minute)))
			clks[1].advance(time.Minute)
			ps[1].step(ctx)
		}
		ps[0].step(ctx)
		require.Nil(t, gate.afterLoad, "A read the session at idle")
		idleBoth(ctx, ps, clks)

		var spans []ptrace.Span
		for j := range sinks {
			for _, sp := range evalSpans(sinks[j])[semconv.EvalKindTurn] {
				require.NoError(t, ps[j].emitter.signer.Verify(sp.Attributes()), "every turn span, Revised or not, is signed")
				spans = append(spans, sp)
			}
		}
		final, _ := turnVerdicts(t, spans)
		require.Len(t, final[1], 2, "both collectors gave turn 1 a final verdict")
		assertCountedOnce(t, final, 2)
		c := storedContinuation(t, driver, dsn, "both-idle-1")
		require.Len(t, c.Turns, 2, "every turn stored once")
		for i, r := range c.Turns {
			assert.True(t, r.Result.Final, "turn %d", i)
		}
	})
}

// TestTurnStoredDuringOtherCollectorsAnalysis: collector B closes and stores a turn and
// analyses the session while collector A is analysing it from what it read before that
// turn was stored. The highest revision still covers every turn: A allocates its
// revision before it reads, so B's, allocated later, is the higher one and B read A's
// turns.
func TestTurnStoredDuringOtherCollectorsAnalysis(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		ps, sinks, clks, gate := gatedCollectors(t, driver, dsn)
		sendTurn(t, ps, clks, 0, "during-1", 0)
		sendTurn(t, ps, clks, 0, "during-1", 1)
		clks[0].advance(time.Minute) // the session goes idle on A ...
		gate.afterLoad = func() {
			// ... and, while A analyses what it read, B gets turn 2 and goes idle. A is
			// alive (its lease is current at B's clock).
			require.NoError(t, ps[0].recovery.Heartbeat(ctx, ps[0].instance, clks[1].now().Add(2*time.Minute)))
			_, err := ps[1].processTraces(ctx, chatTurn("during-1", 3, clks[1].now(), "And on Sunday?", "Cloudy.", true))
			require.NoError(t, err)
			clks[1].advance(3 * time.Second)
			ps[1].step(ctx)
			clks[1].advance(time.Minute)
			ps[1].step(ctx)
		}
		ps[0].step(ctx)
		require.Nil(t, gate.afterLoad, "A read the session at idle")
		idleBoth(ctx, ps, clks)

		as := allAnalyses(t, sinks)
		require.Len(t, as, 2)
		last := highestRevision(t, as)
		require.Len(t, last.TurnResults, 3, "the highest revision covers every turn")
		assert.Equal(t, evaluation.DetectionRDM, last.TurnResults[0].DetectionType)
		c := storedContinuation(t, driver, dsn, "during-1")
		require.Len(t, c.Turns, 3, "every turn stored once")
		assert.Equal(t, last.AnalysisRevision, c.Revision)
	})
}

// TestCrashOfOneOfTwoHolders: collectors A and B hold one session open; B ends it (its
// analysis covers turns 0-2), A then closes turn 3 and is killed. A's hold outlives B's
// release, so B recovers the session after A's lease ran out: a revision over turns
// 0-3, partial with end reason restart, in which turn 2 has its verdict with turn 3's
// user message.
func TestCrashOfOneOfTwoHolders(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		ps, sinks, clks := twoCollectors(t, driver, dsn)
		sendTurn(t, ps, clks, 0, "crash-1", 0)
		sendTurn(t, ps, clks, 1, "crash-1", 1)
		runOn(ctx, ps[:], clks[:], 20*time.Second)
		sendTurn(t, ps, clks, 0, "crash-1", 2)
		runOn(ctx, ps[:], clks[:], 10*time.Second) // the session goes idle on B
		require.Len(t, allAnalyses(t, sinks), 1, "B's analysis")
		sendTurn(t, ps, clks, 0, "crash-1", 3)
		kill(t, ps[0])
		runOn(ctx, ps[1:], clks[1:], 2*time.Minute)

		as := allAnalyses(t, sinks)
		require.Len(t, as, 2, "B's analysis, then the recovered one")
		last := highestRevision(t, as)
		assert.True(t, last.Partial)
		assert.Equal(t, string(session.EndReasonRestart), last.EndReason)
		require.Equal(t, []int{0, 1, 2, 3}, turnIndexes(last), "the highest revision covers every turn")
		assert.Equal(t, evaluation.DetectionRDM, last.TurnResults[0].DetectionType)
		assert.Contains(t, last.TurnResults[2].Explanations["detection"], "ccm:", "turn 2 judged with turn 3's message")

		c := storedContinuation(t, driver, dsn, "crash-1")
		require.Len(t, c.Turns, 4, "every turn stored once")
		for i, r := range c.Turns {
			assert.True(t, r.Result.Final, "turn %d", i)
		}
		assert.Equal(t, last.AnalysisRevision, c.Revision)
		orphans, err := ps[1].recovery.Orphans(ctx, clks[1].now().Add(time.Hour), 10)
		require.NoError(t, err)
		assert.Empty(t, orphans, "every hold released")
	})
}

// TestGroundingWhilePreviousTurnNotStored: turn 2 closes on collector B while turn 1
// (collector A) is not stored yet; it is grounded by the facts of turn 0, the nearest
// earlier turn B has: the order number the user gave is not a hallucination.
func TestGroundingWhilePreviousTurnNotStored(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		ps, sinks, clks, gate := gatedCollectors(t, driver, dsn)
		sendChat(t, ps, clks, 1, "ground-1", 1, "My order number is 48213, where is it?", "Your order is in our warehouse.")
		gate.holding = true
		sendChat(t, ps, clks, 0, "ground-1", 2, "Can you gift-wrap it please?", "Yes, it will be gift-wrapped.")
		sendChat(t, ps, clks, 1, "ground-1", 3, "When will it arrive?", "Order 48213 arrives soon.")
		require.NoError(t, gate.release(ctx))
		idleBoth(ctx, ps, clks)

		_, provisional := turnVerdicts(t, evalSpans(sinks[1])[semconv.EvalKindTurn])
		require.Len(t, provisional[2], 1)
		assert.NotEqual(t, evaluation.DetectionHallucination, provisional[2][0].DetectionType, "48213 is grounded by turn 0")
		last := highestRevision(t, allAnalyses(t, sinks))
		assert.Equal(t, []int{0, 1, 2}, turnIndexes(last))
	})
}

// outputJSON returns, in the order emitted, the turn verdicts and the session analyses
// the sink received, each as JSON: what two runs compare.
func outputJSON(t *testing.T, sink *consumertest.TracesSink) (verdicts, as []string) {
	t.Helper()
	spans := evalSpans(sink)
	for _, sp := range spans[semconv.EvalKindTurn] {
		tr, err := evalspan.DecodeTurn(sp.Attributes())
		require.NoError(t, err)
		js, err := json.Marshal(tr)
		require.NoError(t, err)
		verdicts = append(verdicts, string(js))
	}
	for _, a := range analyses(t, spans[semconv.EvalKindAgentSession]) {
		js, err := json.Marshal(a)
		require.NoError(t, err)
		as = append(as, string(js))
	}
	return verdicts, as
}

// TestCompactedRecordsGiveSameResults: a record that has its follow-up drops its
// grounding facts and conversation tokens (the next turn's record carries them on);
// a session continued across pauses, through the continuation store (memory, SQLite),
// then gets the same verdicts and analyses as with every record kept whole, and the
// store holds the carries of the session's last turn only.
func TestCompactedRecordsGiveSameResults(t *testing.T) {
	turns := []struct{ user, answer string }{
		{"My order 5521 was charged 120.50 EUR twice, ticket RX-4410.", "I see order 5521 and a double charge of 120.50 EUR."},
		{"No, that's wrong, it was charged three times.", "Sorry: order 5521 was charged three times."},
		{"Can you refund the extra charges?", "Refund of 241.00 EUR started for order 5521."},
		{"When will it arrive, for ticket RX-4410?", "The refund for ticket RX-4410 arrives in 5 days."},
	}
	run := func(t *testing.T, cfg Config, keep bool) (verdicts, as []string, stored store.Continuation) {
		ctx := context.Background()
		if cfg.Continuation.Driver != "" { // a database of its own
			cfg.Continuation.DSN = configopaque.String(filepath.Join(t.TempDir(), "agenteval.db"))
		}
		p, sink, clk := newTestProcessor(t, &cfg, nil)
		p.keepCarries = keep
		require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
		for i, c := range turns {
			_, err := p.processTraces(ctx, chatTurn("compact-1", i+1, clk.now(), c.user, c.answer, true))
			require.NoError(t, err)
			clk.advance(3 * time.Second)
			p.step(ctx)
			if i%2 == 1 {
				clk.advance(2 * time.Minute) // a pause longer than session_timeout
				p.step(ctx)
			}
		}
		stored, err := p.cont.LoadContinuation(ctx, "compact-1", nil)
		require.NoError(t, err)
		require.NoError(t, p.shutdown(ctx))
		verdicts, as = outputJSON(t, sink)
		return verdicts, as, stored
	}
	check := func(t *testing.T, cfg *Config) {
		cfg.SessionTimeout = 30 * time.Second
		wantVerdicts, wantAnalyses, whole := run(t, *cfg, true)
		gotVerdicts, gotAnalyses, compact := run(t, *cfg, false)
		assert.Equal(t, wantVerdicts, gotVerdicts, "turn verdicts")
		require.Len(t, gotAnalyses, 2, "one analysis per idle period")
		assert.Equal(t, wantAnalyses, gotAnalyses, "analyses")
		var last evaluation.Analysis
		require.NoError(t, json.Unmarshal([]byte(gotAnalyses[1]), &last))
		require.Len(t, last.TurnResults, len(turns))
		assert.Equal(t, evaluation.DetectionRDM, last.TurnResults[0].DetectionType, "the correction lands on turn 0")

		require.Len(t, whole.Turns, len(turns))
		require.Len(t, compact.Turns, len(turns))
		for i, r := range compact.Turns {
			assert.NotEmpty(t, whole.Turns[i].Conversation, "kept whole: turn %d has its carries", i)
			if i < len(turns)-1 {
				assert.Nil(t, r.Grounding, "turn %d has its follow-up: no grounding facts", i)
				assert.Nil(t, r.Conversation, "turn %d has its follow-up: no conversation tokens", i)
				continue
			}
			assert.Equal(t, whole.Turns[i].Grounding, r.Grounding, "the last turn keeps its grounding facts for the next")
			assert.Equal(t, whole.Turns[i].Conversation, r.Conversation)
			assert.Contains(t, r.Grounding, "5521", "facts of turn 0 are carried on to the last turn")
		}
	}
	t.Run("memory", func(t *testing.T) { check(t, testConfig()) })
	t.Run("sqlite", func(t *testing.T) {
		cfg := testConfig()
		cfg.Continuation.Driver = "sqlite"
		check(t, cfg)
	})
}

// TestEvictedSessionContinues: with continuation.max_records 2, a session whose records
// were dropped from memory and that comes back goes on with its turn index and
// revision (revision 2 never replaces the stored revision 1 with fewer turns under the
// same number), and its new analysis covers the turns seen since
// (docs/decisions/sessions.md §4.2).
func TestEvictedSessionContinues(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig()
	cfg.SessionTimeout = 30 * time.Second
	cfg.Continuation.MaxRecords = 2
	p, sink, clk := newTestProcessor(t, cfg, nil)
	send := func(id string, seed, i int) {
		c := conversation[i]
		_, err := p.processTraces(ctx, chatTurn(id, seed, clk.now(), c.user, c.answer, true))
		require.NoError(t, err)
		clk.advance(3 * time.Second)
		p.step(ctx)
	}
	send("evicted", 1, 0)
	send("evicted", 2, 1)
	clk.advance(2 * time.Minute)
	p.step(ctx)
	send("other", 3, 0)
	send("other", 4, 1)
	clk.advance(2 * time.Minute)
	p.step(ctx)
	send("evicted", 5, 2)
	clk.advance(2 * time.Minute)
	p.step(ctx)

	var got []evaluation.Analysis
	for _, a := range analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession]) {
		if a.SessionID == "evicted" {
			got = append(got, a)
		}
	}
	require.Len(t, got, 2)
	assert.Equal(t, []int{1, 2}, []int{got[0].AnalysisRevision, got[1].AnalysisRevision})
	require.Len(t, got[1].TurnResults, 1, "the dropped turns are not known any more")
	assert.Equal(t, 2, got[1].TurnResults[0].TurnIndex, "the turn index goes on")
}

// countingReserves counts the calls to ReserveTurns and the turns they reserve, and the
// calls to SaveRevision.
type countingReserves struct {
	store.ContinuationStore
	calls, turns, revisionSaves int
}

func (c *countingReserves) SaveRevision(ctx context.Context, id string, revision int) error {
	c.revisionSaves++
	return c.ContinuationStore.SaveRevision(ctx, id, revision)
}

func (c *countingReserves) ReserveTurns(ctx context.Context, turns []store.TurnKey) ([]int, error) {
	c.calls++
	c.turns += len(turns)
	return c.ContinuationStore.ReserveTurns(ctx, turns)
}

// TestTurnsReservedOnceABatch: the turns that close together, in several sessions, get
// their indexes from one ReserveTurns call (one write transaction), each at its
// session's own next index; the sessions' revisions, allocated and recorded by
// NextRevision, are not saved again.
func TestTurnsReservedOnceABatch(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		cfg := recoveryConfig(driver, dsn)
		cfg.Workers = 1
		p, sink, clk := startedProcessor(t, cfg)
		require.Len(t, p.shards, 1)
		counted := &countingReserves{ContinuationStore: p.cont}
		p.cont = counted
		for turn := range 2 {
			for s := range 4 {
				td := chatTurn(fmt.Sprintf("batch-%d", s), 10*s+turn, clk.now(), conversation[turn].user, conversation[turn].answer, true)
				_, err := p.processTraces(ctx, td)
				require.NoError(t, err)
			}
			clk.advance(3 * time.Second)
			p.step(ctx)
		}
		assert.Equal(t, 8, counted.turns)
		assert.Equal(t, 2, counted.calls, "one call a batch")
		_, provisional := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
		assert.Len(t, provisional[0], 4)
		assert.Len(t, provisional[1], 4)

		clk.advance(2 * time.Minute)
		p.step(ctx)
		require.Len(t, evalSpans(sink)[semconv.EvalKindAgentSession], 4)
		assert.Zero(t, counted.revisionSaves, "NextRevision recorded every revision")
		for s := range 4 {
			c, err := counted.LoadContinuation(ctx, fmt.Sprintf("batch-%d", s), nil)
			require.NoError(t, err)
			assert.Equal(t, 1, c.Revision)
			assert.Len(t, c.Turns, 2)
		}
	})
}

// TestLateSpansOfAFinalTurnNotEvaluatedAgain: a span of a turn that already has its final
// verdict, arriving after its session ended and its closed trace id was forgotten (more
// than turn_timeout later: an export retried by the sender, a straggler), is counted as
// late and not evaluated again, and the session, which got nothing else, ends without a
// new analysis. Before, its trace closed as a turn of its own under the
// stored index: a third, partial turn span for turn 0 (whose calls and issues the
// exporter counts again) and a record that replaced the whole turn's in the session's
// state. In memory, SQLite and PostgreSQL, and across a restart for the two databases;
// and for a fragment of the turn (its LLM span only, without the turn's root span: the
// tracker gives it a root span of its own, so no record has its turn id), which is
// partial.
func TestLateSpansOfAFinalTurnNotEvaluatedAgain(t *testing.T) {
	run := func(t *testing.T, cont ContinuationConfig, session string, restart, fragment bool) {
		ctx := context.Background()
		tel := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
		cfg := testConfig()
		cfg.SessionTimeout = 30 * time.Second
		cfg.Continuation = cont
		p, sink, clk := newTestProcessor(t, cfg, tel)
		require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
		td := chatTurn(session, 1, clk.now(), "Weather in Paris tomorrow?", "Sunny.", true)
		late := ptrace.NewTraces()
		td.CopyTo(late)
		if fragment {
			late.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.Name() != "chat gpt" })
		}
		_, err := p.processTraces(ctx, td)
		require.NoError(t, err)
		clk.advance(3 * time.Second)
		p.step(ctx) // the turn closes
		clk.advance(time.Minute)
		p.step(ctx) // the session ends: turn 0 final, analysis revision 1
		clk.advance(cfg.TurnTimeout + time.Minute)
		p.step(ctx) // its closed trace ids are forgotten
		sinks := []*consumertest.TracesSink{sink}
		if restart {
			require.NoError(t, p.shutdown(ctx))
			p, sink, clk = newTestProcessor(t, cfg, tel)
			clk.advance(2*time.Minute + cfg.TurnTimeout)
			require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
			sinks = append(sinks, sink)
		}
		out, err := p.processTraces(ctx, late) // both spans again
		require.NoError(t, err)
		assert.Equal(t, late.SpanCount(), out.SpanCount(), "passed on")
		clk.advance(3 * time.Second)
		p.step(ctx)
		clk.advance(time.Minute)
		p.step(ctx)
		require.NoError(t, p.shutdown(ctx))

		var turns, sessions []ptrace.Span
		for _, s := range sinks {
			turns = append(turns, evalSpans(s)[semconv.EvalKindTurn]...)
			sessions = append(sessions, evalSpans(s)[semconv.EvalKindAgentSession]...)
		}
		require.Len(t, turns, 2, "turn 0's provisional and final spans, none for the late spans")
		for _, sp := range turns {
			tr, err := evalspan.DecodeTurn(sp.Attributes())
			require.NoError(t, err)
			assert.Equal(t, 0, tr.TurnIndex)
			assert.False(t, tr.Partial)
		}
		as := analyses(t, sessions)
		require.Len(t, as, 1, "late spans alone end the session without a new revision")
		for _, a := range as {
			require.Len(t, a.TurnResults, 1)
			assert.False(t, a.TurnResults[0].Partial, "revision %d keeps the whole turn", a.AnalysisRevision)
			assert.Equal(t, "Sunny.", a.TurnResults[0].FinalResponse)
		}
		metadatatest.AssertEqualProcessorAgentsessionLateSpans(t, tel, []metricdata.DataPoint[int64]{{Value: int64(late.SpanCount())}},
			metricdatatest.IgnoreTimestamp())
	}
	t.Run("memory", func(t *testing.T) { run(t, ContinuationConfig{}, "late-final", false, false) })
	t.Run("memory fragment", func(t *testing.T) { run(t, ContinuationConfig{}, "late-fragment", false, true) })
	onStores(t, func(t *testing.T, driver, dsn string) {
		cont := ContinuationConfig{Driver: driver, DSN: configopaque.String(dsn)}
		t.Run("one run", func(t *testing.T) { run(t, cont, "late-final", false, false) })
		t.Run("restart", func(t *testing.T) { run(t, cont, "late-final-restart", true, false) })
		t.Run("fragment after a restart", func(t *testing.T) { run(t, cont, "late-fragment-restart", true, true) })
	})
}

// sendAfterForgotten lets p's tracker forget the traces it closed (turn_timeout after
// their session ended), sends late, and lets its turn close and its session end.
func sendAfterForgotten(t *testing.T, p *agentSessionProcessor, clk *testClock, cfg *Config, late ptrace.Traces) {
	t.Helper()
	ctx := context.Background()
	clk.advance(cfg.TurnTimeout + time.Minute)
	p.step(ctx) // the trace is forgotten
	_, err := p.processTraces(ctx, late)
	require.NoError(t, err)
	clk.advance(3 * time.Second)
	p.step(ctx)
	clk.advance(cfg.TurnTimeout + time.Minute)
	p.step(ctx)
}

// TestLateSpansOfASingleTraceSessionNotAnalysedAgain: a turn without a session key is a
// session of its own, keyed by its trace id and not kept in the continuation store. A
// span of it that comes after the tracker forgot the trace (turn_timeout after its end)
// is counted as late. Before, it formed a new session of the same id whose analysis, of
// the fragment and partial, was revision 1 again and replaced the whole one in the
// result store (which takes a revision equal to the stored one).
func TestLateSpansOfASingleTraceSessionNotAnalysedAgain(t *testing.T) {
	ctx := context.Background()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig()
	p, sink, clk := newTestProcessor(t, cfg, tel)
	td := chatTurn("", 7, clk.now(), "Weather in Paris tomorrow?", "Sunny.", true)
	forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) { sp.Attributes().Remove("gen_ai.conversation.id") })
	late := ptrace.NewTraces()
	td.CopyTo(late)
	late.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.Name() != "chat gpt" })
	_, err := p.processTraces(ctx, td)
	require.NoError(t, err)
	clk.advance(3 * time.Second)
	p.step(ctx) // the turn closes and its session ends
	sendAfterForgotten(t, p, clk, cfg, late)

	as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	require.Len(t, as, 1, "one analysis, of the whole turn")
	assert.False(t, as[0].Partial)
	final, provisional := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
	assert.Equal(t, map[int]int{0: 1}, countedVerdicts(final))
	assert.Len(t, provisional[0], 1)
	metadatatest.AssertEqualProcessorAgentsessionLateSpans(t, tel, []metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
}

// oneTraceTrace is the trace of oneTraceSession's conversation.
const oneTraceTrace = "0af7651916cd43dd8448eb211c80319c"

// oneTraceSession is conversation run inside one trace, as the tracker hands it over
// once it splits such a trace (docs/decisions/sessions.md §2.4.1): its turns share
// their trace id, each with a root span of its own (the invocation's).
func oneTraceSession(id string, start time.Time) *session.AgentSession {
	s := &session.AgentSession{ID: id, KeySource: "gen_ai.conversation.id", Service: "weather-bot",
		Agents: []session.AgentDefinition{{ID: "weather"}}, StartedAt: start, EndReason: session.EndReasonSessionTimeout}
	for i, c := range conversation {
		at := start.Add(time.Duration(i) * time.Second)
		root := fmt.Sprintf("%016x", 0xa1+i)
		s.Turns = append(s.Turns, session.Turn{Index: i, TraceID: oneTraceTrace, RootSpanID: root,
			UserMessage: c.user, FinalResponse: c.answer, StartedAt: at, EndedAt: at.Add(100 * time.Millisecond),
			LatencyMs: 100, Status: session.StatusOK, SpanCount: 1,
			Interactions: []session.AgentInteraction{{AgentID: "weather", SpanID: root, Input: c.user, Output: c.answer,
				StartedAt: at, LatencyMs: 100, Status: session.StatusOK, Steps: []session.AgentStep{}}}})
		s.EndedAt = at.Add(100 * time.Millisecond)
	}
	return s
}

// turnClosed is the tracker's event for the close of s's turn i: a window of that turn
// and the one before it.
func turnClosed(s *session.AgentSession, i int) tracker.Event {
	snap := *s
	lo := max(0, i-1)
	snap.Turns = s.Turns[lo : i+1]
	return tracker.Event{Kind: tracker.EventTurnClosed, Session: &snap, TurnIndex: i - lo}
}

// TestTurnsOfOneTraceEvaluatedApart: the turns of a conversation run inside one trace
// (one trace id, a root span each) are evaluated, numbered 0, 1, 2 and saved as three
// turns, reserved in one batch (turns 0 and 1) or alone (turn 2): each turn's final
// verdict is given once, with its next turn's user message (the correction in turn 1
// makes turn 0 RDM), and the analysis and the continuation store hold all three. Before,
// the turns of one trace took one index and each record replaced the one before it. In
// memory, SQLite and PostgreSQL.
func TestTurnsOfOneTraceEvaluatedApart(t *testing.T) {
	run := func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		cfg := testConfig()
		cfg.Continuation.Driver, cfg.Continuation.DSN = driver, configopaque.String(dsn)
		p, sink, clk := newTestProcessor(t, cfg, nil)
		require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
		s := oneTraceSession("one-trace", clk.now())
		p.handle(ctx, []tracker.Event{turnClosed(s, 0), turnClosed(s, 1)})
		p.handle(ctx, []tracker.Event{turnClosed(s, 2)})
		stored, err := p.cont.LoadContinuation(ctx, s.ID, nil)
		require.NoError(t, err)
		p.handle(ctx, []tracker.Event{{Kind: tracker.EventSessionEnded, Session: s}})
		require.NoError(t, p.shutdown(ctx))

		var got []string
		for _, r := range stored.Turns {
			got = append(got, fmt.Sprintf("%d:%s", r.Result.TurnIndex, r.Result.RootSpanID))
		}
		want := []string{"0:" + s.Turns[0].RootSpanID, "1:" + s.Turns[1].RootSpanID, "2:" + s.Turns[2].RootSpanID}
		assert.Equal(t, want, got, "the continuation store holds each turn of the trace")
		final, provisional := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
		assert.Equal(t, map[int]int{0: 1, 1: 1, 2: 1}, countedVerdicts(final), "one counted final verdict a turn")
		for i := range s.Turns {
			require.Len(t, provisional[i], 1, "turn %d", i)
			assert.Equal(t, s.Turns[i].RootSpanID, provisional[i][0].RootSpanID, "turn %d", i)
			assert.Equal(t, s.Turns[i].UserMessage, provisional[i][0].UserMessage, "turn %d", i)
		}
		require.NotEmpty(t, final[0])
		assert.Equal(t, evaluation.DetectionRDM, final[0][0].DetectionType, "turn 1's correction follows turn 0")
		as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		require.Len(t, as, 1)
		got = got[:0]
		for _, tr := range as[0].TurnResults {
			got = append(got, fmt.Sprintf("%d:%s", tr.TurnIndex, tr.RootSpanID))
		}
		assert.Equal(t, want, got, "the analysis holds each turn of the trace")
	}
	t.Run("memory", func(t *testing.T) { run(t, "", "") })
	onStores(t, run)
}
