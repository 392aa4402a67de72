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

// authenticatingExporter sits in front of exporterhelper's sending queue and passes
// on only what pushTraces reads: the evaluation spans (agent_eval.kind), of which the
// turn and agent_session spans must carry an agent_eval.signature that verifies with
// signing_key (docs/decisions/evaluation-authenticity.md). Forged ones are left out
// and counted (otelcol_exporter_agenteval_unauthenticated_spans); the application's
// spans are left out too, so the queue, in memory or on disk, holds only the small
// evaluation spans (docs/decisions/result-durability.md). A batch without evaluation
// spans never enters the queue.
//
// Because the queue holds authenticated spans only, a persistent queue replayed after
// a restart is stored even though a random per-process key has changed since.
type authenticatingExporter struct {
	exporter.Traces
	e *agentEvalExporter
}

func (a authenticatingExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	out, forged := a.e.evaluationSpans(td)
	if forged > 0 {
		a.e.telemetry.ExporterAgentevalUnauthenticatedSpans.Add(ctx, forged)
	}
	if out.SpanCount() == 0 {
		return nil
	}
	return a.Traces.ConsumeTraces(ctx, out)
}

// evaluationSpans copies td's evaluation spans whose signature verifies (turn and
// agent_session) or that need none (tool_call, agent_interaction), with their resource
// and scope, and returns how many turn and agent_session spans failed verification.
func (e *agentEvalExporter) evaluationSpans(td ptrace.Traces) (ptrace.Traces, int64) {
	out := ptrace.NewTraces()
	var forged int64
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		var ors ptrace.ResourceSpans
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			var oss ptrace.ScopeSpans
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				kind, ok := span.Attributes().Get(semconv.AgentEvalKind)
				if !ok {
					continue
				}
				if s := kind.Str(); s == semconv.EvalKindTurn || s == semconv.EvalKindAgentSession {
					if err := e.signer.Verify(span.Attributes()); err != nil {
						forged++
						e.logger.Debug("agenteval: ignoring an evaluation span not signed with signing_key",
							zap.String("kind", s), zap.Stringer("span_id", span.SpanID()), zap.Error(err))
						continue
					}
				}
				if oss == (ptrace.ScopeSpans{}) {
					if ors == (ptrace.ResourceSpans{}) {
						ors = out.ResourceSpans().AppendEmpty()
						rs.Resource().CopyTo(ors.Resource())
						ors.SetSchemaUrl(rs.SchemaUrl())
					}
					oss = ors.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(oss.Scope())
					oss.SetSchemaUrl(ss.SchemaUrl())
				}
				span.CopyTo(oss.Spans().AppendEmpty())
			}
		}
	}
	return out, forged
}
