// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

func TestReportAPI(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.DriverSQLite, filepath.Join(t.TempDir(), "r.db"))
	require.NoError(t, err)
	defer func() { assert.NoError(t, st.Close()) }()
	for i, c := range []reference.CaseResult{
		{CaseID: "a", Pass: true, Score: 1, Results: map[string]reference.Result{"tool_selection": {Score: 1, Pass: true}}},
		{CaseID: "b", Pass: false, Score: 0.5, Results: map[string]reference.Result{"tool_selection": {Score: 0.5, Reason: "Expected: [x y], Got: [x]"}}},
	} {
		c.RunID, c.SessionID = "ci-7", "s"+c.CaseID
		a := &evaluation.Analysis{SessionID: c.SessionID, StartedAt: time.Now(), EndedAt: time.Now().Add(time.Duration(i)), References: c}
		require.NoError(t, st.SaveAnalysis(ctx, a))
	}
	h := newQueryAPI(st, zap.NewNop())
	code, body := serve(t, h, http.MethodGet, "/api/v1/reports/ci-7")
	require.Equal(t, http.StatusOK, code, body)
	assert.NotContains(t, body, "judge_stats", "not judged yet")

	// The judge's verdicts, stored after the analyses: reported apart, failures with the
	// judge's reason.
	score := func(v float64) *float64 { return &v }
	require.NoError(t, st.(store.VerdictStore).SaveVerdicts(ctx, []store.JudgeVerdict{
		{SessionID: "sa", AnalysisRevision: 1, Kind: "reference", Name: "interactions", Score: score(0.9), Pass: true, Reason: "fine"},
		{SessionID: "sb", AnalysisRevision: 1, Kind: "reference", Name: "interactions", Score: score(0.3), Reason: "the researcher ignored the plan"},
		{SessionID: "sb", AnalysisRevision: 1, Kind: "judge", Name: "response_quality", Agent: "planner", JudgeError: "judge: timeout"},
	}))
	code, body = serve(t, h, http.MethodGet, "/api/v1/reports/ci-7")
	require.Equal(t, http.StatusOK, code, body)
	judged := body["judge_stats"].(map[string]any)["interactions"].(map[string]any)
	assert.Equal(t, 2.0, judged["total_evaluations"])
	assert.Equal(t, 1.0, judged["passed"])
	assert.InDelta(t, 0.6, judged["average_score"], 1e-9)
	assert.Equal(t, 1.0, body["judge_stats"].(map[string]any)["response_quality"].(map[string]any)["errors"])
	judgeFailures := body["judge_failures"].([]any)
	require.Len(t, judgeFailures, 2)
	assert.Equal(t, "the researcher ignored the plan", judgeFailures[0].(map[string]any)["reason"])
	assert.Equal(t, "judge: timeout", judgeFailures[1].(map[string]any)["reason"])
	assert.Equal(t, "planner", judgeFailures[1].(map[string]any)["agent"])
	assert.Equal(t, 2.0, body["total_examples"])
	assert.Equal(t, 1.0, body["passed_examples"])
	assert.Equal(t, 0.5, body["pass_rate"])
	assert.Equal(t, 0.75, body["average_score"])
	failures := body["failures"].([]any)
	require.Len(t, failures, 1)
	assert.Equal(t, "Expected: [x y], Got: [x]", failures[0].(map[string]any)["reason"])

	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/api/v1/reports/ci-7?format=markdown", http.NoBody),
		func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/api/v1/reports/ci-7", http.NoBody)
			r.Header.Set("Accept", "text/markdown")
			return r
		}(),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, contentTypeMarkdown, rec.Header().Get("Content-Type"))
		assert.True(t, strings.HasPrefix(rec.Body.String(), "# Evaluation report: ci-7"), rec.Body.String())
		assert.Contains(t, rec.Body.String(), "| 2 | 1 | 1 | 50.00% | 0.7500 |")
		assert.Contains(t, rec.Body.String(), "| interactions | 2 | 1 | 1 | 0 | 50.00% | 0.6000 |")
		assert.Contains(t, rec.Body.String(), "| b | interactions |  | 0.3000 | the researcher ignored the plan |")
	}

	code, body = serve(t, h, http.MethodGet, "/api/v1/reports/unknown")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, `run "unknown" not found`, body["error"])
	code, body = serve(t, h, http.MethodGet, "/api/v1/reports/ci-7?format=html")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body["error"], `"format"`)
	code, _ = serve(t, h, http.MethodGet, "/api/v1/reports/ci-7?limit=3")
	assert.Equal(t, http.StatusBadRequest, code)

	// A store without dataset runs answers 501.
	code, _ = serve(t, newQueryAPI(&fakeStore{}, zap.NewNop()), http.MethodGet, "/api/v1/reports/ci-7")
	assert.Equal(t, http.StatusNotImplemented, code)
}
