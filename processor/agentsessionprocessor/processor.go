// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/lograte"
	"github.com/agenteval/agenteval-collector/internal/pdatautil"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/tracker"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

// The worker closes a turn when its turn_settle expires, not at a coarser tick: every
// batch with records schedules a check at its arrival + turn_settle (the due time of
// any turn whose root it carried), rounded up to dueGrain so that a burst of batches
// costs one check per grain. A turn is evaluated within dueGrain of its turn_settle.
// The ticker, every turn_settle within [minTick, maxTick], serves the rest: turn_timeout,
// session_timeout, max_session_duration, the recovery's lease. A check scans the open
// traces and sessions (tens of microseconds for a thousand).
const (
	dueGrain = 10 * time.Millisecond
	minTick  = 20 * time.Millisecond
	maxTick  = time.Second
)

// agentSessionProcessor is the collector adapter over internal/session (reconstruction)
// and internal/evaluation (scores). The per-span path only extracts a compact record and
// updates the tracker; assembly, evaluation and emission run on the worker: a goroutine
// that closes what is due and assembles it, and one goroutine per shard that evaluates
// and emits its sessions' events in order, while the worker goes on closing turns.
type agentSessionProcessor struct {
	logger    *zap.Logger
	cfg       *Config
	next      consumer.Traces
	telemetry *metadata.TelemetryBuilder
	extractor *conventions.Extractor
	evaluator *evaluation.Evaluator
	emitter   *emitter
	refs      *refRunner         // nil without datasets
	judge     *sessionJudge      // nil without a judge
	emb       *sessionEmbeddings // nil without judge.embeddings.model

	mu      sync.Mutex // guards tracker, queued and due
	tracker *tracker.Tracker
	queued  []tracker.Closed // closed on the ingest path (limits), for the worker
	// due are the times (ascending, on a dueGrain grid) at which a turn may become due
	// to close: each batch's arrival + turn_settle.
	due []time.Time

	// limitWarn lets the warning that limits closed sessions through once a minute.
	limitWarn *lograte.Every

	// stepMu serializes steps: turns are closed, completed (Tracker.Finish) and handed
	// to the shards in one order. shardsRunning (guarded by stepMu) says the shards'
	// goroutines run (start to shutdown); otherwise handle evaluates inline.
	stepMu        sync.Mutex
	shardsRunning bool
	shardsDone    sync.WaitGroup

	// shards hold the open sessions' evaluation state; cont keeps what a continued
	// session needs (memory, or the result store's database).
	shards []*shard
	cont   store.ContinuationStore
	// keepCarries keeps every record's grounding facts and conversation tokens (tests
	// compare with it; by default a record given its follow-up drops them, §4.2).
	keepCarries bool
	// heldRecords is how many turn records of an open session a shard holds past their
	// save, besides those still to get a verdict (shard.release): defaultHeldRecords;
	// tests make it small.
	heldRecords int
	// waitingEnds holds the ids of the sessions whose end waits in a shard for the
	// continuation store (shard.waitingEnds): the recovery sweep, on the worker
	// goroutine, leaves them to that shard.
	waitingEnds sync.Map
	// claimedOpen holds, by session id, the holds of dead instances that the recovery
	// sweep claimed while the session was open here (store.OpenSession): the session's
	// end analyses it over its stored turns even when it got only late spans here, as
	// the sweep analyses a session it claims (TestClaimedWhileOpenThenLateSpansOnly).
	claimedOpen sync.Map
	// storeUp is when a write to the continuation store last went through (a shard's
	// save, the lease's renewal; Unix ns): an end that waited since before it for a load
	// that still fails is not waiting for the store to come back (shard.takeBack).
	storeUp atomic.Int64
	// recovery is set when cont survives a restart (store.Recovery): instance is this
	// processor's id in the store's leases, schedule when to renew and sweep
	// (recover.go). Both are used on the worker goroutine only.
	recovery store.Recovery
	instance string
	schedule *tracker.Recovery
	// id is the processor's component id; kept is the client of continuation.storage
	// (nil without it), open from start to shutdown (kept.go).
	id   component.ID
	kept storage.Client

	// statsMu guards lastStats, the tracker counters already exported.
	statsMu   sync.Mutex
	lastStats tracker.Stats

	now  func() time.Time
	tick time.Duration
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newAgentSessionProcessor(set processor.Settings, next consumer.Traces, cfg *Config) (processor.Traces, error) {
	p, err := newProcessorCore(set.TelemetrySettings, next, cfg)
	if err != nil {
		return nil, err
	}
	p.id = set.ID
	return processorhelper.NewTraces(context.Background(), set, cfg, next, p.processTraces,
		processorhelper.WithStart(p.start),
		processorhelper.WithShutdown(p.shutdown),
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}))
}

func newProcessorCore(set component.TelemetrySettings, next consumer.Traces, cfg *Config) (*agentSessionProcessor, error) {
	registry, err := buildRegistry(cfg)
	if err != nil {
		return nil, err
	}
	emb, err := newSessionEmbeddings(cfg.Judge)
	if err != nil {
		return nil, err
	}
	ev, err := evaluation.New(emb.scoring(cfg.Scoring))
	if err != nil {
		emb.shutdown()
		return nil, fmt.Errorf("scoring: %w", err)
	}
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	sj, err := newSessionJudge(cfg.Judge)
	if err != nil {
		emb.shutdown()
		return nil, err
	}
	refs, err := newRefRunner(cfg.References, sj, set.Logger)
	if err != nil {
		_ = sj.shutdown(context.Background())
		emb.shutdown()
		return nil, err
	}
	tick := max(minTick, min(maxTick, cfg.TurnSettle))
	extractor := conventions.NewExtractor(conventions.Config{
		SessionKeys:  cfg.SessionKeys,
		EndAttribute: cfg.EndAttribute,
		MaxTextBytes: cfg.MaxTextBytes,
	})
	p := &agentSessionProcessor{
		logger:    set.Logger,
		limitWarn: lograte.New(time.Minute),
		cfg:       cfg,
		next:      next,
		telemetry: tb,
		extractor: extractor,
		evaluator: ev,
		emitter:   newEmitter(cfg.Emit, string(cfg.SigningKey)),
		refs:      refs,
		judge:     sj,
		emb:       emb,
		tracker: tracker.New(tracker.Config{
			TurnSettle:         cfg.TurnSettle,
			TurnTimeout:        cfg.TurnTimeout,
			SessionTimeout:     cfg.SessionTimeout,
			MaxSessionDuration: cfg.MaxSessionDuration,
			MaxSessions:        cfg.MaxSessions,
			MaxSpansPerSession: cfg.MaxSpansPerSession,
			Registry:           registry,
			// The shards keep every turn's record; the tracker keeps only the window,
			// unless dataset cases are evaluated on the whole session at its end.
			RetainTurns: retainTurns(cfg),
			Extractor:   extractor,
		}),
		now:         time.Now,
		tick:        tick,
		wake:        make(chan struct{}, 1),
		cont:        store.NewMemoryContinuation(cfg.Continuation.MaxRecords),
		heldRecords: defaultHeldRecords,
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// The records waiting for a retried save are bounded as the memory store's records.
	maxRecords := cfg.Continuation.MaxRecords
	if maxRecords <= 0 {
		maxRecords = defaultContinuationMaxRecords
	}
	maxUnsaved := max(1, maxRecords/workers)
	for range workers {
		sh := &shard{sessions: map[string]*sessionState{}, maxUnsaved: maxUnsaved}
		sh.analysedTraces, _ = simplelru.NewLRU[string, analysedTrace](sh.maxLocal(), nil) // size >= 4: no error
		sh.endedTraces, _ = simplelru.NewLRU(maxUnsaved, func(_ string, e endedTrace) { sh.endedRecords -= e.st.Len() })
		p.shards = append(p.shards, sh)
	}
	return p, nil
}

// processTraces is the per-batch path: it reads the batch (never modifies it), records
// what the model needs and returns the batch unchanged so processorhelper passes it on
// at once. It never fails: evaluation problems must not touch the trace pipeline.
func (p *agentSessionProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	buf := recBufPool.Get().(*[]session.SpanRecord)
	recs := p.extract(td, (*buf)[:0])
	if len(recs) > 0 {
		p.telemetry.ProcessorAgentsessionSpansObserved.Add(ctx, int64(len(recs)))
		p.mu.Lock()
		// A batch arrives when the tracker takes it: read under the lock, the times the
		// tracker is given never go back between two batches that race for it, so its
		// timer lists take each batch's traces and sessions at their end, without a walk
		// (docs/decisions/performance.md §8.39).
		now := p.now()
		closed := p.tracker.ObserveClosing(recs, now)
		if len(closed) > 0 {
			// Assembled and evaluated by the worker, never on the ingest path.
			p.queued = append(p.queued, closed...)
		}
		first := p.scheduleDue(now)
		p.mu.Unlock()
		if len(closed) > 0 || first {
			select {
			case p.wake <- struct{}{}:
			default:
			}
		}
	}
	// The tracker keeps its own compact copy: the buffer goes back to the pool, cleared
	// so that it pins nothing of this batch. Only its records are: a pooled buffer is
	// zero beyond them (cleared when it was put back, or new).
	if cap(recs) <= maxPooledRecs {
		clear(recs)
		*buf = recs[:0]
		recBufPool.Put(buf)
	}
	return td, nil
}

// scheduleDue records that a turn may be due to close at now + turn_settle (rounded up
// to dueGrain) and reports whether no check was scheduled before (the worker is woken
// to set its timer). Called with p.mu held.
func (p *agentSessionProcessor) scheduleDue(now time.Time) bool {
	at := now.Add(p.cfg.TurnSettle)
	if r := at.Truncate(dueGrain); r.Before(at) {
		at = r.Add(dueGrain)
	}
	n := len(p.due)
	if n > 0 && !p.due[n-1].Before(at) {
		return false // a check at that time or later is scheduled (a clock that went back)
	}
	p.due = append(p.due, at)
	return n == 0
}

// nextDue drops the scheduled checks that a step at now covered and returns how long
// until the next one, or false when none is scheduled.
func (p *agentSessionProcessor) nextDue(now time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := 0
	for i < len(p.due) && !p.due[i].After(now) {
		i++
	}
	p.due = append(p.due[:0], p.due[i:]...)
	if len(p.due) == 0 {
		return 0, false
	}
	return p.due[0].Sub(now), true
}

// maxPooledRecs bounds the record buffers kept for reuse (784 bytes a record): a rare
// huge batch does not keep its buffer alive.
const maxPooledRecs = 4096

// recBufPool holds record buffers for processTraces, which may run concurrently.
var recBufPool = sync.Pool{New: func() any { return new([]session.SpanRecord) }}

// extract turns every span of the batch into a compact record, appended to recs. A panic
// in a convention adapter (a bug) costs the batch its evaluation, never its delivery.
func (p *agentSessionProcessor) extract(td ptrace.Traces, recs []session.SpanRecord) (out []session.SpanRecord) {
	defer func() {
		if r := recover(); r != nil {
			p.telemetry.ProcessorAgentsessionEvaluationErrors.Add(context.Background(), 1)
			p.logger.Error("span extraction failed; the batch was passed on but not evaluated", zap.Any("panic", r))
			clear(recs) // what was written: the pooled buffer stays zero past its length
			out = recs[:0]
		}
	}()
	n := td.SpanCount()
	if cap(recs) < n {
		recs = make([]session.SpanRecord, 0, n)
	}
	// The records' ids share one allocation; the tracker copies the trace ids it keeps.
	var ids conventions.IDBuffer
	ids.Grow(n)
	for ref := range pdatautil.Spans(td) {
		sp := ref.Span
		if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
			// Invalid OTLP: nothing could be parented to it. Passed on, not modelled.
			p.logger.Debug("span without trace or span id is passed on but not evaluated", zap.String("name", sp.Name()))
			continue
		}
		recs = recs[:len(recs)+1]
		// The message lists are decoded when the turn is assembled (tracker.Config.Extractor).
		p.extractor.ExtractDeferred(&ids, &recs[len(recs)-1], ref.Resource, ref.Scope, sp)
		if p.refs != nil {
			p.refs.observe(ref.Resource, sp)
		}
	}
	return recs
}

func (p *agentSessionProcessor) start(ctx context.Context, host component.Host) error {
	h, err := handoff.FromHost(host, p.cfg.Handoff)
	if err != nil {
		return fmt.Errorf("agentsession: %w", err)
	}
	p.emitter.handoff = h // before the shards start
	if c := p.cfg.Continuation; c.Driver != "" {
		cs, err := store.OpenContinuation(ctx, c.Driver, string(c.DSN))
		if err != nil {
			return fmt.Errorf("agentsession: opening the continuation store (continuation.dsn): %w", err)
		}
		p.cont = cs // closed by shutdown, which follows a failed start too
		if err := p.startKept(ctx, host); err != nil {
			return fmt.Errorf("agentsession: %w", err)
		}
		p.startRecovery(ctx)
	}
	p.stop = make(chan struct{})
	p.done = make(chan struct{})
	p.startShards()
	go p.run()
	return nil
}

// startShards starts one goroutine per shard: each handles its shard's event batches
// in the order they were queued.
func (p *agentSessionProcessor) startShards() {
	p.stepMu.Lock()
	defer p.stepMu.Unlock()
	ctx := context.Background()
	for _, sh := range p.shards {
		q := make(chan shardWork, shardQueue)
		sh.queue = q
		p.shardsDone.Add(1)
		go func() {
			defer p.shardsDone.Done()
			for w := range q {
				sh.handle(ctx, p, w.events)
				w.done.Done()
			}
		}()
	}
	p.shardsRunning = true
}

// stopShards lets the shards' goroutines finish what is queued and waits for them; after
// it, handle evaluates inline.
func (p *agentSessionProcessor) stopShards() {
	p.stepMu.Lock()
	if p.shardsRunning {
		p.shardsRunning = false
		for _, sh := range p.shards {
			close(sh.queue)
			sh.queue = nil
		}
	}
	p.stepMu.Unlock()
	p.shardsDone.Wait()
}

// shutdown stops the worker, then closes every open turn and session as partial and
// emits their evaluations, so nothing observed goes unevaluated.
func (p *agentSessionProcessor) shutdown(ctx context.Context) error {
	// First, so that a worker waiting for the embeddings endpoint returns at once.
	p.emb.shutdown()
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
		p.stopShards()
	}
	p.mu.Lock()
	closed := append(p.queued, p.tracker.CloseAllClosing(session.EndReasonShutdown)...)
	p.queued = nil
	p.mu.Unlock()
	p.handle(ctx, p.finish(closed))
	for _, sh := range p.shards {
		if len(sh.waitingEnds) > 0 {
			sh.handle(ctx, p, nil) // once more: the store may be back
		}
		for _, ev := range sh.waitingEnds {
			// Its hold stays: the next collector to start analyses it from the store
			// (docs/decisions/result-durability.md §6). Records of it that the bound
			// dropped unsaved (unstored) are held only here: they go with the records
			// waiting to be saved (saveUnsaved, then continuation.storage), or the
			// recovered analysis would miss their turns.
			if st := sh.sessions[ev.Session.ID]; st != nil && st.unstored {
				sh.keepHeld(ev.Session.ID, st)
			}
			p.logger.Warn("a session's end waits for its earlier turns from the continuation store at shutdown; the next collector to start recovers it",
				zap.String("session_id", ev.Session.ID))
		}
	}
	p.keep(ctx, p.saveUnsaved(ctx))
	p.leave(ctx)
	err := p.judge.shutdown(ctx)
	p.judge.recordJudge(ctx, p.telemetry)
	p.emb.record(ctx, p.telemetry)
	if p.cont != nil {
		err = errors.Join(err, p.cont.Close())
	}
	p.telemetry.Shutdown()
	return err
}

// emit passes b's spans to the next consumer.
func (p *agentSessionProcessor) emit(ctx context.Context, b *evalBatch) {
	p.reportSkipped(ctx, b)
	td := b.traces()
	n := td.SpanCount()
	if n == 0 {
		return
	}
	if err := p.next.ConsumeTraces(ctx, td); err != nil {
		p.telemetry.ProcessorAgentsessionEmitFailures.Add(ctx, 1)
		p.logger.Warn("the next consumer refused evaluation spans", zap.Int("spans", n), zap.Error(err))
		return
	}
	p.telemetry.ProcessorAgentsessionEvaluationsEmitted.Add(ctx, int64(n))
}

// reportSkipped counts and logs the evaluation spans b left out because an id did not
// decode (the evaluated spans themselves were passed on).
func (p *agentSessionProcessor) reportSkipped(ctx context.Context, b *evalBatch) {
	if b.skipped == 0 {
		return
	}
	p.telemetry.ProcessorAgentsessionEvaluationSpansSkipped.Add(ctx, int64(b.skipped))
	p.logger.Warn("evaluation spans left out: an evaluated id is not a valid hex id",
		zap.Int("skipped", b.skipped), zap.Error(b.skipErr))
}

// countAnomalies counts what was odd in closed turn t's spans (session.Turn.Anomalies,
// which its result lists too) and logs it at debug level: a malformed attribute or a
// broken parent link is otherwise seen only in the result.
func (p *agentSessionProcessor) countAnomalies(ctx context.Context, sessionID string, t *session.Turn) {
	if len(t.Anomalies) == 0 {
		return
	}
	for _, a := range t.Anomalies {
		p.telemetry.ProcessorAgentsessionTurnAnomalies.Add(ctx, 1, metric.WithAttributes(attribute.String("anomaly", a)))
	}
	p.logger.Debug("agentsession: a closed turn's spans had anomalies; the turn is evaluated from what could be read",
		zap.String("session_id", sessionID), zap.String("trace_id", t.TraceID), zap.Strings("anomalies", t.Anomalies))
}

// recordTrackerStats exports the tracker's state and counters.
func (p *agentSessionProcessor) recordTrackerStats(ctx context.Context, st tracker.Stats) {
	p.telemetry.ProcessorAgentsessionOpenSessions.Record(ctx, int64(st.OpenSessions))
	p.telemetry.ProcessorAgentsessionRetainedSpans.Record(ctx, int64(st.RetainedSpans))
	p.statsMu.Lock()
	defer p.statsMu.Unlock()
	add := func(c interface {
		Add(context.Context, int64, ...metric.AddOption)
	}, now uint64, last *uint64,
	) {
		if now > *last {
			c.Add(ctx, int64(now-*last))
			*last = now
		}
	}
	add(p.telemetry.ProcessorAgentsessionLateSpans, st.LateSpans, &p.lastStats.LateSpans)
	add(p.telemetry.ProcessorAgentsessionSpansDropped, st.SpansDropped, &p.lastStats.SpansDropped)
	add(p.telemetry.ProcessorAgentsessionSpansDiscarded, st.SpansDiscarded, &p.lastStats.SpansDiscarded)
	add(p.telemetry.ProcessorAgentsessionTurnsClosed, st.TurnsClosed, &p.lastStats.TurnsClosed)
}

// retainTurns is the tracker's RetainTurns: the two turns of a turn event's window, or
// every turn (0) when reference datasets are configured, whose evaluators read the whole
// session (its tool calls in order, its interactions) when it ends.
func retainTurns(cfg *Config) int {
	if len(cfg.References.Datasets) > 0 {
		return 0
	}
	return 2
}

// warnLimit logs, at most once a minute, that a limit (max_sessions,
// max_spans_per_session, max_session_duration) closed session s early, naming it, the
// limit and how many sessions limits closed since the last warning: their open turns are
// evaluated as partial from the spans seen, and a max_spans_per_session session's later
// spans are passed on without evaluation. The metric sessions_evicted counts them all.
func (p *agentSessionProcessor) warnLimit(s *session.AgentSession) {
	ok, held := p.limitWarn.Allow(p.now())
	if !ok {
		return
	}
	var limit int
	switch s.EndReason {
	case session.EndReasonMaxSessions:
		limit = p.cfg.MaxSessions
	case session.EndReasonMaxSpans:
		limit = p.cfg.MaxSpansPerSession
	}
	fields := []zap.Field{zap.String("session_id", s.ID), zap.String("reason", string(s.EndReason)),
		zap.Int("sessions_closed_by_limits", held+1)}
	if limit > 0 {
		fields = append(fields, zap.Int("limit", limit))
	} else {
		fields = append(fields, zap.Duration("max_session_duration", p.cfg.MaxSessionDuration))
	}
	p.logger.Warn("agentsession: a limit closed sessions early; their open turns are evaluated as partial from the spans seen (docs/decisions/sessions.md §2.6)", fields...)
}

func isLimitReason(reason session.EndReason) bool {
	return session.CollectorCut(reason) && reason != session.EndReasonShutdown
}
