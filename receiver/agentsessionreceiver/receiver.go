// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver // import "github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/sessionjson"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/tracker"
	"github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver/internal/metadata"
)

const (
	// SessionsPath is the URL path of the AgentSession JSON endpoint (docs/architecture.md §8).
	SessionsPath = "/v1/agent_sessions"
	// transport and format label the receiver's obsreport telemetry.
	transport = "http"
	format    = "agentsession_json"
	// retryAfterSeconds is sent with 503 when the next consumer refused the spans
	// with a retryable error (e.g. a memory limiter).
	retryAfterSeconds = 5
)

type agentSessionReceiver struct {
	cfg       *Config
	settings  receiver.Settings
	next      consumer.Traces
	obsrecv   *receiverhelper.ObsReport
	telemetry *metadata.TelemetryBuilder
	convert   sessionjson.Options

	server     *http.Server
	addr       net.Addr // the bound address, known after Start (endpoint may use port 0)
	shutdownWG sync.WaitGroup

	// The evaluation channel, when configured (channel.go).
	channelStore *store.ChannelStore
	channel      *channel.Service
	adminServer  *http.Server
	adminAddr    net.Addr
}

func newReceiver(cfg *Config, set receiver.Settings, next consumer.Traces) (*agentSessionReceiver, error) {
	obsrecv, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              transport,
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &agentSessionReceiver{
		cfg:       cfg,
		settings:  set,
		next:      next,
		obsrecv:   obsrecv,
		telemetry: tb,
		convert: sessionjson.Options{
			ServiceName: cfg.ServiceName,
			EndSession:  cfg.EndSession,
		},
	}, nil
}

// Start listens on the configured endpoint and serves SessionsPath, and, when the
// channel is configured, opens its store and serves EvaluationsPath there and
// AdminAgentsPath on the admin endpoint.
func (r *agentSessionReceiver) Start(ctx context.Context, host component.Host) error {
	mux := http.NewServeMux()
	mux.HandleFunc(SessionsPath, r.handleSessions)
	mux.HandleFunc("/", notFound) // not a request of SessionsPath: not counted as rejected
	var err error
	if ch := r.cfg.Channel.Get(); ch != nil {
		if err = r.startChannel(ctx, host, ch, mux); err != nil {
			return err
		}
	}
	if r.server, err = r.cfg.ServerConfig.ToServer(ctx, host.GetExtensions(), r.settings.TelemetrySettings, mux,
		confighttp.WithErrorHandler(r.serverError(false))); err != nil {
		return err
	}
	var ln net.Listener
	if ln, err = r.cfg.ServerConfig.ToListener(ctx); err != nil {
		return err
	}
	r.addr = ln.Addr()
	r.settings.Logger.Info("Starting AgentSession JSON server",
		zap.String("endpoint", ln.Addr().String()), zap.String("path", SessionsPath))
	r.shutdownWG.Go(func() {
		if err := r.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	})
	return nil
}

// startChannel opens the channel's store, builds the service, mounts its endpoints on
// mux and starts the admin server.
func (r *agentSessionReceiver) startChannel(ctx context.Context, host component.Host, ch *ChannelConfig, mux *http.ServeMux) error {
	defs, err := channel.LoadDefinitions(ch.Evaluations, ch.EvaluationFiles)
	if err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	if r.channelStore, err = store.OpenChannel(ctx, ch.Store.Driver, string(ch.Store.DSN)); err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	svc, err := channel.New(channel.Options{Store: r.channelStore, Definitions: defs,
		MaxContentBytes: ch.MaxMessageBytes, MaxSessionMessages: ch.MaxSessionMessages, MaxPageBytes: ch.MaxPageBytes})
	if err != nil {
		return err
	}
	r.channel = svc
	api := &channelAPI{r: r, svc: svc}
	api.mount(mux)
	if r.adminServer, err = ch.Admin.ToServer(ctx, host.GetExtensions(), r.settings.TelemetrySettings, api.adminHandler(),
		confighttp.WithErrorHandler(r.serverError(true))); err != nil {
		return fmt.Errorf("channel.admin: %w", err)
	}
	ln, err := ch.Admin.ToListener(ctx)
	if err != nil {
		return fmt.Errorf("channel.admin: %w", err)
	}
	r.adminAddr = ln.Addr()
	r.settings.Logger.Info("Starting the evaluation channel",
		zap.Int("evaluations", len(defs)), zap.String("path", EvaluationsPath),
		zap.String("admin_endpoint", ln.Addr().String()), zap.String("store", ch.Store.Driver))
	srv := r.adminServer
	r.shutdownWG.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	})
	return nil
}

// Shutdown stops the servers (letting in-flight requests finish within ctx) and closes
// the channel's store.
func (r *agentSessionReceiver) Shutdown(ctx context.Context) error {
	var errs []error
	for _, srv := range []*http.Server{r.server, r.adminServer} {
		if srv != nil {
			errs = append(errs, srv.Shutdown(ctx))
		}
	}
	r.shutdownWG.Wait()
	if r.channelStore != nil {
		errs = append(errs, r.channelStore.Close())
	}
	r.telemetry.Shutdown()
	return errors.Join(errs...)
}

// sessionAccepted describes one posted session in the 202 response.
type sessionAccepted struct {
	SessionID string   `json:"session_id"`
	TraceIDs  []string `json:"trace_ids"`
	Turns     int      `json:"turns"`
	Spans     int      `json:"spans"`
}

// acceptedResponse is the 202 body. SessionID repeats the single session's id (absent
// for a dataset of several).
type acceptedResponse struct {
	SessionID string            `json:"session_id,omitempty"`
	Sessions  []sessionAccepted `json:"sessions"`
}

// errorResponse is every error body: Field names the offending JSON value
// ("turns[0].agent_interactions[1].agent_id") when there is one.
type errorResponse struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func (r *agentSessionReceiver) handleSessions(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		r.reject(req.Context(), w, http.StatusMethodNotAllowed, errorResponse{Error: "method " + req.Method + " not allowed: use POST"})
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			r.reject(req.Context(), w, http.StatusRequestEntityTooLarge, errorResponse{
				Error: fmt.Sprintf("request body exceeds max_request_body_size (%d bytes)", tooLarge.Limit),
			})
			return
		}
		r.reject(req.Context(), w, http.StatusBadRequest, errorResponse{Error: "reading request body: " + err.Error()})
		return
	}
	sessions, _, err := sessionjson.Parse(body)
	if err != nil {
		var ve *sessionjson.ValidationError
		if errors.As(err, &ve) {
			r.reject(req.Context(), w, http.StatusBadRequest, errorResponse{Error: ve.Message, Field: ve.Field})
			return
		}
		r.settings.Logger.Error("AgentSession JSON could not be decoded", zap.Error(err))
		writeJSON(w, http.StatusInternalServerError, errorResponse{Error: "internal error decoding the body"})
		return
	}

	if refused, err := r.channelSession(req.Context(), sessions); err != nil {
		r.settings.Logger.Error("The evaluation channel's sessions could not be read", zap.Error(err))
		writeJSON(w, http.StatusInternalServerError, errorResponse{Error: "internal error reading the evaluation channel's sessions"})
		return
	} else if refused != nil {
		r.reject(req.Context(), w, http.StatusConflict, errorResponse{
			Error: fmt.Sprintf("session %q is a session of the evaluation channel: its conversation is recorded only through the channel", refused.SessionID),
			Field: refused.IDField(),
		})
		return
	}

	td := ptrace.NewTraces()
	resp := acceptedResponse{Sessions: make([]sessionAccepted, 0, len(sessions))}
	spans := 0
	for _, s := range sessions {
		c := sessionjson.Convert(s, r.convert)
		c.Traces.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		spans += c.SpanCount
		resp.Sessions = append(resp.Sessions, sessionAccepted{SessionID: c.SessionID, TraceIDs: c.TraceIDs, Turns: len(c.TraceIDs), Spans: c.SpanCount})
	}
	if len(resp.Sessions) == 1 {
		resp.SessionID = resp.Sessions[0].SessionID
	}

	ctx := r.obsrecv.StartTracesOp(req.Context())
	err = r.next.ConsumeTraces(ctx, td)
	r.obsrecv.EndTracesOp(ctx, format, spans, err)
	if err != nil {
		if consumererror.IsPermanent(err) {
			writeJSON(w, http.StatusInternalServerError, errorResponse{Error: "the pipeline rejected the spans: " + err.Error()})
			return
		}
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		writeJSON(w, http.StatusServiceUnavailable, errorResponse{Error: "the pipeline is busy, retry later: " + err.Error()})
		return
	}
	r.telemetry.ReceiverAgentsessionSessionsReceived.Add(req.Context(), int64(len(sessions)))
	writeJSON(w, http.StatusAccepted, resp)
}

// channelSession returns the first of sessions whose session_id is a session of the
// evaluation channel, or a sub-agent's id of one (<id>-<uuid>, which the processor folds
// into the open session <id>: tracker.ParentSessionID); nil when none is, or without a
// channel. Recorded turns under such an id would join the evaluated conversation, and an
// agent under evaluation could rewrite its own analysis.
func (r *agentSessionReceiver) channelSession(ctx context.Context, sessions []sessionjson.Session) (*sessionjson.Session, error) {
	if r.channel == nil {
		return nil, nil
	}
	for i := range sessions {
		for _, id := range []string{sessions[i].SessionID, tracker.ParentSessionID(sessions[i].SessionID)} {
			if id == "" {
				continue
			}
			found, err := r.channel.IsSession(ctx, id)
			if err != nil || found {
				return &sessions[i], err
			}
		}
	}
	return nil, nil
}

// reject answers a client error and counts it.
func (r *agentSessionReceiver) reject(ctx context.Context, w http.ResponseWriter, status int, body errorResponse) {
	r.telemetry.ReceiverAgentsessionRequestsRejected.Add(ctx, 1)
	writeJSON(w, status, body)
}

// serverError returns a server's confighttp error handler: what confighttp refuses
// before a handler runs (a body it cannot decompress, an unknown Content-Encoding, the
// authenticator's 401) is answered in JSON like every other error, and a 4xx is counted
// as a rejected request of its path, the sessions endpoint's or the channel's. Every
// request of the channel's admin server (admin) is the channel's.
func (r *agentSessionReceiver) serverError(admin bool) func(http.ResponseWriter, *http.Request, string, int) {
	return func(w http.ResponseWriter, req *http.Request, msg string, status int) {
		if status >= 400 && status < 500 {
			switch {
			case admin || strings.HasPrefix(req.URL.Path, EvaluationsPath):
				r.telemetry.ReceiverAgentsessionChannelRequestsRejected.Add(req.Context(), 1)
			case req.URL.Path == SessionsPath:
				r.telemetry.ReceiverAgentsessionRequestsRejected.Add(req.Context(), 1)
			}
		}
		writeJSON(w, status, errorResponse{Error: msg})
	}
}

// notFound answers a path no route serves in JSON, like every other error (ServeMux
// would answer text/plain).
func notFound(w http.ResponseWriter, req *http.Request) {
	writeJSON(w, http.StatusNotFound, errorResponse{Error: "no such endpoint: " + req.URL.Path})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do then
}
