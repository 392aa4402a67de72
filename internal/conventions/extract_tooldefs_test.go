// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// A cache entry is found by hash and length; it is used only when its bytes are the
// definitions asked for, so a hash collision never hands out another agent's tools.
func TestToolDefCacheComparesContent(t *testing.T) {
	c := newExToolDefCache()
	a := []byte(`[{"name":"issue_refund"}]`)
	b := []byte(`[{"name":"delete_user!"}]`) // same length
	require.Equal(t, len(a), len(b))
	k := c.key(a, 4096)
	c.put(k, a, []session.ToolDefinition{{Name: "issue_refund"}}, 0)

	defs, _, ok := c.get(k, a)
	require.True(t, ok)
	assert.Equal(t, "issue_refund", defs[0].Name)

	_, _, ok = c.get(k, b) // b under a's key: what a collision would look like
	assert.False(t, ok, "a colliding key with other bytes is a miss")
}
