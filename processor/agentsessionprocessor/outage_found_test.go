// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestWholeSessionOverGuessedPart: a collector whose store is down when a session comes
// back cannot load it and numbers its turn from 0 (sessions.md §4.5); its analysis is a
// part, which the result store places after the turns stored then (§4.6). The next
// collector, the store back, knows the whole conversation (the continuation store's
// records and continuation.storage) and numbers that turn after the ones between, which
// had not reached the result store when the part was placed. Found by FuzzStoreOutage
// (input ab8579740ae78d07): the whole conversation, exported after the part, put the
// part's turn at another index than the stored one, below the part's offset, and the
// store skipped it as an earlier part's late export; every turn between was lost
// ("between"). When the part was all that was stored, the whole conversation was placed
// at a negative offset: its turns stored at -4..0 ("part first").
func TestWholeSessionOverGuessedPart(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		// Three turns stored; a restart; a turn, the database down, four more numbered
		// here, the end waiting for the store through a restart; the next collector saves
		// them (up) and, the database down again, numbers the session's next turn from 0.
		{"between", outageSeed(0,
			o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opAdvance, 2), o(opRestart, 0),
			o(opSend, 0), o(opDown, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0),
			o(opAdvance, 2), o(opRestart, 0),
			o(opUp, 0), o(opStep, 0), o(opDown, 0), o(opSend, 0), o(opAdvance, 2), o(opRestart, 0))},
		// Four turns, the database down through a restart; the next collector numbers the
		// fifth from 0 and exports it at its shutdown, before the whole conversation.
		{"part first", outageSeed(0,
			o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opDown, 0), o(opRestart, 0),
			o(opSend, 0), o(opRestart, 0))},
		// Four turns, the database down through a restart; the next collector numbers two
		// turns from 0 (the first part stored) and, after a restart, the database up and
		// down again, the next one numbers a seventh turn from 0 (a second part); the
		// last collector exports the whole conversation, whose first turns the first
		// part's leave no room for: it was stored at offset -4.
		{"first part guessed", outageSeed(0,
			o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opDown, 0), o(opRestart, 0), o(opSend, 0), o(opSend, 0),
			o(opAdvance, 2), o(opRestart, 0), o(opUp, 0), o(opAdvance, 0), o(opDown, 0), o(opSend, 0),
			o(opAdvance, 2), o(opRestart, 0))},
		{"f8e3aaf722a27fe4", []byte("\x00\x10\x00\x00\x10\x00\x10\x04\v.\x00\x10\x00\x10\x00#\v\x05\x03\x04\x10#\v")},
		// The fuzz input, two sessions on one shard.
		{"ab8579740ae78d07", []byte("\x03\x00\x10\x00\x10\x00\x00\x10\x00#\v\x05\x10\x04\x10\x04\x10\x00\x10\x00\x10\x00#\v\x05\x00\x04\x10#\v")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkStoreOutage(t, c.data) })
	}
}

// TestContinuedInTheChunkOfItsEnd: a session's end waits for the store (its records
// released, the database down); the store back, the session's next turn comes in the
// batch that analyses the end, so the end and the continuation share a chunk. The turn's
// hold was written before the chunk's release of the ended session, which deleted it
// (one hold a session and collector): with the database down at the shutdown, the
// continuation's end waited for a sweep that never found it, and its turn reached no
// analysis. Found by FuzzStoreOutage (input 312a67df8edae0f7: 7 of 8 turns stored).
func TestContinuedInTheChunkOfItsEnd(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{"down at shutdown", outageSeed(0,
			o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opDown, 0), o(opSend, 0),
			o(opAdvance, 2), o(opUp, 0), o(opSend, 0), o(opDown, 0), o(opRestart, 0))},
		// The fuzz input, two sessions on one shard.
		{"312a67df8edae0f7", []byte("\x03\x00\x10\x00\x10\x00\x10\x00\x10\x04\x10\x00\x10\x00\x10\x00##\x05\x00\x04\x10#\v")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkStoreOutage(t, c.data) })
	}
}

// TestRetriedRecordsHoldTheirSession: the database down at a session's first turn, its
// hold and its record fail together; the database back, the shard saves the record
// again (unsavedRetry) but not the hold, which waited for the session's next turn. A
// collector killed then (nothing waiting to be saved) left a stored record that no hold
// points to: no sweep recovered the session, and its turn reached no analysis. Found
// while extending FuzzStoreOutage to crashes (outageRun.crashable refused the kill).
func TestRetriedRecordsHoldTheirSession(t *testing.T) {
	r := newOutageRun(t, 4)
	r.setDown(true)
	r.send(0, 0)
	r.step(3 * time.Second)
	r.setDown(false)
	r.step(unsavedRetry)
	for _, sh := range r.cols[0].p.shards {
		require.False(t, sh.pending(), "the record is saved: a kill loses nothing")
	}
	r.crash(0)
	r.finish()
}

// TestRecoveredSessionLoadFails: a session a dead collector held (a crash, or a shutdown
// while its end waited for the store) is claimed by the next collector's sweep; the load
// of its records fails, and so does the end's reload. With no turn in memory the end was
// analysed over nothing and the session released: its stored turns reached no analysis,
// and no later sweep found it. Two failed reads at the sweep lost a session ("blip");
// loads failing while the store takes writes lost it without the loss sessions.md
// accepts being logged. The end now waits for the store, as one whose released records
// cannot be taken back (§4.2.2). Found by FuzzStoreOutage (input 467d86a1f536e910:
// every turn of the session missing from the result store).
func TestRecoveredSessionLoadFails(t *testing.T) {
	t.Run("blip", func(t *testing.T) {
		r := newOutageRun(t, 4)
		r.send(0, 0)
		r.step(3 * time.Second)
		r.send(0, 0)
		r.step(3 * time.Second)
		r.crash(0)
		r.setFailLoads(2) // the state's load and the end's reload
		r.step(2 * time.Minute)
		r.finish()
	})
	cases := []struct {
		name string
		data []byte
	}{
		// Released records (held 2); loads fail for good; the end waits at the shutdown.
		{"loads fail", outageSeed(0,
			o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opFailLoads, 0),
			o(opAdvance, 2), o(opRestart, 0), o(opAdvance, 2))},
		{"467d86a1f536e910", []byte("\x00\t\b\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x03\x02\x02\x03\x06#\v\x06#\v")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkStoreOutage(t, c.data) })
	}
}

// TestEndGivesDroppedRecordItsIndex: a session that came back while the database was down
// numbers its turns here from 0 (its state could not be loaded); the bound on records
// waiting (oneUnsaved) drops the first one's record, which only the session's state then
// holds. The database back, the session ends in the batch that retries the save: the
// end took the state out of the shard first, so the reservation of the store's indexes
// (reserveLocal) found neither the record nor the state, and the analysis held that turn
// at its index here, 0, beside the stored turn 0: the result store refused it (UNIQUE
// turn_results.session_id, turn_index), and the exporter would retry it for ever. Found
// by FuzzStoreOutage with two collectors (input d243c93eaacdd2f7).
func TestEndGivesDroppedRecordItsIndex(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{"one collector", outageSeed(0,
			o(opSend, 0), o(opAdvance, 2), o(opUnsaved, 1), o(opDown, 0), o(opSend, 0), o(opSend, 0),
			o(opUp, 0), o(opAdvance, 3))},
		// Turn 0 on the second collector, the session new to the first.
		{"two collectors", outageSeed(8,
			o(opSend, 2), o(opUnsaved, 1), o(opDown, 0), o(opSend, 0), o(opSend, 0), o(opUp, 0), o(opAdvance, 3))},
		{"d243c93eaacdd2f7", []byte("\x9cW/1\xcaz9\bB\xb4\x02\xe4\x02b\x06\x01\xf1\x03\x02z\x05\xff\xff\x05\v")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkStoreOutage(t, c.data) })
	}
}

// TestLatePartOfStoredTurnsStale: two collectors, turn 0 stored by the second and turn 1
// by the first; the database down, the second closes turn 2 and numbers it after the
// only turn it holds (1), then both sessions go idle: two parts. The database back, turn
// 2 gets the store's index 2 and the first collector's sweep recovers the whole
// conversation, which the exporter stores before the second collector's part [0 1]. That
// part holds only stored turns, but at no one offset (turn 0 at 0, turn 2 at 2): the
// result store started a new part after the stored turns, and held turns 0 and 2 twice.
// A save whose every turn is stored and fits nowhere is now stale (internal/store
// placePart, storedAll). Found by FuzzStoreOutage with two collectors (input
// dd8e3c56eeab6514, which fails still on the open fault of two parts numbered apart,
// sessions.md §4.5).
func TestLatePartOfStoredTurnsStale(t *testing.T) {
	checkStoreOutage(t, outageSeed(8, o(opSend, 2), o(opSend, 0), o(opDown, 0), o(opSend, 2), o(opAdvance, 3)))
}

// TestEndedTwiceInOneChunkNotHeldAgain: a session's end waits for the store (its records
// released, the database down); the store back, its next turn is still open at the
// shutdown, whose batch holds the waiting end, the turn and the turn's session end. The
// continuation's hold must not outlive its end: a hold left by a stopped collector is an
// orphan, which the next collector's sweep analyses again, as a partial session cut by a
// restart. (A first fix of TestContinuedInTheChunkOfItsEnd wrote the continuation's
// hold again after the chunk's release, also when the continuation ended in the same
// chunk; now the chunk ends before the continuation, emitChunk.)
func TestEndedTwiceInOneChunkNotHeldAgain(t *testing.T) {
	r := newOutageRun(t, 0)
	r.run([]byte{o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opDown, 0), o(opSend, 0),
		o(opAdvance, 2), o(opUp, 0), o(opSendOpen, 0), o(opRestart, 0)})
	orphans, err := r.cols[0].db.rec.Orphans(context.Background(), r.clk.now(), 10)
	require.NoError(t, err)
	assert.Empty(t, orphans, "no hold outlives the stopped collector: its sessions ended")
	r.step(10 * time.Minute) // a sweep
	assert.Empty(t, evalSpans(r.sinks[r.cols[0].out])[semconv.EvalKindAgentSession], "the next collector analyses no session again")
	r.finish()
}

// TestContinuedInTheChunkOfItsEndRevision: as TestContinuedInTheChunkOfItsEnd, with the
// store's revisions failing (NextRevision, SaveRevision) while the rest is up: the end
// takes the revision after the session's (not recorded), kept in the shard after the
// chunk (keepRevision); the continuation, loaded in the chunk before that, must still
// give its own analysis the revision after the end's, or the result store takes it for
// a second analysis at the stored revision.
func TestContinuedInTheChunkOfItsEndRevision(t *testing.T) {
	r := newOutageRun(t, 0)
	r.run([]byte{o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opAdvance, 2), o(opExport, 0),
		o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opDown, 0), o(opSend, 0), o(opAdvance, 2)})
	r.setDown(false)
	r.cols[0].db.failRevisions = true
	r.run([]byte{o(opSend, 0), o(opAdvance, 2)})
	r.cols[0].db.failRevisions = false
	var revisions []int
	for _, a := range analyses(t, evalSpans(r.sinks[r.cols[0].out])[semconv.EvalKindAgentSession]) {
		revisions = append(revisions, a.AnalysisRevision)
	}
	assert.Equal(t, []int{1, 2, 3}, revisions, "each analysis its own revision")
	r.finish()
}

// TestKeptHoldOfEndedSessionDropped: a session's end waits at a shutdown, its hold not
// written (the database down): the next collector writes it (kept in
// continuation.storage, shard.keptHolds). There the session goes on and ends while the
// hold writes fail; its analysis covers the stored turns and its release ends the holds
// of dead instances. The kept hold, written after that release, would be an orphan of
// an ended session, which the sweep analyses again as a partial session cut by a
// restart.
func TestKeptHoldOfEndedSessionDropped(t *testing.T) {
	r := newOutageRun(t, 0)
	ops := []byte{o(opHeld, 0), o(opFailHold, 0)}
	for range 10 {
		ops = append(ops, o(opSendOpen, 0))
	}
	r.run(append(ops, o(opAdvance, 0), o(opDown, 0), o(opAdvance, 2), o(opRestart, 0), o(opUp, 0)))
	require.NotEmpty(t, r.cols[0].p.shards[shardOf("outage-a", len(r.cols[0].p.shards))].keptHolds, "the waiting end's hold is kept")
	r.cols[0].db.failHolds = 2
	r.run([]byte{o(opSend, 0), o(opAdvance, 2), o(opAdvance, 1)})
	orphans, err := r.cols[0].db.rec.Orphans(context.Background(), r.clk.now(), 10)
	require.NoError(t, err)
	assert.Empty(t, orphans, "no hold of an ended session")
	n := len(evalSpans(r.sinks[r.cols[0].out])[semconv.EvalKindAgentSession])
	r.step(10 * time.Minute) // a sweep
	assert.Len(t, evalSpans(r.sinks[r.cols[0].out])[semconv.EvalKindAgentSession], n, "the sweep analyses no session again")
	r.finish()
}

// TestRecoveredEndWaitsForLoad: a session's end waits for the store through a shutdown,
// held; the next collector's sweep recovers it while loads fail (for good, or twice: a
// blip), the lease, the claim and the writes going through. The recovered end loads the
// session's records (state, then the end's reload): with both loads failed, it held no
// turn, and the session was released with no analysis, every turn missing from the
// result store. It waits for the store instead, as an end whose released records
// cannot be loaded (sessions.md §4.2.2).
func TestRecoveredEndWaitsForLoad(t *testing.T) {
	down := []byte{o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opDown, 0), o(opAdvance, 2), o(opRestart, 0), o(opUp, 0)}
	t.Run("loads fail", func(t *testing.T) {
		checkStoreOutage(t, outageSeed(0, append(down, o(opFailLoads, 0), o(opAdvance, 3))...))
	})
	t.Run("two loads fail", func(t *testing.T) {
		r := newOutageRun(t, 0)
		r.run(down)
		r.setFailLoads(2)
		r.step(10 * time.Minute) // the sweep
		r.finish()
	})
}

// TestLateSpansKeepDeadHold: a session's end waits for the store through a shutdown, held
// by the stopped collector; the next one gets nothing of the session but a sender's retry
// of an analysed turn's spans (late spans), and the session ends there without a new
// analysis. Its release ended the holds of dead instances too, so the stopped
// collector's, whose turns no analysis carried: no sweep recovered the session, and
// every turn was missing from the result store. Such an end releases nothing.
func TestLateSpansKeepDeadHold(t *testing.T) {
	r := newOutageRun(t, 0)
	r.run([]byte{o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opDown, 0), o(opAdvance, 2), o(opRestart, 0), o(opUp, 0)})
	r.resend(0, 0, 0) // a sender's retry of turn 0's spans
	r.step(3 * time.Second)
	r.step(2 * time.Minute)
	r.finish()
}

// TestRestoredRecordsKeptOverBound: one record waiting a shard (the bound); a turn
// numbered while the database is down, its record dropped over the bound but held by its
// session, whose end waits at the shutdown: the session's records go to
// continuation.storage past the bound (keepHeld), the only copy of that turn. The next
// collector, the database still down, failed its first save of them and dropped them
// over the bound: the turn's index was reserved, its record gone, and no analysis held
// it. Found by FuzzStoreOutage (input cdc8a671f0b3230b: turn 11 of 18 missing).
func TestRestoredRecordsKeptOverBound(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{"down at restart", outageSeed(0, o(opUnsaved, 1), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0),
			o(opDown, 0), o(opSend, 0), o(opRestart, 0), o(opStep, 0), o(opUp, 0), o(opAdvance, 3))},
		// Down through two restarts: the collector between keeps them held again.
		{"down at two restarts", outageSeed(0, o(opUnsaved, 1), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0),
			o(opDown, 0), o(opSend, 0), o(opRestart, 0), o(opStep, 0), o(opRestart, 0), o(opStep, 0), o(opUp, 0), o(opAdvance, 3))},
		{"cdc8a671f0b3230b", []byte("\x00))\x1a\x00\x00\x00\x00\x00\x1a%\tZ\x00\x00#\x00\x00\x00\x00\x04\x00\xbb\x87}e\x9a\x00\x00\x00\x00\x00\x00\v\x05\f")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkStoreOutage(t, c.data) })
	}
}

// TestRestoredRecordsKeepTheirNumberedIndex: one record waiting a shard (the bound,
// maxLocal() 4); five turns numbered here while the database is down, and a restart:
// continuation.storage gives the next collector the five records (held past the bound)
// and the five turns numbered here. Its first save fails (still down) and its bound on
// those turns dropped the oldest, although its record waited in the shard (the session
// is not open there, so holdsTurn did not see it): the database back, reserveLocal gave
// the store's next index to the turns left (turn 5 took index 4) and the dropped turn's
// record was saved at the index numbered here (4) too. Every later analysis held index
// 4 twice and the result store refused each whole (UNIQUE turn_index): the session's
// result lost every turn after the outage. Found by FuzzStoreOutage (input
// fb73d66a4673ea7b: turns 6–8 and 9–11 at indexes 6–8, the session's result stopped
// at its first revision).
func TestRestoredRecordsKeepTheirNumberedIndex(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{"open at restart", outageSeed(0, o(opUnsaved, 1),
			o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0),
			o(opDown, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0),
			o(opRestart, 0), o(opStep, 0), o(opUp, 0), o(opAdvance, 1))},
		// The session's end waits for its released records through the restart.
		{"end waiting at restart", outageSeed(0, o(opUnsaved, 1),
			o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0),
			o(opDown, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0),
			o(opAdvance, 2), o(opRestart, 0), o(opStep, 0), o(opUp, 0), o(opAdvance, 1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newOutageRun(t, c.data[0])
			r.run(c.data[1:])
			r.finish()
			// Every record was held somewhere: no turn's index is given up (finish
			// checks no turn after a documented loss, here the claims' bound).
			assertWhole(t, r.results, r.ids[0], r.turns[0])
		})
	}
}

// TestEndingSessionKeepsItsNumberedIndex: two sessions on one shard, one record waiting
// it (maxLocal() 4). Session B's first two turns are stored and it ends; the database
// down, a new session A numbers six turns here and B's next turn is numbered 0 here,
// its record pushed out of the records waiting by A's next one (B's open session still
// holds it). B ends first: the write of its end fails, and the bound on turns numbered
// here dropped B's, the only one no open session held, although the ending session did
// (shardWrites.ending, out of the shard's sessions already). B's last record, finished
// without follow-up after the analysis, waited again without its entry: the database
// back, it was saved at index 0, where B's first turn is stored, and B's next analysis
// held index 0 twice: the result store did not store B's last turn ("one collector",
// which fails on the code before TestRestoredRecordsKeepTheirNumberedIndex's fix too).
// Found by FuzzStoreOutage (input 395e1346680b262e, after that fix: the restored
// records' entries, spared then, left B's the oldest the bound could drop; through a
// restart, continuation.storage kept B's record without its entry, and the result
// store refused B's recovered analysis, UNIQUE turn_index).
func TestEndingSessionKeepsItsNumberedIndex(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		// whole: every record of each session was held somewhere, so each is whole
		// (finish checks no turn after a documented loss, the claims' bound here).
		whole bool
	}{
		{"one collector", outageSeed(3, o(opUnsaved, 1), o(opSend, 1), o(opSend, 1), o(opAdvance, 2), o(opDown, 0),
			o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSend, 1), o(opSend, 0),
			o(opAdvance, 1), o(opAdvance, 1), o(opAdvance, 1), o(opAdvance, 1), o(opAdvance, 1),
			o(opUp, 0), o(opAdvance, 1), o(opSend, 1), o(opAdvance, 2)), true},
		{"395e1346680b262e", []byte("\x03\x00\x10\x00\x10\x00\x10\x00\x10\x04\x10\x04\x10\x00\x10\x00\xfa\x00\x00\xfa\v\x00\x04\x10#\v"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newOutageRun(t, c.data[0])
			r.run(c.data[1:])
			r.finish()
			if c.whole {
				for s, id := range r.ids {
					assertWhole(t, r.results, id, r.turns[s])
				}
			}
		})
	}
}

// TestClaimedWhileOpenThenLateSpansOnly: a collector is killed holding a session whose
// turns it closed and never analysed; the other collector gets only a sender's retry of
// one of those turns (late spans), and its sweep claims the dead collector's hold while
// the session is open there. The session's end there emitted nothing and released
// nothing, as for a dead collector's hold it did not claim (TestLateSpansKeepDeadHold):
// the hold was its own then, which no sweep of a live collector takes, so no collector
// analysed the session until this one stopped.
func TestClaimedWhileOpenThenLateSpansOnly(t *testing.T) {
	r := newOutageRun(t, 8|4)
	r.run([]byte{o(opSend, 2), o(opSend, 2), o(opSend, 2), o(opRestart, 3)})
	require.Contains(t, r.log, "crash on 1")
	r.step(20 * time.Second) // the dead collector's lease has not run out yet
	r.resend(0, 0, 0)        // a sender's retry of turn 0's spans, to the live collector
	for range 4 {
		r.step(5 * time.Second) // the lease runs out; the live collector's sweep claims it
	}
	require.True(t, r.cols[0].p.tracker.IsOpen("outage-a"), "claimed while open on collector 0")
	r.step(time.Minute) // the session ends on collector 0
	r.step(unsavedRetry)
	r.export()
	a := assertWhole(t, r.results, "outage-a", 3)
	assert.True(t, a.Partial, "analysed as a session cut by a crash")
	assert.Equal(t, string(session.EndReasonRestart), a.EndReason)
	r.finish()
}

// TestTwoPartsNumberedApart: two collectors store turns 0–4 between them; the database
// down, the second closes turns 5 and 6 and numbers them 3 and 4, after the only turns
// it holds (0–2), and both sessions go idle while it is down. Back up, turns 5 and 6 get
// the store's indexes, but no collector analyses the session again, so the result store
// has only that part for them. It holds stored turns where they are stored and new turns
// on the indexes of other stored turns: placed at one offset after the stored turns (a
// new part), it held turns 0–2 twice. The store now places such a save turn by turn
// (internal/store placePart, byTurn). Found by FuzzStoreOutage with two collectors (the
// rest of input dd8e3c56eeab6514).
func TestTwoPartsNumberedApart(t *testing.T) {
	checkStoreOutage(t, outageSeed(8, o(opSend, 2), o(opSend, 0), o(opSend, 2), o(opSend, 0), o(opSend, 0), o(opDown, 0),
		o(opSend, 2), o(opSend, 2), o(opAdvance, 3)))
}

// TestWholeSessionAfterPartOfDroppedTurn: three turns stored, the session idle; it comes
// back while the database is down, two turns numbered here from 0, the bound on records
// waiting drops the first's record, and it goes idle: a part, which the result store
// places after the stored turns (3 and 4). The database back, the session continues and
// goes idle again before the exporter stored the part, so its whole conversation lacks
// the dropped turn (index 3, a gap) and adds turn 5. Below the part's offset and lacking a
// stored turn, it was refused as an earlier part's late export, and turn 5 was in no
// stored analysis. A save there that loses no stored turn is now the whole conversation
// (internal/store placePart, losesNone). Found by FuzzStoreOutage (input
// 3962bb8a6f03f9b9, two collectors; one suffices).
func TestWholeSessionAfterPartOfDroppedTurn(t *testing.T) {
	checkStoreOutage(t, outageSeed(0, o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opAdvance, 2), o(opUnsaved, 1),
		o(opDown, 0), o(opSend, 0), o(opSend, 0), o(opAdvance, 3), o(opUp, 0), o(opSend, 0), o(opAdvance, 3)))
}

// TestRetryToOtherCollectorWhileDown: two collectors, the database down; one closes turn
// 0, the other turns 1 and 2, and a sender's retry of turn 1 reaches the first. Neither
// can load the session, so each numbers its turns from 0: the parts [1 2] and [0 1],
// both revision 1, and no collector analyses the session again. The second part stored
// lay below the first (turn 1 at 0) and was taken for an earlier part's late export:
// turn 0 was in no stored analysis. It adds a turn no stored analysis has, so the result
// store places it turn by turn (internal/store placePart). Found by FuzzStoreOutage with
// retries (input db5f16361f2c5a97, where the part placed turn by turn also read back 3 of
// its 12 turns: TestPartPlacedTurnByTurnReadsBackKeptTurns).
func TestRetryToOtherCollectorWhileDown(t *testing.T) {
	checkStoreOutage(t, outageSeed(24, o(opSendOpen, 2), o(opDown, 0), o(opSend, 0), o(opSend, 0), o(opSendToo, 6), o(opAdvance, 2)))
}

// TestWaitingEndHoldKeptWithItsRecords: two collectors store turns 0–4 of a session
// between them; the database down, the second closes turn 5 and stops, its end waiting
// for the store, turn 5's record kept in continuation.storage; its hold of the session
// was written before the outage, so the shutdown kept no hold. The first collector's end
// of the session, the database back, analysed turns 0–4 and released the session, the
// stopped collector's hold with it (a dead instance's); the next collector then saved
// turn 5's record, and no analysis held it. The shutdown now keeps the hold of a waiting
// end whose records it keeps, and the next collector writes it again with them: its
// sweep analyses the session once turn 5 is stored. Found by FuzzStoreOutage (input
// 884992725194ef82).
func TestWaitingEndHoldKeptWithItsRecords(t *testing.T) {
	checkStoreOutage(t, outageSeed(9, o(opSend, 2), o(opSend, 0), o(opSend, 2), o(opSend, 0), o(opSend, 2), o(opDown, 0),
		o(opSend, 2), o(opRestart, 2), o(opAdvance, 2)))
}

// TestPartOverTurnsOnlyTheContinuationStoreHad: turns 0–2 analysed and stored; turns 3
// and 4 close and are saved to the continuation store only (the session does not go
// idle). The database down, a restart: the next collector cannot load the session and
// numbers turns 5 and 6 from 0, the bound on records waiting drops turn 5's record, and
// the session goes idle: a part, which the result store, holding turns 0–2 only, places
// at 3 and 4 (the indexes the store gave turns 3 and 4). Turn 7 comes; the whole
// conversation holds turns 0–4, 6 and 7 at the store's indexes and lacks turn 5 at its
// gap (5). It fitted at no offset and was placed turn by turn: each turn once, but turns
// 3, 4 and 7 after the part's (5, 6, 7). The result store now stores it whole and moves
// the part's turn it lacks to its gap (internal/store supersedesPart, lackedMoves).
// Found by FuzzStoreOutage (input f62cc4a9906be8dc, one collector).
func TestPartOverTurnsOnlyTheContinuationStoreHad(t *testing.T) {
	checkStoreOutage(t, outageSeed(0, o(opUnsaved, 1), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opAdvance, 3),
		o(opSend, 0), o(opSend, 0), o(opDown, 0), o(opRestart, 0), o(opSend, 0), o(opSend, 0), o(opAdvance, 2),
		o(opUp, 0), o(opAdvance, 1), o(opExport, 0), o(opSend, 0), o(opAdvance, 2)))
}

// TestRetriedTurnInPartThenWholeSession: turns 0 and 1 stored; turns 2 and 3 close, the
// database goes down, a restart: the next collector cannot load the session and numbers
// from 0 turn 4, then a sender's retry of turn 3, then turns 5–8, so the part holds turn
// 3 after turn 4, and the result store places it after turns 0 and 1 (turn 4 at 2, turn 3
// at 3). The whole conversation holds every stored turn, turns 0 and 1 where they are
// stored, the part's in another order, and turn 2, which only the continuation store
// had: kept from the rule for the whole conversation by that order, it was placed turn
// by turn, turn 2 after the part's (at 8). The result store now stores it whole when the
// earlier parts' turns anchor it (internal/store supersedesPart). Found by
// FuzzStoreOutage with retries (input bf84ab6ee84344ea, one collector; it failed before
// the fix for f62cc4a9906be8dc too).
func TestRetriedTurnInPartThenWholeSession(t *testing.T) {
	checkStoreOutage(t, outageSeed(16, o(opSend, 3), o(opSend, 3), o(opAdvance, 6), o(opSend, 3), o(opSend, 3), o(opDown, 2),
		o(opRestart, 2), o(opSend, 3), o(opSendToo, 4), o(opSend, 3), o(opSend, 3), o(opSend, 3), o(opSend, 3), o(opAdvance, 6)))
}

// TestPartsPlacedBeforeTurnBetweenThenWholeSession: turns 0–2 stored; turn 3 closes, the
// database goes down, a restart: the next collector cannot load the session and numbers
// turn 4 from 0, and stops (its analysis partial, at shutdown); the database comes back
// and goes down again, and the collector after it numbers turn 5 from 0 too. The result
// store places each part after the turns stored then (turn 4 at 3, turn 5 at 4). The
// whole conversation holds every stored turn and turn 3, which only the continuation
// store had, before both parts' turns: it moves the earlier part's turn (turn 4), which
// kept it from the rule for the whole conversation, and it was placed turn by turn, turn
// 3 after both (at 5). It is now stored whole (internal/store supersedesPart). Found by
// FuzzStoreOutage (input f02e364494d9ea34, one collector; it failed before the fix for
// f62cc4a9906be8dc too).
func TestPartsPlacedBeforeTurnBetweenThenWholeSession(t *testing.T) {
	checkStoreOutage(t, outageSeed(17, o(opSend, 3), o(opSend, 3), o(opSend, 3), o(opAdvance, 6), o(opSend, 3), o(opDown, 2),
		o(opRestart, 2), o(opSend, 3), o(opRestart, 2), o(opUp, 2), o(opAdvance, 4), o(opDown, 2), o(opSend, 3), o(opAdvance, 6)))
}

// TestClaimedWhileOpenThenEndWhileDown: a session's turns alternate between two
// collectors; loads fail (the store takes writes), so the second collector's end of it
// waits through its shutdown with its hold written, and the first collector's sweep
// claims that hold (a dead instance's now) while the session is open there. The
// database down at the session's end there, neither the revision nor the stored turns
// could be read, and the analysis covered this collector's turns alone, a part: the
// dead collector's turns were in no analysis, and the hold claimed, this collector's
// now, is one no live collector's sweep takes (its release failed; had it gone
// through, no collector would ever analyse them). The end of a claimed session now
// waits for the store, as that of a session recovered without a turn here does, and
// covers the stored turns. Found by FuzzStoreOutage (input fff7422d9c4c1f63, two
// sessions; one suffices). SQLite, and PostgreSQL when AGENTEVAL_TEST_POSTGRES_DSN is
// set.
func TestClaimedWhileOpenThenEndWhileDown(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		r := newOutageRunOn(t, 8, driver, dsn)
		r.run([]byte{o(opSend, 2), o(opFailLoads, 0), o(opSend, 0), o(opAdvance, 1), o(opAdvance, 1), o(opAdvance, 1),
			o(opAdvance, 1), o(opRestart, 2), o(opAdvance, 1)})
		_, claimed := r.cols[0].p.claimedOpen.Load("outage-a")
		require.True(t, claimed, "collector 0's sweep claimed the stopped collector's hold while the session is open there")
		r.run([]byte{o(opDown, 0), o(opAdvance, 2)})
		r.finish()
	})
	t.Run("fff7422d9c4c1f63", func(t *testing.T) {
		checkStoreOutage(t, []byte("\t\t\x000 \x0f\xe60 \x10\x000 \x10\x000 \x10+ \x04\x10#\x05\x13"))
	})
}

// TestHigherRevisionOfPartialLoadKeepsTurnAfter: the first collector analyses turns 0–5
// at revision 1, stored; the second, its loads failing, gets a sender's retry of turns 3
// and 4 and analyses them, numbered where the store has them, at its own revisions 1 and
// 2 (the database down). Its revision 2 fits at offset 0 and is above the stored one:
// written as the usual later revision it replaced the stored turns from its first index
// on, and turn 5, after its last, was in no stored analysis (5 of 6 turns). Found by
// FuzzStoreOutage with retries (input 0e38c9909932f1a0, two collectors).
func TestHigherRevisionOfPartialLoadKeepsTurnAfter(t *testing.T) {
	checkStoreOutage(t, outageSeed(56, o(opSendOpen, 4), o(opSendOpen, 4), o(opSendOpen, 4), o(opSendOpen, 3), o(opFailLoads, 2),
		o(opSendToo, 0), o(opDown, 2), o(opSendOpen, 4), o(opAdvance, 6), o(opSendToo, 3), o(opSendOpen, 4), o(opAdvance, 6)))
}

// TestLowerRevisionAddsTurnsHigherLacks: the second collector analyses turns 0–3 at
// revision 1; the first, recovering the session (its end restarted), analyses turns 0
// and 3 only at revision 2, and that analysis reaches the result store first. Revision 1,
// exported after it, was skipped as older: turns 1 and 2 in no stored analysis (2 of 4
// turns). Found by FuzzStoreOutage (input 8ff64bbb02a4fc33, two collectors).
func TestLowerRevisionAddsTurnsHigherLacks(t *testing.T) {
	checkStoreOutage(t, outageSeed(56, o(opSend, 3), o(opUnsaved, 5), o(opDown, 2), o(opSend, 3), o(opSend, 3), o(opSend, 3),
		o(opAdvance, 6)))
}

// TestPartPlacedTurnByTurnKeepsFurtherVerdict: two collectors numbering the session
// apart while the database is down, with senders' retries (FuzzStoreOutage input
// db5f16361f2c5a97, kept in the corpus). A part the result store placed turn by turn
// rewrote a stored turn with its own verdict without follow-up, over the stored one with
// follow-up that the continuation store holds for it (turn 5: stage 1 stored, record at
// 2): the result store's turn rows had no verdict stage to compare
// (docs/decisions/sessions.md §4.5). Every outage run now checks that no stored verdict
// is below its record's (outageRun.checkStages).
func TestPartPlacedTurnByTurnKeepsFurtherVerdict(t *testing.T) {
	checkStoreOutage(t, outageSeed(0x7a, o(opHeld, 3), o(opFailHold, 0), o(opSendOpen, 4), o(opSendOpen, 0), o(opSendOpen, 6),
		o(opDown, 10), o(opSendSettled, 12), o(opSend, 4), o(opSend, 0), o(opSend, 0), o(opSend, 0), o(opSendToo, 7),
		o(opFailLoads, 0), o(opSendToo, 0), o(opSendToo, 15), o(opSendOpen, 0), o(opSendOpen, 0), o(opSendOpen, 0),
		o(opSendOpen, 0), o(opAdvance, 0), o(opFailLoads, 0), o(opAdvance, 2), o(opRestart, 0)))
}

// TestRetryNumberedInPartThenWholeSession: turns 0 and 1 are saved to the continuation
// store only, and the session's end waits through the shutdown (loads fail), its hold
// kept. The database down, the next collector cannot load the session: it numbers turn 2
// from 0, then a sender's retry of turn 0 (which it cannot know is stored) as a new turn,
// 1, and the session goes idle: a part, [turn 2 at 0, turn 0 at 1]. The database back,
// the part reaches the result store first, on a session it does not have, and is stored
// at its numbering; the sweep's analysis of the stopped collector's hold, over the
// continuation store's turns (turns 0–2 at 0–2), holds every stored turn and more, in
// another order, with no earlier part to anchor it: the order rule placed it turn by
// turn, turns 0, 1 and 2 at 1, 2 and 0 ("turn N is at its index"). The part now carries
// its mark (agent_eval.session.numbered_here), and the result store lets the analysis
// with the continuation store's indexes put the guessed turns in its order
// (internal/store supersedesPart). Found by FuzzStoreOutage with retries (input
// f272254620ec775f, one collector). SQLite, and PostgreSQL when
// AGENTEVAL_TEST_POSTGRES_DSN is set.
func TestRetryNumberedInPartThenWholeSession(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		r := newOutageRunOn(t, 16, driver, dsn)
		r.run([]byte{o(opSend, 0), o(opSend, 0), o(opFailLoads, 0), o(opRestart, 0), o(opDown, 0), o(opSend, 0),
			o(opSendToo, 8), o(opAdvance, 2)})
		r.finish()
		require.Len(t, r.sinks, 2)
		numbered := map[int]bool{}
		for _, a := range analyses(t, evalSpans(r.sinks[1])[semconv.EvalKindAgentSession]) {
			numbered[len(a.TurnResults)] = a.NumberedHere
		}
		assert.Equal(t, map[int]bool{2: true, 3: false}, numbered,
			"the part (2 turns) is marked numbered here, the sweep's analysis over the stored turns (3) is not")
	})
	t.Run("f272254620ec775f", func(t *testing.T) {
		checkStoreOutage(t, []byte("\xf3\b\b\x02l\xeb?\x9b\xbe\v\x02\xe8\x03\x06#\v\x06v\x16\xf7Ī\xe2FF\x81\x02\x02\x02\x06v\x81\x02\x02\x02\x02\x02\xe8\x03\x06#\x02"))
	})
}
