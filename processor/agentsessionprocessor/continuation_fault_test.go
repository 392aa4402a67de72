// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff/handofftest"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// failingContinuation is a continuation store whose next failSaves SaveTurns calls fail
// (a database outage), writing nothing.
type failingContinuation struct {
	store.ContinuationStore
	failSaves int
}

func (f *failingContinuation) SaveTurns(ctx context.Context, turns []store.TurnState) ([]store.SavedTurn, error) {
	if f.failSaves > 0 {
		f.failSaves--
		return nil, errors.New("injected: continuation store unavailable")
	}
	return f.ContinuationStore.SaveTurns(ctx, turns)
}

// countedVerdicts returns, per turn index, how many final verdicts that count
// (agent_eval_turns_total: final, not Revised) the turn spans carry.
func countedVerdicts(final map[int][]evaluation.TurnResult) map[int]int {
	n := map[int]int{}
	for i, trs := range final {
		for _, tr := range trs {
			if !tr.Revised {
				n[i]++
			}
		}
	}
	return n
}

// TestFailedSaveCountsTurnOnce: the save of turn 0's final verdict (with turn 1's user
// message) fails. The verdict is emitted and counted then; the record is kept and saved
// again with the shard's next save, so when the session continues after a pause (its
// state read back from the store) turn 0 is not made final again: every turn has exactly
// one final verdict that counts, and the store holds every turn final
// (docs/decisions/sessions.md §4.5). With 3 failures the saves at idle fail too: the
// continued session takes the records not saved over the store's provisional rows.
func TestFailedSaveCountsTurnOnce(t *testing.T) {
	for _, failures := range []int{1, 3} {
		t.Run(fmt.Sprintf("failures=%d", failures), func(t *testing.T) {
			onStores(t, func(t *testing.T, driver, dsn string) {
				runFailedSave(t, driver, dsn, failures)
			})
		})
	}
}

func runFailedSave(t *testing.T, driver, dsn string, failures int) {
	ctx := context.Background()
	p, sink, clk := newTestProcessor(t, recoveryConfig(driver, dsn), nil)
	startWithoutWorker(t, p)
	t.Cleanup(func() { assert.NoError(t, p.shutdown(ctx)) })
	faulty := &failingContinuation{ContinuationStore: p.cont}
	p.cont = faulty
	h := withHandoff(p) // withdrawn verdicts must leave no entry
	const id = "failed-save-1"
	sendTurns(t, p, clk, id, 1, 0)
	faulty.failSaves = failures
	sendTurns(t, p, clk, id, 1, 1) // turn 0's final verdict: its save fails
	clk.advance(2 * time.Minute)   // idle: the session leaves memory
	p.step(ctx)
	require.Zero(t, faulty.failSaves, "the saves failed")
	sendTurns(t, p, clk, id, 1, 2) // continued from the store
	clk.advance(2 * time.Minute)
	p.step(ctx)

	final, provisional := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
	counted := countedVerdicts(final)
	for i := range conversation {
		assert.Len(t, provisional[i], 1, "turn %d is evaluated once", i)
		assert.Equal(t, 1, counted[i], "turn %d has one final verdict that counts", i)
	}
	c := storedContinuation(t, driver, dsn, id)
	require.Len(t, c.Turns, len(conversation), "every turn stored once")
	for i, r := range c.Turns {
		assert.True(t, r.Result.Final, "turn %d", i)
	}
	assert.Equal(t, evaluation.DetectionRDM, c.Turns[0].Result.DetectionType, "the stored verdict of turn 0 is RDM")
	handofftest.AssertDecoded(t, takeHandedOff(t, h, sink))
}

// TestFailedSavesWrittenAtShutdown: the saves of a session's last batches fail and the
// session went idle (no event of its shard is left): the shutdown writes the records
// kept, so the store holds the session's final verdicts.
func TestFailedSavesWrittenAtShutdown(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, _, clk := newTestProcessor(t, recoveryConfig(driver, dsn), nil)
		startWithoutWorker(t, p)
		faulty := &failingContinuation{ContinuationStore: p.cont}
		p.cont = faulty
		const id = "failed-save-shutdown-1"
		sendTurns(t, p, clk, id, 1, 0)
		faulty.failSaves = 3
		sendTurns(t, p, clk, id, 1, 1)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		require.Zero(t, faulty.failSaves, "the saves failed")
		require.NoError(t, p.shutdown(ctx))

		c := storedContinuation(t, driver, dsn, id)
		require.Len(t, c.Turns, 2)
		for i, r := range c.Turns {
			assert.True(t, r.Result.Final, "turn %d", i)
		}
		assert.Equal(t, evaluation.DetectionRDM, c.Turns[0].Result.DetectionType)
	})
}

// failingCollectors is twoCollectors with collector A's (ps[0]) saves failing on demand.
func failingCollectors(t *testing.T, driver, dsn string) ([2]*agentSessionProcessor, [2]*consumertest.TracesSink, [2]*testClock, *failingContinuation) {
	ps, sinks, clks := twoCollectors(t, driver, dsn)
	faulty := &failingContinuation{ContinuationStore: ps[0].cont}
	ps[0].cont = faulty
	return ps, sinks, clks, faulty
}

// TestFailedSaveWhileOtherCollectorEndsSession: two collectors share the continuation
// store. Turn 0 closes on B, turn 1 on A, whose save of turn 0's final verdict (with turn
// 1's user message) fails. While A's records wait to be saved again, B ends the session:
// it reads turn 0 provisional in the store and gives it its final verdict (without
// follow-up), which the store reports as the turn's first. Every turn must still have
// exactly one final verdict that counts (agent_eval_turns_total), and the store must
// keep turn 0's verdict with follow-up (RDM). Before A's verdict waited for its save, A
// counted turn 0 when its save failed and B counted it again.
func TestFailedSaveWhileOtherCollectorEndsSession(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		ps, sinks, clks, faulty := failingCollectors(t, driver, dsn)
		const id = "failed-save-two-1"
		sendTurn(t, ps, clks, 1, id, 0) // B: turn 0
		faulty.failSaves = 1
		sendTurn(t, ps, clks, 0, id, 1) // A: turn 1, and turn 0's final verdict: the save fails
		require.Zero(t, faulty.failSaves, "A's save failed")
		runOn(ctx, ps[1:], clks[1:], time.Minute) // the session ends on B
		idleBoth(ctx, ps, clks)                   // then on A, whose save goes through

		final, provisional := turnVerdicts(t, turnSpansOf(sinks))
		counted := countedVerdicts(final)
		for i := range 2 {
			assert.Len(t, provisional[i], 1, "turn %d is evaluated once", i)
			assert.Equal(t, 1, counted[i], "turn %d has one final verdict that counts", i)
		}
		c := storedContinuation(t, driver, dsn, id)
		require.Len(t, c.Turns, 2, "every turn stored once")
		for i, r := range c.Turns {
			assert.True(t, r.Result.Final, "turn %d", i)
		}
		assert.Equal(t, evaluation.DetectionRDM, c.Turns[0].Result.DetectionType, "the stored verdict of turn 0 is RDM")
	})
}

// TestWaitingVerdictsAreEmitted: while every save fails, the final verdicts wait for a
// save to say whether they are the turns' first; none is lost to the output. They are
// emitted, unmarked (counted here), when their records are dropped over the shard's
// bound (maxUnsaved 1), or at shutdown when the last save fails too; every turn span
// emitted is whole and signed (a verdict withdrawn from its batch leaves no empty span).
func TestWaitingVerdictsAreEmitted(t *testing.T) {
	for _, maxUnsaved := range []int{1, 1000} {
		t.Run(fmt.Sprintf("maxUnsaved=%d", maxUnsaved), func(t *testing.T) {
			onStores(t, func(t *testing.T, driver, dsn string) {
				ctx := context.Background()
				p, sink, clk := newTestProcessor(t, recoveryConfig(driver, dsn), nil)
				startWithoutWorker(t, p)
				for _, sh := range p.shards {
					sh.maxUnsaved = maxUnsaved
				}
				p.cont = &failingContinuation{ContinuationStore: p.cont, failSaves: 1 << 20}
				const id = "waiting-1"
				sendTurns(t, p, clk, id, 1, 0)
				sendTurns(t, p, clk, id, 1, 1)
				sendTurns(t, p, clk, id, 1, 2)
				clk.advance(2 * time.Minute)
				p.step(ctx)
				require.NoError(t, p.shutdown(ctx))

				spans := evalSpans(sink)[semconv.EvalKindTurn]
				for _, sp := range spans {
					require.NoError(t, p.emitter.signer.Verify(sp.Attributes()), "a whole, signed turn span")
				}
				final, provisional := turnVerdicts(t, spans)
				counted := countedVerdicts(final)
				for i := range conversation {
					assert.Len(t, provisional[i], 1, "turn %d is evaluated once", i)
					assert.Equal(t, 1, counted[i], "turn %d has one final verdict that counts", i)
				}
				require.NotEmpty(t, final[0])
				assert.Equal(t, evaluation.DetectionRDM, final[0][0].DetectionType, "turn 0's verdict with follow-up")
			})
		})
	}
}

// TestKilledWithRecordsWaiting pins what a collector killed while its records wait
// (docs/decisions/sessions.md §4.5) costs the recovery: turn 0 is stored provisional,
// and A's save of turn 0's verdict with follow-up and of turn 1's record fails; A is
// killed. B recovers the session from the store: turn 0 gets its final verdict there,
// counted once but without follow-up (turn 1's correction is not RDM on it); turn 1,
// whose record was lost, is in no analysis and gets no final verdict, although its
// provisional span went out. Before the verdicts waited, A had counted turn 0 when its
// save failed, and B counted it again.
func TestKilledWithRecordsWaiting(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		ps, sinks, clks, faulty := failingCollectors(t, driver, dsn)
		const id = "killed-waiting-1"
		sendTurn(t, ps, clks, 0, id, 0)
		faulty.failSaves = 1 << 20
		sendTurn(t, ps, clks, 0, id, 1)
		kill(t, ps[0])
		for _, sh := range ps[0].shards { // kill -9: what waited in memory is gone
			sh.unsaved, sh.waiting = nil, nil
		}
		runOn(ctx, ps[1:], clks[1:], 2*time.Minute)

		final, provisional := turnVerdicts(t, turnSpansOf(sinks))
		counted := countedVerdicts(final)
		assert.Len(t, provisional[1], 1, "turn 1's provisional span went out")
		assert.Equal(t, 1, counted[0], "turn 0 counted once, by the recovery")
		require.Len(t, final[0], 1)
		assert.NotEqual(t, evaluation.DetectionRDM, final[0][0].DetectionType,
			"turn 0's verdict has no follow-up: turn 1's correction is not RDM on it")
		assert.Zero(t, counted[1], "turn 1 was lost with A's records")
		as := allAnalyses(t, sinks)
		require.Len(t, as, 1, "the recovered analysis")
		assert.Equal(t, []int{0}, turnIndexes(as[0]), "the analysis has no turn 1")
		assert.Equal(t, string(session.EndReasonRestart), as[0].EndReason)
	})
}

// TestWaitingVerdictRetriedWithoutEvents: the save of turn 0's verdict with follow-up
// fails and its shard gets no more events (the session stays open, nothing else
// arrives). The worker has the shard save the records again once unsavedRetry has
// passed: the verdict is emitted then, counted once, and the store holds it, without
// waiting for the session's end.
func TestWaitingVerdictRetriedWithoutEvents(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk := newTestProcessor(t, recoveryConfig(driver, dsn), nil)
		startWithoutWorker(t, p)
		t.Cleanup(func() { assert.NoError(t, p.shutdown(ctx)) })
		faulty := &failingContinuation{ContinuationStore: p.cont, failSaves: 0}
		p.cont = faulty
		const id = "waiting-retry-1"
		sendTurns(t, p, clk, id, 1, 0)
		faulty.failSaves = 1
		sendTurns(t, p, clk, id, 1, 1) // turn 0's final verdict: its save fails
		require.Zero(t, faulty.failSaves)
		final, _ := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
		assert.Empty(t, final[0], "the verdict waits for its save")

		clk.advance(unsavedRetry) // well before session_timeout (30 s)
		p.step(ctx)
		final, _ = turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
		assert.Equal(t, map[int]int{0: 1}, countedVerdicts(final), "turn 0's verdict, once")
		c := storedContinuation(t, driver, dsn, id)
		require.Len(t, c.Turns, 2)
		assert.True(t, c.Turns[0].Result.Final)
		assert.Equal(t, evaluation.DetectionRDM, c.Turns[0].Result.DetectionType)
	})
}
