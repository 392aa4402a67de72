// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// The tests of this file were written by the "never lose a turn" audit
// (docs/decisions/result-durability.md, "Audited"): each drives the processor with real stores
// and checks, through the store's API, that no turn is lost or overwritten.

// startedProcessor is a processor with cfg's continuation store, started without its
// worker (the test steps it) and shut down at the end of the test.
func startedProcessor(t *testing.T, cfg *Config) (*agentSessionProcessor, *consumertest.TracesSink, *testClock) {
	t.Helper()
	p, sink, clk := newTestProcessor(t, cfg, nil)
	startWithoutWorker(t, p)
	t.Cleanup(func() { assert.NoError(t, p.shutdown(context.Background())) })
	return p, sink, clk
}

// resultStore opens the result store at driver/dsn (the exporter's), closed at the end
// of the test.
func resultStore(t *testing.T, driver, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, st.Close()) })
	return st
}

// exportAnalyses saves, in the order emitted, the session analyses the sink received
// from index from on, as the agenteval exporter does (it stores nothing else of them),
// and returns how many it saved.
func exportAnalyses(t *testing.T, st store.Store, sink *consumertest.TracesSink, from int) int {
	t.Helper()
	as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	for i := from; i < len(as); i++ {
		require.NoError(t, st.SaveAnalysis(context.Background(), &as[i]))
	}
	return len(as)
}

// sendCounted sends turn i of the conversation (conversation[i], then plain questions)
// as session id to p, checks that every span is passed on, and closes the turn.
func sendCounted(t *testing.T, p *agentSessionProcessor, clk *testClock, id string, i int) {
	t.Helper()
	ctx := context.Background()
	user, answer := "And on Monday?", "On Monday: windy."
	if i < len(conversation) {
		user, answer = conversation[i].user, conversation[i].answer
	}
	td := chatTurn(id, 100+i, clk.now(), user, answer, true)
	in := td.SpanCount()
	out, err := p.processTraces(ctx, td)
	require.NoError(t, err)
	require.Equal(t, in, out.SpanCount(), "every span is passed on")
	clk.advance(3 * time.Second) // turn_settle
	p.step(ctx)
}

// settleAndIdle lets p's open turns settle and close, then its sessions go idle.
func settleAndIdle(p *agentSessionProcessor, clk *testClock) {
	clk.advance(3 * time.Second)
	p.step(context.Background())
	clk.advance(2 * time.Minute)
	p.step(context.Background())
}

// twoTurnsStored sends turns 0 and 1 of session id to p, lets the session go idle and
// saves its analysis (revision 1) to results, checking both turns are stored; it returns
// how many analyses sink holds (1).
func twoTurnsStored(t *testing.T, p *agentSessionProcessor, clk *testClock, sink *consumertest.TracesSink, results store.Store, id string) int {
	t.Helper()
	sendCounted(t, p, clk, id, 0)
	sendCounted(t, p, clk, id, 1)
	clk.advance(2 * time.Minute)
	p.step(context.Background())
	n := exportAnalyses(t, results, sink, 0)
	require.Equal(t, 1, n)
	assertWhole(t, results, id, 2)
	return n
}

// assertWhole checks that the result store holds session id with exactly turns turns,
// one per trace, at indexes 0..turns-1, and returns it.
func assertWhole(t *testing.T, st store.Store, id string, turns int) *evaluation.Analysis {
	t.Helper()
	a, err := st.GetAnalysis(context.Background(), id)
	require.NoError(t, err)
	traces := map[string]int{}
	for i, tr := range a.TurnResults {
		assert.Equal(t, i, tr.TurnIndex, "turn %d is at its index", i)
		traces[tr.TraceID]++
	}
	assert.Len(t, a.TurnResults, turns, "every turn stored")
	assert.Len(t, traces, turns, "each turn once: %v", traces)
	return a
}

// assertEachTurnOnce checks that each of turns turns was evaluated once (one
// provisional verdict) and has one final verdict that counts (agent_eval_turns_total),
// over the turn spans every sink received.
func assertEachTurnOnce(t *testing.T, turns int, sinks ...*consumertest.TracesSink) {
	t.Helper()
	var spans []ptrace.Span
	for _, s := range sinks {
		spans = append(spans, evalSpans(s)[semconv.EvalKindTurn]...)
	}
	final, provisional := turnVerdicts(t, spans)
	counted := countedVerdicts(final)
	assert.Len(t, counted, turns, "final verdicts counted: %v", counted)
	for i := range turns {
		assert.Len(t, provisional[i], 1, "turn %d evaluated once", i)
		assert.Equal(t, 1, counted[i], "turn %d counted once", i)
	}
}

// assertContinuationWhole checks that the continuation store at driver/dsn holds
// session id's turns once each, at indexes 0..turns-1, all final.
func assertContinuationWhole(t *testing.T, driver, dsn, id string, turns int) store.Continuation {
	t.Helper()
	c := storedContinuation(t, driver, dsn, id)
	require.Len(t, c.Turns, turns, "every turn once in the continuation store")
	for i, r := range c.Turns {
		assert.Equal(t, i, r.Result.TurnIndex, "continuation record %d", i)
		assert.True(t, r.Result.Final, "continuation record %d final", i)
	}
	return c
}

// TestShutdownWithOpenTurnsThenRestart: the processor shuts down while the session is
// open, with turn 0 closed and turn 1's spans received but not settled. The shutdown
// closes turn 1 and emits a partial analysis of both turns; a processor restarted on
// the same database continues the session with turn 2: the result store then holds the
// three turns once each at revision 2, turn 0 with the RDM that turn 1's correction
// gave it, and every turn has one final verdict that counts across both processors.
func TestShutdownWithOpenTurnsThenRestart(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		cfg := recoveryConfig(driver, dsn)
		results := resultStore(t, driver, dsn)
		const id = "shutdown-open-1"

		p1, sink1, clk1 := newTestProcessor(t, cfg, nil)
		startWithoutWorker(t, p1)
		sendCounted(t, p1, clk1, id, 0)
		td := chatTurn(id, 101, clk1.now(), conversation[1].user, conversation[1].answer, true)
		out, err := p1.processTraces(ctx, td)
		require.NoError(t, err)
		require.Equal(t, td.SpanCount(), out.SpanCount())
		require.NoError(t, p1.shutdown(ctx)) // turn 1 has not settled
		as := analyses(t, evalSpans(sink1)[semconv.EvalKindAgentSession])
		require.Len(t, as, 1, "the shutdown emits the open session")
		assert.True(t, as[0].Partial)
		assert.Equal(t, []int{0, 1}, turnIndexes(as[0]), "the unsettled turn is in it")
		exportAnalyses(t, results, sink1, 0)
		assertWhole(t, results, id, 2)

		p2, sink2, clk2 := newTestProcessor(t, cfg, nil)
		clk2.advance(time.Hour)
		startWithoutWorker(t, p2)
		t.Cleanup(func() { assert.NoError(t, p2.shutdown(ctx)) })
		sendCounted(t, p2, clk2, id, 2)
		clk2.advance(2 * time.Minute)
		p2.step(ctx)
		exportAnalyses(t, results, sink2, 0)

		a := assertWhole(t, results, id, 3)
		assert.Equal(t, 2, a.AnalysisRevision)
		assert.Equal(t, evaluation.DetectionRDM, a.TurnResults[0].DetectionType, "the correction in turn 1 is RDM on turn 0")
		assert.Equal(t, string(session.EndReasonSessionTimeout), a.EndReason, "the continued session ended on its own")
		assert.True(t, a.TurnResults[1].Partial, "turn 1 was cut by the shutdown (so the analysis stays partial)")
		assertEachTurnOnce(t, 3, sink1, sink2)
		assertContinuationWhole(t, driver, dsn, id, 3)
	})
}

// TestTwoCollectorsOneRestarted: one session's turns alternate between collectors A and
// B sharing the database; A shuts down while the session is open on both (it emits what
// it holds) and a new A' takes its place; the turns go on alternating between A' and B.
// The highest revision stored covers the four turns once each at their indexes, and
// each turn's final verdict counts once across the three processors.
func TestTwoCollectorsOneRestarted(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		cfg := recoveryConfig(driver, dsn)
		results := resultStore(t, driver, dsn)
		const id = "two-restarted-1"
		start := func() (*agentSessionProcessor, *consumertest.TracesSink, *testClock) {
			p, sink, clk := newTestProcessor(t, cfg, nil)
			startWithoutWorker(t, p)
			return p, sink, clk
		}
		a, sinkA, clkA := start()
		b, sinkB, clkB := start()
		t.Cleanup(func() { assert.NoError(t, b.shutdown(ctx)) })
		// send gives turn i to collector c and lets 5 s pass on both (the turn closes,
		// the session stays open).
		send := func(c *agentSessionProcessor, clk *testClock, i int, others ...*agentSessionProcessor) {
			user, answer := "And on Monday?", "On Monday: windy."
			if i < len(conversation) {
				user, answer = conversation[i].user, conversation[i].answer
			}
			td := chatTurn(id, 100+i, clk.now(), user, answer, true)
			out, err := c.processTraces(ctx, td)
			require.NoError(t, err)
			require.Equal(t, td.SpanCount(), out.SpanCount())
			clkA.advance(5 * time.Second)
			clkB.advance(5 * time.Second)
			a.step(ctx)
			b.step(ctx)
		}
		send(a, clkA, 0)
		send(b, clkB, 1)
		require.NoError(t, a.shutdown(ctx))
		old := sinkA
		a, sinkA, clkA = start()
		clkA.advance(clkB.now().Sub(clkA.now())) // A' starts at B's time
		t.Cleanup(func() { assert.NoError(t, a.shutdown(ctx)) })
		send(a, clkA, 2)
		send(b, clkB, 3)
		for range 12 { // two minutes: the session goes idle on both
			clkA.advance(10 * time.Second)
			clkB.advance(10 * time.Second)
			a.step(ctx)
			b.step(ctx)
		}
		sinks := []*consumertest.TracesSink{old, sinkA, sinkB}
		var all []evaluation.Analysis
		for _, s := range sinks {
			all = append(all, analyses(t, evalSpans(s)[semconv.EvalKindAgentSession])...)
		}
		slices.SortFunc(all, func(x, y evaluation.Analysis) int { return x.AnalysisRevision - y.AnalysisRevision })
		for i := range all {
			require.NoError(t, results.SaveAnalysis(ctx, &all[i]))
		}
		last := highestRevision(t, all)
		require.Len(t, last.TurnResults, 4, "the highest revision covers every turn")
		got := assertWhole(t, results, id, 4)
		assert.Equal(t, last.AnalysisRevision, got.AnalysisRevision)
		assert.Equal(t, evaluation.DetectionRDM, got.TurnResults[0].DetectionType)
		assertEachTurnOnce(t, 4, sinks...)
		assertContinuationWhole(t, driver, dsn, id, 4)
	})
}

// TestSpanLimitTripsDuringContinuation: a session stored with two turns continues after
// a pause, and its continuation trips max_spans_per_session (two turns open at once,
// 4 spans, limit 3): the continued part closes as partial. The earlier turns stay in
// the result store, the revision goes up, and the analysis stored covers all four turns
// (a shorter analysis never replaces a longer one). The session's next turn, refused by
// the limit, is passed on.
func TestSpanLimitTripsDuringContinuation(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		cfg := recoveryConfig(driver, dsn)
		cfg.MaxSpansPerSession = 3
		p, sink, clk := startedProcessor(t, cfg)
		results := resultStore(t, driver, dsn)
		const id = "limit-continued-1"
		n := twoTurnsStored(t, p, clk, sink, results, id)

		for i := 2; i < 5; i++ { // turns 2 and 3 open together trip the limit; turn 4 is refused
			td := chatTurn(id, 100+i, clk.now(), "And on Monday?", "On Monday: windy.", true)
			out, err := p.processTraces(ctx, td)
			require.NoError(t, err)
			require.Equal(t, td.SpanCount(), out.SpanCount(), "every span is passed on")
		}
		settleAndIdle(p, clk)
		exportAnalyses(t, results, sink, n)

		a := assertWhole(t, results, id, 4)
		assert.Equal(t, 2, a.AnalysisRevision)
		assert.True(t, a.Partial)
		assert.Equal(t, string(session.EndReasonMaxSpans), a.EndReason)
		assert.Equal(t, conversation[0].user, a.TurnResults[0].UserMessage, "the stored turns are the earlier ones")
		assertContinuationWhole(t, driver, dsn, id, 4)
	})
}

// TestDuplicateAndReplayedSpans: turn 0's spans arrive twice in one batch and once more
// in a second batch before it closes; after the session went idle and its analysis was
// stored, turn 1's whole trace is delivered again (an at-least-once sender), once the
// tracker has forgotten its trace id. Every span is passed on; each turn is evaluated
// into one stored turn with one final verdict that counts; the replayed spans are late
// spans of a turn with its final verdict, not evaluated again (no second provisional
// span for the exporter to count), and the session they continue ends with no new
// revision.
func TestDuplicateAndReplayedSpans(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk := startedProcessor(t, recoveryConfig(driver, dsn))
		results := resultStore(t, driver, dsn)
		const id = "duplicates-1"
		pass := func(td ptrace.Traces) {
			t.Helper()
			out, err := p.processTraces(ctx, td)
			require.NoError(t, err)
			require.Equal(t, td.SpanCount(), out.SpanCount(), "every span is passed on")
		}
		turn0 := chatTurn(id, 100, clk.now(), conversation[0].user, conversation[0].answer, true)
		twice := ptrace.NewTraces()
		turn0.ResourceSpans().At(0).CopyTo(twice.ResourceSpans().AppendEmpty())
		turn0.ResourceSpans().At(0).CopyTo(twice.ResourceSpans().AppendEmpty())
		pass(twice)
		clk.advance(time.Second)
		pass(turn0)
		clk.advance(3 * time.Second)
		p.step(ctx)
		turn1 := chatTurn(id, 101, clk.now(), conversation[1].user, conversation[1].answer, true)
		pass(turn1)
		settleAndIdle(p, clk)
		n := exportAnalyses(t, results, sink, 0)
		first := assertWhole(t, results, id, 2)
		assert.Equal(t, evaluation.DetectionRDM, first.TurnResults[0].DetectionType)

		clk.advance(2 * time.Minute) // turn_timeout (60 s) after the end: the trace ids are forgotten
		p.step(ctx)
		pass(turn1) // replayed
		settleAndIdle(p, clk)
		exportAnalyses(t, results, sink, n)

		a := assertWhole(t, results, id, 2)
		assert.Equal(t, 1, a.AnalysisRevision, "the replay alone makes no new revision")
		assert.Equal(t, evaluation.DetectionRDM, a.TurnResults[0].DetectionType, "turn 0 keeps its verdict with follow-up")
		for i, tr := range a.TurnResults {
			assert.True(t, tr.Final, "turn %d final", i)
		}
		final, provisional := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
		assert.Equal(t, map[int]int{0: 1, 1: 1}, countedVerdicts(final), "each turn counted once")
		assert.Len(t, provisional[1], 1, "the replayed trace is not evaluated again")
		c := assertContinuationWhole(t, driver, dsn, id, 2)
		assert.Equal(t, evaluation.DetectionRDM, c.Turns[0].Result.DetectionType)
	})
}

// TestShutdownUnderLoadThenRestart: the processor runs with its worker and shards (real
// clock, turns settling in 20 ms) while 4 senders open 2-turn sessions; it shuts down
// while turns are open, closing or queued at the shards. A processor restarted on the
// same database continues every session with one more turn, and shuts down too. Every
// span is passed on, and the result store holds every session with its three turns
// once each, at their indexes, at the second revision.
func TestShutdownUnderLoadThenRestart(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		cfg := recoveryConfig(driver, dsn)
		cfg.TurnSettle = 20 * time.Millisecond
		cfg.Workers = 2
		results := resultStore(t, driver, dsn)
		const senders, sessions = 4, 5
		run := func(turns ...int) *consumertest.TracesSink {
			p, sink, _ := newTestProcessor(t, cfg, nil)
			p.now, p.tick = time.Now, 5*time.Millisecond
			require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
			var wg sync.WaitGroup
			for g := range senders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for s := range sessions {
						for _, i := range turns {
							td := chatTurn(fmt.Sprintf("load-%d-%d", g, s), 1000*g+10*s+i, time.Now(),
								conversation[i].user, conversation[i].answer, true)
							out, err := p.processTraces(ctx, td)
							assert.NoError(t, err)
							assert.Equal(t, td.SpanCount(), out.SpanCount(), "every span is passed on")
							time.Sleep(5 * time.Millisecond)
						}
					}
				}()
			}
			wg.Wait()
			require.NoError(t, p.shutdown(ctx)) // turns still settling
			exportAnalyses(t, results, sink, 0)
			return sink
		}
		run(0, 1)
		run(2)
		for g := range senders {
			for s := range sessions {
				id := fmt.Sprintf("load-%d-%d", g, s)
				a := assertWhole(t, results, id, 3)
				assert.Equal(t, 2, a.AnalysisRevision, id)
				assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage, id)
			}
		}
	})
}

// submitTrace is the evaluation channel's submit as the receiver sends it after the
// candidate's last answer (internal/channeltrace): one span, no GenAI operation, in a
// trace of its own, carrying the session id, the end signal and the proctor's verdict.
func submitTrace(id string, at time.Time, passed bool) ptrace.Traces {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("agent_eval.channel.submit test")
	sp.SetTraceID(pcommon.TraceID{0xee, 0x01})
	sp.SetSpanID(pcommon.SpanID{0xee, 0x02})
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(at))
	sp.Attributes().PutStr(semconv.GenAIConversationID, id)
	sp.Attributes().PutBool(semconv.AgentEvalSessionEnd, true)
	sp.Attributes().PutBool(semconv.AgentEvalTaskCompleted, passed)
	return td
}

// TestOutcomeAfterTheSessionEnded: the proctor submits (passed: false) after the session
// went idle, and, in a second run, after a restart of the collector. The verdict is not
// lost: the session ends again with a new revision of its stored turns, whole, whose
// task_completion is the proctor's (audit f, finding 1: it stayed the heuristic's true).
func TestOutcomeAfterTheSessionEnded(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		cfg := recoveryConfig(driver, dsn)
		results := resultStore(t, driver, dsn)
		for _, restart := range []bool{false, true} {
			id := fmt.Sprintf("outcome-after-end-%t", restart)
			p, sink, clk := startedProcessor(t, cfg)
			n := twoTurnsStored(t, p, clk, sink, results, id)
			first := assertWhole(t, results, id, 2)
			require.NotNil(t, first.TaskCompletion)
			require.True(t, *first.TaskCompletion, "the heuristic's verdict before the submit")
			if restart {
				require.NoError(t, p.shutdown(ctx))
				p, sink, clk = startedProcessor(t, cfg)
				clk.advance(time.Hour)
				n = 0
			}
			clk.advance(time.Minute) // the proctor thinks longer than session_timeout
			td := submitTrace(id, clk.now(), false)
			out, err := p.processTraces(ctx, td)
			require.NoError(t, err)
			require.Equal(t, td.SpanCount(), out.SpanCount(), "every span is passed on")
			settleAndIdle(p, clk)
			exportAnalyses(t, results, sink, n)

			a := assertWhole(t, results, id, 2)
			assert.Equal(t, 2, a.AnalysisRevision, "restart %t: a new revision", restart)
			require.NotNil(t, a.TaskCompletion)
			assert.False(t, *a.TaskCompletion, "restart %t: the proctor's verdict", restart)
			assert.Equal(t, string(session.EndReasonEndSignal), a.EndReason)
			assertContinuationWhole(t, driver, dsn, id, 2)
		}
	})
}
