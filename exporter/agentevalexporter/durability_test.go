// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/agenteval/agenteval-collector/internal/storagetest"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// TestDefaultsRetryWithoutGivingUp: an outage longer than exporterhelper's default 5m
// max_elapsed_time must not drop analyses; the queue's size bounds the backlog.
func TestDefaultsRetryWithoutGivingUp(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.True(t, cfg.RetryConfig.Enabled)
	assert.Zero(t, cfg.RetryConfig.MaxElapsedTime, "no give-up")
	q := cfg.QueueConfig.Get()
	require.NotNil(t, q)
	assert.Positive(t, q.QueueSize, "the queue is bounded")
}

// persistentConfig is the exporter of config.yaml: a sending queue on file_storage,
// retries without give-up (fast here), the store at dsn.
func persistentConfig(dsn string) *Config {
	cfg := testConfig()
	q := exporterhelper.NewDefaultQueueConfig()
	id := storagetest.FileStorageID
	q.StorageID = &id
	cfg.QueueConfig = configoptional.Some(q)
	cfg.RetryConfig.Enabled = true
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 50 * time.Millisecond
	cfg.RetryConfig.MaxElapsedTime = 0
	cfg.Store.DSN = configopaque.String(dsn)
	return cfg
}

// TestShutdownWithTheStoreDownLosesNothing: analyses that could not be stored when the
// collector stops (SIGTERM: Shutdown) wait in the persistent queue and are all stored
// after a restart with the store back. The restarted process has another signing key
// (a random per-process key changes at every start): what is queued was verified on
// the way in.
func TestShutdownWithTheStoreDownLosesNothing(t *testing.T) {
	const sessions = 100
	queueDir, dsn := t.TempDir(), filepath.Join(t.TempDir(), "agenteval.db")

	// First run: the store is down the whole time.
	ext, stopExt := storagetest.StartFileStorage(t, queueDir)
	cfg := persistentConfig(dsn)
	down := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	x := startTestExporter(t, cfg, func(e *agentEvalExporter) {
		e.openStore = func(context.Context, string, string) (store.Store, error) { return nil, down }
		e.connectBackoff = time.Hour
	}, map[component.ID]component.Component{storagetest.FileStorageID: ext})
	for i := range sessions {
		a := analysisCheckout()
		a.SessionID = fmt.Sprintf("sess-%03d", i)
		require.NoError(t, x.consume(newSpanBuilder(t).session(a).traces()))
	}
	start := time.Now()
	require.NoError(t, x.te.Shutdown(context.Background()))
	t.Logf("shutdown with %d analyses queued and the store down took %s", sessions, time.Since(start))
	stopExt()

	// Restart with the store up, another signing key, the same queue directory.
	ext2, _ := storagetest.StartFileStorage(t, queueDir)
	cfg2 := persistentConfig(dsn)
	cfg2.SigningKey = "a-new-process-has-a-new-key"
	x2 := newTestExporterWithExtensions(t, cfg2, nil, map[component.ID]component.Component{storagetest.FileStorageID: ext2})
	require.Eventually(t, func() bool {
		return len(x2.sessionIDs("?limit=1000")) == sessions
	}, 20*time.Second, 20*time.Millisecond, "every analysis queued before the shutdown is stored")
	t.Logf("SQLite down, Shutdown, restart: analyses sent %d, stored %d", sessions, len(x2.sessionIDs("?limit=1000")))
}

// TestStartsWhileTheStoreIsDown: an unwritable SQLite path at start no longer stops the
// collector: Start succeeds with a RecoverableError status, metrics are served, the
// API answers 503, analyses wait in the queue, and once the path is writable the
// store opens and every analysis is stored.
func TestStartsWhileTheStoreIsDown(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "volume")
	require.NoError(t, os.WriteFile(blocker, []byte("not a directory"), 0o600))
	cfg := testConfig()
	cfg.QueueConfig = configoptional.Some(exporterhelper.NewDefaultQueueConfig())
	cfg.RetryConfig.Enabled = true
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 50 * time.Millisecond
	cfg.RetryConfig.MaxElapsedTime = 0
	cfg.Store.DSN = configopaque.String(filepath.Join(blocker, "agenteval.db"))
	x := newTestExporter(t, cfg, func(e *agentEvalExporter) { e.connectBackoff = 20 * time.Millisecond })

	assert.Contains(t, x.host.statuses(), componentstatus.StatusRecoverableError)
	resp, err := http.Get(x.apiURL("/api/v1/agent_sessions"))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	// A browser asking for a page gets the UI's error page; the API stays JSON.
	for path, want := range map[string]string{"/": "text/html; charset=utf-8", "/live": "text/html; charset=utf-8", "/api/v1/agent_sessions": "application/json"} {
		req, err := http.NewRequest(http.MethodGet, x.apiURL(path), http.NoBody)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, path)
		assert.Equal(t, want, resp.Header.Get("Content-Type"), path)
		assert.Equal(t, "5", resp.Header.Get("Retry-After"), path)
		if strings.HasPrefix(want, "text/html") {
			assert.Contains(t, string(body), "The result store is not reachable yet, so these pages cannot be shown.", path)
			assert.Contains(t, string(body), `<link rel="stylesheet" href="/static/style.css">`, path)
			assert.Contains(t, string(body), `<meta http-equiv="refresh" content="5">`, path+": reloads itself until the store is up")
		}
	}
	css, err := http.Get(x.apiURL("/static/style.css"))
	require.NoError(t, err)
	require.NoError(t, css.Body.Close())
	assert.Equal(t, http.StatusOK, css.StatusCode, "the error page's stylesheet")

	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(false)).traces()))
	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn1(true)).session(analysisCheckout()).traces()))
	require.NoError(t, x.consume(newSpanBuilder(t).session(analysisSupport()).traces()))
	// Per-turn metrics do not wait for the store.
	assert.Equal(t, 3, countSeries(t, x.scrape(), "agent_eval_tool_calls_total", nil))

	// The volume is mounted.
	require.NoError(t, os.Remove(blocker))
	require.NoError(t, os.Mkdir(blocker, 0o700))
	require.Eventually(t, func() bool {
		resp, err := http.Get(x.apiURL("/api/v1/agent_sessions"))
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK && len(x.sessionIDs("")) == 2
	}, 20*time.Second, 20*time.Millisecond)
	st := x.host.statuses()
	assert.Equal(t, componentstatus.StatusOK, st[len(st)-1], "recovered: %v", st)
}

// TestTurnMetricsDoNotWaitForTheStore: with the store down and the queue's only
// consumer retrying a batch of analyses, later turn results still reach the metrics at
// once (they are handled before the queue).
func TestTurnMetricsDoNotWaitForTheStore(t *testing.T) {
	cfg := persistentConfig("")
	q := exporterhelper.NewDefaultQueueConfig()
	q.NumConsumers = 1
	cfg.QueueConfig = configoptional.Some(q)
	x := newTestExporter(t, cfg, func(e *agentEvalExporter) {
		e.openStore = func(context.Context, string, string) (store.Store, error) {
			return nil, errors.New("connection refused")
		}
		e.connectBackoff = time.Hour
	})
	require.NoError(t, x.consume(newSpanBuilder(t).session(analysisCheckout()).traces()))
	require.NoError(t, x.consume(newSpanBuilder(t).session(analysisSupport()).traces()))
	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(false)).traces()))
	assert.Equal(t, 3, countSeries(t, x.scrape(), "agent_eval_tool_calls_total", nil))
}
