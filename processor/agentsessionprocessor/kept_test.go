// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/storagetest"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

var keptStorageID = storagetest.FileStorageID

// storageHost is a host whose extensions are contrib's file_storage on dir, as
// config.yaml's file_storage/agenteval; the extension is shut down at cleanup or by the
// returned func (a process that stops).
func storageHost(t *testing.T, dir string) (component.Host, func()) {
	t.Helper()
	ext, stop := storagetest.StartFileStorage(t, dir)
	return extHost{ext: map[component.ID]component.Component{keptStorageID: ext}}, stop
}

// extHost is a component.Host with the given extensions.
type extHost struct {
	ext map[component.ID]component.Component
}

func (h extHost) GetExtensions() map[component.ID]component.Component { return h.ext }

// keptProcessor is downProcessor with continuation.storage on host (nil: without it).
func keptProcessor(t *testing.T, driver, dsn string, host component.Host) (p *agentSessionProcessor, sink *consumertest.TracesSink, clk *testClock, db *downContinuation) {
	t.Helper()
	cfg := recoveryConfig(driver, dsn)
	if host != nil {
		cfg.Continuation.Storage = &keptStorageID
	}
	p, sink, clk = startedProcessor(t, cfg)
	p.id = component.NewID(metadata.Type)
	require.NoError(t, p.startKept(context.Background(), host))
	db = &downContinuation{ContinuationStore: p.cont}
	p.cont = db
	return p, sink, clk, db
}

// stoppedWithTurnKept runs a first collector with continuation.storage on host: session
// id's turns 0 and 1 are stored in results, then turn 2 closes, with the database up and
// the session left open (open), or with the database down and the session idle after it;
// the collector shuts down with the database down. It returns the collector's sink and
// the analyses emitted after the stored one (waiting in the exporter's queue).
func stoppedWithTurnKept(t *testing.T, driver, dsn string, results store.Store, host component.Host, id string, open bool) (*consumertest.TracesSink, []evaluation.Analysis) {
	t.Helper()
	ctx := context.Background()
	p, sink, clk, db := keptProcessor(t, driver, dsn, host)
	twoTurnsStored(t, p, clk, sink, results, id)
	if open {
		sendCounted(t, p, clk, id, 2)
		db.down = true
	} else {
		db.down = true
		sendCounted(t, p, clk, id, 2)
		clk.advance(2 * time.Minute)
		p.step(ctx)
	}
	require.NoError(t, p.shutdown(ctx))
	queued := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])[1:]
	require.Len(t, queued, 1)
	return sink, queued
}

// TestStoreDownAcrossRestartThenBack: the database goes down as a session stored with
// turns 0 and 1 continues with turn 2, which the collector numbers itself; the session
// goes idle (its analysis, a part, waits in the exporter's queue) and the collector
// stops with the database still down. It restarts, the database comes back, and the
// session continues with turn 3 before the queued part is stored; the part is stored
// before or after turn 3's analysis. With continuation.storage the records and turn
// numbers that could not be saved at shutdown are taken back at start: both stores
// must hold the four turns once each, in conversation order, turn 2 with the verdict
// turn 3's message gives it, and each turn counted once.
//
// Without it (the "before" runs, and a collector configured without it), turn 3 got
// turn 2's index: stored first, its analysis put turn 3 at index 2 and the part then
// turn 2 after it; stored after the part, its analysis did not fit the stored turns
// and was skipped as a stale part, losing turn 3 (docs/decisions/sessions.md §4.8).
func TestStoreDownAcrossRestartThenBack(t *testing.T) {
	for _, partFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("part_stored_first=%v", partFirst), func(t *testing.T) {
			onStores(t, func(t *testing.T, driver, dsn string) {
				storeDownAcrossRestartThenBack(t, driver, dsn, partFirst)
			})
		})
	}
}

func storeDownAcrossRestartThenBack(t *testing.T, driver, dsn string, partFirst bool) {
	ctx := context.Background()
	dir := t.TempDir()
	results := resultStore(t, driver, dsn)
	host, stopHost := storageHost(t, dir)
	const id = "down-restart-1"
	sink, queued := stoppedWithTurnKept(t, driver, dsn, results, host, id, false) // queued: the part
	require.Len(t, queued[0].TurnResults, 1)
	ks := readKept(t, host)
	require.Len(t, ks.Records, 1, "turn 2's record, refused at shutdown, kept")
	assert.Equal(t, []store.TurnKey{store.KeyOf(id, &queued[0].TurnResults[0])}, ks.Local, "and its turn number")
	stopHost()

	host2, _ := storageHost(t, dir)
	p2, sink2, clk2, _ := keptProcessor(t, driver, dsn, host2)
	clk2.advance(time.Hour)
	if partFirst {
		require.NoError(t, results.SaveAnalysis(ctx, &queued[0]))
	}
	sendCounted(t, p2, clk2, id, 3)
	clk2.advance(2 * time.Minute)
	p2.step(ctx)
	exportAnalyses(t, results, sink2, 0)
	if !partFirst {
		require.NoError(t, results.SaveAnalysis(ctx, &queued[0]))
	}

	a := assertWhole(t, results, id, 4)
	require.Len(t, a.TurnResults, 4)
	for i, user := range []string{conversation[0].user, conversation[1].user, conversation[2].user, "And on Monday?"} {
		assert.Equal(t, user, a.TurnResults[i].UserMessage, "turn %d in conversation order", i)
	}
	c := assertContinuationWhole(t, driver, dsn, id, 4)
	assertSameTurns(t, a, c)
	assert.False(t, c.Turns[2].NoFollowUp, "turn 2's verdict has turn 3's message")
	assertStanding(t, assertEachTraceCountedOnce(t, 4, sink, sink2), a, turnTraceKey)

	require.NoError(t, p2.shutdown(ctx))
	assert.Equal(t, keptState{}, readKept(t, host2), "a shutdown that saved everything leaves nothing kept")
}

// readKept returns what the processor of keptProcessor kept on host (zero: nothing).
func readKept(t *testing.T, host component.Host) keptState {
	t.Helper()
	cl := keptClient(t, host)
	defer func() { require.NoError(t, cl.Close(context.Background())) }()
	raw, err := cl.Get(context.Background(), keptKey)
	require.NoError(t, err)
	var ks keptState
	if raw != nil {
		require.NoError(t, json.Unmarshal(raw, &ks))
	}
	return ks
}

// TestKeptValueThatDoesNotDecode: a kept value that is not this collector's (damaged, or
// another version) is logged and not restored; the processor starts, and its shutdown
// writes the key again.
func TestKeptValueThatDoesNotDecode(t *testing.T) {
	ctx := context.Background()
	host, _ := storageHost(t, t.TempDir())
	for _, bad := range []string{"not json", `{"version":99,"local":[{"session_id":"s","trace_id":"t"}]}`, `{"version":1,"records":[{"session_id":"s","record":"x"}]}`} {
		cl := keptClient(t, host)
		require.NoError(t, cl.Set(ctx, keptKey, []byte(bad)))
		require.NoError(t, cl.Close(ctx))

		core, logs := observer.New(zap.InfoLevel)
		cfg := recoveryConfig("sqlite", filepath.Join(t.TempDir(), "agenteval.db"))
		cfg.Continuation.Storage = &keptStorageID
		p, _, _ := newTestProcessor(t, cfg, nil)
		p.logger = zap.New(core)
		p.id = component.NewID(metadata.Type)
		startWithoutWorker(t, p)
		require.NoError(t, p.startKept(ctx, host), bad)
		for _, sh := range p.shards {
			assert.Empty(t, sh.unsaved, bad)
			assert.Empty(t, sh.local, bad)
		}
		assert.Equal(t, 1, logs.FilterLevelExact(zap.ErrorLevel).FilterMessageSnippet("do not decode").Len()+
			logs.FilterLevelExact(zap.ErrorLevel).FilterMessageSnippet("does not decode").Len(), "%s: %v", bad, logs.All())
		require.NoError(t, p.shutdown(ctx))
		assert.Equal(t, keptState{}, readKept(t, host), "nothing left: the key deleted")
	}
}

// TestKeptStorageMustBeAStorage: continuation.storage naming a missing extension, or
// one that is not a storage, fails the start with an error naming the setting.
func TestKeptStorageMustBeAStorage(t *testing.T) {
	p, _, _ := newTestProcessor(t, recoveryConfig("sqlite", filepath.Join(t.TempDir(), "agenteval.db")), nil)
	p.cfg.Continuation.Storage = &keptStorageID
	err := p.startKept(context.Background(), componenttest.NewNopHost())
	assert.ErrorContains(t, err, `continuation.storage: extension "file_storage/agenteval" not found`)
	notStorage := struct {
		component.StartFunc
		component.ShutdownFunc
	}{}
	err = p.startKept(context.Background(), extHost{ext: map[component.ID]component.Component{keptStorageID: notStorage}})
	assert.ErrorContains(t, err, `continuation.storage: extension "file_storage/agenteval" is not a storage extension`)
}

// keptClient opens the storage client of the processor of keptProcessor on host.
func keptClient(t *testing.T, host component.Host) storage.Client {
	t.Helper()
	ext := host.GetExtensions()[keptStorageID].(storage.Extension)
	c, err := ext.GetClient(context.Background(), component.KindProcessor, component.NewID(metadata.Type), "continuation")
	require.NoError(t, err)
	return c
}

// TestStoreDownAcrossRestartStillDown: as TestStoreDownAcrossRestartThenBack, but the
// database is still down when the collector restarts and the session continues with
// turn 3 and goes idle; then it comes back and the session continues with turn 4. Turn
// 2 closed either while the database was down (numbered here, the session idle before
// the shutdown) or before it went down (its index allocated, the session open at the
// shutdown). The exporter's queue stores the first run's analysis before or after the
// second run's. Both stores must end with the five turns once each in conversation
// order, and each turn counted once.
//
// Found by review of the first version of continuation.storage: the restored records
// kept their indexes but not their session's revision, so the second run's analysis
// got revision 1 again. With turn 2 numbered by the store, the result store skipped it
// as older than the first run's revision 2 (turn 3 lost); with turn 2 numbered here, the
// first run's part replayed after it had the same revision and replaced it from turn 2
// on (turn 3 lost).
func TestStoreDownAcrossRestartStillDown(t *testing.T) {
	for _, openAtShutdown := range []bool{false, true} {
		for _, queueOrder := range []bool{true, false} {
			t.Run(fmt.Sprintf("open_at_shutdown=%v/queue_order=%v", openAtShutdown, queueOrder), func(t *testing.T) {
				onStores(t, func(t *testing.T, driver, dsn string) {
					storeDownAcrossRestartStillDown(t, driver, dsn, openAtShutdown, queueOrder)
				})
			})
		}
	}
}

func storeDownAcrossRestartStillDown(t *testing.T, driver, dsn string, openAtShutdown, queueOrder bool) {
	ctx := context.Background()
	dir := t.TempDir()
	results := resultStore(t, driver, dsn)
	host, stopHost := storageHost(t, dir)
	const id = "down-restart-2"
	sink, queued := stoppedWithTurnKept(t, driver, dsn, results, host, id, openAtShutdown)
	stopHost()

	host2, _ := storageHost(t, dir)
	p2, sink2, clk2, db2 := keptProcessor(t, driver, dsn, host2)
	db2.down = true
	continueSession(t, p2, clk2, id, 3)
	if queueOrder {
		require.NoError(t, results.SaveAnalysis(ctx, &queued[0]))
	}
	n := exportAnalyses(t, results, sink2, 0)
	if !queueOrder {
		require.NoError(t, results.SaveAnalysis(ctx, &queued[0]))
	}
	assertWhole(t, results, id, 4)

	db2.down = false
	clk2.advance(unsavedRetry)
	p2.step(ctx)
	continueSession(t, p2, clk2, id, 4)
	exportAnalyses(t, results, sink2, n)
	a := assertWhole(t, results, id, 5)
	require.Len(t, a.TurnResults, 5)
	for i, user := range []string{conversation[0].user, conversation[1].user, conversation[2].user, "And on Monday?", "And on Monday?"} {
		assert.Equal(t, user, a.TurnResults[i].UserMessage, "turn %d in conversation order", i)
	}
	assert.Equal(t, queued[0].TurnResults[len(queued[0].TurnResults)-1].TraceID, a.TurnResults[2].TraceID, "turn 2 at index 2")
	assertSameTurns(t, a, assertContinuationWhole(t, driver, dsn, id, 5))
	assertStanding(t, assertEachTraceCountedOnce(t, 5, sink, sink2), a, turnTraceKey)
}

// TestKeptRestoredTwice: a collector that took back what the last shutdown kept dies
// (kill -9: no shutdown writes the key again) after saving it; the next one takes the
// same records and turn numbers back again. That changes nothing: the session continues
// with every turn once, in order, each counted once.
func TestKeptRestoredTwice(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		dir := t.TempDir()
		results := resultStore(t, driver, dsn)
		host, stopHost := storageHost(t, dir)
		const id = "kept-twice-1"
		sink, _ := stoppedWithTurnKept(t, driver, dsn, results, host, id, false)
		exportAnalyses(t, results, sink, 1)
		require.NotEmpty(t, readKept(t, host).Records)
		stopHost()

		host2, stopHost2 := storageHost(t, dir)
		p2, sink2, _, _ := keptProcessor(t, driver, dsn, host2)
		p2.step(ctx) // the first dispatch saves what was taken back
		require.Empty(t, p2.shards[shardOf(id, len(p2.shards))].unsaved, "saved")
		require.NoError(t, p2.kept.Close(ctx))
		p2.kept = nil // killed: its shutdown (at cleanup) keeps nothing
		require.NotEmpty(t, readKept(t, host2).Records, "the key stays until a shutdown writes it")
		stopHost2()

		host3, _ := storageHost(t, dir)
		p3, sink3, clk3, _ := keptProcessor(t, driver, dsn, host3)
		continueSession(t, p3, clk3, id, 3)
		exportAnalyses(t, results, sink3, 0)
		a := assertWhole(t, results, id, 4)
		assertSameTurns(t, a, assertContinuationWhole(t, driver, dsn, id, 4))
		assert.Equal(t, conversation[2].user, a.TurnResults[2].UserMessage)
		assertStanding(t, assertEachTraceCountedOnce(t, 4, sink, sink2, sink3), a, turnTraceKey)
	})
}

// failingGetStorage is a storage extension whose clients fail Get (a damaged file), over
// a real one.
type failingGetStorage struct {
	storage.Extension
}

func (f failingGetStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := f.Extension.GetClient(ctx, kind, id, name)
	return failingGetClient{c}, err
}

type failingGetClient struct{ storage.Client }

func (failingGetClient) Get(context.Context, string) ([]byte, error) {
	return nil, errors.New("injected: the storage file cannot be read")
}

// TestKeptUnreadableLeftForNextStart: when what the last shutdown kept cannot be read,
// the processor starts without it and its shutdown does not write over it: the next
// start can still read it.
func TestKeptUnreadableLeftForNextStart(t *testing.T) {
	ctx := context.Background()
	host, _ := storageHost(t, t.TempDir())
	want := []byte(`{"version":1,"local":[{"session_id":"s","trace_id":"t"}]}`)
	cl := keptClient(t, host)
	require.NoError(t, cl.Set(ctx, keptKey, want))
	require.NoError(t, cl.Close(ctx))

	ext := host.GetExtensions()[keptStorageID].(storage.Extension)
	failing := extHost{ext: map[component.ID]component.Component{keptStorageID: failingGetStorage{ext}}}
	p, _, _, db := keptProcessor(t, "sqlite", filepath.Join(t.TempDir(), "agenteval.db"), failing)
	assert.Nil(t, p.kept, "no client kept after a failed read")
	db.down = true
	p.shards[0].local = append(p.shards[0].local, store.TurnKey{SessionID: "other", TraceID: "u"}) // something to keep
	require.NoError(t, p.shutdown(ctx))

	cl = keptClient(t, host)
	got, err := cl.Get(ctx, keptKey)
	require.NoError(t, err)
	require.NoError(t, cl.Close(ctx))
	assert.JSONEq(t, string(want), string(got), "left as it was")
}

// TestRestoredFinalDroppedCountedOnce: a session goes idle while the database is down,
// so its turn 0's final verdict waits for its save; the collector stops, emitting the
// verdict (counted) and keeping the record. After a restart with the database still down
// and room for one record waiting, another session's record pushes the restored one out.
// When the database is back and the session continues, turn 0 must not be counted again.
// Found by review: a restored record waits for nothing, so its drop left no claim.
func TestRestoredFinalDroppedCountedOnce(t *testing.T) {
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		dir := t.TempDir()
		results := resultStore(t, driver, dsn)
		host, stopHost := storageHost(t, dir)
		p, sink, clk, db := keptProcessor(t, driver, dsn, host)
		const id = "restored-final-1"
		sendCounted(t, p, clk, id, 0)
		db.down = true
		clk.advance(2 * time.Minute)
		p.step(ctx)
		require.NoError(t, p.shutdown(ctx))
		exportAnalyses(t, results, sink, 0)
		stopHost()

		host2, _ := storageHost(t, dir)
		p2, sink2, clk2, db2 := keptProcessor(t, driver, dsn, host2)
		oneUnsaved(p2)
		db2.down = true
		sendCounted(t, p2, clk2, sameShard(p2, id), 7) // pushes the restored record out
		require.NotEmpty(t, p2.shards[shardOf(id, len(p2.shards))].claims)
		db2.down = false
		clk2.advance(unsavedRetry)
		p2.step(ctx)
		continueSession(t, p2, clk2, id, 1)
		exportAnalyses(t, results, sink2, 0)
		assertWhole(t, results, id, 2)
		assertEachTraceCountedOnce(t, 3, sink, sink2)
	})
}

// TestKeptBeforeRootSpan: turns kept by a collector before turns were keyed by their
// root span too name their trace only; restored, a numbered turn and a claim take the
// root span of the kept record of their session and trace, so that the index the store
// allocates moves that record and the claim marks its row. One without a record keeps
// its empty root span.
func TestKeptBeforeRootSpan(t *testing.T) {
	ctx := context.Background()
	host, _ := storageHost(t, t.TempDir())
	const (
		trace = "0af7651916cd43dd8448eb211c80319c"
		root  = "b7ad6b7169203331"
	)
	old := `{"version":1,"records":[{"session_id":"s","record":{"result":{"session_id":"s","turn_index":0,` +
		`"trace_id":"` + trace + `","root_span_id":"` + root + `","final":true},"final_responder":-1}}],` +
		`"local":[{"session_id":"s","trace_id":"` + trace + `"},{"session_id":"s","trace_id":"other"}],` +
		`"claims":[{"session_id":"s","trace_id":"` + trace + `"}]}`
	cl := keptClient(t, host)
	require.NoError(t, cl.Set(ctx, keptKey, []byte(old)))
	require.NoError(t, cl.Close(ctx))

	p, _, _, db := keptProcessor(t, "sqlite", filepath.Join(t.TempDir(), "agenteval.db"), host)
	sh := p.shards[shardOf("s", len(p.shards))]
	assert.Equal(t, []store.TurnKey{{SessionID: "s", TraceID: trace, RootSpanID: root}, {SessionID: "s", TraceID: "other"}}, sh.local)
	assert.Equal(t, []store.Claim{{TurnKey: store.TurnKey{SessionID: "s", TraceID: trace, RootSpanID: root}}}, sh.claims, "a claim kept by an earlier collector: no detection type")
	db.down = true // nothing saved: the shutdown keeps it all again
	require.NoError(t, p.shutdown(ctx))
}
