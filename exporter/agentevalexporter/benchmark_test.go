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
	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/handoff/handofftest"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
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

// discardingStore is the real store that drops every save: the exporter's own work is
// measured without SQLite's.
type discardingStore struct{ store.Store }

func (discardingStore) SaveAnalysis(context.Context, *evaluation.Analysis) error { return nil }

// BenchmarkExporterPath measures what the exporter does with the evaluation spans of
// its own collector's processor, front and queue consumer, without exporterhelper and
// with the saves discarded: evaluationSpans, then pushTraces of the session spans it
// passes on; on BenchmarkEvaluationSpans' batch (4 sessions of 2 turns: 16 turn spans,
// 4 session spans). With the handoff (handoff=true) each op first puts the batch's 20
// results in it, as the processor does when it emits them, and the exporter takes them
// instead of verifying and decoding the spans.
//
//	go test -run '^$' -bench ExporterPath -count=6 ./exporter/agentevalexporter/
func BenchmarkExporterPath(b *testing.B) {
	summary := func(tr evaluation.TurnResult) *evaluation.TurnResult { s := evalspan.TurnSummary(&tr); return &s }
	sb := newSpanBuilder(b)
	type result struct {
		turn *evaluation.TurnResult
		an   *evaluation.Analysis
	}
	var results []result
	for range 4 {
		for _, tr := range []*evaluation.TurnResult{summary(turn0(false)), summary(turn1(false)), summary(turn0(true)), summary(turn1(true))} {
			sb.turn(*tr)
			results = append(results, result{turn: tr})
		}
		a := analysisCheckout()
		sb.session(a).toolCall()
		results = append(results, result{an: &a})
		for range 2 * 26 {
			sb.appSpan()
		}
	}
	td := sb.traces()
	var keys []handoff.Key
	eachEvalSpan(td, "", func(sp ptrace.Span) {
		if k, _ := sp.Attributes().Get(semconv.AgentEvalKind); k.Str() != semconv.EvalKindToolCall {
			keys = append(keys, handoff.KeyOf(sp))
		}
	})
	require.Len(b, keys, len(results))
	for _, withHandoff := range []bool{false, true} {
		b.Run(fmt.Sprintf("handoff=%t", withHandoff), func(b *testing.B) {
			cfg := testConfig()
			cfg.Store.DSN = configopaque.String(filepath.Join(b.TempDir(), "x.db"))
			cfg.Store.Retention = 0
			h := handoff.New(4096)
			host := handofftest.Host{}
			if withHandoff {
				cfg.Handoff = &handofftest.ID
				host = handofftest.NewHost(h)
			}
			exp, err := newAgentEvalExporter(metadatatest.NewSettings(componenttest.NewTelemetry()), cfg)
			require.NoError(b, err)
			exp.openStore = func(ctx context.Context, driver, dsn string) (store.Store, error) {
				st, err := store.Open(ctx, driver, dsn)
				return discardingStore{st}, err
			}
			require.NoError(b, exp.start(context.Background(), host))
			b.Cleanup(func() { require.NoError(b, exp.shutdown(context.Background())) })
			b.ReportAllocs()
			for b.Loop() {
				if withHandoff {
					for i, r := range results {
						if r.turn != nil {
							h.PutTurn(keys[i], r.turn)
						} else {
							h.PutAnalysis(keys[i], r.an)
						}
					}
				}
				out := exp.evaluationSpans(context.Background(), td)
				if err := exp.pushTraces(context.Background(), out); err != nil {
					b.Fatal(err)
				}
			}
			if h.Len() != 0 {
				b.Fatalf("%d results left in the handoff", h.Len())
			}
		})
	}
}
