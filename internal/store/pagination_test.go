// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListSessionsPages walks the list with Filter.After, two sessions a page: every
// session comes exactly once and in the list order, also when several sessions end at
// the same instant (ties broken by session id) and with another filter set.
func TestListSessionsPages(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		// s0..s6; s2, s3 and s4 end at the same instant.
		ends := []time.Duration{0, time.Minute, 2 * time.Minute, 2 * time.Minute, 2 * time.Minute, 3 * time.Minute, 3*time.Minute + time.Microsecond}
		for i, d := range ends {
			agents := []string{"executor"}
			if i%2 == 0 {
				agents = []string{"planner"}
			}
			require.NoError(t, s.SaveAnalysis(ctx, sampleAnalysis(fmt.Sprintf("s%d", i), t0.Add(d), f64(0.5), agents...)))
		}
		walk := func(f Filter) [][]string {
			var pages [][]string
			for range 10 {
				got, err := s.ListSessions(ctx, f)
				require.NoError(t, err)
				if len(got) == 0 {
					return pages
				}
				ids := []string{}
				for _, sum := range got {
					ids = append(ids, sum.SessionID)
				}
				pages = append(pages, ids)
				last := got[len(got)-1]
				f.After = &Cursor{StoredAt: last.StoredAt, SessionID: last.SessionID}
			}
			t.Fatal("pagination does not end")
			return nil
		}
		assert.Equal(t, [][]string{{"s6", "s5"}, {"s4", "s3"}, {"s2", "s1"}, {"s0"}}, walk(Filter{Limit: 2}))
		assert.Equal(t, [][]string{{"s6", "s4"}, {"s2", "s0"}}, walk(Filter{Limit: 2, Agent: "planner"}))
	})
}
