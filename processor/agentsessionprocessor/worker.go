// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/tracker"
)

// run is the worker, one goroutine from start to shutdown: on each tick (every
// turn_settle within [minTick, maxTick]), when a batch closed turns or scheduled the
// first check (wake), and when the next turn is due (nextDue), it closes what is due and
// hands it to the shards (advance).
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
