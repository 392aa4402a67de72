// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"slices"
	"time"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// sessionState is what the processor keeps of an open session: its turn records in
// index order (the last one provisional until the next turn's user message or the end
// of the session) and its last analysis revision. A session continued after it went
// idle starts from the continuation store's state.
type sessionState struct {
	records []evaluation.TurnRecord
	// ids holds the turn ids of records once the session holds manyRecords of them
	// (put), so that a closed turn's put does not compare every record's; nil before,
	// and after merge added records, until the next put makes it again.
	ids map[turnID]struct{}
	// unordered: some record's turn started before the turn of a record with a lower
	// index (it closed later: on another collector, or after turn_timeout), so the
	// conversation's order is not the index order (conversationOrder). lastStart is the
	// start of the last record's turn in index order (startsWith). latest and latestIndex
	// are the start and index of the record last in the conversation
	// (evaluation.CompareConversation): a new last turn that started after it follows it,
	// even after a late turn made the session unordered (prevOf). All are kept by put and
	// sort.
	unordered   bool
	lastStart   time.Time
	latest      time.Time
	latestIndex int
	revision    int
	// continuable is false for a session keyed by its trace id (its trace's turns, open
	// only while the tracker holds it, never continued): it is not kept in the
	// continuation store.
	continuable bool
	// held: this instance recorded that it holds the session open (store.Recovery.Hold).
	held bool
	// late and evaluated say whether, since the session was loaded here, a closed turn
	// was only late spans of a turn already analysed, and whether one was evaluated: a
	// session that got nothing but late spans ends without a new analysis.
	late, evaluated bool
}

// at returns the record of turn index i, or nil.
func (st *sessionState) at(i int) *evaluation.TurnRecord {
	if i < 0 {
		return nil
	}
	if i < len(st.records) && st.records[i].Result.TurnIndex == i {
		return &st.records[i]
	}
	for j := range st.records {
		if st.records[j].Result.TurnIndex == i {
			return &st.records[j]
		}
	}
	return nil
}

// prevOf returns the record of the turn that came before the turn that started at
// start and holds index in the conversation (conversationOrder), or nil. A new last turn
// that started after every record (the common case) takes the record last in the
// conversation (latest) without a scan or an allocation; only a late turn orders them.
func (st *sessionState) prevOf(start time.Time, index int) *evaluation.TurnRecord {
	n := len(st.records)
	if n == 0 {
		return nil
	}
	if last := &st.records[n-1]; last.Result.TurnIndex < index && !start.IsZero() && evaluation.CompareConversation(st.latest, st.latestIndex, start, index) < 0 {
		// A new last turn, after every record in the conversation too.
		if i, ok := slices.BinarySearchFunc(st.records, st.latestIndex, byIndex); ok {
			return &st.records[i]
		}
	}
	starts, start := st.startsWith(index, start)
	prev := -1
	for i := range st.records {
		ti := st.records[i].Result.TurnIndex
		if ti == index || evaluation.CompareConversation(starts[i], ti, start, index) > 0 {
			continue
		}
		if prev < 0 || evaluation.CompareConversation(starts[prev], st.records[prev].Result.TurnIndex, starts[i], ti) < 0 {
			prev = i
		}
	}
	if prev < 0 {
		return nil
	}
	return &st.records[prev]
}

// carrier returns the record whose grounding facts and conversation a turn after prev
// is evaluated with: prev, or, when prev dropped them (it has its verdict with
// follow-up, DropCarries) because a turn that came after turn (the one closing) followed
// it, that turn's record, which carried prev's on (with its own): turn closed late.
func (st *sessionState) carrier(prev *evaluation.TurnRecord, turn turnID) *evaluation.TurnRecord {
	if prev == nil || prev.Grounding != nil || prev.Conversation != nil || prev.FollowedBy == nil {
		return prev
	}
	by := turnID{trace: prev.FollowedBy.TraceID, root: prev.FollowedBy.RootSpanID}
	if by == turn {
		return prev
	}
	if i := st.find(by); i >= 0 {
		return &st.records[i]
	}
	return prev
}

// startsWith returns the start of each record's turn (Summary.StartedAt), in
// st.records' order (by index), as if the turn of index that started at start were among
// the records (a turn closing; index < 0: none), with that turn's own start. A record or
// turn without a start (a record rebuilt from a stored result,
// evaluation.RecordFromResult) takes the start of the one before it by index, so that it
// keeps its index's place in the conversation.
func (st *sessionState) startsWith(index int, start time.Time) (starts []time.Time, own time.Time) {
	starts = make([]time.Time, len(st.records))
	var last time.Time
	placed := index < 0
	for i := range st.records {
		if !placed && st.records[i].Result.TurnIndex > index {
			placed = true
			if !start.IsZero() {
				last = start
			}
			own = last
		}
		if s := st.records[i].Summary.StartedAt; !s.IsZero() {
			last = s
		}
		starts[i] = last
	}
	if !placed {
		own = last
		if !start.IsZero() {
			own = start
		}
	}
	return starts, own
}

// conversationOrder returns the positions in st.records in the conversation's order:
// by their turns' start, then by index (docs/decisions/sessions.md §4.5); nil when that
// is st.records' own (index) order. Indexes are given when turns close, so a turn that
// closed late holds a higher index than turns that came after it; its follow-up is still
// the next turn's user message.
func (st *sessionState) conversationOrder() []int {
	if !st.unordered {
		return nil
	}
	order := make([]int, len(st.records))
	for i := range order {
		order[i] = i
	}
	starts, _ := st.startsWith(-1, time.Time{})
	slices.SortFunc(order, func(a, b int) int {
		return evaluation.CompareConversation(starts[a], st.records[a].Result.TurnIndex, starts[b], st.records[b].Result.TurnIndex)
	})
	return order
}

// holdsBetween reports whether st holds a record of every turn index strictly between
// indexes a and b: else a turn whose index was reserved, but whose record is not stored
// yet, may come between them in the conversation.
func (st *sessionState) holdsBetween(a, b int) bool {
	lo, hi := min(a, b), max(a, b)
	from, _ := slices.BinarySearchFunc(st.records, lo+1, byIndex)
	to, _ := slices.BinarySearchFunc(st.records, hi, byIndex)
	return to-from == hi-lo-1
}

func byIndex(r evaluation.TurnRecord, index int) int { return r.Result.TurnIndex - index }

// needsFollowUp reports whether record r is to get its verdict (again) with next's user
// message, next being the turn after it in the conversation: it has none with follow-up
// (provisional, or final without follow-up), or it has the verdict of a turn that came
// after next (next closed late and took its place).
func needsFollowUp(r, next *evaluation.TurnRecord) bool {
	if store.VerdictStage(r) < 2 {
		return true
	}
	by := r.FollowedBy
	return by != nil && !by.Of(next) && !next.Summary.StartedAt.IsZero() && by.StartedAt.After(next.Summary.StartedAt)
}

// turnID names a closed turn within its session: its trace and its root span (the turn
// marker or the highest GenAI span, hex; "" for a turn without one). One trace may hold
// several turns (a conversation run inside one trace), each with its own root span: a
// turn's record, index and saves go by both (store.TurnKey, which adds the session;
// docs/decisions/sessions.md §4.2).
type turnID struct{ trace, root string }

// idOfTurn returns the id of closed turn t.
func idOfTurn(t *session.Turn) turnID { return turnID{trace: t.TraceID, root: t.RootSpanID} }

// idOf returns the id of the turn of result r.
func idOf(r *evaluation.TurnResult) turnID { return turnID{trace: r.TraceID, root: r.RootSpanID} }

// idOfKey returns the id of the turn k names.
func idOfKey(k store.TurnKey) turnID { return turnID{trace: k.TraceID, root: k.RootSpanID} }

// key returns the continuation store's key of the turn in session sessionID.
func (t turnID) key(sessionID string) store.TurnKey {
	return store.TurnKey{SessionID: sessionID, TraceID: t.trace, RootSpanID: t.root}
}

// manyRecords is the number of records from which a session's state keeps the set of
// their turn ids (sessionState.ids): below it, comparing each record's costs less.
const manyRecords = 32

// put adds rec, replacing the record of the same turn (turnID); records stay in index
// order. A long session's new turn is known to be new from the set of turn ids, not from
// a comparison with every record (the cost of a closed turn must not grow with the
// session, docs/decisions/sessions.md §4.1).
func (st *sessionState) put(rec evaluation.TurnRecord) {
	id := idOf(&rec.Result)
	if st.ids == nil && len(st.records) >= manyRecords {
		st.ids = make(map[turnID]struct{}, 2*len(st.records))
		for i := range st.records {
			st.ids[idOf(&st.records[i].Result)] = struct{}{}
		}
	}
	if i := st.find(id); i >= 0 {
		st.records[i] = rec
		st.sort()
		return
	}
	st.records = append(st.records, rec)
	if st.ids != nil {
		st.ids[id] = struct{}{}
	}
	if n := len(st.records); n > 1 && st.records[n-2].Result.TurnIndex > rec.Result.TurnIndex {
		st.sort()
		return
	}
	// The common case, a new last turn, appends in order.
	st.follow(&rec)
}

// follow updates the order fields (unordered, lastStart, latest) for rec, the new last
// record in index order.
func (st *sessionState) follow(rec *evaluation.TurnRecord) {
	start := rec.Summary.StartedAt
	if start.IsZero() {
		start = st.lastStart // a record without a start keeps its index's place (startsWith)
	} else {
		st.unordered = st.unordered || start.Before(st.lastStart)
	}
	st.lastStart = start
	if evaluation.CompareConversation(start, rec.Result.TurnIndex, st.latest, st.latestIndex) > 0 {
		st.latest, st.latestIndex = start, rec.Result.TurnIndex
	}
}

// find returns the index in st.records of the record of turn id, or -1. st.ids, once
// kept, answers an absent turn without a scan.
func (st *sessionState) find(id turnID) int {
	if st.ids != nil {
		if _, ok := st.ids[id]; !ok {
			return -1
		}
	}
	return slices.IndexFunc(st.records, func(r evaluation.TurnRecord) bool { return idOf(&r.Result) == id })
}

// sort puts st.records in index order, and finds whether that is the conversation's.
func (st *sessionState) sort() {
	slices.SortStableFunc(st.records, func(a, b evaluation.TurnRecord) int { return a.Result.TurnIndex - b.Result.TurnIndex })
	st.unordered, st.lastStart, st.latest, st.latestIndex = false, time.Time{}, time.Time{}, 0
	for i := range st.records {
		st.follow(&st.records[i])
	}
}

// holds reports whether st has the record of the turn of traceID and rootSpanID at
// turnIndex at verdict stage stage or further on: merge would take nothing of a stored
// one (store.Held, for reload, which then need not decode it).
func (st *sessionState) holds(traceID, rootSpanID string, turnIndex, stage int) bool {
	i := st.find(turnID{trace: traceID, root: rootSpanID})
	return i >= 0 && st.records[i].Result.TurnIndex == turnIndex && store.VerdictStage(&st.records[i]) >= stage
}

// merge takes the stored records of turns this state lacks, and a stored record whose
// verdict is further on than the local one (store.VerdictStage). The stored index of a
// turn wins: it differs only for a turn this collector numbered while the store could
// not allocate its index (shard.local).
func (st *sessionState) merge(stored []evaluation.TurnRecord) {
	for _, r := range stored {
		switch i := st.find(idOf(&r.Result)); {
		case i < 0:
			st.records = append(st.records, r)
			st.ids = nil // made again by the next put
		case store.VerdictStage(&r) > store.VerdictStage(&st.records[i]):
			st.records[i] = r
		case r.Result.TurnIndex != st.records[i].Result.TurnIndex:
			st.records[i].SetTurnIndex(r.Result.TurnIndex)
		}
	}
	st.sort()
}
