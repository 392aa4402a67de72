// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Explanation keys of an Analysis.
const (
	keyOverallScore      = "overall_score"
	keyCoordinationScore = "coordination_score"
	keyIntentDriftScore  = "intent_drift_score"
	keyTaskCompletion    = "task_completion"
	keyConversationScore = "conversation_score"
	keyToolUseScore      = "tool_use_score"
	keyReasoningScore    = "reasoning_score"
	keyNoDuplicateWork   = "coordination.no_duplicate_work"
	keyContextPreserved  = "coordination.context_preserved"
	keyRoleAdherence     = "coordination.role_adherence"
	keyNoPingPong        = "coordination.no_ping_pong"
	keyDependencyCompl   = "coordination.dependency_compliance"
)

// AnalyzeSession evaluates the whole session (docs/scoring.md §3–§6) the way the
// processor does turn by turn: each turn once (EvaluateClosedTurn), its verdict made
// final by the next user message (FollowUp; the last turn by FinishLast), then the
// records aggregated (Aggregate). A nil session gives an empty analysis.
func (e *Evaluator) AnalyzeSession(s *session.AgentSession) Analysis {
	return e.AnalyzeSessionWithReferences(s, nil)
}

// AnalyzeSessionWithReferences is AnalyzeSession with reference-based results folded in
// (SessionMeta.References); refs nil is AnalyzeSession.
func (e *Evaluator) AnalyzeSessionWithReferences(s *session.AgentSession, refs *ReferenceScores) Analysis {
	if s == nil {
		s = &session.AgentSession{}
	}
	recs := make([]TurnRecord, len(s.Turns))
	for ti := range s.Turns {
		var prev *TurnRecord
		if ti > 0 {
			prev = &recs[ti-1]
		}
		recs[ti] = e.EvaluateClosedTurn(s.ID, s.Agents, &s.Turns[ti], ti, prev)
	}
	for ti := range recs {
		if ti+1 < len(recs) {
			recs[ti] = e.FollowUp(recs[ti], recs[ti+1].Result.UserMessage)
		} else {
			recs[ti] = e.FinishLast(recs[ti])
		}
	}
	meta := SessionMeta{
		ID: s.ID, Service: s.Service, Partial: s.Partial, EndReason: string(s.EndReason),
		Outcome: s.Outcome, StartedAt: s.StartedAt, EndedAt: s.EndedAt, Usage: &s.Usage,
		TotalLatencyMs: s.TotalLatencyMs, References: refs,
	}
	for _, a := range s.Agents {
		meta.Agents = append(meta.Agents, a.ID)
	}
	return e.Aggregate(meta, recs)
}

// Aggregate computes the session analysis (docs/scoring.md §6) from the final turn records,
// in turn order: conversation summary, tool use, reasoning, coordination, intent drift,
// task completion, overall score, per-agent scores, tool issues, recommendations and
// latency. It reads no turn model: its cost is linear in the records, and it gives the
// same analysis before and after a restart.
func (e *Evaluator) Aggregate(meta SessionMeta, recs []TurnRecord) Analysis {
	a := Analysis{
		SessionID: meta.ID, Service: meta.Service, Partial: meta.Partial, EndReason: meta.EndReason,
		StartedAt: meta.StartedAt, EndedAt: meta.EndedAt,
		PerAgentScores:  map[string]AgentScores{},
		TurnResults:     make([]TurnResult, 0, len(recs)),
		ToolIssues:      []ToolIssue{},
		Recommendations: []Recommendation{},
		Explanations:    map[string]string{},
	}
	var usage session.Usage
	for i := range recs {
		a.TurnResults = append(a.TurnResults, recs[i].Result)
		tr := &a.TurnResults[len(a.TurnResults)-1] // read in place: a TurnResult is large
		// The record's stage is the turn's (a record saved before results carried
		// WithFollowUp has it in NoFollowUp only): the result store compares it.
		tr.WithFollowUp = VerdictStage(&recs[i]) == 2
		// A session with a turn cut short is partial (docs/scoring.md §6).
		a.Partial = a.Partial || tr.Partial
		usage.Add(tr.Usage)
		if st := recs[i].Summary.StartedAt; meta.StartedAt.IsZero() && !st.IsZero() && (a.StartedAt.IsZero() || st.Before(a.StartedAt)) {
			a.StartedAt = st
		}
		if en := recs[i].Summary.EndedAt; meta.EndedAt.IsZero() && en.After(a.EndedAt) {
			a.EndedAt = en
		}
		for ii := range tr.Interactions {
			for ci := range tr.Interactions[ii].ToolCalls {
				a.ToolIssues = append(a.ToolIssues, tr.Interactions[ii].ToolCalls[ci].Issues...)
			}
		}
	}
	a.Usage = usage
	if meta.Usage != nil {
		a.Usage = *meta.Usage
	}
	x := sessionInput{meta: meta, recs: recs}
	for _, ev := range sessionEvaluators {
		ev.evaluate(e, x, &a)
	}
	a.roundScores()
	return a
}

// sessionInput is what a sessionEvaluator reads besides the analysis built so far.
type sessionInput struct {
	meta SessionMeta
	// recs are the final turn records, in turn order (a.TurnResults holds their results).
	recs []TurnRecord
}
