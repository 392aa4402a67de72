// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestDetectionPriority: RDM > CCM > hallucination.
func TestDetectionPriority(t *testing.T) {
	e := newEval(t)
	halluc := "Order #99999 was refunded."
	// Turn 0 also hallucinates, turn 1 re-asks with a correction: RDM wins.
	s := newSession("p", supportAgents(),
		turn(0, "What is the status of order #12345?", halluc, 10, interaction("support", "", halluc, 10)),
		turn(1, "That's wrong. What is the status of order #12345?", "Order #12345 shipped.", 10,
			interaction("support", "", "Order #12345 shipped.", 10, toolStep("lookup_order", `{"order_id":"12345"}`, "order 12345: shipped", 1))))
	assert.Equal(t, DetectionRDM, e.EvaluateTurn(s, 0, true).DetectionType)
	// Without the complaint, the re-ask (similarity 1) wins over hallucination.
	s.Turns[1].UserMessage = "What is the status of order #12345?"
	tr := e.EvaluateTurn(s, 0, true)
	assert.Equal(t, DetectionCCM, tr.DetectionType)
	assert.Equal(t, 1.0, tr.Confidence)
	// Not final: hallucination only.
	assert.Equal(t, DetectionHallucination, e.EvaluateTurn(s, 0, false).DetectionType)
}

// TestDetectionExplanationOrder: each detector explains its checks in the list's order,
// the same on the whole-session path (EvaluateTurn) and the turn-by-turn one
// (AnalyzeSession), and no_answer outranks hallucination.
func TestDetectionExplanationOrder(t *testing.T) {
	e := newEval(t)
	u := "Email jane@example.com about refund R-1"
	in := interaction("executor", u, "", 100,
		toolStep("send_email", `{"to":"jane@example.com","body":"R-1","priority":"high"}`, "", 10),
		toolStep("send_email", `{"to":"jane@example.com","body":"R-1"}`, "sent", 10))
	in.Steps[0].ToolCall.SpanID, in.Steps[1].ToolCall.SpanID = "c1", "c2"
	s := newSession("o", refundAgents(), turn(0, u, "", 200, in))
	s.Turns[0].Status = session.StatusError
	want := "rdm/ccm: not applicable (last turn, no follow-up); " +
		"hallucination: parameter hallucination (executor→send_email.priority) recovered by a later valid call; counted in tool_use only; " +
		"no_answer: empty final response after an error (the turn ended with error status); " +
		"hallucination: final response empty or not captured; no parameter hallucination; → no_answer, confidence 1"
	tr := e.EvaluateTurn(s, 0, true)
	assert.Equal(t, DetectionNoAnswer, tr.DetectionType)
	assert.Equal(t, want, tr.Explanations[keyDetection])
	assert.Equal(t, want, e.AnalyzeSession(s).TurnResults[0].Explanations[keyDetection])
}
