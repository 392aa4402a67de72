// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package handoff

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

func key(i int) Key {
	var s pcommon.SpanID
	binary.BigEndian.PutUint64(s[:], uint64(i)+1)
	return Key{TraceID: pcommon.TraceID{1}, SpanID: s}
}

// attached returns a handoff of maxEntries with a taker attached.
func attached(maxEntries int) *Handoff {
	h := New(maxEntries)
	h.Attach()
	return h
}

func TestTakeReturnsWhatWasPutOnce(t *testing.T) {
	h := attached(8)
	tr := &evaluation.TurnResult{SessionID: "s", TurnIndex: 2}
	a := &evaluation.Analysis{SessionID: "s"}
	h.PutTurn(key(1), tr)
	h.PutAnalysis(key(2), a)

	// The kind asked for must match: a turn is not an analysis.
	_, ok := h.TakeAnalysis(key(1))
	assert.False(t, ok)
	_, ok = h.TakeTurn(key(2))
	assert.False(t, ok)
	assert.False(t, h.HoldsAnalysis(key(1)))

	got, ok := h.TakeTurn(key(1))
	require.True(t, ok)
	assert.Same(t, tr, got)
	_, ok = h.TakeTurn(key(1))
	assert.False(t, ok, "taken once")

	assert.True(t, h.HoldsAnalysis(key(2)), "a look does not take")
	ga, ok := h.TakeAnalysis(key(2))
	require.True(t, ok)
	assert.Same(t, a, ga)
	assert.False(t, h.HoldsAnalysis(key(2)))
	assert.Zero(t, h.Len())
	assert.Zero(t, h.Evicted())
}

func TestBoundDropsTheOldestUntaken(t *testing.T) {
	h := attached(3)
	for i := range 3 {
		h.PutTurn(key(i), &evaluation.TurnResult{TurnIndex: i})
	}
	_, ok := h.TakeTurn(key(1)) // its slot is emptied
	require.True(t, ok)
	h.PutTurn(key(3), &evaluation.TurnResult{TurnIndex: 3}) // overwrites key(0)'s slot
	h.PutTurn(key(4), &evaluation.TurnResult{TurnIndex: 4}) // overwrites key(1)'s empty slot
	assert.Equal(t, int64(1), h.Evicted())
	assert.Equal(t, 3, h.Len())
	_, ok = h.TakeTurn(key(0))
	assert.False(t, ok, "the oldest was dropped")
	for _, i := range []int{2, 3, 4} {
		tr, ok := h.TakeTurn(key(i))
		require.True(t, ok, "entry %d", i)
		assert.Equal(t, i, tr.TurnIndex)
	}

	// Putting the same key again replaces its value and keeps the count.
	h.PutTurn(key(9), &evaluation.TurnResult{TurnIndex: 1})
	h.PutTurn(key(9), &evaluation.TurnResult{TurnIndex: 2})
	assert.Equal(t, 1, h.Len())
	tr, ok := h.TakeTurn(key(9))
	require.True(t, ok)
	assert.Equal(t, 2, tr.TurnIndex)
}

// TestPutBackIsNewest: an entry taken and put back (the exporter gives an analysis back
// when its save fails, for the retry) counts from the put back, not from its first put:
// before, its first slot, left stale by the take, evicted it when the ring came round,
// with bound-1 newer entries put since the put back.
func TestPutBackIsNewest(t *testing.T) {
	h := attached(4)
	a := &evaluation.Analysis{SessionID: "s"}
	h.PutAnalysis(key(0), a)
	got, ok := h.TakeAnalysis(key(0))
	require.True(t, ok)
	h.PutAnalysis(key(0), got) // the save failed: given back
	for i := 1; i <= 3; i++ {
		h.PutTurn(key(i), &evaluation.TurnResult{TurnIndex: i})
	}
	assert.Zero(t, h.Evicted())
	back, ok := h.TakeAnalysis(key(0))
	require.True(t, ok, "still held for the retry")
	assert.Same(t, a, back)
	h.PutTurn(key(5), &evaluation.TurnResult{TurnIndex: 5})
	h.PutTurn(key(6), &evaluation.TurnResult{TurnIndex: 6})
	assert.Equal(t, int64(1), h.Evicted(), "key(1), the oldest held, only")
	assert.Equal(t, 4, h.Len())
}

func TestNeverHoldsMoreThanItsBound(t *testing.T) {
	const bound = 64
	h := attached(bound)
	var wg sync.WaitGroup
	var taken atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				k := key(w*1000 + i)
				h.PutAnalysis(k, &evaluation.Analysis{})
				if i%3 == 0 {
					if _, ok := h.TakeAnalysis(k); ok {
						taken.Add(1)
					}
				}
				assert.LessOrEqual(t, h.Len(), bound)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, h.Len(), bound)
	// Every put is either still held, taken or evicted.
	assert.Equal(t, int64(4000), int64(h.Len())+taken.Load()+h.Evicted())
}

// Without a taker attached nothing is stored; the last Detach drops what is held.
func TestStoresOnlyWhileATakerIsAttached(t *testing.T) {
	h := New(8)
	assert.False(t, h.Attached())
	h.PutTurn(key(1), &evaluation.TurnResult{})
	h.PutAnalysis(key(2), &evaluation.Analysis{})
	assert.Zero(t, h.Len(), "no taker: nothing stored")
	_, ok := h.TakeTurn(key(1))
	assert.False(t, ok)
	h.Detach() // without an Attach: nothing
	assert.False(t, h.Attached())
	h.Attach()
	assert.True(t, h.Attached())
	h.PutTurn(key(1), &evaluation.TurnResult{})
	assert.Equal(t, 1, h.Len(), "attached: stored")
	h.PutTurn(key(5), nil)
	h.PutAnalysis(key(6), nil)
	assert.Equal(t, 1, h.Len(), "a nil result is not stored")

	h.Attach() // a second taker
	h.PutAnalysis(key(2), &evaluation.Analysis{})
	h.Detach()
	assert.Equal(t, 2, h.Len(), "one taker is still attached")
	h.PutAnalysis(key(3), &evaluation.Analysis{})
	assert.Equal(t, 3, h.Len())

	h.Detach() // the last taker: what is held is dropped
	assert.False(t, h.Attached())
	assert.Zero(t, h.Len())
	h.PutAnalysis(key(4), &evaluation.Analysis{})
	assert.Zero(t, h.Len(), "no taker again")
	assert.False(t, h.HoldsAnalysis(key(4)))
	assert.Zero(t, h.Evicted(), "dropped at Detach, not evicted")

	h.Attach()
	h.PutAnalysis(key(4), &evaluation.Analysis{})
	assert.True(t, h.HoldsAnalysis(key(4)))
}
