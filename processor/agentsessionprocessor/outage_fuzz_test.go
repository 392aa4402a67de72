// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

// outageStore is downContinuation that is also the collector's store.Recovery: while
// the database is down the lease, the holds, the sweep and the releases fail too (an
// outage of the whole database); failHolds makes the next Hold writes fail alone.
type outageStore struct {
	*downContinuation
	rec       store.Recovery
	failHolds int
}

func (o *outageStore) Heartbeat(ctx context.Context, owner string, until time.Time) error {
	if o.down {
		return errStoreDown
	}
	return o.rec.Heartbeat(ctx, owner, until)
}

func (o *outageStore) Leave(ctx context.Context, owner string) error {
	if o.down {
		return errStoreDown
	}
	return o.rec.Leave(ctx, owner)
}

func (o *outageStore) Hold(ctx context.Context, sessions []store.OpenSession) error {
	if o.fails(&o.failHolds) {
		return errStoreDown
	}
	return o.rec.Hold(ctx, sessions)
}

func (o *outageStore) Release(ctx context.Context, owner string, ids []string, now time.Time) error {
	if o.down {
		return errStoreDown
	}
	return o.rec.Release(ctx, owner, ids, now)
}

func (o *outageStore) Orphans(ctx context.Context, now time.Time, limit int) ([]store.OpenSession, error) {
	if o.down {
		return nil, errStoreDown
	}
	return o.rec.Orphans(ctx, now, limit)
}

func (o *outageStore) Claim(ctx context.Context, s store.OpenSession, owner string) (bool, error) {
	if o.down {
		return false, errStoreDown
	}
	return o.rec.Claim(ctx, s, owner)
}

// outageRun is one run of FuzzStoreOutage: the collectors started on one SQLite file
// (continuation and result store; or a PostgreSQL schema, checkStoreOutageOn), one at a
// time or two at once (each with its continuation.storage directory), on one fake
// clock, and what the run sent them.
type outageRun struct {
	t       *testing.T
	driver  string
	dsn     string
	results store.Store
	ids     []string // the sessions: one, or two interleaved
	turns   []int    // turns sent, per session
	// The environment, carried over to each collector.
	down       bool
	failLoads  int
	held       int
	oneUnsaved bool
	// maxUnsaved is the shards' bound on records waiting as made.
	maxUnsaved int
	// crashes: opRestart with an odd argument kills the collector (flag bit 2).
	crashes bool
	// retries: opSendToo is a sender's retry of the session's last turn sent (flag bit 4).
	retries bool
	// sentAt is, per session, when each of its turns sent started.
	sentAt [][]time.Time
	// clk is every collector's clock.
	clk *testClock
	// cols are the collectors running: one, or two (flag bit 3), each in its slot, with
	// the slot's continuation.storage directory (dirs).
	cols []*outageCollector
	dirs []string
	// Every collector's sink, in start order, the spans sent to each, and how many of
	// their analyses the exporter stored.
	sinks    []*consumertest.TracesSink
	sent     []int
	exported []int
	logs     []*observer.ObservedLogs
	log      []string
}

// outageCollector is a collector of an outageRun: its processor, its connection to the
// database (with the run's outage), its storage extension and its place in the run's
// sinks.
type outageCollector struct {
	p        *agentSessionProcessor
	db       *outageStore
	stopHost func()
	out      int
}

// outageAccepted are the log messages of the losses sessions.md documents as accepted:
// a bound on what a shard keeps for the store (maxLocal(): turns numbered here, claims,
// revisions; §4.7, §4.8, §4.9), the bound on waiting ends, and loads that keep failing
// while the store takes writes (§4.2.2, "The wait ends").
var outageAccepted = []string{
	"indexes of turns numbered while the continuation store was unreachable are dropped",
	"claims of final verdicts counted while the continuation store was unreachable are dropped",
	"analysis revisions not saved to the continuation store are dropped",
	"too many ends wait for it",
	"keeps failing while the store takes writes",
}

// accepted returns the first documented loss the collectors logged, or "".
func (r *outageRun) accepted() string {
	for _, l := range r.logs {
		for _, e := range l.All() {
			for _, m := range outageAccepted {
				if strings.Contains(e.Message, m) {
					return m
				}
			}
		}
	}
	return ""
}

// startCollector starts the next collector of slot at the clock's time, on the run's
// files, with the run's outage and bounds.
func (r *outageRun) startCollector(slot int) {
	t := r.t
	ctx := context.Background()
	cfg := recoveryConfig(r.driver, r.dsn)
	cfg.Continuation.Storage = &keptStorageID
	p, sink, _ := newTestProcessor(t, cfg, nil)
	p.now = r.clk.now
	core, logs := observer.New(zap.WarnLevel)
	p.logger = zap.New(core)
	r.logs = append(r.logs, logs)
	cs, err := store.OpenContinuation(ctx, r.driver, r.dsn)
	require.NoError(t, err)
	rec, ok := cs.(store.Recovery)
	require.True(t, ok)
	db := &outageStore{downContinuation: &downContinuation{ContinuationStore: cs, down: r.down, failLoads: r.failLoads}, rec: rec}
	p.cont = db
	host, stop := storageHost(t, r.dirs[slot])
	p.id = component.NewID(metadata.Type)
	require.NoError(t, p.startKept(ctx, host))
	p.startRecovery(ctx)
	require.NotNil(t, p.recovery)
	p.heldRecords = r.held
	r.maxUnsaved = p.shards[0].maxUnsaved
	c := &outageCollector{p: p, db: db, stopHost: stop, out: len(r.sinks)}
	r.cols[slot] = c
	if r.oneUnsaved {
		oneUnsaved(p)
	}
	r.sinks, r.sent, r.exported = append(r.sinks, sink), append(r.sent, 0), append(r.exported, 0)
	t.Cleanup(func() {
		if r.cols[slot] == c {
			_ = p.shutdown(context.Background())
		}
	})
}

// restart shuts the collector of slot down (as the database is) and starts the next
// one: alone, an hour later (the stopped one's lease ran out, the next one's sweep is
// due); beside another collector, at once.
func (r *outageRun) restart(slot int) {
	c := r.cols[slot]
	require.NoError(r.t, c.p.shutdown(context.Background()))
	c.stopHost()
	r.cols[slot] = nil
	if len(r.cols) == 1 {
		r.clk.advance(time.Hour)
	}
	r.startCollector(slot)
}

// crashable reports whether a kill of c now loses nothing the product must keep: no
// turn open or closed and not handed to a shard, no record, numbered turn, revision,
// claim or kept hold waiting to be saved (shard.pending), no end waiting, and every
// session the shards have open held in the store. A kill loses what only the process's
// memory holds; sessions.md §4.5 ("A collector killed while records wait") and §4.2.2
// accept those losses, which the oracle does not compute: the kill is a step then.
func (r *outageRun) crashable(c *outageCollector) bool {
	p := c.p
	p.mu.Lock()
	open, queued := p.tracker.Stats().OpenTurns, len(p.queued)
	p.mu.Unlock()
	if open > 0 || queued > 0 {
		return false
	}
	for _, sh := range p.shards {
		if sh.pending() || len(sh.waitingEnds) > 0 {
			return false
		}
		for _, st := range sh.sessions {
			if !st.held {
				return false
			}
		}
	}
	return true
}

// crash kills the collector of slot (kill -9): no shutdown, its memory lost, its lease
// left to run out, its held sessions to the next sweep; its continuation.storage file
// and the analyses it emitted (the exporter's persistent queue) stay. The next collector
// starts as after restart.
func (r *outageRun) crash(slot int) {
	c := r.cols[slot]
	if c.p.kept != nil {
		require.NoError(r.t, c.p.kept.Close(context.Background())) // the process's file lock
	}
	require.NoError(r.t, c.db.ContinuationStore.Close())
	c.stopHost()
	r.cols[slot] = nil
	if len(r.cols) == 1 {
		r.clk.advance(time.Hour)
	}
	r.startCollector(slot)
}

// send passes the next turn of session s to the collector of slot, as the pipeline does:
// the batch it returns goes to the next consumer (the sink), with the evaluation spans.
func (r *outageRun) send(slot, s int) {
	i := r.turns[s]
	r.turns[s]++
	r.sentAt[s] = append(r.sentAt[s], r.clk.now())
	r.sendTurn(slot, s, i)
}

// resend passes the spans of session s's turn i (sent before) again to the collector of
// slot, as a sender's retry does: the same spans, times and all.
func (r *outageRun) resend(slot, s, i int) { r.sendTurn(slot, s, i) }

// sendTurn passes turn i of session s, started at sentAt, to the collector of slot.
func (r *outageRun) sendTurn(slot, s, i int) {
	ctx := context.Background()
	user, answer := "And on Monday?", "On Monday: windy."
	if i < len(conversation) {
		user, answer = conversation[i].user, conversation[i].answer
	}
	td := chatTurn(r.ids[s], 100+500*s+i, r.sentAt[s][i], user, answer, true)
	c := r.cols[slot]
	r.sent[c.out] += td.SpanCount()
	out, err := c.p.processTraces(ctx, td)
	require.NoError(r.t, err)
	require.NoError(r.t, r.sinks[c.out].ConsumeTraces(ctx, out))
}

// step advances the clock by d and steps every collector, in slot order.
func (r *outageRun) step(d time.Duration) {
	r.clk.advance(d)
	for _, c := range r.cols {
		c.p.step(context.Background())
	}
}

// export stores, in the order emitted, the analyses every collector emitted that the
// exporter has not stored yet (its queue is drained once the database is up).
func (r *outageRun) export() {
	for i, sink := range r.sinks {
		r.exported[i] = exportAnalyses(r.t, r.results, sink, r.exported[i])
	}
}

// The environment: the database's state is every collector's; the settings are each
// collector's.
func (r *outageRun) setDown(down bool) {
	r.down = down
	for _, c := range r.cols {
		c.db.down = down
	}
}

func (r *outageRun) setFailLoads(n int) {
	r.failLoads = n
	for _, c := range r.cols {
		c.db.failLoads = n
	}
}

func (r *outageRun) setFailHolds(n int) {
	for _, c := range r.cols {
		c.db.failHolds = n
	}
}

func (r *outageRun) setHeld(n int) {
	r.held = n
	for _, c := range r.cols {
		c.p.heldRecords = n
	}
}

func (r *outageRun) setOneUnsaved(one bool) {
	r.oneUnsaved = one
	for _, c := range r.cols {
		for _, sh := range c.p.shards {
			sh.maxUnsaved = 1
			if !one {
				sh.maxUnsaved = r.maxUnsaved
			}
		}
	}
}

// Operations of FuzzStoreOutage: an input byte's low four bits are the operation, its
// high four its argument.
const (
	opSend        = 0  // the next turn of session arg&1 (to collector arg>>1&1 of two), then it settles (3 s, a step)
	opSendToo     = 1  // as opSend; with flag bit 4, a sender's retry of the spans of session arg&1's turn arg>>2 before its last one sent (collector arg>>1&1), then a settle (3 s, a step)
	opSendOpen    = 2  // the next turn of session arg&1 (collector arg>>1&1), 1 s later, no step
	opAdvance     = 3  // arg&3: 3 s (settle), unsavedRetry, 2 min (the sessions end), 10 min; a step
	opDown        = 4  // the database goes down
	opUp          = 5  // the database comes back
	opFailLoads   = 6  // loads fail: arg&1: the next one only (a blip), else every one
	opLoadsWork   = 7  // loads succeed
	opFailHold    = 8  // the next hold write fails
	opHeld        = 9  // heldRecords: arg%3: 2, 3, unbounded
	opUnsaved     = 10 // arg&1: one record waiting a shard (oneUnsaved), else the default bound
	opRestart     = 11 // shutdown, and the next collector (an hour later when alone); with flag bit 2 and arg&1, a crash
	opExport      = 12 // the exporter stores the analyses queued (when the database is up)
	opStep        = 13 // a step, no time passes
	opSendSettled = 14 // as opSend
	opAdvanceToo  = 15 // as opAdvance
)

// Limits that keep a run fast.
const (
	outageMaxOps   = 96
	outageMaxTurns = 40
)

// FuzzStoreOutage: the input drives one conversation (or two interleaved, on one shard
// or two; the first byte: bit 0 two sessions, bit 1 on one shard) through database
// outages, failed loads and hold writes, released records (heldRecords), the bound on
// records waiting (oneUnsaved) and restarts on the same SQLite file and
// continuation.storage directory, a collector at a time. At the end the database is up,
// the last collector runs until every session ended and its sweep ran, and the exporter
// stores every analysis emitted, in emission order. The product rule
// (docs/decisions/sessions.md §4, result-durability.md §6): every turn sent is in the
// result store exactly once, at its index, with no gap; and every span sent to a
// collector came out of it.
//
// Two flags widen it (inputs without them run as before). Bit 2, crashes: an opRestart
// with an odd argument kills the collector (kill -9, outageRun.crash: no shutdown, its
// memory lost, its lease left to run out; its continuation.storage file and the
// analyses it emitted, in the exporter's persistent queue, stay) and the next collector
// starts in its place; the dead one's held sessions go to a sweep (recover.go). The
// oracle stays exact: a kill happens only when it loses nothing the product must keep
// (outageRun.crashable: no turn open in memory, nothing waiting to be saved, no end
// waiting, every open session held), else the operation is a step; the losses of a kill
// with records waiting (sessions.md §4.5, "A collector killed while records wait") and
// of an unheld session (§4.2.2) are documented and not checked. Bit 3, two collectors
// live at once on the one database and clock, each with its continuation.storage (the
// tier-1 load balancer of §4.5 routes a session's turns to either): a send's argument
// bit 1 chooses the collector, as does a restart's or a crash's (the next one starts at
// once, beside the other); time, the database and the settings are both collectors'.
// Bit 4, retries: opSendToo passes a turn sent before again, its spans and times as they
// were (a sender's retry of a batch whose answer it lost), to either collector: late
// spans after the turn's verdict or the session's end, or the same turn twice before.
func FuzzStoreOutage(f *testing.F) {
	for _, s := range outageSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStoreOutage(t, data)
	})
}

func checkStoreOutage(t *testing.T, data []byte) {
	checkStoreOutageOn(t, "sqlite", "", data)
}

// checkStoreOutageOn is checkStoreOutage on the continuation and result store of driver
// at dsn ("": a new SQLite file), which it is the run's alone.
func checkStoreOutageOn(t *testing.T, driver, dsn string, data []byte) {
	if len(data) == 0 {
		return
	}
	r := newOutageRunOn(t, data[0], driver, dsn)
	r.run(data[1:])
	r.finish()
}

// run applies the operations ops (at most outageMaxOps of them).
func (r *outageRun) run(ops []byte) {
	if len(ops) > outageMaxOps {
		ops = ops[:outageMaxOps]
	}
	sent := 0
	for _, b := range ops {
		op, arg := b&0x0f, int(b>>4)
		s := arg & 1 % len(r.ids)
		slot := arg >> 1 & 1 % len(r.cols)
		on := ""
		if len(r.cols) > 1 {
			on = fmt.Sprintf(" on %d", slot)
		}
		switch op {
		case opSendToo:
			if !r.retries {
				op = opSend
				break
			}
			if i := r.turns[s] - 1 - arg>>2; i >= 0 {
				r.resend(slot, s, i)
				r.step(3 * time.Second)
				r.log = append(r.log, fmt.Sprintf("resend %s#%d%s", r.ids[s], i, on))
			}
			continue
		}
		switch op {
		case opSend, opSendSettled:
			if sent >= outageMaxTurns {
				continue
			}
			sent++
			r.send(slot, s)
			r.step(3 * time.Second)
			r.log = append(r.log, fmt.Sprintf("send %s#%d%s", r.ids[s], r.turns[s]-1, on))
		case opSendOpen:
			if sent >= outageMaxTurns {
				continue
			}
			sent++
			r.send(slot, s)
			r.clk.advance(time.Second)
			r.log = append(r.log, fmt.Sprintf("send-open %s#%d%s", r.ids[s], r.turns[s]-1, on))
		case opAdvance, opAdvanceToo:
			d := []time.Duration{3 * time.Second, unsavedRetry, 2 * time.Minute, 10 * time.Minute}[arg&3]
			r.step(d)
			r.log = append(r.log, fmt.Sprintf("advance %v", d))
		case opDown:
			r.setDown(true)
			r.log = append(r.log, "down")
		case opUp:
			r.setDown(false)
			r.log = append(r.log, "up")
		case opFailLoads:
			n := 1 << 30
			if arg&1 != 0 {
				n = 1
			}
			r.setFailLoads(n)
			r.log = append(r.log, fmt.Sprintf("fail-loads %d", n))
		case opLoadsWork:
			r.setFailLoads(0)
			r.log = append(r.log, "loads-work")
		case opFailHold:
			r.setFailHolds(1)
			r.log = append(r.log, "fail-hold")
		case opHeld:
			n := []int{2, 3, 1 << 30}[arg%3]
			r.setHeld(n)
			r.log = append(r.log, fmt.Sprintf("held %d", n))
		case opUnsaved:
			r.setOneUnsaved(arg&1 != 0)
			r.log = append(r.log, fmt.Sprintf("one-unsaved %v", arg&1 != 0))
		case opRestart:
			switch {
			case !r.crashes || arg&1 == 0:
				r.restart(slot)
				r.log = append(r.log, "restart"+on)
			case r.crashable(r.cols[slot]):
				r.crash(slot)
				r.log = append(r.log, "crash"+on)
			default:
				r.step(0)
				r.log = append(r.log, "step (no crash"+on+": it would lose what it holds)")
			}
		case opExport:
			if !r.down {
				r.export()
				r.log = append(r.log, "export")
			}
		case opStep:
			r.step(0)
			r.log = append(r.log, "step")
		}
	}
}

// newOutageRun starts the collectors of a run with flags (FuzzStoreOutage's first byte)
// on a new SQLite file and continuation.storage directories, and names its sessions.
func newOutageRun(t *testing.T, flags byte) *outageRun {
	return newOutageRunOn(t, flags, "sqlite", "")
}

// newOutageRunOn is newOutageRun on the store of driver at dsn ("": a new SQLite file).
func newOutageRunOn(t *testing.T, flags byte, driver, dsn string) *outageRun {
	// Not t.TempDir: a seed's directory name holds '#', which the store refuses.
	dir, err := os.MkdirTemp("", "fuzz-outage")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if dsn == "" {
		dsn = filepath.Join(dir, "agenteval.db")
	}
	r := &outageRun{t: t, driver: driver, dsn: dsn, held: 2, clk: newTestClock(), crashes: flags&4 != 0, retries: flags&16 != 0}
	collectors := 1
	if flags&8 != 0 {
		collectors = 2
	}
	r.cols = make([]*outageCollector, collectors)
	for i := range collectors {
		// The first slot's directory keeps its name: a corpus input runs as before.
		r.dirs = append(r.dirs, filepath.Join(dir, "storage"+strings.Repeat("-b", i)))
		require.NoError(t, os.Mkdir(r.dirs[i], 0o700))
	}
	r.results = resultStore(t, r.driver, r.dsn)
	for i := range collectors {
		r.startCollector(i)
	}
	r.ids = []string{"outage-a"}
	if flags&1 != 0 {
		other := "outage-b"
		if flags&2 != 0 {
			other = sameShard(r.cols[0].p, "outage-a")
		}
		r.ids = append(r.ids, other)
	}
	r.turns, r.sentAt = make([]int, len(r.ids)), make([][]time.Time, len(r.ids))
	t.Cleanup(r.report)
	return r
}

// report logs the run's operations and, when it failed, what each collector logged
// and the analyses it emitted.
func (r *outageRun) report() {
	t := r.t
	t.Logf("ops: %s", strings.Join(r.log, ", "))
	if !t.Failed() {
		return
	}
	for i, l := range r.logs {
		for _, e := range l.All() {
			t.Logf("collector %d log: %s %v", i, e.Message, e.ContextMap())
		}
	}
	for i, sink := range r.sinks {
		for _, a := range analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession]) {
			t.Logf("collector %d: %s revision %d partial %v end %s turns %v", i, a.SessionID, a.AnalysisRevision, a.Partial, a.EndReason, turnTraces(a))
		}
	}
}

// finish brings the database back, lets the last collectors run until every session
// ended and their sweeps ran, stores every analysis and checks the product rule.
func (r *outageRun) finish() {
	t := r.t
	r.setDown(false)
	r.setFailLoads(0)
	r.setFailHolds(0)
	for range 3 {
		r.step(unsavedRetry)
	}
	for range 3 {
		r.step(2 * time.Minute)
	}
	r.step(10 * time.Minute) // a sweep
	r.step(unsavedRetry)
	for slot, c := range r.cols {
		for i, sh := range c.p.shards {
			require.Empty(t, sh.waitingEnds, "collector %d shard %d: no end waits", slot, i)
			require.False(t, sh.pending(), "collector %d shard %d: nothing left to save (unsaved %d, local %d, revisions %d, claims %d)",
				slot, i, len(sh.unsaved), len(sh.local), len(sh.revisions), len(sh.claims))
		}
	}
	r.export()
	if m := r.accepted(); m != "" {
		t.Logf("a documented loss was logged (%q): the turns are not checked", m)
		r.checkSpans()
		return
	}
	for s, id := range r.ids {
		if r.turns[s] == 0 {
			continue
		}
		r.checkStages(id)
		if len(r.cols) == 1 {
			assertWhole(t, r.results, id, r.turns[s])
			continue
		}
		// Two collectors number the turns in the order the store allocates the indexes
		// (the order they closed in, each collector's): a turn that closed on one during
		// an outage can get a higher index than a later turn of the other, which the
		// result store lists after it (sessions.md §4.5, conversation order). Each index
		// 0..n-1 once, each turn once.
		a, err := r.results.GetAnalysis(context.Background(), id)
		require.NoError(t, err)
		idx, traces := []int{}, map[string]int{}
		for _, tr := range a.TurnResults {
			idx = append(idx, tr.TurnIndex)
			traces[tr.TraceID]++
		}
		slices.Sort(idx)
		want := make([]int, r.turns[s])
		for i := range want {
			want[i] = i
		}
		assert.Equal(t, want, idx, "%s: every turn stored, at indexes 0..%d: %v", id, r.turns[s]-1, turnTraces(*a))
		assert.Len(t, traces, r.turns[s], "%s: each turn once", id)
	}
	r.checkSpans()
}

// checkStages checks that no turn of session id has, in the result store, a verdict of
// a lower stage than its record in the continuation store (evaluation.VerdictStage: a
// record is never replaced by one of a lower stage there): an analysis exported late,
// older or rebuilt from less, never takes a turn's verdict back (docs/decisions/sessions.md
// §4.5).
func (r *outageRun) checkStages(id string) {
	t := r.t
	a, err := r.results.GetAnalysis(context.Background(), id)
	require.NoError(t, err)
	stages := map[evaluation.TurnID]int{}
	for _, rec := range storedContinuation(t, r.driver, r.dsn, id).Turns {
		stages[rec.Result.ID()] = evaluation.VerdictStage(&rec)
	}
	for _, tr := range a.TurnResults {
		if want, ok := stages[tr.ID()]; ok {
			assert.GreaterOrEqual(t, tr.VerdictStage(), want, "%s: turn %d (%s): the stored verdict's stage, not below its record's",
				id, tr.TurnIndex, tr.TraceID[:min(8, len(tr.TraceID))])
		}
	}
}

// turnTraces lists an analysis' turns as index:trace (the trace id's first eight digits).
func turnTraces(a evaluation.Analysis) []string {
	out := make([]string, 0, len(a.TurnResults))
	for _, tr := range a.TurnResults {
		out = append(out, fmt.Sprintf("%d:%s", tr.TurnIndex, tr.TraceID[:min(8, len(tr.TraceID))]))
	}
	return out
}

// checkSpans checks that every span sent to a collector came out of it, once.
func (r *outageRun) checkSpans() {
	t := r.t
	for i, sink := range r.sinks {
		out := 0
		for _, td := range sink.AllTraces() {
			out += countSpans(td, false)
		}
		require.Equal(t, r.sent[i], out, "collector %d: every span sent came out, once", i)
	}
}

// outageSeed encodes operations for FuzzStoreOutage: flags (bit 0 two sessions, bit 1
// on one shard, bit 2 crashes, bit 3 two collectors, bit 4 retries), then each operation
// with its argument.
func outageSeed(flags byte, ops ...byte) []byte { return append([]byte{flags}, ops...) }

// o is an operation with its argument.
func o(op, arg byte) byte { return op | arg<<4 }

func outageSeeds() [][]byte {
	rep := func(n int, b ...byte) []byte {
		var out []byte
		for range n {
			out = append(out, b...)
		}
		return out
	}
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	twoStored := cat(rep(2, o(opSend, 0)), []byte{o(opAdvance, 2), o(opExport, 0)})
	return [][]byte{
		// TestWaitingEndWithFailedHoldOnlyWrite: ten turns in one batch whose hold fails
		// alone, loads fail, the end waits through the shutdown; the next collector
		// recovers it.
		outageSeed(0, cat([]byte{o(opHeld, 0), o(opFailHold, 0)}, rep(10, o(opSendOpen, 0)),
			[]byte{o(opAdvance, 0), o(opFailLoads, 0), o(opAdvance, 2), o(opRestart, 0)})...),
		// TestWaitingEndWithFailedHoldRecovered, hold-blip and outage-at-first-turn.
		outageSeed(0, cat([]byte{o(opHeld, 0), o(opFailHold, 0)}, rep(10, o(opSend, 0)),
			[]byte{o(opDown, 0), o(opAdvance, 2), o(opRestart, 0)})...),
		outageSeed(0, cat([]byte{o(opHeld, 0), o(opDown, 0), o(opSend, 0), o(opUp, 0)}, rep(9, o(opSend, 0)),
			[]byte{o(opDown, 0), o(opAdvance, 2), o(opRestart, 0)})...),
		// TestRecordsDroppedWhileEndWaits: held 2 or unbounded, the database back, or
		// a shutdown first.
		outageSeed(0, cat([]byte{o(opHeld, 0), o(opUnsaved, 1)}, rep(10, o(opSend, 0)), []byte{o(opDown, 0)}, rep(3, o(opSend, 0)),
			[]byte{o(opAdvance, 2), o(opUp, 0), o(opAdvance, 1), o(opExport, 0), o(opSend, 0), o(opAdvance, 2)})...),
		outageSeed(0, cat([]byte{o(opHeld, 0), o(opUnsaved, 1)}, rep(10, o(opSend, 0)), []byte{o(opDown, 0)}, rep(3, o(opSend, 0)),
			[]byte{o(opAdvance, 2), o(opRestart, 0), o(opUp, 0), o(opExport, 0)})...),
		outageSeed(0, cat([]byte{o(opHeld, 2), o(opUnsaved, 1)}, rep(10, o(opSend, 0)), []byte{o(opDown, 0)}, rep(3, o(opSend, 0)),
			[]byte{o(opAdvance, 2), o(opRestart, 0), o(opUp, 0), o(opExport, 0)})...),
		// TestStoreDownAcrossShutdownThenContinued / TestStoreDownAcrossRestartStillDown.
		outageSeed(0, cat(twoStored, []byte{o(opDown, 0), o(opSend, 0), o(opAdvance, 2), o(opRestart, 0), o(opAdvance, 2), o(opSend, 0),
			o(opAdvance, 2), o(opUp, 0), o(opAdvance, 1), o(opSend, 0), o(opAdvance, 2)})...),
		// Two sessions on one shard, outages and restarts.
		outageSeed(3, cat(rep(3, o(opSend, 0), o(opSend, 1)), []byte{o(opDown, 0)}, rep(3, o(opSend, 1), o(opSend, 0)),
			[]byte{o(opAdvance, 2), o(opRestart, 0), o(opUp, 0), o(opSend, 0), o(opDown, 0), o(opSend, 1), o(opAdvance, 2), o(opRestart, 0)})...),
		// Two sessions on two shards, loads failing while released records are taken back.
		outageSeed(1, cat(rep(6, o(opSend, 0), o(opSend, 1)), []byte{o(opFailLoads, 0), o(opAdvance, 2), o(opSend, 1), o(opLoadsWork, 0),
			o(opAdvance, 1), o(opFailLoads, 1), o(opAdvance, 2), o(opExport, 0), o(opRestart, 0)})...),
		// Crashes: three turns stored, a crash; the session continues on the next
		// collector (before the sweep), or is recovered by its sweep.
		outageSeed(4, cat(rep(3, o(opSend, 0)), []byte{o(opRestart, 1), o(opSend, 0), o(opAdvance, 2), o(opExport, 0)})...),
		outageSeed(4, cat(rep(3, o(opSend, 0)), []byte{o(opExport, 0), o(opRestart, 1), o(opAdvance, 3), o(opSend, 0), o(opAdvance, 2)})...),
		// A crash refused while a turn waits to be saved (the database down), then done
		// once it is saved; released records (held 2) recovered.
		outageSeed(4, cat([]byte{o(opHeld, 0)}, rep(5, o(opSend, 0)), []byte{o(opDown, 0), o(opSend, 0), o(opRestart, 1), o(opUp, 0),
			o(opAdvance, 1), o(opRestart, 1), o(opAdvance, 3), o(opExport, 0)})...),
		// Two collectors: a session's turns alternate between them, through an outage.
		outageSeed(8, cat(rep(3, o(opSend, 0), o(opSend, 2)), []byte{o(opDown, 0), o(opSend, 2), o(opSend, 0), o(opAdvance, 2),
			o(opUp, 0), o(opAdvance, 1), o(opSend, 0), o(opSend, 2), o(opAdvance, 2), o(opExport, 0)})...),
		// Two collectors, two sessions, released records, a restart of one.
		outageSeed(9, cat([]byte{o(opHeld, 0)}, rep(4, o(opSend, 0), o(opSend, 3), o(opSend, 2), o(opSend, 1)),
			[]byte{o(opRestart, 2), o(opSend, 2), o(opDown, 0), o(opSend, 1), o(opAdvance, 2), o(opUp, 0), o(opAdvance, 1)})...),
		// Two collectors, one crashes holding the session; the other continues it, or
		// its sweep recovers it.
		outageSeed(12, cat(rep(3, o(opSend, 0), o(opSend, 2)), []byte{o(opRestart, 1), o(opSend, 2), o(opAdvance, 2), o(opExport, 0)})...),
		outageSeed(12, cat(rep(3, o(opSend, 2), o(opSend, 0)), []byte{o(opRestart, 1), o(opAdvance, 3), o(opSend, 0), o(opAdvance, 2)})...),
		// Two collectors, two sessions on one shard, an outage, a crash of each.
		// The turns after the outage hold the sessions again (a hold failed with the
		// database down); a kill before them is a step.
		outageSeed(15, cat(rep(2, o(opSend, 0), o(opSend, 3)), []byte{o(opDown, 0), o(opSend, 1), o(opSend, 2), o(opUp, 0), o(opAdvance, 1),
			o(opRestart, 1), o(opSend, 1), o(opSend, 2), o(opRestart, 1), o(opSend, 0), o(opRestart, 3), o(opAdvance, 2), o(opExport, 0)})...),
		// Retries: a turn's spans again, before and after its follow-up and the
		// session's end, through an outage and a restart.
		outageSeed(16, cat(rep(2, o(opSend, 0)), []byte{o(opSendToo, 0), o(opSend, 0), o(opDown, 0), o(opSendToo, 0), o(opAdvance, 2),
			o(opRestart, 0), o(opUp, 0), o(opSendToo, 4), o(opAdvance, 2), o(opSend, 0), o(opSendToo, 0)})...),
		// Two collectors: one is killed holding the session, the other gets a retry of
		// its last turn while its sweep claims it (TestClaimedWhileOpenThenLateSpansOnly).
		outageSeed(28, cat(rep(3, o(opSend, 2)), []byte{o(opRestart, 3)}, rep(4, o(opAdvance, 1)), []byte{o(opSendToo, 8)}, rep(4, o(opAdvance, 1)),
			[]byte{o(opAdvance, 2), o(opExport, 0)})...),
	}
}
