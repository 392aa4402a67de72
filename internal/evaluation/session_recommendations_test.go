// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionRecommendationsPerAgent: each agent's entry holds the recommendations about
// it, in the analysis' order, and only those.
func TestSessionRecommendationsPerAgent(t *testing.T) {
	a := newEval(t).AnalyzeSession(refundSession())
	require.NotEmpty(t, a.Recommendations)
	for id, as := range a.PerAgentScores {
		var want []Recommendation
		for _, r := range a.Recommendations {
			if r.AgentID == id {
				want = append(want, r)
			}
		}
		if want == nil {
			want = []Recommendation{}
		}
		assert.Equal(t, want, as.Recommendations, id)
	}
}
