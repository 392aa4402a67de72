// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// memoryCollector runs the test pipeline with the SQLite store at db and the
// continuation state in memory (no continuation.driver) unless extra sets it; extra
// (indented by 4) is added to the processor's keys. It returns the endpoints and a sender of one turn.
func memoryCollector(t *testing.T, db, extra string) (endpoints, func(id, user string), func()) {
	t.Helper()
	ep := endpoints{grpc: freePort(t), http: freePort(t), prom: freePort(t), api: freePort(t)}
	stop := runCollector(t, collectorConfig(ep, db, extra), new(consumertest.TracesSink))
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(ep.http), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	send := func(id, user string) {
		chatTurn(tp, id, user)
		time.Sleep(300 * time.Millisecond) // the turn closes (turn_settle) before the next
	}
	return ep, send, func() {
		assert.NoError(t, tp.Shutdown(context.Background()))
		stop()
	}
}

// storedSession waits until the query API returns session id at revision rev, and
// returns it.
func storedSession(t *testing.T, api, id string, rev int) evaluation.Analysis {
	t.Helper()
	var a evaluation.Analysis
	require.Eventually(t, func() bool {
		code, body := get(t, "http://"+api+"/api/v1/agent_sessions/"+id)
		return code == http.StatusOK && json.Unmarshal(body, &a) == nil && a.AnalysisRevision >= rev
	}, 20*time.Second, 50*time.Millisecond, "session %s stored at revision %d", id, rev)
	return a
}

// checkWhole checks that a holds the turns whose user messages are users, in order, at
// indexes 0, 1, ...
func checkWhole(t *testing.T, a evaluation.Analysis, users ...string) {
	t.Helper()
	require.Len(t, a.TurnResults, len(users), "every turn stored")
	for i, tr := range a.TurnResults {
		assert.Equal(t, i, tr.TurnIndex)
		assert.Equal(t, users[i], tr.UserMessage, "turn %d", i)
	}
}

// TestRestartWithoutContinuationStoreKeepsEveryTurn: a collector without
// continuation.driver stores a two-turn session and is restarted; the session id comes
// back on the new collector, which knows nothing of it (turn index 0, revision 1 again).
// The result store places the new part after the stored turns: the API returns the
// three turns in order, at revision 2 (docs/decisions/sessions.md §4.6). Before, the
// new part replaced the stored analysis and its turns.
func TestRestartWithoutContinuationStoreKeepsEveryTurn(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agenteval.db")
	const id = "mem-restart-1"
	users := []string{"where is order 100?", "and order 101?", "thanks, and order 102?"}

	ep, send, stop := memoryCollector(t, db, "")
	send(id, users[0])
	send(id, users[1])
	checkWhole(t, storedSession(t, ep.api, id, 1), users[:2]...)
	stop()

	ep, send, stop = memoryCollector(t, db, "")
	defer stop()
	send(id, users[2])
	a := storedSession(t, ep.api, id, 2)
	assert.Equal(t, 2, a.AnalysisRevision)
	checkWhole(t, a, users...)
}

// TestForgottenSessionKeepsEveryTurn: with continuation.max_records 1 the collector
// forgets a session whole (its records, then its counters, once 4 × max_records other
// sessions were dropped after it); when the session comes back it is numbered from 0
// and 1 again, and the store places it after the stored turns.
func TestForgottenSessionKeepsEveryTurn(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agenteval.db")
	const id = "mem-forgotten-1"
	users := []string{"where is order 200?", "and order 201?", "thanks, and order 202?"}
	ep, send, stop := memoryCollector(t, db, `
    continuation: {max_records: 1}`)
	defer stop()
	send(id, users[0])
	send(id, users[1])
	storedSession(t, ep.api, id, 1)
	const others = 6
	for i := range others {
		send(fmt.Sprintf("other-%d", i), "where is order 300?")
	}
	for i := range others {
		storedSession(t, ep.api, fmt.Sprintf("other-%d", i), 1)
	}
	send(id, users[2])
	a := storedSession(t, ep.api, id, 2)
	assert.Equal(t, 2, a.AnalysisRevision)
	checkWhole(t, a, users...)
}

// TestLongSessionWithContinuationStoreKeepsEveryTurn: with the continuation state in the
// result store's SQLite file, a conversation of 40 turns (more than the 32 records an open
// session holds before it releases the older ones, docs/decisions/sessions.md §4.2.2) is
// cut by a shutdown, then goes on with 3 turns on a new collector: the shutdown's analysis
// holds the 40 turns, taken back from the store, and the next revision all 43, in order.
func TestLongSessionWithContinuationStoreKeepsEveryTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 40 turns through a collector take some 15 s")
	}
	db := filepath.Join(t.TempDir(), "agenteval.db")
	extra := fmt.Sprintf(`
    continuation: {driver: sqlite, dsn: %q}`, db)
	const id = "long-continued-1"
	users := make([]string, 43)
	for i := range users {
		users[i] = fmt.Sprintf("where is order %d?", 500+i)
	}
	ep, send, stop := memoryCollector(t, db, extra)
	for _, u := range users[:40] {
		send(id, u)
	}
	stop() // the session is open: the shutdown analyses it, partial
	ep, send, stop = memoryCollector(t, db, extra)
	defer stop()
	checkWhole(t, storedSession(t, ep.api, id, 1), users[:40]...)
	for _, u := range users[40:] {
		send(id, u)
	}
	a := storedSession(t, ep.api, id, 2)
	assert.Equal(t, 2, a.AnalysisRevision)
	checkWhole(t, a, users...)
}

// TestSecondTierStoresEveryTurnOfALongSession: one collector evaluates (otlp →
// agentsession → otlp) and a second one stores what it receives (otlp → agenteval), as
// DESIGN §6 requires the evaluation spans to allow. A conversation whose session span is
// over emit.max_session_span_bytes (64 KiB here; 40 turns of about 7 KB each) reaches the
// second collector as the session span with its newest turns and turns parts with the
// others; it stores all 40 turns, in order, and counts one analysis
// (docs/decisions/sessions.md §4.10). Before the turns parts it stored the newest turns
// only.
func TestSecondTierStoresEveryTurnOfALongSession(t *testing.T) {
	const (
		id    = "long-second-tier-1"
		turns = 40
		key   = "e2e-second-tier-signing-key"
	)
	storer := endpoints{grpc: freePort(t), prom: freePort(t), api: freePort(t)}
	f := testFactories(t, new(consumertest.TracesSink)) // and the OTLP exporter of the first tier
	otlp := otlpexporter.NewFactory()
	f.Exporters[otlp.Type()] = otlp
	stopStorer := runCollectorWith(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: %q}
exporters:
  agenteval:
    signing_key: %q
    store: {driver: sqlite, dsn: %q}
    prometheus: {endpoint: %q}
    api: {endpoint: %q}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces: {receivers: [otlp], exporters: [agenteval]}
`, storer.grpc, key, filepath.Join(t.TempDir(), "agenteval.db"), storer.prom, storer.api), f)
	defer stopStorer()
	evaluatorHTTP := freePort(t)
	stopEvaluator := runCollectorWith(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http: {endpoint: %q}
processors:
  agentsession:
    turn_settle: 200ms
    turn_timeout: 5s
    session_timeout: 2s
    signing_key: %q
    emit: {max_session_span_bytes: 65536}
exporters:
  otlp_grpc:
    endpoint: %q
    tls: {insecure: true}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces: {receivers: [otlp], processors: [agentsession], exporters: [otlp_grpc]}
`, evaluatorHTTP, key, storer.grpc), f)
	defer stopEvaluator()

	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(evaluatorHTTP), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { assert.NoError(t, tp.Shutdown(context.Background())) }()
	users := make([]string, turns)
	for i := range users {
		users[i] = fmt.Sprintf("turn %d: where is order %d? %s", i, 1000+i, strings.Repeat("The parcel was promised for Monday. ", 100))
		chatTurn(tp, id, users[i])
	}
	a := storedSession(t, storer.api, id, 1)
	require.Eventually(t, func() bool {
		a = storedSession(t, storer.api, id, 1)
		return len(a.TurnResults) == turns
	}, 20*time.Second, 100*time.Millisecond, "every turn stored; %d so far", len(a.TurnResults))
	checkWhole(t, a, users...)
	sessions := func() float64 { // agent_eval_sessions_total, over its labels
		_, body := get(t, "http://"+storer.prom+"/metrics")
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
		require.NoError(t, err)
		var n float64
		for _, m := range fams["agent_eval_sessions_total"].GetMetric() {
			n += m.GetCounter().GetValue()
		}
		return n
	}
	// The counter follows the batch's save, which the API may show first.
	require.Eventually(t, func() bool { return sessions() > 0 }, 10*time.Second, 50*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // any other save of the session would be counted by now
	assert.InDelta(t, 1.0, sessions(), 0, "one analysis counted, not one a turns part")
}
