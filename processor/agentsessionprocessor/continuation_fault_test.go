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

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// failingContinuation is a continuation store whose next failSaves SaveTurns calls fail
// (a database outage), writing nothing.
type failingContinuation struct {
	store.ContinuationStore
	failSaves int
}

func (f *failingContinuation) SaveTurns(ctx context.Context, turns []store.TurnState) ([]bool, error) {
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
