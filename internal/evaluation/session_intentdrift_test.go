// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import "testing"

// TestSessionIntentDrift: intent_drift_score is the largest turn drift, and names the
// first turn that reached it.
func TestSessionIntentDrift(t *testing.T) {
	turns := func(drifts ...*float64) []TurnResult {
		out := make([]TurnResult, len(drifts))
		for i, d := range drifts {
			out[i] = TurnResult{TurnIndex: i, IntentDrift: d}
		}
		return out
	}
	testTurnsScore(t, sessionIntentDriftScore{}, keyIntentDriftScore, func(a *Analysis) *float64 { return a.IntentDriftScore }, []turnsCase{
		{"no drift known", turns(nil, nil), null, "null: no turn has an intent drift (user messages or actions not captured)"},
		{"max over the turns", turns(nil, ptr(0.2), ptr(0.6), ptr(0.6)), 0.6, "max over 3 turn(s) = 0.6 (turn 3)"},
		{"on task", turns(ptr(0)), 0, "max over 1 turn(s) = 0 (turn 1)"},
	})
}
