// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
)

// BenchmarkOneRequestOfManyTurns measures issue 13's hostile request: one OTLP request
// carrying 2,000 turns (8,000 spans) of one session, decoded from protobuf. Reported:
// the time ConsumeTraces holds the pipeline (ingest-ms), the time to evaluate what the
// request opened once the turns settle (evaluate-ms), the heap retained after
// evaluation (retained-MB) and the bytes allocated over both (alloc-MB), with the
// default configuration (max_spans_per_session 10000).
func BenchmarkOneRequestOfManyTurns(b *testing.B) {
	raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(manyTurnsRequest(2000))
	require.NoError(b, err)

	for b.Loop() {
		b.StopTimer()
		req, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(raw)
		require.NoError(b, err)
		cfg := testConfig()
		p, err := newProcessorCore(processortest.NewNopSettings(processortest.NopType).TelemetrySettings, consumertest.NewNop(), cfg)
		require.NoError(b, err)
		clk := newTestClock()
		p.now = clk.now
		ctx := context.Background()
		before := heapInUse()
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		b.StartTimer()

		start := time.Now()
		_, err = p.processTraces(ctx, req)
		require.NoError(b, err)
		ingest := time.Since(start)
		clk.advance(cfg.TurnTimeout + time.Second)
		start = time.Now()
		p.step(ctx)
		evaluate := time.Since(start)

		b.StopTimer()
		runtime.ReadMemStats(&ms1)
		retained := heapInUse() - before
		b.ReportMetric(float64(len(raw))/(1<<20), "request-MB")
		b.ReportMetric(float64(ingest.Microseconds())/1000, "ingest-ms")
		b.ReportMetric(float64(evaluate.Microseconds())/1000, "evaluate-ms")
		b.ReportMetric(float64(retained)/(1<<20), "retained-MB")
		b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/(1<<20), "alloc-MB")
		b.ReportMetric(float64(p.tracker.Stats().OpenSessions), "open-sessions")
		require.NoError(b, p.shutdown(ctx))
		b.StartTimer()
	}
}

// manyTurnsRequest is one request of turns turns (4 spans each) of one session.
func manyTurnsRequest(turns int) ptrace.Traces {
	rng := rand.New(rand.NewPCG(13, 13))
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for range turns {
		var tid pcommon.TraceID
		putRand(rng, tid[:])
		turnSpans(rng, "one-long-session", tid, 4)(spans)
	}
	return td
}

// TestOneRequestOfManyTurnsIsBounded: a request carrying 2,000 turns (8,000 spans) of
// one session with max_spans_per_session 1000 never retains more than 1000 spans; the
// session is closed early and evaluated as partial, and every span is passed on.
func TestOneRequestOfManyTurnsIsBounded(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSpansPerSession = 1000
	p, sink, clk := newTestProcessor(t, cfg, nil)
	ctx := context.Background()
	td := manyTurnsRequest(2000)
	sent := td.SpanCount()
	out, err := p.processTraces(ctx, td)
	require.NoError(t, err)
	require.Equal(t, sent, out.SpanCount(), "every span passes through")
	st := p.tracker.Stats()
	require.LessOrEqual(t, st.RetainedSpans, cfg.MaxSpansPerSession)
	clk.advance(cfg.TurnTimeout + cfg.SessionTimeout + time.Second)
	p.step(ctx)
	require.NoError(t, p.shutdown(ctx))
	sessions := evalSpans(sink)["agent_session"]
	require.NotEmpty(t, sessions)
	partial, ok := sessions[0].Attributes().Get("agent_eval.partial")
	require.True(t, ok)
	require.True(t, partial.Bool(), "closed early by max_spans_per_session: partial")
}
