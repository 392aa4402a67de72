// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/pkg/reference"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

// minTick and maxTick bound how often the worker checks for turns and sessions due to
// close: a quarter of turn_settle, within [50ms, 1s].
const (
	minTick = 50 * time.Millisecond
	maxTick = time.Second
)

// agentSessionProcessor is the collector adapter over internal/session (reconstruction)
// and internal/evaluation (scores). The per-span path only extracts a compact record and
// updates the tracker; evaluation and emission run on the worker goroutine.
type agentSessionProcessor struct {
	logger    *zap.Logger
	cfg       *Config
	next      consumer.Traces
	telemetry *metadata.TelemetryBuilder
	extractor *session.Extractor
	evaluator *evaluation.Evaluator
	emitter   *emitter
	refs      *refRunner    // nil without datasets
	judge     *sessionJudge // nil without a judge

	mu      sync.Mutex // guards tracker and queued
	tracker *session.Tracker
	queued  []session.Event // events raised on the ingest path (evictions), for the worker

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
	ev, err := evaluation.New(cfg.Scoring)
	if err != nil {
		return nil, fmt.Errorf("scoring: %w", err)
	}
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	sj, err := newSessionJudge(cfg.Judge)
	if err != nil {
		return nil, err
	}
	refs, err := newRefRunner(cfg.References, sj, set.Logger)
	if err != nil {
		_ = sj.shutdown(context.Background())
		return nil, err
	}
	tick := max(minTick, min(maxTick, cfg.TurnSettle/4))
	p := &agentSessionProcessor{
		logger:    set.Logger,
		cfg:       cfg,
		next:      next,
		telemetry: tb,
		extractor: session.NewExtractor(session.ExtractConfig{
			SessionKeys:  cfg.SessionKeys,
			EndAttribute: cfg.EndAttribute,
			MaxTextBytes: cfg.MaxTextBytes,
		}),
		evaluator: ev,
		emitter:   newEmitter(cfg.Emit.ToolCalls),
		refs:      refs,
		judge:     sj,
		tracker: session.NewTracker(session.TrackerConfig{
			TurnSettle:         cfg.TurnSettle,
			TurnTimeout:        cfg.TurnTimeout,
			SessionTimeout:     cfg.SessionTimeout,
			MaxSessionDuration: cfg.MaxSessionDuration,
			MaxSessions:        cfg.MaxSessions,
			MaxSpansPerSession: cfg.MaxSpansPerSession,
			Registry:           registry,
		}),
		now:  time.Now,
		tick: tick,
		wake: make(chan struct{}, 1),
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
		events := p.tracker.Observe(recs, p.now())
		if len(events) > 0 {
			p.queued = append(p.queued, events...)
		}
		p.mu.Unlock()
		if len(events) > 0 {
			select {
			case p.wake <- struct{}{}:
			default:
			}
		}
	}
	// The tracker keeps its own compact copy: the buffer goes back to the pool, cleared
	// so that it pins nothing of this batch.
	if recs = recs[:cap(recs)]; len(recs) <= maxPooledRecs {
		clear(recs)
		*buf = recs[:0]
		recBufPool.Put(buf)
	}
	return td, nil
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
			out = recs[:0]
		}
	}()
	if n := td.SpanCount(); cap(recs) < n {
		recs = make([]session.SpanRecord, 0, n)
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
					// Invalid OTLP: nothing could be parented to it. Passed on, not modelled.
					p.logger.Debug("span without trace or span id is passed on but not evaluated", zap.String("name", sp.Name()))
					continue
				}
				recs = recs[:len(recs)+1]
				p.extractor.ExtractInto(&recs[len(recs)-1], rs.Resource(), ss.Scope(), sp)
				if p.refs != nil {
					p.refs.observe(rs.Resource(), sp)
				}
			}
		}
	}
	return recs
}

func (p *agentSessionProcessor) start(context.Context, component.Host) error {
	p.stop = make(chan struct{})
	p.done = make(chan struct{})
	go p.run()
	return nil
}

// shutdown stops the worker, then closes every open turn and session as partial and
// emits their evaluations, so nothing observed goes unevaluated.
func (p *agentSessionProcessor) shutdown(ctx context.Context) error {
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
	}
	p.mu.Lock()
	events := append(p.queued, p.tracker.CloseAll("shutdown")...)
	p.queued = nil
	p.mu.Unlock()
	p.handle(ctx, events)
	err := p.judge.shutdown(ctx)
	p.judge.recordJudge(ctx, p.telemetry)
	p.telemetry.Shutdown()
	return err
}

func (p *agentSessionProcessor) run() {
	defer close(p.done)
	t := time.NewTicker(p.tick)
	defer t.Stop()
	ctx := context.Background()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		case <-p.wake:
		}
		p.step(ctx)
	}
}

// step closes what is due at p.now(), then evaluates and emits it. Tests call it
// directly with a controlled clock instead of running the worker.
func (p *agentSessionProcessor) step(ctx context.Context) {
	p.mu.Lock()
	events := append(p.queued, p.tracker.Advance(p.now())...)
	p.queued = nil
	open := p.tracker.Stats().OpenSessions
	p.mu.Unlock()
	p.telemetry.ProcessorAgentsessionOpenSessions.Record(ctx, int64(open))
	p.handle(ctx, events)
	p.judge.recordJudge(ctx, p.telemetry)
}

// handle evaluates closed turns and ended sessions and emits the evaluation spans. Each
// event is isolated: a failure is counted and logged, and the next event goes on.
func (p *agentSessionProcessor) handle(ctx context.Context, events []session.Event) {
	for i := range events {
		ev := events[i]
		if ev.Kind == session.EventSessionEnded && ev.Session.Partial && isLimitReason(ev.Session.EndReason) {
			p.telemetry.ProcessorAgentsessionSessionsEvicted.Add(ctx, 1)
		}
		td, err := p.evaluate(ev)
		if err != nil {
			p.telemetry.ProcessorAgentsessionEvaluationErrors.Add(ctx, 1)
			p.logger.Error("evaluation failed; no result emitted for this entity",
				zap.String("session_id", ev.Session.ID), zap.Error(err))
			continue
		}
		n := td.SpanCount()
		if n == 0 {
			continue
		}
		if err := p.next.ConsumeTraces(ctx, td); err != nil {
			p.telemetry.ProcessorAgentsessionEmitFailures.Add(ctx, 1)
			p.logger.Warn("the next consumer refused evaluation spans", zap.String("session_id", ev.Session.ID), zap.Error(err))
			continue
		}
		p.telemetry.ProcessorAgentsessionEvaluationsEmitted.Add(ctx, int64(n))
	}
}

// evaluate scores one event into a batch of evaluation spans, recovering from panics.
func (p *agentSessionProcessor) evaluate(ev session.Event) (td ptrace.Traces, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic during evaluation: %v", r)
		}
	}()
	b := p.emitter.newBatch(ev.Session, p.now())
	switch ev.Kind {
	case session.EventTurnClosed:
		tr := p.evaluator.EvaluateTurn(ev.Session, ev.TurnIndex, false)
		b.addTurn(ev.Session, tr)
		// Turn N's follow-up is turn N+1's user message: the final CCM/RDM verdict of
		// the previous turn is known now.
		if ev.TurnIndex > 0 {
			b.addTurnVerdict(ev.Session, p.evaluator.EvaluateTurn(ev.Session, ev.TurnIndex-1, true))
		}
	case session.EventSessionEnded:
		if len(ev.Session.Turns) == 0 {
			return ptrace.NewTraces(), nil
		}
		var refs *evaluation.ReferenceScores
		var cr reference.CaseResult
		m, matched := p.refs.matchSession(ev.Session)
		if matched {
			cr, refs = p.refs.evaluate(context.Background(), ev.Session, m)
		}
		a := p.evaluator.AnalyzeSessionWithReferences(ev.Session, refs)
		if n := len(a.TurnResults); n > 0 {
			b.addTurnVerdict(ev.Session, a.TurnResults[n-1])
		}
		if err := b.addSession(ev.Session, &a); err != nil {
			return ptrace.NewTraces(), err
		}
		if matched {
			p.refs.putReferences(b.spans.At(b.spans.Len()-1), &cr)
			if p.refs.wantsJudge(ev.Session, m) {
				p.submitJudge(ev.Session, m, cr.CaseID)
			}
		}
		if p.judge != nil {
			p.submitSessionJudge(ev.Session, &a)
		}
	}
	return b.traces(), nil
}

func isLimitReason(reason string) bool {
	switch reason {
	case "max_sessions", "max_spans_per_session", "max_session_duration":
		return true
	}
	return false
}
