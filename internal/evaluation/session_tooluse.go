// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import "fmt"

func sessionToolUse(trs []TurnResult) (*float64, string) {
	var vals []*float64
	total := 0
	for ti := range trs {
		for ii := range trs[ti].Interactions {
			ir := &trs[ti].Interactions[ii]
			for ci := range ir.ToolCalls {
				total++
				vals = append(vals, ir.ToolCalls[ci].Score)
			}
		}
	}
	m, n := meanOf(vals)
	if m == nil {
		if total == 0 {
			return nil, "null: no tool calls"
		}
		return nil, fmt.Sprintf("null: none of the %d tool call(s) is evaluable", total)
	}
	return m, fmt.Sprintf("mean of %d evaluable call score(s) = %s; %d not evaluable", n, num(*m), total-n)
}

// sessionToolUseScore sets tool_use_score from the calls (the references may add terms).
type sessionToolUseScore struct{}

var _ sessionEvaluator = sessionToolUseScore{}

func (sessionToolUseScore) evaluate(_ *Evaluator, _ sessionInput, a *Analysis) {
	a.ToolUseScore, a.Explanations[keyToolUseScore] = sessionToolUse(a.TurnResults)
}
