// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

func TestExplicitOutcomeWins(t *testing.T) {
	s := refundSession()
	yes := true
	s.Outcome = &yes
	a := newEval(t).AnalyzeSession(s)
	require.NotNil(t, a.TaskCompletion)
	assert.True(t, *a.TaskCompletion) // even though the last turn is bad
	assert.Equal(t, "true: explicit outcome signal", a.Explanations[keyTaskCompletion])

	s = correctionSession()
	s.Turns[1].Partial = true
	a = newEval(t).AnalyzeSession(s)
	assert.Nil(t, a.TaskCompletion)
}

// TestTaskCompletion: the explicit outcome first, else the last turn decides (docs/scoring.md §6).
func TestTaskCompletion(t *testing.T) {
	yes, no := true, false
	ok := TurnRecord{FinalResponder: 0, Summary: TurnSummary{HasContent: true}, Result: TurnResult{
		FinalResponse: "Refund R-778 issued.", Interactions: []InteractionResult{{AgentID: "executor"}}}}
	mod := func(f func(*TurnRecord)) TurnRecord {
		r := ok
		r.Result.Interactions = slices.Clone(ok.Result.Interactions)
		f(&r)
		return r
	}
	tests := []struct {
		name    string
		outcome *bool
		recs    []TurnRecord
		want    *bool
		expl    string
	}{
		{"no turns", nil, nil, nil, "null: no turns and no explicit outcome"},
		{"explicit outcome of the session", &no, []TurnRecord{ok}, &no, "false: explicit outcome signal"},
		{"explicit outcome of a turn", nil, []TurnRecord{mod(func(r *TurnRecord) { r.Summary.Outcome = &yes }), mod(func(r *TurnRecord) { r.Result.IsBad = true })},
			&yes, "true: explicit outcome signal"},
		{"good last turn", nil, []TurnRecord{ok}, &yes,
			"true: no explicit outcome; the last turn is not bad, has a final response, no HIGH issue and no error"},
		{"no answer", nil, []TurnRecord{mod(func(r *TurnRecord) { r.Result.DetectionType, r.Result.Reason = DetectionNoAnswer, "no final response" })},
			&no, "false: the last turn gave no answer (no final response)"},
		{"partial", nil, []TurnRecord{mod(func(r *TurnRecord) { r.Result.Partial = true })}, nil,
			"null: the last turn is partial (cut short) and no explicit outcome was seen"},
		{"no content", nil, []TurnRecord{mod(func(r *TurnRecord) { r.Summary.HasContent = false })}, nil,
			"null: the last turn has no captured content and no explicit outcome was seen"},
		{"bad and empty", nil, []TurnRecord{mod(func(r *TurnRecord) {
			r.Result.IsBad, r.Result.DetectionType, r.Result.FinalResponse = true, DetectionRDM, ""
		})}, &no, "false: the last turn is bad (rdm); the final response is empty"},
		{"unrecovered HIGH issue", nil, []TurnRecord{mod(func(r *TurnRecord) {
			r.Result.Interactions[0].ToolCalls = []ToolCallResult{{Issues: []ToolIssue{{Severity: SeverityHigh, Issue: IssueUnauthorizedTool, AgentID: "executor", ToolName: "issue_refund"}}}}
		})}, &no, "false: HIGH issue UNAUTHORIZED_TOOL (executor → issue_refund)"},
		{"recovered HIGH issue", nil, []TurnRecord{mod(func(r *TurnRecord) {
			r.Result.Interactions[0].ToolCalls = []ToolCallResult{{RecoveredBy: "s2", Issues: []ToolIssue{{Severity: SeverityHigh, Issue: IssueUnauthorizedTool}}}}
		})}, &yes, "true: no explicit outcome; the last turn is not bad, has a final response, no HIGH issue and no error"},
		{"final responder failed", nil, []TurnRecord{mod(func(r *TurnRecord) { r.Result.Interactions[0].Status = session.StatusError })},
			&no, "false: the final responder executor ended with error status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Analysis{Explanations: map[string]string{}}
			sessionTaskCompletion{}.evaluate(newEval(t), sessionInput{meta: SessionMeta{Outcome: tt.outcome}, recs: tt.recs}, &a)
			assert.Equal(t, tt.want, a.TaskCompletion)
			assert.Equal(t, tt.expl, a.Explanations[keyTaskCompletion])
		})
	}
}
