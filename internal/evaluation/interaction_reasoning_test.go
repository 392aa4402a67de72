// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestReasoningScore checks the plan–action formula on hand-made interactions.
func TestReasoningScore(t *testing.T) {
	agents := refundAgents()
	tests := []struct {
		name  string
		steps []session.AgentStep
		want  float64
	}{
		{"no reasoning → null", []session.AgentStep{toolStep("lookup_order", `{"order_id":"1"}`, "ok", 1)}, null},
		{"names and calls the same tool", []session.AgentStep{reasoningStep("I will call lookup_order."), toolStep("lookup_order", `{"order_id":"1"}`, "ok", 1)}, 1},
		// N={lookup_order, issue_refund}, A={lookup_order}: P=1/2, R=1 → 0.75
		{"names two, calls one", []session.AgentStep{reasoningStep("Call lookup_order and then issue_refund."), toolStep("lookup_order", `{"order_id":"1"}`, "ok", 1)}, 0.75},
		// N={lookup_order}, A={issue_refund}: P=0, R=0 → 0
		{"names one, calls another", []session.AgentStep{reasoningStep("Use lookup_order."), toolStep("issue_refund", `{"order_id":"1","amount":1}`, "ok", 1)}, 0},
		// N=∅, A={lookup_order}: R=0 → 0
		{"calls without naming", []session.AgentStep{reasoningStep("Let me check that."), toolStep("lookup_order", `{"order_id":"1"}`, "ok", 1)}, 0},
		// N={reviewer}, A=∅: P=0 → 0
		{"names an agent, does nothing", []session.AgentStep{reasoningStep("The reviewer should look at this.")}, 0},
		{"names nothing, does nothing → 1", []session.AgentStep{reasoningStep("The answer is straightforward.")}, 1},
		// handoff tool stands for its target: N={reviewer}, A={reviewer}
		{"handoff tool counts as its target agent", []session.AgentStep{reasoningStep("Hand this to the reviewer."), toolStep("transfer_to_reviewer", `{}`, "", 1)}, 1},
		// uncertainty with no later action: 1 − 0.25
		{"unresolved uncertainty", []session.AgentStep{reasoningStep("I'm not sure which order this is."), toolStep("lookup_order", `{"order_id":"1"}`, "ok", 1),
			reasoningStep("I am not sure the lookup_order result is right.")}, 0.75},
		// uncertainty followed by a tool call: resolved
		{"uncertainty resolved by a tool call", []session.AgentStep{reasoningStep("I'm not sure which order this is, so lookup_order."), toolStep("lookup_order", `{"order_id":"1"}`, "ok", 1)}, 1},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession("r", agents, turn(0, "Check order 1", "done", 10, interaction("executor", "Check order 1", "done", 10, tt.steps...)))
			r := e.EvaluateInteraction(s, 0, 0)
			score(t, "reasoning", tt.want, r.Reasoning)
			assert.NotEmpty(t, r.Explanations[keyReasoning])
		})
	}
}
