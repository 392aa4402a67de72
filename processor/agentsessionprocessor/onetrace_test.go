// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadatatest"
)

// spansByEnd splits td into one Traces per span, in the order the spans end (as an SDK
// exports them), with each span's end time.
func spansByEnd(td ptrace.Traces) (out []ptrace.Traces, ends []time.Time) {
	type one struct {
		td  ptrace.Traces
		end time.Time
	}
	var all []one
	forEachSpan(td, func(res pcommon.Resource, sp ptrace.Span) {
		o := ptrace.NewTraces()
		rs := o.ResourceSpans().AppendEmpty()
		res.CopyTo(rs.Resource())
		sp.CopyTo(rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty())
		all = append(all, one{o, sp.EndTimestamp().AsTime()})
	})
	sort.SliceStable(all, func(i, j int) bool { return all[i].end.Before(all[j].end) })
	for _, o := range all {
		out, ends = append(out, o.td), append(ends, o.end)
	}
	return out, ends
}

// closeAndEnd lets p's open turns close (turn_timeout, partial when no root arrived),
// then its sessions end (session_timeout).
func closeAndEnd(p *agentSessionProcessor, clk *testClock, cfg *Config) {
	clk.advance(cfg.TurnTimeout + cfg.TurnSettle)
	p.step(context.Background())
	clk.advance(cfg.SessionTimeout + time.Minute)
	p.step(context.Background())
}

// oneTraceUsers are the user messages of the three requests of the one-trace samples
// (testdata/samples/*_one_trace.json).
var oneTraceUsers = []string{
	"Hi, I'd like a refund for the USB-C cable I bought, order #123. It stopped working after a week.",
	"No, I meant order #123, not #12345. The cable, not the mugs.",
	"Great, thanks. That's all.",
}

// TestConversationInOneTrace: the OpenAI Agents sample that runs a three-turn
// conversation inside one withTrace (docs/decisions/sessions.md §2.4.1) is three turns,
// indexed 0, 1 and 2, each with its user message, turn 0 RDM by turn 1's correction, in
// the session's analysis and in the continuation store (memory, SQLite, PostgreSQL):
// whether the spans arrive together, or one by one as they end with a turn_timeout
// shorter than the user's think time, so that each request closes on its own, partial
// (a run span has no GenAI class: no root to settle on) and the next one opens the
// trace's next turn. Before, the trace was one turn; then, with the turn identity by
// root span, a later request that closed partial was taken for a late fragment of the
// earlier final turn of its trace, and counted as late spans.
func TestConversationInOneTrace(t *testing.T) {
	users := oneTraceUsers
	run := func(t *testing.T, driver, dsn string, oneByOne bool) {
		ctx := context.Background()
		cfg := testConfig()
		cfg.Continuation.Driver, cfg.Continuation.DSN = driver, configopaque.String(dsn)
		if oneByOne {
			cfg.TurnSettle, cfg.TurnTimeout = 100*time.Millisecond, 250*time.Millisecond
		}
		p, sink, clk := newTestProcessor(t, cfg, nil)
		require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
		td := loadTraces(t, "../../testdata/samples/openai_agents_one_trace.json")
		if oneByOne {
			batches, ends := spansByEnd(td)
			for i, b := range batches {
				if i > 0 {
					clk.advance(ends[i].Sub(ends[i-1]))
				}
				p.step(ctx)
				_, err := p.processTraces(ctx, b)
				require.NoError(t, err)
			}
		} else {
			_, err := p.processTraces(ctx, td)
			require.NoError(t, err)
		}
		closeAndEnd(p, clk, cfg)

		final, provisional := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
		for i, u := range users {
			require.Len(t, provisional[i], 1, "turn %d", i)
			assert.Equal(t, u, provisional[i][0].UserMessage, "turn %d", i)
		}
		assert.Len(t, provisional, len(users))
		assert.Equal(t, map[int]int{0: 1, 1: 1, 2: 1}, countedVerdicts(final), "one counted final verdict a turn")
		require.NotEmpty(t, final[0])
		assert.Equal(t, evaluation.DetectionRDM, final[0][0].DetectionType, "turn 1's correction follows turn 0")
		as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		require.Len(t, as, 1)
		require.Len(t, as[0].TurnResults, 3)
		for i, tr := range as[0].TurnResults {
			assert.Equal(t, i, tr.TurnIndex)
			assert.Equal(t, users[i], tr.UserMessage)
		}
		assert.Equal(t, 1, as[0].Conversation.RDMDetections)
		stored, err := p.cont.LoadContinuation(ctx, as[0].SessionID, nil)
		require.NoError(t, err)
		assert.Len(t, stored.Turns, 3, "the continuation store holds each turn of the trace")
		require.NoError(t, p.shutdown(ctx))
	}
	for _, oneByOne := range []bool{false, true} {
		name := "together"
		if oneByOne {
			name = "one by one"
		}
		t.Run(name, func(t *testing.T) {
			t.Run("memory", func(t *testing.T) { run(t, "", "", oneByOne) })
			onStores(t, func(t *testing.T, driver, dsn string) { run(t, driver, dsn, oneByOne) })
		})
	}
}

// oneTraceWithoutSessionKey returns the spans of the OpenAI Agents one-trace sample
// without its session.id and user.id (its session is keyed by the trace), one Traces a
// span in the order they end, with their end times (spansByEnd).
func oneTraceWithoutSessionKey(t *testing.T) ([]ptrace.Traces, []time.Time) {
	td := loadTraces(t, "../../testdata/samples/openai_agents_one_trace.json")
	forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
		sp.Attributes().Remove("session.id")
		sp.Attributes().Remove("user.id")
	})
	return spansByEnd(td)
}

// sendPaused sends batches (spansByEnd of a one-trace sample) to p one by one, the clock
// following their end times, and calls pause before the first span of the third request
// (the user's think time: it must advance clk). Every span must be passed on. It returns
// the trace id.
func sendPaused(t *testing.T, p *agentSessionProcessor, clk *testClock, batches []ptrace.Traces, ends []time.Time, pause func()) string {
	t.Helper()
	ctx := context.Background()
	var traceID string
	paused := false
	for i, b := range batches {
		sp := b.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		traceID = sp.TraceID().String()
		if i > 0 {
			clk.advance(ends[i].Sub(ends[i-1]))
		}
		if !paused && i > len(batches)/2 && sp.StartTimestamp().AsTime().After(ends[i-1].Add(250*time.Millisecond)) {
			pause()
			paused = true
		}
		p.step(ctx)
		in := b.SpanCount()
		out, err := p.processTraces(ctx, b)
		require.NoError(t, err)
		require.Equal(t, in, out.SpanCount(), "every span is passed on")
	}
	require.True(t, paused, "the sample's third request starts after a think time")
	return traceID
}

// withTraceID returns a copy of td with every span in trace id.
func withTraceID(td ptrace.Traces, id pcommon.TraceID) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	forEachSpan(out, func(_ pcommon.Resource, sp ptrace.Span) { sp.SetTraceID(id) })
	return out
}

// TestConversationInOneTraceWithoutSessionKeyPauses: the OpenAI Agents one-trace sample
// without its session.id (the session is keyed by the trace, docs/decisions/sessions.md
// §2.4.1), its spans sent one by one as they end, with a pause longer than
// session_timeout before the third request: the session keyed by the trace ends with
// two turns (its root has not arrived: the trace may go on), and the third request,
// which starts after them, continues it: turn index 2, turn 1's verdict given again
// with turn 2's message (not counted again), revision 2 over the three turns. When the
// shard could not keep the ended session's state (continuation.max_records below its
// records), the third request is a new part of the session, revision 1 again, which the
// result store places after the stored turns (there without the trace's root, so that
// the session ends on session_timeout again, and another session's state takes this
// one's place). Either way the result store, fed every analysis emitted as the exporter
// does, holds the three turns once each, in conversation order, and a straggler of the
// first request that comes at the end is late (SQLite and PostgreSQL; the pause longer
// than session_timeout + turn_timeout, and shorter, while the tracker still knows the
// trace). Before, the third request was late spans.
func TestConversationInOneTraceWithoutSessionKeyPauses(t *testing.T) {
	users := oneTraceUsers
	run := func(t *testing.T, driver, dsn string, kept bool, pause time.Duration) {
		ctx := context.Background()
		cfg := testConfig()
		cfg.TurnSettle, cfg.TurnTimeout = 100*time.Millisecond, 250*time.Millisecond
		cfg.Continuation.Driver, cfg.Continuation.DSN = driver, configopaque.String(dsn)
		cfg.Workers = 1
		if !kept {
			cfg.Continuation.MaxRecords = 1
		}
		tel := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
		p, sink, clk := newTestProcessor(t, cfg, tel)
		startWithoutWorker(t, p)
		t.Cleanup(func() { assert.NoError(t, p.shutdown(context.Background())) })
		results := resultStore(t, driver, dsn)
		batches, ends := oneTraceWithoutSessionKey(t)
		if !kept {
			// Without the trace's root (the application's span, which ends last), its
			// session ends on session_timeout again after the third request: a later
			// span is judged by the trace's end (the time rule) once the state is gone.
			batches, ends = batches[:len(batches)-1], ends[:len(ends)-1]
		}
		traceID := sendPaused(t, p, clk, batches, ends, func() {
			clk.advance(cfg.SessionTimeout + pause) // longer than session_timeout
		})
		closeAndEnd(p, clk, cfg)

		if !kept {
			// Another such session ends and takes the place of this one's state: what
			// follows is judged by the trace's end alone.
			_, err := p.processTraces(ctx, withTraceID(batches[0], pcommon.TraceID{0xee, 1}))
			require.NoError(t, err)
			closeAndEnd(p, clk, cfg)
			require.Len(t, analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession]), 3, "the other session ended")
		}
		// A span of the first request that comes after the session ended (a straggler:
		// a new span id) is late: it started before the analysed turns ended.
		straggler := ptrace.NewTraces()
		batches[0].CopyTo(straggler)
		straggler.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetSpanID(pcommon.SpanID{0xee, 2})
		_, err := p.processTraces(ctx, straggler)
		require.NoError(t, err)
		clk.advance(cfg.TurnTimeout + cfg.SessionTimeout + time.Minute)
		p.step(ctx)
		p.step(ctx)

		final, provisional := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
		as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		late := int64(1) // the straggler
		if kept {
			late++ // the application's span, ending after the last request closed: in no turn
		}
		metadatatest.AssertEqualProcessorAgentsessionLateSpans(t, tel, []metricdata.DataPoint[int64]{{Value: late}},
			metricdatatest.IgnoreTimestamp())
		as = slices.DeleteFunc(as, func(a evaluation.Analysis) bool { return a.SessionID != traceID })
		require.Len(t, as, 2, "one analysis at each end of the session, none for the late span")
		assert.Len(t, as[0].TurnResults, 2)
		assert.EqualValues(t, session.EndReasonSessionTimeout, as[0].EndReason, "the trace may go on")
		if kept {
			assert.Equal(t, map[int]int{0: 1, 1: 1, 2: 1}, countedVerdicts(final), "one counted final verdict a turn")
			assert.Len(t, final[1], 2, "turn 1's verdict given again with turn 2's message")
			assert.Equal(t, 2, as[1].AnalysisRevision)
			require.Len(t, as[1].TurnResults, 3, "the continued session's analysis covers every turn")
		} else {
			assert.Equal(t, 1, as[1].AnalysisRevision, "a new part")
			require.Len(t, as[1].TurnResults, 1)
			assert.Equal(t, users[2], as[1].TurnResults[0].UserMessage)
		}
		n := 0
		for _, trs := range provisional {
			for _, tr := range trs {
				if tr.SessionID == traceID {
					n++
				}
			}
		}
		assert.Equal(t, len(users), n, "each request evaluated once")

		exportAnalyses(t, results, sink, 0)
		a, err := results.GetAnalysis(ctx, traceID)
		require.NoError(t, err)
		require.Len(t, a.TurnResults, len(users), "every request of the trace is a stored turn")
		for i, tr := range a.TurnResults {
			assert.Equal(t, i, tr.TurnIndex)
			assert.Equal(t, users[i], tr.UserMessage, "turn %d", i)
		}
		assert.Equal(t, evaluation.DetectionRDM, a.TurnResults[0].DetectionType, "turn 1's correction follows turn 0")
	}
	for _, kept := range []bool{true, false} {
		// A pause past session_timeout + turn_timeout, and one shorter, while the tracker
		// still knows the trace's closed turns.
		for _, pause := range []time.Duration{time.Minute, 100 * time.Millisecond} {
			name := "continued"
			if !kept {
				name = "state not kept: a new part"
			}
			t.Run(fmt.Sprintf("%s, pause session_timeout+%s", name, pause), func(t *testing.T) {
				onStores(t, func(t *testing.T, driver, dsn string) { run(t, driver, dsn, kept, pause) })
			})
		}
	}
}

// pausedProcessor is a started processor (one worker, the continuation store on a SQLite
// file, turn_settle 100ms and turn_timeout 250ms so that each request of a one-trace
// sample sent one by one closes on its own) with cfg changed by change.
func pausedProcessor(t *testing.T, change func(*Config)) (*agentSessionProcessor, *consumertest.TracesSink, *testClock, *Config) {
	t.Helper()
	cfg := testConfig()
	cfg.TurnSettle, cfg.TurnTimeout = 100*time.Millisecond, 250*time.Millisecond
	cfg.Workers = 1
	cfg.Continuation.Driver, cfg.Continuation.DSN = "sqlite", configopaque.String(filepath.Join(t.TempDir(), "agenteval.db"))
	change(cfg)
	p, sink, clk := startedProcessor(t, cfg)
	return p, sink, clk, cfg
}

// assertContinued checks that the analyses of session id in sink are the two revisions
// of a paused one-trace conversation continued in memory: 2 turns, then 3 turns at
// revision 2, with turn 1's verdict given again with turn 2's message, not counted again.
func assertContinued(t *testing.T, sink *consumertest.TracesSink, id string) {
	t.Helper()
	as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	as = slices.DeleteFunc(as, func(a evaluation.Analysis) bool { return a.SessionID != id })
	require.Len(t, as, 2, "one analysis at each end of the session")
	assert.Len(t, as[0].TurnResults, 2)
	assert.Equal(t, 2, as[1].AnalysisRevision, "the third request continues the session")
	assert.Len(t, as[1].TurnResults, 3, "the continued session's analysis covers every turn")
	final, _ := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
	n := 0
	for _, tr := range final[1] {
		if tr.SessionID == id {
			n++
		}
	}
	assert.Equal(t, 2, n, "turn 1's verdict given again with turn 2's message")
}

// TestPausedTraceContinuedAfterOtherTracesEnded: while a paused one-trace conversation's
// state is kept, more traces without session key end in its shard than the shard
// remembers analysed traces (4 × continuation.max_records / workers): its next request
// still continues it (found by review: the state was kept, but its trace was forgotten,
// and the request became a new part at revision 1).
func TestPausedTraceContinuedAfterOtherTracesEnded(t *testing.T) {
	ctx := context.Background()
	p, sink, clk, cfg := pausedProcessor(t, func(cfg *Config) { cfg.Continuation.MaxRecords = 2 }) // 8 traces remembered
	batches, ends := oneTraceWithoutSessionKey(t)
	id := sendPaused(t, p, clk, batches, ends, func() {
		clk.advance(cfg.SessionTimeout + time.Minute) // the session ends on session_timeout
		p.step(ctx)
		for k := range 10 { // complete traces without session key end (single_trace)
			for _, b := range batches {
				_, err := p.processTraces(ctx, withTraceID(b, pcommon.TraceID{0xee, byte(k + 1)}))
				require.NoError(t, err)
			}
		}
		closeAndEnd(p, clk, cfg)
	})
	closeAndEnd(p, clk, cfg)
	assertContinued(t, sink, id)
}

// TestPausedTraceEvictedByMaxSessions: a paused one-trace conversation whose session
// max_sessions evicts (no open turn, its root not arrived) continues with its next
// request (found by review: the eviction ended it as single_trace, and the request was
// counted as late spans).
func TestPausedTraceEvictedByMaxSessions(t *testing.T) {
	ctx := context.Background()
	p, sink, clk, cfg := pausedProcessor(t, func(cfg *Config) { cfg.MaxSessions = 1 })
	batches, ends := oneTraceWithoutSessionKey(t)
	id := sendPaused(t, p, clk, batches, ends, func() {
		clk.advance(cfg.TurnTimeout + cfg.TurnSettle) // the two requests close
		p.step(ctx)
		// Another user's trace: max_sessions evicts the paused session.
		_, err := p.processTraces(ctx, withTraceID(batches[0], pcommon.TraceID{0xee, 1}))
		require.NoError(t, err)
		clk.advance(cfg.SessionTimeout + time.Minute)
		p.step(ctx)
	})
	closeAndEnd(p, clk, cfg)
	as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	as = slices.DeleteFunc(as, func(a evaluation.Analysis) bool { return a.SessionID != id })
	require.NotEmpty(t, as)
	assert.EqualValues(t, session.EndReasonMaxSessions, as[0].EndReason, "evicted, its trace may go on")
	assertContinued(t, sink, id)
}
