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

// TestJudgeVerdicts: verdicts are stored before or after their session's analysis, a
// redelivered verdict replaces its row (no duplicate), a new revision adds rows, and
// retention deletes them.
func TestJudgeVerdicts(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		vs := []JudgeVerdict{
			{SessionID: "s1", AnalysisRevision: 1, Kind: "judge", Name: "response_quality", Agent: "planner", Score: f64(0.7), Pass: true,
				Reason: "clear\x00", EvaluatorVersion: "abc"},
			{SessionID: "s1", AnalysisRevision: 1, Kind: "judge", Name: "task_completion", JudgeError: "judge: cost limit per session reached",
				EvaluatorVersion: "abc"},
		}
		// Before the analysis: no foreign key stops it.
		require.NoError(t, s.SaveVerdicts(ctx, vs))
		require.NoError(t, s.SaveAnalysis(ctx, sampleAnalysis("s1", t0, f64(0.5))))
		require.NoError(t, s.SaveVerdicts(ctx, vs), "a retried export")
		got, err := s.JudgeVerdicts(ctx, "s1")
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, "response_quality", got[0].Name)
		assert.Equal(t, "planner", got[0].Agent)
		require.NotNil(t, got[0].Score)
		assert.Equal(t, 0.7, *got[0].Score)
		assert.True(t, got[0].Pass)
		assert.Equal(t, "clear", got[0].Reason, "cleanText drops NUL")
		assert.Nil(t, got[1].Score)
		assert.Equal(t, "judge: cost limit per session reached", got[1].JudgeError)

		// The session continued: revision 2 is judged again; revision 1's rows stay.
		v2 := vs[0]
		v2.AnalysisRevision, v2.Score = 2, f64(0.9)
		require.NoError(t, s.SaveVerdicts(ctx, []JudgeVerdict{v2}))
		got, err = s.JudgeVerdicts(ctx, "s1")
		require.NoError(t, err)
		require.Len(t, got, 3)
		assert.Equal(t, 2, got[2].AnalysisRevision)

		none, err := s.JudgeVerdicts(ctx, "unknown")
		require.NoError(t, err)
		assert.Empty(t, none)
		assert.NotNil(t, none)

		_, err = s.DeleteStoredBefore(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		got, err = s.JudgeVerdicts(ctx, "s1")
		require.NoError(t, err)
		assert.Empty(t, got)
	})
}

// TestSaveVerdictsOutOfRangeIsErrRejected: a verdict whose revision does not fit an
// INTEGER column is refused as ErrRejected on both databases (PostgreSQL's driver would
// refuse it with an error that names no SQLSTATE, which a retry cannot cure either),
// and the verdicts saved with it are not stored.
func TestSaveVerdictsOutOfRangeIsErrRejected(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		ok := JudgeVerdict{SessionID: "s", AnalysisRevision: 1, Kind: "judge", Name: "n", Agent: "a"}
		far := ok
		far.AnalysisRevision = 1 << 40
		err := s.SaveVerdicts(ctx, []JudgeVerdict{ok, far})
		assert.ErrorIs(t, err, ErrRejected)
		assert.ErrorContains(t, err, "analysis_revision 1099511627776")
		got, err := s.JudgeVerdicts(ctx, "s")
		require.NoError(t, err)
		assert.Empty(t, got)
	})
}
