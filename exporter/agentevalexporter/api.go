// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/store"
)

// queryAPI serves the result store over HTTP (docs/architecture.md §7, §11). Every response body is
// JSON; errors are {"error": "..."} with status 400 (bad parameter, named in the message),
// 404 (unknown session, or a path under /api/ no route serves), 405 (a method the path
// has no route for, with Allow) or 500 (store failure, details logged, not returned).
type queryAPI struct {
	store  store.Store
	logger *zap.Logger
}

// SessionList is the body of GET /api/v1/agent_sessions.
type SessionList struct {
	// Sessions are newest first (by stored_at, the time this collector stored them); never null.
	Sessions []store.SessionSummary `json:"sessions"`
}

// AgentScoreHistory is the body of GET /api/v1/agents/{agent_id}/scores.
type AgentScoreHistory struct {
	AgentID string `json:"agent_id"`
	// Scores are one point per stored session the agent took part in, newest first;
	// never null.
	Scores []store.AgentScorePoint `json:"scores"`
}

// newQueryAPI returns the API's routes (Go 1.22 ServeMux patterns):
//
//	GET /api/v1/agent_sessions                  ?limit ?since ?agent ?min_score ?max_score
//	GET /api/v1/agent_sessions/{session_id}     the analysis JSON (evaluation.Analysis)
//	GET /api/v1/agent_sessions/{session_id}/judge_verdicts  late judge verdicts (verdicts.go)
//	GET /api/v1/agents/{agent_id}/scores        ?limit
//	GET /api/v1/reports/{run_id}                ?format=json|markdown (api_reports.go)
//	    /api/                                   anything else: a JSON 404 or 405 (unmatched)
func newQueryAPI(st store.Store, logger *zap.Logger) *http.ServeMux {
	a := &queryAPI{store: st, logger: logger}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/agent_sessions", a.listSessions)
	mux.HandleFunc("GET /api/v1/agent_sessions/{session_id}", a.getSession)
	mux.HandleFunc("GET /api/v1/agent_sessions/{session_id}/judge_verdicts", a.getVerdicts)
	mux.HandleFunc("GET /api/v1/agents/{agent_id}/scores", a.agentScores)
	mux.HandleFunc("GET /api/v1/reports/{run_id}", a.getReport)
	mux.Handle(apiPrefix, unmatched(mux, apiPrefix))
	return mux
}

// apiPrefix is the subtree of the JSON API, where the web UI adds its event stream.
const apiPrefix = "/api/"

// probeMethods are the methods unmatched looks a path up with to list its Allow header.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// unmatched is the handler of a catch-all pattern of mux: it answers the requests no
// other route serves in JSON, where ServeMux would answer text/plain. 405 with Allow
// when routes of mux serve the path with other methods (a route registered after this
// handler counts too), else 404.
func unmatched(mux *http.ServeMux, pattern string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range probeMethods {
			probe := *r
			probe.Method = m
			if _, p := mux.Handler(&probe); p != "" && p != pattern {
				allow = append(allow, m)
			}
		}
		path := strconv.Quote(echoID(r.URL.Path))
		if len(allow) == 0 {
			writeError(w, http.StatusNotFound, "no such endpoint: "+path)
			return
		}
		list := strings.Join(allow, ", ")
		w.Header().Set("Allow", list)
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+path+": use "+list)
	})
}

// paramError is a 400: a query parameter is unknown or its value is invalid.
type paramError struct {
	param  string
	reason string
}

func (e *paramError) Error() string {
	return fmt.Sprintf("invalid parameter %q: %s", e.param, e.reason)
}

// listSessions handles GET /api/v1/agent_sessions.
func (a *queryAPI) listSessions(w http.ResponseWriter, r *http.Request) {
	f, err := parseSessionFilter(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	sessions, err := a.store.ListSessions(r.Context(), f)
	if err != nil {
		a.storeFailure(w, "listing sessions", err)
		return
	}
	if sessions == nil {
		sessions = []store.SessionSummary{}
	}
	writeJSON(w, http.StatusOK, SessionList{Sessions: sessions})
}

// getSession handles GET /api/v1/agent_sessions/{session_id}.
func (a *queryAPI) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("session_id")
	an, err := a.store.GetAnalysis(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("session %q not found", echoID(id)))
		return
	}
	if err != nil {
		a.storeFailure(w, "reading session "+strconv.Quote(echoID(id)), err)
		return
	}
	writeJSON(w, http.StatusOK, an)
}

// maxEchoedIDBytes bounds the part of a requested id that error bodies quote.
const maxEchoedIDBytes = 128

// echoID is id as error bodies quote it: at most maxEchoedIDBytes (cut on a rune
// boundary), then "…". A client sending a 1 MB id does not get it back.
func echoID(id string) string {
	if len(id) <= maxEchoedIDBytes {
		return id
	}
	cut := maxEchoedIDBytes
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return id[:cut] + "…"
}

// agentScores handles GET /api/v1/agents/{agent_id}/scores.
func (a *queryAPI) agentScores(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkParams(q, "limit"); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	limit, err := parseLimit(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	id := r.PathValue("agent_id")
	points, err := a.store.AgentScoreHistory(r.Context(), id, limit)
	if err != nil {
		a.storeFailure(w, "reading the score history of agent "+strconv.Quote(id), err)
		return
	}
	if points == nil {
		points = []store.AgentScorePoint{}
	}
	writeJSON(w, http.StatusOK, AgentScoreHistory{AgentID: id, Scores: points})
}

func (a *queryAPI) storeFailure(w http.ResponseWriter, what string, err error) {
	a.logger.Error("agenteval query API: result store failure", zap.String("operation", what), zap.Error(err))
	writeError(w, http.StatusInternalServerError, "result store failure while "+what)
}

// parseSessionFilter reads the list filters: limit (1..1000, default 100), since
// (RFC 3339), agent, min_score and max_score (in [0,1], min <= max). Unknown parameters
// are rejected so that a misspelt filter never silently returns everything.
func parseSessionFilter(q url.Values) (store.Filter, error) {
	var f store.Filter
	if err := checkParams(q, "limit", "since", "agent", "min_score", "max_score"); err != nil {
		return f, err
	}
	var err error
	if f.Limit, err = parseLimit(q); err != nil {
		return f, err
	}
	if q.Has("since") {
		if f.Since, err = time.Parse(time.RFC3339Nano, q.Get("since")); err != nil {
			return f, &paramError{"since", "must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z"}
		}
	}
	if q.Has("agent") {
		if f.Agent = q.Get("agent"); f.Agent == "" {
			return f, &paramError{"agent", "must not be empty"}
		}
	}
	if f.MinScore, err = parseScore(q, "min_score"); err != nil {
		return f, err
	}
	if f.MaxScore, err = parseScore(q, "max_score"); err != nil {
		return f, err
	}
	if f.MinScore != nil && f.MaxScore != nil && *f.MinScore > *f.MaxScore {
		return f, &paramError{"min_score", "must not be greater than max_score"}
	}
	return f, nil
}

// checkParams rejects parameters outside allowed.
func checkParams(q url.Values, allowed ...string) error {
	for name := range q {
		ok := false
		for _, a := range allowed {
			if name == a {
				ok = true
				break
			}
		}
		if !ok {
			return &paramError{name, fmt.Sprintf("unknown parameter; valid parameters are %q", allowed)}
		}
	}
	return nil
}

func parseLimit(q url.Values) (int, error) {
	if !q.Has("limit") {
		return store.DefaultLimit, nil
	}
	n, err := strconv.Atoi(q.Get("limit"))
	if err != nil || n < 1 || n > store.MaxLimit {
		return 0, &paramError{"limit", fmt.Sprintf("must be an integer between 1 and %d", store.MaxLimit)}
	}
	return n, nil
}

func parseScore(q url.Values, name string) (*float64, error) {
	if !q.Has(name) {
		return nil, nil
	}
	v, err := strconv.ParseFloat(q.Get(name), 64)
	if err != nil || !(v >= 0 && v <= 1) { // also rejects NaN
		return nil, &paramError{name, "must be a number between 0 and 1"}
	}
	return &v, nil
}

// errorBody is the body of every error response.
type errorBody struct {
	Error string `json:"error"`
}

// basicChallenge is the WWW-Authenticate header of the API server's 401 responses.
const basicChallenge = `Basic realm="agenteval", charset="UTF-8"`

// apiServerError returns the API server's error handler: what confighttp refuses before
// the handler runs (the authenticator's 401, a body it cannot decompress) is answered in
// JSON like the API's own errors. With the UI on (challenge), a 401 also carries a Basic
// challenge, so that a browser asks for the user and password of an authenticator such
// as contrib's basicauth instead of showing a bare error.
func apiServerError(challenge bool) func(w http.ResponseWriter, _ *http.Request, msg string, status int) {
	return func(w http.ResponseWriter, _ *http.Request, msg string, status int) {
		if challenge && status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", basicChallenge)
		}
		writeError(w, status, msg)
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// An encoding failure here means the client went away; nothing else to do.
	_ = json.NewEncoder(w).Encode(body)
}
