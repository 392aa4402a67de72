// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// authenticatingExporter sits in front of exporterhelper's sending queue. Of each batch
// it keeps only the evaluation spans (agent_eval.kind); turn and agent_session spans
// must carry an agent_eval.signature that verifies with signing_key
// (docs/decisions/evaluation-authenticity.md), forged ones are dropped and counted
// (otelcol_exporter_agenteval_unauthenticated_spans). Turn results need no store: they
// feed the per-turn metrics and the live UI events here, before the queue, so a store
// outage that keeps the queue's consumers retrying never delays them. Only the
// agent_session spans, whose analyses go to the store, enter the queue (in memory or on
// disk; docs/decisions/result-durability.md); a batch without one never does.
//
// Because a persistent queue holds authenticated spans only (the handoff's unverified
// mark, handedOff, is used only with the in-memory queue), it is stored when replayed
// after a restart even though the key has changed since (a random per-process key, or a
// signing_key rotated across the restart).
type authenticatingExporter struct {
	exporter.Traces
	e *agentEvalExporter
}

func (a authenticatingExporter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	out := a.e.evaluationSpans(ctx, td)
	if out.SpanCount() == 0 {
		return nil
	}
	return a.Traces.ConsumeTraces(ctx, out)
}

// evaluationSpans handles td's evaluation spans other than agent_session (turn results
// recorded, the rest counted) and returns a copy of its authenticated agent_session
// spans, with their resource and scope, for the queue.
func (e *agentEvalExporter) evaluationSpans(ctx context.Context, td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	var forged, handled int64
	var decodeErrs []error
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
				s := kind.Str()
				verdicts := semconv.IsVerdictKind(s) // late judge verdicts, stored like analyses
				unverified := false
				if s == semconv.EvalKindTurn || s == semconv.EvalKindAgentSession || verdicts {
					switch e.handedOff(s, span) {
					case handedTurn:
						handled++
						continue
					case handedAnalysis: // pushTraces takes its analysis, or verifies it
						unverified = true
					default:
						if err := e.signer.Verify(span.Attributes()); err != nil {
							forged++
							e.logUnauthenticated(s, span, err)
							continue
						}
					}
				}
				if s != semconv.EvalKindAgentSession && !verdicts {
					handled++
					if s == semconv.EvalKindTurn {
						if err := e.recordTurn(span); err != nil {
							decodeErrs = append(decodeErrs, err)
						}
					}
					continue
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
				cp := oss.Spans().AppendEmpty()
				span.CopyTo(cp)
				if unverified {
					cp.Attributes().PutBool(attrUnverified, true)
				}
			}
		}
	}
	if forged > 0 {
		e.telemetry.ExporterAgentevalUnauthenticatedSpans.Add(ctx, forged)
	}
	if handled > 0 {
		e.telemetry.ExporterAgentevalEvaluationSpans.Add(ctx, handled)
	}
	if len(decodeErrs) > 0 {
		e.telemetry.ExporterAgentevalDecodeErrors.Add(ctx, int64(len(decodeErrs)))
		e.logger.Error("agenteval: dropping undecodable turn evaluation spans", zap.Error(errors.Join(decodeErrs...)))
	}
	return out
}

// attrUnverified marks the exporter's own queued copy of a session span that passed
// the front unverified because the handoff held its analysis. pushTraces uses that
// analysis; if it is no longer held (taken by another span with the same ids, dropped
// by the bound, lost at a restart), the span is verified there before it is decoded, so
// that no forged span reaches the store through a held key. The mark is never emitted:
// only pushTraces reads the queue.
const attrUnverified = "agent_eval.exporter.unverified"

// handed is what the handoff holds for an evaluation span (handedOff).
type handed int

const (
	handedNone     handed = iota // nothing: the span is verified and decoded
	handedTurn                   // its turn result, recorded and taken
	handedAnalysis               // its analysis, left for pushTraces to take
)

// handedOff looks span, of kind, up in the handoff (the handoff setting) and returns
// what it found. A turn span found is recorded from the handed-off result, taken out:
// no signature check and no decode (docs/decisions/evaluation-authenticity.md says why
// an entry is authentic). A session span found is only looked at: it enters the queue
// as today, marked attrUnverified, and pushTraces takes its analysis. Not with a
// persistent queue, whatever the key: a span queued unverified could not be verified
// after a restart with another key (a random one, or a rotated signing_key), so there
// every session span is verified here. Verdict spans are never handed off.
func (e *agentEvalExporter) handedOff(kind string, span ptrace.Span) handed {
	h := e.handoff
	if h == nil {
		return handedNone
	}
	k := handoff.KeyOf(span)
	switch kind {
	case semconv.EvalKindTurn:
		if tr, ok := h.TakeTurn(k); ok {
			e.recordTurnResult(tr)
			return handedTurn
		}
	case semconv.EvalKindAgentSession:
		if !e.verifySessions && h.HoldsAnalysis(k) {
			return handedAnalysis
		}
	}
	return handedNone
}

// logUnauthenticated logs, at debug level, a turn or session span of kind dropped
// because it does not verify with signing_key (err says why); the caller counts it. The
// first one, and then one a minute (unauthWarn), is also a warning naming the likely
// cause: a processor signing with another key stores nothing, and the collector starts
// without complaint.
func (e *agentEvalExporter) logUnauthenticated(kind string, span ptrace.Span, err error) {
	e.logger.Debug("agenteval: ignoring an evaluation span not signed with signing_key",
		zap.String("kind", kind), zap.Stringer("span_id", span.SpanID()), zap.Error(err))
	if ok, held := e.unauthWarn.Allow(e.now()); ok {
		e.logger.Warn("agenteval: ignoring evaluation spans not signed with this exporter's signing_key; nothing from them is stored. "+
			"If the agentsession processor sends them, its signing_key differs from the exporter's: set the same key on both, or leave both empty in one collector",
			zap.String("kind", kind), zap.Int("ignored_since_last_warning", held), zap.Error(err))
	}
}
