// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// TestCollectorStartsWithTheStoreDown: the result store's SQLite path cannot be
// created when the collector starts (a file where its directory should be; with
// PostgreSQL, an unreachable server). The collector starts anyway, the application's
// spans pass through to the other exporter, the query API answers 503, and once the
// path is writable the session's analysis is stored. Before, the collector exited.
func TestCollectorStartsWithTheStoreDown(t *testing.T) {
	dir := t.TempDir()
	volume := filepath.Join(dir, "volume")
	require.NoError(t, os.WriteFile(volume, []byte("not mounted"), 0o600))
	ep := endpoints{grpc: freePort(t), http: freePort(t), prom: freePort(t), api: freePort(t)}
	sink := new(consumertest.TracesSink)
	stop := runCollector(t, collectorConfig(ep, filepath.Join(volume, "agenteval.db"), ""), sink)
	defer stop()

	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(ep.http), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	sent := runAgents(t, tp, "sess-store-down")
	require.NoError(t, tp.Shutdown(ctx))

	appSpans := func() int {
		n := 0
		for _, td := range sink.AllTraces() {
			forEach(td, func(sp ptrace.Span) {
				if _, ok := sp.Attributes().Get(semconv.AgentEvalKind); !ok {
					n++
				}
			})
		}
		return n
	}
	require.Eventually(t, func() bool { return appSpans() == sent }, 10*time.Second, 20*time.Millisecond,
		"every application span passes through while the store is down")
	require.Eventually(t, func() bool { return len(evalSpansOf(sink, semconv.EvalKindAgentSession)) == 1 },
		20*time.Second, 50*time.Millisecond, "the session is evaluated")
	code, _ := get(t, "http://"+ep.api+"/api/v1/agent_sessions")
	assert.Equal(t, http.StatusServiceUnavailable, code)

	require.NoError(t, os.Remove(volume))
	require.NoError(t, os.Mkdir(volume, 0o700))
	require.Eventually(t, func() bool {
		code, _ := get(t, "http://"+ep.api+"/api/v1/agent_sessions/sess-store-down")
		return code == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond, "stored once the store is reachable")
	t.Logf("store down at start: application spans in %d, out %d; analyses sent 1, stored 1", sent, appSpans())
}
