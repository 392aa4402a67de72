// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

// BenchmarkEvaluationVolume measures, in process and independent of the machine's load,
// what `make bench-e2e` reports as "OTLP bytes out / in" for the agentsession pipeline:
// the harness's workload through the processor (default configuration, turn_settle 5ms
// so turns close as they arrive), with the OTLP protobuf size of what leaves it (the
// spans passed on and the evaluation spans) over the size of what came in, and the
// evaluation spans' bytes per turn by kind. Run it with -benchtime=1x:
//
//	go test -run '^$' -bench EvaluationVolume -benchtime=1x ./bench/e2e/
func BenchmarkEvaluationVolume(b *testing.B) {
	for range b.N {
		f := agentsessionprocessor.NewFactory()
		cfg := f.CreateDefaultConfig().(*agentsessionprocessor.Config)
		cfg.TurnSettle = 5 * time.Millisecond
		cfg.SessionTimeout = time.Hour // sessions end with their end attribute
		sink := new(consumertest.TracesSink)
		p, w, in := replayWorkload(b, cfg, sink)
		time.Sleep(200 * time.Millisecond)
		if err := p.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
		var m ptrace.ProtoMarshaler
		var out int
		byKind := map[string]int{}
		one := ptrace.NewTraces()
		dst := one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		for _, td := range sink.AllTraces() {
			out += m.TracesSize(td)
			for i := range td.ResourceSpans().Len() {
				sss := td.ResourceSpans().At(i).ScopeSpans()
				for j := range sss.Len() {
					spans := sss.At(j).Spans()
					for k := range spans.Len() {
						kind, ok := spans.At(k).Attributes().Get(semconv.AgentEvalKind)
						if !ok {
							continue
						}
						spans.At(k).CopyTo(dst.AppendEmpty())
						byKind[kind.Str()] += m.TracesSize(one)
						dst.RemoveIf(func(ptrace.Span) bool { return true })
					}
				}
			}
		}
		turns := float64(w.Stats().Turns)
		b.ReportMetric(float64(out)/float64(in), "out/in")
		b.ReportMetric(float64(in)/turns, "in-B/turn")
		for _, k := range []string{semconv.EvalKindTurn, semconv.EvalKindAgentSession, semconv.EvalKindAgentInteract, semconv.EvalKindToolCall} {
			b.ReportMetric(float64(byKind[k])/turns, k+"-B/turn")
		}
	}
}

// replayWorkload starts an agentsession processor with cfg in front of next and sends it
// the harness's workload (seed 1, 100 turns in flight: 200 batches of 512 spans 2 ms
// apart, then the drain). It returns the running processor (the caller shuts it down),
// the workload and the OTLP protobuf bytes sent.
func replayWorkload(b *testing.B, cfg *agentsessionprocessor.Config, next consumer.Traces) (processor.Traces, *workload, int) {
	b.Helper()
	f := agentsessionprocessor.NewFactory()
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	w := newWorkload(workloadConfig{Seed: 1, ActiveTurns: 100})
	var m ptrace.ProtoMarshaler
	var in int
	send := func(bt batch) {
		in += m.TracesSize(bt.traces)
		if err := p.ConsumeTraces(context.Background(), bt.traces); err != nil {
			b.Fatal(err)
		}
	}
	for range 200 {
		send(w.NextBatch(512))
		time.Sleep(2 * time.Millisecond)
	}
	for _, bt := range w.Drain(512) {
		send(bt)
	}
	return p, w, in
}
