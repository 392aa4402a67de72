// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

// dependencyCompliance comes from the expected interactions of a dataset case
// (docs/scoring.md §11): sessionReferences sets it, with its explanation, before
// coordination runs; without a reference it is absent.
type dependencyCompliance struct{}

var _ coordinationComponent = dependencyCompliance{}

func (dependencyCompliance) evaluate(_ *Evaluator, _ coordinationInput, a *Analysis) (*float64, string) {
	if v := a.Coordination.DependencyCompliance; v != nil {
		return v, a.Explanations[keyDependencyCompl]
	}
	return nil, "null: no expected interactions (reference-based evaluation, docs/scoring.md §11)"
}
