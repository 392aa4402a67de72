// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package ports hands out loopback ports for the collectors that the end-to-end tests and
// the fault runner start, which bind them a moment after they are chosen.
package ports // import "github.com/agenteval/agenteval-collector/e2e/internal/ports"

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

var state struct {
	sync.Mutex
	next, low, high int
}

// Free returns a loopback address ("127.0.0.1:port") that nothing listens on now and
// that no other call in this process returned. The port is taken below the kernel's
// ephemeral range (ip_local_port_range): a port from "127.0.0.1:0" lies in that range,
// where an outgoing connection of any process on the machine may take it before the
// collector binds it (CI saw "bind: address already in use" that way), and the kernel
// may hand it to a second caller once the probe closed it. The error says when no port
// in the 12,000 below the range is free.
func Free() (string, error) {
	state.Lock()
	defer state.Unlock()
	if state.next == 0 {
		state.high = ephemeralLow()
		state.low = max(1024, state.high-12000)
		state.next = state.low + rand.IntN(state.high-state.low)
	}
	for range state.high - state.low {
		p := state.next
		if state.next++; state.next >= state.high {
			state.next = state.low
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue // something listens there
		}
		addr := l.Addr().String()
		if err := l.Close(); err != nil {
			return "", fmt.Errorf("close the probe of %s: %w", addr, err)
		}
		return addr, nil
	}
	return "", fmt.Errorf("no free loopback port in [%d, %d)", state.low, state.high)
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's default, 32768,
// when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 2048 {
		return 32768
	}
	return n
}
