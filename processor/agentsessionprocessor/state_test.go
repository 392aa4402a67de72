// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// TestSessionStatePutMany: over random puts and merges of records (new traces, traces
// again, out of index order) past manyRecords, the state holds what comparing every
// record's trace id gives (the reference: put and merge as they were before the set of
// trace ids), in the same order.
func TestSessionStatePutMany(t *testing.T) {
	refPut := func(recs []evaluation.TurnRecord, rec evaluation.TurnRecord) []evaluation.TurnRecord {
		for i := range recs {
			if recs[i].Result.TraceID == rec.Result.TraceID {
				recs[i] = rec
				slices.SortStableFunc(recs, func(a, b evaluation.TurnRecord) int { return a.Result.TurnIndex - b.Result.TurnIndex })
				return recs
			}
		}
		recs = append(recs, rec)
		slices.SortStableFunc(recs, func(a, b evaluation.TurnRecord) int { return a.Result.TurnIndex - b.Result.TurnIndex })
		return recs
	}
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		st, ref := &sessionState{}, &sessionState{}
		rec := func() evaluation.TurnRecord {
			k := r.IntN(150)
			return evaluation.TurnRecord{
				Result:         evaluation.TurnResult{TraceID: "t" + strconv.Itoa(k), TurnIndex: k + r.IntN(2), Final: r.IntN(2) == 0},
				FinalResponder: r.IntN(1000), // tells a replaced record from its replacement
			}
		}
		for range 400 {
			if r.IntN(20) == 0 {
				stored := []evaluation.TurnRecord{rec(), rec()}
				st.merge(slices.Clone(stored))
				ref.merge(slices.Clone(stored))
				continue
			}
			x := rec()
			st.put(x)
			ref.records = refPut(ref.records, x)
		}
		require.Equal(t, ref.records, st.records, "seed %d", seed)
		require.GreaterOrEqual(t, len(st.records), manyRecords, "seed %d", seed)
	}
}

// TestSessionStateConversationOrder: over random puts and merges of records whose turns
// closed out of the order they started (some without a start, as a record rebuilt from
// a stored result), the conversation order (finishRecords) and the previous turn of a
// closing turn (prevOf, with its fast path for a new last turn) are those of sorting
// every record by its start, then index, where a record without a start takes the start
// of the record before it by index (docs/decisions/sessions.md §4.5).
func TestSessionStateConversationOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	// want sorts recs (in index order) as the conversation: the reference.
	want := func(recs []evaluation.TurnRecord) []evaluation.TurnRecord {
		out := slices.Clone(recs)
		var last time.Time
		eff := map[int]time.Time{}
		for _, r := range out {
			if s := r.Summary.StartedAt; !s.IsZero() {
				last = s
			}
			eff[r.Result.TurnIndex] = last
		}
		slices.SortStableFunc(out, func(a, b evaluation.TurnRecord) int {
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
		st := &sessionState{}
		used := map[int]bool{}
		rec := func() evaluation.TurnRecord {
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
			return evaluation.TurnRecord{
				Result:  evaluation.TurnResult{TraceID: "t" + strconv.Itoa(k), TurnIndex: k},
				Summary: evaluation.TurnSummary{StartedAt: start},
			}
		}
		for range 30 {
			next := rec()
			// The previous turn of a turn about to close is its predecessor once put.
			probe := &sessionState{records: slices.Clone(st.records)}
			probe.put(next)
			ref := want(probe.records)
			i := slices.IndexFunc(ref, func(x evaluation.TurnRecord) bool { return x.Result.TurnIndex == next.Result.TurnIndex })
			got := st.prevOf(next.Summary.StartedAt, next.Result.TurnIndex)
			if i == 0 {
				require.Nil(t, got, "seed %d: turn %d is first", seed, next.Result.TurnIndex)
			} else {
				require.NotNil(t, got, "seed %d", seed)
				require.Equal(t, ref[i-1].Result.TurnIndex, got.Result.TurnIndex, "seed %d: the turn before %d", seed, next.Result.TurnIndex)
			}
			if r.IntN(10) == 0 {
				st.merge([]evaluation.TurnRecord{next})
			} else {
				st.put(next)
			}
		}
		var got []evaluation.TurnRecord
		if order := st.conversationOrder(); order != nil {
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
	st := &sessionState{}
	for _, i := range []int{0, 1, 2, 4, 5} {
		st.put(evaluation.TurnRecord{Result: evaluation.TurnResult{TraceID: strconv.Itoa(i), TurnIndex: i}})
	}
	for _, tc := range []struct {
		a, b int
		want bool
	}{
		{0, 1, true}, {1, 0, true}, {0, 2, true}, {2, 0, true}, {2, 4, false}, {4, 2, false},
		{1, 5, false}, {4, 5, true}, {5, 6, true}, {0, 3, true}, {3, 5, true}, {2, 5, false},
	} {
		assert.Equal(t, tc.want, st.holdsBetween(tc.a, tc.b), "%d, %d", tc.a, tc.b)
	}
}
