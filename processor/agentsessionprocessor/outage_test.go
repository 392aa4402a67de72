// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

// Faults FuzzStoreOutage found (outage_fuzz_test.go), each as a deterministic test.

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// TestWaitingEndUnheldAtShutdownKept: a session's turns close in one batch whose hold
// write fails alone (its records are saved, and released: heldRecords 2); then the
// database goes down and stays down through the shutdown, which ends the session: its
// end waits for the released records, and its hold cannot be written again. The next
// collector must still recover the session, whole: continuation.storage keeps the hold
// that could not be written, as it keeps the records. Found by FuzzStoreOutage: the
// session was in no analysis, and every turn was lost to the result store.
func TestWaitingEndUnheldAtShutdownKept(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "agenteval.db")
	dir := t.TempDir()
	results := resultStore(t, "sqlite", dsn)
	host, stopHost := storageHost(t, dir)
	p, sink, clk, db := keptProcessor(t, "sqlite", dsn, host)
	p.heldRecords = 2
	p.recovery = &failingHolds{Recovery: p.recovery, down: &db.down, failHolds: 1}
	const id = "unheld-at-shutdown-1"
	tenTurnsInOneBatch(t, p, clk, id)
	db.down = true
	require.NoError(t, p.shutdown(ctx)) // the session's end waits, unheld
	require.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "the end waits for the store")
	stopHost()

	host2, _ := storageHost(t, dir)
	p2, sink2, clk2, _ := keptProcessor(t, "sqlite", dsn, host2)
	clk2.advance(time.Hour) // the first collector's lease ran out; the sweep is due
	p2.step(ctx)
	clk2.advance(time.Minute)
	p2.step(ctx)
	as := analyses(t, evalSpans(sink2)[semconv.EvalKindAgentSession])
	require.Len(t, as, 1, "the session whose end waited at shutdown is recovered by the next collector")
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, turnIndexes(as[0]), "every turn")
	exportAnalyses(t, results, sink2, 0)
	assertWhole(t, results, id, 10)
}

// TestDroppedRecordContinuedBeforePartStored: with room for one record waiting to be
// saved, turns 1 and 2 close while the database is down, and turn 1's record is dropped
// (keepUnsaved); the session goes idle, its analysis (turns 0-2) waits in the exporter's
// queue. The database comes back, the records left are saved, and the session continues
// with turn 3 and goes idle again before the exporter's queue stores the first analysis
// (its retry backoff is longer than the processor's unsavedRetry). Every turn must reach
// the result store. TestDroppedRecordThenContinued stores the part before the session
// continues; found by FuzzStoreOutage in this order.
//
// The continued session loads turn 0's and turn 2's rows, not turn 1 (no record, no
// stored result yet), so its analysis holds turns 0, 2 and 3; the result store took it as
// the whole session from turn 0 on and deleted turn 1, until it kept a stored turn a save
// lacks inside its range (docs/decisions/sessions.md §4.6).
func TestDroppedRecordContinuedBeforePartStored(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		oneUnsaved(p)
		const id = "dropped-continued-early-1"
		sendCounted(t, p, clk, id, 0)
		db.down = true
		sendCounted(t, p, clk, id, 1)
		sendCounted(t, p, clk, id, 2) // turn 1's record is dropped
		clk.advance(2 * time.Minute)
		p.step(ctx) // idle: the analysis of turns 0-2 waits in the exporter's queue
		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx) // the records left are saved
		continueSession(t, p, clk, id, 3)
		as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		for _, a := range as {
			t.Logf("revision %d turns %v", a.AnalysisRevision, turnIndexes(a))
		}
		exportAnalyses(t, results, sink, 0) // the queue, in emission order
		assertWhole(t, results, id, 4)
	})
}

// TestNewSessionDownDroppedRecordsIndexedOnce: a new session's five turns close while
// the database is down, with room for one record waiting to be saved (the others are
// dropped, their turns numbered here, sh.local, at most maxLocal() = 4 of them); the
// database comes back and the session goes idle. Its analysis must hold each turn once,
// each index once, or the result store refuses it (a duplicate turn_index) and every
// turn is lost. Found by FuzzStoreOutage.
//
// Before the fix the bound on sh.local dropped turn 0's entry (logged: "indexes of turns
// numbered while the continuation store was unreachable are dropped"), the store gave
// turns 1-4 indexes 0-3 (reserveLocal), and the open session still held turn 0 at its
// local index 0: the analysis was [0 0 1 2 3], refused whole. sessions.md §4.7 accepts
// that a later continuation may reuse a dropped index; here the session was still open,
// and all five turns were lost, not one. An entry whose turn an open session holds is
// no longer dropped.
func TestNewSessionDownDroppedRecordsIndexedOnce(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		oneUnsaved(p)
		const id = "down-new-dropped-1"
		db.down = true
		for i := range 5 {
			sendCounted(t, p, clk, id, i)
		}
		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		for _, a := range analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession]) {
			t.Logf("revision %d turns %v", a.AnalysisRevision, turnIndexes(a))
		}
		exportAnalyses(t, results, sink, 0)
		assertWhole(t, results, id, 5)
	})
}

// TestContinuedWhileDownThenEndLoadBlip: turn 0 is stored (revision 1 allocated by the
// store, its analysis stored). The database goes down; the session continues with turn 1
// (loaded as a new session: numbered 0 here, revision 1 again, a part), goes idle,
// continues with turns 2 and 3 while still down. The database comes back (the turns get
// the store's indexes 1-3), and the load of the session's end fails once (a blip): its
// analysis covers the turns held, 1-3, revision 2. The exporter then stores the queued
// analyses in order. Every turn must be in the result store. Found by FuzzStoreOutage:
// the result store ended with turns 0 and 1 only; the end now waits for the load
// (docs/decisions/sessions.md §4.2.2).
func TestContinuedWhileDownThenEndLoadBlip(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		const id = "down-continued-blip-1"
		sendCounted(t, p, clk, id, 0)
		clk.advance(2 * time.Minute)
		p.step(ctx)
		n := exportAnalyses(t, results, sink, 0)
		db.down = true
		continueSession(t, p, clk, id, 1)
		clk.advance(time.Hour)
		sendCounted(t, p, clk, id, 2)
		sendCounted(t, p, clk, id, 3)
		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		db.failLoads = 1
		clk.advance(2 * time.Minute)
		p.step(ctx) // the end's load fails: it waits
		clk.advance(unsavedRetry)
		p.step(ctx) // and is analysed over every turn
		for _, a := range analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession]) {
			t.Logf("revision %d turns %v", a.AnalysisRevision, turnIndexes(a))
		}
		exportAnalyses(t, results, sink, n)
		assertWhole(t, results, id, 4)
	})
}
