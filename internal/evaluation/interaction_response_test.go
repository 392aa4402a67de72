// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

func TestResponseQuality(t *testing.T) {
	tests := []struct {
		name   string
		mod    func(*session.AgentInteraction)
		want   float64
		reason string
	}{
		{"good", func(*session.AgentInteraction) {}, 1, "1: non-empty output, not truncated, no refusal"},
		{"error status", func(in *session.AgentInteraction) { in.Status = "error" }, 0, "0: error status"},
		{"truncated", func(in *session.AgentInteraction) { in.FinishReason = "length" }, 0.5, "1 truncated (finish_reason=length) −0.5 = 0.5"},
		{"refusal", func(in *session.AgentInteraction) { in.Output = "I'm sorry, but I can't help with that." }, 0.5, "1 refusal −0.5 = 0.5"},
		{"truncated refusal", func(in *session.AgentInteraction) {
			in.Output = "I'm sorry, but I can't help with that."
			in.FinishReason = "length"
		}, 0, "1 truncated (finish_reason=length) −0.5, refusal −0.5 = 0"},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := interaction("helper", "Tell me about order 9", "Order 9 shipped.", 10)
			tt.mod(&in)
			// A second, final interaction so that helper is not the final responder.
			s := newSession("q", nil, turn(0, "Tell me about order 9", "Order 9 shipped on time.", 10, in,
				interaction("main", "", "Order 9 shipped on time.", 10)))
			r := e.EvaluateInteraction(s, 0, 0)
			score(t, "response_quality", tt.want, r.ResponseQuality)
			assert.Equal(t, tt.reason, r.Explanations[keyResponseQuality])
		})
	}
}

// An empty output is 0 only for the turn's final responder: an agent that worked through
// tools for another has no reply of its own to judge.
func TestResponseQualityEmptyOutput(t *testing.T) {
	e := newEval(t)
	worker := interaction("helper", "Tell me about order 9", "", 10, toolStep("lookup_order", `{"order_id":"9"}`, "shipped", 5))
	final := interaction("main", "", "Order 9 shipped on time.", 10)
	s := newSession("q", nil, turn(0, "Tell me about order 9", "Order 9 shipped on time.", 10, worker, final))
	r := e.EvaluateInteraction(s, 0, 0)
	assert.Nil(t, r.ResponseQuality)
	assert.Equal(t, "null: no own output and not the turn's final responder", r.Explanations[keyResponseQuality])

	s.Turns[0].Interactions[1].Output = ""
	s.Turns[0].FinalResponse = ""
	r = e.EvaluateInteraction(s, 0, 1)
	score(t, "response_quality", 0, r.ResponseQuality)
	assert.Equal(t, "0: empty output from the turn's final responder", r.Explanations[keyResponseQuality])
}
