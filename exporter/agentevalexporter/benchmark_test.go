// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadatatest"
	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// appBatch is a batch of n ordinary GenAI spans with realistic attribute counts (the
// exporter's common case: everything but the evaluation spans is skipped).
func appBatch(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "shop-agents")
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "python")
	ss := rs.ScopeSpans().AppendEmpty()
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(i), 1})
		sp.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 1})
		sp.SetName("chat gpt-4o")
		attrs := sp.Attributes()
		attrs.PutStr("gen_ai.operation.name", "chat")
		attrs.PutStr("gen_ai.provider.name", "openai")
		attrs.PutStr("gen_ai.request.model", "gpt-4o")
		attrs.PutStr("gen_ai.response.model", "gpt-4o-2024-08-06")
		attrs.PutStr("gen_ai.agent.name", "executor")
		attrs.PutStr("gen_ai.conversation.id", "sess-bench")
		attrs.PutInt("gen_ai.usage.input_tokens", 812)
		attrs.PutInt("gen_ai.usage.output_tokens", 96)
		attrs.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl-%d", i))
		attrs.PutStr("server.address", "api.openai.com")
		attrs.PutInt("server.port", 443)
		attrs.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"done"}]}]`)
	}
	return td
}

// BenchmarkPushTraces measures pushTraces (without exporterhelper) on batches of
// application spans with and without evaluation spans mixed in.
func BenchmarkPushTraces(b *testing.B) {
	cfg := testConfig()
	cfg.Store.DSN = configopaque.String(filepath.Join(b.TempDir(), "x.db"))
	cfg.Store.Retention = 0
	exp, err := newAgentEvalExporter(metadatatest.NewSettings(componenttest.NewTelemetry()), cfg)
	require.NoError(b, err)
	require.NoError(b, exp.start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { require.NoError(b, exp.shutdown(context.Background())) })

	mixed := appBatch(1000)
	evals := newSpanBuilder(b).turn(turn0(false)).turn(turn0(true)).toolCall().traces()
	evals.ResourceSpans().MoveAndAppendTo(mixed.ResourceSpans())

	sb := newSpanBuilder(b)
	for range 4 {
		sb.session(analysisCheckout()).session(analysisSupport())
	}
	sessions := sb.traces()

	for _, bc := range []struct {
		name string
		td   ptrace.Traces
	}{
		{"app_spans_only", appBatch(1000)},
		{"app_spans_with_3_turn_evaluations", mixed},
		{"8_session_analyses", sessions},
	} {
		b.Run(bc.name, func(b *testing.B) {
			spans := bc.td.SpanCount()
			b.ReportAllocs()
			for b.Loop() {
				if err := exp.pushTraces(context.Background(), bc.td); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
		})
	}
}

// BenchmarkEvaluationSpans measures the exporter's front, before its queue
// (evaluationSpans: verify each turn and session span, decode and record the turns,
// copy the session spans for the queue), on a batch of the bench/e2e shape: per session
// a provisional and a final turn span per turn (each carrying the turn's summary, as
// the processor emits them), the session span and a tool_call span, among the
// application spans of its turns. It reports the cost per evaluation span.
//
//	go test -run '^$' -bench EvaluationSpans -count=6 ./exporter/agentevalexporter/
func BenchmarkEvaluationSpans(b *testing.B) {
	exp, err := newAgentEvalExporter(metadatatest.NewSettings(componenttest.NewTelemetry()), testConfig())
	require.NoError(b, err)
	summary := func(tr evaluation.TurnResult) evaluation.TurnResult { return evalspan.TurnSummary(&tr) }
	sb := newSpanBuilder(b)
	for range 4 {
		sb.turn(summary(turn0(false))).turn(summary(turn1(false))).turn(summary(turn0(true))).turn(summary(turn1(true))).
			session(analysisCheckout()).toolCall()
		for range 2 * 26 {
			sb.appSpan()
		}
	}
	td := sb.traces()
	const evalSpans = 4 * 5 // the signed ones
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if out := exp.evaluationSpans(context.Background(), td); out.SpanCount() != 4 {
			b.Fatalf("%d session spans for the queue, want 4", out.SpanCount())
		}
	}
	runtime.ReadMemStats(&after)
	n := float64(b.N * evalSpans)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/evalspan")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/evalspan")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/evalspan")
}
