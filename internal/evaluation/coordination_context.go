// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import "fmt"

// contextPreserved is the mean handoff score of the interactions that have one.
type contextPreserved struct{}

var _ coordinationComponent = contextPreserved{}

func (contextPreserved) evaluate(_ *Evaluator, _ coordinationInput, a *Analysis) (*float64, string) {
	var hs []*float64
	for ti := range a.TurnResults {
		for ii := range a.TurnResults[ti].Interactions {
			hs = append(hs, a.TurnResults[ti].Interactions[ii].Handoff)
		}
	}
	if m, n := meanOf(hs); m != nil {
		return m, fmt.Sprintf("mean handoff_score of %d interaction(s) = %s", n, num(*m))
	}
	return nil, "null: no interaction has a handoff_score"
}
