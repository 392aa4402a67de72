// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadatatest"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// These tests run the real exporter (exporterhelper + SQLite store + both HTTP servers on
// ephemeral loopback ports) and talk to it over HTTP only.

// testNow is the exporter's clock in tests: one hour after the fixtures' t0, so the
// 720h default retention never deletes fixture sessions.
var testNow = t0.Add(time.Hour)

type testExporter struct {
	t    *testing.T
	exp  *agentEvalExporter
	te   exporter.Traces
	tel  *componenttest.Telemetry
	host *statusHost
	dsn  string
}

// statusHost is a component.Host that records reported component statuses and offers
// the given extensions.
type statusHost struct {
	mu         sync.Mutex
	events     []componentstatus.Status
	extensions map[component.ID]component.Component
}

func (h *statusHost) GetExtensions() map[component.ID]component.Component { return h.extensions }

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev.Status())
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]componentstatus.Status(nil), h.events...)
}

// testConfig is the default config on ephemeral ports with a fresh SQLite file and no
// sending queue (ConsumeTraces returns once the batch is exported).
func testConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Prometheus.NetAddr.Endpoint = "localhost:0"
	cfg.API.NetAddr.Endpoint = "localhost:0"
	cfg.Store.DSN = "" // set by newTestExporter
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.Enabled = false
	return cfg
}

// newTestExporter creates the exporter through the same path as the factory, lets
// prepare adjust it (e.g. wrap the store), and starts it; it is shut down at cleanup.
func newTestExporter(t *testing.T, cfg *Config, prepare func(*agentEvalExporter)) *testExporter {
	t.Helper()
	return newTestExporterWithExtensions(t, cfg, prepare, map[component.ID]component.Component{})
}

func newTestExporterWithExtensions(t *testing.T, cfg *Config, prepare func(*agentEvalExporter), extensions map[component.ID]component.Component) *testExporter {
	t.Helper()
	x := startTestExporter(t, cfg, prepare, extensions)
	t.Cleanup(func() { require.NoError(t, x.te.Shutdown(context.Background())) })
	return x
}

// startTestExporter is newTestExporterWithExtensions without the Shutdown at cleanup.
func startTestExporter(t *testing.T, cfg *Config, prepare func(*agentEvalExporter), extensions map[component.ID]component.Component) *testExporter {
	t.Helper()
	if cfg.Store.DSN == "" {
		cfg.Store.DSN = configopaque.String(filepath.Join(t.TempDir(), "x.db"))
	}
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	exp, err := newAgentEvalExporter(set, cfg)
	require.NoError(t, err)
	exp.now = func() time.Time { return testNow }
	if prepare != nil {
		prepare(exp)
	}
	te, err := newTracesExporter(context.Background(), set, cfg, exp)
	require.NoError(t, err)
	host := &statusHost{extensions: extensions}
	require.NoError(t, te.Start(context.Background(), host))
	return &testExporter{t: t, exp: exp, te: te, tel: tel, host: host, dsn: string(cfg.Store.DSN)}
}

func (x *testExporter) consume(td ptrace.Traces) error {
	td.MarkReadOnly() // as the pipeline does for a non-mutating exporter
	return x.te.ConsumeTraces(context.Background(), td)
}

func (x *testExporter) metricsURL() string { return "http://" + x.exp.promAddr.String() + "/metrics" }

func (x *testExporter) apiURL(path string) string { return "http://" + x.exp.apiAddr.String() + path }

// scrape GETs /metrics over HTTP twice, as Prometheus does over time: the first scrape
// serves new series at zero and releases what was held back for them (firstScrape), the
// second is parsed; its zero-valued series are left out (firstscrape_test.go checks them).
func (x *testExporter) scrape() prometheus.Gatherer {
	x.t.Helper()
	first, err := http.Get(x.metricsURL())
	require.NoError(x.t, err)
	require.NoError(x.t, first.Body.Close())
	resp, err := http.Get(x.metricsURL())
	require.NoError(x.t, err)
	defer resp.Body.Close()
	require.Equal(x.t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(x.t, err)
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		out := make([]*dto.MetricFamily, 0, len(fams))
		for _, f := range fams {
			out = append(out, f)
		}
		slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
		return nonZero(out), nil
	})
}

// getJSON GETs an API path and decodes the JSON body into v.
func (x *testExporter) getJSON(path string, v any) int {
	x.t.Helper()
	resp, err := http.Get(x.apiURL(path))
	require.NoError(x.t, err)
	defer resp.Body.Close()
	assert.Equal(x.t, "application/json", resp.Header.Get("Content-Type"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(x.t, err)
	require.NoError(x.t, json.Unmarshal(body, v), string(body))
	return resp.StatusCode
}

func (x *testExporter) sessionIDs(query string) []string {
	x.t.Helper()
	var list SessionList
	require.Equal(x.t, http.StatusOK, x.getJSON("/api/v1/agent_sessions"+query, &list), query)
	ids := make([]string, 0, len(list.Sessions))
	for _, s := range list.Sessions {
		ids = append(ids, s.SessionID)
	}
	return ids
}

func TestExporterEndToEnd(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)

	// Batches in the order the processor emits them: turn 0 closes (non-final result, a
	// tool_call span for the faulty call) among application spans; turn 1's user
	// message yields turn 0's final verdict; an older session ends; the session ends
	// (stored last: first in the list, which is newest stored first).
	batches := []ptrace.Traces{
		newSpanBuilder(t).appSpan().turn(turn0(false)).toolCall().appSpan().traces(),
		newSpanBuilder(t).turn(turn0(true)).turn(turn1(false)).traces(),
		newSpanBuilder(t).session(analysisSupport()).traces(),
		newSpanBuilder(t).turn(turn1(true)).session(analysisCheckout()).traces(),
	}
	for i, td := range batches {
		require.NoError(t, x.consume(td), "batch %d", i)
	}

	// Prometheus, scraped over HTTP.
	expected := `
# HELP agent_eval_sessions_total Session analyses stored (each revision: a session continued after a pause counts again), by task completion (true, false, unknown) and partial (true, false).
# TYPE agent_eval_sessions_total counter
agent_eval_sessions_total{partial="false",task_completion="true"} 1
agent_eval_sessions_total{partial="true",task_completion="false"} 1
# HELP agent_eval_turns_total Turns with a final verdict, by detection type (none, rdm, ccm, no_answer, hallucination, llm_judge).
# TYPE agent_eval_turns_total counter
agent_eval_turns_total{detection_type="none"} 1
agent_eval_turns_total{detection_type="rdm"} 1
# HELP agent_eval_tool_calls_total Tool calls validated, by verdict (valid, invalid, not_evaluable).
# TYPE agent_eval_tool_calls_total counter
agent_eval_tool_calls_total{agent="executor",tool="lookup_order",valid="not_evaluable"} 1
agent_eval_tool_calls_total{agent="executor",tool="refund_order",valid="invalid"} 1
agent_eval_tool_calls_total{agent="executor",tool="refund_order",valid="valid"} 2
# HELP agent_eval_tool_issues_total Tool-use issues found, by issue type and severity.
# TYPE agent_eval_tool_issues_total counter
agent_eval_tool_issues_total{agent="executor",issue="PARAMETER_HALLUCINATION",severity="MEDIUM",tool="refund_order"} 1
# HELP agent_eval_handoffs_total Handoffs between agents.
# TYPE agent_eval_handoffs_total counter
agent_eval_handoffs_total{from_agent="planner",to_agent="executor"} 1
# HELP agent_eval_not_evaluable_total Checks that could not run, by check and reason.
# TYPE agent_eval_not_evaluable_total counter
agent_eval_not_evaluable_total{check="tool_validation",reason="schema_unknown"} 1
# HELP agent_eval_recommendations_total Recommendations issued in session analyses, by kind.
# TYPE agent_eval_recommendations_total counter
agent_eval_recommendations_total{kind="parameter_hallucination"} 1
agent_eval_recommendations_total{kind="tool_use"} 1
`
	require.NoError(t, testutil.GatherAndCompare(x.scrape(), strings.NewReader(expected),
		"agent_eval_sessions_total", "agent_eval_turns_total", "agent_eval_tool_calls_total",
		"agent_eval_tool_issues_total", "agent_eval_handoffs_total", "agent_eval_not_evaluable_total",
		"agent_eval_recommendations_total"))

	g := x.scrape()
	overall := findHistogram(t, g, "agent_eval_session_score", map[string]string{"metric": "overall"})
	assert.Equal(t, uint64(2), overall.count)
	assert.InDelta(t, 1.22, overall.sum, 1e-9)
	assert.Equal(t, uint64(1), overall.buckets[0.4])
	assert.Equal(t, uint64(1), overall.buckets[0.8])
	assert.Equal(t, uint64(2), overall.buckets[0.9])
	drift := findHistogram(t, g, "agent_eval_session_score", map[string]string{"metric": "intent_drift"})
	assert.Equal(t, uint64(1), drift.count)
	assert.InDelta(t, 0.15, drift.sum, 1e-9)
	execOverall := findHistogram(t, g, "agent_eval_agent_score", map[string]string{"agent": "executor", "metric": "overall"})
	assert.Equal(t, uint64(1), execOverall.count)
	assert.InDelta(t, 0.8, execOverall.sum, 1e-9)
	tool := findHistogram(t, g, "agent_eval_tool_call_duration_seconds", map[string]string{"agent": "executor", "tool": "refund_order"})
	assert.Equal(t, uint64(3), tool.count)
	assert.InDelta(t, 2.3, tool.sum, 1e-9)
	planner := findHistogram(t, g, "agent_eval_agent_interaction_duration_seconds", map[string]string{"agent": "planner"})
	assert.Equal(t, uint64(1), planner.count)
	assert.InDelta(t, 1.2, planner.sum, 1e-9)
	// No ids as labels: no series carries a session, trace or span id.
	fams, err := g.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				assert.NotContains(t, []string{"session_id", "trace_id", "span_id"}, lp.GetName(), f.GetName())
				assert.NotContains(t, lp.GetValue(), "sess-", f.GetName())
			}
		}
	}

	// Query API: list, newest first, with the summary fields of docs/architecture.md §11.
	var list SessionList
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agent_sessions", &list))
	require.Len(t, list.Sessions, 2)
	got := list.Sessions[0]
	assert.Equal(t, "sess-checkout", got.SessionID)
	assert.True(t, t0.Equal(got.StartedAt), got.StartedAt)
	assert.True(t, t0.Add(5*time.Minute).Equal(got.EndedAt), got.EndedAt)
	assert.False(t, got.Partial)
	require.NotNil(t, got.OverallScore)
	assert.InDelta(t, 0.82, *got.OverallScore, 1e-12)
	require.NotNil(t, got.TaskCompletion)
	assert.True(t, *got.TaskCompletion)
	assert.ElementsMatch(t, []string{"executor", "planner"}, got.Agents)
	assert.Equal(t, 2, got.Turns)
	assert.Equal(t, "sess-support", list.Sessions[1].SessionID)
	assert.True(t, list.Sessions[1].Partial)

	// Filters.
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"?limit=1", []string{"sess-checkout"}},
		{"?agent=executor", []string{"sess-checkout"}},
		{"?agent=planner", []string{"sess-checkout", "sess-support"}},
		{"?agent=nobody", []string{}},
		{"?min_score=0.5", []string{"sess-checkout"}},
		{"?max_score=0.5", []string{"sess-support"}},
		{"?min_score=0.4&max_score=0.82", []string{"sess-checkout", "sess-support"}},
		{"?since=" + t0.Format(time.RFC3339), []string{"sess-checkout"}},
		{"?since=" + t0.Add(-90*time.Minute).Format(time.RFC3339) + "&agent=planner&limit=10", []string{"sess-checkout", "sess-support"}},
	} {
		assert.Equal(t, tc.want, x.sessionIDs(tc.query), tc.query)
	}
	var apiErr errorBody
	assert.Equal(t, http.StatusBadRequest, x.getJSON("/api/v1/agent_sessions?min_score=high", &apiErr))
	assert.Equal(t, `invalid parameter "min_score": must be a number between 0 and 1`, apiErr.Error)

	// One session: the full analysis, as the processor sent it.
	var an evaluation.Analysis
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agent_sessions/sess-checkout", &an))
	want := analysisCheckout()
	assertSameJSON(t, want, an)

	apiErr = errorBody{}
	assert.Equal(t, http.StatusNotFound, x.getJSON("/api/v1/agent_sessions/sess-unknown", &apiErr))
	assert.Equal(t, `session "sess-unknown" not found`, apiErr.Error)

	// Per-agent history.
	var hist AgentScoreHistory
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agents/planner/scores", &hist))
	assert.Equal(t, "planner", hist.AgentID)
	require.Len(t, hist.Scores, 2)
	assert.Equal(t, "sess-checkout", hist.Scores[0].SessionID)
	require.NotNil(t, hist.Scores[0].Scores.Overall)
	assert.InDelta(t, 0.9, *hist.Scores[0].Scores.Overall, 1e-12)
	assert.Equal(t, "sess-support", hist.Scores[1].SessionID)

	// Internal telemetry: 7 evaluation spans (the 2 application spans are not counted),
	// 2 analyses stored, no errors.
	metadatatest.AssertEqualExporterAgentevalEvaluationSpans(t, x.tel, []metricdata.DataPoint[int64]{{Value: 7}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterAgentevalAnalysesStored(t, x.tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	_, err = x.tel.GetMetric("otelcol_exporter_agenteval_store_errors")
	assert.Error(t, err, "no store error recorded")
}

// assertSameJSON compares two values by their JSON encoding (time zones and map order
// do not matter).
func assertSameJSON(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(w), string(g))
}

func TestExporterReplacesReevaluatedSession(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	first := analysisCheckout()
	require.NoError(t, x.consume(newSpanBuilder(t).session(first).traces()))
	second := analysisCheckout()
	second.OverallScore = ptr(0.3)
	require.NoError(t, x.consume(newSpanBuilder(t).session(second).traces()))

	var list SessionList
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agent_sessions", &list))
	require.Len(t, list.Sessions, 1, "upsert by session id")
	assert.InDelta(t, 0.3, *list.Sessions[0].OverallScore, 1e-12)
}

func TestExporterIgnoresNonEvaluationSpans(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	require.NoError(t, x.consume(newSpanBuilder(t).appSpan().appSpan().traces()))
	require.NoError(t, x.consume(ptrace.NewTraces()))

	fams, err := x.scrape().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		assert.Empty(t, f.GetMetric(), f.GetName())
	}
	assert.Empty(t, x.sessionIDs(""))
	_, err = x.tel.GetMetric("otelcol_exporter_agenteval_evaluation_spans")
	assert.Error(t, err, "no evaluation span counted")
	_, err = x.tel.GetMetric("otelcol_exporter_agenteval_decode_errors")
	assert.Error(t, err, "application spans are never decoded")
}

func TestExporterUndecodableSpansArePermanentErrors(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	b := newSpanBuilder(t).turn(turn0(false))
	bad := b.span(traceTurn0, "evaluate turn")
	bad.Attributes().PutStr("agent_eval.kind", "turn")
	bad.Attributes().PutStr("agent_eval.turn.trace_id", "0102")
	bad.Attributes().PutStr("agent_eval.turn.interactions", `[`)
	missing := b.span(traceTurn1, "evaluate agent_session")
	missing.Attributes().PutStr("agent_eval.kind", "agent_session")
	wrongType := b.span(traceTurn1, "evaluate agent_session")
	wrongType.Attributes().PutStr("agent_eval.kind", "agent_session")
	wrongType.Attributes().PutStr("agent_eval.session.session_id", "s")
	wrongType.Attributes().PutStr("agent_eval.session.overall_score", "high")
	noID := b.span(traceTurn1, "evaluate agent_session")
	noID.Attributes().PutStr("agent_eval.kind", "agent_session")
	noID.Attributes().PutStr("agent_eval.session.session_id", "")
	// Signed with the right key but undecodable (a processor of another version).
	for _, sp := range []ptrace.Span{bad, missing, wrongType, noID} {
		fixtureSigner.Sign(sp.Attributes())
	}

	err := x.consume(b.traces())
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), err)
	// The turn is decoded before the queue: logged and counted, not returned.
	for _, part := range []string{
		`agent_eval.session.session_id: attribute missing`,
		`agent_eval.session.overall_score: is a Str, want a double`,
		`session_id is empty`,
	} {
		assert.ErrorContains(t, err, part)
	}
	metadatatest.AssertEqualExporterAgentevalDecodeErrors(t, x.tel, []metricdata.DataPoint[int64]{{Value: 4}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	// The valid turn in the same batch was still counted.
	assert.Equal(t, 3, countSeries(t, x.scrape(), "agent_eval_tool_calls_total", nil))
}

// flakyStore is the real store with SaveAnalysis failing while failures > 0: a store
// outage that the retry settings must ride out.
type flakyStore struct {
	store.Store
	failures atomic.Int32
	saves    atomic.Int32
}

func (f *flakyStore) SaveAnalysis(ctx context.Context, a *evaluation.Analysis) error {
	f.saves.Add(1)
	if f.failures.Add(-1) >= 0 {
		return errors.New("database is locked")
	}
	return f.Store.SaveAnalysis(ctx, a)
}

func withFlakyStore(fs *flakyStore) func(*agentEvalExporter) {
	return func(e *agentEvalExporter) {
		e.openStore = func(ctx context.Context, driver, dsn string) (store.Store, error) {
			st, err := store.Open(ctx, driver, dsn)
			fs.Store = st
			return fs, err
		}
	}
}

func TestPushReturnsOnlyFailedAnalysesForRetry(t *testing.T) {
	fs := &flakyStore{}
	x := newTestExporter(t, testConfig(), withFlakyStore(fs))
	fs.failures.Store(1)

	td := newSpanBuilder(t).turn(turn0(false)).session(analysisCheckout()).appSpan().traces()
	err := x.exp.pushTraces(context.Background(), td)
	require.Error(t, err)
	assert.False(t, consumererror.IsPermanent(err))
	assert.ErrorContains(t, err, `session "sess-checkout": database is locked`)
	var tracesErr consumererror.Traces
	require.ErrorAs(t, err, &tracesErr)
	retry := tracesErr.Data()
	require.Equal(t, 1, retry.SpanCount(), "only the session span is retried")
	rs := retry.ResourceSpans().At(0)
	assert.Equal(t, "evaluate agent_session", rs.ScopeSpans().At(0).Spans().At(0).Name())
	svc, _ := rs.Resource().Attributes().Get("service.name")
	assert.Equal(t, "shop-agents", svc.Str(), "resource kept")
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, x.host.statuses())

	// The retry stores it; the turn's tool calls stay counted once.
	require.NoError(t, x.exp.pushTraces(context.Background(), retry))
	assert.Equal(t, []string{"sess-checkout"}, x.sessionIDs(""))
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, x.host.statuses())
	require.NoError(t, testutil.GatherAndCompare(x.scrape(), strings.NewReader(`
# HELP agent_eval_tool_calls_total Tool calls validated, by verdict (valid, invalid, not_evaluable).
# TYPE agent_eval_tool_calls_total counter
agent_eval_tool_calls_total{agent="executor",tool="lookup_order",valid="not_evaluable"} 1
agent_eval_tool_calls_total{agent="executor",tool="refund_order",valid="invalid"} 1
agent_eval_tool_calls_total{agent="executor",tool="refund_order",valid="valid"} 1
# HELP agent_eval_sessions_total Session analyses stored (each revision: a session continued after a pause counts again), by task completion (true, false, unknown) and partial (true, false).
# TYPE agent_eval_sessions_total counter
agent_eval_sessions_total{partial="false",task_completion="true"} 1
`), "agent_eval_tool_calls_total", "agent_eval_sessions_total"))
	metadatatest.AssertEqualExporterAgentevalStoreErrors(t, x.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestExporterRetriesThroughExporterhelper(t *testing.T) {
	cfg := testConfig()
	cfg.RetryConfig.Enabled = true
	cfg.RetryConfig.InitialInterval = 5 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 10 * time.Millisecond
	cfg.RetryConfig.RandomizationFactor = 0
	fs := &flakyStore{}
	x := newTestExporter(t, cfg, withFlakyStore(fs))
	fs.failures.Store(3)

	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(false)).session(analysisCheckout()).traces()))
	assert.Equal(t, int32(4), fs.saves.Load(), "3 failures, then stored")
	assert.Equal(t, []string{"sess-checkout"}, x.sessionIDs(""))
	assert.Equal(t, 1.0, counterValue(t, x.scrape(), "agent_eval_tool_calls_total",
		map[string]string{"agent": "executor", "tool": "refund_order", "valid": "valid"}), "counted once despite 3 retries")
	metadatatest.AssertEqualExporterAgentevalStoreErrors(t, x.tel, []metricdata.DataPoint[int64]{{Value: 3}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func counterValue(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := g.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelsEqual(m.GetLabel(), labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	require.Failf(t, "series not found", "%s%v", name, labels)
	return 0
}

func TestExporterDefaultQueueDrainsOnShutdown(t *testing.T) {
	// The default sending_queue (in memory, batching) is on: ConsumeTraces returns
	// before the export; Shutdown drains the queue before closing the store.
	cfg := testConfig()
	cfg.QueueConfig = configoptional.Some(exporterhelper.NewDefaultQueueConfig())
	dsn := filepath.Join(t.TempDir(), "x.db")
	cfg.Store.DSN = configopaque.String(dsn)
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	set := metadatatest.NewSettings(tel)
	te, err := NewFactory().CreateTraces(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, te.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, te.ConsumeTraces(context.Background(), newSpanBuilder(t).session(analysisSupport()).session(analysisCheckout()).traces()))
	require.NoError(t, te.Shutdown(context.Background()))

	metadatatest.AssertEqualExporterAgentevalAnalysesStored(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	st, err := store.Open(context.Background(), "sqlite", dsn)
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	sessions, err := st.ListSessions(context.Background(), store.Filter{})
	require.NoError(t, err)
	assert.Len(t, sessions, 2)
}

func TestRetention(t *testing.T) {
	cfg := testConfig()
	cfg.Store.Retention = 90 * time.Minute
	x := newTestExporter(t, cfg, func(e *agentEvalExporter) { e.retentionInterval = time.Hour })
	// Retention goes by the time stored, not by the span times: support is stored
	// before the cutoff, checkout after it (whatever their ended_at says).
	require.NoError(t, x.consume(newSpanBuilder(t).session(analysisSupport()).traces()))
	time.Sleep(2 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(2 * time.Millisecond)
	require.NoError(t, x.consume(newSpanBuilder(t).session(analysisCheckout()).traces()))
	x.exp.now = func() time.Time { return cutoff.Add(cfg.Store.Retention) }
	x.exp.applyRetention(context.Background())
	assert.Equal(t, []string{"sess-checkout"}, x.sessionIDs(""))
	metadatatest.AssertEqualExporterAgentevalRetentionDeleted(t, x.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestRetentionLoopRunsPeriodically(t *testing.T) {
	cfg := testConfig()
	cfg.Store.Retention = time.Minute
	var now atomic.Int64
	now.Store(time.Now().Add(-time.Hour).UnixNano()) // before every save: nothing to delete yet
	x := newTestExporter(t, cfg, func(e *agentEvalExporter) {
		e.retentionInterval = 10 * time.Millisecond
		e.now = func() time.Time { return time.Unix(0, now.Load()) }
	})
	require.NoError(t, x.consume(newSpanBuilder(t).session(analysisSupport()).session(analysisCheckout()).traces()))
	now.Store(time.Now().Add(time.Hour).UnixNano())
	require.Eventually(t, func() bool { return len(x.sessionIDs("")) == 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestStartFailsWhenAPortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "localhost:0")
	require.NoError(t, err)
	defer taken.Close()

	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"prometheus", func(c *Config) { c.Prometheus.NetAddr.Endpoint = taken.Addr().String() },
			fmt.Sprintf("agenteval: prometheus server: cannot listen on prometheus.endpoint %q", taken.Addr().String())},
		{"api", func(c *Config) { c.API.NetAddr.Endpoint = taken.Addr().String() },
			fmt.Sprintf("agenteval: api server: cannot listen on api.endpoint %q", taken.Addr().String())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Store.DSN = configopaque.String(filepath.Join(t.TempDir(), "x.db"))
			tc.mutate(cfg)
			te, err := NewFactory().CreateTraces(context.Background(), metadatatest.NewSettings(componenttest.NewTelemetry()), cfg)
			require.NoError(t, err)
			err = te.Start(context.Background(), componenttest.NewNopHost())
			require.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, "address already in use")
			// Start released what it opened; Shutdown (as the collector calls it) is safe.
			require.NoError(t, te.Shutdown(context.Background()))
		})
	}
}

// headerAuth is a server authenticator extension accepting one bearer token.
type headerAuth struct {
	component.StartFunc
	component.ShutdownFunc
}

var _ extensionauth.Server = headerAuth{}

func (headerAuth) Authenticate(ctx context.Context, sources map[string][]string) (context.Context, error) {
	for _, v := range sources["Authorization"] {
		if v == "Bearer s3cret" {
			return ctx, nil
		}
	}
	return ctx, errors.New("unauthenticated")
}

func TestAPIAuthThroughAuthenticatorExtension(t *testing.T) {
	authID := component.MustNewIDWithName("bearertokenauth", "api")
	cfg := testConfig()
	cfg.API.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: authID}})
	x := newTestExporterWithExtensions(t, cfg, nil, map[component.ID]component.Component{authID: headerAuth{}})

	get := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, x.apiURL("/api/v1/agent_sessions"), http.NoBody)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			// The authenticator's refusal is JSON like the API's own errors.
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var apiErr errorBody
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&apiErr))
			assert.Contains(t, apiErr.Error, "unauthenticated")
		}
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, get(""))
	assert.Equal(t, http.StatusUnauthorized, get("wrong"))
	assert.Equal(t, http.StatusOK, get("s3cret"))
	// The Prometheus endpoint has its own (here: no) auth.
	resp, err := http.Get(x.metricsURL())
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
