// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoServer answers each line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line over c and reads the answer.
func roundTrip(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err := bufio.NewReader(c).ReadString('\n')
	return err
}

// TestProxyCutAndRestore: the outage the store-outage scenarios rely on is real for the
// client: cut closes an open connection and refuses new ones; restore forwards again.
func TestProxyCutAndRestore(t *testing.T) {
	p, err := newProxy(echoServer(t))
	require.NoError(t, err)
	defer p.close()
	addr := p.ln.Addr().String()

	open, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer open.Close()
	require.NoError(t, roundTrip(open), "forwarded while up")

	p.cut()
	assert.Error(t, roundTrip(open), "an open connection is closed by the cut")
	assert.Equal(t, int64(1), p.closed.Load())
	refused, err := net.Dial("tcp", addr)
	require.NoError(t, err, "the proxy still listens")
	assert.Error(t, roundTrip(refused), "a new connection is closed at once")
	_ = refused.Close()
	require.Eventually(t, func() bool { return p.refused.Load() == 1 }, time.Second, 10*time.Millisecond)

	p.restore()
	again, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer again.Close()
	assert.NoError(t, roundTrip(again), "forwarded after the restore")
}
