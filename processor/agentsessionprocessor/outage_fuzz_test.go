// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

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

// outageRun is one run of FuzzStoreOutage: the collectors started one after the other
// on one SQLite file (continuation and result store) and one continuation.storage
// directory, and what the run sent them.
type outageRun struct {
	t       *testing.T
	dsn     string
	dir     string
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
	// The current collector.
	p        *agentSessionProcessor
	sink     *consumertest.TracesSink
	clk      *testClock
	db       *outageStore
	stopHost func()
	// Every collector's sink, in start order, the spans sent to each, and how many of
	// their analyses the exporter stored.
	sinks    []*consumertest.TracesSink
	sent     []int
	exported []int
	logs     []*observer.ObservedLogs
	log      []string
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

// startCollector starts the next collector on the run's files at now, with the run's
// outage and bounds.
func (r *outageRun) startCollector(now time.Time) {
	t := r.t
	ctx := context.Background()
	cfg := recoveryConfig("sqlite", r.dsn)
	cfg.Continuation.Storage = &keptStorageID
	p, sink, clk := newTestProcessor(t, cfg, nil)
	clk.t = now
	core, logs := observer.New(zap.WarnLevel)
	p.logger = zap.New(core)
	r.logs = append(r.logs, logs)
	cs, err := store.OpenContinuation(ctx, "sqlite", r.dsn)
	require.NoError(t, err)
	rec, ok := cs.(store.Recovery)
	require.True(t, ok)
	db := &outageStore{downContinuation: &downContinuation{ContinuationStore: cs, down: r.down, failLoads: r.failLoads}, rec: rec}
	p.cont = db
	host, stop := storageHost(t, r.dir)
	p.id = component.NewID(metadata.Type)
	require.NoError(t, p.startKept(ctx, host))
	p.startRecovery(ctx)
	require.NotNil(t, p.recovery)
	p.heldRecords = r.held
	r.maxUnsaved = p.shards[0].maxUnsaved
	if r.oneUnsaved {
		oneUnsaved(p)
	}
	r.p, r.sink, r.clk, r.db, r.stopHost = p, sink, clk, db, stop
	r.sinks, r.sent, r.exported = append(r.sinks, sink), append(r.sent, 0), append(r.exported, 0)
	t.Cleanup(func() {
		if r.p == p {
			_ = p.shutdown(context.Background())
		}
	})
}

// restart shuts the collector down (as the database is) and starts the next one an
// hour later: the stopped one's lease ran out, the next one's sweep is due.
func (r *outageRun) restart() {
	require.NoError(r.t, r.p.shutdown(context.Background()))
	r.stopHost()
	now := r.clk.now()
	r.p = nil
	r.startCollector(now.Add(time.Hour))
}

// send passes the next turn of session s to the collector, as the pipeline does: the
// batch it returns goes to the next consumer (the sink), with the evaluation spans.
func (r *outageRun) send(s int) {
	ctx := context.Background()
	i := r.turns[s]
	r.turns[s]++
	user, answer := "And on Monday?", "On Monday: windy."
	if i < len(conversation) {
		user, answer = conversation[i].user, conversation[i].answer
	}
	td := chatTurn(r.ids[s], 100+500*s+i, r.clk.now(), user, answer, true)
	r.sent[len(r.sent)-1] += td.SpanCount()
	out, err := r.p.processTraces(ctx, td)
	require.NoError(r.t, err)
	require.NoError(r.t, r.sink.ConsumeTraces(ctx, out))
}

func (r *outageRun) step(d time.Duration) {
	r.clk.advance(d)
	r.p.step(context.Background())
}

// export stores, in the order emitted, the analyses every collector emitted that the
// exporter has not stored yet (its queue is drained once the database is up).
func (r *outageRun) export() {
	for i, sink := range r.sinks {
		r.exported[i] = exportAnalyses(r.t, r.results, sink, r.exported[i])
	}
}

func (r *outageRun) setDown(down bool) {
	r.down = down
	r.db.down = down
}

func (r *outageRun) setFailLoads(n int) {
	r.failLoads = n
	r.db.failLoads = n
}

func (r *outageRun) setHeld(n int) {
	r.held = n
	r.p.heldRecords = n
}

func (r *outageRun) setOneUnsaved(one bool) {
	r.oneUnsaved = one
	for _, sh := range r.p.shards {
		sh.maxUnsaved = 1
		if !one {
			sh.maxUnsaved = r.maxUnsaved
		}
	}
}

// Operations of FuzzStoreOutage: an input byte's low four bits are the operation, its
// high four its argument.
const (
	opSend        = 0  // the next turn of session arg&1, then it settles (3 s, a step)
	opSendToo     = 1  // as opSend
	opSendOpen    = 2  // the next turn of session arg&1, 1 s later, no step
	opAdvance     = 3  // arg&3: 3 s (settle), unsavedRetry, 2 min (the sessions end), 10 min; a step
	opDown        = 4  // the database goes down
	opUp          = 5  // the database comes back
	opFailLoads   = 6  // loads fail: arg&1: the next one only (a blip), else every one
	opLoadsWork   = 7  // loads succeed
	opFailHold    = 8  // the next hold write fails
	opHeld        = 9  // heldRecords: arg%3: 2, 3, unbounded
	opUnsaved     = 10 // arg&1: one record waiting a shard (oneUnsaved), else the default bound
	opRestart     = 11 // shutdown, and the next collector an hour later
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
func FuzzStoreOutage(f *testing.F) {
	for _, s := range outageSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStoreOutage(t, data)
	})
}

func checkStoreOutage(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	r := startOutageRun(t, data[0])
	r.run(data[1:])
	r.finish()
}

// startOutageRun starts a run's first collector, with its sessions as flags says (bit 0
// two sessions, bit 1 on one shard).
func startOutageRun(t *testing.T, flags byte) *outageRun {
	// Not t.TempDir: a seed's directory name holds '#', which the store refuses.
	dir, err := os.MkdirTemp("", "fuzz-outage")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	r := &outageRun{t: t, dsn: filepath.Join(dir, "agenteval.db"), dir: filepath.Join(dir, "storage"), held: 2}
	require.NoError(t, os.Mkdir(r.dir, 0o700))
	r.results = resultStore(t, "sqlite", r.dsn)
	r.startCollector(newTestClock().now())
	r.ids = []string{"outage-a"}
	if flags&1 != 0 {
		other := "outage-b"
		if flags&2 != 0 {
			other = sameShard(r.p, "outage-a")
		}
		r.ids = append(r.ids, other)
	}
	r.turns = make([]int, len(r.ids))
	return r
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
		switch op {
		case opSend, opSendToo, opSendSettled:
			if sent >= outageMaxTurns {
				continue
			}
			sent++
			r.send(s)
			r.step(3 * time.Second)
			r.log = append(r.log, fmt.Sprintf("send %s#%d", r.ids[s], r.turns[s]-1))
		case opSendOpen:
			if sent >= outageMaxTurns {
				continue
			}
			sent++
			r.send(s)
			r.clk.advance(time.Second)
			r.log = append(r.log, fmt.Sprintf("send-open %s#%d", r.ids[s], r.turns[s]-1))
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
			r.db.failHolds = 1
			r.log = append(r.log, "fail-hold")
		case opHeld:
			n := []int{2, 3, 1 << 30}[arg%3]
			r.setHeld(n)
			r.log = append(r.log, fmt.Sprintf("held %d", n))
		case opUnsaved:
			r.setOneUnsaved(arg&1 != 0)
			r.log = append(r.log, fmt.Sprintf("one-unsaved %v", arg&1 != 0))
		case opRestart:
			r.restart()
			r.log = append(r.log, "restart")
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

// finish brings the database back, lets the last collector run until every session
// ended and its sweep ran, stores every analysis and checks the product rule.
func (r *outageRun) finish() {
	t := r.t
	r.setDown(false)
	r.setFailLoads(0)
	r.db.failHolds = 0
	for range 3 {
		r.step(unsavedRetry)
	}
	for range 3 {
		r.step(2 * time.Minute)
	}
	r.step(10 * time.Minute) // a sweep
	r.step(unsavedRetry)
	t.Logf("ops: %s", strings.Join(r.log, ", "))
	for i, sh := range r.p.shards {
		require.Empty(t, sh.waitingEnds, "shard %d: no end waits", i)
		require.False(t, sh.pending(), "shard %d: nothing left to save (unsaved %d, local %d, revisions %d, claims %d)",
			i, len(sh.unsaved), len(sh.local), len(sh.revisions), len(sh.claims))
	}
	r.export()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for i, l := range r.logs {
			for _, e := range l.All() {
				t.Logf("collector %d log: %s %v", i, e.Message, e.ContextMap())
			}
		}
	})
	for i, sink := range r.sinks {
		for _, a := range analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession]) {
			t.Logf("collector %d: %s revision %d partial %v end %s turns %v", i, a.SessionID, a.AnalysisRevision, a.Partial, a.EndReason, turnIndexes(a))
		}
	}
	if m := r.accepted(); m != "" {
		t.Logf("a documented loss was logged (%q): the turns are not checked", m)
		r.checkSpans()
		return
	}
	for s, id := range r.ids {
		if r.turns[s] == 0 {
			continue
		}
		assertWhole(t, r.results, id, r.turns[s])
	}
	r.checkSpans()
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
// on one shard), then each operation with its argument.
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
	}
}
