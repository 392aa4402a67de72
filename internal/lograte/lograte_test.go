// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package lograte

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestEvery(t *testing.T) {
	e := New(time.Minute)
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		at   time.Duration
		ok   bool
		held int
	}{
		{0, true, 0},                  // the first line
		{time.Second, false, 0},       // held back
		{59 * time.Second, false, 0},  // held back
		{time.Minute, true, 2},        // a minute after the last let through: the two held
		{90 * time.Second, false, 0},  // held back
		{3 * time.Minute, true, 1},    // long after
		{3*time.Minute + 1, false, 0}, // held back again
	} {
		ok, held := e.Allow(t0.Add(tt.at))
		assert.Equal(t, tt.ok, ok, "at %v", tt.at)
		assert.Equal(t, tt.held, held, "at %v", tt.at)
	}
}
