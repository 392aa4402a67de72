// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDependencyCompliance: the component is the references' value, with their
// explanation, and absent without them.
func TestDependencyCompliance(t *testing.T) {
	a := Analysis{Explanations: map[string]string{}}
	v, expl := dependencyCompliance{}.evaluate(newEval(t), coordinationInput{}, &a)
	assert.Nil(t, v)
	assert.Equal(t, "null: no expected interactions (reference-based evaluation, docs/scoring.md §11)", expl)

	(&ReferenceScores{DependencyCompliance: ptr(1.5)}).apply(&a)
	v, expl = dependencyCompliance{}.evaluate(newEval(t), coordinationInput{}, &a)
	score(t, "dependency_compliance", 1, v)
	assert.Equal(t, "from the expected interactions of the dataset case: satisfied / required dependencies = 1", expl)
}
