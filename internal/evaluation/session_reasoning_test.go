// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSessionReasoning(t *testing.T) {
	turn := func(vals ...*float64) TurnResult {
		var tr TurnResult
		for _, v := range vals {
			tr.Interactions = append(tr.Interactions, InteractionResult{Reasoning: v})
		}
		return tr
	}
	tests := []struct {
		name  string
		turns []TurnResult
		want  float64
		expl  string
	}{
		{"no reasoning", []TurnResult{turn(nil, nil)}, null, "null: no interaction has reasoning content"},
		{"mean of the present", []TurnResult{turn(ptr(0.5), nil), turn(ptr(1))}, 0.75, "mean reasoning_score of 2 interaction(s) = 0.75"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Analysis{TurnResults: tt.turns, Explanations: map[string]string{}}
			sessionReasoningScore{}.evaluate(newEval(t), sessionInput{}, &a)
			score(t, keyReasoningScore, tt.want, a.ReasoningScore)
			assert.Equal(t, tt.expl, a.Explanations[keyReasoningScore])
		})
	}
}
