// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// taskCompletion: the explicit outcome first (the session's, else the last turn's that
// has one); else the last turn is not bad, has a non-empty final response, no HIGH
// tool issue that a later call did not recover and no error status (turn root or final
// responder). A last turn without answer (no_answer) is false. Nil without turns, when
// the last turn is partial, or when it has no captured content (docs/scoring.md §6).
func taskCompletion(outcome *bool, recs []TurnRecord) (*bool, string) {
	if outcome == nil {
		for i := range recs {
			if o := recs[i].Summary.Outcome; o != nil {
				outcome = o
			}
		}
	}
	if outcome != nil {
		v := *outcome
		return &v, fmt.Sprintf("%t: explicit outcome signal", v)
	}
	if len(recs) == 0 {
		return nil, "null: no turns and no explicit outcome"
	}
	last := &recs[len(recs)-1]
	tr := last.Result
	if tr.DetectionType == DetectionNoAnswer {
		f := false
		return &f, "false: the last turn gave no answer (" + tr.Reason + ")"
	}
	if tr.Partial {
		return nil, "null: the last turn is partial (cut short) and no explicit outcome was seen"
	}
	if !last.Summary.HasContent {
		return nil, "null: the last turn has no captured content and no explicit outcome was seen"
	}
	var fails []string
	if tr.IsBad {
		fails = append(fails, "the last turn is bad ("+tr.DetectionType+")")
	}
	if strings.TrimSpace(tr.FinalResponse) == "" {
		fails = append(fails, "the final response is empty")
	}
	for ii := range tr.Interactions {
		for ci := range tr.Interactions[ii].ToolCalls {
			tc := &tr.Interactions[ii].ToolCalls[ci]
			for _, is := range tc.Issues {
				if is.Severity == SeverityHigh && tc.RecoveredBy == "" {
					fails = append(fails, "HIGH issue "+string(is.Issue)+" ("+is.AgentID+" → "+is.ToolName+")")
				}
			}
		}
	}
	if last.Summary.Status == session.StatusError {
		fails = append(fails, "the turn ended with error status")
	}
	if fr := last.FinalResponder; fr >= 0 && fr < len(tr.Interactions) && tr.Interactions[fr].Status == session.StatusError {
		fails = append(fails, "the final responder "+tr.Interactions[fr].AgentID+" ended with error status")
	}
	if len(fails) > 0 {
		f := false
		return &f, "false: " + strings.Join(fails, "; ")
	}
	t := true
	return &t, "true: no explicit outcome; the last turn is not bad, has a final response, no HIGH issue and no error"
}

// sessionTaskCompletion sets task_completion.
type sessionTaskCompletion struct{}

var _ sessionEvaluator = sessionTaskCompletion{}

func (sessionTaskCompletion) evaluate(_ *Evaluator, x sessionInput, a *Analysis) {
	a.TaskCompletion, a.Explanations[keyTaskCompletion] = taskCompletion(x.meta.Outcome, x.recs)
}
