// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// fakeStore records the arguments of the query methods and returns canned answers. It is
// used only by these handler unit tests; exporter_test.go runs the API over the real
// SQLite store.
type fakeStore struct {
	filter    store.Filter
	agentID   string
	limit     int
	sessions  []store.SessionSummary
	analyses  map[string]*evaluation.Analysis
	points    []store.AgentScorePoint
	failQuery error
}

func (f *fakeStore) SaveAnalysis(context.Context, *evaluation.Analysis) error { return nil }

func (f *fakeStore) GetAnalysis(_ context.Context, id string) (*evaluation.Analysis, error) {
	if f.failQuery != nil {
		return nil, f.failQuery
	}
	if a, ok := f.analyses[id]; ok {
		return a, nil
	}
	return nil, store.ErrNotFound
}

func (f *fakeStore) ListSessions(_ context.Context, filter store.Filter) ([]store.SessionSummary, error) {
	f.filter = filter
	return f.sessions, f.failQuery
}

func (f *fakeStore) AgentScoreHistory(_ context.Context, agentID string, limit int) ([]store.AgentScorePoint, error) {
	f.agentID, f.limit = agentID, limit
	return f.points, f.failQuery
}

func (f *fakeStore) DeleteStoredBefore(context.Context, time.Time) (int64, error) { return 0, nil }
func (f *fakeStore) Close() error                                                 { return nil }

func serve(t *testing.T, h http.Handler, method, target string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, http.NoBody))
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return rec.Code, body
}

func TestListSessionsFilters(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		query string
		want  store.Filter
	}{
		{"", store.Filter{Limit: 100}},
		{"?limit=5", store.Filter{Limit: 5}},
		{"?limit=1000", store.Filter{Limit: 1000}},
		{"?since=2026-03-01T12:00:00Z", store.Filter{Limit: 100, Since: since}},
		{"?since=2026-03-01T13:00:00.5%2B01:00", store.Filter{Limit: 100, Since: since.Add(500 * time.Millisecond)}},
		{"?agent=executor", store.Filter{Limit: 100, Agent: "executor"}},
		{"?min_score=0.5&max_score=0.9", store.Filter{Limit: 100, MinScore: ptr(0.5), MaxScore: ptr(0.9)}},
		{"?min_score=0&max_score=0", store.Filter{Limit: 100, MinScore: ptr(0.0), MaxScore: ptr(0.0)}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			fs := &fakeStore{}
			code, body := serve(t, newQueryAPI(fs, zap.NewNop()), http.MethodGet, "/api/v1/agent_sessions"+tt.query)
			assert.Equal(t, http.StatusOK, code)
			assert.Equal(t, map[string]any{"sessions": []any{}}, body, "an empty list, never null")
			assert.True(t, tt.want.Since.Equal(fs.filter.Since), "since: got %s", fs.filter.Since)
			fs.filter.Since = tt.want.Since
			assert.Equal(t, tt.want, fs.filter)
		})
	}
}

func TestListSessionsBadParameters(t *testing.T) {
	tests := []struct {
		query   string
		wantErr string
	}{
		{"?limit=0", `invalid parameter "limit": must be an integer between 1 and 1000`},
		{"?limit=1001", `invalid parameter "limit": must be an integer between 1 and 1000`},
		{"?limit=ten", `invalid parameter "limit": must be an integer between 1 and 1000`},
		{"?since=yesterday", `invalid parameter "since": must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z`},
		{"?since=2026-03-01", `invalid parameter "since": must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z`},
		{"?agent=", `invalid parameter "agent": must not be empty`},
		{"?min_score=1.5", `invalid parameter "min_score": must be a number between 0 and 1`},
		{"?max_score=-0.1", `invalid parameter "max_score": must be a number between 0 and 1`},
		{"?max_score=NaN", `invalid parameter "max_score": must be a number between 0 and 1`},
		{"?min_score=0.9&max_score=0.1", `invalid parameter "min_score": must not be greater than max_score`},
		{"?min_scor=0.9", `invalid parameter "min_scor": unknown parameter; valid parameters are ["limit" "since" "agent" "min_score" "max_score"]`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, body := serve(t, newQueryAPI(&fakeStore{}, zap.NewNop()), http.MethodGet, "/api/v1/agent_sessions"+tt.query)
			assert.Equal(t, http.StatusBadRequest, code)
			assert.Equal(t, map[string]any{"error": tt.wantErr}, body)
		})
	}
}

func TestGetSession(t *testing.T) {
	a := analysisCheckout()
	fs := &fakeStore{analyses: map[string]*evaluation.Analysis{a.SessionID: &a}}
	h := newQueryAPI(fs, zap.NewNop())

	code, body := serve(t, h, http.MethodGet, "/api/v1/agent_sessions/sess-checkout")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "sess-checkout", body["session_id"])
	assert.InDelta(t, 0.82, body["overall_score"], 1e-12)

	code, body = serve(t, h, http.MethodGet, "/api/v1/agent_sessions/nope")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, map[string]any{"error": `session "nope" not found`}, body)

	// Session ids may hold any character; the path segment is unescaped.
	code, body = serve(t, h, http.MethodGet, "/api/v1/agent_sessions/a%2Fb%20c")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, map[string]any{"error": `session "a/b c" not found`}, body)

	code, _ = serve(t, h, http.MethodPost, "/api/v1/agent_sessions/sess-checkout")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
}

func TestAgentScores(t *testing.T) {
	point := store.AgentScorePoint{SessionID: "sess-checkout", EndedAt: t0, Scores: evaluation.AgentScores{Overall: ptr(0.8), InteractionsCount: 2}}
	fs := &fakeStore{points: []store.AgentScorePoint{point}}
	h := newQueryAPI(fs, zap.NewNop())

	code, body := serve(t, h, http.MethodGet, "/api/v1/agents/executor/scores?limit=7")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "executor", fs.agentID)
	assert.Equal(t, 7, fs.limit)
	assert.Equal(t, "executor", body["agent_id"])
	require.Len(t, body["scores"], 1)
	assert.Equal(t, "sess-checkout", body["scores"].([]any)[0].(map[string]any)["session_id"])

	fs.points = nil
	code, body = serve(t, h, http.MethodGet, "/api/v1/agents/ghost/scores")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, 100, fs.limit)
	assert.Equal(t, map[string]any{"agent_id": "ghost", "scores": []any{}}, body)

	code, body = serve(t, h, http.MethodGet, "/api/v1/agents/executor/scores?since=2026-01-01T00:00:00Z")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, map[string]any{"error": `invalid parameter "since": unknown parameter; valid parameters are ["limit"]`}, body)
}

func TestStoreFailureIs500WithoutDetails(t *testing.T) {
	fs := &fakeStore{failQuery: errors.New("dial tcp 10.0.0.5:5432: password authentication failed for user admin")}
	h := newQueryAPI(fs, zap.NewNop())
	for _, target := range []string{
		"/api/v1/agent_sessions",
		"/api/v1/agent_sessions/sess-checkout",
		"/api/v1/agents/executor/scores",
	} {
		code, body := serve(t, h, http.MethodGet, target)
		assert.Equal(t, http.StatusInternalServerError, code, target)
		assert.NotContains(t, body["error"], "password", target)
		assert.Contains(t, body["error"], "result store failure", target)
	}
}

// TestUnmatchedRequestsAreJSON: a path under /api/ that no route serves is a JSON 404,
// and a wrong method on a route a JSON 405 with Allow, as every answer of the API.
func TestUnmatchedRequestsAreJSON(t *testing.T) {
	h := newQueryAPI(&fakeStore{}, zap.NewNop())
	for _, tt := range []struct {
		method, target string
		status         int
		err            string
	}{
		{http.MethodPost, "/api/v1/agent_sessions", http.StatusMethodNotAllowed, `method POST not allowed on "/api/v1/agent_sessions": use GET, HEAD`},
		{http.MethodDelete, "/api/v1/agent_sessions/sess-checkout", http.StatusMethodNotAllowed, "method DELETE not allowed"},
		{http.MethodOptions, "/api/v1/agents/executor/scores", http.StatusMethodNotAllowed, "method OPTIONS not allowed"},
		{http.MethodPut, "/api/v1/reports/ci-7", http.StatusMethodNotAllowed, "method PUT not allowed"},
		{http.MethodGet, "/api/v1/agent_sessions/nope/", http.StatusNotFound, `no such endpoint: "/api/v1/agent_sessions/nope/"`},
		{http.MethodGet, "/api/v1/nothing", http.StatusNotFound, `no such endpoint: "/api/v1/nothing"`},
		{http.MethodPost, "/api/v1/nothing", http.StatusNotFound, "no such endpoint"},
		{http.MethodGet, "/api/", http.StatusNotFound, "no such endpoint"},
	} {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, http.NoBody))
			assert.Equal(t, tt.status, rec.Code)
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			var body map[string]string
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
			assert.Contains(t, body["error"], tt.err)
			if tt.status == http.StatusMethodNotAllowed {
				assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
			} else {
				assert.Empty(t, rec.Header().Get("Allow"))
			}
		})
	}
}
