// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// part is where a save's turns and revision go among its session's stored ones
// (docs/decisions/sessions.md §4.6). A collector that forgot a session (continuation
// state in memory only: evicted, or restarted) numbers its turns from 0 and its
// revisions from 1 again; the store then places that part after the stored turns
// instead of letting it overwrite them.
type part struct {
	// turnOffset is added to the save's turn indexes, revisionOffset to its revision.
	turnOffset, revisionOffset int
	// index, when set, places the save turn by turn instead of by turnOffset: the save's
	// turn index → the index it is stored at (placedIndex; byTurn).
	index map[int]int
	// moved: the save starts a new part; its offsets are written to the sessions row
	// (turn_offset, revision_offset, migration 00012) for the part's later saves.
	moved bool
	// stale: the save belongs to an earlier part (an export retried late): nothing of it
	// is written, as for an older revision.
	stale bool
	// from is the first turn index the save holds (after turnOffset): it replaces the
	// stored turns from there on, up to to, and keeps the others, kept of them. to is the
	// last index a turns part holds (evaluation.Analysis.TurnsPart), else math.MaxInt32.
	from, to, kept int
	// gaps are the indexes from from to to, in order, of stored turns the save lacks
	// altogether (their trace is at no index of it), before its last turn or after it:
	// they are kept too (part.deleted).
	gaps []int
	// moves are the stored turns the save lacks that go to another index (a part's turn
	// at the whole conversation's gap, supersedesPart): their rows are read before the
	// save's deletes (movedTurns) and written again at their new index with the save's.
	moves []move
	// movedTurns are the turn results of moves, at their new index (sqlStore.readTurns).
	movedTurns []evaluation.TurnResult
	// further are the stored turns the save holds with a verdict of a lower stage than
	// the stored one (TurnResult.VerdictStage: an older revision of another collector,
	// or a collector that rebuilt the turn's record from its stored result): from their
	// stored index to where the save places them. The save writes the stored result
	// there instead of its own (furtherTurns, read before its deletes): a save never
	// takes a turn's verdict back (docs/decisions/sessions.md §4.5).
	further []move
	// furtherTurns are the stored turn results of further, at the save's index
	// (sqlStore.readTurns).
	furtherTurns []evaluation.TurnResult
	// found: the session is stored, at storedRevision.
	found          bool
	storedRevision int
	// numberedHere: the stored session's sessions.numbered_here (migration 00016): a save
	// whose indexes its collector guessed was written (numberedAfter).
	numberedHere bool
}

// move is a stored turn the save lacks that it moves (from its stored index to another),
// or one whose stored result it keeps (part.further).
type move struct{ from, to int }

// selectPartSQL reads, in one round trip, the session's revision, part offsets and
// numbered_here mark (a row with a NULL turn when it has no turn rows) and its stored
// turns (index, trace, root span, verdict stage).
const (
	selectPartSQL = "SELECT s.analysis_revision, s.turn_offset, s.revision_offset, s.numbered_here, t.turn_index, t.trace_id, t.root_span_id, t.verdict_stage " +
		"FROM sessions s LEFT JOIN turn_results t ON t.session_id = s.session_id WHERE s.session_id = ?"
	movePartSQL = "UPDATE sessions SET turn_offset = ?, revision_offset = ? WHERE session_id = ?"
	// markNumberedSQL sets the session's numbered_here mark (part.numberedAfter).
	markNumberedSQL = "UPDATE sessions SET numbered_here = ? WHERE session_id = ?"
)

// Classes of the transaction-scoped advisory locks (lockSessions): the first key of
// PostgreSQL's two-int4 key space, apart from the bigint keys of the migrations.
const (
	// partLockClass serialises the saves of one session (SaveAnalyses, placePart).
	partLockClass int32 = 0x61657074
	// reserveLockClass serialises the turn index allocations of one session
	// (ReserveTurns).
	reserveLockClass int32 = 0x61657472
)

// lockParts takes, in the save's transaction, an advisory lock per session of batch
// (PostgreSQL: its read committed transactions see what another save committed after
// they began, but placePart's read and the writes it decides would otherwise interleave
// with another save of the same session: docs/decisions/sessions.md §4.6). Until the
// transaction ends, another save of any of these sessions waits before its placement
// query, and then reads what this one committed. SQLite needs none: its write
// transaction holds the database's lock from BEGIN (dialect.lockedTx).
func lockParts(ctx context.Context, tx *sql.Tx, batch []*analysisRows) error {
	ids := make([]string, 0, len(batch))
	for _, p := range batch {
		ids = append(ids, p.id)
	}
	return lockSessions(ctx, tx, partLockClass, ids)
}

// lockSessions takes, in tx, the advisory lock (class, FNV-32a of the id) of each
// session id (PostgreSQL). The locks are taken in one statement, in ascending key order,
// so that two transactions holding some of the same sessions never wait for each other
// crosswise.
func lockSessions(ctx context.Context, tx *sql.Tx, class int32, ids []string) error {
	keys := make([]int32, 0, len(ids))
	for _, id := range ids {
		h := fnv.New32a()
		_, _ = h.Write([]byte(id))
		keys = append(keys, int32(h.Sum32())) //nolint:gosec // a hash: wrapping is intended
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1, k) FROM unnest($2::int4[]) WITH ORDINALITY AS t(k, n) ORDER BY n",
		class, keys); err != nil {
		return fmt.Errorf("lock sessions: %w", err)
	}
	return nil
}

// placePart decides where the turns and the revision (as the collector numbered them) of
// a save of session id go, reading the session with selectPart (selectPartSQL prepared
// in the save's transaction). A turn is known by its trace and root span (partKey): one
// trace may hold several turns.
//   - a session not stored yet, or a save without turns, goes where it says (with the
//     current part's offsets);
//   - the current part's offsets, when none of the turns then lands on the index of
//     another stored turn and no stored turn moves (the usual case: a continuation, a
//     retried export); a save below the stored revision that adds a turn (addsTurn) then
//     takes the revision after the stored one instead of being skipped as older;
//   - else, when one of its turns is stored, the offset that puts it back on it: below
//     the current part's, the save is stale, unless at that offset it fits and loses no
//     stored turn (losesNone: each stored turn it lacks is below its last, kept; the
//     whole conversation, from a collector whose continuation store was down when the
//     part was made): it is stored there, its revision after the stored one; or unless
//     it adds a turn of a trace no stored turn has (addsTrace: not an earlier part of
//     the stored ones): it is placed turn by turn (byTurn, below); above it (a
//     turn re-closed after a restart), a new part starts there, unless the save holds
//     only stored turns and lacks a stored turn after them (cutsOff: an earlier part's
//     export replayed after the whole conversation), which is stale;
//   - else a save whose every turn is stored is stale (storedAll), one that holds some
//     stored turns is placed turn by turn (byTurn: the stored ones where they are, the
//     others after the highest stored turn), and one that holds none starts a new part
//     after the highest stored turn.
//
// Whatever the placement, a save keeps every stored turn (with a trace) that it lacks
// after its first index (part.place): it never deletes a turn it does not carry.
//
// At the current part's offset, a save at the stored revision that cuts off stored turns
// is stale too: a second analysis given that revision, not a retried export. A turns part
// (a.TurnsPart) cuts off nothing: it replaces the stored turns of its range only; it is
// stale when it does not fit at the current part's offset.
//
// A new part's revisions go after the stored revision (revision 1 of the part is the
// stored one + 1).
//
// Wherever the save goes, a stored turn it holds with a verdict of a lower stage keeps
// its stored result (part.further).
func placePart(ctx context.Context, selectPart *sql.Stmt, id string, a *evaluation.Analysis) (part, error) {
	var (
		stored = map[int]TurnKey{} // turn index → turn (partKey)
		stages = map[int]int{}     // turn index → verdict stage, of the final stored turns
		pl     part
	)
	rows, err := selectPart.QueryContext(ctx, id)
	if err != nil {
		return pl, fmt.Errorf("read part %q: %w", id, err)
	}
	for rows.Next() {
		var (
			idx, stage  sql.NullInt64
			trace, root sql.NullString
		)
		if err := rows.Scan(&pl.storedRevision, &pl.turnOffset, &pl.revisionOffset, &pl.numberedHere, &idx, &trace, &root, &stage); err != nil {
			_ = rows.Close()
			return pl, fmt.Errorf("read part %q: %w", id, err)
		}
		pl.found = true
		if idx.Valid {
			stored[int(idx.Int64)] = TurnKey{TraceID: trace.String, RootSpanID: root.String}
			if stage.Int64 > 0 {
				stages[int(idx.Int64)] = int(stage.Int64)
			}
		}
	}
	if err := closeRows(rows); err != nil {
		return pl, fmt.Errorf("read part %q: %w", id, err)
	}
	numbered := pl.numberedHere
	pl = pl.among(a, stored)
	pl.numberedHere = numbered // whatever the placement (numberedAfter)
	if !pl.stale && a.AnalysisRevision+pl.revisionOffset >= pl.storedRevision {
		// Not for a save that is not written (an older revision: SaveAnalyses, saveTurnsPart).
		pl.further = pl.furtherOn(a.TurnResults, stored, stages)
	}
	return pl, nil
}

// among is placePart's decision for the save a, given the session's stored turns (index
// → turn) and pl: the stored session's revision and current part offsets, as read.
func (pl part) among(a *evaluation.Analysis, stored map[int]TurnKey) part {
	revision, turns, rangeOnly := a.AnalysisRevision, a.TurnResults, a.TurnsPart
	found, highest := pl.found, pl.storedRevision
	if !found || len(turns) == 0 {
		return pl.place(turns, stored, rangeOnly)
	}
	at := make(map[TurnKey]int, len(stored)) // turn → stored index; no trace identifies no turn
	for idx, t := range stored {
		if t.TraceID != "" {
			at[t] = idx
		}
	}
	// fits: at offset off, every turn lands on a free index or on its own stored turn
	// (same trace and root span), and no stored turn moves. No index is below 0: a save
	// whose later turn is stored at a lower index than its own (a part that guessed it)
	// does not fit below its first turn (FuzzStoreOutage input 9faadff7dc3f8fff).
	fits := func(off int) bool {
		for i := range turns {
			turn, idx := partKey(&turns[i]), turns[i].TurnIndex+off
			if idx < 0 {
				return false
			}
			if t, ok := stored[idx]; ok && t != turn {
				return false
			}
			if k, ok := at[turn]; ok && k != idx {
				return false
			}
		}
		return true
	}
	if fits(pl.turnOffset) {
		if revision+pl.revisionOffset == highest && !rangeOnly && cutsOff(turns, pl.turnOffset, stored, at) {
			// The stored analysis has this revision and turns after this save's: two
			// analyses were given one revision (collectors that could not allocate it,
			// docs/decisions/sessions.md §4.8), and a retried export of the stored one
			// lacks none of its turns. Written, this one would replace them.
			return part{stale: true}
		}
		if revision+pl.revisionOffset < highest && !rangeOnly && addsTurn(turns, at) {
			// An older revision that holds turns the stored analysis lacks: two
			// collectors, the one that could load the session less of it (it recovered
			// the session, or a sender's retry reached it) gave the higher revision, which
			// reached the result store first (docs/decisions/sessions.md §4.5, FuzzStoreOutage
			// input 8ff64bbb02a4fc33). Skipped as older, its turns would be in no stored
			// analysis: it goes after the stored revision, as a save placed turn by turn
			// does, and keeps every stored turn it lacks (part.place).
			pl.revisionOffset = highest + 1 - revision
		}
		return pl.place(turns, stored, rangeOnly)
	}
	if rangeOnly {
		// A turns part goes with its session span, at the current part's offsets; one
		// that does not fit there never starts a part of its own (it would move the
		// session's offsets under the span's later revisions).
		return part{stale: true}
	}
	if off, moves, ok := supersedesPart(turns, pl.turnOffset, stored, at, reorders(a, pl)); ok {
		// The whole conversation over a part the store placed without the turns between
		// (a collector that numbered a session it could not load, its store down): every
		// stored turn, earlier parts' where they are stored, the current part's moved on
		// after the turns it lacked, those of its turns the save lacks to the save's gaps
		// (moves). Its revision goes after the stored one.
		return part{turnOffset: off, revisionOffset: max(0, highest+1-revision), moved: true, moves: moves,
			found: true, storedRevision: highest}.place(turns, stored, rangeOnly)
	}
	moved := part{revisionOffset: highest + 1 - min(revision, 1), moved: true, found: true, storedRevision: highest}
	for i := range turns {
		k, ok := at[partKey(&turns[i])]
		if !ok {
			continue
		}
		switch off := k - turns[i].TurnIndex; {
		case off < pl.turnOffset && fits(off) && losesNone(turns, off, at):
			// Every stored turn where it is stored, or kept below the save's last turn (a
			// turn it lacks at a gap, part.gaps): the whole conversation from a collector
			// that knows more than the current part (its continuation store came back),
			// not an earlier part, which lacks the current part's turns after its own.
			// Its revision goes after the stored one.
			return part{turnOffset: off, revisionOffset: max(0, highest+1-revision), moved: true,
				found: true, storedRevision: highest}.place(turns, stored, rangeOnly)
		case off < pl.turnOffset && addsTrace(turns, stored):
			// Below the current part, but with a turn of a trace that no stored turn
			// has: not an earlier part of the stored ones, which hold its turns, but a
			// part of a collector that closed a turn the stored parts lack (a sender's
			// retry of a stored turn to a collector that could not load the session, both
			// numbering it, FuzzStoreOutage input db5f16361f2c5a97). Stale, that turn
			// would be in no stored analysis: the save is placed turn by turn.
			return byTurn(turns, stored, at, highest, revision).place(turns, stored, rangeOnly)
		case off < pl.turnOffset, fits(off) && cutsOff(turns, off, stored, at):
			// An earlier part exported late; above the current part, one that holds only
			// stored turns and lacks a stored turn after them (the whole conversation was
			// stored first: the exporter's queue replays out of order with several
			// consumers or a retried batch). Placed, it would replace them.
			return part{stale: true}
		case fits(off):
			moved.turnOffset = off
			return moved.place(turns, stored, rangeOnly)
		}
	}
	if storedAll(turns, at) {
		// Every turn of the save is stored, and no offset puts them back where they are:
		// a part numbered by a collector that knew only some of the turns (two
		// collectors numbering a session they could not load, docs/decisions/sessions.md
		// §4.5), exported after the whole conversation. A new part would store each of
		// its turns twice (FuzzStoreOutage, TestLatePartOfStoredTurnsStale).
		return part{stale: true}
	}
	if holdsAny(turns, at) {
		// Some of its turns are stored, but at no one offset with the others: a part
		// numbered apart from the store (a collector that numbered the turns it closed
		// during an outage after the only ones it held, docs/decisions/sessions.md §4.5).
		// An offset would store its stored turns twice (FuzzStoreOutage,
		// TestTwoPartsNumberedApart): it is placed turn by turn.
		return byTurn(turns, stored, at, highest, revision).place(turns, stored, rangeOnly)
	}
	moved.turnOffset = lastStored(stored) + 1 - slices.MinFunc(turns, byIndex).TurnIndex
	return moved.place(turns, stored, rangeOnly)
}

// byTurn returns the part placing turns one by one (part.index): each stored turn (at:
// turn → stored index) where it is stored, the others after the highest stored index in
// the order of their indexes; its revision after the stored one (highest). It stores no
// turn twice and moves none; the session's part offsets stay (the part is not moved), so
// that the saves numbered as the store numbers still fit at them.
func byTurn(turns []evaluation.TurnResult, stored map[int]TurnKey, at map[TurnKey]int, highest, revision int) part {
	pl := part{revisionOffset: max(0, highest+1-revision), found: true, storedRevision: highest}
	last := lastStored(stored)
	pl.index = make(map[int]int, len(turns))
	for _, tr := range slices.SortedFunc(slices.Values(turns), byIndex) {
		if k, ok := at[partKey(&tr)]; ok {
			pl.index[tr.TurnIndex] = k
		} else {
			last++
			pl.index[tr.TurnIndex] = last
		}
	}
	return pl
}

func byIndex(a, b evaluation.TurnResult) int { return a.TurnIndex - b.TurnIndex }

// furtherOn returns the stored turns (index → turn; stages: index → verdict stage, of
// the final ones) that turns, placed by pl, hold with a verdict of a lower stage
// (TurnResult.VerdictStage): each from its stored index to the index pl places it at
// (part.further). A save of the same or a higher stage replaces the stored verdict, as
// in the continuation store (upsertTurnSQL).
func (pl part) furtherOn(turns []evaluation.TurnResult, stored map[int]TurnKey, stages map[int]int) []move {
	if len(stages) == 0 {
		return nil
	}
	at := make(map[TurnKey]int, len(stages)) // turn → stored index, of the final ones
	for idx := range stages {
		if t := stored[idx]; t.TraceID != "" {
			at[t] = idx
		}
	}
	var out []move
	for i := range turns {
		if k, ok := at[partKey(&turns[i])]; ok && stages[k] > turns[i].VerdictStage() {
			out = append(out, move{k, pl.placedIndex(turns[i].TurnIndex)})
		}
	}
	return out
}

// partKey is the key by which placePart knows a turn of a save or a stored one: its trace
// and root span (one trace may hold several turns, docs/decisions/sessions.md §4.2), as
// stored (cleanText), without the session. One without a trace identifies no turn.
func partKey(tr *evaluation.TurnResult) TurnKey { return KeyOf("", tr).clean() }

// supersedesPart reports whether turns are the whole conversation over the current part
// (stored from partOffset on), and at which offset: they hold every turn of the earlier
// parts (below partOffset) and at least one stored turn (each identified by its trace),
// and add at least one turn; the earlier parts' turns land on their stored indexes, which
// give the offset (partOffset when there are none), unless that offset puts the save's
// first turn below 0 (the first part was numbered from 0 without the turns before it
// too): then the save is at its own numbering (offset 0) and every stored turn may move;
// the current part's turns may move, in their stored order, but none below the save's
// first index. The current part was then placed after the highest stored turn by a
// collector that numbered the session from 0 (it could not load it:
// docs/decisions/sessions.md §4.5, §4.6) before the turns between reached the result
// store; written whole, the save replaces every stored turn and loses none. Without it,
// the save was stale when the stored part put a turn before where the whole conversation
// has it, or placed at a negative offset when that part (or the first part too) was all
// that was stored (FuzzStoreOutage, TestWholeSessionOverGuessedPart).
//
// When an earlier part's turn gives the offset and the save holds every stored turn, its
// numbering is the store's: every stored turn from its first index on may move, in any
// order (parts placed one after the other before the turns between, a part whose
// collector got a sender's retry of a turn after a later one:
// TestWholeSessionReordersPartTurns). The current part's turns the save lacks (their
// record dropped on the collector that made it, which could not load them) go to the
// save's gaps, keeping every stored turn's order (lackedMoves, the moves returned); when
// the gaps do not say where each goes, the save is not the whole conversation here
// (TestWholeSessionMovesPartTurnItLacks).
//
// The order of a save the continuation store numbered (storeOrder, reorders) holding
// every stored turn stands too, with no earlier part to anchor it: the stored indexes,
// some of them, are a collector's guesses, and the save's are the store's (a part that
// numbered a sender's retry of a stored turn after a later one, stored first:
// TestStoreNumberedSaveReordersGuessedPart). A save whose indexes its collector guessed
// (Analysis.NumberedHere) never reorders stored turns.
func supersedesPart(turns []evaluation.TurnResult, partOffset int, stored map[int]TurnKey, at map[TurnKey]int, numbering storeOrder) (int, []move, bool) {
	if len(at) != len(stored) {
		return 0, nil, false
	}
	held := heldOf(turns, at)
	// It holds no stored turn, or adds none: an earlier part, or a retry. Unless the
	// stored indexes are guesses and it holds them all with the continuation store's
	// indexes: the whole conversation, which puts them in its order even when it adds no
	// turn (FuzzStoreOutage input e5ac2bd9e6b5faa4: two guessed parts, then the whole
	// conversation over them, judged stale, its later verdicts lost).
	addsNone := len(turns) <= len(held) && !(numbering == storeOverGuessed && len(held) == len(at))
	if len(held) == 0 || addsNone {
		return 0, nil, false
	}
	for t, k := range at {
		if _, ok := held[t]; !ok && k < partOffset {
			return 0, nil, false // an earlier part's turn lacked
		}
	}
	off, fixed := partOffset, partOffset // the stored turns below fixed stay where they are
	anchored := false                    // an earlier part's turn gives off
	for i := range turns {
		if k, ok := at[partKey(&turns[i])]; ok && k < partOffset {
			off, anchored = k-turns[i].TurnIndex, true
			break
		}
	}
	first := slices.MinFunc(turns, byIndex).TurnIndex
	if first+off < 0 {
		// The earlier parts' turns, where they are stored, leave no room for the turns
		// the save has before them: the first part was numbered from 0 without them too
		// (a collector that could not load the session, FuzzStoreOutage input
		// f8e3aaf722a27fe4). The save goes at its own numbering, every stored turn moved
		// (it holds them all; in their order, below).
		off, fixed, anchored = 0, 0, false
	}
	if len(held) != len(at) && !anchored {
		// Its numbering is not shown to be the store's: its gaps say nothing of where the
		// turns it lacks go (two collectors numbering a session neither could load,
		// FuzzStoreOutage input 257b49578c28e7bb).
		return 0, nil, false
	}
	from := first + off
	for k := range stored {
		if k < from {
			return 0, nil, false // kept below the save and held by it: twice
		}
	}
	// whole: an earlier part's turn gives its offset, or the continuation store numbered
	// it over guessed indexes, and it replaces every stored turn: its numbering is the
	// store's, and the stored turns may move and change order.
	whole := len(held) == len(at) && (anchored && numbering != guessedSave || numbering == storeOverGuessed)
	order := make([]move, 0, len(at)) // stored index → saved index
	for i := range turns {
		turn, idx := partKey(&turns[i]), turns[i].TurnIndex+off
		if t, ok := stored[idx]; ok && t != turn && idx < fixed && !whole {
			return 0, nil, false // an earlier part's turn replaced by another
		}
		k, ok := at[turn]
		if !ok {
			continue
		}
		if k != idx && k < fixed && !whole {
			return 0, nil, false // an earlier part's turn moved
		}
		order = append(order, move{k, idx})
	}
	slices.SortFunc(order, func(a, b move) int { return a.from - b.from })
	for i := 1; i < len(order); i++ {
		// The stored turns in another order: not the whole conversation, unless whole.
		if order[i].to <= order[i-1].to && !whole {
			return 0, nil, false
		}
	}
	if len(held) == len(at) {
		return off, nil, true
	}
	moves, ok := lackedMoves(turns, off, from, stored, order)
	return off, moves, ok
}

// storeOrder says whose turn indexes a save and the stored session hold: the
// continuation store's, or a collector's guesses (Analysis.NumberedHere,
// sessions.numbered_here).
type storeOrder int

const (
	// unknownOrder: the save's indexes are the continuation store's, or there is none,
	// and no stored index is known to be guessed.
	unknownOrder storeOrder = iota
	// guessedSave: the save's collector numbered turns without its continuation store.
	guessedSave
	// storeOverGuessed: the save's indexes are the continuation store's, and a save whose
	// indexes were guessed was stored.
	storeOverGuessed
)

// reorders returns the storeOrder of save a over the stored session (pl, as read by
// placePart).
func reorders(a *evaluation.Analysis, pl part) storeOrder {
	switch {
	case a.NumberedHere:
		return guessedSave
	case pl.numberedHere:
		return storeOverGuessed
	}
	return unknownOrder
}

// numberedAfter returns the session's numbered_here mark once save a, placed by pl, is
// written, and whether the save changes it: set by a save whose indexes its collector
// guessed; cleared by one numbered by the continuation store that is stored at its own
// indexes (no offset, not turn by turn) and keeps or moves no stored turn; else as stored.
func (pl part) numberedAfter(a *evaluation.Analysis) (mark, changed bool) {
	keepsStored := a.TurnsPart || pl.index != nil || pl.turnOffset != 0 || pl.kept > 0 || len(pl.moves) > 0
	mark = a.NumberedHere || pl.numberedHere && keepsStored
	return mark, mark != pl.numberedHere
}

// lackedMoves places the stored turns (index → turn) that turns, at offset off, lack: each
// run of them between two stored turns the save holds (order: stored index → saved
// index, in stored order) goes to the indexes the save leaves free between those two
// (from the save's first index, from, up to its last), in order, when there are as many
// free indexes as turns in the run; else the save does not say where they go (false). A
// turn whose free index is its own stays (a gap, part.place); the others are returned.
func lackedMoves(turns []evaluation.TurnResult, off, from int, stored map[int]TurnKey, order []move) ([]move, bool) {
	saved := make(map[int]bool, len(turns))
	last := math.MinInt
	for i := range turns {
		idx := turns[i].TurnIndex + off
		saved[idx], last = true, max(last, idx)
	}
	savedOf := make(map[int]int, len(order)) // stored index → saved index
	for _, m := range order {
		savedOf[m.from] = m.to
	}
	var (
		moves []move
		run   []int // stored indexes of the lacked turns since prev
		prev  = from - 1
	)
	flush := func(next int) bool {
		if len(run) == 0 {
			return true
		}
		free := make([]int, 0, len(run))
		for i := prev + 1; i < next; i++ {
			if saved[i] {
				continue
			}
			if len(free) == len(run) {
				return false // more free indexes than turns: which is whose?
			}
			free = append(free, i)
		}
		if len(free) != len(run) {
			return false
		}
		for j, k := range run {
			if k != free[j] {
				moves = append(moves, move{k, free[j]})
			}
		}
		run = run[:0]
		return true
	}
	for _, k := range slices.Sorted(maps.Keys(stored)) {
		to, ok := savedOf[k]
		if !ok {
			run = append(run, k)
			continue
		}
		if !flush(to) {
			return nil, false
		}
		prev = to
	}
	if !flush(last) {
		return nil, false
	}
	return moves, true
}

// heldOf returns the stored turns (at: turn → stored index) that turns hold.
func heldOf(turns []evaluation.TurnResult, at map[TurnKey]int) map[TurnKey]struct{} {
	held := make(map[TurnKey]struct{}, len(at))
	for i := range turns {
		if t := partKey(&turns[i]); t.TraceID != "" {
			if _, ok := at[t]; ok {
				held[t] = struct{}{}
			}
		}
	}
	return held
}

// storedAll reports whether every turn of turns is stored (at: turn → stored index); a
// turn without a trace identifies no stored turn.
func storedAll(turns []evaluation.TurnResult, at map[TurnKey]int) bool {
	for i := range turns {
		if _, ok := at[partKey(&turns[i])]; !ok {
			return false
		}
	}
	return true
}

// lastStored returns the highest index of stored (index → turn), -1 when none.
func lastStored(stored map[int]TurnKey) int {
	last := -1
	for idx := range stored {
		last = max(last, idx)
	}
	return last
}

// addsTrace reports whether one of turns has a trace that no stored turn (index → turn)
// has: a turn the stored analyses lack, not another root span of a stored turn's trace.
func addsTrace(turns []evaluation.TurnResult, stored map[int]TurnKey) bool {
	traces := make(map[string]struct{}, len(stored))
	for _, t := range stored {
		traces[t.TraceID] = struct{}{}
	}
	for i := range turns {
		t := partKey(&turns[i])
		if _, ok := traces[t.TraceID]; t.TraceID != "" && !ok {
			return true
		}
	}
	return false
}

// addsTurn reports whether one of turns (with a trace) is not stored (at: turn → stored
// index): the save adds a turn to the stored analysis.
func addsTurn(turns []evaluation.TurnResult, at map[TurnKey]int) bool {
	for i := range turns {
		t := partKey(&turns[i])
		if _, ok := at[t]; t.TraceID != "" && !ok {
			return true
		}
	}
	return false
}

// holdsAny reports whether one of turns is stored (at: turn → stored index).
func holdsAny(turns []evaluation.TurnResult, at map[TurnKey]int) bool {
	for i := range turns {
		if _, ok := at[partKey(&turns[i])]; ok {
			return true
		}
	}
	return false
}

// losesNone reports whether turns, placed at offset off, delete no stored turn (at: turn
// → stored index): each stored turn they lack is below their last index, where the save
// keeps it (below its first index, or at a gap: part.place). An earlier part's late
// export lacks the current part's turns, which come after its own.
func losesNone(turns []evaluation.TurnResult, off int, at map[TurnKey]int) bool {
	held := make(map[TurnKey]bool, len(turns))
	last := math.MinInt
	for i := range turns {
		held[partKey(&turns[i])] = true
		last = max(last, turns[i].TurnIndex+off)
	}
	for t, idx := range at {
		if !held[t] && idx > last {
			return false
		}
	}
	return true
}

// cutsOff reports whether turns, placed at offset off, hold only stored turns (at:
// turn → stored index) and lack a stored turn at or after their first index: a save
// that adds nothing and would delete stored turns.
func cutsOff(turns []evaluation.TurnResult, off int, stored map[int]TurnKey, at map[TurnKey]int) bool {
	held := make(map[TurnKey]struct{}, len(turns))
	from := math.MaxInt
	for i := range turns {
		t := partKey(&turns[i])
		if _, ok := at[t]; !ok {
			return false // it adds a turn
		}
		held[t] = struct{}{}
		from = min(from, turns[i].TurnIndex+off)
	}
	for idx, t := range stored {
		if _, ok := held[t]; idx >= from && !ok {
			return true
		}
	}
	return false
}

// place sets from, to and kept for turns at pl's offset among the stored ones; with
// rangeOnly (a turns part) to is the last of turns, else the save replaces every stored
// turn from its first on.
func (pl part) place(turns []evaluation.TurnResult, stored map[int]TurnKey, rangeOnly bool) part {
	pl.from, pl.to = math.MaxInt32, math.MaxInt32 // without turns, it replaces none (an INTEGER column)
	last := -1
	for i := range turns {
		idx := pl.placedIndex(turns[i].TurnIndex)
		pl.from, last = min(pl.from, idx), max(last, idx)
	}
	if rangeOnly && last >= 0 {
		pl.to = last
	}
	var heldTurns map[TurnKey]bool
	var heldAt map[int]bool
	for idx, t := range stored {
		switch {
		case idx < pl.from || idx > pl.to:
			pl.kept++
		case idx != last && t.TraceID != "":
			if heldTurns == nil {
				heldTurns, heldAt = make(map[TurnKey]bool, len(turns)), make(map[int]bool, len(turns))
				for i := range turns {
					heldTurns[partKey(&turns[i])], heldAt[pl.placedIndex(turns[i].TurnIndex)] = true, true
				}
			}
			if !heldAt[idx] && !heldTurns[t] && !slices.ContainsFunc(pl.moves, func(m move) bool { return m.from == idx }) {
				// A turn the save lacks inside its range: a collector that could not load
				// it (its record dropped, its analysis not stored yet) numbered around it.
				// After its last: a collector that could not load the session analysed
				// only the turns it closed (a sender's retry of a stored turn reached it,
				// docs/decisions/sessions.md §4.5, FuzzStoreOutage input
				// 0e38c9909932f1a0), at a higher revision than the analysis that holds
				// them all. A save never deletes a stored turn it lacks.
				pl.gaps = append(pl.gaps, idx)
				pl.kept++
			}
		}
	}
	slices.Sort(pl.gaps)
	return pl
}

// placedIndex returns the index at which the save's turn index i is stored.
func (pl part) placedIndex(i int) int {
	if pl.index != nil {
		if k, ok := pl.index[i]; ok {
			return k
		}
	}
	return i + pl.turnOffset
}

// deleted returns the ranges of turn indexes the save replaces: from to to, but its gaps.
func (pl part) deleted() [][2]int {
	out := make([][2]int, 0, 1+len(pl.gaps))
	from := pl.from
	for _, g := range pl.gaps {
		if g > from {
			out = append(out, [2]int{from, g - 1})
		}
		from = g + 1
	}
	return append(out, [2]int{from, pl.to})
}

// shifted returns a with pl's placement applied: its revision offset, and the index
// each turn result and tool issue is stored at (placedIndex; a itself is not modified).
// a when nothing moves.
func (pl part) shifted(a *evaluation.Analysis) *evaluation.Analysis {
	if pl.turnOffset == 0 && pl.revisionOffset == 0 && pl.index == nil {
		return a
	}
	c := *a
	c.AnalysisRevision += pl.revisionOffset
	if pl.turnOffset == 0 && pl.index == nil {
		return &c
	}
	shiftIssues := func(is []evaluation.ToolIssue) []evaluation.ToolIssue {
		is = slices.Clone(is)
		for i := range is {
			is[i].TurnIndex = pl.placedIndex(is[i].TurnIndex)
		}
		return is
	}
	c.ToolIssues = shiftIssues(a.ToolIssues)
	c.TurnResults = slices.Clone(a.TurnResults)
	for i := range c.TurnResults {
		tr := &c.TurnResults[i]
		tr.TurnIndex = pl.placedIndex(tr.TurnIndex)
		tr.Interactions = slices.Clone(tr.Interactions)
		for j := range tr.Interactions {
			ia := &tr.Interactions[j]
			ia.ToolCalls = slices.Clone(ia.ToolCalls)
			for k := range ia.ToolCalls {
				ia.ToolCalls[k].Issues = shiftIssues(ia.ToolCalls[k].Issues)
			}
		}
	}
	return &c
}

// deleteChildSQL deletes a session's rows of a child table before a save writes its own:
// all of them, except in turn_results, from the save's first turn index to its last
// replaced one (part.from, part.to; the turns outside are kept).
func deleteChildSQL(table string) string {
	if table == "turn_results" {
		return "DELETE FROM turn_results WHERE session_id = ? AND turn_index >= ? AND turn_index <= ?"
	}
	return "DELETE FROM " + table + " WHERE session_id = ?"
}

// readTurns reads, in the save's transaction, the turn results of the stored turns of
// moves (part.moves: turns the save lacks and moves; part.further: turns whose stored
// verdict it keeps) and returns them at their new index (move.to), with their tool
// issues: the row holds what the save lacks or would take back.
func (s *sqlStore) readTurns(ctx context.Context, tx *sql.Tx, id string, moves []move) ([]evaluation.TurnResult, error) {
	out := make([]evaluation.TurnResult, 0, len(moves))
	for _, m := range moves {
		var doc []byte
		err := tx.QueryRowContext(ctx, s.d.rebind("SELECT result FROM turn_results WHERE session_id = ? AND turn_index = ?"), id, m.from).Scan(&doc)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read turn %d of %q: not stored", m.from, id)
		}
		if err != nil {
			return nil, fmt.Errorf("read turn %d of %q: %w", m.from, id, err)
		}
		var tr evaluation.TurnResult
		if err := json.Unmarshal(doc, &tr); err != nil {
			return nil, fmt.Errorf("read turn %d of %q: %w", m.from, id, err)
		}
		tr.SetTurnIndex(m.to) // decoded here: nothing shares its issues
		out = append(out, tr)
	}
	return out, nil
}

// keptFurther puts the stored turn results kept (part.furtherTurns, at the save's index)
// into a (placed: its own copy of the analysis, whose slices it may share) in place of
// its results of those turns, and their tool issues in place of its issues of those
// turns, in turn index order: the document and the tool_issues rows agree with the turn
// rows, and no issue is counted twice. The session's scores stay the save's (over its
// own verdicts) until a later revision, as with the stored turns a save lacks.
func keptFurther(a *evaluation.Analysis, kept []evaluation.TurnResult) {
	at := make(map[int]int, len(kept)) // turn index → position in kept
	for i := range kept {
		at[kept[i].TurnIndex] = i
	}
	a.TurnResults = slices.Clone(a.TurnResults)
	for i := range a.TurnResults {
		if k, ok := at[a.TurnResults[i].TurnIndex]; ok {
			a.TurnResults[i] = kept[k]
		}
	}
	issues := make([]evaluation.ToolIssue, 0, len(a.ToolIssues))
	for _, is := range a.ToolIssues {
		if _, ok := at[is.TurnIndex]; !ok {
			issues = append(issues, is)
		}
	}
	for i := range kept {
		for _, ia := range kept[i].Interactions {
			for _, tc := range ia.ToolCalls {
				issues = append(issues, tc.Issues...)
			}
		}
	}
	slices.SortStableFunc(issues, func(x, y evaluation.ToolIssue) int { return x.TurnIndex - y.TurnIndex })
	a.ToolIssues = issues
}

// placed returns p's rows for its part: encoded again from the analysis shifted by the
// part's offsets, when it has any, with the stored turns it moves (part.movedTurns) among
// its turns, the stored results it keeps over its own (part.furtherTurns, keptFurther)
// in their place, and the stored turns it keeps counted in the sessions row's turns. A save
// that keeps or moves stored turns has its turns in index order: the stored turns it
// keeps are rows only, and a document that held the save's turns (those of a save not in
// index order: s.rows) would hide them, as GetAnalysis reads the rows only for a
// document without turns (a save placed turn by turn, FuzzStoreOutage input
// db5f16361f2c5a97: 3 of 12 turns read back). GetAnalysis gives the turns in
// conversation order all the same.
func (s *sqlStore) placed(p *analysisRows, pl part) (*analysisRows, error) {
	a := pl.shifted(p.a)
	own := func() { // a copy of the analysis before its turns change; p.a is the caller's
		if a == p.a {
			c := *a
			a = &c
		}
	}
	if len(pl.furtherTurns) > 0 {
		own()
		keptFurther(a, pl.furtherTurns)
	}
	if len(pl.movedTurns) > 0 {
		own()
		a.TurnResults = append(slices.Clip(a.TurnResults), pl.movedTurns...)
	}
	if (pl.kept > 0 || len(pl.movedTurns) > 0) && !slices.IsSortedFunc(a.TurnResults, byIndex) {
		own()
		a.TurnResults = slices.SortedFunc(slices.Values(a.TurnResults), byIndex)
	}
	if a != p.a {
		storedAt := p.session[slices.Index(sessionCols, "stored_at")]
		q, err := s.rows(a, time.Time{})
		if err != nil {
			return p, err
		}
		q.session[slices.Index(sessionCols, "stored_at")] = storedAt
		p = q
	}
	if pl.kept > 0 {
		p.session[turnsCol] = pl.kept + len(p.a.TurnResults)
	}
	return p, nil
}
