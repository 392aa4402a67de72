// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

// sessionOverall sets overall_score: the weighted mean of the session scores present
// (docs/scoring.md §6), intent drift counting as 1 − intent_drift_score.
type sessionOverall struct{}

var _ sessionEvaluator = sessionOverall{}

func (sessionOverall) evaluate(e *Evaluator, _ sessionInput, a *Analysis) {
	var drift *float64
	if a.IntentDriftScore != nil {
		drift = ptr(1 - *a.IntentDriftScore)
	}
	w := e.cfg.SessionWeights
	a.OverallScore, a.Explanations[keyOverallScore] = weightedMean([]weighted{
		{"conversation", a.Conversation.Score, w.Conversation},
		{"tool_use", a.ToolUseScore, w.ToolUse},
		{"coordination", a.CoordinationScore, w.Coordination},
		{"reasoning", a.ReasoningScore, w.Reasoning},
		{"(1−intent_drift)", drift, w.IntentDrift},
	})
}
