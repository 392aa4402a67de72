// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package e2e runs the distribution's components in-process through the collector's own
// service (otelcol), receives real OTLP from the OpenTelemetry Go SDK over HTTP and gRPC,
// and checks every output a user looks at: the spans passed on, the evaluation spans,
// the SQLite result store, the query API and the Prometheus endpoint.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/agenteval/agenteval-collector/e2e/internal/ports"
	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter"
	"github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The OTel SDK's and gRPC's background goroutines end asynchronously.
		goleak.IgnoreTopFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("internal/poll.runtime_pollWait"),
	)
}

// captureType is a test exporter standing in for `debug`: it keeps what it receives.
var captureType = component.MustNewType("capture")

type captureConfig struct{}

func captureFactory(sink *consumertest.TracesSink) exporter.Factory {
	return exporter.NewFactory(captureType,
		func() component.Config { return &captureConfig{} },
		exporter.WithTraces(func(_ context.Context, _ exporter.Settings, _ component.Config) (exporter.Traces, error) {
			return &captureExporter{sink: sink}, nil
		}, component.StabilityLevelDevelopment))
}

type captureExporter struct {
	component.StartFunc
	component.ShutdownFunc
	sink *consumertest.TracesSink
}

func (e *captureExporter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }
func (e *captureExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return e.sink.ConsumeTraces(ctx, td)
}

// freePort returns a loopback address for a collector to bind (ports.Free).
func freePort(t *testing.T) string {
	t.Helper()
	addr, err := ports.Free()
	require.NoError(t, err)
	return addr
}

type endpoints struct{ grpc, http, prom, api string }

func startCollector(t *testing.T, dbPath string, sink *consumertest.TracesSink) (ep endpoints, stop func()) {
	t.Helper()
	ep = endpoints{grpc: freePort(t), http: freePort(t), prom: freePort(t), api: freePort(t)}
	return ep, runCollector(t, collectorConfig(ep, dbPath, fmt.Sprintf(`
    emit: {tool_calls: issues}
    continuation: {driver: sqlite, dsn: %q}
    agents:
      - name: triage
        handoff_targets: [refund_agent]
        tools:
          - name: lookup_order
            parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
      - name: refund_agent
        tools:
          - name: issue_refund
            parameters: {order_id: string, amount: number}`, dbPath)), sink)
}

// collectorConfig is the test pipeline otlp -> agentsession -> [capture, agenteval] on
// ep, with the SQLite store at dbPath; processorKeys (indented by 4) are added to the
// processor's test timings.
func collectorConfig(ep endpoints, dbPath, processorKeys string) string {
	return fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: %q}
      http: {endpoint: %q}
processors:
  agentsession:
    turn_settle: 200ms
    turn_timeout: 5s
    session_timeout: 2s%s
exporters:
  capture:
  agenteval:
    store: {driver: sqlite, dsn: %q}
    prometheus: {endpoint: %q}
    api: {endpoint: %q}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [agentsession]
      exporters: [capture, agenteval]
`, ep.grpc, ep.http, processorKeys, dbPath, ep.prom, ep.api)
}

// runCollector runs a collector with our components, OTLP and the capture exporter, from
// a YAML configuration, until the returned stop is called.
func runCollector(t *testing.T, cfg string, sink *consumertest.TracesSink) (stop func()) {
	t.Helper()
	return runCollectorWith(t, cfg, testFactories(t, sink))
}

// testFactories are the OTLP receiver, our processor and exporter, and the capture
// exporter feeding sink.
func testFactories(t *testing.T, sink *consumertest.TracesSink) otelcol.Factories {
	t.Helper()
	var f otelcol.Factories
	var err error
	f.Receivers, err = otelcol.MakeFactoryMap(otlpreceiver.NewFactory())
	require.NoError(t, err)
	f.Processors, err = otelcol.MakeFactoryMap(agentsessionprocessor.NewFactory())
	require.NoError(t, err)
	f.Exporters, err = otelcol.MakeFactoryMap(agentevalexporter.NewFactory(), captureFactory(sink))
	require.NoError(t, err)
	f.Extensions, err = otelcol.MakeFactoryMap(agentevalhandoffextension.NewFactory())
	require.NoError(t, err)
	f.Telemetry = otelconftelemetry.NewFactory()
	return f
}

// runAgents emits two turns of one conversation through the OTel Go SDK: turn 1 is a
// clean triage -> refund_agent handoff; turn 2 (the user corrects the order number) has
// a refund call with an unknown parameter and without the required amount, and ends the
// session. It returns the number of spans emitted.
func runAgents(t *testing.T, tp *sdktrace.TracerProvider, sessionID string) int {
	t.Helper()
	tr := tp.Tracer("e2e-agents")
	ctx := context.Background()
	n := 0
	span := func(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
		n++
		return tr.Start(ctx, name, trace.WithAttributes(append(attrs, attribute.String("gen_ai.conversation.id", sessionID))...))
	}
	msg := func(role, text string) string {
		b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]any{{"type": "text", "content": text}}}})
		return string(b)
	}
	turn := func(user, answer string, refundArgs string, end bool) {
		rctx, root := span(ctx, "invoke_workflow support",
			attribute.String("gen_ai.operation.name", "invoke_workflow"),
			attribute.String("gen_ai.input.messages", msg("user", user)),
			attribute.String("gen_ai.output.messages", msg("assistant", answer)))
		actx, triage := span(rctx, "invoke_agent triage",
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", "triage"),
			attribute.String("gen_ai.input.messages", msg("user", user)))
		_, chat := span(actx, "chat gpt-4o",
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.Int("gen_ai.usage.input_tokens", 120), attribute.Int("gen_ai.usage.output_tokens", 20))
		chat.End()
		tctx, lookup := span(actx, "execute_tool lookup_order",
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "lookup_order"),
			attribute.String("gen_ai.tool.call.arguments", `{"order_id":"12345"}`),
			attribute.String("gen_ai.tool.call.result", `{"order_id":"12345","amount":120.5}`))
		_ = tctx
		lookup.End()
		_, handoff := span(actx, "execute_tool transfer_to_refund_agent",
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "transfer_to_refund_agent"),
			attribute.String("gen_ai.transfer.mode", "pass_control"),
			attribute.String("gen_ai.transfer.target.name", "refund_agent"),
			attribute.String("gen_ai.tool.call.arguments", `{"context":"refund order 12345, amount 120.50"}`))
		handoff.End()
		triage.End()
		rctx2, refund := span(rctx, "invoke_agent refund_agent",
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", "refund_agent"),
			attribute.String("gen_ai.output.messages", msg("assistant", answer)))
		_, call := span(rctx2, "execute_tool issue_refund",
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "issue_refund"),
			attribute.String("gen_ai.tool.call.arguments", refundArgs))
		if !strings.Contains(refundArgs, "amount") {
			call.SetStatus(codes.Error, "missing amount")
		}
		call.End()
		refund.End()
		if end {
			root.SetAttributes(attribute.Bool("agent_eval.session.end", true))
		}
		root.End()
	}
	turn("I need a refund for order #12345, it arrived damaged.", "Refund of $120.50 issued for order 12345.",
		`{"order_id":"12345","amount":120.5}`, false)
	time.Sleep(400 * time.Millisecond) // turn 1 settles before turn 2 starts.
	turn("No, I meant order #123.", "Refund issued for order 123.", `{"order_id":"123","reason":"damaged"}`, true)
	return n
}

func TestEndToEnd(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "agenteval.db")
	sink := new(consumertest.TracesSink)
	ep, stop := startCollector(t, dbPath, sink)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	ctx := context.Background()
	res := sdkresource.NewSchemaless(attribute.String("service.name", "e2e-support-agents"))
	httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(ep.http), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(ep.grpc), otlptracegrpc.WithInsecure())
	require.NoError(t, err)
	tpHTTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(httpExp), sdktrace.WithResource(res))
	tpGRPC := sdktrace.NewTracerProvider(sdktrace.WithSyncer(grpcExp), sdktrace.WithResource(res))

	sent := runAgents(t, tpHTTP, "conv-http-1")
	sent += runAgents(t, tpGRPC, "conv-grpc-1")
	require.NoError(t, tpHTTP.Shutdown(ctx))
	require.NoError(t, tpGRPC.Shutdown(ctx))

	// Both sessions end (explicit end signal) and are evaluated.
	require.Eventually(t, func() bool {
		return len(evalSpansOf(sink, semconv.EvalKindAgentSession)) == 2
	}, 20*time.Second, 50*time.Millisecond, "two agent_session evaluation spans")

	// Every span sent arrives at the next consumer unchanged in number (spans in == spans out).
	var passed int
	for _, td := range sink.AllTraces() {
		passed += countAppSpans(td)
	}
	assert.Equal(t, sent, passed)
	assert.NotEmpty(t, evalSpansOf(sink, semconv.EvalKindTurn))
	assert.NotEmpty(t, evalSpansOf(sink, semconv.EvalKindAgentInteract))
	toolSpans := evalSpansOf(sink, semconv.EvalKindToolCall)
	require.NotEmpty(t, toolSpans, "the faulty issue_refund call gets its own evaluation span")

	// The exporter stores analyses through its sending queue, asynchronously: wait until
	// the query API lists both sessions (the metrics are updated with each save).
	var list struct {
		Sessions []store.SessionSummary `json:"sessions"`
	}
	require.Eventually(t, func() bool {
		code, body := get(t, "http://"+ep.api+"/api/v1/agent_sessions")
		return code == http.StatusOK && json.Unmarshal(body, &list) == nil && len(list.Sessions) == 2
	}, 10*time.Second, 50*time.Millisecond, "both sessions are stored")

	// The query API returns the analysis.
	var an evaluation.Analysis
	code, body := get(t, "http://"+ep.api+"/api/v1/agent_sessions/conv-http-1")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal(body, &an))
	assert.Equal(t, "conv-http-1", an.SessionID)
	assert.Equal(t, 1, an.AnalysisRevision)
	require.Len(t, an.TurnResults, 2)
	assert.Equal(t, "No, I meant order #123.", an.TurnResults[1].UserMessage, "the whole conversation")
	var raw map[string]any
	require.NoError(t, json.Unmarshal(body, &raw))
	assert.Contains(t, raw, "analysis_revision")
	assert.Equal(t, evaluation.DetectionRDM, an.TurnResults[0].DetectionType, "turn 2 corrects turn 1")
	issues := map[string]string{}
	for _, is := range an.ToolIssues {
		issues[string(is.Issue)] = is.Parameter
		assert.Equal(t, "refund_agent", is.AgentID)
		assert.Equal(t, "issue_refund", is.ToolName)
		assert.Equal(t, 1, is.TurnIndex)
	}
	assert.Equal(t, "reason", issues[string(evaluation.IssueParameterHallucination)])
	assert.Equal(t, "amount", issues[string(evaluation.IssueMissingRequiredParam)])
	assert.Contains(t, an.PerAgentScores, "triage")
	assert.Contains(t, an.PerAgentScores, "refund_agent")

	code, _ = get(t, "http://"+ep.api+"/api/v1/agent_sessions/unknown")
	assert.Equal(t, http.StatusNotFound, code)

	// The Prometheus endpoint exposes the series (updated right after each save).
	wantSeries := []string{
		`agent_eval_sessions_total{partial="false",task_completion=`,
		`agent_eval_tool_issues_total{agent="refund_agent",issue="PARAMETER_HALLUCINATION",severity="MEDIUM",tool="issue_refund"} 2`,
		`agent_eval_turns_total{detection_type="rdm"} 2`,
		`agent_eval_handoffs_total{from_agent="triage",to_agent="refund_agent"}`,
		`agent_eval_session_score_bucket{metric="overall"`,
		`agent_eval_tool_call_duration_seconds_bucket{agent="triage",tool="lookup_order"`,
	}
	var metrics []byte
	assert.Eventually(t, func() bool {
		_, metrics = get(t, "http://"+ep.prom+"/metrics")
		for _, series := range wantSeries {
			if !strings.Contains(string(metrics), series) {
				return false
			}
		}
		return true
	}, 5*time.Second, 50*time.Millisecond)
	for _, series := range wantSeries {
		assert.Contains(t, string(metrics), series)
	}

	stop()
	stopped = true

	// The SQLite store holds the analyses after the collector is gone.
	st, err := store.Open(ctx, "sqlite", dbPath)
	require.NoError(t, err)
	defer st.Close()
	for _, id := range []string{"conv-http-1", "conv-grpc-1"} {
		got, err := st.GetAnalysis(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, id, got.SessionID)
		assert.Len(t, got.ToolIssues, len(an.ToolIssues))
	}
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec // loopback test URL
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

func countAppSpans(td ptrace.Traces) int {
	n := 0
	forEach(td, func(sp ptrace.Span) {
		if _, ok := sp.Attributes().Get(semconv.AgentEvalKind); !ok {
			n++
		}
	})
	return n
}

func evalSpansOf(sink *consumertest.TracesSink, kind string) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range sink.AllTraces() {
		forEach(td, func(sp ptrace.Span) {
			if v, ok := sp.Attributes().Get(semconv.AgentEvalKind); ok && v.Str() == kind {
				out = append(out, sp)
			}
		})
	}
	return out
}
