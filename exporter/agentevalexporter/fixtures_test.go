// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Test fixtures: evaluation results as internal/evaluation builds them, and evaluation
// spans as the agentsession processor emits them (docs/architecture.md §6).

func ptr[T any](v T) *T { return &v }

var (
	t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

	traceTurn0 = pcommon.TraceID{0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	traceTurn1 = pcommon.TraceID{0x11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
)

// turn0 is turn 0 of session "sess-checkout": the planner hands off to the executor,
// which calls refund_order twice (once valid, once with a hallucinated parameter) and
// lookup_order once without a known schema. The final verdict (rdm) comes later.
func turn0(final bool) evaluation.TurnResult {
	tr := evaluation.TurnResult{
		SessionID:  "sess-checkout",
		TurnIndex:  0,
		TraceID:    traceTurn0.String(),
		RootSpanID: "00000000000000a0",
		Final:      final,
		LatencyMs:  2400,
		Usage:      session.Usage{InputTokens: 900, OutputTokens: 120, LLMCalls: 3},
		Interactions: []evaluation.InteractionResult{
			{
				AgentID:         "planner",
				SpanID:          "00000000000000a1",
				Score:           ptr(0.9),
				Handoff:         ptr(0.8),
				ResponseQuality: ptr(1.0),
				LatencyMs:       1200,
				Status:          "ok",
				Handoffs: []session.Handoff{{
					FromAgent: "planner", ToAgent: "executor", Mode: "pass_control",
					Payload: "refund order 1234", PayloadCaptured: true, SourceRule: "gen_ai.handoff",
				}},
			},
			{
				AgentID:         "executor",
				SpanID:          "00000000000000a2",
				Score:           ptr(0.6),
				ToolUse:         ptr(0.5),
				Reasoning:       ptr(0.7),
				ResponseQuality: ptr(1.0),
				LatencyMs:       800,
				Status:          "ok",
				ToolCalls: []evaluation.ToolCallResult{
					{
						ToolName: "refund_order", CallID: "call_1", SpanID: "00000000000000b1", AgentID: "executor",
						Score: ptr(1.0), Verdict: evaluation.VerdictValid, Executed: true, Status: "ok",
						LatencyMs: ptr(250.0),
					},
					{
						ToolName: "refund_order", CallID: "call_2", SpanID: "00000000000000b2", AgentID: "executor",
						Score: ptr(0.5), Verdict: evaluation.VerdictInvalid, Executed: true, Status: "ok",
						LatencyMs: ptr(50.0),
						Issues: []evaluation.ToolIssue{{
							TurnIndex: 0, AgentID: "executor", ToolName: "refund_order",
							Issue: evaluation.IssueParameterHallucination, Severity: evaluation.SeverityMedium,
							Parameter: "reason", SpanID: "00000000000000b2", Executed: true,
							Message: "refund_order: unknown parameter 'reason'",
						}},
					},
					{
						ToolName: "lookup_order", CallID: "call_3", SpanID: "00000000000000b3", AgentID: "executor",
						Verdict: evaluation.VerdictNotEvaluable, Status: "not_executed",
						NotEvaluable: []string{"schema_unknown"},
					},
				},
			},
		},
	}
	if final {
		tr.IsBad = true
		tr.DetectionType = evaluation.DetectionRDM
		tr.Confidence = 0.9
		tr.Reason = "the next user message says \"that's wrong\""
	}
	return tr
}

// turn1 is the last turn of "sess-checkout": one executor call, no detection.
func turn1(final bool) evaluation.TurnResult {
	tr := evaluation.TurnResult{
		SessionID:  "sess-checkout",
		TurnIndex:  1,
		TraceID:    traceTurn1.String(),
		RootSpanID: "00000000000000c0",
		Final:      final,
		LatencyMs:  3000,
		Interactions: []evaluation.InteractionResult{{
			AgentID:   "executor",
			SpanID:    "00000000000000c2",
			Score:     ptr(1.0),
			ToolUse:   ptr(1.0),
			LatencyMs: 2500,
			Status:    "ok",
			ToolCalls: []evaluation.ToolCallResult{{
				ToolName: "refund_order", CallID: "call_4", SpanID: "00000000000000d1", AgentID: "executor",
				Score: ptr(1.0), Verdict: evaluation.VerdictValid, Executed: true, Status: "ok",
				LatencyMs: ptr(2000.0),
			}},
		}},
	}
	if final {
		tr.DetectionType = evaluation.DetectionNone
	}
	return tr
}

// analysisCheckout is the session analysis of "sess-checkout".
func analysisCheckout() evaluation.Analysis {
	final0, final1 := turn0(true), turn1(true)
	return evaluation.Analysis{
		SessionID:         "sess-checkout",
		Service:           "shop-agents",
		StartedAt:         t0,
		EndedAt:           t0.Add(5 * time.Minute),
		EndReason:         "session_timeout",
		OverallScore:      ptr(0.82),
		CoordinationScore: ptr(0.9),
		IntentDriftScore:  ptr(0.15),
		TaskCompletion:    ptr(true),
		// Mean of the evaluable call scores (1, 0.5, 1) and of the reasoning scores.
		ToolUseScore:   ptr(2.5 / 3),
		ReasoningScore: ptr(0.7),
		PerAgentScores: map[string]evaluation.AgentScores{
			"planner": {
				Overall: ptr(0.9), Handoff: ptr(0.8), ResponseQuality: ptr(1.0),
				InteractionsCount: 1, MeanLatencyMs: 1200,
			},
			"executor": {
				Overall: ptr(0.8), ToolUse: ptr(0.75), Reasoning: ptr(0.7), ResponseQuality: ptr(1.0),
				InteractionsCount: 2, ToolCalls: 4, NotEvaluableCalls: 1, MeanLatencyMs: 1650,
				Issues: []string{"PARAMETER_HALLUCINATION"},
			},
		},
		TurnResults: []evaluation.TurnResult{final0, final1},
		Conversation: evaluation.ConversationSummary{
			TotalResponses: 2, GoodResponses: 1, BadResponses: 1, RDMDetections: 1, Score: ptr(0.5),
		},
		ToolIssues: final0.Interactions[1].ToolCalls[1].Issues,
		Recommendations: []evaluation.Recommendation{
			{Kind: "parameter_hallucination", AgentID: "executor", ToolName: "refund_order", Parameter: "reason", Count: 1,
				Message: "executor: 1 call to refund_order passed unknown parameter 'reason'", Impact: 0.5},
			{Kind: "tool_use", AgentID: "executor", Message: "Consider improving tool selection logic for executor", Impact: 0.3},
		},
		Latency: evaluation.LatencySummary{TotalMs: 5400, MeanTurnMs: 2700, MaxTurnMs: 3000, ToolCalls: 3},
		Usage:   session.Usage{InputTokens: 900, OutputTokens: 120, LLMCalls: 3},
	}
}

// analysisSupport is an older, partial, failed session of the planner alone.
func analysisSupport() evaluation.Analysis {
	return evaluation.Analysis{
		SessionID:      "sess-support",
		StartedAt:      t0.Add(-2 * time.Hour),
		EndedAt:        t0.Add(-time.Hour),
		Partial:        true,
		EndReason:      "shutdown",
		OverallScore:   ptr(0.4),
		TaskCompletion: ptr(false),
		PerAgentScores: map[string]evaluation.AgentScores{
			"planner": {Overall: ptr(0.4), ResponseQuality: ptr(0.4), InteractionsCount: 1},
		},
		TurnResults: []evaluation.TurnResult{{
			SessionID: "sess-support", Final: true, DetectionType: evaluation.DetectionNone,
			Interactions: []evaluation.InteractionResult{{AgentID: "planner", ResponseQuality: ptr(0.4), LatencyMs: 300}},
		}},
		Conversation: evaluation.ConversationSummary{TotalResponses: 1, GoodResponses: 1, Score: ptr(1.0)},
	}
}

// evalSpans builds one ResourceSpans of evaluation spans the way the processor emits
// them, plus one application span that the exporter must ignore.
type spanBuilder struct {
	t   testing.TB
	td  ptrace.Traces
	ss  ptrace.ScopeSpans
	seq byte
}

func newSpanBuilder(t testing.TB) *spanBuilder {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "shop-agents")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/agenteval/agenteval-collector/processor/agentsessionprocessor")
	return &spanBuilder{t: t, td: td, ss: ss}
}

func (b *spanBuilder) span(traceID pcommon.TraceID, name string) ptrace.Span {
	b.seq++
	sp := b.ss.Spans().AppendEmpty()
	sp.SetTraceID(traceID)
	sp.SetSpanID(pcommon.SpanID{0xe, 0, 0, 0, 0, 0, 0, b.seq})
	sp.SetParentSpanID(pcommon.SpanID{0xa, 0, 0, 0, 0, 0, 0, b.seq})
	sp.SetName(name)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(t0))
	return sp
}

// turn adds an `evaluate turn` span carrying tr.
func (b *spanBuilder) turn(tr evaluation.TurnResult) *spanBuilder {
	traceID := traceTurn0
	if tr.TurnIndex == 1 {
		traceID = traceTurn1
	}
	sp := b.span(traceID, "evaluate turn")
	attrs := sp.Attributes()
	attrs.PutStr("agent_eval.kind", "turn")
	attrs.PutStr("agent_eval.session.id", tr.SessionID)
	attrs.PutBool("agent_eval.partial", tr.Partial)
	evalspan.EncodeTurn(attrs, &tr)
	return b
}

// session adds an `evaluate agent_session` span carrying a.
func (b *spanBuilder) session(a evaluation.Analysis) *spanBuilder {
	sp := b.span(traceTurn1, "evaluate agent_session")
	attrs := sp.Attributes()
	attrs.PutStr("agent_eval.kind", "agent_session")
	attrs.PutStr("agent_eval.session.id", a.SessionID)
	attrs.PutStr("gen_ai.conversation.id", a.SessionID)
	if a.OverallScore != nil {
		attrs.PutDouble("agent_eval.overall_score", *a.OverallScore)
	}
	evalspan.EncodeAnalysis(attrs, &a)
	return b
}

// toolCall adds an `evaluate tool_call` span (its data is in the turn result; the
// exporter reads nothing from it).
func (b *spanBuilder) toolCall() *spanBuilder {
	sp := b.span(traceTurn0, "evaluate tool_call")
	sp.Attributes().PutStr("agent_eval.kind", "tool_call")
	sp.Attributes().PutStr("gen_ai.agent.name", "executor")
	sp.Attributes().PutStr("gen_ai.tool.name", "refund_order")
	sp.Attributes().PutEmptySlice("agent_eval.tool.issues").AppendEmpty().SetStr("PARAMETER_HALLUCINATION")
	return b
}

// appSpan adds an ordinary GenAI span, which the exporter must skip.
func (b *spanBuilder) appSpan() *spanBuilder {
	sp := b.span(traceTurn0, "chat gpt-4o")
	sp.Attributes().PutStr("gen_ai.operation.name", "chat")
	sp.Attributes().PutStr("gen_ai.agent.name", "executor")
	sp.Attributes().PutStr("agent_eval.turn.trace_id", `never read without agent_eval.kind`)
	return b
}

func (b *spanBuilder) traces() ptrace.Traces { return b.td }
