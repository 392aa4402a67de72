// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRenormalisedWeightsFollowConfig(t *testing.T) {
	// With only response_quality weighted, an agent's overall is its response_quality.
	cfg := DefaultConfig()
	cfg.AgentWeights = AgentWeights{ResponseQuality: 1}
	e, err := New(cfg)
	require.NoError(t, err)
	// The support agent's answer was corrected in turn 0 (response_quality 0) and good in turn 1.
	score(t, "support.overall", 0.5, e.AnalyzeSession(correctionSession()).PerAgentScores["support"].Overall)
	a := e.AnalyzeSession(refundSession())
	// planner has no response_quality: the remaining present scores have weight 0.
	assert.Nil(t, a.PerAgentScores["planner"].Overall)
	assert.Contains(t, a.PerAgentScores["planner"].Explanations["overall"], "weight 0")
}
