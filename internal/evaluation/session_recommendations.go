// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

// sessionRecommendations sets the recommendations (recommend.go) and gives each agent's
// entry of per_agent_scores the ones about it.
type sessionRecommendations struct{}

var _ sessionEvaluator = sessionRecommendations{}

func (sessionRecommendations) evaluate(e *Evaluator, _ sessionInput, a *Analysis) {
	a.Recommendations = e.recommendations(a)
	for id, as := range a.PerAgentScores {
		for _, r := range a.Recommendations {
			if r.AgentID == id {
				as.Recommendations = append(as.Recommendations, r)
			}
		}
		a.PerAgentScores[id] = as
	}
}
