// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// noPingPong = max(0, 1 − ping_pong_penalty × the A→B→A→B handoff loops of the
// session's turns); absent without handoffs.
type noPingPong struct{}

var _ coordinationComponent = noPingPong{}

func (noPingPong) evaluate(e *Evaluator, x coordinationInput, _ *Analysis) (*float64, string) {
	handoffs := 0
	for i := range x.recs {
		handoffs += x.recs[i].Summary.Handoffs
	}
	if handoffs == 0 {
		return nil, "null: no handoff"
	}
	loops := 0
	var where []string
	for i := range x.recs {
		if n := x.recs[i].Summary.PingPongLoops; n > 0 {
			loops += n
			where = append(where, fmt.Sprintf("turn %d: %d", turnNumber(x.recs[i].Result.TurnIndex), n))
		}
	}
	v := ptr(clamp01(1 - e.cfg.PingPongPenalty*float64(loops)))
	expl := fmt.Sprintf("max(0, 1 − %s × %d loop(s)) = %s", num(e.cfg.PingPongPenalty), loops, num(*v))
	if len(where) > 0 {
		expl += " (" + strings.Join(where, ", ") + ")"
	}
	return v, expl
}

// pingPongLoops counts, over the turn's handoffs in order, the windows of three
// consecutive handoffs A→B, B→A, A→B (overlapping windows count separately).
func pingPongLoops(t *session.Turn) int {
	type hop struct{ from, to string }
	var hops []hop
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		for si := range in.Steps {
			if h := in.Steps[si].Handoff; h != nil {
				from := h.FromAgent
				if from == "" {
					from = in.AgentID
				}
				hops = append(hops, hop{session.AgentKey(from), session.AgentKey(h.ToAgent)})
			}
		}
	}
	n := 0
	for i := 0; i+2 < len(hops); i++ {
		a, b, c := hops[i], hops[i+1], hops[i+2]
		if a.from != a.to && b.from == a.to && b.to == a.from && c == a {
			n++
		}
	}
	return n
}
