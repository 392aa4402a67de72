// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/pkg/reference"
)

func TestReferenceRun(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		save := func(id, run, caseID string, pass bool, score float64) {
			a := sampleAnalysis(id, t0, f64(0.5))
			a.References = reference.CaseResult{RunID: run, CaseID: caseID, SessionID: id, Pass: pass, Score: score,
				Results: map[string]reference.Result{"tool_selection": {Score: score, Pass: pass, Reason: "r\x00eason"}}}
			require.NoError(t, s.SaveAnalysis(ctx, a))
		}
		save("s2", "run-1", "b", false, 0.5)
		save("s1", "run-1", "a", true, 1)
		save("s3", "run-2", "a", true, 1)
		got, err := s.ReferenceRun(ctx, "run-1")
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, []string{"a", "b"}, []string{got[0].CaseID, got[1].CaseID})
		assert.True(t, got[0].Pass)
		assert.Equal(t, 0.5, got[1].Results["tool_selection"].Score)

		// Re-evaluation replaces the session's row; another run takes it over.
		save("s2", "run-2", "b", true, 1)
		got, err = s.ReferenceRun(ctx, "run-1")
		require.NoError(t, err)
		assert.Len(t, got, 1)

		// A session without references has no row; retention cascades.
		require.NoError(t, s.SaveAnalysis(ctx, sampleAnalysis("plain", t0, f64(1))))
		assert.Equal(t, 0, count(t, s, "reference_results", "plain"))
		n, err := s.DeleteStoredBefore(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		assert.Positive(t, n)
		assert.Equal(t, 0, count(t, s, "reference_results", ""))

		none, err := s.ReferenceRun(ctx, "unknown")
		require.NoError(t, err)
		assert.Empty(t, none)
	})
}
