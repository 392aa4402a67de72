// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/channel"
)

// liveSessions opens a fresh store of b and creates an active live class work session
// of each id, hosted by "host".
func liveSessions(t *testing.T, b backend, ids ...string) *ChannelStore {
	t.Helper()
	st, _, _ := open(t, b)
	c, ok := ChannelOf(st)
	require.True(t, ok)
	for _, id := range ids {
		require.NoError(t, c.CreateSession(context.Background(), channel.Session{ID: id, EvaluationID: "class",
			Kind: channel.KindLiveClassWork, Status: channel.SessionActive, StartedAt: t0, Participants: []channel.Participant{
				{ID: id + "-p", AgentID: "host", Role: channel.RoleHost, JoinedAt: t0}}}))
	}
	return c
}

// TestChannelStoreSequences appends from many goroutines to two sessions through the
// store (below the HTTP tests of the receiver): gapless sequences per session, and the
// end of a session refuses later messages.
func TestChannelStoreSequences(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		c := liveSessions(t, b, "s1", "s2")
		ctx := context.Background()
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Go(func() {
				sess := []string{"s1", "s2"}[i%2]
				_, err := c.AddMessage(ctx, channel.Message{ID: "m" + string(rune('A'+i)) + sess, SessionID: sess,
					SenderAgentID: "host", Role: channel.RoleHost, Content: "x", CreatedAt: t0})
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		for _, id := range []string{"s1", "s2"} {
			msgs, more, err := c.Messages(ctx, id, 0, 100, 0)
			require.NoError(t, err)
			require.Len(t, msgs, 20)
			assert.False(t, more)
			for i, m := range msgs {
				assert.Equal(t, int64(i+1), m.Sequence)
			}
			s, err := c.Session(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, int64(20), s.MessageCount)
		}
		require.NoError(t, c.EndSession(ctx, "s1", t0))
		_, err := c.AddMessage(ctx, channel.Message{ID: "late", SessionID: "s1", SenderAgentID: "host", Role: channel.RoleHost, Content: "x", CreatedAt: t0})
		assert.ErrorIs(t, err, channel.ErrConflict)
		_, err = c.AddMessage(ctx, channel.Message{ID: "none", SessionID: "nope", SenderAgentID: "host", Role: channel.RoleHost, Content: "x", CreatedAt: t0})
		assert.ErrorIs(t, err, channel.ErrNotFound)
		assert.ErrorIs(t, c.EndSession(ctx, "s1", t0), channel.ErrConflict)
		assert.ErrorIs(t, c.EndSession(ctx, "nope", t0), channel.ErrNotFound)
	})
}

// TestChannelStoreMessagesMore: Messages says whether messages follow the ones it
// returns, from its own read, at every bound: the count (limit), the bytes (maxBytes,
// a larger message alone) and the end of the session.
func TestChannelStoreMessagesMore(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		c := liveSessions(t, b, "s")
		ctx := context.Background()
		for i := range 5 { // sequences 1..5 of 10 bytes each
			_, err := c.AddMessage(ctx, channel.Message{ID: fmt.Sprintf("m%d", i), SessionID: "s", SenderAgentID: "host",
				Role: channel.RoleHost, Content: fmt.Sprintf("message-%02d", i), CreatedAt: t0})
			require.NoError(t, err)
		}
		for _, tc := range []struct {
			since           int64
			limit, maxBytes int
			want            []int64 // sequences
			more            bool
		}{
			{since: 0, limit: 4, want: []int64{1, 2, 3, 4}, more: true},
			{since: 0, limit: 5, want: []int64{1, 2, 3, 4, 5}},
			{since: 0, limit: 6, want: []int64{1, 2, 3, 4, 5}},
			{since: 4, limit: 1, want: []int64{5}},
			{since: 3, limit: 1, want: []int64{4}, more: true},
			{since: 5, limit: 3, want: []int64{}},
			{since: 0, limit: 0, want: []int64{}},
			{since: 0, limit: 5, maxBytes: 30, want: []int64{1, 2, 3}, more: true},
			{since: 0, limit: 5, maxBytes: 39, want: []int64{1, 2, 3}, more: true},
			{since: 0, limit: 5, maxBytes: 50, want: []int64{1, 2, 3, 4, 5}},
			{since: 0, limit: 4, maxBytes: 1000, want: []int64{1, 2, 3, 4}, more: true},
			{since: 0, limit: 5, maxBytes: 5, want: []int64{1}, more: true},
			{since: 4, limit: 5, maxBytes: 5, want: []int64{5}},
			{since: 2, limit: 3, maxBytes: 30, want: []int64{3, 4, 5}},
			{since: 5, limit: 3, maxBytes: 30, want: []int64{}},
			{since: 0, limit: 0, maxBytes: 30, want: []int64{}},
		} {
			msgs, more, err := c.Messages(ctx, "s", tc.since, tc.limit, tc.maxBytes)
			require.NoError(t, err)
			got := []int64{}
			for _, m := range msgs {
				got = append(got, m.Sequence)
			}
			assert.Equal(t, tc.want, got, "%+v", tc)
			assert.Equal(t, tc.more, more, "%+v", tc)
		}
	})
}
