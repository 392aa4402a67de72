// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadata"
	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/lograte"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/webui"
)

// The evaluation spans this exporter reads (docs/architecture.md §6; keys in internal/semconv):
// agent_eval.kind marks them (one lookup per span; spans without it are skipped); turn
// and agent_session spans reach pushTraces only when their agent_eval.signature
// verified with signing_key before the queue (authenticate.go), others are dropped; a
// `turn` span carries the turn's summary (evalspan.TurnSummary: what the per-turn
// metrics and live events read) as typed agent_eval.turn.* attributes and an
// `agent_session` span the complete analysis (what the store keeps) as typed
// agent_eval.session.* attributes, both read with internal/evalspan (no JSON). The tool_call and agent_interaction kinds carry
// nothing the exporter needs: their data is in the turn result.

// defaultRetentionInterval is how often retention runs (after a first run at start).
const defaultRetentionInterval = time.Hour

// maxConnectBackoff caps the wait between two attempts to open an unreachable store.
const maxConnectBackoff = 30 * time.Second

// errStoreNotConnected fails the saves made before the store could be opened; the
// batch is retried by exporterhelper.
var errStoreNotConnected = errors.New("the result store is not connected yet")

// agentEvalExporter is the exporter behind exporterhelper: pushTraces is called by the
// queue consumers (concurrently), start and shutdown by the collector.
type agentEvalExporter struct {
	cfg       *Config
	set       exporter.Settings
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	metrics   *promMetrics
	signer    *evalspan.Signer // verifies agent_eval.signature
	// unauthWarn lets the warning about spans signed with another key through once a
	// minute (logUnauthenticated).
	unauthWarn *lograte.Every
	// handoff, when set by start (the handoff setting), holds the results of this
	// collector's agentsession processor by evaluation span (authenticate.go handedOff).
	handoff *handoff.Handoff
	// attached: start attached this exporter to handoff as its taker; shutdown detaches.
	attached bool
	// verifySessions keeps the signature check of session spans whose analysis is
	// handed off: with a persistent queue, whatever the key (handedOff).
	verifySessions bool

	// openStore, connectBackoff, retentionInterval and now are replaced in tests.
	openStore         func(ctx context.Context, driver, dsn string) (store.Store, error)
	connectBackoff    time.Duration
	retentionInterval time.Duration
	now               func() time.Time

	// Set by start, released by shutdown. store, api and events are set by connect
	// (in start or later in connectLoop) before ready is closed: read them only after.
	ready      chan struct{}
	store      store.Store
	api        http.Handler
	host       component.Host
	promServer *http.Server
	apiServer  *http.Server
	promAddr   net.Addr
	apiAddr    net.Addr
	events     *webui.Broadcaster // nil when ui.enabled is false
	cancel     context.CancelFunc
	wg         sync.WaitGroup // servers and retention
	connectWG  sync.WaitGroup // connectLoop

	// storeFailing is true after a failed save until the next successful one; it drives
	// the component status (RecoverableError → OK).
	storeFailing atomic.Bool
}

func newAgentEvalExporter(set exporter.Settings, cfg *Config) (*agentEvalExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	logger := set.Logger
	return &agentEvalExporter{
		cfg:       cfg,
		set:       set,
		logger:    logger,
		telemetry: tb,
		metrics: newPromMetrics(cfg.Prometheus.MaxLabelValues, func(domain string) {
			logger.Warn("agenteval: label value cap reached; further values are reported as \"other\"",
				zap.String("label", domain), zap.Int("max_label_values", cfg.Prometheus.MaxLabelValues))
		}),
		signer:            evalspan.NewSigner(string(cfg.SigningKey)),
		unauthWarn:        lograte.New(time.Minute),
		openStore:         store.Open,
		connectBackoff:    time.Second,
		retentionInterval: defaultRetentionInterval,
		now:               time.Now,
	}, nil
}

// start serves Prometheus and the query API, then opens the result store. When the
// store cannot be opened (database down, disk not mounted) start still succeeds, so the
// trace pipeline keeps flowing: it reports a RecoverableError status and keeps trying
// in the background (connectLoop); until the store is open, analyses wait in the
// sending queue (pushTraces returns a retryable error), the per-turn metrics are
// served and the query API answers 503. A port already taken fails start, naming the
// server.
func (e *agentEvalExporter) start(ctx context.Context, host component.Host) (err error) {
	if e.handoff, err = handoff.FromHost(host, e.cfg.Handoff); err != nil {
		return fmt.Errorf("agenteval: %w", err)
	}
	if e.handoff != nil && !e.attached {
		// The processor's puts are stored from now on (exporters start before the
		// processors); shutdown detaches.
		e.handoff.Attach()
		e.attached = true
	}
	if q := e.cfg.QueueConfig.Get(); q != nil && q.StorageID != nil {
		e.verifySessions = true
	}
	e.host = host
	e.ready = make(chan struct{})
	bg, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	defer func() {
		if err != nil {
			_ = e.release(context.Background())
		}
	}()

	if e.promServer, e.promAddr, err = e.startServer(ctx, host, "prometheus", &e.cfg.Prometheus.ServerConfig, e.metrics.handler()); err != nil {
		return err
	}
	apiOpts := []confighttp.ToServerOption{confighttp.WithErrorHandler(apiServerError(e.cfg.UI.Enabled))}
	if e.apiServer, e.apiAddr, err = e.startServer(ctx, host, "api", &e.cfg.API, http.HandlerFunc(e.serveAPI), apiOpts...); err != nil {
		return err
	}

	st, err := e.openStore(ctx, string(e.cfg.Store.Driver), string(e.cfg.Store.DSN))
	if err != nil {
		e.storeDown(err)
		e.connectWG.Add(1)
		go e.connectLoop(bg)
		return nil
	}
	return e.connect(bg, st)
}

// storeDown reports that the store could not be opened.
func (e *agentEvalExporter) storeDown(err error) {
	err = fmt.Errorf("agenteval: opening the %s result store (store.dsn): %w", e.cfg.Store.Driver, err)
	e.logger.Error("agenteval: result store unreachable; retrying in the background, analyses wait in the sending queue", zap.Error(err))
	componentstatus.ReportStatus(e.host, componentstatus.NewRecoverableErrorEvent(err))
}

// connectLoop opens the store with exponential backoff (connectBackoff doubling up to
// maxConnectBackoff) until it succeeds or ctx is cancelled (shutdown).
func (e *agentEvalExporter) connectLoop(ctx context.Context) {
	defer e.connectWG.Done()
	wait := e.connectBackoff
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxConnectBackoff)
		st, err := e.openStore(ctx, string(e.cfg.Store.Driver), string(e.cfg.Store.DSN))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.logger.Warn("agenteval: result store still unreachable; will retry", zap.Duration("retry_in", wait), zap.Error(err))
			continue
		}
		if err := e.connect(ctx, st); err != nil {
			componentstatus.ReportStatus(e.host, componentstatus.NewFatalErrorEvent(err))
			return
		}
		e.logger.Info("agenteval: result store connected")
		componentstatus.ReportStatus(e.host, componentstatus.NewEvent(componentstatus.StatusOK))
		return
	}
}

// connect makes st the exporter's store: builds the query API and web UI over it,
// marks the exporter ready (pushTraces saves, the API serves) and starts retention.
func (e *agentEvalExporter) connect(ctx context.Context, st store.Store) error {
	api, err := e.apiHandler(st)
	if err != nil {
		_ = st.Close()
		return err
	}
	e.store, e.api = st, api
	close(e.ready) // publishes e.store, e.api and e.events to the readers of e.ready
	if e.cfg.Store.Retention > 0 {
		e.wg.Add(1)
		go e.retentionLoop(ctx)
	}
	return nil
}

// isReady reports whether the store is open (and e.store, e.api, e.events are set).
func (e *agentEvalExporter) isReady() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// storeRetryAfter is the Retry-After of the 503 answered before the store opens, and how
// often the HTML error page of that 503 reloads itself.
const storeRetryAfter = 5 * time.Second

// serveAPI is the API server's handler: the query API and web UI once the store is
// open. Before, the UI's static assets, and 503 with Retry-After: the UI's HTML error
// page for a browser asking for a page (outside /api/, Accept with text/html), which
// reloads itself every storeRetryAfter so that the page asked for (a live view with its
// event stream) comes up by itself once the store opens; a JSON error otherwise.
func (e *agentEvalExporter) serveAPI(w http.ResponseWriter, r *http.Request) {
	if !e.isReady() {
		if e.cfg.UI.Enabled && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, webui.PathStatic) {
			webui.StaticHandler().ServeHTTP(w, r) // the error page's stylesheet
			return
		}
		secs := strconv.Itoa(int(storeRetryAfter / time.Second))
		w.Header().Set("Retry-After", secs)
		if e.cfg.UI.Enabled && !strings.HasPrefix(r.URL.Path, apiPrefix) && strings.Contains(r.Header.Get("Accept"), "text/html") {
			webui.ServeError(w, http.StatusServiceUnavailable, "The result store is not reachable yet, so these pages cannot be shown. "+
				"Analyses are queued and stored once it is; this page reloads itself every "+secs+" seconds until then. The collector's log says why.", storeRetryAfter)
			return
		}
		writeError(w, http.StatusServiceUnavailable, "the result store is not reachable yet; analyses are queued")
		return
	}
	e.api.ServeHTTP(w, r)
}

// startServer listens on cfg's endpoint (so a taken port fails Start) and serves handler
// in a goroutine that shutdown waits for.
func (e *agentEvalExporter) startServer(ctx context.Context, host component.Host, name string, cfg *confighttp.ServerConfig, handler http.Handler, opts ...confighttp.ToServerOption) (*http.Server, net.Addr, error) {
	ln, err := cfg.ToListener(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("agenteval: %s server: cannot listen on %s.endpoint %q: %w", name, name, cfg.NetAddr.Endpoint, err)
	}
	srv, err := cfg.ToServer(ctx, host.GetExtensions(), e.set.TelemetrySettings, handler, opts...)
	if err != nil {
		_ = ln.Close()
		return nil, nil, fmt.Errorf("agenteval: %s server: %w", name, err)
	}
	e.logger.Info("agenteval: serving", zap.String("server", name), zap.String("address", ln.Addr().String()))
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if serr := srv.Serve(ln); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(fmt.Errorf("agenteval: %s server: %w", name, serr)))
		}
	}()
	return srv, ln.Addr(), nil
}

// shutdown releases everything start opened and the internal telemetry, and detaches
// from the handoff (which then drops what it holds). exporterhelper calls it after
// draining the queue. Safe to call without (or after a failed) start.
func (e *agentEvalExporter) shutdown(ctx context.Context) error {
	err := e.release(ctx)
	if e.attached { // after the processors' shutdown: nothing is put any more
		e.handoff.Detach()
		e.attached = false
	}
	e.telemetry.Shutdown()
	return err
}

// release stops the servers and the retention loop, waits for their goroutines, then
// closes the store. Idempotent.
func (e *agentEvalExporter) release(ctx context.Context) error {
	var errs []error
	if e.cancel != nil {
		e.cancel()
		e.cancel = nil
	}
	e.connectWG.Wait()
	// End the live event streams first: srv.Shutdown waits for active handlers.
	if e.ready != nil && e.isReady() {
		e.events.Close()
	}
	for _, srv := range []*http.Server{e.promServer, e.apiServer} {
		if srv == nil {
			continue
		}
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, err)
			_ = srv.Close()
		}
	}
	e.promServer, e.apiServer = nil, nil
	e.wg.Wait()
	if e.store != nil { // set only by connect, which has returned (connectWG)
		if err := e.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("agenteval: closing the result store: %w", err))
		}
		e.store = nil
	}
	return errors.Join(errs...)
}

// pushTraces consumes one batch. Per span it does one attribute lookup (agent_eval.kind)
// and skips every span without it. Turn results feed the per-turn metrics; the batch's
// analyses are saved together (one transaction), then feed the per-session metrics.
//
// Errors: when the analyses could not be saved they are returned as
// consumererror.Traces holding only their spans, so exporterhelper's retry and queue
// resend just those (never the turns, whose metrics are already counted); saving them
// again is idempotent (store revisions). Attributes of the wrong type, and analyses or
// verdicts the store refuses (store.ErrRejected), are a permanent error (logged and
// dropped: a retry cannot fix them); the rest of the batch is stored.
func (e *agentEvalExporter) pushTraces(ctx context.Context, td ptrace.Traces) error {
	var (
		evalSpans  int64
		forged     int64
		decodeErrs []error
		analyses   []*evaluation.Analysis
		spanOf     []keptSpan // analyses[i] came from spanOf[i]
		held       []bool     // analyses[i] was taken from the handoff
		verdicts   []store.JudgeVerdict
		kept       []keptSpan
	)
	// keep notes a span whose rows are saved below: what a failed save resends (copied
	// only then, by failed).
	keep := func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) {
		kept = append(kept, keptSpan{rs, ss, span})
	}
	// giveBack returns the analyses taken from the handoff whose save is retried (all when
	// retry is nil) to it, so that the retry stores them whole rather than decoded from
	// their span, which may carry only a session's newest turns (agent_eval.turns_omitted)
	// and, since the retry is a copy, under the same key.
	giveBack := func(retry func(i int) bool) {
		for i := range analyses {
			if held[i] && (retry == nil || retry(i)) {
				e.handoff.PutAnalysis(handoff.KeyOf(spanOf[i].span), analyses[i])
			}
		}
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				kind, ok := span.Attributes().Get(semconv.AgentEvalKind)
				if !ok {
					continue
				}
				evalSpans++
				switch kind.Str() {
				case semconv.EvalKindTurn: // handled before the queue; kept for queued data
					if err := e.recordTurn(span); err != nil {
						decodeErrs = append(decodeErrs, err)
					}
				case semconv.EvalKindAgentSession:
					a, fromHandoff, err := e.analysis(span)
					if errors.Is(err, errUnverified) {
						forged++
						evalSpans-- // unauthenticated spans are not counted as evaluation spans
						e.logUnauthenticated(semconv.EvalKindAgentSession, span, err)
						continue
					}
					if err != nil {
						decodeErrs = append(decodeErrs, spanError(span, err))
						continue
					}
					analyses = append(analyses, a)
					held = append(held, fromHandoff)
					spanOf = append(spanOf, keptSpan{rs, ss, span})
					keep(rs, ss, span)
				case semconv.EvalKindJudge, semconv.EvalKindReference:
					vs, err := decodeVerdicts(span)
					if err != nil {
						decodeErrs = append(decodeErrs, spanError(span, err))
						continue
					}
					verdicts = append(verdicts, vs...)
					keep(rs, ss, span)
				}
			}
		}
	}

	if evalSpans > 0 {
		e.telemetry.ExporterAgentevalEvaluationSpans.Add(ctx, evalSpans)
	}
	if forged > 0 {
		e.telemetry.ExporterAgentevalUnauthenticatedSpans.Add(ctx, forged)
	}
	if len(decodeErrs) > 0 {
		e.telemetry.ExporterAgentevalDecodeErrors.Add(ctx, int64(len(decodeErrs)))
	}
	var rejected []error
	if len(verdicts) > 0 {
		// Before the analyses: if the verdicts fail, the retry resends them with the
		// analyses (failed(kept)), and saving them again replaces their rows
		// (store.VerdictStore).
		switch err := e.saveVerdicts(ctx, verdicts); {
		case errors.Is(err, store.ErrRejected):
			errs := oneByOne(len(verdicts), func(i int) error { return e.saveVerdicts(ctx, verdicts[i:i+1]) })
			for _, err := range errs {
				switch {
				case errors.Is(err, store.ErrRejected):
					rejected = append(rejected, err)
				case err != nil: // an outage began: the batch is retried
					e.telemetry.ExporterAgentevalStoreErrors.Add(ctx, int64(len(verdicts)))
					giveBack(nil)
					return consumererror.NewTraces(fmt.Errorf("agenteval: saving judge verdicts to the result store failed: %w", err), failed(kept))
				}
			}
			e.logger.Error("agenteval: the result store refused judge verdicts that no retry can store; they are dropped", zap.Error(errors.Join(rejected...)))
		case err != nil:
			e.telemetry.ExporterAgentevalStoreErrors.Add(ctx, int64(len(verdicts)))
			giveBack(nil)
			return consumererror.NewTraces(fmt.Errorf("agenteval: saving %d judge verdicts to the result store failed: %w", len(verdicts), err), failed(kept))
		}
	}
	if len(analyses) > 0 {
		rejectedVerdicts := len(rejected)
		errs := e.saveIfReady(ctx, analyses)
		var (
			retry    []keptSpan
			retryErr error
			stored   = analyses
		)
		if errs != nil {
			stored = make([]*evaluation.Analysis, 0, len(analyses))
			for i, err := range errs {
				switch {
				case err == nil:
					stored = append(stored, analyses[i])
				case errors.Is(err, store.ErrRejected):
					rejected = append(rejected, err) // it names the session
				default:
					retry = append(retry, spanOf[i])
					retryErr = cmp.Or(retryErr, err)
				}
			}
		}
		if n := len(rejected) - rejectedVerdicts; n > 0 {
			e.telemetry.ExporterAgentevalRejectedAnalyses.Add(ctx, int64(n))
			e.logger.Error("agenteval: the result store refused analyses that no retry can store; they are dropped, the rest of their batch is stored",
				zap.Error(errors.Join(rejected[rejectedVerdicts:]...)))
		}
		if len(retry) > 0 {
			giveBack(func(i int) bool { return errs[i] != nil && !errors.Is(errs[i], store.ErrRejected) })
			e.telemetry.ExporterAgentevalStoreErrors.Add(ctx, int64(len(retry)))
			err := fmt.Errorf("agenteval: saving %d analyses to the result store failed: %w", len(retry), retryErr)
			if e.storeFailing.CompareAndSwap(false, true) && !errors.Is(err, errStoreNotConnected) {
				// Once per failure streak (a full disk, a lost connection); retries follow.
				e.logger.Error("agenteval: the result store rejects writes; analyses are retried from the sending queue", zap.Error(err))
			}
			componentstatus.ReportStatus(e.host, componentstatus.NewRecoverableErrorEvent(err))
			if len(decodeErrs) > 0 {
				e.logger.Error("agenteval: dropping undecodable evaluation spans", zap.Error(errors.Join(decodeErrs...)))
			}
			e.recordStored(ctx, stored)
			return consumererror.NewTraces(err, failed(retry))
		}
		e.recordStored(ctx, stored)
		if e.storeFailing.CompareAndSwap(true, false) {
			e.logger.Info("agenteval: the result store accepts writes again")
			componentstatus.ReportStatus(e.host, componentstatus.NewEvent(componentstatus.StatusOK))
		}
	}
	if len(decodeErrs)+len(rejected) > 0 {
		return consumererror.NewPermanent(fmt.Errorf("agenteval: dropped %d undecodable evaluation spans and %d analyses or verdicts the result store refused: %w",
			len(decodeErrs), len(rejected), errors.Join(append(decodeErrs, rejected...)...)))
	}
	return nil
}

// recordStored feeds the analyses just stored to the metrics, the live UI events and the
// console, and counts them. Turns parts are left out: they hold some of the turns of an
// analysis whose session span is recorded (docs/decisions/sessions.md §4.10).
func (e *agentEvalExporter) recordStored(ctx context.Context, as []*evaluation.Analysis) {
	var n int64
	for _, a := range as {
		if a.TurnsPart {
			continue
		}
		e.metrics.recordAnalysis(a)
		e.events.PublishSession(a) // ready: the store took it
		if e.cfg.Console == ConsoleSummary {
			e.logger.Info(sessionConsoleLine(a))
		}
		n++
	}
	if n > 0 {
		e.telemetry.ExporterAgentevalAnalysesStored.Add(ctx, n)
	}
}

// saveIfReady saves as (save) once the store is open; before, every analysis fails with
// errStoreNotConnected.
func (e *agentEvalExporter) saveIfReady(ctx context.Context, as []*evaluation.Analysis) []error {
	if !e.isReady() {
		return sameError(len(as), errStoreNotConnected)
	}
	return e.save(ctx, as)
}

// errUnverified: a session span that passed the front unverified (attrUnverified) and
// whose analysis is no longer handed off does not verify with signing_key.
var errUnverified = errors.New("not signed with signing_key")

// analysis returns the analysis of a session evaluation span: the one handed off for
// it by this collector's processor (taken out of the handoff), else the one decoded
// from its attributes, after its signature check when the front skipped it
// (attrUnverified). Errors: errUnverified, the decode's, or an empty session_id.
func (e *agentEvalExporter) analysis(span ptrace.Span) (a *evaluation.Analysis, held bool, err error) {
	if h := e.handoff; h != nil {
		a, held = h.TakeAnalysis(handoff.KeyOf(span))
	}
	if !held {
		if v, ok := span.Attributes().Get(attrUnverified); ok && v.Bool() {
			if err := e.signer.Verify(span.Attributes()); err != nil {
				return nil, false, fmt.Errorf("%w: %w", errUnverified, err)
			}
		}
		d, err := evalspan.DecodeAnalysis(span.Attributes())
		if err != nil {
			return nil, false, err
		}
		a = &d
	}
	if a.SessionID == "" {
		return nil, false, errors.New("session_id is empty")
	}
	return a, held, nil
}

// recordTurn decodes a turn evaluation span and records its result (recordTurnResult).
func (e *agentEvalExporter) recordTurn(span ptrace.Span) error {
	tr, err := evalspan.DecodeTurn(span.Attributes())
	if err != nil {
		return spanError(span, err)
	}
	e.recordTurnResult(&tr)
	return nil
}

// recordTurnResult feeds a turn result to the per-turn metrics and, once the store is
// open, to the live UI events. tr is only read.
func (e *agentEvalExporter) recordTurnResult(tr *evaluation.TurnResult) {
	e.metrics.recordTurn(tr)
	if e.cfg.Console == ConsoleSummary {
		e.logger.Info(turnConsoleLine(tr))
	}
	if e.isReady() {
		e.events.PublishTurn(tr)
	}
}

// save stores the analyses in one transaction when the store can (store.BatchSaver),
// else one by one, and returns nil when all were stored, else each analysis' error (nil
// for one stored). A batch that the store rejects (store.ErrRejected: it holds an
// analysis the store never takes) is saved again one analysis at a time, so that such an
// analysis does not hold the rest of its batch back for ever; a batch that fails for any
// other reason (an outage) is not, and every analysis gets its error.
func (e *agentEvalExporter) save(ctx context.Context, as []*evaluation.Analysis) []error {
	bs, ok := e.store.(store.BatchSaver)
	if ok {
		err := bs.SaveAnalyses(ctx, as)
		switch {
		case err == nil:
			return nil
		case len(as) == 1:
			return []error{fmt.Errorf("session %q: %w", as[0].SessionID, err)}
		case !errors.Is(err, store.ErrRejected):
			return sameError(len(as), err) // an outage: the batch is retried whole
		}
	}
	// One at a time: the batch holds an analysis the store refuses (or the store has no
	// batch save), and the others are stored without it.
	return oneByOne(len(as), func(i int) error {
		var err error
		if ok {
			err = bs.SaveAnalyses(ctx, as[i:i+1])
		} else {
			err = e.store.SaveAnalysis(ctx, as[i])
		}
		if err != nil {
			return fmt.Errorf("session %q: %w", as[i].SessionID, err)
		}
		return nil
	})
}

// oneByOne saves n items one at a time with save(i), after the store refused their batch
// (store.ErrRejected), so that a refused item does not take the others with it. Once an
// item fails for another reason (an outage has begun), the rest fail with that error
// without an attempt. It returns each item's error (nil: saved), or nil when all were
// saved.
func oneByOne(n int, save func(i int) error) []error {
	var errs []error
	var outage error
	for i := range n {
		err := outage
		if err == nil {
			err = save(i)
		}
		if err == nil {
			continue
		}
		if outage == nil && !errors.Is(err, store.ErrRejected) {
			outage = err
		}
		if errs == nil {
			errs = make([]error, n)
		}
		errs[i] = err
	}
	return errs
}

// sameError is n copies of err, the outcome of a batch that failed as a whole.
func sameError(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

func spanError(span ptrace.Span, err error) error {
	return fmt.Errorf("span %s (%q): %w", span.SpanID(), span.Name(), err)
}

// keptSpan is a span of the batch being exported, with its resource and scope.
type keptSpan struct {
	rs   ptrace.ResourceSpans
	ss   ptrace.ScopeSpans
	span ptrace.Span
}

// failed copies the kept spans, with their resources and scopes, into new traces: what
// a failed save returns for the retry. Copying them only on failure spares a copy of
// every session span on the usual path.
func failed(kept []keptSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, k := range kept {
		appendSpan(td, k.rs, k.ss, k.span)
	}
	return td
}

// appendSpan copies span, with its resource and scope, into dst.
func appendSpan(dst ptrace.Traces, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) {
	drs := dst.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(drs.Resource())
	drs.SetSchemaUrl(rs.SchemaUrl())
	dss := drs.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(dss.Scope())
	dss.SetSchemaUrl(ss.SchemaUrl())
	span.CopyTo(dss.Spans().AppendEmpty())
}

// retentionLoop applies the retention at start and then every retentionInterval until
// ctx is cancelled.
func (e *agentEvalExporter) retentionLoop(ctx context.Context) {
	defer e.wg.Done()
	ticker := time.NewTicker(e.retentionInterval)
	defer ticker.Stop()
	for {
		e.applyRetention(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// applyRetention deletes the sessions stored before now − store.retention (the
// collector's clock, not the span times: docs/decisions/ids-and-times.md).
func (e *agentEvalExporter) applyRetention(ctx context.Context) {
	cutoff := e.now().Add(-e.cfg.Store.Retention)
	n, err := e.store.DeleteStoredBefore(ctx, cutoff)
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		e.telemetry.ExporterAgentevalStoreErrors.Add(ctx, 1)
		e.logger.Warn("agenteval: retention failed; will retry", zap.Time("cutoff", cutoff), zap.Error(err))
		return
	}
	if n > 0 {
		e.telemetry.ExporterAgentevalRetentionDeleted.Add(ctx, n)
		e.logger.Debug("agenteval: retention deleted sessions", zap.Int64("sessions", n), zap.Time("cutoff", cutoff))
	}
}
