// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

// BenchmarkEvaluationSpanAuth measures, per evaluation span of the harness's workload
// (the turn and session spans the processor emits for it, replayWorkload), what
// authenticating and decoding them costs: Sign in the processor, Verify and the typed
// decode in the agenteval exporter (DecodeTurn before its queue, DecodeAnalysis
// behind it), and the copy of each session span into the batch the exporter queues.
// One op is one span, cycling through the spans of the kind, so ns/op and allocs/op are
// per span:
//
//	go test -run '^$' -bench EvaluationSpanAuth -count=6 ./bench/e2e/
func BenchmarkEvaluationSpanAuth(b *testing.B) {
	const key = "bench-e2e-signing-key-0123456789"
	cfg := agentsessionprocessor.NewFactory().CreateDefaultConfig().(*agentsessionprocessor.Config)
	cfg.TurnSettle = 5 * time.Millisecond
	cfg.SessionTimeout = time.Hour // sessions end with their end attribute
	cfg.SigningKey = key
	sink := new(consumertest.TracesSink)
	p, _, _ := replayWorkload(b, cfg, sink)
	time.Sleep(200 * time.Millisecond)
	if err := p.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	// The evaluation spans, copied out of the rest (a heap holding every span of the
	// workload would make the GC, not the code measured, the larger cost).
	kept := ptrace.NewSpanSlice()
	for _, td := range sink.AllTraces() {
		for i := range td.ResourceSpans().Len() {
			sss := td.ResourceSpans().At(i).ScopeSpans()
			for j := range sss.Len() {
				for k := range sss.At(j).Spans().Len() {
					sp := sss.At(j).Spans().At(k)
					if kind, ok := sp.Attributes().Get(semconv.AgentEvalKind); ok &&
						(kind.Str() == semconv.EvalKindTurn || kind.Str() == semconv.EvalKindAgentSession) {
						sp.CopyTo(kept.AppendEmpty())
					}
				}
			}
		}
	}
	sink.Reset()
	runtime.GC()
	spans := map[string][]ptrace.Span{}
	for i := range kept.Len() {
		kind, _ := kept.At(i).Attributes().Get(semconv.AgentEvalKind)
		spans[kind.Str()] = append(spans[kind.Str()], kept.At(i))
	}
	b.Logf("%d turn spans, %d session spans", len(spans[semconv.EvalKindTurn]), len(spans[semconv.EvalKindAgentSession]))
	s := evalspan.NewSigner(key)
	each := func(kind string, f func(ptrace.Span)) func(*testing.B) {
		return func(b *testing.B) {
			ss := spans[kind]
			if len(ss) == 0 {
				b.Fatalf("no %s spans", kind)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f(ss[i%len(ss)])
				i++
			}
		}
	}
	verify := func(sp ptrace.Span) {
		if err := s.Verify(sp.Attributes()); err != nil {
			b.Fatal(err)
		}
	}
	for _, k := range []struct {
		kind   string
		decode func(ptrace.Span) error
	}{
		{semconv.EvalKindTurn, func(sp ptrace.Span) error { _, err := evalspan.DecodeTurn(sp.Attributes()); return err }},
		{semconv.EvalKindAgentSession, func(sp ptrace.Span) error { _, err := evalspan.DecodeAnalysis(sp.Attributes()); return err }},
	} {
		b.Run("sign/"+k.kind, each(k.kind, func(sp ptrace.Span) { s.Sign(sp.Attributes()) }))
		b.Run("verify/"+k.kind, each(k.kind, verify))
		b.Run("decode/"+k.kind, each(k.kind, func(sp ptrace.Span) {
			if err := k.decode(sp); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.Run("copy/"+semconv.EvalKindAgentSession, each(semconv.EvalKindAgentSession, func(sp ptrace.Span) {
		sp.CopyTo(ptrace.NewSpan())
	}))
}
