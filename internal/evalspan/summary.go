// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan // import "github.com/agenteval/agenteval-collector/internal/evalspan"

import (
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// SummaryUserMessageBytes caps the user message a turn summary carries, in bytes: the
// live UI's turn event shows 280 bytes of it (internal/webui), and four more bytes
// (one rune) keep its "…" where the whole message would put it.
const SummaryUserMessageBytes = 284

// TurnSummary returns the part of tr that a turn span carries (docs/architecture.md §6):
// the turn's ids, verdict, scores, latency and usage, and per interaction its agent,
// scores, latency and handoffs (from, to), per tool call its tool, agent, score,
// verdict, latency, issue kinds and severities and not-evaluable reasons: what the
// exporter's per-turn metrics, console line and live events read. The texts and
// explanations (the final response, the user message past SummaryUserMessageBytes,
// the score explanations, the issue messages and parameters, the handoff payloads) and
// the per-call ids and statuses are left out: the session span's analysis carries the
// complete TurnResult once, and the store keeps it from there. A final verdict
// (tr.Final) carries no interactions: they were sent with the turn's first
// (provisional) span and do not change. tr is not modified.
func TurnSummary(tr *evaluation.TurnResult) evaluation.TurnResult {
	s := *tr
	s.FinalResponse = ""
	s.Explanations = nil
	s.UserMessage = text.Cut(s.UserMessage, SummaryUserMessageBytes)
	if s.Final {
		s.Interactions = nil
		return s
	}
	if tr.Interactions == nil {
		return s
	}
	s.Interactions = make([]evaluation.InteractionResult, len(tr.Interactions))
	for i := range tr.Interactions {
		s.Interactions[i] = interactionSummary(&tr.Interactions[i])
	}
	return s
}

func interactionSummary(ir *evaluation.InteractionResult) evaluation.InteractionResult {
	out := evaluation.InteractionResult{
		AgentID: ir.AgentID, Score: ir.Score, ToolUse: ir.ToolUse, Reasoning: ir.Reasoning,
		Handoff: ir.Handoff, ResponseQuality: ir.ResponseQuality, LatencyMs: ir.LatencyMs,
	}
	if ir.Handoffs != nil {
		out.Handoffs = make([]session.Handoff, len(ir.Handoffs))
		for j, h := range ir.Handoffs {
			out.Handoffs[j] = session.Handoff{FromAgent: h.FromAgent, ToAgent: h.ToAgent}
		}
	}
	if ir.ToolCalls != nil {
		out.ToolCalls = make([]evaluation.ToolCallResult, len(ir.ToolCalls))
		for j := range ir.ToolCalls {
			tc := &ir.ToolCalls[j]
			c := evaluation.ToolCallResult{
				ToolName: tc.ToolName, AgentID: tc.AgentID, Score: tc.Score, Verdict: tc.Verdict,
				NotEvaluable: tc.NotEvaluable, LatencyMs: tc.LatencyMs,
			}
			if tc.Issues != nil {
				c.Issues = make([]evaluation.ToolIssue, len(tc.Issues))
				for k, is := range tc.Issues {
					c.Issues[k] = evaluation.ToolIssue{Issue: is.Issue, Severity: is.Severity}
				}
			}
			out.ToolCalls[j] = c
		}
	}
	return out
}
