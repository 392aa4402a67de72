// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/tracker"
)

// unsavedRetry is how long a shard whose continuation save failed waits, when it gets no
// events, before the worker has it save the records again (and emit their waiting
// verdicts, docs/decisions/sessions.md §4.5).
const unsavedRetry = 5 * time.Second

// write saves w's holds, then its turn records, to the continuation store, and empties
// both lists (the ended sessions are saved after the emission). The store arbitrates
// which collector gives a turn's first final verdict (§4.5): the final verdicts in b
// waiting for their save (w.spans) are encoded now, as Revised when their save was not
// the first (markRevised), so the turn is counted once and each change of its verdict
// once. When the save fails, those verdicts are
// withdrawn from b and the records are kept to be saved again, first, with the next save
// (sh.unsaved), which emits the verdicts, Revised or not: once stored final, a turn is
// never given another first final verdict from a provisional row, and a turn made final
// by another collector meanwhile is counted there only.
func (sh *shard) write(ctx context.Context, p *agentSessionProcessor, w *shardWrites, b *evalBatch) {
	holds := w.holds
	if len(sh.keptHolds) > 0 {
		holds = append(sh.keptHolds[:len(sh.keptHolds):len(sh.keptHolds)], w.holds...)
	}
	again := sh.holdsAgain(p)
	if len(again) > 0 {
		holds = append(holds[:len(holds):len(holds)], again...)
	}
	if err := p.hold(ctx, holds); err == nil {
		sh.keptHolds = nil
	} else {
		// Not held in the store: the sessions still open are held again with their
		// next write (evaluate, or the save of their records waiting: holdsAgain), or a
		// waiting end's retry, so that a crash or a shutdown while their end waits
		// leaves them to the next collector's recovery.
		for _, hs := range [][]store.OpenSession{w.holds, again} {
			for i := range hs {
				if st := sh.sessions[hs[i].ID]; st != nil {
					st.held = false
				}
			}
		}
	}
	if len(w.saves) > 0 || sh.pending() {
		err := sh.reserveLocal(ctx, p, w)
		if err == nil {
			err = sh.claim(ctx, p)
		}
		retried, saves := len(sh.unsaved), w.saves
		if retried > 0 {
			saves = append(sh.unsaved[:retried:retried], w.saves...)
		}
		var saved []store.SavedTurn
		if err == nil {
			saved, err = p.cont.SaveTurns(ctx, saves)
		}
		if err != nil {
			p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
			p.logger.Warn("saving turn records to the continuation store failed; they are saved again with the next batch",
				zap.Int("records", len(saves)), zap.Error(err))
			waiting := append(sh.waiting[:retried:retried], make([]bool, len(w.saves))...)
			for i, span := range w.spans {
				if span < 0 {
					continue
				}
				if tr := &w.saves[i].Record.Result; tr.Revised && !turnWaits(saves[:retried+i], waiting, w.saves[i].Key()) {
					// It revises a verdict emitted, so counted, already: emitted now,
					// with the evaluator's marks (as it would be after a save).
					b.encodeTurnSpan(span, tr)
					continue
				}
				// The turn's first counted verdict, or one that replaces a verdict
				// that waits too (never emitted): it waits, and the save that stores it
				// tells whether it is the first (emitWaiting).
				b.withdraw(span)
				waiting[retried+i] = true
			}
			for _, e := range w.ended {
				if e.revision > 0 {
					sh.keepRevision(p, e.id, e.revision)
				}
			}
			sh.keepUnsaved(p, b, w, saves, waiting)
		} else {
			emitWaiting(b, sh.unsaved, sh.waiting, saved[:retried])
			sh.clearUnsaved()
			sh.saveKeptRevisions(ctx, p)
			for i, span := range w.spans {
				if span >= 0 {
					tr := w.saves[i].Record.Result // a copy: the stored record keeps its marks
					markRevised(&tr, saved[retried+i], true)
					b.encodeTurnSpan(span, &tr)
				}
			}
			sh.release(p, saves)
			p.storeUp.Store(p.now().UnixNano())
		}
	}
	if len(sh.keptHolds) > 0 && sh.retryAt.Load() == 0 {
		sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
	}
	w.holds, w.saves, w.spans = w.holds[:0], w.saves[:0], w.spans[:0]
}

// release lets the open sessions of saves, once saved, hold their last
// p.heldRecords turn records and those still to get a verdict: a long conversation's
// older records are read again only by its analysis, which takes them back from the
// continuation store when the session ends (takeBack), so what a shard holds does not
// grow with the conversation (docs/decisions/sessions.md §4.2.2). A session drops
// records once it holds twice as many, so that the cost is constant a turn. Only a
// continuation database keeps every record (the memory store drops sessions past
// continuation.max_records), and a session of which a record was dropped unsaved
// (keepUnsaved) keeps its records: the store lacks that one.
func (sh *shard) release(p *agentSessionProcessor, saves []store.TurnState) {
	if p.cfg.Continuation.Driver == "" {
		return
	}
	for i := range saves {
		st := sh.sessions[saves[i].SessionID]
		if st == nil || !st.continuable || st.unstored || st.Len() < 2*p.heldRecords {
			continue
		}
		if dropped, below := st.Release(p.heldRecords); dropped > 0 {
			st.releasedBelow = max(st.releasedBelow, below)
		}
	}
}

// takeBackReleased merges into st the continuation store's records of session id,
// those st released (shard.release) among them.
func (sh *shard) takeBackReleased(ctx context.Context, p *agentSessionProcessor, st *sessionState, id string) error {
	if err := load(ctx, p, st, id, st.Holds); err != nil {
		return err
	}
	st.releasedBelow = 0
	return nil
}

// load merges into st the continuation store's records of session id that held leaves
// out of st (store.Held), and its revision; it counts a failure.
func load(ctx context.Context, p *agentSessionProcessor, st *sessionState, id string, held store.Held) error {
	c, err := p.cont.LoadContinuation(ctx, id, held)
	if err != nil {
		p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
		return err
	}
	st.Merge(c.Turns)
	st.revision = max(st.revision, c.Revision)
	return nil
}

// takeBack gives session st, which released records (shard.release), the continuation
// store's records before its end ev is analysed, and reports whether the end goes on.
// When the load fails, the end waits (waitingEnds, retried every unsavedRetry with the
// shard's batches) unless maxUnsaved ends wait already, or the store took writes since
// the end began to wait (p.storeUp: the load fails for another reason than an outage):
// it is then analysed over the records held, and the released turns are missing from
// that revision (a later revision of the session covers them).
func (sh *shard) takeBack(ctx context.Context, p *agentSessionProcessor, st *sessionState, ev *tracker.Event) bool {
	return sh.goesOn(ctx, p, st, ev, sh.takeBackReleased(ctx, p, st, ev.Session.ID))
}

// goesOn reports whether session st's end ev is analysed now, given err, the error of
// the load of its records that the analysis needs (takeBack's, or the end's reload):
// with none, it goes on; else it waits, as takeBack says.
func (sh *shard) goesOn(ctx context.Context, p *agentSessionProcessor, st *sessionState, ev *tracker.Event, err error) bool {
	id := ev.Session.ID
	since, waited := sh.waitingSince[id]
	if waited {
		sh.dropWaitingEnd(p, id) // an end again (a retry, or an outcome without a turn): the later one stands
	}
	switch {
	case err == nil:
		delete(sh.waitingSince, id)
		return true
	case st.loadGivenUp:
		return true // this end gave up on the store's records already (takeBack, then reload)
	case len(sh.waitingEnds) >= sh.maxUnsaved:
		p.logger.Warn("loading a session's earlier turns from the continuation store failed, and too many ends wait for it; its analysis covers the turns held in memory",
			zap.String("session_id", id), zap.Int("turns_held", st.Len()), zap.Error(err))
		delete(sh.waitingSince, id)
		st.loadGivenUp = true
		return true
	case waited && p.storeUp.Load() > since:
		// The store takes writes, so the load fails for another reason (a record it
		// cannot read): waiting would hold the analysis back for good.
		p.logger.Error("loading a session's earlier turns from the continuation store keeps failing while the store takes writes; its analysis covers the turns held in memory",
			zap.String("session_id", id), zap.Int("turns_held", st.Len()), zap.Error(err))
		delete(sh.waitingSince, id)
		st.loadGivenUp = true
		return true
	}
	if !waited {
		p.logger.Warn("loading a session's earlier turns from the continuation store failed; its analysis waits for the store",
			zap.String("session_id", id), zap.Error(err))
		if sh.waitingSince == nil {
			sh.waitingSince = map[string]int64{}
		}
		sh.waitingSince[id] = p.now().UnixNano()
	}
	sh.waitingEnds = append(sh.waitingEnds, *ev)
	p.waitingEnds.Store(id, struct{}{})
	sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
	return false
}

// dropWaitingEnd forgets the waiting end of session id, if any (takeBack; handle takes
// the waiting ends out of the shard's list to retry them).
func (sh *shard) dropWaitingEnd(p *agentSessionProcessor, id string) {
	sh.waitingEnds = slices.DeleteFunc(sh.waitingEnds, func(ev tracker.Event) bool { return ev.Session.ID == id })
	p.waitingEnds.Delete(id)
}

// reserveLocal allocates in the continuation store, in the order they were numbered, the
// index of each turn the shard numbered itself (sh.local), and moves the turn's records
// to it: in the session's open state, in sh.unsaved and in w's saves (w may be nil).
// The indexes are allocated in one transaction: on error none is, and the records of a
// turn not reserved must not be saved.
func (sh *shard) reserveLocal(ctx context.Context, p *agentSessionProcessor, w *shardWrites) error {
	if len(sh.local) == 0 {
		return nil
	}
	idx, err := p.cont.ReserveTurns(ctx, sh.local)
	if err != nil {
		return err // counted and logged by the caller
	}
	for i, lt := range sh.local {
		n := idx[i]
		moved := false
		move := func(ts []store.TurnState) {
			for i := range ts {
				if ts[i].Key() == lt {
					ts[i].Record.SetTurnIndex(n)
					moved = true
				}
			}
		}
		move(sh.unsaved)
		if w != nil {
			move(w.saves)
		}
		// The session's state, also when it ends in this write (TestEndGivesDroppedRecordItsIndex).
		if st := sh.stateIn(lt.SessionID, w); st != nil {
			if r := st.SetTurnIndex(lt.Turn(), n); r != nil {
				if !moved {
					// Held only by its session (the bound on records waiting dropped it):
					// saved again with the others, now that it has its index.
					ts := store.TurnState{SessionID: lt.SessionID, Record: *r}
					if w != nil {
						w.saves, w.spans = append(w.saves, ts), append(w.spans, -1)
					} else {
						sh.unsaved, sh.waiting = append(sh.unsaved, ts), append(sh.waiting, false)
					}
				}
			}
		}
	}
	sh.local = nil
	return nil
}

// turnWaits reports whether a record of turn k in recs waits for its final verdict to be
// emitted (waiting, per record of recs).
func turnWaits(recs []store.TurnState, waiting []bool, k store.TurnKey) bool {
	for j := range recs {
		if waiting[j] && recs[j].Key() == k {
			return true
		}
	}
	return false
}

// emitWaiting adds to b the final verdicts of recs that wait to be emitted (waiting,
// per record), marked by saved (SaveTurns' result for recs, markRevised: the store's
// answer stands); with saved nil (no save told), unmarked: counted here.
func emitWaiting(b *evalBatch, recs []store.TurnState, waiting []bool, saved []store.SavedTurn) {
	for i := range recs {
		if waiting[i] {
			tr := recs[i].Record.Result
			if saved != nil {
				markRevised(&tr, saved[i], false)
			} else {
				tr.Revised, tr.ReplacedDetectionType = false, ""
			}
			b.addTurnSpan(recs[i].SessionID, &tr)
		}
	}
}

// markRevised marks final verdict tr, which waited for its save, by what the save (sv)
// tells. When it was not the turn's first final save, the verdict stored before was
// counted, here or by another collector: tr is Revised, and replaces that verdict (its
// ReplacedDetectionType), or, when the store kept a verdict further on, its own (tr
// changes nothing counted). The store, not this collector's memory, tells what is
// replaced, so that two collectors judging a turn again each replace what the other
// stored. When it was the first, tr is the turn's first counted verdict, unmarked;
// except with evaluated set (tr was just given, not retried after a failed save) when
// the evaluator gave it as Revised: the turn's earlier final verdict was emitted, and a
// store that has no final row of it (the record was dropped over the bound while the
// database was down, with no row to claim: TestDroppedFinalRecordCountedOnce) must not
// make the turn counted twice. A verdict retried after a failed save waited because no
// final verdict of its turn was emitted (sh.write emits a revision of an emitted one at
// once; TestCorrectionWhileStoreDownCountedOnce): the store's answer stands.
func markRevised(tr *evaluation.TurnResult, sv store.SavedTurn, evaluated bool) {
	switch {
	case sv.FirstFinal && evaluated && tr.Revised:
	case sv.FirstFinal:
		tr.Revised, tr.ReplacedDetectionType = false, ""
	case sv.Replaced != "":
		tr.Revised, tr.ReplacedDetectionType = true, sv.Replaced
	default:
		tr.Revised, tr.ReplacedDetectionType = true, tr.DetectionType
	}
}

// claim marks in the continuation store the turns of sh.claims final (ClaimFinal), and
// forgets them once it has.
func (sh *shard) claim(ctx context.Context, p *agentSessionProcessor) error {
	if len(sh.claims) == 0 {
		return nil
	}
	if err := p.cont.ClaimFinal(ctx, sh.claims); err != nil {
		return err // counted and logged by the caller
	}
	sh.claims = nil
	return nil
}

// keepRevision keeps revision as session id's last one until the continuation store
// records it (sh.revisions: at most maxLocal(), others than id dropped past it, a
// warning logged), and schedules its retry.
func (sh *shard) keepRevision(p *agentSessionProcessor, id string, revision int) {
	if sh.revisions == nil {
		sh.revisions = map[string]int{}
	}
	sh.revisions[id] = max(sh.revisions[id], revision)
	if n := len(sh.revisions) - sh.maxLocal(); n > 0 {
		p.logger.Warn("analysis revisions not saved to the continuation store are dropped; a later continuation of their sessions may reuse them",
			zap.Int("dropped", n))
		for other := range sh.revisions {
			if n == 0 {
				break
			}
			if other != id {
				delete(sh.revisions, other)
				n--
			}
		}
	}
	if sh.retryAt.Load() == 0 {
		sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
	}
}

// saveKeptRevisions records in the continuation store the revisions kept with records
// that could not be saved, or whose own save failed (sh.revisions), once the records
// are saved: the store then allocates the session's next revision above them. A
// revision whose save fails stays kept, and is tried again (retryAt).
func (sh *shard) saveKeptRevisions(ctx context.Context, p *agentSessionProcessor) {
	for id, rev := range sh.revisions {
		if err := p.cont.SaveRevision(ctx, id, rev); err != nil {
			p.continuationError(ctx, "saving analysis revisions to the continuation store failed; they are saved again later", err,
				zap.Int("revisions", len(sh.revisions)))
			break // the store is down: the others would fail alike
		}
		delete(sh.revisions, id)
	}
	if len(sh.revisions) > 0 && sh.retryAt.Load() == 0 {
		sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
	}
}

// clearUnsaved forgets the records waiting to be saved again (saved, or emitted for
// good) and their retry.
func (sh *shard) clearUnsaved() {
	sh.unsaved, sh.waiting, sh.restored = nil, nil, 0
	sh.retryAt.Store(0)
}

// keepUnsaved makes saves, in order, the records to save again: one per turn
// (store.TurnKey), the one whose verdict is furthest on (the later of equals, as the store would
// keep it), waiting to emit its verdict when any of the merged ones was (waiting, per
// save), at most sh.maxUnsaved (the oldest are dropped, logged, their waiting verdicts
// emitted in b unmarked: a session loaded later may then give a dropped turn's final
// verdict again).
func (sh *shard) keepUnsaved(p *agentSessionProcessor, b *evalBatch, w *shardWrites, saves []store.TurnState, waiting []bool) {
	sh.unsaved, sh.waiting = mergeUnsaved(saves, waiting)
	// The records restored at start stay at the head (mergeUnsaved keeps the first-seen
	// order), out of the bound: the oldest after them are dropped.
	k := min(sh.restored, len(sh.unsaved))
	if n := len(sh.unsaved) - k - sh.maxUnsaved; n > 0 {
		p.logger.Warn("turn records not saved to the continuation store are dropped; a later continuation of their sessions misses them",
			zap.Int("dropped", n))
		emitWaiting(b, sh.unsaved[k:k+n], sh.waiting[k:k+n], nil)
		for i := k; i < k+n; i++ {
			if st := sh.sessions[sh.unsaved[i].SessionID]; st != nil {
				st.unstored = true // its records are not all in the store: none is released
			}
			// A final verdict is counted now (waiting) or was before (emitted at a
			// shutdown, then restored by continuation.storage; or a revision emitted
			// while the save failed): claimed in the store once it is back, with the
			// detection type counted, which the stored row may not hold.
			if r := &sh.unsaved[i]; sh.waiting[i] || evaluation.VerdictStage(&r.Record) > 0 {
				sh.claims = append(sh.claims, store.Claim{TurnKey: r.Key(), DetectionType: r.Record.Result.DetectionType})
			}
		}
		if m := len(sh.claims) - sh.maxLocal(); m > 0 {
			p.logger.Warn("claims of final verdicts counted while the continuation store was unreachable are dropped; a later continuation of their sessions may count them again",
				zap.Int("dropped", m))
			sh.claims = slices.Delete(sh.claims, 0, m)
		}
		sh.unsaved, sh.waiting = slices.Delete(sh.unsaved, k, k+n), slices.Delete(sh.waiting, k, k+n)
	}
	// A turn numbered here keeps its place in sh.local when its record is dropped: the
	// analysis that holds it reaches the result store (after the stored turns, in the
	// order numbered here), so its index is reserved all the same, or the next turn
	// numbered here would take it (docs/decisions/sessions.md §4.7). An entry is two ids,
	// a record kilobytes: at most maxLocal() of them, the oldest dropped; but not one
	// whose record the shard still holds, in an open session, the session whose end
	// writes w, or sh.unsaved (the record costs far more than the entry): without its
	// entry, reserveLocal does not move the record, which is saved, and analysed, at the
	// index numbered here, which the store gives another turn; the result store then
	// refuses or misplaces every analysis holding that index twice
	// (TestNewSessionDownDroppedRecordsIndexedOnce: an open session's record;
	// TestRestoredRecordsKeepTheirNumberedIndex: records continuation.storage gave back,
	// whose session is not open here; TestEndingSessionKeepsItsNumberedIndex: the last
	// record of a session that ends in this write, saved again after its analysis).
	if n := len(sh.local) - sh.maxLocal(); n > 0 {
		waits := make(map[store.TurnKey]struct{}, len(sh.unsaved))
		for i := range sh.unsaved {
			waits[sh.unsaved[i].Key()] = struct{}{}
		}
		dropped := 0
		sh.local = slices.DeleteFunc(sh.local, func(k store.TurnKey) bool {
			if _, ok := waits[k]; ok || dropped == n || sh.holdsTurn(k, w) {
				return false
			}
			dropped++
			return true
		})
		if dropped > 0 {
			p.logger.Warn("indexes of turns numbered while the continuation store was unreachable are dropped; a later continuation of their sessions may give their indexes to other turns",
				zap.Int("dropped", dropped))
		}
	}
	sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
}

// holdsAgain returns the holds of the open sessions whose records wait to be saved
// (sh.unsaved) and whose hold write failed, and marks them held: the write saves those
// records again, and a record stored without its session's hold leaves the session to
// no sweep after a crash (TestRetriedRecordsHoldTheirSession).
func (sh *shard) holdsAgain(p *agentSessionProcessor) []store.OpenSession {
	if p.recovery == nil {
		return nil
	}
	var out []store.OpenSession
	for i := range sh.unsaved {
		st := sh.sessions[sh.unsaved[i].SessionID]
		if st == nil || st.held || st.hold.ID == "" {
			continue
		}
		st.held = true
		out = append(out, st.hold)
	}
	return out
}

// holdsTurn reports whether an open session of the shard, or the session whose end
// writes w, holds the record of turn k.
func (sh *shard) holdsTurn(k store.TurnKey, w *shardWrites) bool {
	st := sh.stateIn(k.SessionID, w)
	return st != nil && st.Find(k.Turn()) != nil
}

// stateIn returns the state of session id: open in the shard, or ending in write w
// (w.ending, out of the shard's sessions already; w may be nil); nil when neither.
func (sh *shard) stateIn(id string, w *shardWrites) *sessionState {
	if st := sh.sessions[id]; st != nil {
		return st
	}
	if w != nil && w.endingID == id {
		return w.ending
	}
	return nil
}

// saveUnsaved saves the records of every shard whose save failed (at shutdown, after the
// shards stopped) and emits their waiting verdicts; what still fails is not lost to the
// output (the verdicts are then emitted unmarked) and is returned, for continuation.storage
// (keep), with the turns numbered here left in the shards (sh.local).
func (p *agentSessionProcessor) saveUnsaved(ctx context.Context) (left []store.TurnState) {
	b := p.emitter.newBatch(p.now())
	for _, sh := range p.shards {
		if !sh.pending() {
			continue
		}
		var saved []store.SavedTurn
		err := sh.reserveLocal(ctx, p, nil)
		if err == nil {
			err = sh.claim(ctx, p)
		}
		if err == nil {
			saved, err = p.cont.SaveTurns(ctx, sh.unsaved)
		}
		if err == nil {
			sh.saveKeptRevisions(ctx, p)
		}
		if err != nil {
			p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
			p.logger.Warn("saving turn records to the continuation store failed at shutdown; without continuation.storage a later continuation of their sessions misses them",
				zap.Int("records", len(sh.unsaved)), zap.Error(err))
			left = append(left, sh.unsaved...)
			// Restored held and still unsaved: kept held again (keep).
			for i := range min(sh.restored, len(sh.unsaved)) {
				sh.heldLeft = append(sh.heldLeft, sh.unsaved[i].SessionID)
			}
		}
		emitWaiting(b, sh.unsaved, sh.waiting, saved) // saved is nil after an error
		sh.clearUnsaved()
	}
	p.emit(ctx, b)
	return left
}

// keepHeld adds the records of session id's state st to the records waiting to be saved
// (sh.unsaved, one per turn, the furthest on), without the bound: at shutdown, for a
// session whose end waits and of which the bound dropped records (st.unstored).
func (sh *shard) keepHeld(id string, st *sessionState) {
	saves, waiting := slices.Clone(sh.unsaved), slices.Clone(sh.waiting)
	for _, r := range st.Records() {
		saves, waiting = append(saves, store.TurnState{SessionID: id, Record: r}), append(waiting, false)
	}
	sh.unsaved, sh.waiting = mergeUnsaved(saves, waiting)
}

// mergeUnsaved returns saves with one record per turn (store.TurnKey), in first-seen
// order: the furthest on (VerdictStage; the later of equals), waiting when any of the
// turn's was (its final verdict waits for the save, shard.waiting).
func mergeUnsaved(saves []store.TurnState, waiting []bool) ([]store.TurnState, []bool) {
	at := make(map[store.TurnKey]int, len(saves))
	out, outWaiting := make([]store.TurnState, 0, len(saves)), make([]bool, 0, len(saves))
	for j, t := range saves {
		k := t.Key()
		i, ok := at[k]
		switch {
		case !ok:
			at[k] = len(out)
			out, outWaiting = append(out, t), append(outWaiting, waiting[j])
			continue
		case evaluation.VerdictStage(&t.Record) >= evaluation.VerdictStage(&out[i].Record):
			out[i] = t
		}
		outWaiting[i] = outWaiting[i] || waiting[j]
	}
	return out, outWaiting
}

// hasUnsaved reports whether records of session id wait to be saved again.
func (sh *shard) hasUnsaved(id string) bool {
	return slices.ContainsFunc(sh.unsaved, func(t store.TurnState) bool { return t.SessionID == id })
}

// numberedHere reports whether a turn of session id waits in sh.local for its store index.
func (sh *shard) numberedHere(id string) bool {
	return slices.ContainsFunc(sh.local, func(k store.TurnKey) bool { return k.SessionID == id })
}

// unsavedOf returns the records of session id waiting to be saved again.
func (sh *shard) unsavedOf(id string) []evaluation.TurnRecord {
	var out []evaluation.TurnRecord
	for i := range sh.unsaved {
		if sh.unsaved[i].SessionID == id {
			out = append(out, sh.unsaved[i].Record)
		}
	}
	return out
}

// savesFor reports whether w holds turn records of session id not written yet.
func (w *shardWrites) savesFor(id string) bool {
	return slices.ContainsFunc(w.saves, func(t store.TurnState) bool { return t.SessionID == id })
}

// finishRecords gives the final verdicts of a session that went idle, over its records
// in conversation order (st holds every stored record, §4.5): a record whose next turn
// is known gets its verdict with that turn's user message (evaluation.NeedsFollowUp),
// when it had none (provisional), had one without follow-up (FinishLast: the next turn
// closed on another collector before this record was stored, or was stored after this
// record was finished; the verdict is then Revised), or had one with the user message
// of a turn that came after the next one (the next turn closed late). A provisional
// record without a known next turn (the last, or one before a turn whose index was
// reserved but is not stored) is finished without follow-up. Each verdict given is
// emitted and saved.
func (sh *shard) finishRecords(p *agentSessionProcessor, st *sessionState, save func(*evaluation.TurnRecord, bool)) {
	order, records := st.Order(), st.Records()
	at := func(k int) *evaluation.TurnRecord {
		if order != nil {
			k = order[k]
		}
		return &records[k]
	}
	for k := range records {
		r := at(k)
		var next *evaluation.TurnRecord
		if k+1 < len(records) {
			if n := at(k + 1); st.HoldsBetween(r.Result.TurnIndex, n.Result.TurnIndex) {
				next = n
			}
		}
		switch {
		case next != nil && evaluation.NeedsFollowUp(r, next):
			*r = p.evaluator.FollowUpBy(*r, next)
		case !r.Result.Final:
			*r = p.evaluator.FinishLast(*r)
		default:
			continue
		}
		save(r, true)
	}
}

// reload merges the session's records in the continuation store into st: the turns
// another collector closed while this one holds the session open too, not those st
// released (shard.release): they are taken back only where they are read
// (takeBackReleased).
func (sh *shard) reload(ctx context.Context, p *agentSessionProcessor, st *sessionState, id string) error {
	return load(ctx, p, st, id, st.heldOrReleased)
}

// reserveBatch allocates, in one transaction, the indexes of the turns that events close
// in kept sessions (after those of the turns numbered here while the store was
// unreachable: reserveLocal), for turnIndex: one write a batch, not one a turn, where
// the continuation store's writers wait for each other (SQLite: one at a time, the
// agenteval exporter's saves among them). When it fails, nothing is reserved, and
// turnIndex tries each turn again on its own (and numbers it itself if that fails too).
func (sh *shard) reserveBatch(ctx context.Context, p *agentSessionProcessor, events []tracker.Event) {
	var keys []store.TurnKey
	for i := range events {
		ev := &events[i]
		if ev.Kind == tracker.EventTurnClosed && ev.Session.KeySource != session.KeySourceTraceID {
			keys = append(keys, store.KeyOfTurn(ev.Session.ID, idOfTurn(&ev.Session.Turns[ev.TurnIndex])))
		}
	}
	if len(keys) < 2 || sh.reserveLocal(ctx, p, &sh.writes) != nil {
		return // one turn: turnIndex reserves it as cheaply
	}
	idx, err := p.cont.ReserveTurns(ctx, keys)
	if err != nil {
		return
	}
	if sh.reserved == nil {
		sh.reserved = make(map[store.TurnKey]int, len(keys))
	}
	for i, k := range keys {
		sh.reserved[k] = idx[i]
	}
}

// turnIndex returns the index of the session's turn turn, allocated in the
// continuation store (stable for a turn, distinct across collectors sharing the store),
// and makes sure st holds the previous turn's record when the store does (it may have
// been closed by another collector). A session that is not kept, or a store that fails,
// gives the next index of st; the store allocates the turn's index before its records are
// saved (sh.local, reserveLocal; w is the batch's writes, whose records it moves).
func (sh *shard) turnIndex(ctx context.Context, p *agentSessionProcessor, w *shardWrites, st *sessionState, id string, turn evaluation.TurnID) int {
	// Above every turn held, not their count: once turns numbered here have the store's
	// indexes (reserveLocal), the records need not start at 0.
	idx := st.NextIndex()
	if !st.continuable {
		return idx
	}
	key := store.KeyOfTurn(id, turn)
	n, ok := sh.reserved[key]
	var err error
	if !ok {
		// The turns numbered here while the store was unreachable get theirs first.
		if err = sh.reserveLocal(ctx, p, w); err == nil {
			n, err = store.ReserveTurn(ctx, p.cont, id, turn.TraceID, turn.RootSpanID)
		}
	}
	if err != nil {
		p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
		p.logger.Warn("allocating a turn index in the continuation store failed; the index is this collector's until the store allocates one",
			zap.String("session_id", id), zap.Error(err))
		sh.local = append(sh.local, key)
		return idx
	}
	if n > 0 && st.At(n-1) == nil {
		if err := sh.reload(ctx, p, st, id); err != nil {
			p.logger.Warn("reloading a session from the continuation store failed; the turn follows the turns of this collector",
				zap.String("session_id", id), zap.Error(err))
		}
	}
	return n
}

// nextRevision allocates the session's next analysis revision in the continuation store,
// which records it (recorded), or gives st's next one for a session that is not kept, or
// when the store fails.
func (sh *shard) nextRevision(ctx context.Context, p *agentSessionProcessor, st *sessionState, id string) (revision int, recorded bool) {
	if st.continuable {
		r, err := p.cont.NextRevision(ctx, id)
		if err == nil {
			return r, true
		}
		p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
		p.logger.Warn("allocating an analysis revision in the continuation store failed; the revision is this collector's",
			zap.String("session_id", id), zap.Error(err))
	}
	return st.revision + 1, false
}
