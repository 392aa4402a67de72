// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
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
	"github.com/agenteval/agenteval-collector/internal/reuse"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/tracker"
	"github.com/agenteval/agenteval-collector/pkg/reference"
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

// unsavedRetry is how long a shard whose continuation save failed waits, when it gets no
// events, before the worker has it save the records again (and emit their waiting
// verdicts, docs/decisions/sessions.md §4.5).
const unsavedRetry = 5 * time.Second

// shardQueue is how many event batches a shard may have waiting while the worker goes
// on closing turns; when one shard is that far behind, the worker waits for it (the
// ingest path never does).
const shardQueue = 64

// A shard emits what it has evaluated once emitEvery has passed and at least
// minChunkEvents events are done: a batch of events that takes longer (a burst of
// closing turns and ending sessions, or a shard short of CPU) goes out in chunks, so the
// first turns of the burst do not wait for the whole batch's evaluation. The minimum
// bounds the extra emissions and continuation-store writes to one per minChunkEvents
// events when evaluation is slow (an overloaded collector would otherwise pay one
// transaction per turn). At the steady rate a shard's batch takes a few milliseconds and
// goes out whole.
const (
	emitEvery      = 10 * time.Millisecond
	minChunkEvents = 8
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
		now:  time.Now,
		tick: tick,
		wake: make(chan struct{}, 1),
		cont: store.NewMemoryContinuation(cfg.Continuation.MaxRecords),
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
		sh.endedTraces, _ = simplelru.NewLRU(maxUnsaved, func(_ string, e endedTrace) { sh.endedRecords -= len(e.st.records) })
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

func (p *agentSessionProcessor) run() {
	defer close(p.done)
	t := time.NewTicker(p.tick)
	defer t.Stop()
	due := time.NewTimer(time.Hour)
	due.Stop()
	defer due.Stop()
	ctx := context.Background()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		case <-p.wake:
		case <-due.C:
		}
		now := p.advance(ctx, false)
		if d, ok := p.nextDue(now); ok {
			due.Reset(d)
		}
	}
}

// step closes what is due at p.now(), then evaluates and emits it, and returns when that
// is emitted. Tests call it directly with a controlled clock instead of running the
// worker.
func (p *agentSessionProcessor) step(ctx context.Context) {
	p.advance(ctx, true)
}

// advance closes what is due at p.now() and assembles it, then hands the events to the
// shards; with wait, it returns when they are handled, else at once (the worker: the
// next turns due are closed while these are evaluated). It returns the time it closed
// at.
func (p *agentSessionProcessor) advance(ctx context.Context, wait bool) time.Time {
	p.stepMu.Lock()
	defer p.stepMu.Unlock()
	now := p.now()
	p.mu.Lock()
	closed := append(p.queued, p.tracker.AdvanceClosing(now)...)
	p.queued = nil
	p.mu.Unlock()
	events := p.finish(closed)
	p.mu.Lock()
	st := p.tracker.Stats()
	p.mu.Unlock()
	p.recordTrackerStats(ctx, st)
	handled := p.dispatch(ctx, events)
	if wait {
		handled.Wait()
	}
	p.recover(ctx)
	p.judge.recordJudge(ctx, p.telemetry)
	p.emb.record(ctx, p.telemetry)
	return now
}

// finish assembles the closed turns outside the ingest lock, on up to len(p.shards)
// goroutines, then completes them under the lock (Tracker.Finish, whose cost per turn
// does not depend on the session's length). A panic in assembly (a bug) costs the turn
// its evaluation, never the trace pipeline.
func (p *agentSessionProcessor) finish(closed []tracker.Closed) []tracker.Event {
	if len(closed) == 0 {
		return nil
	}
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1)) - 1; i < len(closed); i = int(next.Add(1)) - 1 {
			p.assemble(&closed[i])
		}
	}
	var wg sync.WaitGroup
	for range min(len(p.shards), len(closed)) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work() // this goroutine takes its share: one turn needs no handoff
	wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tracker.Finish(closed)
}

func (p *agentSessionProcessor) assemble(c *tracker.Closed) {
	defer func() {
		if r := recover(); r != nil {
			p.telemetry.ProcessorAgentsessionEvaluationErrors.Add(context.Background(), 1)
			p.logger.Error("turn assembly failed; the turn is assembled from no spans", zap.Any("panic", r))
			c.Records = nil
			c.Assemble()
		}
	}()
	c.Assemble()
}

// handle evaluates closed turns and ended sessions on the shards and emits the
// evaluation spans; it returns when every event is handled. The ingest path
// (processTraces) never waits for it.
func (p *agentSessionProcessor) handle(ctx context.Context, events []tracker.Event) {
	p.dispatch(ctx, events).Wait()
}

// dispatch spreads events over the shards by session id, so one session's events are
// handled in order by one goroutine, and sessions in parallel. While the shards'
// goroutines run, it queues the events to them (waiting only when a queue is full) and
// returns at once; otherwise it handles them on up to len(p.shards) goroutines. The
// result says when every event is handled. Called with p.stepMu held, or after
// stopShards.
func (p *agentSessionProcessor) dispatch(ctx context.Context, events []tracker.Event) *sync.WaitGroup {
	var wg sync.WaitGroup
	// A shard whose records wait to be saved again gets an empty (not nil) batch when
	// their retry is due, with or without events.
	var groups [][]tracker.Event
	now := p.now().UnixNano()
	for i, sh := range p.shards {
		if r := sh.retryAt.Load(); r != 0 && now >= r {
			if groups == nil {
				groups = make([][]tracker.Event, len(p.shards))
			}
			groups[i] = []tracker.Event{}
		}
	}
	if len(events) == 0 && groups == nil {
		return &wg
	}
	if groups == nil {
		groups = make([][]tracker.Event, len(p.shards))
	}
	for _, ev := range events {
		if ev.Kind == tracker.EventSessionEnded && ev.Session.Partial && isLimitReason(ev.Session.EndReason) {
			p.telemetry.ProcessorAgentsessionSessionsEvicted.Add(ctx, 1)
			p.warnLimit(ev.Session)
		}
		i := shardOf(ev.Session.ID, len(p.shards))
		groups[i] = append(groups[i], ev)
	}
	if p.shardsRunning {
		for i, g := range groups {
			if g != nil {
				wg.Add(1)
				p.shards[i].queue <- shardWork{events: g, done: &wg}
			}
		}
		return &wg
	}
	last := -1 // handled on this goroutine: one busy shard needs no handoff
	for i, g := range groups {
		if g == nil {
			continue
		}
		if j := last; j >= 0 {
			wg.Add(1)
			gj := groups[j] // not groups: a captured variable that is assigned goes to the heap
			go func() {
				defer wg.Done()
				p.shards[j].handle(ctx, p, gj)
			}()
		}
		last = i
	}
	p.shards[last].handle(ctx, p, groups[last])
	wg.Wait()
	return &wg
}

func shardOf(id string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % uint32(n))
}

// shard owns the evaluation state of the sessions that hash to it; only one goroutine
// uses it at a time: its own while the shards run, else the one handling a step.
type shard struct {
	sessions map[string]*sessionState
	// queue holds the event batches waiting for the shard's goroutine (nil when the
	// shards do not run).
	queue chan shardWork
	// unsaved are turn records whose save to the continuation store failed (at most one
	// per turn, the one whose verdict is furthest on; at most maxUnsaved):
	// they are saved again, first, with the shard's next save, and a session loaded
	// meanwhile takes them over the store's (docs/decisions/sessions.md §4.5).
	unsaved []store.TurnState
	// waiting is, per record of unsaved, whether its final verdict waits to be emitted:
	// a first final verdict whose save failed is emitted once a save tells whether it
	// is the turn's first (another collector may give the turn its first final verdict
	// meanwhile), at shutdown, or when its record is dropped.
	waiting    []bool
	maxUnsaved int
	// local are the turns numbered by this shard because the continuation store could
	// not allocate their index (ReserveTurns failed), in the order they were numbered.
	// Their index is allocated in the store before their records are saved
	// (reserveLocal): a continued session whose stored turns could not be loaded
	// numbers its turns from 0, and such a record saved as it is would put a second
	// trace on a stored turn's index. A turn whose record was dropped keeps its entry
	// (keepUnsaved, at most maxLocal()): its index is reserved all the same.
	local []store.TurnKey
	// revisions are the last analysis revisions emitted for sessions of unsaved and local
	// whose records could not be saved: the continuation store may not know them, and a
	// session continued before it is back gives its next analysis the revision after
	// this one (state), or the result store would take that analysis for an older one
	// and skip it (docs/decisions/sessions.md §4.8). They are saved to the store with
	// the records (saveKeptRevisions).
	revisions map[string]int
	// claims are the turns whose final record the bound dropped while it waited to be
	// saved (keepUnsaved), their first final verdict emitted (counted) then or at the
	// shutdown before continuation.storage gave the record back: the continuation store marks
	// their provisional rows final (ClaimFinal) before the shard's next save, so that a
	// continued session does not give them a first final verdict again
	// (docs/decisions/sessions.md §4.9), and keeps the detection type counted, so that a
	// verdict given again later names it as the one it replaces. At most maxLocal(), the
	// oldest dropped.
	claims []store.Claim
	// analysedTraces are the trace ids of sessions keyed by their trace (not kept in the
	// continuation store) whose analysis the shard emitted, the most recent maxLocal()
	// of them: a span of such a trace that comes after the tracker forgot it is late,
	// as for a kept session's final turn (docs/decisions/sessions.md §2.4), unless the
	// trace may go on (its root never arrived) and the span's turn starts after the
	// analysed turns ended: that is the trace's next request (§2.4.1).
	analysedTraces *simplelru.LRU[string, analysedTrace]
	// endedTraces are, by trace id (their session's id), the states of the sessions of
	// analysedTraces that may go on, with what analysedTraces holds of them (which may
	// forget them first), so that the trace's next request continues them (turn indexes,
	// the last turn's verdict with follow-up, the analysis over every turn) as the
	// continuation store does for a session key. They hold at most maxUnsaved records
	// (endedRecords), the least recently ended session dropped first: a request of a
	// dropped one is a new part of the session, which the result store places after the
	// stored turns (§4.6).
	endedTraces  *simplelru.LRU[string, endedTrace]
	endedRecords int
	// reserved are the turn indexes allocated for the batch being handled (reserveBatch),
	// emptied after it.
	reserved map[store.TurnKey]int
	// writes are the saves of the batch being handled (handle), kept empty between batches.
	writes shardWrites
	// retryAt is when dispatch hands the shard an empty batch of events so that it saves
	// unsaved again (p.now() in Unix nanoseconds; 0 when no record waits). Written by
	// the shard's goroutine, read by dispatch.
	retryAt atomic.Int64
}

// pending reports whether the shard holds something the continuation store has not
// taken yet: records to save again, turns numbered here, revisions or claims.
func (sh *shard) pending() bool {
	return len(sh.unsaved)+len(sh.local)+len(sh.revisions)+len(sh.claims) > 0
}

// maxLocal bounds shard.local: four entries a record waiting to be saved (maxUnsaved),
// as the memory store keeps four sessions' indexes a record (ContinuationConfig.MaxRecords).
func (sh *shard) maxLocal() int { return 4 * sh.maxUnsaved }

// analysedTrace is what a shard keeps of an analysed session keyed by its trace
// (shard.analysedTraces).
type analysedTrace struct {
	// end is when the latest of its turns ended (zero: unknown).
	end time.Time
	// goesOn: the session ended while its trace may go on (its root never arrived:
	// session_timeout, a limit), not with the trace (single_trace) or an end signal.
	goesOn bool
}

// endedTrace is a session of shard.endedTraces: its state and its analysed trace.
type endedTrace struct {
	st *sessionState
	at analysedTrace
}

// late reports whether closed turn t of the analysed trace is late: the trace cannot go
// on, or t started before its analysed turns ended (a fragment of one of them).
func (at analysedTrace) late(t *session.Turn) bool {
	return !at.goesOn || at.end.IsZero() || !t.StartedAt.After(at.end)
}

// shardWork is a batch of one shard's events; done is signalled when they are handled.
type shardWork struct {
	events []tracker.Event
	done   *sync.WaitGroup
}

// sessionState is what the processor keeps of an open session: its turn records in
// index order (the last one provisional until the next turn's user message or the end
// of the session) and its last analysis revision. A session continued after it went
// idle starts from the continuation store's state.
type sessionState struct {
	records []evaluation.TurnRecord
	// ids holds the turn ids of records once the session holds manyRecords of them
	// (put), so that a closed turn's put does not compare every record's; nil before,
	// and after merge added records, until the next put makes it again.
	ids map[turnID]struct{}
	// unordered: some record's turn started before the turn of a record with a lower
	// index (it closed later: on another collector, or after turn_timeout), so the
	// conversation's order is not the index order (conversationOrder). lastStart is the
	// start of the last record's turn in index order (startsWith). latest and latestIndex
	// are the start and index of the record last in the conversation
	// (evaluation.CompareConversation): a new last turn that started after it follows it,
	// even after a late turn made the session unordered (prevOf). All are kept by put and
	// sort.
	unordered   bool
	lastStart   time.Time
	latest      time.Time
	latestIndex int
	revision    int
	// continuable is false for a session keyed by its trace id (its trace's turns, open
	// only while the tracker holds it, never continued): it is not kept in the
	// continuation store.
	continuable bool
	// held: this instance recorded that it holds the session open (store.Recovery.Hold).
	held bool
	// late and evaluated say whether, since the session was loaded here, a closed turn
	// was only late spans of a turn already analysed, and whether one was evaluated: a
	// session that got nothing but late spans ends without a new analysis.
	late, evaluated bool
}

// shardWrites is what a shard's batch of events writes to the continuation store: the
// sessions it starts to hold (before their turn records), the turn records, and the
// revisions of the analyses emitted (after the emission: a crash before it leaves the
// session held, so that it is recovered).
type shardWrites struct {
	holds []store.OpenSession
	saves []store.TurnState
	// spans are, per save, the index in the batch of the turn span that emits its final
	// verdict, or -1: that span is encoded after the save, marked by what the save
	// reports (markRevised: Revised when another save gave the turn's first final
	// verdict, and which verdict it replaces; evalBatch.turnSpan).
	spans []int
	ended []endedSession
}

// endedSession is a session whose analysis a chunk emitted (saveRevisions).
type endedSession struct {
	id       string
	revision int
	// recorded: the continuation store allocated revision (NextRevision), and so
	// records it already as the session's last.
	recorded bool
}

// handle evaluates a shard's events in order and emits their spans in chunks of about
// emitEvery of evaluation (emitChunk, at least minChunkEvents events), saving the turn records and revisions of each
// chunk to the continuation store.
func (sh *shard) handle(ctx context.Context, p *agentSessionProcessor, events []tracker.Event) {
	// A turn event saves two records (the turn and its predecessor's final verdict): the
	// records are large, so the slices are sized once and reused by every chunk, and by
	// the shard's next batch.
	w := &sh.writes
	if n := 2 * len(events); cap(w.saves) < n {
		w.saves, w.spans = make([]store.TurnState, 0, n), make([]int, 0, n)
	}
	defer w.release()
	if len(events) == 0 { // no events: records wait to be saved again (dispatch)
		sh.emitChunk(ctx, p, nil, w)
	}
	if p.cfg.Continuation.Driver != "" {
		sh.reserveBatch(ctx, p, events)
		defer clear(sh.reserved)
	}
	for len(events) > 0 {
		events = sh.emitChunk(ctx, p, events, w)
	}
}

// maxKeptWrites bounds the saves a shard keeps room for between batches: a burst's larger
// arrays are left to the collector.
const maxKeptWrites = 1024

// release empties w once its batch is handled. The records it held are cleared: the
// arrays are kept for the shard's next batch and must not hold a session's results alive.
func (w *shardWrites) release() {
	w.saves, w.spans = reuse.Slice(w.saves, maxKeptWrites), reuse.Slice(w.spans, maxKeptWrites)
	w.holds, w.ended = reuse.Slice(w.holds, maxKeptWrites), reuse.Slice(w.ended, maxKeptWrites)
}

// emitChunk evaluates events in order until emitEvery has passed since it began and
// minChunkEvents are done, writes their records to the continuation store, emits their spans
// as one batch, then records the revisions of the analyses emitted. It returns the
// events not handled yet.
func (sh *shard) emitChunk(ctx context.Context, p *agentSessionProcessor, events []tracker.Event, w *shardWrites) []tracker.Event {
	start := p.now()
	b := p.emitter.newBatch(start)
	defer func() { // after the emission below
		p.saveRevisions(ctx, sh, w.ended)
		w.ended = w.ended[:0]
	}()
	i := 0
	for i < len(events) {
		ev := &events[i]
		i++
		if err := sh.evaluate(ctx, p, ev, b, w); err != nil {
			p.telemetry.ProcessorAgentsessionEvaluationErrors.Add(ctx, 1)
			p.logger.Error("evaluation failed; no result emitted for this entity",
				zap.String("session_id", ev.Session.ID), zap.Error(err))
		}
		if i >= minChunkEvents && p.now().Sub(start) >= emitEvery {
			break
		}
	}
	rest := events[i:]
	sh.write(ctx, p, w, b)
	p.emit(ctx, b)
	return rest
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

// write saves w's holds, then its turn records, to the continuation store, and empties
// both lists (the ended sessions are saved after the emission). The store arbitrates
// which collector gives a turn's first final verdict (§4.5): the final verdicts in b
// waiting for their save (w.spans) are encoded now, as Revised when their save was not
// the first (markRevised), so the turn is counted once and each change of its verdict
// once. When the save fails, those verdicts are
// withdrawn from b and the records are kept to be saved again, first, with the next save
// (sh.unsaved), which emits the verdicts, Revised or not: once stored final, a turn is
// never given another first final verdict from a provisional row, and a turn made final
// by another collector meanwhile is counted there only.
func (sh *shard) write(ctx context.Context, p *agentSessionProcessor, w *shardWrites, b *evalBatch) {
	p.hold(ctx, w.holds)
	if len(w.saves) > 0 || sh.pending() {
		err := sh.reserveLocal(ctx, p, w)
		if err == nil {
			err = sh.claim(ctx, p)
		}
		retried, saves := len(sh.unsaved), w.saves
		if retried > 0 {
			saves = append(sh.unsaved[:retried:retried], w.saves...)
		}
		var saved []store.SavedTurn
		if err == nil {
			saved, err = p.cont.SaveTurns(ctx, saves)
		}
		if err != nil {
			p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
			p.logger.Warn("saving turn records to the continuation store failed; they are saved again with the next batch",
				zap.Int("records", len(saves)), zap.Error(err))
			waiting := append(sh.waiting[:retried:retried], make([]bool, len(w.saves))...)
			for i, span := range w.spans {
				if span < 0 {
					continue
				}
				if tr := &w.saves[i].Record.Result; tr.Revised && !turnWaits(saves[:retried+i], waiting, w.saves[i].Key()) {
					// It revises a verdict emitted, so counted, already: emitted now,
					// with the evaluator's marks (as it would be after a save).
					b.encodeTurnSpan(span, tr)
					continue
				}
				// The turn's first counted verdict, or one that replaces a verdict
				// that waits too (never emitted): it waits, and the save that stores it
				// tells whether it is the first (emitWaiting).
				b.withdraw(span)
				waiting[retried+i] = true
			}
			for _, e := range w.ended {
				if e.revision > 0 {
					sh.keepRevision(p, e.id, e.revision)
				}
			}
			sh.keepUnsaved(p, b, saves, waiting)
		} else {
			emitWaiting(b, sh.unsaved, sh.waiting, saved[:retried])
			sh.clearUnsaved()
			sh.saveKeptRevisions(ctx, p)
			for i, span := range w.spans {
				if span >= 0 {
					tr := w.saves[i].Record.Result // a copy: the stored record keeps its marks
					markRevised(&tr, saved[retried+i], true)
					b.encodeTurnSpan(span, &tr)
				}
			}
		}
	}
	w.holds, w.saves, w.spans = w.holds[:0], w.saves[:0], w.spans[:0]
}

// reserveLocal allocates in the continuation store, in the order they were numbered, the
// index of each turn the shard numbered itself (sh.local), and moves the turn's records
// to it: in the session's open state, in sh.unsaved and in w's saves (w may be nil).
// The indexes are allocated in one transaction: on error none is, and the records of a
// turn not reserved must not be saved.
func (sh *shard) reserveLocal(ctx context.Context, p *agentSessionProcessor, w *shardWrites) error {
	if len(sh.local) == 0 {
		return nil
	}
	idx, err := p.cont.ReserveTurns(ctx, sh.local)
	if err != nil {
		return err // counted and logged by the caller
	}
	for i, lt := range sh.local {
		n := idx[i]
		moved := false
		move := func(ts []store.TurnState) {
			for i := range ts {
				if ts[i].Key() == lt {
					ts[i].Record.SetTurnIndex(n)
					moved = true
				}
			}
		}
		move(sh.unsaved)
		if w != nil {
			move(w.saves)
		}
		if st := sh.sessions[lt.SessionID]; st != nil {
			if i := st.find(idOfKey(lt)); i >= 0 {
				st.records[i].SetTurnIndex(n)
				if !moved {
					// Held only by its session (the bound on records waiting dropped it):
					// saved again with the others, now that it has its index.
					ts := store.TurnState{SessionID: lt.SessionID, Record: st.records[i]}
					if w != nil {
						w.saves, w.spans = append(w.saves, ts), append(w.spans, -1)
					} else {
						sh.unsaved, sh.waiting = append(sh.unsaved, ts), append(sh.waiting, false)
					}
				}
				st.sort()
			}
		}
	}
	sh.local = nil
	return nil
}

// turnWaits reports whether a record of turn k in recs waits for its final verdict to be
// emitted (waiting, per record of recs).
func turnWaits(recs []store.TurnState, waiting []bool, k store.TurnKey) bool {
	for j := range recs {
		if waiting[j] && recs[j].Key() == k {
			return true
		}
	}
	return false
}

// emitWaiting adds to b the final verdicts of recs that wait to be emitted (waiting,
// per record), marked by saved (SaveTurns' result for recs, markRevised: the store's
// answer stands); with saved nil (no save told), unmarked: counted here.
func emitWaiting(b *evalBatch, recs []store.TurnState, waiting []bool, saved []store.SavedTurn) {
	for i := range recs {
		if waiting[i] {
			tr := recs[i].Record.Result
			if saved != nil {
				markRevised(&tr, saved[i], false)
			} else {
				tr.Revised, tr.ReplacedDetectionType = false, ""
			}
			b.addTurnSpan(recs[i].SessionID, &tr)
		}
	}
}

// markRevised marks final verdict tr, which waited for its save, by what the save (sv)
// tells. When it was not the turn's first final save, the verdict stored before was
// counted, here or by another collector: tr is Revised, and replaces that verdict (its
// ReplacedDetectionType), or, when the store kept a verdict further on, its own (tr
// changes nothing counted). The store, not this collector's memory, tells what is
// replaced, so that two collectors judging a turn again each replace what the other
// stored. When it was the first, tr is the turn's first counted verdict, unmarked;
// except with evaluated set (tr was just given, not retried after a failed save) when
// the evaluator gave it as Revised: the turn's earlier final verdict was emitted, and a
// store that has no final row of it (the record was dropped over the bound while the
// database was down, with no row to claim: TestDroppedFinalRecordCountedOnce) must not
// make the turn counted twice. A verdict retried after a failed save waited because no
// final verdict of its turn was emitted (sh.write emits a revision of an emitted one at
// once; TestCorrectionWhileStoreDownCountedOnce): the store's answer stands.
func markRevised(tr *evaluation.TurnResult, sv store.SavedTurn, evaluated bool) {
	switch {
	case sv.FirstFinal && evaluated && tr.Revised:
	case sv.FirstFinal:
		tr.Revised, tr.ReplacedDetectionType = false, ""
	case sv.Replaced != "":
		tr.Revised, tr.ReplacedDetectionType = true, sv.Replaced
	default:
		tr.Revised, tr.ReplacedDetectionType = true, tr.DetectionType
	}
}

// claim marks in the continuation store the turns of sh.claims final (ClaimFinal), and
// forgets them once it has.
func (sh *shard) claim(ctx context.Context, p *agentSessionProcessor) error {
	if len(sh.claims) == 0 {
		return nil
	}
	if err := p.cont.ClaimFinal(ctx, sh.claims); err != nil {
		return err // counted and logged by the caller
	}
	sh.claims = nil
	return nil
}

// keepRevision keeps revision as session id's last one until the continuation store
// records it (sh.revisions: at most maxLocal(), others than id dropped past it, a
// warning logged), and schedules its retry.
func (sh *shard) keepRevision(p *agentSessionProcessor, id string, revision int) {
	if sh.revisions == nil {
		sh.revisions = map[string]int{}
	}
	sh.revisions[id] = max(sh.revisions[id], revision)
	if n := len(sh.revisions) - sh.maxLocal(); n > 0 {
		p.logger.Warn("analysis revisions not saved to the continuation store are dropped; a later continuation of their sessions may reuse them",
			zap.Int("dropped", n))
		for other := range sh.revisions {
			if n == 0 {
				break
			}
			if other != id {
				delete(sh.revisions, other)
				n--
			}
		}
	}
	if sh.retryAt.Load() == 0 {
		sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
	}
}

// saveKeptRevisions records in the continuation store the revisions kept with records
// that could not be saved, or whose own save failed (sh.revisions), once the records
// are saved: the store then allocates the session's next revision above them. A
// revision whose save fails stays kept, and is tried again (retryAt).
func (sh *shard) saveKeptRevisions(ctx context.Context, p *agentSessionProcessor) {
	for id, rev := range sh.revisions {
		if err := p.cont.SaveRevision(ctx, id, rev); err != nil {
			p.continuationError(ctx, "saving analysis revisions to the continuation store failed; they are saved again later", err,
				zap.Int("revisions", len(sh.revisions)))
			break // the store is down: the others would fail alike
		}
		delete(sh.revisions, id)
	}
	if len(sh.revisions) > 0 && sh.retryAt.Load() == 0 {
		sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
	}
}

// clearUnsaved forgets the records waiting to be saved again (saved, or emitted for
// good) and their retry.
func (sh *shard) clearUnsaved() {
	sh.unsaved, sh.waiting = nil, nil
	sh.retryAt.Store(0)
}

// keepUnsaved makes saves, in order, the records to save again: one per turn
// (store.TurnKey), the one whose verdict is furthest on (the later of equals, as the store would
// keep it), waiting to emit its verdict when any of the merged ones was (waiting, per
// save), at most sh.maxUnsaved (the oldest are dropped, logged, their waiting verdicts
// emitted in b unmarked: a session loaded later may then give a dropped turn's final
// verdict again).
func (sh *shard) keepUnsaved(p *agentSessionProcessor, b *evalBatch, saves []store.TurnState, waiting []bool) {
	at := make(map[store.TurnKey]int, len(saves))
	sh.unsaved, sh.waiting = make([]store.TurnState, 0, len(saves)), make([]bool, 0, len(saves))
	for j, t := range saves {
		k := t.Key()
		i, ok := at[k]
		switch {
		case !ok:
			at[k] = len(sh.unsaved)
			sh.unsaved, sh.waiting = append(sh.unsaved, t), append(sh.waiting, waiting[j])
			continue
		case store.VerdictStage(&t.Record) >= store.VerdictStage(&sh.unsaved[i].Record):
			sh.unsaved[i] = t
		}
		sh.waiting[i] = sh.waiting[i] || waiting[j]
	}
	if n := len(sh.unsaved) - sh.maxUnsaved; n > 0 {
		p.logger.Warn("turn records not saved to the continuation store are dropped; a later continuation of their sessions misses them",
			zap.Int("dropped", n))
		emitWaiting(b, sh.unsaved[:n], sh.waiting[:n], nil)
		for i := range n {
			// A final verdict is counted now (waiting) or was before (emitted at a
			// shutdown, then restored by continuation.storage; or a revision emitted
			// while the save failed): claimed in the store once it is back, with the
			// detection type counted, which the stored row may not hold.
			if r := &sh.unsaved[i]; sh.waiting[i] || store.VerdictStage(&r.Record) > 0 {
				sh.claims = append(sh.claims, store.Claim{TurnKey: r.Key(), DetectionType: r.Record.Result.DetectionType})
			}
		}
		if m := len(sh.claims) - sh.maxLocal(); m > 0 {
			p.logger.Warn("claims of final verdicts counted while the continuation store was unreachable are dropped; a later continuation of their sessions may count them again",
				zap.Int("dropped", m))
			sh.claims = slices.Delete(sh.claims, 0, m)
		}
		sh.unsaved, sh.waiting = sh.unsaved[n:], sh.waiting[n:]
	}
	// A turn numbered here keeps its place in sh.local when its record is dropped: the
	// analysis that holds it reaches the result store (after the stored turns, in the
	// order numbered here), so its index is reserved all the same, or the next turn
	// numbered here would take it (docs/decisions/sessions.md §4.7). An entry is two ids,
	// a record kilobytes: at most maxLocal() of them, the oldest dropped.
	if n := len(sh.local) - sh.maxLocal(); n > 0 {
		p.logger.Warn("indexes of turns numbered while the continuation store was unreachable are dropped; a later continuation of their sessions may give their indexes to other turns",
			zap.Int("dropped", n))
		sh.local = slices.Delete(sh.local, 0, n)
	}
	sh.retryAt.Store(p.now().Add(unsavedRetry).UnixNano())
}

// saveUnsaved saves the records of every shard whose save failed (at shutdown, after the
// shards stopped) and emits their waiting verdicts; what still fails is not lost to the
// output (the verdicts are then emitted unmarked) and is returned, for continuation.storage
// (keep), with the turns numbered here left in the shards (sh.local).
func (p *agentSessionProcessor) saveUnsaved(ctx context.Context) (left []store.TurnState) {
	b := p.emitter.newBatch(p.now())
	for _, sh := range p.shards {
		if !sh.pending() {
			continue
		}
		var saved []store.SavedTurn
		err := sh.reserveLocal(ctx, p, nil)
		if err == nil {
			err = sh.claim(ctx, p)
		}
		if err == nil {
			saved, err = p.cont.SaveTurns(ctx, sh.unsaved)
		}
		if err == nil {
			sh.saveKeptRevisions(ctx, p)
		}
		if err != nil {
			p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
			p.logger.Warn("saving turn records to the continuation store failed at shutdown; without continuation.storage a later continuation of their sessions misses them",
				zap.Int("records", len(sh.unsaved)), zap.Error(err))
			left = append(left, sh.unsaved...)
		}
		emitWaiting(b, sh.unsaved, sh.waiting, saved) // saved is nil after an error
		sh.clearUnsaved()
	}
	p.emit(ctx, b)
	return left
}

// hasUnsaved reports whether records of session id wait to be saved again.
func (sh *shard) hasUnsaved(id string) bool {
	return slices.ContainsFunc(sh.unsaved, func(t store.TurnState) bool { return t.SessionID == id })
}

// unsavedOf returns the records of session id waiting to be saved again.
func (sh *shard) unsavedOf(id string) []evaluation.TurnRecord {
	var out []evaluation.TurnRecord
	for i := range sh.unsaved {
		if sh.unsaved[i].SessionID == id {
			out = append(out, sh.unsaved[i].Record)
		}
	}
	return out
}

// savesFor reports whether w holds turn records of session id not written yet.
func (w *shardWrites) savesFor(id string) bool {
	return slices.ContainsFunc(w.saves, func(t store.TurnState) bool { return t.SessionID == id })
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

// state returns the session's state, loading a continued session's from the
// continuation store. A session keyed by its trace id (one turn, or the requests of a
// conversation its trace holds, docs/decisions/sessions.md §2.4.1) never continues once
// it ended: it is neither loaded nor saved.
func (sh *shard) state(ctx context.Context, p *agentSessionProcessor, s *session.AgentSession) *sessionState {
	if st := sh.sessions[s.ID]; st != nil {
		return st
	}
	st := &sessionState{continuable: s.KeySource != session.KeySourceTraceID}
	sh.sessions[s.ID] = st
	if !st.continuable {
		return st
	}
	// Records whose save failed are further on than the store's rows of them, and so is
	// the revision of their analysis.
	defer func() {
		if u := sh.unsavedOf(s.ID); len(u) > 0 {
			st.merge(u)
		}
		st.revision = max(st.revision, sh.revisions[s.ID])
	}()
	c, err := p.cont.LoadContinuation(ctx, s.ID, nil)
	if err != nil {
		p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
		p.logger.Warn("loading a session from the continuation store failed; it is evaluated as a new session",
			zap.String("session_id", s.ID), zap.Error(err))
		return st
	}
	st.records, st.revision = c.Turns, c.Revision
	st.sort()
	if len(c.Turns) > 0 {
		p.telemetry.ProcessorAgentsessionSessionsContinued.Add(ctx, 1)
	}
	return st
}

// evaluate handles one event, recovering from panics (the event is then lost to
// evaluation, never the trace pipeline).
func (sh *shard) evaluate(ctx context.Context, p *agentSessionProcessor, ev *tracker.Event, b *evalBatch, w *shardWrites) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic during evaluation: %v", r)
		}
	}()
	id := ev.Session.ID
	// The judge jobs the pool refused for this event are run into b after the event's
	// spans and their embeddings spans (deferred before addCallSpans, so run after it):
	// those stay children of the event's own last evaluation span, not of a judge span.
	defer b.runRefused(p.logger)
	// The embeddings requests of this event become children of its last evaluation span.
	mark := b.spans.Len()
	defer p.emb.addCallSpans(b, id, mark)
	st := sh.state(ctx, p, ev.Session)
	// save queues rec's record; with verdict, rec's verdict is emitted as a turn span:
	// at once, or, for a final verdict of a kept session, once its save tells whether it
	// is the turn's first, or which stored verdict it replaced (sh.write, markRevised).
	save := func(rec *evaluation.TurnRecord, verdict bool) {
		if store.VerdictStage(rec) == 2 && !p.keepCarries {
			// Its next turn was evaluated (FollowUp had its user message): the
			// carries are that turn's to hand on, here and in the store (§4.2).
			rec.DropCarries()
		}
		if !st.continuable || !rec.Result.Final {
			// Not a final verdict of a kept turn: nothing to arbitrate.
			if verdict {
				b.addTurnSpan(id, &rec.Result)
			}
			verdict = false
		}
		if !st.continuable {
			return
		}
		if !st.held && p.recovery != nil {
			st.held = true
			w.holds = append(w.holds, openSession(p.instance, ev.Session))
		}
		span := -1
		if verdict {
			span = b.turnSpan(id, &rec.Result)
		}
		w.saves = append(w.saves, store.TurnState{SessionID: id, Record: *rec})
		w.spans = append(w.spans, span)
	}
	switch ev.Kind {
	case tracker.EventTurnClosed:
		t := &ev.Session.Turns[ev.TurnIndex]
		if !st.continuable && len(st.records) == 0 {
			if ended := sh.resumeTrace(id, t); ended != nil {
				st = ended // the trace's next request: its session goes on
				sh.sessions[id] = st
				p.telemetry.ProcessorAgentsessionSessionsContinued.Add(ctx, 1)
			}
		}
		if sh.analysed(st, t) {
			// Spans of a turn already analysed, come after the tracker forgot its trace
			// (turn_timeout after the session ended; or across a restart): late spans,
			// as while the session is open (docs/decisions/sessions.md §2.4).
			// Evaluating them would emit a partial result of the turn again, counted
			// again by the exporter, and replace the whole turn's record or analysis.
			p.telemetry.ProcessorAgentsessionLateSpans.Add(ctx, int64(t.SpanCount))
			st.late = true
			return nil
		}
		st.evaluated = true
		p.countAnomalies(ctx, id, t)
		idx := sh.turnIndex(ctx, p, w, st, id, idOfTurn(t))
		// The turn before this one in the conversation (by start, not index: a turn
		// that closed late took a higher index than the turns after it, §4.5). Its
		// grounding facts and conversation are carried forward, also while a turn
		// between them is not closed here (still open here, or closed on another
		// collector less than a batch ago, not stored yet); then its follow-up is that
		// turn's, given when it closes or at idle.
		prev := st.prevOf(t.StartedAt, idx)
		rec := p.evaluator.EvaluateClosedTurn(id, ev.Session.Agents, t, idx, st.carrier(prev, idOfTurn(t)))
		rec.Summary.Outcome = ev.TurnOutcome
		if prev != nil && !ev.EarlierOpen && st.holdsBetween(prev.Result.TurnIndex, idx) && needsFollowUp(prev, &rec) {
			// The previous turn's follow-up is this turn's user message: its final verdict.
			*prev = p.evaluator.FollowUpBy(*prev, &rec)
			save(prev, true)
		}
		st.put(rec)
		b.addTurn(id, &rec.Result)
		save(&rec, false)
	case tracker.EventSessionEnded:
		delete(sh.sessions, id) // a later turn continues from the continuation store
		if st.late && !st.evaluated && ev.Session.Outcome == nil {
			// Only late spans of turns already analysed came (a sender's retry): the
			// analysis emitted before stands; a new revision of the same turns would
			// count again, and run the judge and a dataset case on the late spans alone.
			if st.continuable {
				w.ended = append(w.ended, endedSession{id: id})
			}
			return nil
		}
		revision, recorded := 0, false
		if st.continuable {
			// Another collector may hold the session open too (docs/decisions/sessions.md
			// §4.5): this batch's records of the session are written, the revision is
			// allocated, then the analysis covers the turns as stored. A collector that
			// allocates a higher revision therefore reads every turn this one evaluated.
			if w.savesFor(id) || sh.hasUnsaved(id) {
				sh.write(ctx, p, w, b)
			}
			if len(st.records) > 0 {
				revision, recorded = sh.nextRevision(ctx, p, st, id)
			}
			sh.reload(ctx, p, st, id)
		}
		if len(st.records) == 0 {
			if st.continuable {
				// Released (a hold taken over from a dead instance), nothing to analyse.
				w.ended = append(w.ended, endedSession{id: id})
			}
			return nil
		}
		sh.finishRecords(p, st, save)
		// The session's explicit outcome (agent_eval.task.completed) includes one that came
		// in a trace without GenAI spans, such as the evaluation channel's submit.
		meta := evaluation.SessionMeta{ID: id, Service: ev.Session.Service, Partial: ev.Session.Partial,
			EndReason: string(ev.Session.EndReason), Outcome: ev.Session.Outcome}
		for _, a := range ev.Session.Agents {
			meta.Agents = append(meta.Agents, a.ID)
		}
		// A dataset case matched by the session (references) is evaluated against the
		// turns the tracker kept: every turn when datasets are configured (RetainTurns).
		var cr reference.CaseResult
		m, matched := p.refs.matchSession(ev.Session)
		if matched {
			cr, meta.References = p.refs.evaluate(ctx, ev.Session, m)
		}
		a := p.evaluator.Aggregate(meta, st.records)
		if revision == 0 {
			revision, recorded = sh.nextRevision(ctx, p, st, id) // the records were all in the store
		}
		a.AnalysisRevision = revision
		if err := b.addSession(&a); err != nil {
			return err
		}
		if matched {
			p.refs.putReferences(b.spans.At(b.spans.Len()-1), &cr)
			if p.refs.wantsJudge(ev.Session, m) {
				p.submitJudge(b, ev.Session, m, cr.CaseID, a.AnalysisRevision)
			}
		}
		if p.judge != nil {
			p.submitSessionJudge(b, ev.Session, &a)
		}
		if st.continuable {
			w.ended = append(w.ended, endedSession{id: id, revision: a.AnalysisRevision, recorded: recorded})
		} else {
			st.revision = a.AnalysisRevision
			sh.traceEnded(id, st, ev.Session.EndReason)
		}
	}
	return nil
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

// analysed reports whether closed turn t of session st has been analysed: its record
// (same trace and root span) has its final verdict; or t is a fragment of such a turn
// (its root span one the tracker chose among the late spans, or the turn's own root come
// late): it started before a turn of its trace that has its final verdict ended
// (a later request of a conversation run inside the trace starts after the turns
// before it, docs/decisions/sessions.md §2.4.1); or, for a session keyed by its trace
// (not kept in the continuation store) whose analysis the shard emitted
// (analysedTraces), t comes after the trace's session ended with the trace
// (single_trace, an end signal) or started before the analysed turns ended: evaluated,
// it would be a fragment of the trace analysed again from it alone (§4.2).
func (sh *shard) analysed(st *sessionState, t *session.Turn) bool {
	if !st.continuable {
		if at, ok := sh.analysedTrace(t.TraceID); ok && at.late(t) {
			return true
		}
	}
	if i := st.find(idOfTurn(t)); i >= 0 {
		return st.records[i].Result.Final
	}
	return slices.ContainsFunc(st.records, func(r evaluation.TurnRecord) bool {
		// A record rebuilt from a stored result has no times (§4.7): it covers its
		// trace, as before turns had root spans.
		end := r.Summary.EndedAt
		return r.Result.Final && r.Result.TraceID == t.TraceID && (end.IsZero() || !t.StartedAt.After(end))
	})
}

// traceEnded records that the analysis of session id, keyed by its trace (id is the
// trace id, its records' trace), was emitted (analysedTraces), and keeps its state st
// when the trace may go on (reason is neither single_trace nor an end signal):
// endedTraces.
func (sh *shard) traceEnded(id string, st *sessionState, reason session.EndReason) {
	at := analysedTrace{goesOn: reason != session.EndReasonSingleTrace && reason != session.EndReasonEndSignal}
	for i := range st.records {
		if end := st.records[i].Summary.EndedAt; end.After(at.end) {
			at.end = end
		}
	}
	sh.analysedTraces.Add(id, at)
	sh.endedTraces.Remove(id)
	if !at.goesOn || at.end.IsZero() || len(st.records) > sh.maxUnsaved {
		return
	}
	st.late, st.evaluated = false, false
	for sh.endedRecords+len(st.records) > sh.maxUnsaved {
		sh.endedTraces.RemoveOldest()
	}
	sh.endedTraces.Add(id, endedTrace{st: st, at: at})
	sh.endedRecords += len(st.records)
}

// analysedTrace returns what the shard keeps of the analysed session keyed by trace
// traceID: with its kept state (endedTraces), or in analysedTraces.
func (sh *shard) analysedTrace(traceID string) (analysedTrace, bool) {
	if e, ok := sh.endedTraces.Peek(traceID); ok {
		return e.at, true
	}
	return sh.analysedTraces.Get(traceID)
}

// resumeTrace returns the state of session id, keyed by its trace, kept when it ended
// while its trace could go on (endedTraces), when closed turn t is the trace's next
// request: it started after the analysed turns ended. It is then no longer kept.
// Otherwise it returns nil.
func (sh *shard) resumeTrace(id string, t *session.Turn) *sessionState {
	e, ok := sh.endedTraces.Peek(id)
	if !ok || e.at.late(t) {
		return nil
	}
	sh.endedTraces.Remove(id) // its records leave endedRecords
	sh.analysedTraces.Remove(id)
	return e.st
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

// at returns the record of turn index i, or nil.
func (st *sessionState) at(i int) *evaluation.TurnRecord {
	if i < 0 {
		return nil
	}
	if i < len(st.records) && st.records[i].Result.TurnIndex == i {
		return &st.records[i]
	}
	for j := range st.records {
		if st.records[j].Result.TurnIndex == i {
			return &st.records[j]
		}
	}
	return nil
}

// prevOf returns the record of the turn that came before the turn that started at
// start and holds index in the conversation (conversationOrder), or nil. A new last turn
// that started after every record (the common case) takes the record last in the
// conversation (latest) without a scan or an allocation; only a late turn orders them.
func (st *sessionState) prevOf(start time.Time, index int) *evaluation.TurnRecord {
	n := len(st.records)
	if n == 0 {
		return nil
	}
	if last := &st.records[n-1]; last.Result.TurnIndex < index && !start.IsZero() && evaluation.CompareConversation(st.latest, st.latestIndex, start, index) < 0 {
		// A new last turn, after every record in the conversation too.
		if i, ok := slices.BinarySearchFunc(st.records, st.latestIndex, byIndex); ok {
			return &st.records[i]
		}
	}
	starts, start := st.startsWith(index, start)
	prev := -1
	for i := range st.records {
		ti := st.records[i].Result.TurnIndex
		if ti == index || evaluation.CompareConversation(starts[i], ti, start, index) > 0 {
			continue
		}
		if prev < 0 || evaluation.CompareConversation(starts[prev], st.records[prev].Result.TurnIndex, starts[i], ti) < 0 {
			prev = i
		}
	}
	if prev < 0 {
		return nil
	}
	return &st.records[prev]
}

// carrier returns the record whose grounding facts and conversation a turn after prev
// is evaluated with: prev, or, when prev dropped them (it has its verdict with
// follow-up, DropCarries) because a turn that came after turn (the one closing) followed
// it, that turn's record, which carried prev's on (with its own): turn closed late.
func (st *sessionState) carrier(prev *evaluation.TurnRecord, turn turnID) *evaluation.TurnRecord {
	if prev == nil || prev.Grounding != nil || prev.Conversation != nil || prev.FollowedBy == nil {
		return prev
	}
	by := turnID{trace: prev.FollowedBy.TraceID, root: prev.FollowedBy.RootSpanID}
	if by == turn {
		return prev
	}
	if i := st.find(by); i >= 0 {
		return &st.records[i]
	}
	return prev
}

// startsWith returns the start of each record's turn (Summary.StartedAt), in
// st.records' order (by index), as if the turn of index that started at start were among
// the records (a turn closing; index < 0: none), with that turn's own start. A record or
// turn without a start (a record rebuilt from a stored result,
// evaluation.RecordFromResult) takes the start of the one before it by index, so that it
// keeps its index's place in the conversation.
func (st *sessionState) startsWith(index int, start time.Time) (starts []time.Time, own time.Time) {
	starts = make([]time.Time, len(st.records))
	var last time.Time
	placed := index < 0
	for i := range st.records {
		if !placed && st.records[i].Result.TurnIndex > index {
			placed = true
			if !start.IsZero() {
				last = start
			}
			own = last
		}
		if s := st.records[i].Summary.StartedAt; !s.IsZero() {
			last = s
		}
		starts[i] = last
	}
	if !placed {
		own = last
		if !start.IsZero() {
			own = start
		}
	}
	return starts, own
}

// conversationOrder returns the positions in st.records in the conversation's order:
// by their turns' start, then by index (docs/decisions/sessions.md §4.5); nil when that
// is st.records' own (index) order. Indexes are given when turns close, so a turn that
// closed late holds a higher index than turns that came after it; its follow-up is still
// the next turn's user message.
func (st *sessionState) conversationOrder() []int {
	if !st.unordered {
		return nil
	}
	order := make([]int, len(st.records))
	for i := range order {
		order[i] = i
	}
	starts, _ := st.startsWith(-1, time.Time{})
	slices.SortFunc(order, func(a, b int) int {
		return evaluation.CompareConversation(starts[a], st.records[a].Result.TurnIndex, starts[b], st.records[b].Result.TurnIndex)
	})
	return order
}

// holdsBetween reports whether st holds a record of every turn index strictly between
// indexes a and b: else a turn whose index was reserved, but whose record is not stored
// yet, may come between them in the conversation.
func (st *sessionState) holdsBetween(a, b int) bool {
	lo, hi := min(a, b), max(a, b)
	from, _ := slices.BinarySearchFunc(st.records, lo+1, byIndex)
	to, _ := slices.BinarySearchFunc(st.records, hi, byIndex)
	return to-from == hi-lo-1
}

func byIndex(r evaluation.TurnRecord, index int) int { return r.Result.TurnIndex - index }

// needsFollowUp reports whether record r is to get its verdict (again) with next's user
// message, next being the turn after it in the conversation: it has none with follow-up
// (provisional, or final without follow-up), or it has the verdict of a turn that came
// after next (next closed late and took its place).
func needsFollowUp(r, next *evaluation.TurnRecord) bool {
	if store.VerdictStage(r) < 2 {
		return true
	}
	by := r.FollowedBy
	return by != nil && !by.Of(next) && !next.Summary.StartedAt.IsZero() && by.StartedAt.After(next.Summary.StartedAt)
}

// turnID names a closed turn within its session: its trace and its root span (the turn
// marker or the highest GenAI span, hex; "" for a turn without one). One trace may hold
// several turns (a conversation run inside one trace), each with its own root span: a
// turn's record, index and saves go by both (store.TurnKey, which adds the session;
// docs/decisions/sessions.md §4.2).
type turnID struct{ trace, root string }

// idOfTurn returns the id of closed turn t.
func idOfTurn(t *session.Turn) turnID { return turnID{trace: t.TraceID, root: t.RootSpanID} }

// idOf returns the id of the turn of result r.
func idOf(r *evaluation.TurnResult) turnID { return turnID{trace: r.TraceID, root: r.RootSpanID} }

// idOfKey returns the id of the turn k names.
func idOfKey(k store.TurnKey) turnID { return turnID{trace: k.TraceID, root: k.RootSpanID} }

// key returns the continuation store's key of the turn in session sessionID.
func (t turnID) key(sessionID string) store.TurnKey {
	return store.TurnKey{SessionID: sessionID, TraceID: t.trace, RootSpanID: t.root}
}

// manyRecords is the number of records from which a session's state keeps the set of
// their turn ids (sessionState.ids): below it, comparing each record's costs less.
const manyRecords = 32

// put adds rec, replacing the record of the same turn (turnID); records stay in index
// order. A long session's new turn is known to be new from the set of turn ids, not from
// a comparison with every record (the cost of a closed turn must not grow with the
// session, docs/decisions/sessions.md §4.1).
func (st *sessionState) put(rec evaluation.TurnRecord) {
	id := idOf(&rec.Result)
	if st.ids == nil && len(st.records) >= manyRecords {
		st.ids = make(map[turnID]struct{}, 2*len(st.records))
		for i := range st.records {
			st.ids[idOf(&st.records[i].Result)] = struct{}{}
		}
	}
	if i := st.find(id); i >= 0 {
		st.records[i] = rec
		st.sort()
		return
	}
	st.records = append(st.records, rec)
	if st.ids != nil {
		st.ids[id] = struct{}{}
	}
	if n := len(st.records); n > 1 && st.records[n-2].Result.TurnIndex > rec.Result.TurnIndex {
		st.sort()
		return
	}
	// The common case, a new last turn, appends in order.
	st.follow(&rec)
}

// follow updates the order fields (unordered, lastStart, latest) for rec, the new last
// record in index order.
func (st *sessionState) follow(rec *evaluation.TurnRecord) {
	start := rec.Summary.StartedAt
	if start.IsZero() {
		start = st.lastStart // a record without a start keeps its index's place (startsWith)
	} else {
		st.unordered = st.unordered || start.Before(st.lastStart)
	}
	st.lastStart = start
	if evaluation.CompareConversation(start, rec.Result.TurnIndex, st.latest, st.latestIndex) > 0 {
		st.latest, st.latestIndex = start, rec.Result.TurnIndex
	}
}

// find returns the index in st.records of the record of turn id, or -1. st.ids, once
// kept, answers an absent turn without a scan.
func (st *sessionState) find(id turnID) int {
	if st.ids != nil {
		if _, ok := st.ids[id]; !ok {
			return -1
		}
	}
	return slices.IndexFunc(st.records, func(r evaluation.TurnRecord) bool { return idOf(&r.Result) == id })
}

// sort puts st.records in index order, and finds whether that is the conversation's.
func (st *sessionState) sort() {
	slices.SortStableFunc(st.records, func(a, b evaluation.TurnRecord) int { return a.Result.TurnIndex - b.Result.TurnIndex })
	st.unordered, st.lastStart, st.latest, st.latestIndex = false, time.Time{}, time.Time{}, 0
	for i := range st.records {
		st.follow(&st.records[i])
	}
}

// holds reports whether st has the record of the turn of traceID and rootSpanID at
// turnIndex at verdict stage stage or further on: merge would take nothing of a stored
// one (store.Held, for reload, which then need not decode it).
func (st *sessionState) holds(traceID, rootSpanID string, turnIndex, stage int) bool {
	i := st.find(turnID{trace: traceID, root: rootSpanID})
	return i >= 0 && st.records[i].Result.TurnIndex == turnIndex && store.VerdictStage(&st.records[i]) >= stage
}

// merge takes the stored records of turns this state lacks, and a stored record whose
// verdict is further on than the local one (store.VerdictStage). The stored index of a
// turn wins: it differs only for a turn this collector numbered while the store could
// not allocate its index (shard.local).
func (st *sessionState) merge(stored []evaluation.TurnRecord) {
	for _, r := range stored {
		switch i := st.find(idOf(&r.Result)); {
		case i < 0:
			st.records = append(st.records, r)
			st.ids = nil // made again by the next put
		case store.VerdictStage(&r) > store.VerdictStage(&st.records[i]):
			st.records[i] = r
		case r.Result.TurnIndex != st.records[i].Result.TurnIndex:
			st.records[i].SetTurnIndex(r.Result.TurnIndex)
		}
	}
	st.sort()
}

// finishRecords gives the final verdicts of a session that went idle, over its records
// in conversation order (st holds every stored record, §4.5): a record whose next turn is
// known gets its verdict with that turn's user message (needsFollowUp), when it had none
// (provisional), had one without follow-up (FinishLast: the next turn closed on another
// collector before this record was stored, or was stored after this record was
// finished; the verdict is then Revised), or had one with the user message of a turn
// that came after the next one (the next turn closed late). A provisional record without
// a known next turn (the last, or one before a turn whose index was reserved but is not
// stored) is finished without follow-up. Each verdict given is emitted and saved.
func (sh *shard) finishRecords(p *agentSessionProcessor, st *sessionState, save func(*evaluation.TurnRecord, bool)) {
	order := st.conversationOrder()
	at := func(k int) *evaluation.TurnRecord {
		if order != nil {
			k = order[k]
		}
		return &st.records[k]
	}
	for k := range st.records {
		r := at(k)
		var next *evaluation.TurnRecord
		if k+1 < len(st.records) {
			if n := at(k + 1); st.holdsBetween(r.Result.TurnIndex, n.Result.TurnIndex) {
				next = n
			}
		}
		switch {
		case next != nil && needsFollowUp(r, next):
			*r = p.evaluator.FollowUpBy(*r, next)
		case !r.Result.Final:
			*r = p.evaluator.FinishLast(*r)
		default:
			continue
		}
		save(r, true)
	}
}

// reload merges the session's records in the continuation store into st: the turns
// another collector closed while this one holds the session open too.
func (sh *shard) reload(ctx context.Context, p *agentSessionProcessor, st *sessionState, id string) {
	c, err := p.cont.LoadContinuation(ctx, id, st.holds)
	if err != nil {
		p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
		p.logger.Warn("reloading a session from the continuation store failed; its analysis covers the turns of this collector",
			zap.String("session_id", id), zap.Error(err))
		return
	}
	st.merge(c.Turns)
	st.revision = max(st.revision, c.Revision)
}

// reserveBatch allocates, in one transaction, the indexes of the turns that events close
// in kept sessions (after those of the turns numbered here while the store was
// unreachable: reserveLocal), for turnIndex: one write a batch, not one a turn, where
// the continuation store's writers wait for each other (SQLite: one at a time, the
// agenteval exporter's saves among them). When it fails, nothing is reserved, and
// turnIndex tries each turn again on its own (and numbers it itself if that fails too).
func (sh *shard) reserveBatch(ctx context.Context, p *agentSessionProcessor, events []tracker.Event) {
	var keys []store.TurnKey
	for i := range events {
		ev := &events[i]
		if ev.Kind == tracker.EventTurnClosed && ev.Session.KeySource != session.KeySourceTraceID {
			keys = append(keys, idOfTurn(&ev.Session.Turns[ev.TurnIndex]).key(ev.Session.ID))
		}
	}
	if len(keys) < 2 || sh.reserveLocal(ctx, p, &sh.writes) != nil {
		return // one turn: turnIndex reserves it as cheaply
	}
	idx, err := p.cont.ReserveTurns(ctx, keys)
	if err != nil {
		return
	}
	if sh.reserved == nil {
		sh.reserved = make(map[store.TurnKey]int, len(keys))
	}
	for i, k := range keys {
		sh.reserved[k] = idx[i]
	}
}

// turnIndex returns the index of the session's turn turn, allocated in the
// continuation store (stable for a turn, distinct across collectors sharing the store),
// and makes sure st holds the previous turn's record when the store does (it may have
// been closed by another collector). A session that is not kept, or a store that fails,
// gives the next index of st; the store allocates the turn's index before its records are
// saved (sh.local, reserveLocal; w is the batch's writes, whose records it moves).
func (sh *shard) turnIndex(ctx context.Context, p *agentSessionProcessor, w *shardWrites, st *sessionState, id string, turn turnID) int {
	// Above every turn held, not their count: once turns numbered here have the store's
	// indexes (reserveLocal), the records need not start at 0.
	idx := len(st.records)
	if n := len(st.records); n > 0 {
		idx = max(idx, st.records[n-1].Result.TurnIndex+1)
	}
	if !st.continuable {
		return idx
	}
	key := turn.key(id)
	n, ok := sh.reserved[key]
	var err error
	if !ok {
		// The turns numbered here while the store was unreachable get theirs first.
		if err = sh.reserveLocal(ctx, p, w); err == nil {
			n, err = store.ReserveTurn(ctx, p.cont, id, turn.trace, turn.root)
		}
	}
	if err != nil {
		p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
		p.logger.Warn("allocating a turn index in the continuation store failed; the index is this collector's until the store allocates one",
			zap.String("session_id", id), zap.Error(err))
		sh.local = append(sh.local, key)
		return idx
	}
	if n > 0 && st.at(n-1) == nil {
		sh.reload(ctx, p, st, id)
	}
	return n
}

// nextRevision allocates the session's next analysis revision in the continuation store,
// which records it (recorded), or gives st's next one for a session that is not kept, or
// when the store fails.
func (sh *shard) nextRevision(ctx context.Context, p *agentSessionProcessor, st *sessionState, id string) (revision int, recorded bool) {
	if st.continuable {
		r, err := p.cont.NextRevision(ctx, id)
		if err == nil {
			return r, true
		}
		p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
		p.logger.Warn("allocating an analysis revision in the continuation store failed; the revision is this collector's",
			zap.String("session_id", id), zap.Error(err))
	}
	return st.revision + 1, false
}
