// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"slices"
	"time"
)

// TurnID names a closed turn within its session: its trace and its root span (the turn
// marker or the highest GenAI span, hex; "" for a turn without one). One trace may hold
// several turns (a conversation run inside one trace), each with its own root span, so a
// turn's record, index and saves go by both (store.TurnKey adds the session;
// docs/decisions/sessions.md §4.2).
type TurnID struct{ TraceID, RootSpanID string }

// ID returns the id of the turn of r.
func (r *TurnResult) ID() TurnID { return TurnID{TraceID: r.TraceID, RootSpanID: r.RootSpanID} }

// VerdictStage orders a turn record's verdicts: 0 provisional, 1 final without the next
// turn's user message (Evaluator.FinishLast: NoFollowUp), 2 final with it (FollowUp). A
// record is replaced only by one of the same or a higher stage, in SessionTurns and in
// the continuation store; a turn result only by one of the same or a higher stage in the
// result store (TurnResult.VerdictStage).
func VerdictStage(r *TurnRecord) int { return verdictStage(r.Result.Final, !r.NoFollowUp) }

// VerdictStage is the stage of the verdict tr holds, as VerdictStage gives it for a
// record: 0 provisional, 1 final without follow-up, 2 final with it (WithFollowUp).
func (tr *TurnResult) VerdictStage() int { return verdictStage(tr.Final, tr.WithFollowUp) }

// verdictStage is the stage of a verdict: final or provisional, given with the next
// turn's user message or without it.
func verdictStage(final, withFollowUp bool) int {
	switch {
	case !final:
		return 0
	case !withFollowUp:
		return 1
	}
	return 2
}

// NeedsFollowUp reports whether record r is to get its verdict (again) with next's user
// message, next being the turn after it in the conversation: it has none with follow-up
// (provisional, or final without follow-up), or it has the verdict of a turn that came
// after next (next closed late and took its place; docs/decisions/sessions.md §4.5).
func NeedsFollowUp(r, next *TurnRecord) bool {
	if VerdictStage(r) < 2 {
		return true
	}
	by := r.FollowedBy
	return by != nil && !by.Of(next) && !next.Summary.StartedAt.IsZero() && by.StartedAt.After(next.Summary.StartedAt)
}

// SessionTurns holds a session's turn records in turn index order and knows their order
// in the conversation: by their turns' start, then by index (CompareConversation).
// Indexes are given when turns close, so a turn that closed late (on another collector,
// or after turn_timeout) holds a higher index than turns that came after it, while its
// follow-up is still the next turn's user message (docs/decisions/sessions.md §4.5).
// Finding the turn before a new last turn costs the same however long the session is
// (§4.1). The zero value is empty and ready to use; it is not safe for concurrent use.
type SessionTurns struct {
	records []TurnRecord
	// ids holds the turn ids of records once there are manyRecords of them (Put), so
	// that a closed turn's Put does not compare every record's; nil before, and after
	// Merge added records, until the next Put makes it again.
	ids map[TurnID]struct{}
	// unordered: some record's turn started before the turn of a record with a lower
	// index, so the conversation's order is not the index order (Order). lastStart is
	// the start of the last record's turn in index order (startsWith). latest and
	// latestIndex are the start and index of the record last in the conversation: a new
	// last turn that started after it follows it, even after a late turn made the session
	// unordered (Previous). All are kept by Put and sort.
	unordered   bool
	lastStart   time.Time
	latest      time.Time
	latestIndex int
}

// manyRecords is the number of records from which SessionTurns keeps the set of their
// turn ids (SessionTurns.ids): below it, comparing each record's costs less.
const manyRecords = 32

// Reset makes s hold records, which it takes (in any order; they are sorted by index).
func (s *SessionTurns) Reset(records []TurnRecord) {
	*s = SessionTurns{records: records}
	s.sort()
}

// Records returns the records in turn index order, s's own: a caller may change a
// record's verdict through it, not its turn id or index (SetTurnIndex).
func (s *SessionTurns) Records() []TurnRecord { return s.records }

// Len returns the number of records.
func (s *SessionTurns) Len() int { return len(s.records) }

// NextIndex returns one more than the highest turn index held (0 when empty): the index a
// new turn takes when nothing else allocates it.
func (s *SessionTurns) NextIndex() int {
	n := len(s.records)
	if n == 0 {
		return 0
	}
	return max(n, s.records[n-1].Result.TurnIndex+1)
}

// At returns the record of turn index i, or nil.
func (s *SessionTurns) At(i int) *TurnRecord {
	if i < 0 {
		return nil
	}
	if i < len(s.records) && s.records[i].Result.TurnIndex == i {
		return &s.records[i]
	}
	for j := range s.records {
		if s.records[j].Result.TurnIndex == i {
			return &s.records[j]
		}
	}
	return nil
}

// Find returns the record of turn id, or nil. Once s keeps the set of its turn ids, an
// absent turn is answered without a scan.
func (s *SessionTurns) Find(id TurnID) *TurnRecord {
	if i := s.find(id); i >= 0 {
		return &s.records[i]
	}
	return nil
}

func (s *SessionTurns) find(id TurnID) int {
	if s.ids != nil {
		if _, ok := s.ids[id]; !ok {
			return -1
		}
	}
	return slices.IndexFunc(s.records, func(r TurnRecord) bool { return r.Result.ID() == id })
}

// Previous returns the record of the turn that came before the turn that started at
// start and holds index in the conversation (Order), or nil. A new last turn that
// started after every record (the common case) takes the record last in the conversation
// without a scan or an allocation; only a late turn orders them.
func (s *SessionTurns) Previous(start time.Time, index int) *TurnRecord {
	n := len(s.records)
	if n == 0 {
		return nil
	}
	if s.Follows(start, index) {
		// A new last turn, after every record in the conversation too.
		if i, ok := slices.BinarySearchFunc(s.records, s.latestIndex, byIndex); ok {
			return &s.records[i]
		}
	}
	starts, start := s.startsWith(index, start)
	prev := -1
	for i := range s.records {
		ti := s.records[i].Result.TurnIndex
		if ti == index || CompareConversation(starts[i], ti, start, index) > 0 {
			continue
		}
		if prev < 0 || CompareConversation(starts[prev], s.records[prev].Result.TurnIndex, starts[i], ti) < 0 {
			prev = i
		}
	}
	if prev < 0 {
		return nil
	}
	return &s.records[prev]
}

// Carrier returns the record whose grounding facts and conversation tokens a turn after
// prev is evaluated with: prev, or, when prev dropped them (it has its verdict with
// follow-up, DropCarries) because a turn that came after turn (the one closing) followed
// it, that turn's record, which carried prev's on with its own: turn closed late.
func (s *SessionTurns) Carrier(prev *TurnRecord, turn TurnID) *TurnRecord {
	if prev == nil || prev.Grounding != nil || prev.Conversation != nil || prev.FollowedBy == nil {
		return prev
	}
	by := TurnID{TraceID: prev.FollowedBy.TraceID, RootSpanID: prev.FollowedBy.RootSpanID}
	if by == turn {
		return prev
	}
	if r := s.Find(by); r != nil {
		return r
	}
	return prev
}

// startsWith returns the start of each record's turn (Summary.StartedAt), in index
// order, as if the turn of index that started at start were among the records (a turn
// closing; index < 0: none), with that turn's own start. A record or turn without a
// start (a record rebuilt from a stored result, RecordFromResult) takes the start of the
// one before it by index, so that it keeps its index's place in the conversation.
func (s *SessionTurns) startsWith(index int, start time.Time) (starts []time.Time, own time.Time) {
	starts = make([]time.Time, len(s.records))
	var last time.Time
	placed := index < 0
	for i := range s.records {
		if !placed && s.records[i].Result.TurnIndex > index {
			placed = true
			if !start.IsZero() {
				last = start
			}
			own = last
		}
		if st := s.records[i].Summary.StartedAt; !st.IsZero() {
			last = st
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

// Order returns the positions in Records in the conversation's order (by their turns'
// start, then by index); nil when that is the index order.
func (s *SessionTurns) Order() []int {
	if !s.unordered {
		return nil
	}
	order := make([]int, len(s.records))
	for i := range order {
		order[i] = i
	}
	starts, _ := s.startsWith(-1, time.Time{})
	slices.SortFunc(order, func(a, b int) int {
		return CompareConversation(starts[a], s.records[a].Result.TurnIndex, starts[b], s.records[b].Result.TurnIndex)
	})
	return order
}

// HoldsBetween reports whether s holds a record of every turn index strictly between
// indexes a and b: else a turn whose index was given, but whose record is not here yet,
// may come between them in the conversation.
func (s *SessionTurns) HoldsBetween(a, b int) bool {
	lo, hi := min(a, b), max(a, b)
	from, _ := slices.BinarySearchFunc(s.records, lo+1, byIndex)
	to, _ := slices.BinarySearchFunc(s.records, hi, byIndex)
	return to-from == hi-lo-1
}

func byIndex(r TurnRecord, index int) int { return r.Result.TurnIndex - index }

// Put adds rec, replacing the record of the same turn (TurnID); records stay in index
// order. A long session's new turn is known to be new from the set of turn ids, not from
// a comparison with every record (the cost of a closed turn does not grow with the
// session, docs/decisions/sessions.md §4.1).
func (s *SessionTurns) Put(rec TurnRecord) {
	id := rec.Result.ID()
	if s.ids == nil && len(s.records) >= manyRecords {
		s.ids = make(map[TurnID]struct{}, 2*len(s.records))
		for i := range s.records {
			s.ids[s.records[i].Result.ID()] = struct{}{}
		}
	}
	if i := s.find(id); i >= 0 {
		s.records[i] = rec
		s.sort()
		return
	}
	s.records = append(s.records, rec)
	if s.ids != nil {
		s.ids[id] = struct{}{}
	}
	if n := len(s.records); n > 1 && s.records[n-2].Result.TurnIndex > rec.Result.TurnIndex {
		s.sort()
		return
	}
	// The common case, a new last turn, appends in order.
	s.follow(&rec)
}

// Release drops the records of turns before the last keep (in index order) whose verdict
// is final with follow-up (VerdictStage 2), and returns how many it dropped and an index
// that every dropped record's is below (the lowest of the last keep). Such a record is
// read again only by the session's analysis and by a turn that closes late, before it in
// the conversation (not Follows), so a caller whose store holds it takes it back from
// there (Merge) for those (docs/decisions/sessions.md §4.2.2). keep < 1 is 1: the last
// record carries the next turn's facts.
func (s *SessionTurns) Release(keep int) (dropped, below int) {
	n := len(s.records) - max(1, keep)
	if n <= 0 {
		return 0, 0
	}
	below = s.records[n].Result.TurnIndex
	out := s.records[:0]
	for i := range s.records {
		if i < n && VerdictStage(&s.records[i]) == 2 {
			if s.ids != nil {
				delete(s.ids, s.records[i].Result.ID())
			}
			continue
		}
		out = append(out, s.records[i])
	}
	dropped = len(s.records) - len(out)
	clear(s.records[len(out):]) // the array must not keep the dropped results alive
	s.records = out
	if dropped > 0 {
		s.sort()
	}
	return dropped, below
}

// Follows reports whether the turn that started at start and holds index comes after every
// record in the conversation (Previous then takes the last one): a new last turn, not
// one that closed late. With no record it is true.
func (s *SessionTurns) Follows(start time.Time, index int) bool {
	n := len(s.records)
	return n == 0 || s.records[n-1].Result.TurnIndex < index && !start.IsZero() &&
		CompareConversation(s.latest, s.latestIndex, start, index) < 0
}

// SetTurnIndex gives the record of turn id the index n (TurnRecord.SetTurnIndex) and
// returns it, or nil when s has no record of id.
func (s *SessionTurns) SetTurnIndex(id TurnID, n int) *TurnRecord {
	i := s.find(id)
	if i < 0 {
		return nil
	}
	s.records[i].SetTurnIndex(n)
	s.sort()
	return s.Find(id)
}

// follow updates the order fields (unordered, lastStart, latest) for rec, the new last
// record in index order.
func (s *SessionTurns) follow(rec *TurnRecord) {
	start := rec.Summary.StartedAt
	if start.IsZero() {
		start = s.lastStart // a record without a start keeps its index's place (startsWith)
	} else {
		s.unordered = s.unordered || start.Before(s.lastStart)
	}
	s.lastStart = start
	if CompareConversation(start, rec.Result.TurnIndex, s.latest, s.latestIndex) > 0 {
		s.latest, s.latestIndex = start, rec.Result.TurnIndex
	}
}

// sort puts the records in index order, and finds whether that is the conversation's.
func (s *SessionTurns) sort() {
	slices.SortStableFunc(s.records, func(a, b TurnRecord) int { return a.Result.TurnIndex - b.Result.TurnIndex })
	s.unordered, s.lastStart, s.latest, s.latestIndex = false, time.Time{}, time.Time{}, 0
	for i := range s.records {
		s.follow(&s.records[i])
	}
}

// Holds reports whether s has the record of the turn of traceID and rootSpanID at
// turnIndex at verdict stage stage or further on (VerdictStage): Merge would take
// nothing of a stored one (the continuation store's held filter, store.Held, which then
// need not decode it).
func (s *SessionTurns) Holds(traceID, rootSpanID string, turnIndex, stage int) bool {
	i := s.find(TurnID{TraceID: traceID, RootSpanID: rootSpanID})
	return i >= 0 && s.records[i].Result.TurnIndex == turnIndex && VerdictStage(&s.records[i]) >= stage
}

// Merge takes the stored records of turns s lacks, and a stored record whose verdict is
// further on than the one held (VerdictStage). The stored index of a turn wins: it
// differs only for a turn a collector numbered itself while the store could not
// allocate its index.
func (s *SessionTurns) Merge(stored []TurnRecord) {
	for _, r := range stored {
		switch i := s.find(r.Result.ID()); {
		case i < 0:
			s.records = append(s.records, r)
			s.ids = nil // made again by the next Put
		case VerdictStage(&r) > VerdictStage(&s.records[i]):
			s.records[i] = r
		case r.Result.TurnIndex != s.records[i].Result.TurnIndex:
			s.records[i].SetTurnIndex(r.Result.TurnIndex)
		}
	}
	s.sort()
}
