// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

// startWithoutWorker opens the continuation store as start does, without the worker
// goroutine: the test drives p.step with its clock.
func startWithoutWorker(t *testing.T, p *agentSessionProcessor) {
	t.Helper()
	ctx := context.Background()
	c := p.cfg.Continuation
	cs, err := store.OpenContinuation(ctx, c.Driver, string(c.DSN))
	require.NoError(t, err)
	p.cont = cs
	p.startRecovery(ctx)
	require.NotNil(t, p.recovery, "a SQL continuation store supports recovery")
}

// sendTurns sends turns of the conversation to p as session id and closes them.
func sendTurns(t *testing.T, p *agentSessionProcessor, clk *testClock, id string, seed int, turns ...int) {
	t.Helper()
	ctx := context.Background()
	for _, i := range turns {
		c := conversation[i]
		_, err := p.processTraces(ctx, chatTurn(id, seed+i, clk.now(), c.user, c.answer, true))
		require.NoError(t, err)
	}
	clk.advance(3 * time.Second) // turn_settle
	p.step(ctx)
}

func recoveryConfig(driver, dsn string) *Config {
	cfg := testConfig()
	cfg.SessionTimeout = 30 * time.Second
	cfg.Continuation = ContinuationConfig{Driver: driver, DSN: configopaque.String(dsn)}
	return cfg
}

// killed runs a collector that closes turns of the given sessions and dies without a
// shutdown (its sessions stay held in the store, its lease runs out).
func killed(t *testing.T, cfg *Config, sessions map[string]int) {
	t.Helper()
	p, sink, clk := newTestProcessor(t, cfg, nil)
	startWithoutWorker(t, p)
	ctx := context.Background()
	seed := 0
	for id, n := range sessions {
		seed += 16
		for i := range n {
			c := conversation[i]
			_, err := p.processTraces(ctx, chatTurn(id, seed+i, clk.now(), c.user, c.answer, true))
			require.NoError(t, err)
		}
	}
	clk.advance(3 * time.Second) // turn_settle
	p.step(ctx)
	require.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "no session ended before the kill")
	require.NoError(t, p.cont.Close()) // kill -9: no shutdown, no analysis
}

// runCrashRecovery: a collector dies holding sessions "cut" (2 turns) and "back" (1
// turn). After the restart, "back" receives a new turn within session_timeout and
// continues as usual (not partial); "cut" receives nothing and is recovered
// session_timeout after the start: partial, end reason restart, each turn once. A later
// sweep recovers nothing again.
func runCrashRecovery(t *testing.T, driver, dsn string) {
	ctx := context.Background()
	cfg := recoveryConfig(driver, dsn)
	killed(t, cfg, map[string]int{"cut": 2, "back": 1})

	p, sink, clk := newTestProcessor(t, cfg, nil)
	clk.advance(time.Minute) // the restart: the dead instance's lease (30s) ran out
	startWithoutWorker(t, p)
	clk.advance(time.Second)
	sendTurns(t, p, clk, "back", 64, 1)
	p.step(ctx)
	require.Empty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "no sweep before session_timeout after the start")

	clk.advance(30 * time.Second)
	p.step(ctx)
	as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	byID := map[string]evaluation.Analysis{}
	for _, a := range as {
		byID[a.SessionID] = a
	}
	require.Len(t, as, 2, "one analysis each")
	cut, back := byID["cut"], byID["back"]
	assert.True(t, cut.Partial)
	assert.Equal(t, string(session.EndReasonRestart), cut.EndReason)
	assert.Equal(t, 1, cut.AnalysisRevision)
	assert.Equal(t, []int{0, 1}, turnIndexes(cut), "every turn once")
	assert.True(t, cut.TurnResults[1].Final, "the last turn's verdict is made final")
	assert.Equal(t, "weather-bot", cut.Service)
	assert.False(t, back.Partial, "a session that receives spans continues as usual")
	assert.Equal(t, string(session.EndReasonSessionTimeout), back.EndReason)
	assert.Equal(t, []int{0, 1}, turnIndexes(back))

	clk.advance(5 * time.Minute)
	p.step(ctx)
	assert.Len(t, evalSpans(sink)[semconv.EvalKindAgentSession], 2, "nothing is recovered twice")
	rec := p.recovery
	orphans, err := rec.Orphans(ctx, clk.now().Add(time.Hour), 10)
	require.NoError(t, err)
	assert.Empty(t, orphans, "every session was released")
	require.NoError(t, p.shutdown(ctx))

	c := storedContinuation(t, driver, dsn, "cut")
	assert.Equal(t, 1, c.Revision)
	require.Len(t, c.Turns, 2)
	assert.True(t, c.Turns[1].Result.Final, "the recovered last verdict is saved final")
}

func turnIndexes(a evaluation.Analysis) []int {
	var out []int
	for _, tr := range a.TurnResults {
		out = append(out, tr.TurnIndex)
	}
	return out
}

// TestCrashedSessionsRecoveredAsPartial: SQLite, and PostgreSQL when
// AGENTEVAL_TEST_POSTGRES_DSN is set.
func TestCrashedSessionsRecoveredAsPartial(t *testing.T) {
	onStores(t, runCrashRecovery)
}

// onStores runs test on a fresh SQLite file and on a PostgreSQL schema of its own (when
// AGENTEVAL_TEST_POSTGRES_DSN is set).
func onStores(t *testing.T, test func(t *testing.T, driver, dsn string)) {
	t.Run("sqlite", func(t *testing.T) {
		test(t, "sqlite", filepath.Join(t.TempDir(), "agenteval.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		test(t, "postgres", storetest.PostgresDSN(t))
	})
}

// TestRecoverySweepersRace: two collectors restarted on one PostgreSQL database sweep
// at the same moment for the 40 sessions a dead collector held: every session is
// recovered by exactly one of them, as exactly one revision with all its turns.
func TestRecoverySweepersRace(t *testing.T) {
	ctx := context.Background()
	cfg := recoveryConfig("postgres", storetest.PostgresDSN(t))
	const sessions = 40
	dead := map[string]int{}
	for i := range sessions {
		dead[fmt.Sprintf("race-%02d", i)] = 1 + i%2
	}
	killed(t, cfg, dead)

	type sweeper struct {
		p    *agentSessionProcessor
		sink *consumertest.TracesSink
		clk  *testClock
	}
	var sw [2]sweeper
	for i := range sw {
		p, sink, clk := newTestProcessor(t, cfg, nil)
		clk.advance(time.Minute)
		startWithoutWorker(t, p)
		clk.advance(31 * time.Second)
		sw[i] = sweeper{p, sink, clk}
	}
	var wg sync.WaitGroup
	for i := range sw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sw[i].p.step(ctx)
		}()
	}
	wg.Wait()
	got := map[string][]evaluation.Analysis{}
	per := [2]int{}
	for i := range sw {
		for _, a := range analyses(t, evalSpans(sw[i].sink)[semconv.EvalKindAgentSession]) {
			got[a.SessionID] = append(got[a.SessionID], a)
			per[i]++
		}
		require.NoError(t, sw[i].p.shutdown(ctx))
	}
	t.Logf("recovered by sweeper 1: %d, sweeper 2: %d", per[0], per[1])
	require.Len(t, got, sessions)
	for id, as := range got {
		require.Len(t, as, 1, "%s: exactly one recovered revision", id)
		assert.Equal(t, 1, as[0].AnalysisRevision, id)
		assert.Equal(t, string(session.EndReasonRestart), as[0].EndReason, id)
		assert.Len(t, as[0].TurnResults, dead[id], "%s: every turn once", id)
	}
}
