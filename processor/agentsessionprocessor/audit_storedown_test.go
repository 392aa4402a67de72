// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// errStoreDown is the error of a continuation store that is down.
var errStoreDown = errors.New("injected: the database is down")

// downContinuation is a continuation store that, while down, fails every call (an
// outage of the whole database, not only of the writes); failLoads and failReserves
// make the next loads and turn allocations fail while it is up (a blip).
type downContinuation struct {
	store.ContinuationStore
	// mu guards the counters: the shards call the store at once.
	mu                      sync.Mutex
	down                    bool
	failLoads, failReserves int
	// failRevisions makes NextRevision and SaveRevision fail while the rest is up.
	failRevisions bool
	// failSaves makes SaveTurns and ClaimFinal fail while the rest is up.
	failSaves bool
}

// fails reports whether a call counted by n fails now.
func (d *downContinuation) fails(n *int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if *n > 0 {
		*n--
		return true
	}
	return d.down
}

func (d *downContinuation) LoadContinuation(ctx context.Context, id string, held store.Held) (store.Continuation, error) {
	if d.fails(&d.failLoads) {
		return store.Continuation{}, errStoreDown
	}
	return d.ContinuationStore.LoadContinuation(ctx, id, held)
}

func (d *downContinuation) SaveTurns(ctx context.Context, turns []store.TurnState) ([]store.SavedTurn, error) {
	if d.down || d.failSaves {
		return nil, errStoreDown
	}
	return d.ContinuationStore.SaveTurns(ctx, turns)
}

func (d *downContinuation) ClaimFinal(ctx context.Context, turns []store.Claim) error {
	if d.down || d.failSaves {
		return errStoreDown
	}
	return d.ContinuationStore.ClaimFinal(ctx, turns)
}

func (d *downContinuation) SaveRevision(ctx context.Context, id string, revision int) error {
	if d.down || d.failRevisions {
		return errStoreDown
	}
	return d.ContinuationStore.SaveRevision(ctx, id, revision)
}

func (d *downContinuation) ReserveTurns(ctx context.Context, turns []store.TurnKey) ([]int, error) {
	if d.fails(&d.failReserves) {
		return nil, errStoreDown
	}
	return d.ContinuationStore.ReserveTurns(ctx, turns)
}

func (d *downContinuation) NextRevision(ctx context.Context, id string) (int, error) {
	if d.down || d.failRevisions {
		return 0, errStoreDown
	}
	return d.ContinuationStore.NextRevision(ctx, id)
}

// downProcessor is startedProcessor on the store at driver/dsn, whose continuation
// store the test brings down (db), with the result store at the same place.
func downProcessor(t *testing.T, driver, dsn string) (p *agentSessionProcessor, sink *consumertest.TracesSink, clk *testClock, db *downContinuation, results store.Store) {
	t.Helper()
	p, sink, clk = startedProcessor(t, recoveryConfig(driver, dsn))
	db = &downContinuation{ContinuationStore: p.cont}
	p.cont = db
	return p, sink, clk, db, resultStore(t, driver, dsn)
}

// oneUnsaved leaves room for one record waiting to be saved in each of p's shards.
func oneUnsaved(p *agentSessionProcessor) {
	for _, sh := range p.shards {
		sh.maxUnsaved = 1
	}
}

// TestContinuationWhileStoreDown: a session's turns 0 and 1 are analysed and stored;
// then the database is down (every continuation call fails) when the session continues
// with turn 2, so its stored turns cannot be loaded and turn 2 is numbered by the
// collector. Either the session also goes idle while the database is down (its
// analysis is then a part of the conversation) and the database comes back after, or
// the database comes back before the session goes idle. The session then continues
// with turn 3. The result store must keep every turn once, at its own index, the
// highest revision covering all four, turn 1 with the verdict turn 2's message gave it;
// the continuation store must hold each trace once, at the same index.
//
// Before the fix both variants put turn 2 on index 0 in the continuation store, beside
// turn 0; in the first, every later revision (turn 3 on) was taken by the result store
// for a stale export of the part before the one made while the store was down, and not
// stored.
func TestContinuationWhileStoreDown(t *testing.T) {
	for _, downAtIdle := range []bool{true, false} {
		t.Run(fmt.Sprintf("downAtIdle=%v", downAtIdle), func(t *testing.T) {
			onStores(t, func(t *testing.T, driver, dsn string) {
				runContinuationWhileStoreDown(t, driver, dsn, downAtIdle)
			})
		})
	}
}

func runContinuationWhileStoreDown(t *testing.T, driver, dsn string, downAtIdle bool) {
	ctx := context.Background()
	p, sink, clk, db, results := downProcessor(t, driver, dsn)
	const id = "down-continued-1"

	n := twoTurnsStored(t, p, clk, sink, results, id)

	db.down = true
	sendCounted(t, p, clk, id, 2) // continues while the database is down
	if !downAtIdle {
		db.down = false
	}
	clk.advance(2 * time.Minute)
	p.step(ctx)
	db.down = false
	clk.advance(unsavedRetry) // the records kept are saved again
	p.step(ctx)
	n = exportAnalyses(t, results, sink, n) // the exporter's queue stores it once the store is back
	require.Equal(t, 2, n)
	if !downAtIdle {
		assertWhole(t, results, id, 3)
	}

	sendCounted(t, p, clk, id, 3) // continues with the database up
	clk.advance(2 * time.Minute)
	p.step(ctx)
	exportAnalyses(t, results, sink, n)

	a := assertWhole(t, results, id, 4)
	assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage, "turn 2 after the stored turns")
	for i, tr := range a.TurnResults {
		assert.True(t, tr.Final, "turn %d final", i)
	}
	c := storedContinuation(t, driver, dsn, id)
	assertSameTurns(t, a, c)
	assert.False(t, c.Turns[1].NoFollowUp, "turn 1's verdict has turn 2's message")
}

// TestTurnsNumberedHereGetStoreIndexes: a session stored with turns 0 and 1 continues
// with turns 2 and 3 closing in one batch; the load of its stored turns and turn 2's
// index allocation fail (a blip), turn 3's goes through. Turn 2 was numbered 0 by the
// collector; it gets its index from the store before turn 3's, so both are saved after
// the stored turns, and turn 2's verdict takes turn 3's message.
func TestTurnsNumberedHereGetStoreIndexes(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		const id = "blip-1"
		n := twoTurnsStored(t, p, clk, sink, results, id)

		db.failLoads, db.failReserves = 1, 1
		_, err := p.processTraces(ctx, chatTurn(id, 102, clk.now(), conversation[2].user, conversation[2].answer, true))
		require.NoError(t, err)
		clk.advance(time.Second)
		_, err = p.processTraces(ctx, chatTurn(id, 103, clk.now(), "And on Monday?", "On Monday: windy.", true))
		require.NoError(t, err)
		clk.advance(3 * time.Second) // both close in one step
		p.step(ctx)
		require.Zero(t, db.failLoads+db.failReserves, "the blip happened")
		clk.advance(2 * time.Minute)
		p.step(ctx)
		exportAnalyses(t, results, sink, n)

		a := assertWhole(t, results, id, 4)
		assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage)
		c := assertContinuationWhole(t, driver, dsn, id, 4)
		assert.False(t, c.Turns[2].NoFollowUp, "turn 2's verdict has turn 3's message")
	})
}

// TestLocalTurnAfterReservedTurns: turns 2 and 3 of a stored session are numbered by
// the collector while the database is down (0 and 1), get the store's indexes 2 and 3
// once it is back, and the database goes down again as turn 4 closes and the session
// goes idle. Turn 4 must be numbered above the turns held (4), not by their count (2,
// which turn 2 holds): the analysis then has each index once and the result store
// takes it; once the database is back and the session continues, both stores hold the
// six turns once each, at the same indexes.
func TestLocalTurnAfterReservedTurns(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		const id = "local-after-reserved-1"
		n := twoTurnsStored(t, p, clk, sink, results, id)

		sendWhileDown(t, p, clk, db, id, 2, 3) // then they get the store's indexes
		db.down = true
		sendCounted(t, p, clk, id, 4)
		clk.advance(2 * time.Minute)
		p.step(ctx) // idle while the database is down
		as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		require.Len(t, as, n+1)
		assert.Equal(t, []int{2, 3, 4}, turnIndexes(as[n]), "each turn at its own index")

		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		n = exportAnalyses(t, results, sink, n)
		sendCounted(t, p, clk, id, 5)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		exportAnalyses(t, results, sink, n)
		a := assertWhole(t, results, id, 6)
		assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage)
		assertSameTurns(t, a, storedContinuation(t, driver, dsn, id))
	})
}

// TestLocalTurnKeptWhileItsRecordIsHeld: with room for one record waiting to be saved,
// turn 3's record (numbered by the collector while the database is down) pushes turn
// 2's out of the shard's unsaved list; turn 2's record is still held by its open
// session. Its index must still come from the store once it is back, so that turn 3
// does not take it, and its record is then saved from the session: both stores hold
// turns 0-3 once each, at the same indexes.
func TestLocalTurnKeptWhileItsRecordIsHeld(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		oneUnsaved(p)
		const id = "local-held-1"
		n := twoTurnsStored(t, p, clk, sink, results, id)

		sendWhileDown(t, p, clk, db, id, 2, 3)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		exportAnalyses(t, results, sink, n)
		a := assertWhole(t, results, id, 4)
		assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage)
		assertSameTurns(t, a, assertContinuationWhole(t, driver, dsn, id, 4))
	})
}

// assertSameTurns checks that the continuation store's records c are the result store's
// turns of a: as many, the same trace at each index.
func assertSameTurns(t *testing.T, a *evaluation.Analysis, c store.Continuation) {
	t.Helper()
	require.Len(t, c.Turns, len(a.TurnResults), "every turn once in the continuation store")
	for i, r := range c.Turns {
		assert.Equal(t, i, r.Result.TurnIndex, "continuation record %d", i)
		assert.Equal(t, a.TurnResults[i].TraceID, r.Result.TraceID, "the same turn at index %d in both stores", i)
	}
}

// sendWhileDown sends turns of session id to p while the database is down, then brings
// it back and lets the records kept be saved again (unsavedRetry).
func sendWhileDown(t *testing.T, p *agentSessionProcessor, clk *testClock, db *downContinuation, id string, turns ...int) {
	t.Helper()
	db.down = true
	for _, i := range turns {
		sendCounted(t, p, clk, id, i)
	}
	db.down = false
	clk.advance(unsavedRetry)
	p.step(context.Background())
}

// TestStoreDownAcrossShutdownThenContinued: the database goes down as a session stored
// with turns 0 and 1 continues with turn 2; the session goes idle (its analysis, a part,
// waits in the exporter's queue) and the processor shuts down with the database still
// down, so turn 2's record never reaches the continuation store. After a restart with
// the database back, the part is stored and the session continues with turn 3: the
// result store must keep the four turns, and the continuation store must agree with it,
// turn 2 (rebuilt from its stored result) with the verdict turn 3's message gives it.
//
// Before the fix (store.LoadContinuation and ReserveTurns reading turn_results too), turn
// 3 got turn 2's index, and the result store skipped that revision, and every later one,
// as a stale part: turn 3 on was lost from it.
func TestStoreDownAcrossShutdownThenContinued(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		const id = "down-shutdown-1"
		n := twoTurnsStored(t, p, clk, sink, results, id)

		db.down = true
		sendCounted(t, p, clk, id, 2)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		require.NoError(t, p.shutdown(ctx))
		db.down = false
		exportAnalyses(t, results, sink, n) // the queued part, once the store is back
		assertWhole(t, results, id, 3)
		require.Len(t, storedContinuation(t, driver, dsn, id).Turns, 3, "turn 2 known from its stored result")

		p2, sink2, clk2 := startedProcessor(t, recoveryConfig(driver, dsn))
		clk2.advance(time.Hour)
		sendCounted(t, p2, clk2, id, 3)
		clk2.advance(2 * time.Minute)
		p2.step(ctx)
		exportAnalyses(t, results, sink2, 0)
		a := assertWhole(t, results, id, 4)
		assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage)
		c := assertContinuationWhole(t, driver, dsn, id, 4)
		assertSameTurns(t, a, c)
		assert.False(t, c.Turns[2].NoFollowUp, "turn 2's verdict has turn 3's message")
		assert.False(t, a.TurnResults[2].Partial)
	})
}

// TestDroppedRecordThenContinued: with room for one record waiting to be saved, turns 2
// and 3 close while the continuation store is unreachable and the session goes idle:
// turn 3's record pushes turn 2's out of the shard's unsaved list, and no open session
// holds it any more. Once the store is back, turn 3's record is saved and the analysis
// of turns 0-3 (a part, numbered 0 and 1 here) is stored, in either order; turn 2 has
// no record. Turns 2 and 3 must get indexes 2 and 3 in both stores, and when the
// session continues with turn 4, both stores must hold the five turns.
//
// Before the fix, turn 2's numbering was forgotten with its record, so turn 3 got index
// 2 in the continuation store where the result store put it at 3; turn 4's analysis
// then did not fit the stored turns and was skipped as a stale part.
func TestDroppedRecordThenContinued(t *testing.T) {
	for _, partFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("part_stored_first=%v", partFirst), func(t *testing.T) {
			droppedRecordThenContinued(t, partFirst)
		})
	}
}

func droppedRecordThenContinued(t *testing.T, partFirst bool) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		oneUnsaved(p)
		const id = "dropped-record-1"
		n := twoTurnsStored(t, p, clk, sink, results, id)

		db.down = true
		sendCounted(t, p, clk, id, 2)
		sendCounted(t, p, clk, id, 3)
		clk.advance(2 * time.Minute)
		p.step(ctx) // idle while the database is down
		if partFirst {
			n = exportAnalyses(t, results, sink, n)
		}
		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		n = exportAnalyses(t, results, sink, n)
		assertWhole(t, results, id, 4)
		c := storedContinuation(t, driver, dsn, id)
		require.Len(t, c.Turns, 4)
		assert.Equal(t, 3, c.Turns[3].Result.TurnIndex, "turn 3's record at the result store's index")

		clk.advance(time.Hour)
		sendCounted(t, p, clk, id, 4)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		exportAnalyses(t, results, sink, n)
		a := assertWhole(t, results, id, 5)
		assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage)
		assertSameTurns(t, a, assertContinuationWhole(t, driver, dsn, id, 5))
	})
}

// TestStoredWithoutContinuationStoreThenContinued: a collector whose continuation state
// is in memory stores a session's turns 0 and 1 (two session ends: revisions 1 and 2) in
// the result store; a collector with its continuation store in that database continues
// the session with turn 2. The result store must hold the three turns, at a revision
// above the stored one. Found by review: the continued session knew the stored turns
// (sessions.md §4.7) but numbered its revision 1, which the result store skipped as
// older than the stored 2, losing turn 2.
func TestStoredWithoutContinuationStoreThenContinued(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		results := resultStore(t, driver, dsn)
		const id = "mixed-1"
		mcfg := testConfig()
		mcfg.SessionTimeout = 30 * time.Second // continuation state in memory
		pm, sinkm, clkm := newTestProcessor(t, mcfg, nil)
		sendCounted(t, pm, clkm, id, 0)
		clkm.advance(2 * time.Minute)
		pm.step(ctx)
		sendCounted(t, pm, clkm, id, 1)
		clkm.advance(2 * time.Minute)
		pm.step(ctx)
		require.Equal(t, 2, exportAnalyses(t, results, sinkm, 0))
		a := assertWhole(t, results, id, 2)
		require.Equal(t, 2, a.AnalysisRevision)

		pd, sinkd, clkd := startedProcessor(t, recoveryConfig(driver, dsn))
		clkd.advance(time.Hour)
		sendCounted(t, pd, clkd, id, 2)
		clkd.advance(2 * time.Minute)
		pd.step(ctx)
		require.Equal(t, 1, exportAnalyses(t, results, sinkd, 0))
		a = assertWhole(t, results, id, 3)
		assert.Equal(t, 3, a.AnalysisRevision)
		assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage)
	})
}

// TestFinalSaveWaitingWhileOtherCollectorContinues: collector A's save at the session's
// end fails, so turn 0's first final verdict waits for the retry; the analysis holding
// turn 0 final is stored. Collector B continues the session before A's retry. Each turn
// must be counted once (agent_eval_turns_total: final, not Revised): turn 0 by whichever
// save first makes it final in the continuation store. Found by review of a mend that
// let the stored final result stand over turn 0's provisional record: B's verdict was
// then Revised, A's retry found the row further on, and nobody counted turn 0.
func TestFinalSaveWaitingWhileOtherCollectorContinues(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		pa, sinka, clka, db, results := downProcessor(t, driver, dsn)
		const id = "final-save-waits-1"
		sendCounted(t, pa, clka, id, 0)
		clka.advance(2 * time.Minute)
		db.down = true
		pa.step(ctx)
		db.down = false
		exportAnalyses(t, results, sinka, 0)
		pb, sinkb, clkb := startedProcessor(t, recoveryConfig(driver, dsn))
		clkb.advance(time.Hour)
		sendCounted(t, pb, clkb, id, 1)
		clka.advance(unsavedRetry)
		pa.step(ctx)
		require.NoError(t, pa.shutdown(ctx))
		clkb.advance(2 * time.Minute)
		pb.step(ctx)
		assertEachTraceCountedOnce(t, 2, sinka, sinkb)
	})
}

// assertEachTraceCountedOnce checks that each of turns turns (by trace: a turn numbered
// by a collector while its store was down has another index in its spans) has one final
// verdict that counts (agent_eval_turns_total: final, not Revised) over the sinks, and
// that its revisions correct the count to one verdict (standingVerdict), which it
// returns by trace.
func assertEachTraceCountedOnce(t *testing.T, turns int, sinks ...*consumertest.TracesSink) map[string]string {
	t.Helper()
	counted := map[string]int{}
	finals := map[string][]evaluation.TurnResult{}
	for _, s := range sinks {
		for _, sp := range evalSpans(s)[semconv.EvalKindTurn] {
			tr, err := evalspan.DecodeTurn(sp.Attributes())
			require.NoError(t, err)
			if !tr.Final {
				continue
			}
			finals[tr.TraceID] = append(finals[tr.TraceID], tr)
			if !tr.Revised {
				counted[tr.TraceID]++
			}
		}
	}
	require.Len(t, counted, turns, "every turn counted: %v", counted)
	standing := map[string]string{}
	for trace, c := range counted {
		assert.Equal(t, 1, c, "trace %s counted once", trace)
		standing[trace] = standingVerdict(t, finals[trace])
	}
	return standing
}

// TestContinuedWhileStoreDownKeepsRevision: turn 2 of a stored session gets its index
// from the store; then the database goes down, the session goes idle (its analysis,
// revision 2, waits in the exporter's queue) and continues with turn 3 while it is still
// down. The result store must hold the four turns. Found by review: the session was
// loaded from its records waiting to be saved, at their stored indexes, but its revision
// started again at 1, so the result store skipped the analysis holding turn 3 as older
// than revision 2.
func TestContinuedWhileStoreDownKeepsRevision(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		const id = "down-revision-1"
		n := twoTurnsStored(t, p, clk, sink, results, id)
		sendCounted(t, p, clk, id, 2)
		db.down = true
		clk.advance(2 * time.Minute)
		p.step(ctx)
		sendCounted(t, p, clk, id, 3)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		n = exportAnalyses(t, results, sink, n)
		assertWhole(t, results, id, 4)
		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		sendCounted(t, p, clk, id, 4)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		exportAnalyses(t, results, sink, n)
		a := assertWhole(t, results, id, 5)
		assertSameTurns(t, a, assertContinuationWhole(t, driver, dsn, id, 5))
		assertStanding(t, assertEachTraceCountedOnce(t, 5, sink), a, turnTraceKey)
	})
}

// TestKeptRevisionSavedAfterItsRecords: a session ends twice while the database is down
// (revisions 2 and 3, numbered here); when it is back, the records are saved but the
// revision's save fails. The revision stays kept and is saved again at the next retry,
// with no event for its shard, also when another session's failed write on the shard
// came in between. When the session continues before the exporter's queue is drained,
// its next revision must be above 3, or the result store skips it and its new turn.
// Found by review: the kept revision was dropped with its records' save, or by another
// session's failed write, and never retried.
func TestKeptRevisionSavedAfterItsRecords(t *testing.T) {
	for _, otherFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("other_write_fails=%v", otherFails), func(t *testing.T) {
			onStores(t, func(t *testing.T, driver, dsn string) {
				keptRevisionSavedAfterItsRecords(t, driver, dsn, otherFails)
			})
		})
	}
}

func keptRevisionSavedAfterItsRecords(t *testing.T, driver, dsn string, otherFails bool) {
	ctx := context.Background()
	p, sink, clk, db, results := downProcessor(t, driver, dsn)
	const id = "kept-revision-1"
	sh := p.shards[shardOf(id, len(p.shards))]
	n := twoTurnsStored(t, p, clk, sink, results, id)
	sendCounted(t, p, clk, id, 2)
	db.down = true
	clk.advance(2 * time.Minute)
	p.step(ctx) // revision 2, numbered here
	sendCounted(t, p, clk, id, 3)
	clk.advance(2 * time.Minute)
	p.step(ctx) // revision 3
	require.Equal(t, 3, sh.revisions[id])

	db.down, db.failRevisions = false, true
	clk.advance(unsavedRetry)
	p.step(ctx)
	require.Empty(t, sh.unsaved, "the records are saved")
	require.Equal(t, 3, sh.revisions[id], "the revision is not")
	if otherFails {
		db.down = true
		sendCounted(t, p, clk, sameShard(p, id), 0)
		require.Equal(t, 3, sh.revisions[id], "kept across another session's failed write")
		db.down = false
	}
	db.failRevisions = false
	clk.advance(unsavedRetry)
	p.step(ctx) // the retry, no event for the shard
	assert.Empty(t, sh.revisions, "saved at the retry")

	sendCounted(t, p, clk, id, 4)
	clk.advance(2 * time.Minute)
	p.step(ctx)
	exportAnalyses(t, results, sink, n)
	assertWhole(t, results, id, 5)
}

// TestRevisionKeptWhenItsSaveFails: a session ends with the database up but its revision
// neither allocated nor saved (both fail): the revision emitted is kept, and a session
// loaded meanwhile starts from it.
func TestRevisionKeptWhenItsSaveFails(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		const id = "revision-save-fails-1"
		sh := p.shards[shardOf(id, len(p.shards))]
		n := twoTurnsStored(t, p, clk, sink, results, id)
		db.failRevisions = true
		sendCounted(t, p, clk, id, 2)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		require.Equal(t, 2, sh.revisions[id], "revision 2, emitted, kept")
		db.failRevisions = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		assert.Empty(t, sh.revisions)
		sendCounted(t, p, clk, id, 3)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		exportAnalyses(t, results, sink, n)
		assert.Equal(t, 3, assertWhole(t, results, id, 4).AnalysisRevision)
	})
}

// TestCorrectionWhileStoreDownCountedOnce: a session goes idle while the database is
// down, so turn 0's final verdict (without follow-up) waits for its save, never
// emitted; the user's correction comes while the database is still down, and the RDM it
// gives turn 0 replaces the waiting verdict. Turn 0 must be counted once, as RDM, and
// no revision counted from a verdict that was never counted; on the other hand, after a
// restart the verdict emitted at shutdown was counted, and the RDM revises it
// (TestStoreDownAcrossRestartStillDown). Emitting the RDM at once as a revision
// counted it twice in the revisions' sum (once counted when its save came, once as a
// revision of the verdict that had waited).
func TestCorrectionWhileStoreDownCountedOnce(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		const id = "down-correction-1"
		sendCounted(t, p, clk, id, 0)
		db.down = true
		clk.advance(2 * time.Minute)
		p.step(ctx) // idle: turn 0's final verdict waits for its save
		clk.advance(time.Hour)
		sendCounted(t, p, clk, id, 1) // "No, that's wrong...": RDM on turn 0
		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		exportAnalyses(t, results, sink, 0)
		a := assertWhole(t, results, id, 2)
		require.Equal(t, evaluation.DetectionRDM, a.TurnResults[0].DetectionType, "turn 0's verdict has turn 1's correction")
		assertStanding(t, assertEachTraceCountedOnce(t, 2, sink), a, turnTraceKey)
	})
}

// TestDroppedRevisedVerdictCountedOnce: a final verdict that differs from the stored
// row's is dropped over the bound (emitted, so counted, and claimed); the session is
// later loaded from the store and the turn judged again. The claim keeps the verdict
// counted, so the one given again replaces it, not the stale stored one. Found by review:
// the claim kept only the stored document, and the change was counted twice (none→rdm
// once at the drop, once again from the store). Shapes: turn 0's RDM with follow-up
// waits while the database is down, over its provisional row; turn 1's RDM, a revision
// after a pause emitted at once while saves fail, over its final row.
func TestDroppedRevisedVerdictCountedOnce(t *testing.T) {
	t.Run("waiting_follow_up", func(t *testing.T) {
		onStores(t, func(t *testing.T, driver, dsn string) {
			ctx := context.Background()
			p, sink, clk, db, results := downProcessor(t, driver, dsn)
			oneUnsaved(p)
			const id = "dropped-follow-up-1"
			sendCounted(t, p, clk, id, 0) // its provisional record saved
			db.down = true
			sendCounted(t, p, clk, id, 1) // turn 0's RDM waits; turn 1's record pushes it out
			db.down = false
			clk.advance(2 * time.Minute)
			p.step(ctx) // the claim, the saves, idle
			n := exportAnalyses(t, results, sink, 0)
			continueSession(t, p, clk, id, 2)
			exportAnalyses(t, results, sink, n)
			a := assertWhole(t, results, id, 3)
			require.Equal(t, evaluation.DetectionRDM, a.TurnResults[0].DetectionType)
			assertStanding(t, assertEachTraceCountedOnce(t, 3, sink), a, turnTraceKey)
		})
	})
	t.Run("revision_while_saves_fail", func(t *testing.T) {
		onStores(t, func(t *testing.T, driver, dsn string) {
			ctx := context.Background()
			p, sink, clk, db, results := downProcessor(t, driver, dsn)
			oneUnsaved(p)
			const id = "dropped-revision-1"
			sendCounted(t, p, clk, id, 0)
			sendCounted(t, p, clk, id, 1)
			clk.advance(2 * time.Minute)
			p.step(ctx) // idle: turn 1 counted without follow-up
			n := exportAnalyses(t, results, sink, 0)
			clk.advance(time.Hour)
			db.failSaves = true
			td := chatTurn(id, 102, clk.now(), "No, that's wrong, I meant Lyon.", "In Lyon: cloudy.", true)
			_, err := p.processTraces(ctx, td)
			require.NoError(t, err)
			clk.advance(3 * time.Second)
			p.step(ctx) // turn 1's RDM emitted at once, its record then pushed out
			db.failSaves = false
			clk.advance(2 * time.Minute)
			p.step(ctx)
			n = exportAnalyses(t, results, sink, n)
			continueSession(t, p, clk, id, 3)
			exportAnalyses(t, results, sink, n)
			a := assertWhole(t, results, id, 4)
			require.Equal(t, evaluation.DetectionRDM, a.TurnResults[1].DetectionType)
			assertStanding(t, assertEachTraceCountedOnce(t, 4, sink), a, turnTraceKey)
		})
	})
}

// sameShard returns a session id other than id that p handles on id's shard.
func sameShard(p *agentSessionProcessor, id string) string {
	for i := 0; ; i++ {
		if o := fmt.Sprintf("%s-neighbour-%d", id, i); shardOf(o, len(p.shards)) == shardOf(id, len(p.shards)) {
			return o
		}
	}
}

// TestDroppedFinalRecordCountedOnce: with room for one record waiting to be saved, a
// session goes idle while the database is down: turn 0's final verdict waits for its
// record's save. Another session of the shard then pushes that record out: the verdict
// is emitted and counted, and the store keeps turn 0's provisional record. When the
// session continues after the database is back, turn 0's verdict with turn 1's message
// must not count it again. Before the claim (store.ClaimFinal), agent_eval_turns_total
// counted turn 0 twice (sessions.md §4.7, left open then). With the database down
// already when turn 0 closed, the store has no row of turn 0 to claim, and turn 0's
// verdict with turn 1's message is its first final save there: the verdict, which the
// evaluator gave as Revised, stays Revised (markRevised; counted twice without).
func TestDroppedFinalRecordCountedOnce(t *testing.T) {
	for _, downFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("down_before_turn_0=%v", downFirst), func(t *testing.T) {
			onStores(t, func(t *testing.T, driver, dsn string) {
				droppedFinalRecordCountedOnce(t, driver, dsn, downFirst)
			})
		})
	}
}

func droppedFinalRecordCountedOnce(t *testing.T, driver, dsn string, downFirst bool) {
	ctx := context.Background()
	p, sink, clk, db, results := downProcessor(t, driver, dsn)
	oneUnsaved(p)
	const id = "dropped-final-1"
	db.down = downFirst
	sendCounted(t, p, clk, id, 0)
	db.down = true
	clk.advance(2 * time.Minute)
	p.step(ctx) // idle: turn 0's final verdict waits for its save
	other := sameShard(p, id)
	sendCounted(t, p, clk, other, 7) // its record (another trace) pushes turn 0's out: counted now
	clk.advance(2 * time.Minute)
	p.step(ctx)
	db.down = false
	clk.advance(unsavedRetry)
	p.step(ctx)
	n := exportAnalyses(t, results, sink, 0)

	continueSession(t, p, clk, id, 1)
	exportAnalyses(t, results, sink, n)
	a := assertWhole(t, results, id, 2)
	assert.Equal(t, evaluation.DetectionRDM, a.TurnResults[0].DetectionType, "turn 0's verdict has turn 1's correction")
	assertStanding(t, assertEachTraceCountedOnce(t, 3, sink), a, turnTraceKey) // two turns of id, one of the other session
}

// continueSession sends turn i of session id to p after a pause of an hour (the session
// went idle: it continues) and lets the session go idle again.
func continueSession(t *testing.T, p *agentSessionProcessor, clk *testClock, id string, i int) {
	t.Helper()
	clk.advance(time.Hour)
	sendCounted(t, p, clk, id, i)
	clk.advance(2 * time.Minute)
	p.step(context.Background())
}
