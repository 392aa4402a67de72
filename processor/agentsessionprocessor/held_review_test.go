// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

// Two faults a second review suspected around released records
// (docs/decisions/sessions.md §4.2.2).

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// failingHolds is a store.Recovery whose Hold fails the next failHolds times, and while
// *down is set (the database is down).
type failingHolds struct {
	store.Recovery
	mu        sync.Mutex // the shards call Hold at once
	failHolds int
	down      *bool
	holds     int
}

func (f *failingHolds) Hold(ctx context.Context, sessions []store.OpenSession) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds++
	if f.failHolds > 0 {
		f.failHolds--
		return errStoreDown
	}
	if *f.down {
		return errStoreDown
	}
	return f.Recovery.Hold(ctx, sessions)
}

// TestWaitingEndWithFailedHoldOnlyWrite: the session's turns close in one batch, whose
// hold fails alone (its records are saved, and released); the session's loads then
// fail (the store takes writes), so its end waits, and the collector shuts down at once.
// No later write of the session's records holds it again: the end's own retry at
// shutdown must, or the next collector never recovers it.
func TestWaitingEndWithFailedHoldOnlyWrite(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "agenteval.db")
	p, sink, clk, db, _ := downProcessor(t, "sqlite", dsn)
	p.heldRecords = 2
	fh := &failingHolds{Recovery: p.recovery, down: &db.down, failHolds: 1}
	p.recovery = fh
	const id = "held-failed-2"
	tenTurnsInOneBatch(t, p, clk, id)
	db.failLoads = 1 << 30
	endWaitsThroughShutdown(t, p, sink, clk)

	rs := recoveredAnalyses(t, dsn)
	t.Logf("Hold calls by the first collector: %d", fh.holds)
	require.Len(t, rs, 1, "the session whose end waited at shutdown is recovered by the next collector")
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, turnIndexes(rs[0]), "every turn")
}

// tenTurnsInOneBatch closes ten turns of session id in one batch of p (heldRecords 2): its
// hold fails (failingHolds), its records are saved and released.
func tenTurnsInOneBatch(t *testing.T, p *agentSessionProcessor, clk *testClock, id string) {
	ctx := context.Background()
	for i := range 10 {
		c := conversation[min(i, len(conversation)-1)]
		_, err := p.processTraces(ctx, chatTurn(id, 100+i, clk.now().Add(time.Duration(i)*time.Second), c.user, c.answer, true))
		require.NoError(t, err)
	}
	clk.advance(3 * time.Second)
	p.step(ctx)
	require.LessOrEqual(t, mostRecordsHeld(p), 4, "the session released records")
}

// endWaitsThroughShutdown lets p's session go idle while its records cannot be loaded,
// checks that its end waits, and shuts p down with the end still waiting.
func endWaitsThroughShutdown(t *testing.T, p *agentSessionProcessor, sink *consumertest.TracesSink, clk *testClock) {
	ctx := context.Background()
	clk.advance(2 * time.Minute)
	p.step(ctx)
	require.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "the end waits for the store")
	require.NoError(t, p.shutdown(ctx))
	require.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "still waiting at shutdown: left to the next collector")
}

// recoveredAnalyses starts a second collector on the SQLite file dsn an hour later (the
// first one's lease ran out), lets its recovery sweep run, and returns the session
// analyses it emitted.
func recoveredAnalyses(t *testing.T, dsn string) []evaluation.Analysis {
	ctx := context.Background()
	p, sink, clk := newTestProcessor(t, recoveryConfig("sqlite", dsn), nil)
	clk.advance(time.Hour)
	startWithoutWorker(t, p)
	t.Cleanup(func() { assert.NoError(t, p.shutdown(context.Background())) })
	clk.advance(time.Minute) // session_timeout after the start: the sweep
	p.step(ctx)
	clk.advance(10 * time.Minute)
	p.step(ctx)
	return analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
}

// TestWaitingEndWithFailedHoldRecovered: the write that records that this collector
// holds a session open (store.Recovery.Hold) fails, the session's later saves go
// through and it releases records (heldRecords 2); then the database is down when it
// ends, so its end waits, and still at shutdown. The shutdown leaves the end to the next
// collector's recovery (docs/decisions/sessions.md §4.2.2): that collector must find the
// session held and analyse it, whole. Two ways the hold fails: a blip of that write
// alone, and an outage while the session's first turn closes.
func TestWaitingEndWithFailedHoldRecovered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		outage bool // the whole database is down while turn 0 closes
	}{{"hold-blip", false}, {"outage-at-first-turn", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := filepath.Join(t.TempDir(), "agenteval.db")
			p, sink, clk, db, _ := downProcessor(t, "sqlite", dsn)
			p.heldRecords = 2
			fh := &failingHolds{Recovery: p.recovery, down: &db.down}
			if !tc.outage {
				fh.failHolds = 1
			}
			p.recovery = fh
			const id = "held-failed-1"
			const turns = 10
			db.down = tc.outage
			sendCounted(t, p, clk, id, 0)
			db.down = false
			for i := 1; i < turns; i++ {
				sendCounted(t, p, clk, id, i)
			}
			require.LessOrEqual(t, mostRecordsHeld(p), 4, "the session released records")
			stored, err := db.ContinuationStore.LoadContinuation(ctx, id, nil)
			require.NoError(t, err)
			require.Len(t, stored.Turns, turns, "every turn is in the continuation store")

			db.down = true
			endWaitsThroughShutdown(t, p, sink, clk)

			rs := recoveredAnalyses(t, dsn)
			t.Logf("Hold calls by the first collector: %d", fh.holds)
			require.Len(t, rs, 1, "the session whose end waited at shutdown is recovered by the next collector")
			assert.Equal(t, id, rs[0].SessionID)
			assert.Equal(t, string(session.EndReasonRestart), rs[0].EndReason)
			assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, turnIndexes(rs[0]), "every turn")
		})
	}
}

// TestRecordsDroppedWhileEndWaits: session id released records (heldRecords 2), then the
// database goes down; turns 10 to 12 close during the outage, and the bound on records
// waiting to be saved (maxUnsaved 1) drops the records of turns 9 to 11 (their turns
// were numbered here: their indexes are kept, sh.local, and claimed). The session goes
// idle: its end waits for its released records. Then either the database comes back
// (the end is analysed; the session continues with turn 13), or the collector shuts down
// with continuation.storage first (the records still waiting are kept; the next
// collector recovers the session). Whatever the order, every turn must reach the result
// store once, with no gap in the indexes, as when the shard holds every record
// (heldRecords unbounded: nothing released, the end does not wait).
func TestRecordsDroppedWhileEndWaits(t *testing.T) {
	for _, held := range []int{1 << 30, 2} {
		for _, shutdown := range []bool{false, true} {
			t.Run(fmt.Sprintf("held=%d/shutdown=%v", held, shutdown), func(t *testing.T) {
				runRecordsDroppedWhileEndWaits(t, held, shutdown)
			})
		}
	}
}

func runRecordsDroppedWhileEndWaits(t *testing.T, held int, shutdown bool) {
	ctx := context.Background()
	const id = "dropped-waiting-1"
	dsn := filepath.Join(t.TempDir(), "agenteval.db")
	results := resultStore(t, "sqlite", dsn)
	dir := t.TempDir()
	host, stopHost := storageHost(t, dir)
	p, sink, clk, db := keptProcessor(t, "sqlite", dsn, host)
	p.heldRecords = held
	oneUnsaved(p)
	for i := range 10 {
		sendCounted(t, p, clk, id, i)
	}
	db.down = true
	for i := 10; i < 13; i++ {
		sendCounted(t, p, clk, id, i) // numbered here; the bound drops the record before
	}
	clk.advance(2 * time.Minute)
	p.step(ctx) // the session ends: with released records, its end waits
	if held == 2 {
		require.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "the end waits for the store")
	}
	if !shutdown {
		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		n := exportAnalyses(t, results, sink, 0)
		last := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		require.NotEmpty(t, last)
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, turnIndexes(last[len(last)-1]), "the end's analysis")
		assertWhole(t, results, id, 13)
		sendCounted(t, p, clk, id, 13) // the session continues
		clk.advance(2 * time.Minute)
		p.step(ctx)
		exportAnalyses(t, results, sink, n)
		last = analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, turnIndexes(last[len(last)-1]), "the continued session's analysis")
		assertWhole(t, results, id, 14)
		return
	}
	require.NoError(t, p.shutdown(ctx)) // the database still down
	stopHost()
	// The exporter's queue is stored once the database is back, before the next
	// collector's sweep.
	exportAnalyses(t, results, sink, 0)
	host2, _ := storageHost(t, dir)
	p2, sink2, clk2, _ := keptProcessor(t, "sqlite", dsn, host2)
	clk2.advance(time.Hour) // the first collector's lease ran out; the sweep is due
	p2.step(ctx)
	exportAnalyses(t, results, sink2, 0)
	for _, a := range analyses(t, evalSpans(sink2)[semconv.EvalKindAgentSession]) {
		t.Logf("recovered: revision %d, end %s, turns %v", a.AnalysisRevision, a.EndReason, turnIndexes(a))
	}
	assertWhole(t, results, id, 13)
	assertEachTraceCountedOnce(t, 13, sink, sink2)
}
