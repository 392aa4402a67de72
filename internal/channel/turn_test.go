// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTurnOf follows SafeMolt's SIP-5 conversation: the proctor asks (user side), the
// candidate answers (agent side).
func TestTurnOf(t *testing.T) {
	p := func(seq int64) Message { return Message{Sequence: seq, Role: RoleProctor} }
	c := func(seq int64) Message { return Message{Sequence: seq, Role: RoleCandidate} }
	seqs := func(ms []Message) []int64 {
		var out []int64
		for _, m := range ms {
			out = append(out, m.Sequence)
		}
		return out
	}
	tests := []struct {
		name     string
		before   []Message
		m        Message
		start    int64
		user     []int64
		previous int64 // 0 = none
	}{
		{"first message, a question", nil, p(1), 1, []int64{1}, 0},
		{"the answer joins the question's turn", []Message{p(1)}, c(2), 1, []int64{1}, 1},
		{"a question after an answer opens a turn", []Message{p(1), c(2)}, p(3), 3, []int64{3}, 2},
		{"two questions, one turn", []Message{p(1), c(2), p(3)}, p(4), 3, []int64{3, 4}, 3},
		{"the answer carries both questions", []Message{p(1), c(2), p(3), p(4)}, c(5), 3, []int64{3, 4}, 4},
		{"a second answer is a turn of its own", []Message{p(1), c(2)}, c(3), 3, nil, 2},
		{"the candidate speaks first", nil, c(1), 1, nil, 0},
		{"live class work: host and participants", []Message{{Sequence: 1, Role: RoleHost}}, Message{Sequence: 2, Role: RoleParticipant}, 1, []int64{1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := TurnOf(tt.before, tt.m)
			assert.Equal(t, tt.start, turn.Start)
			assert.Equal(t, tt.user, seqs(turn.UserMessages))
			if tt.previous == 0 {
				assert.Nil(t, turn.Previous)
			} else if assert.NotNil(t, turn.Previous) {
				assert.Equal(t, tt.previous, turn.Previous.Sequence)
			}
		})
	}
}

func TestRoleUserSide(t *testing.T) {
	assert.True(t, RoleProctor.UserSide())
	assert.True(t, RoleHost.UserSide())
	assert.False(t, RoleCandidate.UserSide())
	assert.False(t, RoleParticipant.UserSide())
}
