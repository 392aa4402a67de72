// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import "fmt"

func sessionReasoning(trs []TurnResult) (*float64, string) {
	var vals []*float64
	for ti := range trs {
		for ii := range trs[ti].Interactions {
			vals = append(vals, trs[ti].Interactions[ii].Reasoning)
		}
	}
	m, n := meanOf(vals)
	if m == nil {
		return nil, "null: no interaction has reasoning content"
	}
	return m, fmt.Sprintf("mean reasoning_score of %d interaction(s) = %s", n, num(*m))
}

// sessionReasoningScore sets reasoning_score.
type sessionReasoningScore struct{}

var _ sessionEvaluator = sessionReasoningScore{}

func (sessionReasoningScore) evaluate(_ *Evaluator, _ sessionInput, a *Analysis) {
	a.ReasoningScore, a.Explanations[keyReasoningScore] = sessionReasoning(a.TurnResults)
}
