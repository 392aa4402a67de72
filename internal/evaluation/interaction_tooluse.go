// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strconv"
	"strings"
)

// toolUseScore is the mean score of the evaluable calls (docs/scoring.md §4).
func toolUseScore(calls []ToolCallResult) (*float64, string) {
	if len(calls) == 0 {
		return nil, "null: no tool calls"
	}
	vals := make([]*float64, len(calls))
	var parts []string
	for i := range calls {
		vals[i] = calls[i].Score
		if calls[i].Score != nil {
			parts = append(parts, num(*calls[i].Score))
		}
	}
	m, n := meanOf(vals)
	if m == nil {
		return nil, fmt.Sprintf("null: none of the %d tool call(s) is evaluable", len(calls))
	}
	expl := "mean of " + strconv.Itoa(n) + " evaluable call score(s) (" + strings.Join(parts, ", ") + ") = " + num(*m)
	if n < len(calls) {
		expl += fmt.Sprintf("; %d not evaluable", len(calls)-n)
	}
	return m, expl
}

// toolUse is the interaction's tool_use: how well its tool calls passed validation.
type toolUse struct{}

var _ interactionEvaluator = toolUse{}

func (toolUse) evaluate(_ *evalCtx, x interactionInput) (*float64, string) {
	return toolUseScore(x.calls)
}
