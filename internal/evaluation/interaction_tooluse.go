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
	sum, n := 0.0, 0
	for i := range calls {
		if s := calls[i].Score; s != nil {
			sum += *s
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Sprintf("null: none of the %d tool call(s) is evaluable", len(calls))
	}
	m := ptr(sum / float64(n)) // meanOf of the scores
	// "mean of N evaluable call score(s) (s1, s2) = m", written once.
	var b strings.Builder
	b.Grow(64 + 8*n)
	b.WriteString("mean of ")
	b.WriteString(strconv.Itoa(n))
	b.WriteString(" evaluable call score(s) (")
	first := true
	for i := range calls {
		if s := calls[i].Score; s != nil {
			if !first {
				b.WriteString(", ")
			}
			first = false
			writeNum(&b, *s)
		}
	}
	b.WriteString(") = ")
	writeNum(&b, *m)
	if n < len(calls) {
		b.WriteString("; ")
		b.WriteString(strconv.Itoa(len(calls) - n))
		b.WriteString(" not evaluable")
	}
	return m, b.String()
}

// toolUse is the interaction's tool_use: how well its tool calls passed validation.
type toolUse struct{}

var _ interactionEvaluator = toolUse{}

func (toolUse) evaluate(_ *evalCtx, x interactionInput) (*float64, string) {
	return toolUseScore(x.calls)
}
