// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

func TestIntentDrift(t *testing.T) {
	tests := []struct {
		name        string
		user, final string
		steps       []session.AgentStep
		want        float64
	}{
		// request tokens {compar, 111, 222}: the answer has 111 only → 1 − 1/3.
		{"answer covers a third", "Compare 111 and 222", "111 is larger", nil, 2.0 / 3},
		{"answer covers all", "Compare 111 and 222", "Comparing 111 with 222: 222 is larger", nil, 0},
		{"nothing relevant", "Compare 111 and 222", "The weather is sunny", nil, 1},
		// the best item wins: the tool call names both numbers.
		{"best item is a tool call", "Compare 111 and 222", "done",
			[]session.AgentStep{toolStep("compare", `{"a":111,"b":222}`, "", 1)}, 0},
		{"no user content → null", "", "anything", nil, null},
		{"a closing thanks states no intent → null", "Thanks!", "You're welcome, have a nice day.", nil, null},
		{"two content words are an intent", "Where is order 555?", "The weather is sunny", nil, 1},
		{"no action or answer → null", "Compare 111 and 222", "", nil, null},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession("d", nil, turn(0, tt.user, tt.final, 10, interaction("a", "", tt.final, 10, tt.steps...)))
			tr := e.EvaluateTurn(s, 0, true)
			score(t, "intent_drift", tt.want, tr.IntentDrift)
			assert.NotEmpty(t, tr.Explanations[keyIntentDrift])
		})
	}
	// Session drift is the max over turns.
	s := newSession("d", nil,
		turn(0, "Compare 111 and 222", "Comparing 111 with 222", 10, interaction("a", "", "Comparing 111 with 222", 10)),
		turn(1, "Compare 333 and 444", "333", 10, interaction("a", "", "333", 10)))
	a := e.AnalyzeSession(s)
	score(t, "intent_drift_score", 2.0/3, a.IntentDriftScore)
	assert.Contains(t, a.Explanations[keyIntentDriftScore], "(turn 2)", "turn_index 1 is the second turn")
}
