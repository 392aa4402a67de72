// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

// Faults around released records (docs/decisions/sessions.md §4.2.2), each found by a
// review of the change, each failing before its fix.

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

// TestLateTurnFindsReleasedPredecessor: the conversation, by start, is A, J, P, L (L
// corrects P), K, M; the spans arrive A, P, K, M, then J and L late. With heldRecords 2,
// P (final with K's follow-up) is released before L closes. L started before the turns
// held, so the shard takes the released records back before placing it: L follows P (RDM
// on P), and J gets its one counted verdict at idle, as when every record is held.
// Before the fix, L followed J (held, provisional) and J was counted RDM.
func TestLateTurnFindsReleasedPredecessor(t *testing.T) {
	type turn struct {
		seed      int
		at        time.Duration
		user, ans string
	}
	A := turn{1, 0, "When does order 4000 ship?", "Order 4000 ships on day 1."}
	J := turn{2, 5 * time.Second, "When does order 4001 ship?", "Order 4001 ships on day 2."}
	P := turn{3, 10 * time.Second, "When does order 4002 ship?", "Order 4002 ships on day 3."}
	L := turn{4, 15 * time.Second, "No, that's wrong, I asked about order 4002.", "Sorry: order 4002 ships on day 4."}
	K := turn{5, 20 * time.Second, "When does order 4004 ship?", "Order 4004 ships on day 5."}
	M := turn{6, 25 * time.Second, "When does order 4005 ship?", "Order 4005 ships on day 6."}
	run := func(t *testing.T, held int) (counted map[string]string, verdicts, as []string) {
		ctx := context.Background()
		cfg := testConfig()
		cfg.SessionTimeout = time.Minute
		cfg.Continuation.Driver = "sqlite"
		cfg.Continuation.DSN = configopaque.String(filepath.Join(t.TempDir(), "agenteval.db"))
		p, sink, clk := newTestProcessor(t, cfg, nil)
		p.heldRecords = held
		require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
		t0 := clk.now()
		clk.advance(30 * time.Second)
		for _, tu := range []turn{A, P, K, M, J, L} {
			_, err := p.processTraces(ctx, chatTurn("late-rel", tu.seed, t0.Add(tu.at), tu.user, tu.ans, true))
			require.NoError(t, err)
			clk.advance(3 * time.Second)
			p.step(ctx)
		}
		clk.advance(2 * time.Minute)
		p.step(ctx)
		require.NoError(t, p.shutdown(ctx))
		counted = map[string]string{} // user message -> detection type of the counted (not Revised) final verdict
		for _, sp := range evalSpans(sink)[semconv.EvalKindTurn] {
			tr, err := evalspan.DecodeTurn(sp.Attributes())
			require.NoError(t, err)
			if tr.Final && !tr.Revised {
				counted[tr.UserMessage] = tr.DetectionType
			}
		}
		verdicts, as = outputJSON(t, sink)
		return counted, verdicts, as
	}
	wantCounted, wantV, wantA := run(t, 1<<30)
	gotCounted, gotV, gotA := run(t, 2)
	assert.Equal(t, wantCounted, gotCounted, "counted verdicts (agent_eval_turns_total)")
	assert.Equal(t, "none", gotCounted[J.user], "J was not corrected")
	assert.Equal(t, len(wantV), len(gotV), "turn spans")
	assert.Equal(t, wantA, gotA, "analyses")
}

// releasedSession is downProcessor on a new SQLite file, holding 2 records a session,
// with 10 turns of session id sent: it released records.
func releasedSession(t *testing.T, id string) (*agentSessionProcessor, *consumertest.TracesSink, *testClock, *downContinuation) {
	t.Helper()
	p, sink, clk, db, _ := downProcessor(t, "sqlite", filepath.Join(t.TempDir(), "agenteval.db"))
	p.heldRecords = 2
	for i := range 10 {
		sendCounted(t, p, clk, id, i)
	}
	return p, sink, clk, db
}

// countingLoads counts the records LoadContinuation returns.
type countingLoads struct {
	store.ContinuationStore
	records int
}

func (c *countingLoads) LoadContinuation(ctx context.Context, id string, held store.Held) (store.Continuation, error) {
	r, err := c.ContinuationStore.LoadContinuation(ctx, id, held)
	c.records += len(r.Turns)
	return r, err
}

// TestReloadLeavesReleasedRecords: turns alternate between two collectors sharing the
// store, so each close on one of them finds the previous index closed on the other and
// reloads the session. That reload leaves the released records in the store: holding
// 2 records, the loads return at most twice what they return holding every record.
// Before the fix each reload decoded every released record (1,521 records against 78 for
// 80 turns; 20,115 against 298 for 300 turns at the default 16).
func TestReloadLeavesReleasedRecords(t *testing.T) {
	check := func(t *testing.T, driver string, dsn func(t *testing.T) string) {
		run := func(t *testing.T, held int) int {
			ps, _, clks := twoCollectors(t, driver, dsn(t))
			c := &countingLoads{ContinuationStore: ps[0].cont}
			ps[0].cont = c
			for i := range ps {
				ps[i].heldRecords = held
			}
			for i := range 80 {
				sendTurn(t, ps, clks, i%2, "alt-1", i)
			}
			return c.records
		}
		all := run(t, 1<<30)
		few := run(t, 2)
		t.Logf("records decoded by A's loads: holding all %d, heldRecords 2: %d", all, few)
		assert.LessOrEqual(t, few, 2*all, "releasing must not multiply the records decoded")
	}
	t.Run("sqlite", func(t *testing.T) {
		check(t, "sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "agenteval.db") })
	})
	t.Run("postgres", func(t *testing.T) {
		check(t, "postgres", func(t *testing.T) string { return storetest.PostgresDSN(t) })
	})
}

// TestWaitingEndGivesUpWhenOnlyLoadsFail: only the session's load fails, for good (a row
// that does not decode), while the store takes writes (the lease is renewed). The end
// does not wait for ever: it is analysed over the records held, logged.
func TestWaitingEndGivesUpWhenOnlyLoadsFail(t *testing.T) {
	ctx := context.Background()
	p, sink, clk, db := releasedSession(t, "released-poison")
	db.failLoads = 1 << 30 // LoadContinuation always fails; saves, reserves, revisions work
	clk.advance(2 * time.Minute)
	p.step(ctx)
	for range 100 { // 100 retries, 500 s
		clk.advance(unsavedRetry)
		p.step(ctx)
	}
	assert.Len(t, evalSpans(sink)[semconv.EvalKindAgentSession], 1, "saves and revisions work: the end is analysed, not held back for ever")
}

// loadCounter counts LoadContinuation calls (failed ones too).
type loadCounter struct {
	*downContinuation
	loads int
}

func (c *loadCounter) LoadContinuation(ctx context.Context, id string, held store.Held) (store.Continuation, error) {
	c.loads++
	return c.downContinuation.LoadContinuation(ctx, id, held)
}

// TestWaitingEndRetriedEveryUnsavedRetry: a waiting end is tried again every
// unsavedRetry, not at every step once the first retry failed.
func TestWaitingEndRetriedEveryUnsavedRetry(t *testing.T) {
	ctx := context.Background()
	p, sink, clk, db := releasedSession(t, "released-spin")
	c := &loadCounter{downContinuation: db}
	p.cont = c
	db.down = true
	clk.advance(2 * time.Minute)
	p.step(ctx) // the end waits
	require.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	clk.advance(unsavedRetry)
	p.step(ctx) // first retry, due
	before := c.loads
	for range 20 {
		clk.advance(100 * time.Millisecond)
		p.step(ctx) // 2 s in all: no retry is due before 5 s
	}
	assert.Zero(t, c.loads-before, "loads within 2 s of a retry (next one due after 5 s)")
}

// TestWaitingEndTriedAgainAtShutdown: the store is back before the retry is due when the
// collector shuts down: the waiting end is tried once more and analysed.
func TestWaitingEndTriedAgainAtShutdown(t *testing.T) {
	ctx := context.Background()
	p, sink, clk, db := releasedSession(t, "released-shutdown")
	db.down = true
	clk.advance(2 * time.Minute)
	p.step(ctx)
	require.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	db.down = false // back, but the retry is not due yet
	require.NoError(t, p.shutdown(ctx))
	assert.Len(t, evalSpans(sink)[semconv.EvalKindAgentSession], 1, "the store is up at shutdown: the session's end is analysed")
}

// TestWaitingEndNotRecoveredBySweep: a dead collector held the session too (its lease
// ends just before the session's end here); the end's load fails once, so it waits. The
// recovery sweep of the same step leaves the session to the shard where its end waits:
// one analysis, not a second one, partial with end reason restart.
func TestWaitingEndNotRecoveredBySweep(t *testing.T) {
	ctx := context.Background()
	p, sink, clk, db, _ := downProcessor(t, "sqlite", filepath.Join(t.TempDir(), "agenteval.db"))
	p.heldRecords = 2
	const id = "released-swept"
	rec := db.ContinuationStore.(store.Recovery)
	endAt := clk.now().Add(30*time.Second + 2*time.Minute)
	require.NoError(t, rec.Heartbeat(ctx, "dead", endAt.Add(-time.Second)))
	require.NoError(t, rec.Hold(ctx, []store.OpenSession{{ID: id, Owner: "dead", Service: "weather-bot"}}))
	for i := range 10 {
		sendCounted(t, p, clk, id, i)
	}
	db.failLoads = 1 // the end's load fails once
	clk.advance(endAt.Sub(clk.now()))
	p.step(ctx)
	clk.advance(unsavedRetry)
	p.step(ctx)
	as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	for _, a := range as {
		t.Logf("revision %d partial %v end %s turns %d", a.AnalysisRevision, a.Partial, a.EndReason, len(a.TurnResults))
	}
	assert.Len(t, as, 1, "one end, one analysis")
}
