// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package ports

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFreeIsUniqueAndBelowTheEphemeralRange: every address is bindable, none is handed
// out twice, and none lies in the kernel's ephemeral range.
func TestFreeIsUniqueAndBelowTheEphemeralRange(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		addr, err := Free()
		require.NoError(t, err)
		assert.False(t, seen[addr], "%s handed out twice", addr)
		seen[addr] = true
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		p, err := strconv.Atoi(port)
		require.NoError(t, err)
		assert.Less(t, p, ephemeralLow())
		l, err := net.Listen("tcp", addr)
		require.NoError(t, err, "bindable")
		require.NoError(t, l.Close())
	}
}

// TestFreeSkipsAPortInUse: a port something listens on is not handed out.
func TestFreeSkipsAPortInUse(t *testing.T) {
	addr, err := Free()
	require.NoError(t, err)
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	defer l.Close()
	state.Lock()
	_, port, _ := net.SplitHostPort(addr)
	state.next, _ = strconv.Atoi(port) // the next probe is the busy port
	state.Unlock()
	next, err := Free()
	require.NoError(t, err)
	assert.NotEqual(t, addr, next)
}
