// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import "fmt"

// noDuplicateWork = 1 − duplicated calls / calls of tools that two or more agents call
// within a turn (with captured arguments; TurnSummary.SharedCalls, DuplicateCalls).
type noDuplicateWork struct{}

var _ coordinationComponent = noDuplicateWork{}

func (noDuplicateWork) evaluate(_ *Evaluator, x coordinationInput, _ *Analysis) (*float64, string) {
	shared, dups := 0, 0
	for i := range x.recs {
		shared += x.recs[i].Summary.SharedCalls
		dups += x.recs[i].Summary.DuplicateCalls
	}
	if shared == 0 {
		return nil, "null: no tool is called by two agents within a turn (with captured arguments)"
	}
	v := ptr(1 - float64(dups)/float64(shared))
	return v, fmt.Sprintf("1 − %d duplicated / %d calls of shared tools = %s", dups, shared, num(*v))
}
