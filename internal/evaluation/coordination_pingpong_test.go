// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

func TestPingPongLoops(t *testing.T) {
	hops := func(pairs ...string) *session.Turn {
		in := interaction("x", "", "", 1)
		for i := 0; i+1 < len(pairs); i += 2 {
			in.Steps = append(in.Steps, handoffStep(pairs[i], pairs[i+1], "p"))
		}
		return &session.Turn{Interactions: []session.AgentInteraction{in}}
	}
	tests := []struct {
		name string
		turn *session.Turn
		want int
	}{
		{"no handoff", hops(), 0},
		{"A→B→A", hops("a", "b", "b", "a"), 0},
		{"A→B→A→B", hops("a", "b", "b", "a", "a", "b"), 1},
		{"overlapping windows count separately", hops("a", "b", "b", "a", "a", "b", "b", "a"), 2},
		{"agent keys are normalised", hops("Planner", "executor", "executor", "planner", "planner", "Executor"), 1},
		{"A→B→C→B", hops("a", "b", "b", "c", "c", "b"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pingPongLoops(tt.turn))
		})
	}
}

func TestNoPingPong(t *testing.T) {
	rec := func(ti, handoffs, loops int) TurnRecord {
		return TurnRecord{Result: TurnResult{TurnIndex: ti}, Summary: TurnSummary{Handoffs: handoffs, PingPongLoops: loops}}
	}
	v, expl := runComponent(t, noPingPong{}, []TurnRecord{rec(0, 0, 0)}, nil)
	assert.Nil(t, v)
	assert.Equal(t, "null: no handoff", expl)

	v, expl = runComponent(t, noPingPong{}, []TurnRecord{rec(0, 2, 0)}, nil)
	score(t, "no_ping_pong", 1, v)
	assert.Equal(t, "max(0, 1 − 0.5 × 0 loop(s)) = 1", expl)

	v, expl = runComponent(t, noPingPong{}, []TurnRecord{rec(0, 3, 1), rec(1, 1, 0), rec(2, 5, 2)}, nil)
	score(t, "no_ping_pong", 0, v)
	assert.Equal(t, "max(0, 1 − 0.5 × 3 loop(s)) = 0 (turn 1: 1, turn 3: 2)", expl)
}
