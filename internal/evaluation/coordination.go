// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"
)

// A coordinationComponent is one component of coordination_score (docs/scoring.md §6):
// a field of CoordinationComponents, in [0,1], higher is better, nil when absent.
type coordinationComponent interface {
	// name is the component's JSON name, key its explanation key ("coordination." + name).
	name() string
	key() string
	field(cc *CoordinationComponents) **float64
	// evaluate scores the component over the session's coordinating agents.
	evaluate(e *Evaluator, x coordinationInput, a *Analysis) (*float64, string)
}

// coordinationComponents are the components of coordination_score, in the order of its
// explanation.
var coordinationComponents = []coordinationComponent{
	noDuplicateWork{},
	contextPreserved{},
	roleAdherence{},
	noPingPong{},
	dependencyCompliance{},
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
			a.Explanations[comp.key()] = absent
		}
		return
	}
	cx := coordinationInput{recs: x.recs, participants: participants}
	vals := make([]*float64, 0, len(coordinationComponents))
	for _, comp := range coordinationComponents {
		v, expl := comp.evaluate(e, cx, a)
		*comp.field(cc), a.Explanations[comp.key()] = v, expl
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
