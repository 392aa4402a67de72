// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"context"

	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// authenticatingExporter verifies the evaluation spans of each batch before it enters
// exporterhelper's sending queue (docs/decisions/evaluation-authenticity.md): turn and
// agent_session spans whose agent_eval.signature does not verify with signing_key are
// left out and counted (otelcol_exporter_agenteval_unauthenticated_spans). What the
// queue holds is therefore already authenticated: a persistent queue replayed after a
// restart is stored even though a random per-process key has changed since.
//
// A batch without forged spans (the normal case) is passed on as is; otherwise a copy
// without them is (the exporter does not mutate its input).
type authenticatingExporter struct {
	exporter.Traces
	e *agentEvalExporter
}

func (a authenticatingExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if forged := a.e.unauthenticated(td); len(forged) > 0 {
		a.e.telemetry.ExporterAgentevalUnauthenticatedSpans.Add(ctx, int64(len(forged)))
		td = withoutSpans(td, forged)
	}
	return a.Traces.ConsumeTraces(ctx, td)
}

// unauthenticated returns the turn and agent_session spans of td whose signature does
// not verify, by position.
func (e *agentEvalExporter) unauthenticated(td ptrace.Traces) map[spanPos]struct{} {
	var forged map[spanPos]struct{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				kind, ok := span.Attributes().Get(semconv.AgentEvalKind)
				if !ok {
					continue
				}
				if s := kind.Str(); s != semconv.EvalKindTurn && s != semconv.EvalKindAgentSession {
					continue
				}
				if err := e.signer.Verify(span.Attributes()); err != nil {
					if forged == nil {
						forged = make(map[spanPos]struct{})
					}
					forged[spanPos{i, j, k}] = struct{}{}
					e.logger.Debug("agenteval: ignoring an evaluation span not signed with signing_key",
						zap.String("kind", kind.Str()), zap.Stringer("span_id", span.SpanID()), zap.Error(err))
				}
			}
		}
	}
	return forged
}

// spanPos locates a span in a ptrace.Traces.
type spanPos struct{ rs, ss, span int }

// withoutSpans copies td without the spans at the given positions.
func withoutSpans(td ptrace.Traces, drop map[spanPos]struct{}) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	rss := out.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			k := 0
			sss.At(j).Spans().RemoveIf(func(ptrace.Span) bool {
				_, gone := drop[spanPos{i, j, k}]
				k++
				return gone
			})
		}
	}
	return out
}
