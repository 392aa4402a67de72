// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestKill9WithTheStoreDownLosesNothing runs a real collector process (e2e/internal/faultcol:
// otlp -> agentsession -> agenteval with config.yaml's persistent queue and retries). The
// result store cannot be opened; sessions end; the process is killed with SIGKILL (no
// shutdown at all). After a restart with the store reachable, every analysis is stored.
// With the in-memory queue, a fault run lost 100/100 here.
func TestKill9WithTheStoreDownLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs a collector process (CI runs it)")
	}
	const sessions = 20
	dir := t.TempDir()
	bin := filepath.Join(dir, "faultcol")
	build := exec.Command("go", "build", "-o", bin, "./internal/faultcol")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	volume := filepath.Join(dir, "volume")
	require.NoError(t, os.WriteFile(volume, []byte("not mounted"), 0o600))
	ep := endpoints{grpc: freePort(t), http: freePort(t), prom: freePort(t), api: freePort(t)}
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http: {endpoint: %q}
processors:
  agentsession:
    turn_settle: 200ms
    turn_timeout: 5s
    session_timeout: 2s
exporters:
  agenteval:
    store: {driver: sqlite, dsn: %q}
    prometheus: {endpoint: %q}
    api: {endpoint: %q}
    sending_queue: {storage: file_storage/agenteval}
    retry_on_failure: {initial_interval: 50ms, max_interval: 200ms, max_elapsed_time: 0}
extensions:
  file_storage/agenteval: {directory: %q, create_directory: true}
service:
  extensions: [file_storage/agenteval]
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces: {receivers: [otlp], processors: [agentsession], exporters: [agenteval]}
`, ep.http, filepath.Join(volume, "agenteval.db"), ep.prom, ep.api, filepath.Join(dir, "queue"))), 0o600))

	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "--config", cfgPath)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool {
			c, err := net.Dial("tcp", ep.http)
			if err == nil {
				_ = c.Close()
			}
			return err == nil
		}, 30*time.Second, 50*time.Millisecond, "the collector listens")
		return cmd
	}
	col := start()

	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(ep.http), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	for i := range sessions {
		runAgents(t, tp, fmt.Sprintf("crash-%02d", i))
	}
	require.NoError(t, tp.Shutdown(ctx))
	// Every turn is evaluated (its interactions counted, before the queue); the sessions
	// end after session_timeout and their analyses are written to the persistent queue.
	var metrics string
	ok := assert.Eventually(t, func() bool {
		_, body := get(t, "http://"+ep.prom+"/metrics")
		metrics = string(body)
		return triageInteractions(metrics) >= 2*sessions
	}, 20*time.Second, 100*time.Millisecond, "the sessions are evaluated")
	require.True(t, ok, metrics)
	time.Sleep(4 * time.Second) // session_timeout 2s: the sessions end
	code, _ := get(t, "http://"+ep.api+"/api/v1/agent_sessions")
	require.Equal(t, 503, code, "the store is still down")

	require.NoError(t, col.Process.Signal(syscall.SIGKILL))
	_ = col.Wait()

	require.NoError(t, os.Remove(volume))
	require.NoError(t, os.Mkdir(volume, 0o700))
	col = start()
	defer func() {
		_ = col.Process.Signal(syscall.SIGTERM)
		_ = col.Wait()
	}()
	var stored int
	require.Eventually(t, func() bool {
		code, body := get(t, "http://"+ep.api+"/api/v1/agent_sessions?limit=1000")
		stored = strings.Count(string(body), `"session_id":"crash-`)
		return code == 200 && stored == sessions
	}, 30*time.Second, 100*time.Millisecond, "every analysis accepted before the kill is stored")
	t.Logf("kill -9 with the store down: analyses sent %d, stored after restart %d", sessions, stored)
}

// triageInteractions reads the triage agent's interaction count in a Prometheus text
// exposition.
func triageInteractions(body string) int {
	n := 0
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, `agent_eval_agent_interaction_duration_seconds_count{agent="triage"}`) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
			n += int(v)
		}
	}
	return n
}
