// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSessionOverall: overall_score is renormalised over the scores present, intent
// drift entering as 1 − drift.
func TestSessionOverall(t *testing.T) {
	e := newEval(t)
	w := e.cfg.SessionWeights
	a := Analysis{Conversation: ConversationSummary{Score: ptr(1)}, ToolUseScore: ptr(0.5), IntentDriftScore: ptr(0.25),
		Explanations: map[string]string{}}
	sessionOverall{}.evaluate(e, sessionInput{}, &a)
	want := (w.Conversation*1 + w.ToolUse*0.5 + w.IntentDrift*0.75) / (w.Conversation + w.ToolUse + w.IntentDrift)
	score(t, keyOverallScore, want, a.OverallScore)
	assert.Contains(t, a.Explanations[keyOverallScore], "×(1−intent_drift)(", "the term is bracketed: 0.1×1−intent_drift(1) read as 0.1×1 − intent_drift")

	a = Analysis{Explanations: map[string]string{}}
	sessionOverall{}.evaluate(e, sessionInput{}, &a)
	assert.Nil(t, a.OverallScore)
}
