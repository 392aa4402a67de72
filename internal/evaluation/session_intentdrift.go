// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import "fmt"

func sessionIntentDrift(trs []TurnResult) (*float64, string) {
	var best *float64
	at := -1
	n := 0
	for _, tr := range trs {
		if tr.IntentDrift == nil {
			continue
		}
		n++
		if best == nil || *tr.IntentDrift > *best {
			best, at = ptr(*tr.IntentDrift), tr.TurnIndex
		}
	}
	if best == nil {
		return nil, "null: no turn has an intent drift (user messages or actions not captured)"
	}
	return best, fmt.Sprintf("max over %d turn(s) = %s (turn %d)", n, num(*best), turnNumber(at))
}

// sessionIntentDriftScore sets intent_drift_score.
type sessionIntentDriftScore struct{}

var _ sessionEvaluator = sessionIntentDriftScore{}

func (sessionIntentDriftScore) evaluate(_ *Evaluator, _ sessionInput, a *Analysis) {
	a.IntentDriftScore, a.Explanations[keyIntentDriftScore] = sessionIntentDrift(a.TurnResults)
}
