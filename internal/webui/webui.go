// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package webui is the result store's web UI (docs/decisions/webui.md): server-rendered HTML pages
// for the sessions list, one session's analysis and transcript, an agent's score
// history, and a live view fed by server-sent events. Templates and assets are embedded
// (no build step, no CDN); pages work without JavaScript except the live view, and
// every score is written out in words as well as coloured.
//
// The package knows nothing of the collector: the agenteval exporter mounts it on its
// query API server (same endpoint, same authenticator) and publishes to its Broadcaster.
package webui // import "github.com/agenteval/agenteval-collector/internal/webui"

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

//go:embed static/favicon.svg
var favicon []byte

// Paths of the UI (the other routes are in Register).
const (
	// PathSessions is the sessions list, the UI's home.
	PathSessions = "/"
	// PathLive is the live view.
	PathLive = "/live"
	// PathEvents is the live stream (server-sent events), under the API prefix.
	PathEvents = "/api/v1/events"
)

// List limits of the sessions page.
var limitChoices = []int{50, 100, 500, 1000}

const defaultListLimit = 100

// Store is what the UI reads: the query methods of internal/store.Store.
type Store interface {
	ListSessions(ctx context.Context, f store.Filter) ([]store.SessionSummary, error)
	GetAnalysis(ctx context.Context, sessionID string) (*evaluation.Analysis, error)
	AgentScoreHistory(ctx context.Context, agentID string, limit int) ([]store.AgentScorePoint, error)
}

// ChannelMessage is one message of a proctored evaluation session's channel (the
// agentsession receiver's /api/v1/evaluations/... endpoints).
type ChannelMessage struct {
	Sequence      int64
	SenderAgentID string
	// Role is the sender's role in the channel: "proctor", "candidate" or "participant".
	Role      string
	Content   string
	CreatedAt time.Time
}

// ChannelTranscripts is the extension point for proctored sessions: when set, the
// session page shows the channel messages of the analysed session under its
// transcript. It returns the first messages, in sequence order, and more = true when the
// session has messages after them (the page says so); nil, false and no error for a
// session that is not a channel session.
type ChannelTranscripts interface {
	ChannelMessages(ctx context.Context, sessionID string) (msgs []ChannelMessage, more bool, err error)
}

// Options configure the UI.
type Options struct {
	// Store is required.
	Store Store
	// TraceURL links each turn to its trace; the zero template links nothing.
	TraceURL TraceURLTemplate
	// Events feeds the live view and GET /api/v1/events; nil disables both.
	Events *Broadcaster
	// Channel adds the channel messages of proctored sessions; nil shows none.
	Channel ChannelTranscripts
	// Logger receives store failures (the page shows a generic error). Default: no-op.
	Logger *zap.Logger
}

// UI serves the pages. Create it with New.
type UI struct {
	opts  Options
	pages map[string]*template.Template
}

// New parses the embedded templates. Errors: a nil Store.
func New(opts Options) (*UI, error) {
	if opts.Store == nil {
		return nil, errors.New("webui: Options.Store is nil")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	u := &UI{opts: opts, pages: map[string]*template.Template{}}
	for _, page := range []string{"sessions", "session", "agent", "live", "error"} {
		t, err := parsePage(page)
		if err != nil {
			return nil, err
		}
		u.pages[page] = t
	}
	return u, nil
}

// parsePage parses the embedded template of page with the layout.
func parsePage(page string) (*template.Template, error) {
	t, err := template.New(page).Funcs(funcs()).ParseFS(templateFS, "templates/layout.html", "templates/"+page+".html")
	if err != nil {
		return nil, fmt.Errorf("webui: template %s: %w", page, err)
	}
	return t, nil
}

// errorTemplate is the error page for ServeError, which has no UI.
var errorTemplate = sync.OnceValues(func() (*template.Template, error) { return parsePage("error") })

// PathStatic is the prefix of the embedded assets (CSS, script, icon).
const PathStatic = "/static/"

// StaticHandler serves the embedded assets under PathStatic; they need no store.
func StaticHandler() http.Handler {
	static, _ := fs.Sub(staticFS, "static") // the embedded directory exists
	return http.StripPrefix(PathStatic, http.FileServerFS(static))
}

// ServeError answers status with the UI's HTML error page saying msg, for a browser's
// page request while there is no UI to serve it (the exporter before its result store
// opens). With refresh > 0 (whole seconds) the page reloads itself every refresh
// (<meta http-equiv="refresh">), so that the page asked for, with its live stream,
// replaces the error by itself once the condition passes; 0: no reload. Should the
// embedded template fail, it answers msg as plain text.
func ServeError(w http.ResponseWriter, status int, msg string, refresh time.Duration) {
	t, err := errorTemplate()
	if err == nil {
		ld := layoutData{Title: http.StatusText(status), Refresh: int(refresh.Round(time.Second) / time.Second)}
		err = writePage(w, t, status, errorPage{layoutData: ld, Status: status, Message: msg})
	}
	if err != nil {
		http.Error(w, msg, status)
	}
}

// Register adds the UI's routes to mux:
//
//	GET /                        sessions list  ?agent ?min_score ?max_score ?since ?partial ?task ?limit ?after ?after_id
//	GET /sessions/{session_id}   one session: scores, turns, tool issues, recommendations, transcript
//	GET /agents/{agent_id}       an agent's score history
//	GET /live                    live view (when Events is set)
//	GET /api/v1/events           server-sent events (when Events is set)
//	GET /static/...              embedded CSS, JavaScript and icon
//	GET /favicon.ico             the icon (SVG)
func (u *UI) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PathSessions+"{$}", u.sessions)
	mux.HandleFunc("GET /sessions/{session_id}", u.session)
	mux.HandleFunc("GET /agents/{agent_id}", u.agent)
	mux.Handle("GET "+PathStatic, StaticHandler())
	// Pages link /static/favicon.svg; a browser still asks for /favicon.ico on what
	// is not a page (the JSON API), which would be a 404 in every log.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "max-age=86400")
		_, _ = w.Write(favicon)
	})
	if u.opts.Events != nil {
		mux.HandleFunc("GET "+PathLive, u.live)
		mux.Handle("GET "+PathEvents, u.opts.Events)
	}
}

// layoutData is what every page's layout reads.
type layoutData struct {
	Title string
	Nav   string
	Live  bool
	// Refresh, when > 0, reloads the page after that many seconds (ServeError).
	Refresh int
}

// render executes page into a buffer, so that a template error is a clean 500.
func (u *UI) render(w http.ResponseWriter, status int, page string, data any) {
	if err := writePage(w, u.pages[page], status, data); err != nil {
		u.opts.Logger.Error("webui: rendering a page failed", zap.String("page", page), zap.Error(err))
		http.Error(w, "internal error while rendering the page", http.StatusInternalServerError)
	}
}

// writePage executes t into a buffer and writes it with status and the pages' headers;
// on a template error it writes nothing and returns the error.
func writePage(w http.ResponseWriter, t *template.Template, status int, data any) error {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

type errorPage struct {
	layoutData
	Status  int
	Message string
}

func (u *UI) fail(w http.ResponseWriter, status int, msg string) {
	u.render(w, status, "error", errorPage{layoutData: layoutData{Title: http.StatusText(status), Live: u.opts.Events != nil}, Status: status, Message: msg})
}

func (u *UI) storeFailure(w http.ResponseWriter, what string, err error) {
	u.opts.Logger.Error("webui: result store failure", zap.String("operation", what), zap.Error(err))
	u.fail(w, http.StatusInternalServerError, "The result store failed while "+what+". The collector's log has the details.")
}

// ---- sessions list ----

// listForm is the filter form as submitted (strings, so that the form shows what the
// user typed).
type listForm struct {
	Agent, MinScore, MaxScore, Since, Partial, Task string
	Limit                                           int
}

type sessionsPage struct {
	layoutData
	Form     listForm
	Limits   []int
	Error    string
	Sessions []store.SessionSummary
	Full     bool
	// Paged is true on a page after the first; OlderURL links to the next page when
	// this one is full, NewestURL back to the first.
	Paged     bool
	OlderURL  string
	NewestURL string
}

// Query parameters of the list's keyset pagination (store.Filter.After).
const (
	paramAfter   = "after"
	paramAfterID = "after_id"
)

// parseListForm reads the sessions list's query: agent, min_score and max_score (0..1),
// since (RFC 3339, or "2006-01-02T15:04" / "2006-01-02" read as UTC), partial and task
// ("yes" | "no" | ""), limit (50, 100, 500 or 1000). Empty values do not filter.
func parseListForm(q url.Values) (listForm, store.Filter, error) {
	form := listForm{
		Agent: strings.TrimSpace(q.Get("agent")), MinScore: strings.TrimSpace(q.Get("min_score")),
		MaxScore: strings.TrimSpace(q.Get("max_score")), Since: strings.TrimSpace(q.Get("since")),
		Partial: q.Get("partial"), Task: q.Get("task"), Limit: defaultListLimit,
	}
	f := store.Filter{Agent: form.Agent, Limit: defaultListLimit}
	var errs []error
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > store.MaxLimit {
			errs = append(errs, fmt.Errorf("limit: must be a number between 1 and %d", store.MaxLimit))
		} else {
			form.Limit, f.Limit = n, n
		}
	}
	score := func(name, s string) *float64 {
		if s == "" {
			return nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("%s: must be a number between 0 and 1", name))
			return nil
		}
		return &v
	}
	f.MinScore, f.MaxScore = score("min score", form.MinScore), score("max score", form.MaxScore)
	if f.MinScore != nil && f.MaxScore != nil && *f.MinScore > *f.MaxScore {
		errs = append(errs, errors.New("min score: must not be greater than max score"))
	}
	if form.Since != "" {
		t, err := parseSince(form.Since)
		if err != nil {
			errs = append(errs, err)
		}
		f.Since = t
	}
	yesNo := func(name, s string) *bool {
		switch s {
		case "":
			return nil
		case "yes":
			v := true
			return &v
		case "no":
			v := false
			return &v
		}
		errs = append(errs, fmt.Errorf("%s: must be yes or no", name))
		return nil
	}
	f.Partial, f.TaskCompletion = yesNo("partial", form.Partial), yesNo("task", form.Task)
	if q.Has(paramAfter) || q.Has(paramAfterID) {
		t, err := time.Parse(time.RFC3339Nano, q.Get(paramAfter))
		if err != nil || q.Get(paramAfterID) == "" {
			errs = append(errs, errors.New("after, after_id: a page link is an RFC 3339 time and a session id; start again from the newest sessions"))
		} else {
			f.After = &store.Cursor{StoredAt: t, SessionID: q.Get(paramAfterID)}
		}
	}
	return form, f, errors.Join(errs...)
}

// listURL is the sessions list with query q (empty values dropped).
func listURL(q url.Values) string {
	for k, v := range q {
		if len(v) == 0 || v[0] == "" {
			q.Del(k)
		}
	}
	if len(q) == 0 {
		return PathSessions
	}
	return PathSessions + "?" + q.Encode()
}

func parseSince(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("since: must be a date (2026-01-02), a UTC time (2026-01-02T15:04) or an RFC 3339 timestamp")
}

func (u *UI) sessions(w http.ResponseWriter, r *http.Request) {
	form, f, err := parseListForm(r.URL.Query())
	page := sessionsPage{
		layoutData: layoutData{Title: "Sessions", Nav: "sessions", Live: u.opts.Events != nil},
		Form:       form, Limits: limitChoices,
	}
	if err != nil {
		page.Error = err.Error()
		u.render(w, http.StatusBadRequest, "sessions", page)
		return
	}
	page.Sessions, err = u.opts.Store.ListSessions(r.Context(), f)
	if err != nil {
		u.storeFailure(w, "listing sessions", err)
		return
	}
	page.Full = len(page.Sessions) >= f.Limit
	q := r.URL.Query()
	q.Del(paramAfter)
	q.Del(paramAfterID)
	page.NewestURL = listURL(q)
	page.Paged = f.After != nil
	if page.Full {
		last := page.Sessions[len(page.Sessions)-1]
		q.Set(paramAfter, last.StoredAt.UTC().Format(time.RFC3339Nano))
		q.Set(paramAfterID, last.SessionID)
		page.OlderURL = listURL(q)
	}
	u.render(w, http.StatusOK, "sessions", page)
}

// ---- one session ----

type sessionPage struct {
	layoutData
	A       *evaluation.Analysis
	Scores  []scoreRow
	Agents  []agentRow
	Turns   []turnView
	Channel []ChannelMessage
	// ChannelMore is set when the channel has messages after those shown.
	ChannelMore bool
	// ChannelError is set when the channel transcript could not be read.
	ChannelError string
	TraceLinks   bool
	// References is the reference-based results (dataset evaluation) as indented JSON;
	// "" without them.
	References string
}

// scoreRow is one session-level score with its explanation. Drift marks
// intent_drift_score (lower is better); Sub marks a component of coordination_score.
type scoreRow struct {
	Name        string
	Value       *float64
	Explanation string
	Drift, Sub  bool
}

// sessionScores lists the session-level scores in the order of docs/scoring.md.
func sessionScores(a *evaluation.Analysis) []scoreRow {
	ex := a.Explanations
	c := a.Coordination
	return []scoreRow{
		{Name: "overall_score", Value: a.OverallScore, Explanation: ex["overall_score"]},
		{Name: "conversation_score", Value: a.Conversation.Score, Explanation: ex["conversation_score"]},
		{Name: "tool_use_score", Value: a.ToolUseScore, Explanation: ex["tool_use_score"]},
		{Name: "coordination_score", Value: a.CoordinationScore, Explanation: ex["coordination_score"]},
		{Name: "no_duplicate_work", Value: c.NoDuplicateWork, Explanation: ex["coordination.no_duplicate_work"], Sub: true},
		{Name: "context_preserved", Value: c.ContextPreserved, Explanation: ex["coordination.context_preserved"], Sub: true},
		{Name: "role_adherence", Value: c.RoleAdherence, Explanation: ex["coordination.role_adherence"], Sub: true},
		{Name: "no_ping_pong", Value: c.NoPingPong, Explanation: ex["coordination.no_ping_pong"], Sub: true},
		{Name: "dependency_compliance", Value: c.DependencyCompliance, Explanation: ex["coordination.dependency_compliance"], Sub: true},
		{Name: "reasoning_score", Value: a.ReasoningScore, Explanation: ex["reasoning_score"]},
		{Name: "intent_drift_score", Value: a.IntentDriftScore, Explanation: ex["intent_drift_score"], Drift: true},
	}
}

type agentRow struct {
	ID     string
	Scores evaluation.AgentScores
}

// turnView is one turn of the transcript with its verdict.
type turnView struct {
	evaluation.TurnResult
	TraceURL string
	Steps    []stepView
	// Cut is true when some text of the turn was cut at the processor's max_text_bytes
	// (anomaly truncated_text): the user message and final response are marked as
	// possibly cut, since the anomaly does not say which text it was.
	Cut bool
	// ClosedLate is true when a turn listed after this one (the store lists a session's
	// turns in conversation order, evaluation.ConversationOrder) has a lower turn_index:
	// this turn closed, and was numbered, after a turn that came later in the
	// conversation (its root span arrived late, or it closed at turn_timeout;
	// docs/decisions/sessions.md §1.5). Its number stays its turn_index, which tool
	// issues, the live view and the API name it by.
	ClosedLate bool
}

// markClosedLate sets ClosedLate on each of turns (in the order listed) that has a
// higher turn_index than a turn listed after it.
func markClosedLate(turns []turnView) {
	lowest := math.MaxInt // the lowest index listed after turns[i]
	for i := len(turns) - 1; i >= 0; i-- {
		turns[i].ClosedLate = turns[i].TurnIndex > lowest
		lowest = min(lowest, turns[i].TurnIndex)
	}
}

// stepView is what happened between the user message and the final response: a
// handoff or a tool call, in the order of the turn's interactions.
type stepView struct {
	AgentID string
	// Handoff fields.
	Handoff         bool
	ToAgent, Mode   string
	Payload         string
	PayloadCaptured bool
	// Tool call fields.
	Tool    string
	Verdict string
	Issues  []evaluation.ToolIssue
}

func (u *UI) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("session_id")
	a, err := u.opts.Store.GetAnalysis(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		u.fail(w, http.StatusNotFound, fmt.Sprintf("No stored analysis for session %q. It may not have ended yet, or retention deleted it.", id))
		return
	}
	if err != nil {
		u.storeFailure(w, "reading session "+strconv.Quote(id), err)
		return
	}
	page := sessionPage{
		layoutData: layoutData{Title: "Session " + a.SessionID, Nav: "sessions", Live: u.opts.Events != nil},
		A:          a,
		Scores:     sessionScores(a),
		TraceLinks: u.opts.TraceURL.Enabled(),
	}
	for _, agent := range a.Agents() {
		page.Agents = append(page.Agents, agentRow{ID: agent, Scores: a.PerAgentScores[agent]})
	}
	if a.References != nil {
		if js, err := json.MarshalIndent(a.References, "", "  "); err == nil {
			page.References = string(js)
		}
	}
	for _, tr := range a.TurnResults {
		tv := turnView{TurnResult: tr, TraceURL: u.opts.TraceURL.URL(tr.TraceID, tr.RootSpanID, a.SessionID),
			Cut: slices.Contains(tr.Anomalies, session.AnomalyTruncatedText)}
		// Per interaction (in the turn's order), its tool calls, then the handoffs it
		// made: an agent usually works, then passes on.
		for _, in := range tr.Interactions {
			for _, tc := range in.ToolCalls {
				tv.Steps = append(tv.Steps, stepView{AgentID: tc.AgentID, Tool: tc.ToolName, Verdict: tc.Verdict, Issues: tc.Issues})
			}
			for _, h := range in.Handoffs {
				tv.Steps = append(tv.Steps, stepView{AgentID: h.FromAgent, Handoff: true, ToAgent: h.ToAgent, Mode: h.Mode,
					Payload: h.Payload, PayloadCaptured: h.PayloadCaptured})
			}
		}
		page.Turns = append(page.Turns, tv)
	}
	markClosedLate(page.Turns)
	if u.opts.Channel != nil {
		msgs, more, err := u.opts.Channel.ChannelMessages(r.Context(), a.SessionID)
		if err != nil {
			u.opts.Logger.Warn("webui: reading the channel transcript failed", zap.String("session_id", a.SessionID), zap.Error(err))
			page.ChannelError = "The channel transcript could not be read; the collector's log has the details."
		}
		page.Channel, page.ChannelMore = msgs, more
	}
	u.render(w, http.StatusOK, "session", page)
}

// ---- one agent ----

type agentPage struct {
	layoutData
	ID     string
	Points []store.AgentScorePoint
	// Spark is the SVG polyline of the overall score, oldest to newest ("" with fewer
	// than two scored sessions).
	Spark string
	Mean  *float64
	Limit int
}

const (
	sparkWidth  = 600
	sparkHeight = 80
)

func (u *UI) agent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("agent_id")
	limit := defaultListLimit
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > store.MaxLimit {
			u.fail(w, http.StatusBadRequest, fmt.Sprintf("limit: must be a number between 1 and %d", store.MaxLimit))
			return
		}
		limit = n
	}
	points, err := u.opts.Store.AgentScoreHistory(r.Context(), id, limit)
	if err != nil {
		u.storeFailure(w, "reading the score history of agent "+strconv.Quote(id), err)
		return
	}
	page := agentPage{layoutData: layoutData{Title: "Agent " + id, Nav: "sessions", Live: u.opts.Events != nil},
		ID: id, Points: points, Limit: limit}
	var scored []float64
	for i := len(points) - 1; i >= 0; i-- { // oldest first
		if v := points[i].Scores.Overall; v != nil {
			scored = append(scored, *v)
		}
	}
	if len(scored) > 0 {
		sum := 0.0
		for _, v := range scored {
			sum += v
		}
		mean := sum / float64(len(scored))
		page.Mean = &mean
	}
	if len(scored) >= 2 {
		var b strings.Builder
		step := float64(sparkWidth) / float64(len(scored)-1)
		for i, v := range scored {
			fmt.Fprintf(&b, "%.1f,%.1f ", float64(i)*step, (1-v)*sparkHeight)
		}
		page.Spark = strings.TrimSpace(b.String())
	}
	u.render(w, http.StatusOK, "agent", page)
}

// ---- live view ----

func (u *UI) live(w http.ResponseWriter, _ *http.Request) {
	u.render(w, http.StatusOK, "live", layoutData{Title: "Live", Nav: "live", Live: true})
}
