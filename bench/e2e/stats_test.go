// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestSummarize(t *testing.T) {
	oneToHundred := make([]time.Duration, 100)
	for i := range oneToHundred {
		oneToHundred[i] = ms(i + 1)
	}
	shuffled := append([]time.Duration(nil), oneToHundred...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	// 1,000 turns: 989 at 600ms, 11 slow ones: p99 is slow (rank 990).
	tail := make([]time.Duration, 0, 1000)
	for range 989 {
		tail = append(tail, ms(600))
	}
	for i := range 11 {
		tail = append(tail, ms(3000+i))
	}

	tests := []struct {
		name string
		in   []time.Duration
		want latencySummary
	}{
		{"empty", nil, latencySummary{}},
		{"one", []time.Duration{ms(750)}, latencySummary{N: 1, P50: ms(750), P99: ms(750), Max: ms(750)}},
		{"two", []time.Duration{ms(900), ms(100)}, latencySummary{N: 2, P50: ms(100), P99: ms(900), Max: ms(900)}},
		{"1..100ms", oneToHundred, latencySummary{N: 100, P50: ms(50), P99: ms(99), Max: ms(100)}},
		{"1..100ms shuffled", shuffled, latencySummary{N: 100, P50: ms(50), P99: ms(99), Max: ms(100)}},
		{"slow tail", tail, latencySummary{N: 1000, P50: ms(600), P99: ms(3000), Max: ms(3010)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tt.in...)
			assert.Equal(t, tt.want, summarize(tt.in))
			assert.Equal(t, in, tt.in, "the input is not reordered")
		})
	}
}

func TestLatencySummaryString(t *testing.T) {
	assert.Equal(t, "–", latencySummary{}.String())
	assert.Equal(t, "612ms / 1.23s", latencySummary{N: 3, P50: 612345 * time.Microsecond, P99: 1234 * time.Millisecond}.String())
}

func TestSampleProc(t *testing.T) {
	before, err := sampleProc(os.Getpid())
	require.NoError(t, err)
	// Burn CPU until the clock-tick counter moves (on a busy machine wall time is not
	// CPU time), at most 10 s.
	var after procSample
	for start := time.Now(); time.Since(start) < 10*time.Second; {
		for x, t0 := 0, time.Now(); time.Since(t0) < 20*time.Millisecond; x++ {
		}
		after, err = sampleProc(os.Getpid())
		require.NoError(t, err)
		if after.CPU > before.CPU {
			break
		}
	}
	assert.Greater(t, after.CPU, before.CPU)
	assert.Greater(t, after.PeakRSS, uint64(1<<20), "VmHWM in bytes")
	// VmHWM is the larger of the recorded high-water mark and the current RSS, which the
	// kernel reads from approximate per-CPU counters: two reads may differ by a few hundred
	// kilobytes downwards. Allow 1 MiB.
	assert.GreaterOrEqual(t, after.PeakRSS+1<<20, before.PeakRSS, "a high-water mark never falls (beyond counter slack)")

	_, err = sampleProc(1 << 30) // no such process
	assert.Error(t, err)
}
