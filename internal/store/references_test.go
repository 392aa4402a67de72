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

// TestRunVerdicts: the judge's verdicts on a run's sessions come with their case id, the
// latest revision's verdict per session, metric and agent; other runs' sessions and
// sessions without references are left out.
func TestRunVerdicts(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		save := func(id, run, caseID string) {
			a := sampleAnalysis(id, t0, f64(0.5))
			a.References = reference.CaseResult{RunID: run, CaseID: caseID, SessionID: id, Pass: true, Score: 1,
				Results: map[string]reference.Result{"tool_selection": {Score: 1, Pass: true}}}
			require.NoError(t, s.SaveAnalysis(ctx, a))
		}
		save("s1", "run-1", "b")
		save("s2", "run-1", "a")
		save("s3", "run-2", "a")
		require.NoError(t, s.SaveAnalysis(ctx, sampleAnalysis("plain", t0, f64(1))))
		none, err := s.RunVerdicts(ctx, "run-1")
		require.NoError(t, err)
		assert.Empty(t, none, "not judged yet")

		require.NoError(t, s.SaveVerdicts(ctx, []JudgeVerdict{
			{SessionID: "s1", AnalysisRevision: 1, Kind: "reference", Name: "interactions", Score: f64(0.3), Reason: "old"},
			{SessionID: "s1", AnalysisRevision: 2, Kind: "reference", Name: "interactions", Score: f64(0.4), Reason: "missed a step"},
			{SessionID: "s1", AnalysisRevision: 1, Kind: "judge", Name: "response_quality", Agent: "planner", Score: f64(0.8), Pass: true},
			{SessionID: "s2", AnalysisRevision: 1, Kind: "reference", Name: "interactions", JudgeError: "judge: timeout"},
			{SessionID: "s3", AnalysisRevision: 1, Kind: "reference", Name: "interactions", Score: f64(1), Pass: true},
			{SessionID: "plain", AnalysisRevision: 1, Kind: "judge", Name: "task_completion", Score: f64(1), Pass: true},
		}))
		got, err := s.RunVerdicts(ctx, "run-1")
		require.NoError(t, err)
		want := []reference.CaseVerdict{
			{CaseID: "a", SessionID: "s2", Evaluator: "interactions", Error: "judge: timeout"},
			{CaseID: "b", SessionID: "s1", Evaluator: "response_quality", Agent: "planner", Score: f64(0.8), Pass: true},
			{CaseID: "b", SessionID: "s1", Evaluator: "interactions", Score: f64(0.4), Reason: "missed a step"},
		}
		assert.Equal(t, want, got)
		none, err = s.RunVerdicts(ctx, "unknown")
		require.NoError(t, err)
		assert.Empty(t, none)
	})
}

// TestReferenceResultKeptByLaterRevision: a later revision of a session that carries no
// case result (a continuation after a pause: the processor matched the dataset case on
// the session's first part, docs/decisions/sessions.md §2.4.1) keeps the stored case
// result of the run; one that carries a case result replaces it.
func TestReferenceResultKeptByLaterRevision(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		a := sampleAnalysis("s1", t0, f64(0.5))
		a.References = reference.CaseResult{RunID: "run-7", CaseID: "papers", SessionID: "s1", Pass: true, Score: 1}
		require.NoError(t, s.SaveAnalysis(ctx, a))

		next := sampleAnalysis("s1", t0, f64(0.7))
		next.AnalysisRevision = a.AnalysisRevision + 1
		next.References = nil // a continued session's later revision: the case was matched once
		require.NoError(t, s.SaveAnalysis(ctx, next))
		got, err := s.ReferenceRun(ctx, "run-7")
		require.NoError(t, err)
		require.Len(t, got, 1, "the run keeps its case's result")
		assert.Equal(t, "papers", got[0].CaseID)
		stored, err := s.GetAnalysis(ctx, "s1")
		require.NoError(t, err)
		require.Equal(t, next.AnalysisRevision, stored.AnalysisRevision)
		refs, ok := stored.References.(map[string]any)
		require.True(t, ok, "the later revision's analysis shows the session's case result: %#v", stored.References)
		assert.Equal(t, "papers", refs["case_id"])
		assert.Equal(t, "run-7", refs["run_id"])

		again := sampleAnalysis("s1", t0, f64(0.7))
		again.AnalysisRevision = next.AnalysisRevision + 1
		again.References = reference.CaseResult{RunID: "run-7", CaseID: "papers", SessionID: "s1", Pass: false, Score: 0.25}
		require.NoError(t, s.SaveAnalysis(ctx, again))
		got, err = s.ReferenceRun(ctx, "run-7")
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.False(t, got[0].Pass, "a revision with a case result replaces it")
		stored, err = s.GetAnalysis(ctx, "s1")
		require.NoError(t, err)
		assert.Equal(t, false, stored.References.(map[string]any)["pass"], "its own case result")
	})
}
