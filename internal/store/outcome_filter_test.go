// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListSessionsOutcomeFilters covers Filter.Partial and Filter.TaskCompletion (the web
// UI's partial and task-completion filters), alone and with the other filters.
func TestListSessionsOutcomeFilters(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		type outcome struct {
			id      string
			partial bool
			done    *bool
		}
		for i, o := range []outcome{
			{"done", false, boolp(true)},
			{"failed", false, boolp(false)},
			{"partial-failed", true, boolp(false)},
			{"partial-unknown", true, nil},
		} {
			a := sampleAnalysis(o.id, t0.Add(time.Duration(i)*time.Minute), f64(0.1*float64(i+1)))
			a.Partial, a.TaskCompletion = o.partial, o.done
			require.NoError(t, s.SaveAnalysis(ctx, a))
		}
		tests := []struct {
			name string
			f    Filter
			want []string
		}{
			{"partial", Filter{Partial: boolp(true)}, []string{"partial-unknown", "partial-failed"}},
			{"complete", Filter{Partial: boolp(false)}, []string{"failed", "done"}},
			{"task completed", Filter{TaskCompletion: boolp(true)}, []string{"done"}},
			{"task not completed, unknown left out", Filter{TaskCompletion: boolp(false)}, []string{"partial-failed", "failed"}},
			{"both", Filter{Partial: boolp(true), TaskCompletion: boolp(false)}, []string{"partial-failed"}},
			{"with score", Filter{TaskCompletion: boolp(false), MinScore: f64(0.25)}, []string{"partial-failed"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.ListSessions(ctx, tt.f)
				require.NoError(t, err)
				ids := []string{}
				for _, sum := range got {
					ids = append(ids, sum.SessionID)
				}
				assert.Equal(t, tt.want, ids)
			})
		}
	})
}
