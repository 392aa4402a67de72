// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/reuse"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/tracker"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

// shardQueue is how many event batches a shard may have waiting while the worker goes
// on closing turns; when one shard is that far behind, the worker waits for it (the
// ingest path never does).
const shardQueue = 64

// A shard emits what it has evaluated once emitEvery has passed and at least
// minChunkEvents events are done: a batch of events that takes longer (a burst of
// closing turns and ending sessions, or a shard short of CPU) goes out in chunks, so the
// first turns of the burst do not wait for the whole batch's evaluation. The minimum
// bounds the extra emissions and continuation-store writes to one per minChunkEvents
// events when evaluation is slow (an overloaded collector would otherwise pay one
// transaction per turn). At the steady rate a shard's batch takes a few milliseconds and
// goes out whole.
const (
	emitEvery      = 10 * time.Millisecond
	minChunkEvents = 8
)

// shard owns the evaluation state of the sessions that hash to it; only one goroutine
// uses it at a time: its own while the shards run, else the one handling a step.
type shard struct {
	sessions map[string]*sessionState
	// queue holds the event batches waiting for the shard's goroutine (nil when the
	// shards do not run).
	queue chan shardWork
	// unsaved are turn records whose save to the continuation store failed (at most one
	// per turn, the one whose verdict is furthest on; at most maxUnsaved):
	// they are saved again, first, with the shard's next save, and a session loaded
	// meanwhile takes them over the store's (docs/decisions/sessions.md §4.5).
	unsaved []store.TurnState
	// waiting is, per record of unsaved, whether its final verdict waits to be emitted:
	// a first final verdict whose save failed is emitted once a save tells whether it
	// is the turn's first (another collector may give the turn its first final verdict
	// meanwhile), at shutdown, or when its record is dropped.
	waiting    []bool
	maxUnsaved int
	// restored is how many records at the head of unsaved continuation.storage gave
	// back (restoreKept) as held (keptRecord.Held) and no save took yet: the last
	// shutdown kept them past the bound, the only copy of turns of sessions whose end
	// waited (keepHeld), so the bound does not drop them
	// (TestRestoredRecordsKeptOverBound).
	restored int
	// heldLeft are the sessions of the restored held records that the shutdown's last
	// save (saveUnsaved) did not take: kept held again (keep).
	heldLeft []string
	// local are the turns numbered by this shard because the continuation store could
	// not allocate their index (ReserveTurns failed), in the order they were numbered.
	// Their index is allocated in the store before their records are saved
	// (reserveLocal): a continued session whose stored turns could not be loaded
	// numbers its turns from 0, and such a record saved as it is would put a second
	// trace on a stored turn's index. A turn whose record was dropped keeps its entry
	// (keepUnsaved, at most maxLocal()): its index is reserved all the same. The bound
	// never drops the entry of a turn whose record the shard holds (an open session's,
	// or one of unsaved): that record would keep the index numbered here, which the
	// store gives another turn (TestRestoredRecordsKeepTheirNumberedIndex).
	local []store.TurnKey
	// revisions are the last analysis revisions emitted for sessions of unsaved and local
	// whose records could not be saved: the continuation store may not know them, and a
	// session continued before it is back gives its next analysis the revision after
	// this one (state), or the result store would take that analysis for an older one
	// and skip it (docs/decisions/sessions.md §4.8). They are saved to the store with
	// the records (saveKeptRevisions).
	revisions map[string]int
	// claims are the turns whose final record the bound dropped while it waited to be
	// saved (keepUnsaved), their first final verdict emitted (counted) then or at the
	// shutdown before continuation.storage gave the record back: the continuation store marks
	// their provisional rows final (ClaimFinal) before the shard's next save, so that a
	// continued session does not give them a first final verdict again
	// (docs/decisions/sessions.md §4.9), and keeps the detection type counted, so that a
	// verdict given again later names it as the one it replaces. At most maxLocal(), the
	// oldest dropped.
	claims []store.Claim
	// keptHolds are holds continuation.storage gave back: sessions whose end waited at
	// the last shutdown, held by the stopped collector, whose hold could not be written
	// then. They are written with the shard's next write (shard.write), so that the
	// sweep recovers the sessions (docs/decisions/sessions.md §4.2.2).
	keptHolds []store.OpenSession
	// analysedTraces are the trace ids of sessions keyed by their trace (not kept in the
	// continuation store) whose analysis the shard emitted, the most recent maxLocal()
	// of them: a span of such a trace that comes after the tracker forgot it is late,
	// as for a kept session's final turn (docs/decisions/sessions.md §2.4), unless the
	// trace may go on (its root never arrived) and the span's turn starts after the
	// analysed turns ended: that is the trace's next request (§2.4.1).
	analysedTraces *simplelru.LRU[string, analysedTrace]
	// endedTraces are, by trace id (their session's id), the states of the sessions of
	// analysedTraces that may go on, with what analysedTraces holds of them (which may
	// forget them first), so that the trace's next request continues them (turn indexes,
	// the last turn's verdict with follow-up, the analysis over every turn) as the
	// continuation store does for a session key. They hold at most maxUnsaved records
	// (endedRecords), the least recently ended session dropped first: a request of a
	// dropped one is a new part of the session, which the result store places after the
	// stored turns (§4.6).
	endedTraces  *simplelru.LRU[string, endedTrace]
	endedRecords int
	// waitingEnds are the ends of sessions that released turn records (shard.release)
	// and whose records the continuation store could not give back when they ended: an
	// analysis without them would leave those turns out of the result store, so the end
	// is handled again, first, with the shard's next batch (takeBack), at most
	// maxUnsaved of them. The session's state stays in sessions meanwhile; a turn of the
	// session that closes first drops its waiting end (the session goes on).
	waitingEnds []tracker.Event
	// waitingSince is, by session id, when the end of waitingEnds first waited (Unix ns).
	waitingSince map[string]int64
	// reserved are the turn indexes allocated for the batch being handled (reserveBatch),
	// emptied after it.
	reserved map[store.TurnKey]int
	// writes are the saves of the batch being handled (handle), kept empty between batches.
	writes shardWrites
	// retryAt is when dispatch hands the shard an empty batch of events so that it saves
	// unsaved again (p.now() in Unix nanoseconds; 0 when no record waits). Written by
	// the shard's goroutine, read by dispatch.
	retryAt atomic.Int64
}

// pending reports whether the shard holds something the continuation store has not
// taken yet: records to save again, turns numbered here, revisions, claims or holds
// kept at the last shutdown.
func (sh *shard) pending() bool {
	return len(sh.unsaved)+len(sh.local)+len(sh.revisions)+len(sh.claims)+len(sh.keptHolds) > 0
}

// maxLocal bounds shard.local: four entries a record waiting to be saved (maxUnsaved),
// as the memory store keeps four sessions' indexes a record (ContinuationConfig.MaxRecords).
// The entry of a record the shard holds is never dropped (keepUnsaved): past the bound,
// shard.local holds those alone, as many as the records.
func (sh *shard) maxLocal() int { return 4 * sh.maxUnsaved }

// analysedTrace is what a shard keeps of an analysed session keyed by its trace
// (shard.analysedTraces).
type analysedTrace struct {
	// end is when the latest of its turns ended (zero: unknown).
	end time.Time
	// goesOn: the session ended while its trace may go on (its root never arrived:
	// session_timeout, a limit), not with the trace (single_trace) or an end signal.
	goesOn bool
}

// endedTrace is a session of shard.endedTraces: its state and its analysed trace.
type endedTrace struct {
	st *sessionState
	at analysedTrace
}

// late reports whether closed turn t of the analysed trace is late: the trace cannot go
// on, or t started before its analysed turns ended (a fragment of one of them).
func (at analysedTrace) late(t *session.Turn) bool {
	return !at.goesOn || at.end.IsZero() || !t.StartedAt.After(at.end)
}

// shardWork is a batch of one shard's events; done is signalled when they are handled.
type shardWork struct {
	events []tracker.Event
	done   *sync.WaitGroup
}

// shardWrites is what a shard's batch of events writes to the continuation store: the
// sessions it starts to hold (before their turn records), the turn records, and the
// revisions of the analyses emitted (after the emission: a crash before it leaves the
// session held, so that it is recovered).
type shardWrites struct {
	holds []store.OpenSession
	saves []store.TurnState
	// spans are, per save, the index in the batch of the turn span that emits its final
	// verdict, or -1: that span is encoded after the save, marked by what the save
	// reports (markRevised: Revised when another save gave the turn's first final
	// verdict, and which verdict it replaces; evalBatch.turnSpan).
	spans []int
	ended []endedSession
	// ending is the state of session endingID, whose end writes the chunk (evaluate),
	// out of the shard's sessions already: reserveLocal gives its records numbered here
	// their store indexes too.
	ending   *sessionState
	endingID string
}

// endedHere reports whether session id ended in w's chunk (ended).
func (w *shardWrites) endedHere(id string) bool {
	return slices.ContainsFunc(w.ended, func(e endedSession) bool { return e.id == id })
}

// endedSession is a session whose analysis a chunk emitted (saveRevisions).
type endedSession struct {
	id       string
	revision int
	// recorded: the continuation store allocated revision (NextRevision), and so
	// records it already as the session's last.
	recorded bool
}

// handle evaluates a shard's events in order and emits their spans in chunks of about
// emitEvery of evaluation (emitChunk, at least minChunkEvents events), saving the turn records and revisions of each
// chunk to the continuation store.
func (sh *shard) handle(ctx context.Context, p *agentSessionProcessor, events []tracker.Event) {
	// A turn event saves two records (the turn and its predecessor's final verdict): the
	// records are large, so the slices are sized once and reused by every chunk, and by
	// the shard's next batch.
	w := &sh.writes
	if n := 2 * len(events); cap(w.saves) < n {
		w.saves, w.spans = make([]store.TurnState, 0, n), make([]int, 0, n)
	}
	defer w.release()
	if len(sh.waitingEnds) > 0 {
		// Before the batch's events: a turn of the session among them continues it.
		events = append(sh.waitingEnds, events...)
		sh.waitingEnds = nil
	}
	if len(events) == 0 { // no events: records wait to be saved again (dispatch)
		sh.emitChunk(ctx, p, nil, w)
	}
	if p.cfg.Continuation.Driver != "" {
		sh.reserveBatch(ctx, p, events)
		defer clear(sh.reserved)
	}
	for len(events) > 0 {
		events = sh.emitChunk(ctx, p, events, w)
	}
	if len(sh.waitingEnds) > 0 && sh.retryAt.Load() == 0 { // a save that went through cleared it
		sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
	}
}

// maxKeptWrites bounds the saves a shard keeps room for between batches: a burst's larger
// arrays are left to the collector.
const maxKeptWrites = 1024

// release empties w once its batch is handled. The records it held are cleared: the
// arrays are kept for the shard's next batch and must not hold a session's results alive.
func (w *shardWrites) release() {
	w.saves, w.spans = reuse.Slice(w.saves, maxKeptWrites), reuse.Slice(w.spans, maxKeptWrites)
	w.holds, w.ended = reuse.Slice(w.holds, maxKeptWrites), reuse.Slice(w.ended, maxKeptWrites)
}

// emitChunk evaluates events in order until emitEvery has passed since it began and
// minChunkEvents are done, writes their records to the continuation store, emits their spans
// as one batch, then records the revisions of the analyses emitted. It returns the
// events not handled yet. A chunk ends before an event of a session that ended in it (a
// turn that continues it, come in the batch that analysed a waiting end): the chunk's
// release of the ended session (saveRevisions) would delete the continuation's hold,
// and the end's revision, when the store did not allocate it, is known to the shard only
// once the chunk kept it (keepRevision), so the continuation would take it again
// (TestContinuedInTheChunkOfItsEnd, TestContinuedInTheChunkOfItsEndRevision,
// TestEndedTwiceInOneChunkNotHeldAgain).
func (sh *shard) emitChunk(ctx context.Context, p *agentSessionProcessor, events []tracker.Event, w *shardWrites) []tracker.Event {
	start := p.now()
	b := p.emitter.newBatch(start)
	defer func() { // after the emission below
		p.saveRevisions(ctx, sh, w.ended)
		w.ended = w.ended[:0]
	}()
	i := 0
	for i < len(events) {
		ev := &events[i]
		if w.endedHere(ev.Session.ID) {
			break
		}
		i++
		if err := sh.evaluate(ctx, p, ev, b, w); err != nil {
			p.telemetry.ProcessorAgentsessionEvaluationErrors.Add(ctx, 1)
			p.logger.Error("evaluation failed; no result emitted for this entity",
				zap.String("session_id", ev.Session.ID), zap.Error(err))
		}
		if i >= minChunkEvents && p.now().Sub(start) >= emitEvery {
			break
		}
	}
	rest := events[i:]
	sh.write(ctx, p, w, b)
	p.emit(ctx, b)
	return rest
}

// state returns the session's state, loading a continued session's from the
// continuation store. A session keyed by its trace id (one turn, or the requests of a
// conversation its trace holds, docs/decisions/sessions.md §2.4.1) never continues once
// it ended: it is neither loaded nor saved.
func (sh *shard) state(ctx context.Context, p *agentSessionProcessor, s *session.AgentSession) *sessionState {
	if st := sh.sessions[s.ID]; st != nil {
		return st
	}
	st := &sessionState{continuable: s.KeySource != session.KeySourceTraceID}
	sh.sessions[s.ID] = st
	if !st.continuable {
		return st
	}
	// Records whose save failed are further on than the store's rows of them, and so is
	// the revision of their analysis.
	defer func() {
		if u := sh.unsavedOf(s.ID); len(u) > 0 {
			st.Merge(u)
		}
		st.revision = max(st.revision, sh.revisions[s.ID])
	}()
	c, err := p.cont.LoadContinuation(ctx, s.ID, nil)
	if err != nil {
		p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
		p.logger.Warn("loading a session from the continuation store failed; it is evaluated as a new session",
			zap.String("session_id", s.ID), zap.Error(err))
		return st
	}
	st.Reset(c.Turns)
	st.revision = c.Revision
	if len(c.Turns) > 0 {
		p.telemetry.ProcessorAgentsessionSessionsContinued.Add(ctx, 1)
	}
	return st
}

// evaluate handles one event, recovering from panics (the event is then lost to
// evaluation, never the trace pipeline).
func (sh *shard) evaluate(ctx context.Context, p *agentSessionProcessor, ev *tracker.Event, b *evalBatch, w *shardWrites) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic during evaluation: %v", r)
		}
	}()
	id := ev.Session.ID
	// The judge jobs the pool refused for this event are run into b after the event's
	// spans and their embeddings spans (deferred before addCallSpans, so run after it):
	// those stay children of the event's own last evaluation span, not of a judge span.
	defer b.runRefused(p.logger)
	// The embeddings requests of this event become children of its last evaluation span.
	mark := b.spans.Len()
	defer p.emb.addCallSpans(b, id, mark)
	st := sh.state(ctx, p, ev.Session)
	// hold queues the record that this collector holds the session open (recover.go), once
	// (again after a failed write, sh.write): before its first turn record is saved, and
	// for an end that waits, so that a shutdown leaves it to the next collector's sweep.
	hold := func() {
		if !st.held && p.recovery != nil {
			st.held = true
			st.hold = openSession(p.instance, ev.Session)
			w.holds = append(w.holds, st.hold)
		}
	}
	// save queues rec's record; with verdict, rec's verdict is emitted as a turn span:
	// at once, or, for a final verdict of a kept session, once its save tells whether it
	// is the turn's first, or which stored verdict it replaced (sh.write, markRevised).
	save := func(rec *evaluation.TurnRecord, verdict bool) {
		if evaluation.VerdictStage(rec) == 2 && !p.keepCarries {
			// Its next turn was evaluated (FollowUp had its user message): the
			// carries are that turn's to hand on, here and in the store (§4.2).
			rec.DropCarries()
		}
		if !st.continuable || !rec.Result.Final {
			// Not a final verdict of a kept turn: nothing to arbitrate.
			if verdict {
				b.addTurnSpan(id, &rec.Result)
			}
			verdict = false
		}
		if !st.continuable {
			return
		}
		hold()
		span := -1
		if verdict {
			span = b.turnSpan(id, &rec.Result)
		}
		w.saves = append(w.saves, store.TurnState{SessionID: id, Record: *rec})
		w.spans = append(w.spans, span)
	}
	switch ev.Kind {
	case tracker.EventTurnClosed:
		if _, waits := sh.waitingSince[id]; waits {
			sh.dropWaitingEnd(p, id) // the session goes on: its next end is analysed
			delete(sh.waitingSince, id)
		}
		t := &ev.Session.Turns[ev.TurnIndex]
		if !st.continuable && st.Len() == 0 {
			if ended := sh.resumeTrace(id, t); ended != nil {
				st = ended // the trace's next request: its session goes on
				sh.sessions[id] = st
				p.telemetry.ProcessorAgentsessionSessionsContinued.Add(ctx, 1)
			}
		}
		if sh.analysed(st, t) {
			// Spans of a turn already analysed, come after the tracker forgot its trace
			// (turn_timeout after the session ended; or across a restart): late spans,
			// as while the session is open (docs/decisions/sessions.md §2.4).
			// Evaluating them would emit a partial result of the turn again, counted
			// again by the exporter, and replace the whole turn's record or analysis.
			p.telemetry.ProcessorAgentsessionLateSpans.Add(ctx, int64(t.SpanCount))
			st.late = true
			return nil
		}
		st.evaluated = true
		p.countAnomalies(ctx, id, t)
		idx := sh.turnIndex(ctx, p, w, st, id, idOfTurn(t))
		if st.released() && !st.Follows(t.StartedAt, idx) {
			// A turn that closed late may come before records released: its place in
			// the conversation is found among all of them (docs/decisions/sessions.md
			// §4.2.2).
			if err := sh.takeBackReleased(ctx, p, st, id); err != nil {
				p.logger.Warn("loading a session's earlier turns from the continuation store failed; a turn that closed late is placed among the turns held in memory",
					zap.String("session_id", id), zap.Error(err))
			}
		}
		// The turn before this one in the conversation (by start, not index: a turn
		// that closed late took a higher index than the turns after it, §4.5). Its
		// grounding facts and conversation are carried forward, also while a turn
		// between them is not closed here (still open here, or closed on another
		// collector less than a batch ago, not stored yet); then its follow-up is that
		// turn's, given when it closes or at idle.
		prev := st.Previous(t.StartedAt, idx)
		rec := p.evaluator.EvaluateClosedTurn(id, ev.Session.Agents, t, idx, st.Carrier(prev, idOfTurn(t)))
		rec.Summary.Outcome = ev.TurnOutcome
		if prev != nil && !ev.EarlierOpen && st.HoldsBetween(prev.Result.TurnIndex, idx) && evaluation.NeedsFollowUp(prev, &rec) {
			// The previous turn's follow-up is this turn's user message: its final verdict.
			*prev = p.evaluator.FollowUpBy(*prev, &rec)
			save(prev, true)
		}
		st.Put(rec)
		b.addTurn(id, &rec.Result)
		save(&rec, false)
	case tracker.EventSessionEnded:
		if st.released() && !sh.takeBack(ctx, p, st, ev) {
			hold() // it waits for the continuation store (waitingEnds)
			return nil
		}
		delete(sh.sessions, id) // a later turn continues from the continuation store
		if o, ok := p.claimedOpen.LoadAndDelete(id); ok {
			st.claimed = o.(store.OpenSession)
		}
		if st.late && !st.evaluated && ev.Session.Outcome == nil {
			if st.claimed.ID == "" {
				// Only late spans of turns already analysed came (a sender's retry): the
				// analysis emitted before stands; a new revision of the same turns would
				// count again, and run the judge and a dataset case on the late spans
				// alone. Nor is it released: the release would end the holds of dead
				// instances, whose turns that analysis may not carry (an end that waited
				// at their shutdown): a sweep analyses them (TestLateSpansKeepDeadHold).
				return nil
			}
			// This collector's sweep claimed a dead instance's hold of it meanwhile: no
			// other sweep takes it now, so it is analysed here as the sweep analyses a
			// session it claims, from its stored turns (TestClaimedWhileOpenThenLateSpansOnly).
			ev.Session = recoveredSession(st.claimed)
		}
		revision, recorded := 0, false
		if st.continuable {
			// Another collector may hold the session open too (docs/decisions/sessions.md
			// §4.5): this batch's records of the session are written, the revision is
			// allocated, then the analysis covers the turns as stored. A collector that
			// allocates a higher revision therefore reads every turn this one evaluated.
			if w.savesFor(id) || sh.hasUnsaved(id) || sh.numberedHere(id) {
				w.ending, w.endingID = st, id
				sh.write(ctx, p, w, b)
				w.ending, w.endingID = nil, ""
			}
			if st.Len() > 0 {
				revision, recorded = sh.nextRevision(ctx, p, st, id)
			}
			err := sh.reload(ctx, p, st, id)
			if err != nil && !recorded && st.Len() > 0 && st.claimed.ID == "" {
				// The store is down: the analysis covers the turns of this collector, a
				// part the result store places (§4.5, §4.6). Without a turn here (a
				// session recovered from a dead collector, whose load failed too) there is
				// nothing to analyse, and the release would leave the stored turns to no
				// collector: the end waits for the store (TestRecoveredSessionLoadFails,
				// TestRecoveredEndWaitsForLoad). So does the end of a session whose dead
				// instance's hold this collector's sweep claimed while it was open here
				// (claimed): that hold is this collector's now, which no live collector's
				// sweep takes, and the dead instance's turns are in no analysis but the
				// one over the stored turns (TestClaimedWhileOpenThenEndWhileDown).
				p.logger.Warn("reloading a session from the continuation store failed; its analysis covers the turns of this collector",
					zap.String("session_id", id), zap.Error(err))
				err = nil
			}
			// The store took the revision but the load failed: a revision of this
			// collector's turns alone would replace the stored session's later turns in
			// the result store, so the end waits, as for released records (takeBack;
			// TestContinuedWhileDownThenEndLoadBlip).
			if !sh.goesOn(ctx, p, st, ev, err) {
				// Back in the shard until the end goes on, and held again: a hold that
				// failed in the write above found the session out of the shard (sh.write).
				sh.sessions[id] = st
				st.held = false
				hold()
				return nil
			}
		}
		if st.Len() == 0 {
			if st.continuable {
				// Released (a hold taken over from a dead instance), nothing to analyse.
				w.ended = append(w.ended, endedSession{id: id})
			}
			return nil
		}
		sh.finishRecords(p, st, save)
		// The session's explicit outcome (agent_eval.task.completed) includes one that came
		// in a trace without GenAI spans, such as the evaluation channel's submit.
		meta := evaluation.SessionMeta{ID: id, Service: ev.Session.Service, Partial: ev.Session.Partial,
			EndReason: string(ev.Session.EndReason), Outcome: ev.Session.Outcome}
		for _, a := range ev.Session.Agents {
			meta.Agents = append(meta.Agents, a.ID)
		}
		// A dataset case matched by the session (references) is evaluated against the
		// turns the tracker kept: every turn when datasets are configured (RetainTurns).
		var cr reference.CaseResult
		m, matched := p.refs.matchSession(ev.Session)
		if matched {
			cr, meta.References = p.refs.evaluate(ctx, ev.Session, m)
		}
		a := p.evaluator.Aggregate(meta, st.Records())
		// Turns numbered here wait for the store's index (sh.local; the write above gives
		// them theirs when it can): the analysis carries guessed indexes, which the result
		// store does not let reorder turns the continuation store numbered, and which a
		// later analysis with the store's indexes may reorder (docs/decisions/sessions.md
		// §4.6).
		a.NumberedHere = sh.numberedHere(id)
		if revision == 0 {
			revision, recorded = sh.nextRevision(ctx, p, st, id) // the records were all in the store
		}
		a.AnalysisRevision = revision
		if err := b.addSession(&a); err != nil {
			return err
		}
		if matched {
			p.refs.putReferences(b.spans.At(b.spans.Len()-1), &cr)
			if p.refs.wantsJudge(ev.Session, m) {
				p.submitJudge(b, ev.Session, m, cr.CaseID, a.AnalysisRevision)
			}
		}
		if p.judge != nil {
			p.submitSessionJudge(b, ev.Session, &a)
		}
		if st.continuable {
			w.ended = append(w.ended, endedSession{id: id, revision: a.AnalysisRevision, recorded: recorded})
		} else {
			st.revision = a.AnalysisRevision
			sh.traceEnded(id, st, ev.Session.EndReason)
		}
	}
	return nil
}

// analysed reports whether closed turn t of session st has been analysed: its record
// (same trace and root span) has its final verdict; or t is a fragment of such a turn
// (its root span one the tracker chose among the late spans, or the turn's own root come
// late): it started before a turn of its trace that has its final verdict ended
// (a later request of a conversation run inside the trace starts after the turns
// before it, docs/decisions/sessions.md §2.4.1); or, for a session keyed by its trace
// (not kept in the continuation store) whose analysis the shard emitted
// (analysedTraces), t comes after the trace's session ended with the trace
// (single_trace, an end signal) or started before the analysed turns ended: evaluated,
// it would be a fragment of the trace analysed again from it alone (§4.2).
func (sh *shard) analysed(st *sessionState, t *session.Turn) bool {
	if !st.continuable {
		if at, ok := sh.analysedTrace(t.TraceID); ok && at.late(t) {
			return true
		}
	}
	if r := st.Find(idOfTurn(t)); r != nil {
		return r.Result.Final
	}
	return slices.ContainsFunc(st.Records(), func(r evaluation.TurnRecord) bool {
		// A record rebuilt from a stored result has no times (§4.7): it covers its
		// trace, as before turns had root spans.
		end := r.Summary.EndedAt
		return r.Result.Final && r.Result.TraceID == t.TraceID && (end.IsZero() || !t.StartedAt.After(end))
	})
}

// traceEnded records that the analysis of session id, keyed by its trace (id is the
// trace id, its records' trace), was emitted (analysedTraces), and keeps its state st
// when the trace may go on (reason is neither single_trace nor an end signal):
// endedTraces.
func (sh *shard) traceEnded(id string, st *sessionState, reason session.EndReason) {
	at := analysedTrace{goesOn: reason != session.EndReasonSingleTrace && reason != session.EndReasonEndSignal}
	recs := st.Records()
	for i := range recs {
		if end := recs[i].Summary.EndedAt; end.After(at.end) {
			at.end = end
		}
	}
	sh.analysedTraces.Add(id, at)
	sh.endedTraces.Remove(id)
	if !at.goesOn || at.end.IsZero() || st.Len() > sh.maxUnsaved {
		return
	}
	st.late, st.evaluated = false, false
	for sh.endedRecords+st.Len() > sh.maxUnsaved {
		sh.endedTraces.RemoveOldest()
	}
	sh.endedTraces.Add(id, endedTrace{st: st, at: at})
	sh.endedRecords += st.Len()
}

// analysedTrace returns what the shard keeps of the analysed session keyed by trace
// traceID: with its kept state (endedTraces), or in analysedTraces.
func (sh *shard) analysedTrace(traceID string) (analysedTrace, bool) {
	if e, ok := sh.endedTraces.Peek(traceID); ok {
		return e.at, true
	}
	return sh.analysedTraces.Get(traceID)
}

// resumeTrace returns the state of session id, keyed by its trace, kept when it ended
// while its trace could go on (endedTraces), when closed turn t is the trace's next
// request: it started after the analysed turns ended. It is then no longer kept.
// Otherwise it returns nil.
func (sh *shard) resumeTrace(id string, t *session.Turn) *sessionState {
	e, ok := sh.endedTraces.Peek(id)
	if !ok || e.at.late(t) {
		return nil
	}
	sh.endedTraces.Remove(id) // its records leave endedRecords
	sh.analysedTraces.Remove(id)
	return e.st
}
