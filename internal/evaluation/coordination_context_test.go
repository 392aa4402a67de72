// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContextPreserved(t *testing.T) {
	trs := []TurnResult{{Interactions: []InteractionResult{{Handoff: ptr(1)}, {}}}, {Interactions: []InteractionResult{{Handoff: ptr(0.5)}}}}
	v, expl := runComponent(t, contextPreserved{}, nil, trs)
	score(t, "context_preserved", 0.75, v)
	assert.Equal(t, "mean handoff_score of 2 interaction(s) = 0.75", expl)

	v, expl = runComponent(t, contextPreserved{}, nil, []TurnResult{{Interactions: []InteractionResult{{}}}})
	assert.Nil(t, v)
	assert.Equal(t, "null: no interaction has a handoff_score", expl)
}
