// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// runInteractionEvaluator runs ev alone on interaction ii of turn ti of s.
func runInteractionEvaluator(t *testing.T, ev interactionEvaluator, s *session.AgentSession, ti, ii int) (*float64, string) {
	t.Helper()
	c := newEval(t).newCtx(s)
	tu := &s.Turns[ti]
	in := &tu.Interactions[ii]
	x := interactionInput{t: tu, ii: ii, in: in, content: turnHasContent(tu), final: ii == finalResponder(tu)}
	agent := s.Agent(in.AgentID)
	for si := range in.Steps {
		if tc := in.Steps[si].ToolCall; tc != nil {
			x.calls = append(x.calls, c.e.validateCall(in.AgentID, agent, tc, ti, c.sessionAgents, c.args))
		}
	}
	return ev.evaluate(c, x)
}

// TestToolUse: tool_use is the mean of the evaluable call scores (docs/scoring.md §4);
// a call whose tools are unknown counts in neither the sum nor the count.
func TestToolUse(t *testing.T) {
	lookup := toolStep("lookup_order", `{"order_id":"1"}`, "ok", 1)
	tests := []struct {
		name   string
		agent  string
		steps  []session.AgentStep
		want   float64
		reason string
	}{
		{"no call", "executor", nil, null, "null: no tool calls"},
		{"one valid call", "executor", []session.AgentStep{lookup}, 1, "mean of 1 evaluable call score(s) (1) = 1"},
		// send_email with an unknown parameter (MEDIUM, −0.5 by default): (1 + 0.5) / 2.
		{"valid and hallucinated parameter", "executor", []session.AgentStep{lookup,
			toolStep("send_email", `{"to":"a@b.c","body":"x","priority":"high"}`, "sent", 1)}, 0.75,
			"mean of 2 evaluable call score(s) (1, 0.5) = 0.75"},
		// The unauthorised call (HIGH, −1) of the reviewer, who may only look orders up.
		{"unauthorised call", "reviewer", []session.AgentStep{lookup,
			toolStep("issue_refund", `{"order_id":"1","amount":1}`, "ok", 1)}, 0.5,
			"mean of 2 evaluable call score(s) (1, 0) = 0.5"},
		{"tools unknown", "stranger", []session.AgentStep{lookup}, null, "null: none of the 1 tool call(s) is evaluable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agents := refundAgents()
			agents[2].Tools = agents[1].Tools[:1]
			s := newSession("u", agents, turn(0, "Refund order 1", "done", 10, interaction(tt.agent, "", "done", 10, tt.steps...)))
			got, expl := runInteractionEvaluator(t, toolUse{}, s, 0, 0)
			score(t, keyToolUse, tt.want, got)
			assert.Equal(t, tt.reason, expl)
		})
	}
}
