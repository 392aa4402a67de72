// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/agenteval/agenteval-collector/internal/storagetest"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

// outageProxy stands between the exporter and PostgreSQL: while down it closes every
// connection at once (the server is unreachable), while up it forwards them.
type outageProxy struct {
	ln     net.Listener
	target string
	up     atomic.Bool
	wg     sync.WaitGroup
}

func newOutageProxy(t *testing.T, target string) *outageProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &outageProxy{ln: ln, target: target}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !p.up.Load() {
				_ = c.Close()
				continue
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.forward(c)
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	return p
}

func (p *outageProxy) forward(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
}

// TestPostgresOutageAcrossRestart: PostgreSQL is unreachable when the collector starts,
// while 100 sessions end, when it is stopped (SIGTERM) and when it starts again; then
// it comes back: every analysis is stored, and the spans never waited (ConsumeTraces
// returned at once).
func TestPostgresOutageAcrossRestart(t *testing.T) {
	const sessions = 100
	dsn := storetest.PostgresDSN(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := newOutageProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	queueDir := t.TempDir()

	cfg := persistentConfig(u.String())
	cfg.Store.Driver = StoreDriverPostgres
	ext, stopExt := storagetest.StartFileStorage(t, queueDir)
	x := startTestExporter(t, cfg, func(e *agentEvalExporter) { e.connectBackoff = 20 * time.Millisecond },
		map[component.ID]component.Component{storagetest.FileStorageID: ext})
	assert.Contains(t, x.host.statuses(), componentstatus.StatusRecoverableError)
	var slowest time.Duration
	for i := range sessions {
		a := analysisCheckout()
		a.SessionID = fmt.Sprintf("pg-sess-%03d", i)
		start := time.Now()
		require.NoError(t, x.consume(newSpanBuilder(t).session(a).traces()))
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("slowest ConsumeTraces with PostgreSQL down: %s", slowest)
	assert.Less(t, slowest, time.Second, "the pipeline does not wait for the store")
	require.NoError(t, x.te.Shutdown(context.Background()))
	stopExt()

	ext2, _ := storagetest.StartFileStorage(t, queueDir)
	cfg2 := persistentConfig(u.String())
	cfg2.Store.Driver = StoreDriverPostgres
	cfg2.SigningKey = "a-new-process-has-a-new-key"
	x2 := newTestExporterWithExtensions(t, cfg2, func(e *agentEvalExporter) { e.connectBackoff = 20 * time.Millisecond },
		map[component.ID]component.Component{storagetest.FileStorageID: ext2})
	time.Sleep(100 * time.Millisecond) // a few failed connection attempts
	proxy.up.Store(true)
	require.Eventually(t, func() bool {
		if !x2.exp.isReady() {
			return false
		}
		return len(x2.sessionIDs("?limit=1000")) == sessions
	}, 30*time.Second, 50*time.Millisecond, "every analysis queued during the outage is stored")
	t.Logf("PostgreSQL down at start, Shutdown, restart, back: analyses sent %d, stored %d", sessions, len(x2.sessionIDs("?limit=1000")))
}
