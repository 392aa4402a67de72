// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHallucinationDetection(t *testing.T) {
	e := newEval(t)
	// The final response invents order #99999 and an amount: ungrounded.
	s := newSession("h", supportAgents(), turn(0, "Status of order #12345?", "Order #99999 was refunded $12.50.", 100,
		interaction("support", "Status of order #12345?", "Order #99999 was refunded $12.50.", 90,
			toolStep("lookup_order", `{"order_id":"12345"}`, "order 12345: shipped", 10))))
	tr := e.EvaluateTurn(s, 0, true)
	assert.Equal(t, DetectionHallucination, tr.DetectionType)
	assert.True(t, tr.IsBad)
	assert.Contains(t, tr.Reason, "99999")
	assert.GreaterOrEqual(t, tr.Confidence, 0.5)
	assert.LessOrEqual(t, tr.Confidence, 1.0)
	// Grounded by the tool result: none.
	s.Turns[0].FinalResponse = "Order #12345 has shipped."
	s.Turns[0].Interactions[0].Output = s.Turns[0].FinalResponse
	assert.Equal(t, DetectionNone, e.EvaluateTurn(s, 0, true).DetectionType)

	// One ungrounded proper name alone ("Amazon" for AMZN) is not evidence enough...
	s.Turns[0].FinalResponse = "Order #12345 has shipped with Amazon."
	tr = e.EvaluateTurn(s, 0, true)
	assert.Equal(t, DetectionNone, tr.DetectionType)
	assert.Contains(t, tr.Explanations["detection"]+tr.Reason+fmt.Sprint(tr.Explanations), "not evidence enough")
	// ...two are.
	s.Turns[0].FinalResponse = "Order #12345 has shipped with Amazon from Rotterdam."
	assert.Equal(t, DetectionHallucination, e.EvaluateTurn(s, 0, true).DetectionType)
}
