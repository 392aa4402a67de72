// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/channel"
)

// TestChannelStoreSequences appends from many goroutines to two sessions through the
// store (below the HTTP tests of the receiver): gapless sequences per session, and the
// end of a session refuses later messages.
func TestChannelStoreSequences(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		st, _, _ := open(t, b)
		c, ok := ChannelOf(st)
		require.True(t, ok)
		ctx := context.Background()
		for _, id := range []string{"s1", "s2"} {
			require.NoError(t, c.CreateSession(ctx, channel.Session{ID: id, EvaluationID: "class", Kind: channel.KindLiveClassWork,
				Status: channel.SessionActive, StartedAt: t0, Participants: []channel.Participant{
					{ID: id + "-p", AgentID: "host", Role: channel.RoleHost, JoinedAt: t0}}}))
		}
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
			msgs, err := c.Messages(ctx, id, 0, 100, 0)
			require.NoError(t, err)
			require.Len(t, msgs, 20)
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
