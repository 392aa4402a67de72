// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEvaluatorListsAreConsistent: the lists name each component once, an interaction
// component's field and weight are its own, and a coordination component's explanation
// key is "coordination." + its name.
func TestEvaluatorListsAreConsistent(t *testing.T) {
	seen := map[string]bool{}
	w := AgentWeights{ToolUse: 1, Reasoning: 2, Handoff: 3, ResponseQuality: 4}
	weights := map[float64]bool{}
	for i, ev := range interactionEvaluators {
		assert.False(t, seen[ev.name()], "%s listed twice", ev.name())
		seen[ev.name()] = true
		weights[ev.weight(w)] = true
		var r InteractionResult
		var as AgentScores
		v := ptr(float64(i))
		*ev.field(&r), *ev.agentField(&as) = v, v
		// The component sets one field of each, and the same one.
		assert.Equal(t, 1, countSet(r.ToolUse, r.Reasoning, r.Handoff, r.ResponseQuality), ev.name())
		assert.Equal(t, 1, countSet(as.ToolUse, as.Reasoning, as.Handoff, as.ResponseQuality), ev.name())
		assert.Equal(t, r.ToolUse == v, as.ToolUse == v, ev.name())
		assert.Equal(t, r.Reasoning == v, as.Reasoning == v, ev.name())
		assert.Equal(t, r.Handoff == v, as.Handoff == v, ev.name())
		assert.Equal(t, r.ResponseQuality == v, as.ResponseQuality == v, ev.name())
	}
	assert.Len(t, weights, len(interactionEvaluators), "each component has its own weight")

	seen = map[string]bool{}
	for _, comp := range coordinationComponents {
		assert.False(t, seen[comp.name()], "%s listed twice", comp.name())
		seen[comp.name()] = true
		assert.Equal(t, "coordination."+comp.name(), comp.key())
		var cc CoordinationComponents
		*comp.field(&cc) = ptr(1)
		assert.NotEqual(t, CoordinationComponents{}, cc, comp.name())
	}
	assert.Len(t, turnDetectors, 4)
	assert.IsType(t, followUpDetector{}, turnDetectors[0], "RDM and CCM have the highest priority")
}

func countSet(vs ...*float64) int {
	n := 0
	for _, v := range vs {
		if v != nil {
			n++
		}
	}
	return n
}
