// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import "testing"

func TestSessionReasoning(t *testing.T) {
	turn := func(vals ...*float64) TurnResult {
		var tr TurnResult
		for _, v := range vals {
			tr.Interactions = append(tr.Interactions, InteractionResult{Reasoning: v})
		}
		return tr
	}
	testTurnsScore(t, sessionReasoningScore{}, keyReasoningScore, func(a *Analysis) *float64 { return a.ReasoningScore }, []turnsCase{
		{"no reasoning", []TurnResult{turn(nil, nil)}, null, "null: no interaction has reasoning content"},
		{"mean of the present", []TurnResult{turn(ptr(0.5), nil), turn(ptr(1))}, 0.75, "mean reasoning_score of 2 interaction(s) = 0.75"},
	})
}
