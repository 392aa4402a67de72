// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

func traceID(b byte) pcommon.TraceID { return pcommon.TraceID{b, 1, 2, 3} }

func addSpan(spans ptrace.SpanSlice, name string, trace pcommon.TraceID, kind string) {
	sp := spans.AppendEmpty()
	sp.SetName(name)
	sp.SetTraceID(trace)
	if kind != "" {
		sp.Attributes().PutStr(semconv.AgentEvalKind, kind)
	}
}

// TestSinkCounts sends gzip-compressed OTLP/gRPC, as the collector's exporter does, and
// checks what the sink counts apart and the turn-evaluation latencies it measures.
func TestSinkCounts(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := newRootClock()
	clock.Sent(t0, []pcommon.TraceID{traceID(1), traceID(2)})
	clock.Sent(t0.Add(time.Second), []pcommon.TraceID{traceID(3)})
	s := newSink(clock)
	now := t0.Add(700 * time.Millisecond)
	s.now = func() time.Time { return now }
	require.NoError(t, s.Start("127.0.0.1:0"))
	defer s.Stop()

	conn, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.UseCompressor(gzip.Name)))
	require.NoError(t, err)
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)

	td := ptrace.NewTraces()
	// Two resources and scopes: the sink walks them all.
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	addSpan(spans, "invoke_workflow support", traceID(1), "")
	addSpan(spans, "chat gpt-4o", traceID(1), "")
	spans.At(spans.Len() - 1).SetParentSpanID(pcommon.SpanID{1}) // not a root: no transit measured
	addSpan(spans, semconv.EvalSpanTurn, traceID(1), semconv.EvalKindTurn)
	addSpan(spans, semconv.EvalSpanAgentInteract, traceID(1), semconv.EvalKindAgentInteract)
	spans2 := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	addSpan(spans2, "execute_tool lookup_order", traceID(2), "")
	spans2.At(spans2.Len() - 1).SetParentSpanID(pcommon.SpanID{2})
	addSpan(spans2, "invoke_workflow support", traceID(8), "")              // a root never sent: not measured
	addSpan(spans2, semconv.EvalSpanTurn, traceID(9), semconv.EvalKindTurn) // a root never sent
	// No agent_eval.kind: the kind comes from the name.
	addSpan(spans2, semconv.EvalSpanAgentSession, traceID(2), "")
	_, err = client.Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(td))
	require.NoError(t, err)

	// Later: the final verdict of turn 1 (a second span for the same turn) and turn 2's
	// and turn 3's first evaluation.
	now = t0.Add(2500 * time.Millisecond)
	td = ptrace.NewTraces()
	spans = td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	addSpan(spans, semconv.EvalSpanTurn, traceID(1), semconv.EvalKindTurn)
	addSpan(spans, semconv.EvalSpanTurn, traceID(2), semconv.EvalKindTurn)
	addSpan(spans, semconv.EvalSpanTurn, traceID(3), semconv.EvalKindTurn)
	addSpan(spans, "invoke_workflow support", traceID(3), "")
	_, err = client.Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(td))
	require.NoError(t, err)

	c := s.Counts()
	assert.EqualValues(t, 2, c.Requests)
	assert.Positive(t, c.Bytes)
	assert.EqualValues(t, 5, c.Spans, "spans that are not evaluation spans")
	assert.Equal(t, map[string]int64{
		semconv.EvalKindTurn:          5,
		semconv.EvalKindAgentInteract: 1,
		semconv.EvalKindAgentSession:  1,
	}, c.Eval)
	assert.EqualValues(t, 7, c.EvalTotal())
	assert.EqualValues(t, 4, c.TurnsEvaluated, "distinct traces with an evaluate turn span")
	assert.EqualValues(t, 1, c.RepeatTurnSpans)
	assert.EqualValues(t, 1, c.UnmatchedTurns)
	assert.ElementsMatch(t, []time.Duration{700 * time.Millisecond, 2500 * time.Millisecond, 1500 * time.Millisecond}, c.TurnLatencies,
		"from the root's send to the turn's first evaluation")
	assert.ElementsMatch(t, []time.Duration{700 * time.Millisecond, 1500 * time.Millisecond}, c.RootLatencies,
		"from each root's send to its own arrival; children and roots never sent are not counted")
}

// failFirst answers Unavailable to the first n requests, as a collector pushing back does.
func failFirst(n int32) grpc.ServerOption {
	var left atomic.Int32
	left.Store(n)
	return grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if left.Add(-1) >= 0 {
			return nil, status.Error(codes.Unavailable, "queue is full")
		}
		return handler(ctx, req)
	})
}

func serve(t *testing.T, srv ptraceotlp.GRPCServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.GracefulStop)
	return lis.Addr().String()
}

// TestRunLoad sends a short fixed-rate load straight to a sink: every span arrives once
// (retried after pushback), every root's send time is recorded, the rate is kept.
func TestRunLoad(t *testing.T) {
	clock := newRootClock()
	s := newSink(clock)
	require.NoError(t, s.Start("127.0.0.1:0", failFirst(2)))
	t.Cleanup(s.Stop)
	addr := s.Addr()

	w := newWorkload(workloadConfig{Seed: 5, ActiveTurns: 50})
	cfg := loadConfig{Endpoint: addr, Rate: 20000, BatchSpans: 200, Workers: 2, Duration: 300 * time.Millisecond}
	res, err := runLoad(context.Background(), cfg, w, clock)
	require.NoError(t, err)

	st := res.Stats
	assert.Equal(t, w.Stats(), st)
	c := s.Counts()
	assert.Equal(t, st.Spans, c.Spans, "spans in == spans out")
	assert.EqualValues(t, 2, res.Retries)
	assert.Equal(t, c.Requests, res.Requests)
	assert.Equal(t, c.Bytes, res.Bytes, "the same requests, sized alike")
	clock.mu.Lock()
	roots := len(clock.sent)
	clock.mu.Unlock()
	assert.EqualValues(t, st.Turns, roots, "every root's send time is known")
	// 300ms at 20k spans/s is about 6,000 spans, then the turns in flight (50 turns of
	// about 26 spans at most) are finished; generous bounds for a loaded machine.
	assert.Less(t, st.Spans, int64(6000+50*60+2*200))
	assert.Positive(t, res.SpansPerSecond())
}

func TestRunLoadPermanentError(t *testing.T) {
	addr := serve(t, &rejecting{})
	w := newWorkload(workloadConfig{Seed: 5, ActiveTurns: 10})
	_, err := runLoad(context.Background(), loadConfig{Endpoint: addr, BatchSpans: 100, Workers: 2, Duration: time.Second}, w, newRootClock())
	require.Error(t, err)
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
}

type rejecting struct {
	ptraceotlp.UnimplementedGRPCServer
}

func (*rejecting) Export(context.Context, ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	return ptraceotlp.NewExportResponse(), status.Error(codes.InvalidArgument, "bad data")
}

// TestDrainPacing: the drain's batches say how many turns they were cut from, fewer and
// fewer, and each is given the time its turns' spans took in the steady state.
func TestDrainPacing(t *testing.T) {
	w := newWorkload(workloadConfig{Seed: 3, ActiveTurns: 100})
	for range 50 {
		assert.Equal(t, 100, w.NextBatch(256).inFlight)
	}
	drain := w.Drain(256)
	require.NotEmpty(t, drain)
	for i := 1; i < len(drain); i++ {
		assert.LessOrEqual(t, drain[i].inFlight, drain[i-1].inFlight)
	}
	assert.Less(t, drain[len(drain)-1].inFlight, 100)

	steady := 10 * time.Millisecond // 256 spans of 100 turns
	assert.Equal(t, steady, drainInterval(steady, 256, batch{spans: 256, inFlight: 100}, 100))
	assert.Equal(t, 40*time.Millisecond, drainInterval(steady, 256, batch{spans: 256, inFlight: 25}, 100),
		"a quarter of the turns: each gets 4x the spans of a steady batch")
	assert.Equal(t, steady, drainInterval(steady, 256, batch{spans: 64, inFlight: 25}, 100),
		"a short batch of a quarter of the turns: a quarter of that")
	assert.Equal(t, 5*time.Millisecond, drainInterval(steady, 256, batch{spans: 128}, 0), "no steady batch: the rate")
}

// TestSinkStages: a turn's latency is split at its evaluation span's timestamp.
func TestSinkStages(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := newRootClock()
	clock.Sent(t0, []pcommon.TraceID{traceID(1)})
	s := newSink(clock)
	s.observeEval(semconv.EvalKindTurn, traceID(1), t0.Add(540*time.Millisecond), t0.Add(700*time.Millisecond))
	s.observeEval(semconv.EvalKindTurn, traceID(1), t0.Add(2*time.Second), t0.Add(3*time.Second)) // a repeat
	c := s.Counts()
	assert.Equal(t, []time.Duration{700 * time.Millisecond}, c.TurnLatencies)
	assert.Equal(t, []time.Duration{540 * time.Millisecond}, c.TurnCloseLatencies, "root sent → evaluated")
	assert.Equal(t, []time.Duration{160 * time.Millisecond}, c.TurnOutLatencies, "evaluated → sink")
}
