// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withLeaseOfA opens a fresh store on b in which instance "a" holds a lease for a
// minute from the returned time.
func withLeaseOfA(t *testing.T, b backend) (*sqlStore, time.Time) {
	t.Helper()
	s, _, _ := open(t, b)
	now := time.Now()
	require.NoError(t, s.Heartbeat(context.Background(), "a", now.Add(time.Minute)))
	return s, now
}

// TestRecoveryLeases: a session held by a live instance is not an orphan; once its
// lease ended (or without one) it is, with its meta; a claim conditioned on the dead
// owner succeeds once; a release by another owner changes nothing; Leave makes the
// holder's sessions orphans at once.
func TestRecoveryLeases(t *testing.T) {
	ctx := context.Background()
	runAll(t, func(t *testing.T, b backend) {
		s, now := withLeaseOfA(t, b)
		require.NoError(t, s.Hold(ctx, []OpenSession{
			{ID: "s1", Owner: "a", Service: "bot", Agents: []string{"triage", "refund"}},
			{ID: "s2", Owner: "a"},
			{ID: "s3", Owner: "ghost"}, // an instance without a lease row
		}))
		orphans, err := s.Orphans(ctx, now, 10)
		require.NoError(t, err)
		require.Len(t, orphans, 1)
		assert.Equal(t, "s3", orphans[0].ID)

		orphans, err = s.Orphans(ctx, now.Add(2*time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, orphans, 3, "a's lease ended")
		assert.Equal(t, OpenSession{ID: "s1", Owner: "a", Service: "bot", Agents: []string{"triage", "refund"}}, orphans[0])

		won, err := s.Claim(ctx, orphans[0], "b")
		require.NoError(t, err)
		assert.True(t, won)
		won, err = s.Claim(ctx, orphans[0], "c")
		require.NoError(t, err)
		assert.False(t, won, "already claimed by b")

		require.NoError(t, s.Heartbeat(ctx, "b", now.Add(time.Hour)))
		require.NoError(t, s.Release(ctx, "a", []string{"s1"}, now))
		orphans, err = s.Orphans(ctx, now.Add(2*time.Minute), 10)
		require.NoError(t, err)
		assert.Len(t, orphans, 2, "s1 is b's now, and b is alive; a's release did not touch it")
		require.NoError(t, s.Release(ctx, "b", []string{"s1"}, now))
		require.NoError(t, s.Leave(ctx, "a"))
		orphans, err = s.Orphans(ctx, now, 10)
		require.NoError(t, err)
		assert.Len(t, orphans, 2, "a left: s2 and s3")
	})
}

// TestRecoverySharedHold: two live instances hold one session; one releases it and the
// other's hold stays, an orphan once its lease ended. A release also ends the holds of
// dead instances, and a claim by an instance that holds the session keeps one hold.
func TestRecoverySharedHold(t *testing.T) {
	ctx := context.Background()
	runAll(t, func(t *testing.T, b backend) {
		s, now := withLeaseOfA(t, b)
		require.NoError(t, s.Heartbeat(ctx, "b", now.Add(time.Hour)))
		both := []OpenSession{{ID: "s", Owner: "a", Service: "bot"}, {ID: "s", Owner: "b", Service: "bot"}}
		require.NoError(t, s.Hold(ctx, both))
		require.NoError(t, s.Release(ctx, "b", []string{"s"}, now))
		orphans, err := s.Orphans(ctx, now, 10)
		require.NoError(t, err)
		assert.Empty(t, orphans, "a is alive: its hold is not an orphan")
		orphans, err = s.Orphans(ctx, now.Add(2*time.Minute), 10)
		require.NoError(t, err)
		assert.Equal(t, []OpenSession{both[0]}, orphans, "b's release left a's hold")

		require.NoError(t, s.Hold(ctx, both[1:]))
		require.NoError(t, s.Release(ctx, "b", []string{"s"}, now.Add(2*time.Minute)))
		orphans, err = s.Orphans(ctx, now.Add(2*time.Hour), 10)
		require.NoError(t, err)
		assert.Empty(t, orphans, "b's release after a's lease ended ended a's hold too")

		require.NoError(t, s.Hold(ctx, both))
		won, err := s.Claim(ctx, both[0], "b")
		require.NoError(t, err)
		assert.True(t, won)
		orphans, err = s.Orphans(ctx, now.Add(2*time.Hour), 10)
		require.NoError(t, err)
		assert.Equal(t, []OpenSession{both[1]}, orphans, "one hold, b's")
	})
}

// TestRecoveryClaimsRace: two sweepers claim the same 50 orphans concurrently; each is
// won exactly once.
func TestRecoveryClaimsRace(t *testing.T) {
	ctx := context.Background()
	runAll(t, func(t *testing.T, b backend) {
		s, driver, dsn := open(t, b)
		var held []OpenSession
		for i := range 50 {
			held = append(held, OpenSession{ID: fmt.Sprintf("o%02d", i), Owner: "dead"})
		}
		require.NoError(t, s.Hold(ctx, held))
		other, err := Open(ctx, driver, dsn)
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, other.Close()) })
		sweepers := []Recovery{s, other.(*sqlStore)}
		won := make([]map[string]bool, len(sweepers))
		var wg sync.WaitGroup
		for i, r := range sweepers {
			won[i] = map[string]bool{}
			wg.Add(1)
			// A sweeper holds a lease (the processor renews it before sweeping): what it
			// claimed is not an orphan to the other.
			require.NoError(t, r.Heartbeat(ctx, fmt.Sprintf("sweeper-%d", i), time.Now().Add(time.Minute)))
			go func() {
				defer wg.Done()
				orphans, err := r.Orphans(ctx, time.Now(), 100)
				assert.NoError(t, err)
				for _, o := range orphans {
					ok, err := r.Claim(ctx, o, fmt.Sprintf("sweeper-%d", i))
					assert.NoError(t, err)
					if ok {
						won[i][o.ID] = true
					}
				}
			}()
		}
		wg.Wait()
		for _, o := range held {
			assert.True(t, won[0][o.ID] != won[1][o.ID], "%s claimed exactly once", o.ID)
		}
		t.Logf("%s: sweeper 1 won %d, sweeper 2 won %d", b.name, len(won[0]), len(won[1]))
	})
}
