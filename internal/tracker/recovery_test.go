// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRecoverySchedule: the lease is session_timeout (at least MinRecoveryLease),
// renewed every quarter of it; the first sweep comes session_timeout after the start,
// then one every min(session_timeout, lease/4).
func TestRecoverySchedule(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	r := NewRecovery(2*time.Second, t0)
	assert.Equal(t, MinRecoveryLease, r.Lease)
	until, due := r.Heartbeat(t0)
	assert.True(t, due, "the first heartbeat is due at the start")
	assert.Equal(t, t0.Add(MinRecoveryLease), until)
	_, due = r.Heartbeat(t0.Add(time.Second))
	assert.False(t, due)
	_, due = r.Heartbeat(t0.Add(MinRecoveryLease / 4))
	assert.True(t, due)

	assert.False(t, r.SweepDue(t0.Add(time.Second)), "not before session_timeout after the start")
	assert.True(t, r.SweepDue(t0.Add(2*time.Second)))
	assert.False(t, r.SweepDue(t0.Add(3*time.Second)))
	assert.True(t, r.SweepDue(t0.Add(4*time.Second)))

	r = NewRecovery(0, t0)
	assert.Equal(t, DefaultSessionTimeout, r.Lease, "0 is the default session_timeout")
	assert.Equal(t, DefaultSessionTimeout/4, r.Every)
	assert.False(t, r.SweepDue(t0.Add(DefaultSessionTimeout-time.Second)))
}
