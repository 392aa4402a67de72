// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/groupbytraceprocessor"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
)

// benchWorkload is a set of agent-shaped batches: sessions of several turns, each turn a
// trace of 20-60 spans (an invoke_workflow root, agents, chat spans with JSON messages
// and tool calls in their output, execute_tool spans with JSON arguments and results),
// exported in batches of about 512 spans that mix traces, as an SDK batch processor does,
// and decoded from OTLP protobuf as a receiver would.
type benchWorkload struct {
	batches []ptrace.Traces
	spans   int
}

func newBenchWorkload(sessions, turns int, seed uint64) benchWorkload {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var all []func(ptrace.SpanSlice)
	var w benchWorkload
	for s := 0; s < sessions; s++ {
		sid := fmt.Sprintf("bench-session-%05d", s)
		for t := 0; t < turns; t++ {
			n := 20 + rng.IntN(41)
			w.spans += n
			tid := pcommon.TraceID{}
			putRand(rng, tid[:])
			all = append(all, turnSpans(rng, sid, tid, n))
		}
	}
	// Interleave turns into batches of ~512 spans.
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var cur ptrace.Traces
	var spans ptrace.SpanSlice
	for i, add := range all {
		if i == 0 || spans.Len() >= 512 {
			cur = ptrace.NewTraces()
			rs := cur.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", "bench-agents")
			rs.Resource().Attributes().PutStr("telemetry.sdk.language", "python")
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("opentelemetry.instrumentation.openai_agents")
			spans = ss.Spans()
			w.batches = append(w.batches, cur)
		}
		add(spans)
	}
	// Decode the batches from OTLP protobuf, as a receiver does: every string is then
	// its own heap allocation (not a literal of this file), so what a processor pins
	// of a batch shows in retained-all-B/span.
	for i, td := range w.batches {
		data, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			panic(err)
		}
		if w.batches[i], err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(data); err != nil {
			panic(err)
		}
	}
	return w
}

func putRand(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
}

var benchAgents = []string{"triage", "refund_agent", "billing_agent", "researcher"}

// turnSpans returns a closure appending one turn of n spans.
func turnSpans(rng *rand.Rand, sessionID string, tid pcommon.TraceID, n int) func(ptrace.SpanSlice) {
	start := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(3600)) * time.Second)
	seed := rng.Uint64()
	return func(spans ptrace.SpanSlice) {
		r := rand.New(rand.NewPCG(seed, 1))
		newID := func() pcommon.SpanID { var id pcommon.SpanID; putRand(r, id[:]); return id }
		at := func(ms int) pcommon.Timestamp {
			return pcommon.NewTimestampFromTime(start.Add(time.Duration(ms) * time.Millisecond))
		}
		rootID := newID()
		var agentID pcommon.SpanID
		agent := ""
		for i := 1; i < n; i++ {
			sp := spans.AppendEmpty()
			sp.SetTraceID(tid)
			sp.SetSpanID(newID())
			sp.SetStartTimestamp(at(i * 10))
			sp.SetEndTimestamp(at(i*10 + 8))
			a := sp.Attributes()
			a.PutStr("gen_ai.conversation.id", sessionID)
			a.PutStr("gen_ai.provider.name", "openai")
			switch {
			case i%8 == 1:
				agent = benchAgents[r.IntN(len(benchAgents))]
				agentID = sp.SpanID()
				sp.SetParentSpanID(rootID)
				sp.SetName("invoke_agent " + agent)
				a.PutStr("gen_ai.operation.name", "invoke_agent")
				a.PutStr("gen_ai.agent.name", agent)
			case i%2 == 0:
				sp.SetParentSpanID(agentID)
				sp.SetName("chat gpt-4o")
				a.PutStr("gen_ai.operation.name", "chat")
				a.PutStr("gen_ai.request.model", "gpt-4o")
				a.PutInt("gen_ai.usage.input_tokens", int64(100+r.IntN(900)))
				a.PutInt("gen_ai.usage.output_tokens", int64(10+r.IntN(200)))
				a.PutStr("gen_ai.input.messages", `[{"role":"system","parts":[{"type":"text","content":"You are the `+agent+`."}]},{"role":"user","parts":[{"type":"text","content":"I need a refund for order #12345, it arrived damaged. The amount was $120.50."}]}]`)
				a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_`+fmt.Sprint(i)+`","name":"issue_refund","arguments":{"order_id":"12345","amount":120.5}}],"finish_reason":"tool_call"}]`)
			default:
				sp.SetParentSpanID(agentID)
				sp.SetName("execute_tool issue_refund")
				a.PutStr("gen_ai.operation.name", "execute_tool")
				a.PutStr("gen_ai.agent.name", "OpenAI Agent")
				a.PutStr("gen_ai.tool.name", "issue_refund")
				a.PutStr("gen_ai.tool.call.id", "call_"+fmt.Sprint(i-1))
				a.PutStr("gen_ai.tool.call.arguments", `{"order_id":"12345","amount":120.5}`)
				a.PutStr("gen_ai.tool.call.result", `{"status":"refunded","refund_id":"rf_881"}`)
			}
		}
		root := spans.AppendEmpty()
		root.SetTraceID(tid)
		root.SetSpanID(rootID)
		root.SetName("invoke_workflow support")
		root.SetStartTimestamp(at(0))
		root.SetEndTimestamp(at(n*10 + 20))
		root.Attributes().PutStr("gen_ai.operation.name", "invoke_workflow")
		root.Attributes().PutStr("gen_ai.conversation.id", sessionID)
	}
}

// benchTarget is one processor under test. live marks a target whose timed part also
// includes Shutdown: it counts the evaluation work, not only the ingest.
type benchTarget struct {
	name   string
	live   bool
	create func(b *testing.B) processor.Traces
}

func benchAgentSession(turnSettle time.Duration) func(b *testing.B) processor.Traces {
	return func(b *testing.B) processor.Traces {
		cfg := testConfig()
		cfg.MaxSessions = 1_000_000
		cfg.MaxSpansPerSession = 1_000_000
		if turnSettle > 0 {
			cfg.TurnSettle = turnSettle
		}
		p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(NewFactory().Type()), cfg, consumertest.NewNop())
		require.NoError(b, err)
		return p
	}
}

func benchTargets() []benchTarget {
	return []benchTarget{
		// Ingest only: with the default turn_settle (2s) no turn closes while the batches
		// are consumed, as groupbytrace (wait_duration 1h) releases none.
		{name: "agentsession", create: benchAgentSession(0)},
		// Ingest with the worker closing, assembling and evaluating turns concurrently
		// (turn_settle 1ms: the worker checks each batch 1ms after it), then Shutdown evaluating what is
		// left: the whole cost of every span, ingest and evaluation.
		{name: "agentsession-live", live: true, create: benchAgentSession(time.Millisecond)},
		{name: "groupbytrace", create: func(b *testing.B) processor.Traces {
			f := groupbytraceprocessor.NewFactory()
			cfg := f.CreateDefaultConfig().(*groupbytraceprocessor.Config)
			cfg.WaitDuration = time.Hour // hold every trace, as sessions are held
			p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
			require.NoError(b, err)
			return p
		}},
	}
}

// BenchmarkProcessor ingests the same agent-shaped batches into this processor and into
// contrib's groupbytraceprocessor v0.158.0 (which holds whole traces), and reports
// spans/s and the heap retained per span once everything is ingested:
//   - retained-B/span: what the processor allocated and still holds, the batches being
//     still alive (strings it shares with the batches are not counted);
//   - retained-all-B/span: the heap that stays reachable once the batches are dropped, so
//     also the parts of the batches the processor pins (strings it did not copy).
//
// Each iteration ingests a fresh copy of the batches (built untimed), so that dropping
// them frees everything the processor does not hold.
func BenchmarkProcessor(b *testing.B) {
	for _, tgt := range benchTargets() {
		b.Run(tgt.name, func(b *testing.B) {
			b.ReportAllocs()
			var retained, retainedAll float64
			spans := 0
			for b.Loop() {
				b.StopTimer()
				p := tgt.create(b)
				require.NoError(b, p.Start(context.Background(), componenttest.NewNopHost()))
				base := heapInUse()
				w := newBenchWorkload(200, 3, 42)
				spans = w.spans
				before := heapInUse()
				b.StartTimer()
				for _, td := range w.batches {
					if err := p.ConsumeTraces(context.Background(), td); err != nil {
						b.Fatal(err)
					}
				}
				if tgt.live {
					require.NoError(b, p.Shutdown(context.Background()))
					continue
				}
				b.StopTimer()
				// groupbytrace stores asynchronously: let its worker drain before measuring.
				time.Sleep(300 * time.Millisecond)
				retained = float64(heapInUse()-before) / float64(w.spans)
				runtime.KeepAlive(w)
				w = benchWorkload{}
				retainedAll = float64(heapInUse()-base) / float64(spans)
				require.NoError(b, p.Shutdown(context.Background()))
				b.StartTimer()
			}
			b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
			if !tgt.live {
				b.ReportMetric(retained, "retained-B/span")
				b.ReportMetric(retainedAll, "retained-all-B/span")
			}
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkCloseTurnOfLongSession measures closing one turn of an N-turn session: the
// turn's spans observed, the turn closed on settle, evaluated once, the previous turn's
// verdict made final and the evaluation spans emitted. The cost must not grow with N
// (docs/decisions/sessions.md §4.1).
func BenchmarkCloseTurnOfLongSession(b *testing.B) {
	for _, n := range []int{100, 400, 1600} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			cfg := testConfig()
			cfg.SessionTimeout = 24 * time.Hour
			cfg.MaxSessionDuration = 24 * time.Hour
			cfg.Workers = 1
			p, err := newProcessorCore(processortest.NewNopSettings(processortest.NopType).TelemetrySettings, consumertest.NewNop(), cfg)
			require.NoError(b, err)
			clk := newTestClock()
			p.now = clk.now
			ctx := context.Background()
			k := 0
			turn := func() {
				k++
				td := chatTurn("long", k, clk.now(), fmt.Sprintf("What is the weather in city %d on day %d?", k%50, k), fmt.Sprintf("In city %d it is sunny, %d degrees.", k%50, k%30), true)
				_, _ = p.processTraces(ctx, td)
				clk.advance(3 * time.Second)
				p.step(ctx)
			}
			for range n {
				turn()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				turn()
			}
			b.ReportMetric(float64(k), "turns_at_end")
		})
	}
}

// BenchmarkLongSessionMemory measures what an open session of n turns keeps on the heap
// (heap-B/turn, after GC, with the SQLite continuation store), holding every turn record
// (held=all, as before docs/decisions/sessions.md §4.2.2) or the last defaultHeldRecords
// (held=16), and what its end then costs (end-ms: the session's analysis, which takes the
// released records back from the store). Run with -benchtime=1x: each iteration is a
// whole session.
func BenchmarkLongSessionMemory(b *testing.B) {
	longSession(b, 40, 1<<30) // the first session's heap includes what the process sets up once
	for _, n := range []int{400, 1600} {
		for _, held := range []int{defaultHeldRecords, 1 << 30} {
			name := strconv.Itoa(held)
			if held == 1<<30 {
				name = "all"
			}
			b.Run(fmt.Sprintf("turns=%d/held=%s", n, name), func(b *testing.B) {
				var perTurn, endMs float64
				for b.Loop() {
					perTurn, endMs = longSession(b, n, held)
				}
				b.ReportMetric(perTurn, "heap-B/turn")
				b.ReportMetric(endMs, "end-ms")
			})
		}
	}
}

// longSession runs one session of n turns on a new SQLite continuation store and
// returns the heap it holds a turn while open and how long its end took, in ms.
func longSession(b *testing.B, n, held int) (perTurn, endMs float64) {
	cfg := testConfig()
	cfg.SessionTimeout = time.Minute
	cfg.MaxSessionDuration = 24 * time.Hour
	cfg.Workers = 1
	cfg.Continuation.Driver = "sqlite"
	cfg.Continuation.DSN = configopaque.String(filepath.Join(b.TempDir(), "agenteval.db"))
	p, err := newProcessorCore(processortest.NewNopSettings(processortest.NopType).TelemetrySettings, consumertest.NewNop(), cfg)
	require.NoError(b, err)
	p.heldRecords = held
	clk := newTestClock()
	p.now = clk.now
	ctx := context.Background()
	require.NoError(b, p.start(ctx, componenttest.NewNopHost()))
	defer func() { require.NoError(b, p.shutdown(ctx)) }()
	before := heapInUse()
	for k := range n {
		td := chatTurn("long", k+1, clk.now(), fmt.Sprintf("What is the weather in city %d on day %d?", k%50, k),
			fmt.Sprintf("In city %d it is sunny, %d degrees.", k%50, k%30), true)
		_, _ = p.processTraces(ctx, td)
		clk.advance(3 * time.Second)
		p.step(ctx)
	}
	perTurn = float64(heapInUse()-before) / float64(n)
	clk.advance(2 * time.Minute)
	start := time.Now()
	p.step(ctx)
	return perTurn, float64(time.Since(start).Microseconds()) / 1000
}
