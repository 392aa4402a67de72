// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"
)

// ReferenceScores are the reference-based results of a session (docs/scoring.md §11, computed
// by pkg/reference against a dataset case) that the session analysis folds in
// (docs/scoring.md §11.4).
type ReferenceScores struct {
	// ToolUse are the scores of the tool-related reference evaluators (tool selection,
	// tool sequence, trajectory), each in [0,1]; tool_use_score becomes the plain mean of
	// the evaluable call scores' mean and these.
	ToolUse []NamedScore
	// DependencyCompliance, from expected interactions, becomes a coordination_score
	// component; nil when the case has no dependencies.
	DependencyCompliance *float64
	// Results is stored as Analysis.References.
	Results any
}

// NamedScore is one evaluator's score.
type NamedScore struct {
	Name  string
	Score float64
}

// apply sets references, the reference terms of tool_use_score and the dependency
// compliance component of coordination (before coordination_score is computed).
func (r *ReferenceScores) apply(a *Analysis) {
	if r == nil {
		return
	}
	a.References = r.Results
	if r.DependencyCompliance != nil {
		v := clamp01(*r.DependencyCompliance)
		a.Coordination.DependencyCompliance = &v
		a.Explanations[keyDependencyCompl] = "from the expected interactions of the dataset case: satisfied / required dependencies = " + num(v)
	}
	if len(r.ToolUse) == 0 {
		return
	}
	vals := make([]*float64, 0, len(r.ToolUse)+1)
	terms := make([]string, 0, len(r.ToolUse)+1)
	if a.ToolUseScore != nil {
		vals = append(vals, a.ToolUseScore)
		terms = append(terms, "calls("+num(*a.ToolUseScore)+")")
	}
	for _, ts := range r.ToolUse {
		v := clamp01(ts.Score)
		vals = append(vals, &v)
		terms = append(terms, ts.Name+"("+num(v)+")")
	}
	m, n := meanOf(vals)
	a.ToolUseScore = m
	a.Explanations[keyToolUseScore] = fmt.Sprintf("mean of %d term(s) %s = %s (reference-based terms from the dataset case)",
		n, strings.Join(terms, ", "), num(*m))
}

// sessionReferences folds the session's reference-based results in (apply).
type sessionReferences struct{}

var _ sessionEvaluator = sessionReferences{}

func (sessionReferences) evaluate(_ *Evaluator, x sessionInput, a *Analysis) {
	x.meta.References.apply(a)
}
