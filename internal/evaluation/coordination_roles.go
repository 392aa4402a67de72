// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"slices"
)

// roleAdherence is the share of authorised calls among the coordinating agents' calls
// whose authorisation could be checked (their tools are known).
type roleAdherence struct{}

var _ coordinationComponent = roleAdherence{}

func (roleAdherence) evaluate(_ *Evaluator, x coordinationInput, a *Analysis) (*float64, string) {
	checked, authorised := 0, 0
	for ti := range a.TurnResults {
		for ii := range a.TurnResults[ti].Interactions {
			ir := &a.TurnResults[ti].Interactions[ii]
			if !x.participants[ir.AgentID] {
				continue
			}
			for ci := range ir.ToolCalls {
				tc := &ir.ToolCalls[ci]
				if slices.Contains(tc.NotEvaluable, ReasonToolsUnknown) {
					continue
				}
				checked++
				ok := true
				for _, is := range tc.Issues {
					if is.Issue == IssueUnauthorizedTool {
						ok = false
					}
				}
				if ok {
					authorised++
				}
			}
		}
	}
	if checked == 0 {
		return nil, "null: no call of a coordinating agent could be checked for authorisation"
	}
	v := ptr(float64(authorised) / float64(checked))
	return v, fmt.Sprintf("%d authorised / %d checked calls = %s", authorised, checked, num(*v))
}
