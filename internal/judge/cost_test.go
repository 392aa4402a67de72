// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLedgerReserve: a reservation is all or nothing, counts as spent for the session's
// other charges, draws what a call needs beyond it from the ledger, and gives back on
// Release what it did not use.
func TestLedgerReserve(t *testing.T) {
	l := NewLedger(3, 100)
	require.NoError(t, l.Spend("s", 10))

	// 3 more calls would pass max_calls_per_session: nothing is reserved.
	_, err := l.Reserve("s", 3, 10)
	require.ErrorIs(t, err, ErrCostLimit)
	assert.ErrorContains(t, err, "max_calls_per_session 3")
	_, err = l.Reserve("s", 1, 91)
	require.ErrorIs(t, err, ErrCostLimit)
	assert.ErrorContains(t, err, "max_tokens_per_session 100")

	r, err := l.Reserve("s", 2, 60) // spent: 3 calls, 70 tokens
	require.NoError(t, err)
	assert.ErrorIs(t, l.Spend("s", 1), ErrCostLimit, "the reservation holds the last calls")
	require.NoError(t, r.Spend(20))
	require.NoError(t, r.Spend(45), "5 tokens over the reservation, drawn from the ledger")
	assert.ErrorIs(t, r.Spend(1), ErrCostLimit, "a third call passes max_calls_per_session")
	r.Release()
	assert.ErrorIs(t, l.Spend("s", 1), ErrCostLimit, "all reserved calls were used")

	// Unused calls and tokens go back.
	l = NewLedger(3, 100)
	r, err = l.Reserve("s", 3, 90)
	require.NoError(t, err)
	require.NoError(t, r.Spend(30))
	r.Release()
	r.Release() // harmless
	require.NoError(t, l.Spend("s", 70))
	require.NoError(t, l.Spend("s", 0))
	assert.ErrorIs(t, l.Spend("s", 0), ErrCostLimit)
	require.NoError(t, l.Spend("other", 100), "sessions are counted apart")

	// Without limits nothing is refused.
	r, err = NewLedger(0, 0).Reserve("s", 1000, 1<<30)
	require.NoError(t, err)
	require.NoError(t, r.Spend(1<<30))
	r.Release()
}

// TestLedgerConcurrent: single calls and reservations of one session charged at once
// never pass its limits (run with -race).
func TestLedgerConcurrent(t *testing.T) {
	const maxCalls, maxTokens = 50, 400
	l := NewLedger(maxCalls, maxTokens)
	var calls, tokens atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				if g%2 == 0 {
					if l.Spend("s", 5) == nil {
						calls.Add(1)
						tokens.Add(5)
					}
					continue
				}
				r, err := l.Reserve("s", 3, 30)
				if err != nil {
					continue
				}
				for k := range 3 + i%2 { // sometimes one call more than reserved
					if r.Spend(8+k) == nil {
						calls.Add(1)
						tokens.Add(int64(8 + k))
					}
				}
				r.Release()
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, calls.Load(), int64(maxCalls))
	assert.LessOrEqual(t, tokens.Load(), int64(maxTokens))
	assert.Positive(t, calls.Load())
}
