// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
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
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestKill9WithTheStoreDownLosesNothing runs a real collector process (e2e/internal/faultcol:
// otlp -> agentsession -> agenteval with config.yaml's persistent queue, retries and handoff). The
// result store cannot be opened; sessions end; the process is killed with SIGKILL (no
// shutdown at all). After a restart with the store reachable, every analysis is stored.
// With the in-memory queue, a fault run lost 100/100 here.
func TestKill9WithTheStoreDownLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs a collector process (CI runs it)")
	}
	const sessions = 20
	dir := t.TempDir()
	bin := buildFaultcol(t, dir)

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
    handoff: agenteval_handoff
    turn_settle: 200ms
    turn_timeout: 5s
    session_timeout: 2s
exporters:
  agenteval:
    handoff: agenteval_handoff
    store: {driver: sqlite, dsn: %q}
    prometheus: {endpoint: %q}
    api: {endpoint: %q}
    sending_queue: {storage: file_storage/agenteval}
    retry_on_failure: {initial_interval: 50ms, max_interval: 200ms, max_elapsed_time: 0}
extensions:
  file_storage/agenteval: {directory: %q, create_directory: true}
  agenteval_handoff:
service:
  extensions: [file_storage/agenteval, agenteval_handoff]
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces: {receivers: [otlp], processors: [agentsession], exporters: [agenteval]}
`, ep.http, filepath.Join(volume, "agenteval.db"), ep.prom, ep.api, filepath.Join(dir, "queue"))), 0o600))

	start := func() *exec.Cmd { return startProcess(t, bin, cfgPath, ep.http) }
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

// buildFaultcol builds e2e/internal/faultcol into dir.
func buildFaultcol(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "faultcol")
	build := exec.Command("go", "build", "-o", bin, "./internal/faultcol")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	return bin
}

// startProcess starts a collector binary with a config file and waits until it listens
// on addr.
func startProcess(t *testing.T, bin, cfgPath, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	require.NoError(t, cmd.Start())
	waitListening(t, addr)
	return cmd
}

// waitListening waits until something listens on addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "the collector listens on %s", addr)
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

// TestKill9SessionsRecoveredAsPartial: a real collector process with `continuation` on
// its SQLite store closes three turns of each of 5 sessions and is killed with SIGKILL
// before the sessions end (session_timeout 8s). After a restart no span of them arrives:
// the recovery sweep analyses each once, and the store holds it with partial=true, end
// reason restart and every turn once (docs/decisions/result-durability.md).
func TestKill9SessionsRecoveredAsPartial(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs a collector process (CI runs it)")
	}
	const sessions, turns = 5, 3
	dir := t.TempDir()
	bin := buildFaultcol(t, dir)
	ep := endpoints{http: freePort(t), prom: freePort(t), api: freePort(t)}
	db := filepath.Join(dir, "agenteval.db")
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http: {endpoint: %q}
processors:
  agentsession:
    handoff: agenteval_handoff
    turn_settle: 200ms
    turn_timeout: 5s
    session_timeout: 8s
    continuation: {driver: sqlite, dsn: %[2]q}
exporters:
  agenteval:
    handoff: agenteval_handoff
    store: {driver: sqlite, dsn: %[2]q}
    prometheus: {endpoint: %q}
    api: {endpoint: %q}
    sending_queue: {storage: file_storage/agenteval}
extensions:
  file_storage/agenteval: {directory: %q, create_directory: true}
  agenteval_handoff:
service:
  extensions: [file_storage/agenteval, agenteval_handoff]
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces: {receivers: [otlp], processors: [agentsession], exporters: [agenteval]}
`, ep.http, db, ep.prom, ep.api, filepath.Join(dir, "queue"))), 0o600))

	col := startProcess(t, bin, cfgPath, ep.http)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(ep.http), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	for turn := range turns {
		for i := range sessions {
			chatTurn(tp, fmt.Sprintf("cut-%d", i), fmt.Sprintf("question %d of session %d about order %d", turn, i, 100+turn))
		}
		time.Sleep(300 * time.Millisecond) // each turn closes (turn_settle) before the next
	}
	require.NoError(t, tp.Shutdown(ctx))
	var metrics string
	ok := assert.Eventually(t, func() bool {
		_, body := get(t, "http://"+ep.prom+"/metrics")
		metrics = string(body)
		return triageInteractions(metrics) >= sessions*turns
	}, 6*time.Second, 50*time.Millisecond, "every turn is evaluated (its record saved) before session_timeout")
	require.True(t, ok, metrics)
	killed := time.Now()
	require.NoError(t, col.Process.Signal(syscall.SIGKILL))
	_ = col.Wait()

	col = startProcess(t, bin, cfgPath, ep.http)
	defer func() {
		_ = col.Process.Signal(syscall.SIGTERM)
		_ = col.Wait()
	}()
	code, body := get(t, "http://"+ep.api+"/api/v1/agent_sessions")
	require.Equal(t, 200, code)
	require.NotContains(t, string(body), `"session_id":"cut-`, "no session ended before the kill")

	type stored struct {
		Partial     bool   `json:"partial"`
		EndReason   string `json:"end_reason"`
		Revision    int    `json:"analysis_revision"`
		TurnResults []struct {
			TurnIndex int `json:"turn_index"`
		} `json:"turn_results"`
	}
	got := map[string]stored{}
	require.Eventually(t, func() bool {
		for i := range sessions {
			id := fmt.Sprintf("cut-%d", i)
			if _, ok := got[id]; ok {
				continue
			}
			code, body := get(t, "http://"+ep.api+"/api/v1/agent_sessions/"+id)
			if code != 200 {
				return false
			}
			var s stored
			require.NoError(t, json.Unmarshal(body, &s), string(body))
			got[id] = s
		}
		return true
	}, 40*time.Second, 200*time.Millisecond, "every session cut by the kill is analysed after the restart")
	recovered := time.Since(killed)
	for id, s := range got {
		assert.True(t, s.Partial, id)
		assert.Equal(t, "restart", s.EndReason, id)
		assert.Equal(t, 1, s.Revision, id)
		var idx []int
		for _, tr := range s.TurnResults {
			idx = append(idx, tr.TurnIndex)
		}
		assert.Equal(t, []int{0, 1, 2}, idx, "%s: every turn once", id)
	}
	t.Logf("kill -9 with sessions open: sessions cut %d (%d turns each), stored after restart %d, partial with end reason restart, %.1fs after the kill",
		sessions, turns, len(got), recovered.Seconds())
}

// chatTurn sends one turn of session id: an agent span with the user's message and an
// answer, and its LLM span.
func chatTurn(tp *sdktrace.TracerProvider, id, user string) {
	tr := tp.Tracer("e2e-crash")
	msg := func(role, text string) string {
		b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]any{{"type": "text", "content": text}}}})
		return string(b)
	}
	conv := attribute.String("gen_ai.conversation.id", id)
	ctx, root := tr.Start(context.Background(), "invoke_agent triage", trace.WithAttributes(conv,
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "triage"),
		attribute.String("gen_ai.input.messages", msg("user", user)),
		attribute.String("gen_ai.output.messages", msg("assistant", "Done: "+user))))
	_, llm := tr.Start(ctx, "chat gpt-4o", trace.WithAttributes(conv, attribute.String("gen_ai.operation.name", "chat")))
	llm.End()
	root.End()
}
