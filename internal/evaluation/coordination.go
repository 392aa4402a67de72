// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"
)

// A coordinationComponent scores one component of coordination_score (docs/scoring.md
// §6) over the session's coordinating agents: evaluate returns the score in [0,1],
// higher is better, nil when absent, and the explanation.
type coordinationComponent interface {
	evaluate(e *Evaluator, x coordinationInput, a *Analysis) (*float64, string)
}

// A coordinationEntry is a coordinationComponent and where its component goes: its
// explanation key ("coordination." + its JSON name) and its field of
// CoordinationComponents.
type coordinationEntry struct {
	coordinationComponent
	key   string
	field func(cc *CoordinationComponents) **float64
}

// name is the component's JSON name, its term in coordination_score's explanation.
func (ce *coordinationEntry) name() string { return strings.TrimPrefix(ce.key, "coordination.") }

// coordinationComponents are the components of coordination_score, in the order of its
// explanation.
var coordinationComponents = []coordinationEntry{
	{noDuplicateWork{}, keyNoDuplicateWork, func(cc *CoordinationComponents) **float64 { return &cc.NoDuplicateWork }},
	{contextPreserved{}, keyContextPreserved, func(cc *CoordinationComponents) **float64 { return &cc.ContextPreserved }},
	{roleAdherence{}, keyRoleAdherence, func(cc *CoordinationComponents) **float64 { return &cc.RoleAdherence }},
	{noPingPong{}, keyNoPingPong, func(cc *CoordinationComponents) **float64 { return &cc.NoPingPong }},
	{dependencyCompliance{}, keyDependencyCompl, func(cc *CoordinationComponents) **float64 { return &cc.DependencyCompliance }},
}

// coordinationInput is what a coordinationComponent reads besides the analysis.
type coordinationInput struct {
	recs []TurnRecord
	// participants are the agents that coordinate in some turn (TurnSummary.Participants).
	participants map[string]bool
}

// sessionCoordination sets coordination_score and its components from the turns'
// summaries and results. Without two coordinating agents every component is absent;
// otherwise coordination_score is the mean of the components present.
type sessionCoordination struct{}

var _ sessionEvaluator = sessionCoordination{}

func (sessionCoordination) evaluate(e *Evaluator, x sessionInput, a *Analysis) {
	participants := map[string]bool{}
	for i := range x.recs {
		for _, p := range x.recs[i].Summary.Participants {
			participants[p] = true
		}
	}
	cc := &a.Coordination
	absent := "null: fewer than two agents coordinate (no handoff and no tool shared by two agents within a turn)"
	if len(participants) < 2 {
		a.Explanations[keyCoordinationScore] = absent
		for _, comp := range coordinationComponents {
			a.Explanations[comp.key] = absent
		}
		return
	}
	cx := coordinationInput{recs: x.recs, participants: participants}
	vals := make([]*float64, 0, len(coordinationComponents))
	for _, comp := range coordinationComponents {
		v, expl := comp.evaluate(e, cx, a)
		*comp.field(cc), a.Explanations[comp.key] = v, expl
		vals = append(vals, v)
	}

	m, n := meanOf(vals)
	if m == nil {
		a.Explanations[keyCoordinationScore] = "null: no coordination component is present"
		return
	}
	a.CoordinationScore = m
	names := []string{}
	for _, comp := range coordinationComponents {
		if v := *comp.field(cc); v != nil {
			names = append(names, comp.name()+"("+num(*v)+")")
		}
	}
	a.Explanations[keyCoordinationScore] = fmt.Sprintf("mean of %d component(s) %s = %s", n, strings.Join(names, ", "), num(*m))
}
