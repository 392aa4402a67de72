// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNoDuplicateWork(t *testing.T) {
	rec := func(shared, dups int) TurnRecord {
		return TurnRecord{Summary: TurnSummary{SharedCalls: shared, DuplicateCalls: dups}}
	}
	tests := []struct {
		name string
		recs []TurnRecord
		want float64
		expl string
	}{
		{"no shared tool", []TurnRecord{rec(0, 0)}, null, "null: no tool is called by two agents within a turn (with captured arguments)"},
		{"one of three duplicated", []TurnRecord{rec(3, 1)}, 1 - 1.0/3, "1 − 1 duplicated / 3 calls of shared tools = 0.6667"},
		{"summed over turns", []TurnRecord{rec(2, 0), rec(2, 2)}, 0.5, "1 − 2 duplicated / 4 calls of shared tools = 0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, expl := runComponent(t, noDuplicateWork{}, tt.recs, nil)
			score(t, "no_duplicate_work", tt.want, v)
			assert.Equal(t, tt.expl, expl)
		})
	}
}
