// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"cmp"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// markRecovered sets RecoveredBy on each call of the turn with a MEDIUM or HIGH issue
// when a later call of the turn (any agent) to the same tool ended ok without any MEDIUM
// or HIGH issue: the fault was rejected and retried correctly (docs/scoring.md §5.2).
func markRecovered(irs []InteractionResult) {
	type ref struct{ i, j int }
	var buf [32]ref // a turn's calls: on the stack unless there are more
	calls := buf[:0]
	for i := range irs {
		for j := range irs[i].ToolCalls {
			calls = append(calls, ref{i, j})
		}
	}
	serious := func(tc *ToolCallResult) bool {
		for _, is := range tc.Issues {
			if is.Severity == SeverityHigh || is.Severity == SeverityMedium {
				return true
			}
		}
		return false
	}
	for k, r := range calls {
		tc := &irs[r.i].ToolCalls[r.j]
		if !serious(tc) {
			continue
		}
		for _, r2 := range calls[k+1:] {
			later := &irs[r2.i].ToolCalls[r2.j]
			if later.ToolName == tc.ToolName && later.Status == session.StatusOK && !serious(later) {
				tc.RecoveredBy = cmp.Or(later.SpanID, later.CallID, later.ToolName)
				break
			}
		}
	}
}

// toolRecovery marks the turn's calls that a later call recovered (markRecovered), before
// the detection reads them.
type toolRecovery struct{}

var _ turnEvaluator = toolRecovery{}

func (toolRecovery) evaluate(_ *evalCtx, _ turnInput, tr *TurnResult) {
	markRecovered(tr.Interactions)
}
