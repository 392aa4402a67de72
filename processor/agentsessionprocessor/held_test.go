// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

// mostRecordsHeld returns the most turn records any open session holds in p's shards.
func mostRecordsHeld(p *agentSessionProcessor) int {
	p.stepMu.Lock() // no step hands the shards events meanwhile
	defer p.stepMu.Unlock()
	most := 0
	for _, sh := range p.shards {
		for _, st := range sh.sessions {
			most = max(most, st.Len())
		}
	}
	return most
}

// TestLongSessionHoldsFewRecords: a shard holds a bounded number of an open session's
// turn records, not every turn's (docs/decisions/sessions.md §4.2.2), and the output is
// the same as when it holds them all. A conversation of 70 turns, whose user corrects an
// answer now and then (RDM on the turn before), with a pause longer than session_timeout
// after turn 50: with heldRecords 3 and a continuation database the session never
// holds more than 6 records (with the memory store it holds them all), and
// every turn verdict and both analysis revisions (every turn, its verdict, the session
// scores) equal those of a processor that holds every record; the continuation store
// holds the 70 records, each final with its follow-up but the last. In memory, on
// SQLite and on PostgreSQL.
func TestLongSessionHoldsFewRecords(t *testing.T) {
	const id, turns, pauseAfter = "long-1", 70, 50
	message := func(i int) (user, answer string) {
		if i%7 == 3 {
			return fmt.Sprintf("No, that's wrong, I asked about order %d.", 4000+i-1),
				fmt.Sprintf("Sorry: order %d ships on day %d.", 4000+i-1, i%28+1)
		}
		return fmt.Sprintf("When does order %d ship?", 4000+i), fmt.Sprintf("Order %d ships on day %d.", 4000+i, i%28+1)
	}
	run := func(t *testing.T, cfg Config, held int) (verdicts, as []string, most int) {
		ctx := context.Background()
		p, sink, clk := newTestProcessor(t, &cfg, nil)
		p.heldRecords = held
		if cfg.Continuation.Driver != "" {
			// No worker goroutine: mostRecordsHeld reads the shards between steps.
			startWithoutWorker(t, p)
		}
		for i := range turns {
			user, answer := message(i)
			_, err := p.processTraces(ctx, chatTurn(id, i+1, clk.now(), user, answer, true))
			require.NoError(t, err)
			clk.advance(3 * time.Second)
			p.step(ctx)
			most = max(most, mostRecordsHeld(p))
			if i == pauseAfter-1 {
				clk.advance(2 * time.Minute) // longer than session_timeout: revision 1
				p.step(ctx)
			}
		}
		clk.advance(2 * time.Minute)
		p.step(ctx)
		stored, err := p.cont.LoadContinuation(ctx, id, nil)
		require.NoError(t, err)
		require.Len(t, stored.Turns, turns, "the continuation store holds every turn")
		for i, r := range stored.Turns {
			assert.Equal(t, i, r.Result.TurnIndex)
			if want := 2; i == turns-1 {
				assert.Equal(t, 1, evaluation.VerdictStage(&r), "the last turn: final without follow-up")
			} else {
				assert.Equal(t, want, evaluation.VerdictStage(&r), "turn %d: final with follow-up", i)
			}
		}
		require.NoError(t, p.shutdown(ctx))
		verdicts, as = outputJSON(t, sink)
		return verdicts, as, most
	}
	// mostHeld is the most records the run that releases may hold: twice heldRecords with
	// a continuation database; every record with the memory store, which may drop a
	// session's records past continuation.max_records (§4.2.1), so the shard keeps them.
	check := func(t *testing.T, driver string, dsn func(t *testing.T) string, mostHeld int) {
		cfg := testConfig()
		cfg.SessionTimeout = 30 * time.Second
		cfg.Continuation.Driver = driver
		config := func(t *testing.T) Config {
			c := *cfg
			if driver != "" {
				c.Continuation.DSN = configopaque.String(dsn(t)) // a database of its own
			}
			return c
		}
		wantVerdicts, wantAnalyses, all := run(t, config(t), 1<<30)
		gotVerdicts, gotAnalyses, most := run(t, config(t), 3)
		assert.Equal(t, turns, all, "holding every record: the whole conversation after the pause")
		assert.LessOrEqual(t, most, mostHeld, "records held")
		assert.Equal(t, wantVerdicts, gotVerdicts, "turn verdicts")
		require.Len(t, gotAnalyses, 2, "one analysis per idle period")
		assert.Equal(t, wantAnalyses, gotAnalyses, "analyses")
		var last evaluation.Analysis
		require.NoError(t, json.Unmarshal([]byte(gotAnalyses[1]), &last))
		require.Len(t, last.TurnResults, turns, "the last revision covers every turn")
		rdm := 0
		for _, tr := range last.TurnResults {
			if tr.DetectionType == evaluation.DetectionRDM {
				rdm++
			}
		}
		assert.Equal(t, 10, rdm, "each correction is RDM on the turn before it")
	}
	t.Run("memory", func(t *testing.T) { check(t, "", nil, turns) })
	t.Run("sqlite", func(t *testing.T) {
		check(t, "sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "agenteval.db") }, 6)
	})
	t.Run("postgres", func(t *testing.T) {
		check(t, "postgres", func(t *testing.T) string { return storetest.PostgresDSN(t) }, 6)
	})
}

// TestReleasedSessionEndWaitsForStore: a session that released records (heldRecords 2)
// goes idle while the continuation database is down. Its analysis would lack the
// released turns, and the result store would never get them: the end waits, nothing is
// emitted, the session stays held; once the database is back, the next step emits one
// analysis over every turn, and the result store holds them all. A turn of the session
// that closes while its end waits continues it instead. At a shutdown with the
// database still down, the session stays held in the store, and the next collector
// recovers it whole (partial, end reason restart).
func TestReleasedSessionEndWaitsForStore(t *testing.T) {
	const turns = 10
	send := func(t *testing.T, p *agentSessionProcessor, clk *testClock, id string, from, to int) {
		for i := from; i < to; i++ {
			sendCounted(t, p, clk, id, i)
		}
	}
	onStores(t, func(t *testing.T, driver, dsn string) {
		ctx := context.Background()
		p, sink, clk, db, results := downProcessor(t, driver, dsn)
		p.heldRecords = 2
		const id = "released-down-1"
		send(t, p, clk, id, 0, turns)
		require.LessOrEqual(t, mostRecordsHeld(p), 4)

		db.down = true
		clk.advance(2 * time.Minute)
		p.step(ctx)
		assert.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "no analysis without the released turns")
		assert.Positive(t, mostRecordsHeld(p), "the session stays held")
		clk.advance(unsavedRetry)
		p.step(ctx)
		assert.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "still down: still waiting")

		db.down = false
		clk.advance(unsavedRetry)
		p.step(ctx)
		as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		require.Len(t, as, 1, "the end, once the store is back")
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, turnIndexes(as[0]))
		assert.Equal(t, 1, as[0].AnalysisRevision)
		assert.Zero(t, mostRecordsHeld(p), "the session ended")
		n := exportAnalyses(t, results, sink, 0)
		assertWhole(t, results, id, turns)

		// A turn that closes while the end waits: the session goes on.
		send(t, p, clk, id, turns, 2*turns) // loaded from the store, released again
		db.down = true
		clk.advance(2 * time.Minute)
		p.step(ctx)
		sendCounted(t, p, clk, id, 2*turns) // while the store is down: numbered here
		db.down = false
		clk.advance(2 * time.Minute)
		p.step(ctx)
		clk.advance(unsavedRetry)
		p.step(ctx)
		exportAnalyses(t, results, sink, n)
		as = analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		require.Len(t, as, 2, "one analysis for the pause that did not end the session")
		assert.Equal(t, 2, as[1].AnalysisRevision)
		assertWhole(t, results, id, 2*turns+1)

		// Shut down with the end waiting: recovered whole by the next collector.
		const cut = "released-down-2"
		send(t, p, clk, cut, 0, turns)
		db.down = true
		require.NoError(t, p.shutdown(ctx))
		assert.Len(t, evalSpans(sink)[semconv.EvalKindAgentSession], 2, "nothing emitted for the session at shutdown")

		p2, sink2, clk2 := newTestProcessor(t, recoveryConfig(driver, dsn), nil)
		clk2.advance(time.Hour) // the first instance's lease ran out
		startWithoutWorker(t, p2)
		t.Cleanup(func() { assert.NoError(t, p2.shutdown(context.Background())) })
		clk2.advance(time.Minute) // session_timeout after the start: the sweep
		p2.step(ctx)
		rs := analyses(t, evalSpans(sink2)[semconv.EvalKindAgentSession])
		require.Len(t, rs, 1, "recovered once")
		assert.Equal(t, cut, rs[0].SessionID)
		assert.Equal(t, string(session.EndReasonRestart), rs[0].EndReason)
		assert.True(t, rs[0].Partial)
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, turnIndexes(rs[0]), "every turn")
	})
}
