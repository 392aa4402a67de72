// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestMarkRecovered: a MEDIUM or HIGH call is recovered by a later ok call of the same
// tool (any agent) without such an issue.
func TestMarkRecovered(t *testing.T) {
	bad := func(id string, sev Severity) ToolCallResult {
		return ToolCallResult{ToolName: "send_email", SpanID: id, Status: session.StatusOK, Issues: []ToolIssue{{Severity: sev}}}
	}
	good := func(id, tool, status string) ToolCallResult {
		return ToolCallResult{ToolName: tool, SpanID: id, Status: status}
	}
	tests := []struct {
		name  string
		calls [][]ToolCallResult // per interaction
		want  []string           // RecoveredBy of each call, in order
	}{
		{"retried correctly", [][]ToolCallResult{{bad("a", SeverityMedium), good("b", "send_email", session.StatusOK)}}, []string{"b", ""}},
		{"retried by another agent", [][]ToolCallResult{{bad("a", SeverityHigh)}, {good("b", "send_email", session.StatusOK)}}, []string{"b", ""}},
		{"low issue needs no recovery", [][]ToolCallResult{{bad("a", SeverityLow), good("b", "send_email", session.StatusOK)}}, []string{"", ""}},
		{"retry failed", [][]ToolCallResult{{bad("a", SeverityMedium), good("b", "send_email", session.StatusError)}}, []string{"", ""}},
		{"another tool", [][]ToolCallResult{{bad("a", SeverityMedium), good("b", "lookup_order", session.StatusOK)}}, []string{"", ""}},
		{"retry as bad", [][]ToolCallResult{{bad("a", SeverityMedium), bad("b", SeverityMedium)}}, []string{"", ""}},
		{"earlier call does not recover", [][]ToolCallResult{{good("b", "send_email", session.StatusOK), bad("a", SeverityMedium)}}, []string{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			irs := make([]InteractionResult, len(tt.calls))
			for i, cs := range tt.calls {
				irs[i].ToolCalls = cs
			}
			toolRecovery{}.evaluate(nil, turnInput{}, &TurnResult{Interactions: irs})
			var got []string
			for _, ir := range irs {
				for _, tc := range ir.ToolCalls {
					got = append(got, tc.RecoveredBy)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
