// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import "testing"

// calls returns a turn whose one interaction made calls with these scores (nil: not
// evaluable).
func callsTurn(scores ...*float64) TurnResult {
	ir := InteractionResult{}
	for _, s := range scores {
		ir.ToolCalls = append(ir.ToolCalls, ToolCallResult{Score: s})
	}
	return TurnResult{Interactions: []InteractionResult{ir}}
}

func TestSessionToolUse(t *testing.T) {
	testTurnsScore(t, sessionToolUseScore{}, keyToolUseScore, func(a *Analysis) *float64 { return a.ToolUseScore }, []turnsCase{
		{"no calls", []TurnResult{callsTurn()}, null, "null: no tool calls"},
		{"none evaluable", []TurnResult{callsTurn(nil)}, null, "null: none of the 1 tool call(s) is evaluable"},
		{"mean over the turns", []TurnResult{callsTurn(ptr(1), nil), callsTurn(ptr(0.5))}, 0.75,
			"mean of 2 evaluable call score(s) = 0.75; 1 not evaluable"},
	})
}
