// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver // import "github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/channeltrace"
)

// Paths of the evaluation channel (README.md "Evaluation channel").
const (
	// EvaluationsPath prefixes every agent endpoint of the channel.
	EvaluationsPath = "/api/v1/evaluations"
	// AdminAgentsPath issues API keys, on the admin server.
	AdminAgentsPath = "/api/v1/admin/agents"
	// formatChannel labels the obsreport telemetry of the spans of channel messages.
	formatChannel = "agentsession_channel"
)

// channelAPI is the HTTP adapter of channel.Service: it authenticates agents, decodes
// strict JSON, maps the channel's error classes to status codes, and sends the spans
// of every stored message and session end to the next consumer.
type channelAPI struct {
	r   *agentSessionReceiver
	svc *channel.Service
}

// route is one path with its handlers by method; other methods get a JSON 405.
type route struct {
	pattern string
	methods map[string]http.HandlerFunc
}

func (a *channelAPI) routes() []route {
	e := EvaluationsPath + "/{id}"
	s := e + "/sessions/{session_id}"
	return []route{
		{EvaluationsPath, map[string]http.HandlerFunc{http.MethodGet: a.listEvaluations}},
		{e, map[string]http.HandlerFunc{http.MethodGet: a.getEvaluation}},
		{e + "/register", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.register)}},
		{e + "/start", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.start)}},
		{e + "/submit", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.candidateSubmit)}},
		{e + "/pending-proctor", map[string]http.HandlerFunc{http.MethodGet: a.authed(a.pending)}},
		{e + "/proctor/claim", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.claim)}},
		{e + "/proctor/submit", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.submit)}},
		{e + "/sessions", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.createSession)}},
		{s, map[string]http.HandlerFunc{http.MethodGet: a.authed(a.getSession)}},
		{s + "/join", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.join)}},
		{s + "/end", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.end)}},
		{s + "/messages", map[string]http.HandlerFunc{http.MethodPost: a.authed(a.postMessage), http.MethodGet: a.authed(a.getMessages)}},
		{e + "/results/{result_id}/transcript", map[string]http.HandlerFunc{http.MethodGet: a.authed(a.transcript)}},
	}
}

// mount adds the agent endpoints to mux.
func (a *channelAPI) mount(mux *http.ServeMux) {
	for _, rt := range a.routes() {
		mux.Handle(rt.pattern, a.methodRouter(rt.methods))
	}
	mux.HandleFunc(EvaluationsPath+"/", a.notFound)
}

// adminHandler serves AdminAgentsPath, and a JSON 404 on any other path.
func (a *channelAPI) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(AdminAgentsPath, a.methodRouter(map[string]http.HandlerFunc{http.MethodPost: a.issueKey}))
	mux.HandleFunc("/", a.notFound)
	return mux
}

// notFound answers (and counts) a path of the channel's that no route serves.
func (a *channelAPI) notFound(w http.ResponseWriter, req *http.Request) {
	a.rejected(req)
	notFound(w, req)
}

func (a *channelAPI) methodRouter(methods map[string]http.HandlerFunc) http.Handler {
	allowed := make([]string, 0, len(methods))
	for m := range methods {
		allowed = append(allowed, m)
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h, ok := methods[req.Method]
		if !ok {
			w.Header().Set("Allow", allow)
			a.rejected(req)
			writeJSON(w, http.StatusMethodNotAllowed, errorResponse{Error: "method " + req.Method + " not allowed: use " + allow})
			return
		}
		h(w, req)
	})
}

type agentHandler func(w http.ResponseWriter, req *http.Request, caller channel.Agent)

// authed authenticates the caller by its API key (Authorization: Bearer <key>).
func (a *channelAPI) authed(h agentHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		caller, err := a.svc.Authenticate(req.Context(), bearerToken(req.Header.Get("Authorization")))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentsession"`)
			a.fail(w, req, err)
			return
		}
		h(w, req, caller)
	}
}

// bearerToken returns the token of an Authorization header value of the Bearer scheme,
// whose name is case-insensitive (RFC 7235 §2.1); any other value is returned whole,
// trimmed, and so fails as a key.
func bearerToken(header string) string {
	if scheme, token, ok := strings.Cut(header, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return strings.TrimSpace(header)
}

// fail answers err with the status of its class (500 for a storage failure, logged).
func (a *channelAPI) fail(w http.ResponseWriter, req *http.Request, err error) {
	status := http.StatusInternalServerError
	for _, c := range []struct {
		class  error
		status int
	}{
		{channel.ErrInvalid, http.StatusBadRequest},
		{channel.ErrUnauthorized, http.StatusUnauthorized},
		{channel.ErrForbidden, http.StatusForbidden},
		{channel.ErrNotFound, http.StatusNotFound},
		{channel.ErrConflict, http.StatusConflict},
		{channel.ErrTooLarge, http.StatusRequestEntityTooLarge},
	} {
		if errors.Is(err, c.class) {
			status = c.status
			break
		}
	}
	if status == http.StatusInternalServerError {
		a.r.settings.Logger.Error("Evaluation channel request failed", zap.Error(err))
		writeJSON(w, status, errorResponse{Error: "internal error"})
		return
	}
	a.rejected(req)
	writeJSON(w, status, errorResponse{Error: err.Error()})
}

// rejected counts a 4xx answer.
func (a *channelAPI) rejected(req *http.Request) {
	a.r.telemetry.ReceiverAgentsessionChannelRequestsRejected.Add(req.Context(), 1)
}

// decode reads a JSON object body into v strictly: a body that is not UTF-8 (encoding/json
// would replace the bad bytes with U+FFFD, so two different ids could become one), unknown,
// duplicate or differently cased fields (checkKeys), wrong types, trailing data and (unless optional) an empty body are ErrInvalid
// naming the field; a body over max_request_body_size is ErrTooLarge.
func decode(req *http.Request, v any, optional bool) error {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return channel.Errorf(channel.ErrTooLarge, "request body exceeds max_request_body_size (%d bytes)", tooLarge.Limit)
		}
		return channel.Errorf(channel.ErrInvalid, "reading request body: %v", err)
	}
	if !utf8.Valid(body) {
		return channel.Errorf(channel.ErrInvalid, "body is not valid UTF-8")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return channel.Errorf(channel.ErrInvalid, "empty body: a JSON object is required")
	}
	if err := checkKeys(body, v); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field == "": // the body itself
			return channel.Errorf(channel.ErrInvalid, "body must be a JSON object, got %s", typeErr.Value)
		case errors.As(err, &typeErr):
			return channel.Errorf(channel.ErrInvalid, "%s: must be a JSON %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value)
		case errors.As(err, &syntaxErr):
			return channel.Errorf(channel.ErrInvalid, "malformed JSON at byte %d: %v", syntaxErr.Offset, err)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return channel.Errorf(channel.ErrInvalid, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return channel.Errorf(channel.ErrInvalid, "malformed JSON: %v", err)
	}
	if dec.More() {
		return channel.Errorf(channel.ErrInvalid, "malformed JSON: data after the object")
	}
	return nil
}

// checkKeys refuses a body object that holds a key twice, or a key that is not exactly a
// field of v (a struct pointer): encoding/json keeps the last of duplicate keys and matches
// keys case-insensitively, so {"PASSED":true,"Passed":false} would record a verdict
// nobody clearly gave. Only the object's own keys are read (the bodies are flat); a body
// that is not an object, or malformed, is left to the decoder to report.
func checkKeys(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	fields := jsonFields(reflect.TypeOf(v).Elem())
	seen := make(map[string]bool, len(fields))
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := t.(string)
		switch {
		case seen[key]:
			return channel.Errorf(channel.ErrInvalid, "duplicate field %q", key)
		case !slices.Contains(fields, key):
			for _, f := range fields {
				if strings.EqualFold(f, key) {
					return channel.Errorf(channel.ErrInvalid, "unknown field %q (field names are case-sensitive: %q)", key, f)
				}
			}
			return channel.Errorf(channel.ErrInvalid, "unknown field %q", key)
		}
		seen[key] = true
		var value json.RawMessage
		if dec.Decode(&value) != nil {
			return nil
		}
	}
	return nil
}

// jsonFields returns the JSON names of struct type t's fields.
func jsonFields(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// emptyRequest is the body of endpoints without parameters: absent or {}.
type emptyRequest struct{}

// send passes spans to the next consumer. The message or result is already stored, so
// a refusal is logged and counted (obsreport refused spans), not answered as an error:
// a client retry would store the message twice.
func (a *channelAPI) send(req *http.Request, td ptrace.Traces) {
	ctx := a.r.obsrecv.StartTracesOp(context.WithoutCancel(req.Context()))
	n := td.SpanCount()
	err := a.r.next.ConsumeTraces(ctx, td)
	a.r.obsrecv.EndTracesOp(ctx, formatChannel, n, err)
	if err != nil {
		a.r.settings.Logger.Error("The pipeline refused the spans of an evaluation channel message", zap.Int("spans", n), zap.Error(err))
	}
}

type adminAgentRequest struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
}

type issuedKey struct {
	channel.Agent
	APIKey string `json:"api_key"`
}

func (a *channelAPI) issueKey(w http.ResponseWriter, req *http.Request) {
	var body adminAgentRequest
	if err := decode(req, &body, false); err != nil {
		a.fail(w, req, err)
		return
	}
	agent, key, err := a.svc.IssueKey(req.Context(), body.AgentID, body.Name)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, issuedKey{Agent: agent, APIKey: key})
}

func (a *channelAPI) listEvaluations(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string][]channel.Definition{"evaluations": a.svc.Definitions()})
}

func (a *channelAPI) getEvaluation(w http.ResponseWriter, req *http.Request) {
	d, err := a.svc.Definition(req.PathValue("id"))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

type conflictResponse struct {
	Error          string `json:"error"`
	RegistrationID string `json:"registration_id,omitempty"`
}

func (a *channelAPI) register(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	if err := decode(req, &emptyRequest{}, true); err != nil {
		a.fail(w, req, err)
		return
	}
	reg, err := a.svc.Register(req.Context(), caller, req.PathValue("id"))
	if errors.Is(err, channel.ErrConflict) {
		a.rejected(req)
		writeJSON(w, http.StatusConflict, conflictResponse{Error: err.Error(), RegistrationID: reg.ID})
		return
	}
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusCreated, reg)
}

func (a *channelAPI) start(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	if err := decode(req, &emptyRequest{}, true); err != nil {
		a.fail(w, req, err)
		return
	}
	reg, err := a.svc.Start(req.Context(), caller, req.PathValue("id"))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusOK, reg)
}

func (a *channelAPI) candidateSubmit(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	a.fail(w, req, a.svc.CandidateSubmit(req.Context(), caller, req.PathValue("id")))
}

func (a *channelAPI) pending(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	limit, err := queryInt(req, "limit", 0)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	p, err := a.svc.Pending(req.Context(), caller, req.PathValue("id"), int(limit))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string][]channel.Pending{"pending": p})
}

type claimRequest struct {
	RegistrationID string `json:"registration_id"`
}

func (a *channelAPI) claim(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	var body claimRequest
	if err := decode(req, &body, false); err != nil {
		a.fail(w, req, err)
		return
	}
	c, err := a.svc.Claim(req.Context(), caller, req.PathValue("id"), body.RegistrationID)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

func (a *channelAPI) createSession(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	if err := decode(req, &emptyRequest{}, true); err != nil {
		a.fail(w, req, err)
		return
	}
	sess, err := a.svc.CreateLiveSession(req.Context(), caller, req.PathValue("id"))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusCreated, sess)
}

func (a *channelAPI) getSession(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	sess, err := a.svc.Session(req.Context(), caller, req.PathValue("id"), req.PathValue("session_id"))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusOK, sess)
}

func (a *channelAPI) join(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	if err := decode(req, &emptyRequest{}, true); err != nil {
		a.fail(w, req, err)
		return
	}
	sess, err := a.svc.Join(req.Context(), caller, req.PathValue("id"), req.PathValue("session_id"))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusOK, sess)
}

func (a *channelAPI) end(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	if err := decode(req, &emptyRequest{}, true); err != nil {
		a.fail(w, req, err)
		return
	}
	ended, err := a.svc.EndLiveSession(req.Context(), caller, req.PathValue("id"), req.PathValue("session_id"))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	a.r.telemetry.ReceiverAgentsessionChannelSessionsEnded.Add(req.Context(), 1)
	a.send(req, channeltrace.End(channeltrace.Ending{Session: ended.Session, Open: ended.Open, At: endedAt(ended.Session)}, a.r.cfg.ServiceName))
	writeJSON(w, http.StatusOK, ended.Session)
}

func endedAt(s channel.Session) time.Time {
	if s.EndedAt != nil {
		return *s.EndedAt
	}
	return time.Now()
}

type messageRequest struct {
	Content *string `json:"content"`
}

// messageResponse is SafeMolt's answer to a posted message.
type messageResponse struct {
	ID            string       `json:"id"`
	SenderAgentID string       `json:"sender_agent_id"`
	Role          channel.Role `json:"role"`
	Content       string       `json:"content"`
	CreatedAt     time.Time    `json:"created_at"`
	Sequence      int64        `json:"sequence"`
}

func (a *channelAPI) postMessage(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	var body messageRequest
	if err := decode(req, &body, false); err != nil {
		a.fail(w, req, err)
		return
	}
	if body.Content == nil {
		a.fail(w, req, channel.Errorf(channel.ErrInvalid, "content: required"))
		return
	}
	p, err := a.svc.Post(req.Context(), caller, req.PathValue("id"), req.PathValue("session_id"), *body.Content)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	a.r.telemetry.ReceiverAgentsessionChannelMessages.Add(req.Context(), 1)
	a.send(req, channeltrace.Message(p, a.r.cfg.ServiceName))
	m := p.Message
	writeJSON(w, http.StatusCreated, messageResponse{ID: m.ID, SenderAgentID: m.SenderAgentID, Role: m.Role, Content: m.Content, CreatedAt: m.CreatedAt, Sequence: m.Sequence})
}

func (a *channelAPI) getMessages(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	since, err := queryInt(req, "since", 0)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	limit, err := queryInt(req, "limit", 0)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	p, err := a.svc.Messages(req.Context(), caller, req.PathValue("id"), req.PathValue("session_id"), since, int(limit))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusOK, messagesResponse{Page: p, Next: nextPage(req.URL.EscapedPath(), p, limit)})
}

// messagesResponse is a page of GET .../messages; Next is the path of the next page,
// absent when no message followed the page.
type messagesResponse struct {
	channel.Page
	Next string `json:"next,omitempty"`
}

// nextPage is the path (path, then since and the request's limit) of the page after p, or
// "" when no message followed p: since is p's last sequence, so following it reads every
// message once, in order, however the page was cut (by count or by bytes).
func nextPage(path string, p channel.Page, limit int64) string {
	if !p.More {
		return ""
	}
	q := url.Values{"since": {strconv.FormatInt(p.Messages[len(p.Messages)-1].Sequence, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.FormatInt(limit, 10))
	}
	return path + "?" + q.Encode()
}

type submitRequest struct {
	RegistrationID  string  `json:"registration_id"`
	Passed          *bool   `json:"passed"`
	ProctorFeedback *string `json:"proctor_feedback"`
}

type submitResponse struct {
	channel.Result
	Transcript string `json:"transcript"`
}

func (a *channelAPI) submit(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	var body submitRequest
	if err := decode(req, &body, false); err != nil {
		a.fail(w, req, err)
		return
	}
	if body.Passed == nil {
		a.fail(w, req, channel.Errorf(channel.ErrInvalid, "passed: required (true or false)"))
		return
	}
	sr := channel.SubmitRequest{RegistrationID: body.RegistrationID, Passed: *body.Passed}
	if body.ProctorFeedback != nil {
		sr.ProctorFeedback = *body.ProctorFeedback
	}
	evalID := req.PathValue("id")
	sub, err := a.svc.Submit(req.Context(), caller, evalID, sr)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	a.r.telemetry.ReceiverAgentsessionChannelSessionsEnded.Add(req.Context(), 1)
	a.send(req, channeltrace.End(channeltrace.Ending{Session: sub.Session, Open: sub.Open, Result: &sub.Result, At: sub.Result.CompletedAt}, a.r.cfg.ServiceName))
	writeJSON(w, http.StatusCreated, submitResponse{Result: sub.Result, Transcript: channeltrace.TranscriptPath(evalID, sub.Result.ID)})
}

// transcriptResponse is a page of a transcript; Next is the path of the next page, absent
// on the last.
type transcriptResponse struct {
	channel.Transcript
	Next string `json:"next,omitempty"`
}

func (a *channelAPI) transcript(w http.ResponseWriter, req *http.Request, caller channel.Agent) {
	since, err := queryInt(req, "since", 0)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	limit, err := queryInt(req, "limit", 0)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	evalID, resultID := req.PathValue("id"), req.PathValue("result_id")
	t, err := a.svc.Transcript(req.Context(), caller, evalID, resultID, since, int(limit))
	if err != nil {
		a.fail(w, req, err)
		return
	}
	writeJSON(w, http.StatusOK, transcriptResponse{Transcript: t, Next: nextPage(channeltrace.TranscriptPath(evalID, resultID), t.Page, limit)})
}

// queryInt reads an optional non-negative integer query parameter.
func queryInt(req *http.Request, name string, def int64) (int64, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, channel.Errorf(channel.ErrInvalid, "%s: %q is not a non-negative integer", name, v)
	}
	return n, nil
}
