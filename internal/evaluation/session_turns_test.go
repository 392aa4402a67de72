// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionTurnsPutMany: over random puts and merges of records (new traces, traces
// again, out of index order) past manyRecords, SessionTurns holds what comparing every
// record's trace id gives (the reference: put and merge as they were before the set of
// trace ids), in the same order.
func TestSessionTurnsPutMany(t *testing.T) {
	refPut := func(recs []TurnRecord, rec TurnRecord) []TurnRecord {
		for i := range recs {
			if recs[i].Result.TraceID == rec.Result.TraceID {
				recs[i] = rec
				slices.SortStableFunc(recs, func(a, b TurnRecord) int { return a.Result.TurnIndex - b.Result.TurnIndex })
				return recs
			}
		}
		recs = append(recs, rec)
		slices.SortStableFunc(recs, func(a, b TurnRecord) int { return a.Result.TurnIndex - b.Result.TurnIndex })
		return recs
	}
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		st, ref := &SessionTurns{}, &SessionTurns{}
		rec := func() TurnRecord {
			k := r.IntN(150)
			return TurnRecord{
				Result:         TurnResult{TraceID: "t" + strconv.Itoa(k), TurnIndex: k + r.IntN(2), Final: r.IntN(2) == 0},
				FinalResponder: r.IntN(1000), // tells a replaced record from its replacement
			}
		}
		for range 400 {
			if r.IntN(20) == 0 {
				stored := []TurnRecord{rec(), rec()}
				st.Merge(slices.Clone(stored))
				ref.Merge(slices.Clone(stored))
				continue
			}
			x := rec()
			st.Put(x)
			ref.records = refPut(ref.records, x)
		}
		require.Equal(t, ref.records, st.records, "seed %d", seed)
		require.GreaterOrEqual(t, len(st.records), manyRecords, "seed %d", seed)
	}
}

// TestSessionTurnsConversationOrder: over random puts and merges of records whose turns
// closed out of the order they started (some without a start, as a record rebuilt from
// a stored result), the conversation order (Order, as the processor finishes a session)
// and the previous turn of a closing turn (Previous, with its fast path for a new last
// turn) are those of sorting every record by its start, then index, where a record
// without a start takes the start of the record before it by index
// (docs/decisions/sessions.md §4.5).
func TestSessionTurnsConversationOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	// want sorts recs (in index order) as the conversation: the reference.
	want := func(recs []TurnRecord) []TurnRecord {
		out := slices.Clone(recs)
		var last time.Time
		eff := map[int]time.Time{}
		for _, r := range out {
			if s := r.Summary.StartedAt; !s.IsZero() {
				last = s
			}
			eff[r.Result.TurnIndex] = last
		}
		slices.SortStableFunc(out, func(a, b TurnRecord) int {
			if c := eff[a.Result.TurnIndex].Compare(eff[b.Result.TurnIndex]); c != 0 {
				return c
			}
			return a.Result.TurnIndex - b.Result.TurnIndex
		})
		return out
	}
	unordered := 0
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 11))
		st := &SessionTurns{}
		used := map[int]bool{}
		rec := func() TurnRecord {
			k := len(used) + r.IntN(3) // mostly a new last index
			for used[k] {
				k++
			}
			used[k] = true
			var start time.Time
			if r.IntN(8) != 0 {
				// Mostly later with the index; now and then a turn that started earlier.
				start = t0.Add(time.Duration(k*10+r.IntN(4)*r.IntN(4)*-7) * time.Second)
			}
			return TurnRecord{
				Result:  TurnResult{TraceID: "t" + strconv.Itoa(k), TurnIndex: k},
				Summary: TurnSummary{StartedAt: start},
			}
		}
		for range 30 {
			next := rec()
			// The previous turn of a turn about to close is its predecessor once put.
			probe := &SessionTurns{records: slices.Clone(st.records)}
			probe.Put(next)
			ref := want(probe.records)
			i := slices.IndexFunc(ref, func(x TurnRecord) bool { return x.Result.TurnIndex == next.Result.TurnIndex })
			got := st.Previous(next.Summary.StartedAt, next.Result.TurnIndex)
			if i == 0 {
				require.Nil(t, got, "seed %d: turn %d is first", seed, next.Result.TurnIndex)
			} else {
				require.NotNil(t, got, "seed %d", seed)
				require.Equal(t, ref[i-1].Result.TurnIndex, got.Result.TurnIndex, "seed %d: the turn before %d", seed, next.Result.TurnIndex)
			}
			if r.IntN(10) == 0 {
				st.Merge([]TurnRecord{next})
			} else {
				st.Put(next)
			}
		}
		var got []TurnRecord
		if order := st.Order(); order != nil {
			unordered++
			for _, i := range order {
				got = append(got, st.records[i])
			}
		} else {
			got = st.records
		}
		require.Equal(t, want(st.records), got, "seed %d", seed)
	}
	require.Positive(t, unordered, "some sessions' turns closed out of order")
}

// TestHoldsBetween: a turn's next in the conversation is known only when no index between
// theirs is unknown (reserved elsewhere, not stored yet).
func TestHoldsBetween(t *testing.T) {
	st := &SessionTurns{}
	for _, i := range []int{0, 1, 2, 4, 5} {
		st.Put(TurnRecord{Result: TurnResult{TraceID: strconv.Itoa(i), TurnIndex: i}})
	}
	for _, tc := range []struct {
		a, b int
		want bool
	}{
		{0, 1, true}, {1, 0, true}, {0, 2, true}, {2, 0, true}, {2, 4, false}, {4, 2, false},
		{1, 5, false}, {4, 5, true}, {5, 6, true}, {0, 3, true}, {3, 5, true}, {2, 5, false},
	} {
		assert.Equal(t, tc.want, st.HoldsBetween(tc.a, tc.b), "%d, %d", tc.a, tc.b)
	}
}

// TestPreviousFlatAfterOneLateTurn: after one turn of a long session closed late
// (unordered), finding the predecessor of each further new last turn (Previous) must not
// cost in proportion to the session (docs/decisions/sessions.md §4.1: the cost of a
// closed turn must not grow with the session): no allocation, at 64 turns as at 16,384
// (found by review: a slice of every record's start, and a scan, a call).
func TestPreviousFlatAfterOneLateTurn(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, n := range []int{64, 16384} {
		st := &SessionTurns{}
		rec := func(i int, start time.Time) TurnRecord {
			return TurnRecord{Result: TurnResult{TraceID: strconv.Itoa(i), TurnIndex: i},
				Summary: TurnSummary{StartedAt: start}}
		}
		// The turn that started second closed late: index 2, after the third's.
		st.Put(rec(0, t0))
		st.Put(rec(1, t0.Add(20*time.Second)))
		st.Put(rec(2, t0.Add(10*time.Second)))
		for i := 3; i < n; i++ {
			st.Put(rec(i, t0.Add(time.Duration(i)*10*time.Second)))
		}
		require.True(t, st.unordered)
		next := t0.Add(time.Duration(n) * 10 * time.Second)
		require.Equal(t, n-1, st.Previous(next, n).Result.TurnIndex)
		allocs := testing.AllocsPerRun(100, func() { _ = st.Previous(next, n) })
		assert.Zero(t, allocs, "%d turns: Previous of a new last turn allocates nothing", n)
	}
}

// TestSessionTurnsIndexes: the next free index, a turn found by id or index, an index
// given afterwards (the store allocated it once reachable), and what a stored record
// needs of the held ones (Holds: same index, same stage or further on).
func TestSessionTurnsIndexes(t *testing.T) {
	var s SessionTurns
	assert.Zero(t, s.NextIndex())
	assert.Nil(t, s.At(0))
	rec := func(trace string, idx int, final bool) TurnRecord {
		return TurnRecord{Result: TurnResult{TraceID: trace, RootSpanID: "r" + trace, TurnIndex: idx, Final: final}}
	}
	s.Put(rec("a", 0, true))
	s.Put(rec("c", 5, false)) // numbered here while the store was unreachable
	s.Put(rec("b", 1, false))
	assert.Equal(t, 6, s.NextIndex())
	assert.Equal(t, "b", s.At(1).Result.TraceID)
	assert.Nil(t, s.At(2))
	assert.Nil(t, s.Find(TurnID{TraceID: "b"}), "a turn is its trace and its root span")

	got := s.SetTurnIndex(TurnID{TraceID: "c", RootSpanID: "rc"}, 2)
	require.NotNil(t, got)
	assert.Equal(t, 2, got.Result.TurnIndex)
	assert.Equal(t, 3, s.NextIndex())
	assert.Equal(t, []string{"a", "b", "c"}, []string{s.Records()[0].Result.TraceID, s.Records()[1].Result.TraceID, s.Records()[2].Result.TraceID})
	assert.Nil(t, s.SetTurnIndex(TurnID{TraceID: "x"}, 9))

	assert.True(t, s.Holds("a", "ra", 0, 2), "final with follow-up")
	assert.True(t, s.Holds("b", "rb", 1, 0))
	assert.False(t, s.Holds("b", "rb", 1, 1), "a final stored record is further on than the provisional held")
	assert.False(t, s.Holds("c", "rc", 5, 0), "held at another index")
	assert.False(t, s.Holds("d", "rd", 3, 0))
}

// TestVerdictStageAndNeedsFollowUp: the stages a record's verdict goes through, and when
// a turn's next user message gives it (again): without one, or after the message of a
// turn that turned out to come later than next (docs/decisions/sessions.md §4.5).
func TestVerdictStageAndNeedsFollowUp(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	next := &TurnRecord{Result: TurnResult{TraceID: "n", RootSpanID: "rn"}, Summary: TurnSummary{StartedAt: t0}}
	for _, tc := range []struct {
		name  string
		r     TurnRecord
		stage int
		needs bool
	}{
		{"provisional", TurnRecord{}, 0, true},
		{"final without follow-up", TurnRecord{Result: TurnResult{Final: true}, NoFollowUp: true}, 1, true},
		{"final by next", TurnRecord{Result: TurnResult{Final: true}, FollowedBy: &FollowedBy{TraceID: "n", RootSpanID: "rn", StartedAt: t0}}, 2, false},
		{"final by an earlier turn", TurnRecord{Result: TurnResult{Final: true}, FollowedBy: &FollowedBy{TraceID: "e", StartedAt: t0.Add(-time.Minute)}}, 2, false},
		{"final by a turn after next", TurnRecord{Result: TurnResult{Final: true}, FollowedBy: &FollowedBy{TraceID: "l", StartedAt: t0.Add(time.Minute)}}, 2, true},
		{"final by a turn without start", TurnRecord{Result: TurnResult{Final: true}, FollowedBy: &FollowedBy{TraceID: "l"}}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.stage, VerdictStage(&tc.r))
			tr := tc.r.Result
			tr.WithFollowUp = tc.stage == 2
			assert.Equal(t, tc.stage, tr.VerdictStage(), "the result's stage")
			assert.Equal(t, tc.needs, NeedsFollowUp(&tc.r, next))
		})
	}
	noStart := &TurnRecord{Result: TurnResult{TraceID: "n"}}
	late := TurnRecord{Result: TurnResult{Final: true}, FollowedBy: &FollowedBy{TraceID: "l", StartedAt: t0.Add(time.Minute)}}
	assert.False(t, NeedsFollowUp(&late, noStart), "a next turn without start never takes a verdict given")
}

// TestSessionTurnsRelease: Release drops, of the records before the last keep, those
// whose verdict is final with follow-up, and nothing else; what is held afterwards
// works as before (next index, the previous turn of a new one, Put of a turn again,
// the set of turn ids past manyRecords) and takes the dropped records back (Merge).
func TestSessionTurnsRelease(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	rec := func(i, stage int) TurnRecord {
		r := TurnRecord{Result: TurnResult{TraceID: "t" + strconv.Itoa(i), TurnIndex: i},
			Summary: TurnSummary{StartedAt: t0.Add(time.Duration(i) * time.Minute)}}
		switch stage {
		case 1:
			r.Result.Final, r.NoFollowUp = true, true
		case 2:
			r.Result.Final = true
		}
		return r
	}
	indexes := func(s *SessionTurns) []int {
		var out []int
		for _, r := range s.Records() {
			out = append(out, r.Result.TurnIndex)
		}
		return out
	}
	var s SessionTurns
	const n = 40 // past manyRecords: the set of turn ids is kept
	var all []TurnRecord
	for i := range n {
		stage := 2
		switch i {
		case 3:
			stage = 0 // provisional: its verdict is still to come
		case 5:
			stage = 1 // final without follow-up: given again when the next turn is known
		}
		all = append(all, rec(i, stage))
		s.Put(all[i])
	}
	require.NotNil(t, s.ids)

	dropped, _ := s.Release(n)
	assert.Zero(t, dropped, "nothing before the last n")
	dropped, below := s.Release(4)
	assert.Equal(t, n-4-2, dropped)
	assert.Equal(t, 36, below, "every dropped index is below the last 4's")
	assert.Equal(t, []int{3, 5, 36, 37, 38, 39}, indexes(&s))
	assert.Len(t, s.ids, 6, "the dropped turns left the set of ids")
	assert.Equal(t, n, s.NextIndex())
	assert.Nil(t, s.Find(all[0].Result.ID()))
	assert.Nil(t, s.At(10))
	assert.Equal(t, 39, s.Previous(t0.Add(time.Hour), n).Result.TurnIndex)
	assert.True(t, s.Follows(t0.Add(time.Hour), n), "a new last turn")
	assert.False(t, s.Follows(t0.Add(10*time.Minute), n), "a turn that started before held ones: closed late")
	assert.True(t, s.HoldsBetween(36, 39))
	assert.False(t, s.HoldsBetween(5, 36))

	s.Put(all[37]) // a turn held, again: replaced, not added
	assert.Equal(t, 6, s.Len())
	s.Merge(slices.Clone(all))
	assert.Equal(t, n, s.Len(), "the store's records come back")
	assert.Equal(t, all[0], s.Records()[0])

	var one SessionTurns
	one.Put(rec(0, 2))
	one.Put(rec(1, 2))
	dropped, _ = one.Release(0)
	assert.Equal(t, 1, dropped, "keep < 1 keeps the last record")
	assert.Equal(t, []int{1}, indexes(&one))
}

// TestAggregateGivesRecordStage: the analysis' turn results carry their records' verdict
// stage (TurnResult.VerdictStage), which the result store compares, also for a record
// saved before results carried WithFollowUp (stage 2 in NoFollowUp only) and for one
// whose result says more than the record (a record rebuilt from a stored result).
func TestAggregateGivesRecordStage(t *testing.T) {
	recs := []TurnRecord{
		{Result: TurnResult{TurnIndex: 0, TraceID: "a", Final: true, DetectionType: DetectionNone}},
		{Result: TurnResult{TurnIndex: 1, TraceID: "b", Final: true, WithFollowUp: true, DetectionType: DetectionNone}, NoFollowUp: true},
		{Result: TurnResult{TurnIndex: 2, TraceID: "c", DetectionType: DetectionNone}},
	}
	a := newEval(t).Aggregate(SessionMeta{ID: "s"}, recs)
	require.Len(t, a.TurnResults, len(recs))
	for i := range recs {
		assert.Equal(t, VerdictStage(&recs[i]), a.TurnResults[i].VerdictStage(), "turn %d", i)
	}
}
