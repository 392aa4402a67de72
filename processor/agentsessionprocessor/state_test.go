// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

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
