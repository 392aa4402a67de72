// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadatatest"
)

// fixturesDir holds recorded traces of real agent runs (see its README for attribution).
const fixturesDir = "../../testdata/fixtures"

func loadTraces(t testing.TB, path string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err, path)
	return td
}

// testClock is a controllable clock for the processor, safe for its worker goroutine
// (started by start) to read while the test advances it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
func newTestClock() *testClock { return &testClock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)} }
func testConfig() *Config      { return createDefaultConfig().(*Config) }

// countSpans counts the spans this collector emitted (evaluation spans, judge and
// embeddings calls) when evaluation is true, the others when false.
func countSpans(td ptrace.Traces, evaluation bool) int {
	n := 0
	forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
		_, isEval := sp.Attributes().Get(semconv.AgentEvalKind)
		_, isJudge := sp.Attributes().Get(semconv.AgentEvalJudge) // judge and embeddings calls
		if (isEval || isJudge) == evaluation {
			n++
		}
	})
	return n
}

func forEachSpan(td ptrace.Traces, fn func(pcommon.Resource, ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rs.Resource(), spans.At(k))
			}
		}
	}
}

// newTestProcessor builds the processor core with a controlled clock and a sink, without
// starting the worker: tests drive it with step().
func newTestProcessor(t testing.TB, cfg *Config, tel *componenttest.Telemetry) (*agentSessionProcessor, *consumertest.TracesSink, *testClock) {
	t.Helper()
	sink := new(consumertest.TracesSink)
	set := processortest.NewNopSettings(metadata.Type).TelemetrySettings
	if tel != nil {
		set = metadatatest.NewSettings(tel).TelemetrySettings
	}
	p, err := newProcessorCore(set, sink, cfg)
	require.NoError(t, err)
	clk := newTestClock()
	p.now = clk.now
	return p, sink, clk
}

// evalSpans returns the evaluation spans the sink received, keyed by kind.
func evalSpans(sink *consumertest.TracesSink) map[string][]ptrace.Span {
	out := map[string][]ptrace.Span{}
	for _, td := range sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
			if k, ok := sp.Attributes().Get(semconv.AgentEvalKind); ok {
				out[k.Str()] = append(out[k.Str()], sp)
			}
		})
	}
	return out
}

func TestPassesEverySpanOnUnchanged(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixturesDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			factory := NewFactory()
			sink := new(consumertest.TracesSink)
			proc, err := factory.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), testConfig(), sink)
			require.NoError(t, err)
			require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
			in := loadTraces(t, f)
			want := loadTraces(t, f)
			in.MarkReadOnly() // the processor declares MutatesData=false: it must not write.
			require.NoError(t, proc.ConsumeTraces(context.Background(), in))
			// The batch is passed on at once, before any evaluation.
			require.GreaterOrEqual(t, len(sink.AllTraces()), 1)
			require.NoError(t, ptracetest.CompareTraces(want, sink.AllTraces()[0]))
			require.NoError(t, proc.Shutdown(context.Background()))
			// Shutdown evaluates what was open: only evaluation spans were added.
			var passed int
			for _, td := range sink.AllTraces() {
				passed += countSpans(td, false)
			}
			assert.Equal(t, want.SpanCount(), passed, "spans in == spans out")
			assert.NotEmpty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "the session is evaluated at shutdown")
		})
	}
}

func TestEvaluationSpansForHandoffFixture(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig()
	cfg.Emit.Interactions = EmitToolCallsAll
	p, sink, clk := newTestProcessor(t, cfg, tel)
	in := loadTraces(t, filepath.Join(fixturesDir, "openai_agents_genai_adot_spans.otlp.json"))
	_, err := p.processTraces(context.Background(), in)
	require.NoError(t, err)

	// Nothing is due before turn_settle.
	p.step(context.Background())
	assert.Empty(t, evalSpans(sink))

	clk.advance(3 * time.Second) // > turn_settle: the turn closes.
	p.step(context.Background())
	spans := evalSpans(sink)
	require.Len(t, spans[semconv.EvalKindTurn], 1)
	assert.Empty(t, spans[semconv.EvalKindAgentSession])

	agents := map[string]bool{}
	for _, sp := range spans[semconv.EvalKindAgentInteract] {
		name, _ := sp.Attributes().Get(semconv.GenAIAgentName)
		agents[name.Str()] = true
		assert.Equal(t, "evaluate agent_interaction", sp.Name())
		assert.False(t, sp.ParentSpanID().IsEmpty())
	}
	assert.Equal(t, map[string]bool{"coordinator": true, "math_specialist": true}, agents)

	turn := spans[semconv.EvalKindTurn][0]
	tr, err := evalspan.DecodeTurn(turn.Attributes())
	require.NoError(t, err)
	assert.False(t, tr.Final)
	assert.Equal(t, tr.RootSpanID, turn.ParentSpanID().String(), "the turn span is parented to the turn root")
	assert.Equal(t, tr.TraceID, turn.TraceID().String())

	clk.advance(6 * time.Minute) // > session_timeout: the session ends.
	p.step(context.Background())
	spans = evalSpans(sink)
	require.Len(t, spans[semconv.EvalKindAgentSession], 1)
	sess := spans[semconv.EvalKindAgentSession][0]
	conv, _ := sess.Attributes().Get(semconv.GenAIConversationID)
	assert.Equal(t, "7cdeb989-856d-4e70-9b40-02b70cb12287", conv.Str())
	assert.Equal(t, 1, sess.Links().Len())
	an, err := evalspan.DecodeAnalysis(sess.Attributes())
	require.NoError(t, err)
	_, hasJSON := sess.Attributes().Get(semconv.AgentEvalAnalysis)
	assert.False(t, hasJSON, "the analysis JSON is off by default (emit.analysis)")
	assert.Equal(t, 1, an.AnalysisRevision)
	assert.Equal(t, conv.Str(), an.SessionID)
	assert.False(t, an.Partial)
	assert.Contains(t, an.PerAgentScores, "coordinator")
	assert.Contains(t, an.PerAgentScores, "math_specialist")
	// The final verdict of the last turn is emitted with the session.
	require.Len(t, spans[semconv.EvalKindTurn], 2)

	var events int
	forEachSpanEvent(sess, func(ev ptrace.SpanEvent) {
		assert.Equal(t, semconv.EventEvaluationResult, ev.Name())
		_, ok := ev.Attributes().Get(semconv.GenAIEvaluationName)
		assert.True(t, ok)
		events++
	})
	assert.Positive(t, events)

	metadatatest.AssertEqualProcessorAgentsessionSpansObserved(t, tel,
		[]metricdata.DataPoint[int64]{{Value: int64(in.SpanCount())}}, metricdatatest.IgnoreTimestamp())
}

func forEachSpanEvent(sp ptrace.Span, fn func(ptrace.SpanEvent)) {
	for i := 0; i < sp.Events().Len(); i++ {
		fn(sp.Events().At(i))
	}
}

func TestMaxSessionsEvictsOldestAsPartial(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig()
	cfg.MaxSessions = 2
	p, sink, clk := newTestProcessor(t, cfg, tel)
	for i, id := range []string{"s-1", "s-2", "s-3"} {
		td := agentTrace(id, byte(i+1), `{"city":"Paris"}`)
		_, err := p.processTraces(context.Background(), td)
		require.NoError(t, err)
		clk.advance(time.Second)
	}
	p.step(context.Background())
	sessions := evalSpans(sink)[semconv.EvalKindAgentSession]
	require.Len(t, sessions, 1, "the oldest session is closed early")
	id, _ := sessions[0].Attributes().Get(semconv.AgentEvalSessionID)
	assert.Equal(t, "s-1", id.Str())
	partial, _ := sessions[0].Attributes().Get(semconv.AgentEvalPartial)
	assert.True(t, partial.Bool())
	metadatatest.AssertEqualProcessorAgentsessionSessionsEvicted(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}

// agentTrace builds a small GenAI trace: an invoke_agent root with one execute_tool child.
func agentTrace(sessionID string, seed byte, args string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "test-agents")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	tid := pcommon.TraceID{seed, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	start := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

	tool := spans.AppendEmpty()
	tool.SetTraceID(tid)
	tool.SetSpanID(pcommon.SpanID{seed, 0, 0, 0, 0, 0, 0, 2})
	tool.SetParentSpanID(pcommon.SpanID{seed, 0, 0, 0, 0, 0, 0, 1})
	tool.SetName("execute_tool get_weather")
	tool.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(10 * time.Millisecond)))
	tool.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(95 * time.Millisecond)))
	tool.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	tool.Attributes().PutStr("gen_ai.tool.name", "get_weather")
	tool.Attributes().PutStr("gen_ai.tool.call.arguments", args)
	tool.Attributes().PutStr("gen_ai.conversation.id", sessionID)

	root := spans.AppendEmpty()
	root.SetTraceID(tid)
	root.SetSpanID(pcommon.SpanID{seed, 0, 0, 0, 0, 0, 0, 1})
	root.SetName("invoke_agent weather")
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(200 * time.Millisecond)))
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	root.Attributes().PutStr("gen_ai.agent.name", "weather")
	root.Attributes().PutStr("gen_ai.conversation.id", sessionID)
	root.Attributes().PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`)
	root.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"It is rainy in Paris."}],"finish_reason":"stop"}]`)
	return td
}

// TestBadInputNeverLosesSpans feeds hostile input; every span must come out unchanged and
// the processor must neither panic nor block.
func TestBadInputNeverLosesSpans(t *testing.T) {
	huge := strings.Repeat("x", 5<<20)
	tests := []struct {
		name   string
		mutate func(td ptrace.Traces)
	}{
		{"malformed attribute values", func(td ptrace.Traces) {
			sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
			sp.Attributes().PutInt("gen_ai.agent.name", 42)
			sp.Attributes().PutStr("gen_ai.input.messages", `[{"role":"user","parts":`)
			sp.Attributes().PutEmptyMap("gen_ai.output.messages").PutStr("oops", "map")
			sp.Attributes().PutStr("gen_ai.usage.input_tokens", "many")
		}},
		{"tool arguments not JSON", func(td ptrace.Traces) {
			td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("gen_ai.tool.call.arguments", "city=Paris")
		}},
		{"span is its own parent", func(td ptrace.Traces) {
			sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
			sp.SetParentSpanID(sp.SpanID())
		}},
		{"cycle", func(td ptrace.Traces) {
			spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			spans.At(1).SetParentSpanID(spans.At(0).SpanID())
		}},
		{"missing parents", func(td ptrace.Traces) {
			spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			spans.At(0).SetParentSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
			spans.At(1).SetParentSpanID(pcommon.SpanID{8, 8, 8, 8, 8, 8, 8, 8})
		}},
		{"duplicate spans", func(td ptrace.Traces) {
			spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			spans.At(0).CopyTo(spans.AppendEmpty())
			spans.At(1).CopyTo(spans.AppendEmpty())
		}},
		{"5 MB attribute", func(td ptrace.Traces) {
			td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("gen_ai.tool.call.result", huge)
			td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).Attributes().PutStr("gen_ai.output.messages",
				`[{"role":"assistant","parts":[{"type":"text","content":"`+huge+`"}]}]`)
		}},
		{"invalid UTF-8", func(td ptrace.Traces) {
			spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			spans.At(0).Attributes().PutStr("gen_ai.tool.call.arguments", "{\"city\":\"Par\xffis\"}")
			spans.At(1).Attributes().PutStr("gen_ai.agent.name", "wea\xc3\x28ther")
			spans.At(1).Attributes().PutStr("gen_ai.conversation.id", "s\xff")
		}},
		{"no ids at all", func(td ptrace.Traces) {
			spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			spans.At(0).SetTraceID(pcommon.TraceID{})
			spans.At(0).SetSpanID(pcommon.SpanID{})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			set := metadatatest.NewSettings(tel)
			sink := new(consumertest.TracesSink)
			proc, err := NewFactory().CreateTraces(context.Background(), set, testConfig(), sink)
			require.NoError(t, err)
			require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
			in := agentTrace("bad-"+tt.name, 7, `{"city":"Paris"}`)
			tt.mutate(in)
			want := ptrace.NewTraces()
			in.CopyTo(want)
			require.NotPanics(t, func() { require.NoError(t, proc.ConsumeTraces(context.Background(), in)) })
			require.NoError(t, ptracetest.CompareTraces(want, sink.AllTraces()[0]))
			require.NoError(t, proc.Shutdown(context.Background()))
			var passed int
			for _, td := range sink.AllTraces() {
				passed += countSpans(td, false)
			}
			assert.Equal(t, want.SpanCount(), passed, "spans in == spans out")
			_, err = tel.GetMetric("otelcol_processor_agentsession_evaluation_errors")
			assert.Error(t, err, "no evaluation error was recorded")
		})
	}
}

// TestDueChecks: each batch schedules a check at its arrival + turn_settle, rounded up
// to dueGrain; batches within one grain share it; a step drops the checks it covered.
func TestDueChecks(t *testing.T) {
	cfg := testConfig()
	cfg.TurnSettle = 500 * time.Millisecond
	p, _, _ := newTestProcessor(t, cfg, nil)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p.mu.Lock()
	assert.True(t, p.scheduleDue(t0.Add(3*time.Millisecond)), "the first check wakes the worker")
	assert.False(t, p.scheduleDue(t0.Add(7*time.Millisecond)), "same grain")
	assert.False(t, p.scheduleDue(t0.Add(25*time.Millisecond)))
	assert.False(t, p.scheduleDue(t0.Add(20*time.Millisecond)), "a clock that went back: covered by a later check")
	assert.Equal(t, []time.Time{t0.Add(510 * time.Millisecond), t0.Add(530 * time.Millisecond)}, p.due)
	p.mu.Unlock()

	d, ok := p.nextDue(t0.Add(100 * time.Millisecond))
	require.True(t, ok)
	assert.Equal(t, 410*time.Millisecond, d)
	d, ok = p.nextDue(t0.Add(510 * time.Millisecond))
	require.True(t, ok)
	assert.Equal(t, 20*time.Millisecond, d, "the check at 510ms is covered")
	_, ok = p.nextDue(t0.Add(time.Second))
	assert.False(t, ok)
}

// blockingSink blocks ConsumeTraces of batches holding spans of session `blocked` until
// release is closed; it keeps every other batch.
type blockingSink struct {
	consumertest.TracesSink
	blocked string
	release chan struct{}
}

func (s *blockingSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	hit := false
	forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
		if v, ok := sp.Attributes().Get(semconv.AgentEvalSessionID); ok && v.Str() == s.blocked {
			hit = true
		}
	})
	if hit {
		<-s.release
	}
	return s.TracesSink.ConsumeTraces(ctx, td)
}

// TestSlowShardDoesNotHoldOthers: while one shard's emission is held (a slow next
// consumer, a long session analysis), the worker goes on closing turns and the other
// shard evaluates and emits them.
func TestSlowShardDoesNotHoldOthers(t *testing.T) {
	cfg := testConfig()
	cfg.TurnSettle = 20 * time.Millisecond
	cfg.Workers = 2
	slow, fast := "slow-0", ""
	for i := 1; fast == ""; i++ {
		if id := fmt.Sprintf("fast-%d", i); shardOf(id, 2) != shardOf(slow, 2) {
			fast = id
		}
	}
	sink := &blockingSink{blocked: slow, release: make(chan struct{})}
	p, err := newProcessorCore(processortest.NewNopSettings(metadata.Type).TelemetrySettings, sink, cfg)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
	_, err = p.processTraces(ctx, chatTurn(slow, 1, time.Now(), "Weather in Paris?", "Sunny.", true))
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // the slow session's turn closes; its emission blocks
	_, err = p.processTraces(ctx, chatTurn(fast, 2, time.Now(), "Weather in Lyon?", "Rainy.", true))
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return sink.SpanCount() > 0 }, 5*time.Second, 10*time.Millisecond,
		"the other shard's turn is emitted while the first is held")
	close(sink.release)
	require.NoError(t, p.shutdown(ctx))
}

// TestEmitsInChunks: a shard whose batch of events takes longer than emitEvery to
// evaluate emits what it has evaluated in chunks of at least minChunkEvents, each
// stamped when its evaluation began, so the first turns of a burst do not wait for the
// last; each turn is emitted once. A batch evaluated within emitEvery goes out whole.
func TestEmitsInChunks(t *testing.T) {
	const sessions = 2*minChunkEvents + minChunkEvents/2
	for _, tc := range []struct {
		name   string
		tick   time.Duration // how far the clock moves on each reading during the step
		chunks int
	}{
		{name: "quick batch, one emission", tick: 0, chunks: 1},
		// Each event moves the clock 0.6 × emitEvery: past emitEvery after two events, a
		// chunk is cut at minChunkEvents: two full chunks and the rest.
		{name: "slow batch, in chunks", tick: emitEvery * 6 / 10, chunks: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Workers = 1 // every session on one shard: one batch of events
			p, sink, clk := newTestProcessor(t, cfg, nil)
			ctx := context.Background()
			for i := range sessions {
				_, err := p.processTraces(ctx, chatTurn(fmt.Sprintf("chunk-%d", i), i+1, clk.now(), "Weather in Paris?", "Sunny.", true))
				require.NoError(t, err)
			}
			clk.advance(cfg.TurnSettle + time.Second)
			p.now = func() time.Time {
				clk.advance(tc.tick)
				return clk.now()
			}
			p.step(ctx)

			batches := sink.AllTraces()
			require.Len(t, batches, tc.chunks)
			seen := map[string]int{}
			var last pcommon.Timestamp
			for _, td := range batches {
				var ts pcommon.Timestamp
				forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
					if k, _ := sp.Attributes().Get(semconv.AgentEvalKind); k.Str() == semconv.EvalKindTurn {
						seen[sp.TraceID().String()]++
					}
					ts = sp.StartTimestamp()
				})
				if tc.tick > 0 {
					assert.Greater(t, ts, last, "a later chunk is stamped when its evaluation began")
				}
				last = ts
			}
			assert.Len(t, seen, sessions, "every turn evaluated")
			for trace, n := range seen {
				assert.Equal(t, 1, n, "turn %s emitted once", trace)
			}
		})
	}
}

// TestRemoteParentTurnIsWhole replays the OpenAI Agents sample with its top span given a
// parent in the caller's process, as a W3C traceparent does (OTLP flags: the parent is
// remote), and the caller's spans never come: the turn does not close at turn_settle
// (the caller may export here too) but with its idle session, whole, and the analysis is
// the one of the unchanged trace. Before, it was cut as partial, with task completion
// unknown.
func TestRemoteParentTurnIsWhole(t *testing.T) {
	run := func(remote bool) (turnsAtSettle int, a evaluation.Analysis) {
		cfg := testConfig()
		p, sink, clk := newTestProcessor(t, cfg, nil)
		ctx := context.Background()
		td := loadTraces(t, "../../testdata/samples/openai_agents_handoff.json")
		if remote {
			forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
				if sp.ParentSpanID().IsEmpty() {
					sp.SetParentSpanID(pcommon.SpanID{0xca, 0x11, 0xe4, 0, 0, 0, 0, 1})
					sp.SetFlags(0x301) // sampled; parent context known to be remote
				}
			})
		}
		_, err := p.processTraces(ctx, td)
		require.NoError(t, err)
		clk.advance(cfg.TurnSettle + time.Second)
		p.step(ctx)
		turnsAtSettle = len(evalSpans(sink)[semconv.EvalKindTurn])
		clk.advance(cfg.TurnTimeout + cfg.SessionTimeout + time.Minute)
		p.step(ctx)
		clk.advance(time.Minute)
		p.step(ctx)
		as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		require.Len(t, as, 1)
		return turnsAtSettle, as[0]
	}
	n, local := run(false)
	require.Equal(t, 1, n, "the unchanged trace closes at turn_settle")
	n, remote := run(true)
	assert.Equal(t, 0, n, "a top span with a remote parent is no root: no close at turn_settle")
	require.Len(t, remote.TurnResults, 1)
	assert.False(t, remote.TurnResults[0].Partial)
	assert.False(t, remote.Partial)
	require.NotNil(t, remote.TaskCompletion)
	assert.Equal(t, local.TaskCompletion, remote.TaskCompletion)
	assert.Equal(t, local.TurnResults, remote.TurnResults)
	assert.Equal(t, local.OverallScore, remote.OverallScore)
}

// TestBadInputNamedInTheResult: a turn whose LLM span carries malformed message JSON and
// a token count that is no number, and a duplicate of its root span, is passed on
// unchanged and evaluated from what could be read; its turn span and the session's
// analysis list the anomalies, and the processor counts them by kind. Before, the
// extractor's problems and assembly's anomalies reached no output at all.
func TestBadInputNamedInTheResult(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig()
	p, sink, clk := newTestProcessor(t, cfg, tel)
	ctx := context.Background()
	td := chatTurn("bad-input", 1, clk.now(), "Weather in Paris?", "Sunny.", true)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	llm := spans.At(0)
	llm.Attributes().PutStr("gen_ai.input.messages", `[{"role":"user","parts":`)
	llm.Attributes().PutStr("gen_ai.usage.input_tokens", "many")
	spans.At(1).CopyTo(spans.AppendEmpty()) // the root twice
	want := ptrace.NewTraces()
	td.CopyTo(want)
	out, err := p.processTraces(ctx, td)
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(want, out), "passed on unchanged")
	clk.advance(cfg.TurnSettle + time.Second)
	p.step(ctx)
	clk.advance(cfg.SessionTimeout + time.Minute)
	p.step(ctx)

	anomalies := []string{session.AnomalyDuplicateSpan, session.AnomalyUnreadableValue}
	turns := evalSpans(sink)[semconv.EvalKindTurn]
	require.NotEmpty(t, turns)
	for _, sp := range turns {
		tr, err := evalspan.DecodeTurn(sp.Attributes())
		require.NoError(t, err)
		assert.Equal(t, anomalies, tr.Anomalies, "final=%v", tr.Final)
	}
	as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
	require.Len(t, as, 1)
	require.Len(t, as[0].TurnResults, 1)
	assert.Equal(t, anomalies, as[0].TurnResults[0].Anomalies)
	assert.Equal(t, "Sunny.", as[0].TurnResults[0].FinalResponse, "the rest is read")
	metadatatest.AssertEqualProcessorAgentsessionTurnAnomalies(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("anomaly", session.AnomalyDuplicateSpan))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("anomaly", session.AnomalyUnreadableValue))},
	}, metricdatatest.IgnoreTimestamp())
}
