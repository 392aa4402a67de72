// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", to read the stored rows

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

// BenchmarkContinuationRecord measures what the agentsession processor keeps per turn for
// continuation (docs/decisions/performance.md §8.14) on the harness's turns: the
// workload through the processor (turn_settle 5ms, session_timeout 300ms, so that every
// session ends), then, once every session's analysis was emitted:
//
//   - memory: the continuation state in memory (continuation.driver unset), as the Go
//     heap in use while the processor runs minus after it is dropped (a GC before each
//     reading), per turn: retained-B/turn;
//   - sqlite: the continuation rows in a SQLite file, the record JSON's bytes per turn:
//     row-B/turn, of which its turn result's interactions (each agent's scores, tool
//     calls and handoffs, the bulk of a record: performance.md §8.63):
//     interactions-B/turn.
//
// Run it with -benchtime=1x:
//
//	go test -run '^$' -bench ContinuationRecord -benchtime=1x ./bench/e2e/
func BenchmarkContinuationRecord(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		for range b.N {
			p, w := runContinuationWorkload(b, nil)
			turns := w.Stats().Turns
			var held, released runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&held)
			if err := p.Shutdown(context.Background()); err != nil {
				b.Fatal(err)
			}
			p = nil
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&released)
			runtime.KeepAlive(w)
			b.ReportMetric(float64(int64(held.HeapAlloc)-int64(released.HeapAlloc))/float64(turns), "retained-B/turn")
		}
	})
	b.Run("sqlite", func(b *testing.B) {
		for range b.N {
			dsn := filepath.Join(b.TempDir(), "cont.db")
			p, _ := runContinuationWorkload(b, func(c *agentsessionprocessor.Config) {
				c.Continuation.Driver, c.Continuation.DSN = "sqlite", configopaque.String(dsn)
			})
			if err := p.Shutdown(context.Background()); err != nil {
				b.Fatal(err)
			}
			db, err := sql.Open("sqlite", dsn)
			if err != nil {
				b.Fatal(err)
			}
			var rows, size, interactions int64
			if err := db.QueryRow("SELECT COUNT(*), SUM(LENGTH(record)), SUM(LENGTH(json_extract(record, '$.result.interactions'))) FROM turns").
				Scan(&rows, &size, &interactions); err != nil {
				b.Fatal(err)
			}
			_ = db.Close()
			b.ReportMetric(float64(size)/float64(rows), "row-B/turn")
			b.ReportMetric(float64(interactions)/float64(rows), "interactions-B/turn")
			b.ReportMetric(float64(rows), "rows")
		}
	})
}

// runContinuationWorkload sends the harness's workload (100 turns in flight, about
// 100,000 spans) through an agentsession processor configured by set, waits until every
// session's analysis was emitted, and returns the running processor (the caller shuts it
// down) and the workload.
func runContinuationWorkload(b *testing.B, set func(*agentsessionprocessor.Config)) (processor.Traces, *workload) {
	b.Helper()
	f := agentsessionprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*agentsessionprocessor.Config)
	cfg.TurnSettle = 5 * time.Millisecond
	cfg.SessionTimeout = 300 * time.Millisecond
	cfg.MaxSessions = 1000000
	if set != nil {
		set(cfg)
	}
	var sessions atomic.Int64
	next, err := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		for i := range td.ResourceSpans().Len() {
			sss := td.ResourceSpans().At(i).ScopeSpans()
			for j := range sss.Len() {
				spans := sss.At(j).Spans()
				for k := range spans.Len() {
					if v, ok := spans.At(k).Attributes().Get(semconv.AgentEvalKind); ok && v.Str() == semconv.EvalKindAgentSession {
						sessions.Add(1)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	p, w, _ := replayWorkload(b, cfg, next)
	deadline := time.Now().Add(2 * time.Minute)
	for sessions.Load() < w.Stats().Sessions {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d session analyses emitted", sessions.Load(), w.Stats().Sessions)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p, w
}
