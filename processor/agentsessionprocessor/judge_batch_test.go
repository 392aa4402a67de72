// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadatatest"
)

// refusedJudgeConfig has one shard (one emission a chunk), a dataset case with the judge of
// its interactions, and a session-metric judge of one worker and a queue of one job, at
// url.
func refusedJudgeConfig(url string, judged bool) *Config {
	cfg := referencesTestConfig()
	cfg.Workers = 1
	if judged {
		cfg.Judge = judge.Config{Enabled: true, Endpoint: url + "/v1", Model: "m", Rubric: "r", Timeout: time.Minute,
			Concurrency: 1, QueueSize: 1, Metrics: []judge.Metric{judge.MetricTaskCompletion, judge.MetricInteractions}}
	}
	return cfg
}

// judgeSpanCall says, for each judge or reference span the sink received, its session
// and kind ("conv-x/judge"), how many there were and the index of the ConsumeTraces call
// that carried it; and, per session, the index of the call that carried its agent_session
// span.
func judgeSpanCall(t *testing.T, calls []ptrace.Traces) (judged map[string][]int, sessions map[string]int) {
	t.Helper()
	judged, sessions = map[string][]int{}, map[string]int{}
	for i, td := range calls {
		forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
			kind, _ := sp.Attributes().Get(semconv.AgentEvalKind)
			sid, _ := sp.Attributes().Get(semconv.AgentEvalSessionID)
			switch kind.Str() {
			case semconv.EvalKindJudge, semconv.EvalKindReference:
				judged[sid.Str()+"/"+kind.Str()] = append(judged[sid.Str()+"/"+kind.Str()], i)
			case semconv.EvalKindAgentSession:
				sessions[sid.Str()] = i
			}
		})
	}
	return judged, sessions
}

// holdJudge makes p's judge busy: conv-held's job holds the only worker (the judge at
// reqs never answers) and conv-queued's fills the queue.
func holdJudge(t *testing.T, p *agentSessionProcessor, clk *testClock, reqs *atomic.Int64) {
	t.Helper()
	runSession(t, p, clk, datasetRun(70, "conv-held", "", "", "Find papers", "search_papers"))
	require.Eventually(t, func() bool { return reqs.Load() == 1 }, 5*time.Second, 10*time.Millisecond, "the worker holds the first job")
	runSession(t, p, clk, datasetRun(71, "conv-queued", "", "", "Find papers", "search_papers"))
}

// refusedSessions are the sessions whose judge jobs find the queue full: each asks for a
// session-metric judge job and its dataset case's judge job.
var refusedSessions = []string{"conv-r1", "conv-r2", "conv-r3"}

// feedRefused gives p one turn of each of refusedSessions, matching the dataset's papers
// case; each session ends when its turn closes.
func feedRefused(t *testing.T, p *agentSessionProcessor) {
	t.Helper()
	for i, id := range refusedSessions {
		_, err := p.processTraces(context.Background(), datasetRun(byte(72+i), id, "papers", "run-r", "x", "search_papers", "summarize"))
		require.NoError(t, err)
	}
}

// callsWithoutJudge drives a processor of refusedJudgeConfig without a judge, shuts it
// down and returns how many ConsumeTraces calls it made: the shards' emissions alone.
func callsWithoutJudge(t *testing.T, drive func(*agentSessionProcessor, *testClock)) int {
	t.Helper()
	p, sink, clk := newTestProcessor(t, refusedJudgeConfig("", false), nil)
	drive(p, clk)
	require.NoError(t, p.shutdown(context.Background()))
	require.Len(t, evalSpans(sink)[semconv.EvalKindAgentSession], len(refusedSessions))
	return len(sink.AllTraces())
}

// assertJoinedTheirSessions asserts that calls carry one judge and one reference span of
// each of refusedSessions, each in the call that carries its session's agent_session span,
// and returns judgeSpanCall's judged.
func assertJoinedTheirSessions(t *testing.T, calls []ptrace.Traces) map[string][]int {
	t.Helper()
	judged, sessions := judgeSpanCall(t, calls)
	for _, id := range refusedSessions {
		for _, kind := range []string{semconv.EvalKindJudge, semconv.EvalKindReference} {
			at := judged[id+"/"+kind]
			if assert.Len(t, at, 1, "%s: one %s span", id, kind) {
				assert.Equal(t, sessions[id], at[0], "%s: its %s span goes with its agent_session span", id, kind)
			}
		}
	}
	return judged
}

// TestRefusedJudgeJobsJoinTheShardEmission: the judge jobs the pool refuses (queue full)
// while a shard evaluates its sessions add no ConsumeTraces call of their own (one more
// export and one more store transaction each, under the very overload that filled the
// queue): each refused job's evaluate judge / evaluate reference span, every planned
// verdict a judge_error "judge queue full", goes out exactly once, in the call that carries
// its session's agent_session span. The shard makes as many calls as without a judge.
func TestRefusedJudgeJobsJoinTheShardEmission(t *testing.T) {
	ctx := context.Background()
	run := func(p *agentSessionProcessor, clk *testClock) {
		feedRefused(t, p)
		for range 2 {
			clk.advance(3 * time.Second)
			p.step(ctx)
		}
	}
	wantCalls := callsWithoutJudge(t, run)

	srv, reqs := hangingJudge(t, 0)
	p, sink, clk := newTestProcessor(t, refusedJudgeConfig(srv.URL, true), nil)
	holdJudge(t, p, clk, reqs)
	before := len(sink.AllTraces())
	run(p, clk)
	calls := sink.AllTraces()[before:]
	assert.Equal(t, wantCalls, len(calls), "ConsumeTraces calls: the refused jobs' spans add none")

	judged := assertJoinedTheirSessions(t, calls)
	assert.Len(t, judged, 2*len(refusedSessions), "no other judge span yet")
	for _, sp := range evalSpans(sink)[semconv.EvalKindJudge] {
		assert.Equal(t, map[string]string{"task_completion/": "error: judge queue full"}, judgeVerdictsOf(t, sp))
	}
	for _, sp := range evalSpans(sink)[semconv.EvalKindReference] {
		assert.Equal(t, map[string]string{refInteractions + "/": "error: judge queue full"}, judgeVerdictsOf(t, sp))
	}

	// The held and the queued jobs complete at shutdown, on the judge's pool, as before:
	// each emits its own span, once; no refused job's span comes again.
	require.NoError(t, p.shutdown(ctx))
	judged, _ = judgeSpanCall(t, sink.AllTraces())
	for _, id := range refusedSessions {
		assert.Len(t, judged[id+"/"+semconv.EvalKindJudge], 1, id)
		assert.Len(t, judged[id+"/"+semconv.EvalKindReference], 1, id)
	}
	assert.Len(t, judged["conv-held/"+semconv.EvalKindJudge], 1)
	assert.Len(t, judged["conv-queued/"+semconv.EvalKindJudge], 1)
	assert.Equal(t, int64(1), reqs.Load(), "a refused job makes no call")
}

// TestRefusedJudgeJobsAtShutdown: at shutdown the sessions still open are closed and
// evaluated; their judge jobs, refused because the queue is full, go out with the
// shutdown's own emission of their agent_session spans (judge_error "judge queue full"),
// once. The jobs the pool held (running, or queued) are then run with the pool's context
// cancelled (cause judge.ErrShutdown) and emit "judge shut down" on their own, once each:
// at that point no shard emits any more.
func TestRefusedJudgeJobsAtShutdown(t *testing.T) {
	ctx := context.Background()
	shardCalls := callsWithoutJudge(t, func(p *agentSessionProcessor, _ *testClock) { feedRefused(t, p) })

	srv, reqs := hangingJudge(t, 0)
	p, sink, clk := newTestProcessor(t, refusedJudgeConfig(srv.URL, true), nil)
	holdJudge(t, p, clk, reqs)
	feedRefused(t, p) // open at shutdown
	before := len(sink.AllTraces())
	require.NoError(t, p.shutdown(ctx))
	calls := sink.AllTraces()[before:]
	assert.Equal(t, shardCalls+2, len(calls), "ConsumeTraces calls: the shutdown's emission, and one per job the pool held")

	judged := assertJoinedTheirSessions(t, calls)
	assert.Len(t, judged, 2*len(refusedSessions)+2)
	got := map[string]map[string]string{}
	for _, sp := range evalSpans(sink)[semconv.EvalKindJudge] {
		sid, _ := sp.Attributes().Get(semconv.AgentEvalSessionID)
		got[sid.Str()] = judgeVerdictsOf(t, sp)
	}
	full := map[string]string{"task_completion/": "error: judge queue full"}
	shut := map[string]string{"task_completion/": "error: judge shut down"}
	assert.Equal(t, map[string]map[string]string{"conv-held": shut, "conv-queued": shut,
		"conv-r1": full, "conv-r2": full, "conv-r3": full}, got)
	assert.Equal(t, int64(1), reqs.Load())
}

// TestJudgeJobRefusedAfterPoolShutdown: a job the pool refuses because it is shut down
// (judge.ErrShutdown; the processor shuts its judge down after its last evaluation, so this
// guards the path, not a sequence it runs) is handled as a full queue's: its span, the
// verdict judge_error "judge shut down", goes out once with its session's agent_session
// span, in the shard's one call.
func TestJudgeJobRefusedAfterPoolShutdown(t *testing.T) {
	ctx := context.Background()
	base, baseSink, baseClk := newTestProcessor(t, refusedJudgeConfig("", false), nil)
	runSession(t, base, baseClk, datasetRun(80, "conv-shut", "", "", "Find papers", "search_papers"))
	require.NoError(t, base.shutdown(ctx))

	srv, reqs := hangingJudge(t, 0)
	p, sink, clk := newTestProcessor(t, refusedJudgeConfig(srv.URL, true), nil)
	require.NoError(t, p.judge.client.Pool().Shutdown(ctx))
	runSession(t, p, clk, datasetRun(80, "conv-shut", "", "", "Find papers", "search_papers"))
	assert.Equal(t, len(baseSink.AllTraces()), len(sink.AllTraces()), "ConsumeTraces calls: none of its own")
	judged, sessions := judgeSpanCall(t, sink.AllTraces())
	require.Len(t, judged["conv-shut/"+semconv.EvalKindJudge], 1)
	assert.Equal(t, sessions["conv-shut"], judged["conv-shut/"+semconv.EvalKindJudge][0])
	assert.Equal(t, map[string]string{"task_completion/": "error: judge shut down"},
		judgeVerdictsOf(t, evalSpans(sink)[semconv.EvalKindJudge][0]))
	require.NoError(t, p.shutdown(ctx))
	assert.Len(t, evalSpans(sink)[semconv.EvalKindJudge], 1, "once")
	assert.Zero(t, reqs.Load())
}

// TestJudgeSpansCountedAsEmitted: a judge job that completes on the judge's pool emits its
// spans (evaluate reference, and one chat span per call) as the shards do, counted in
// processor_agentsession_evaluations_emitted: every span the processor emits is counted,
// whether the job ran on the pool or was refused into a shard's batch.
func TestJudgeSpansCountedAsEmitted(t *testing.T) {
	srv, prompts := verdictServer(t)
	sink, tel := runReferenceJudge(t, judge.Config{}, srv.URL)
	require.Len(t, prompts(), 2, "the case's two interactions are judged")
	require.Len(t, evalSpans(sink)[semconv.EvalKindReference], 1)
	metadatatest.AssertEqualProcessorAgentsessionEvaluationsEmitted(t, tel,
		[]metricdata.DataPoint[int64]{{Value: int64(sink.SpanCount())}}, metricdatatest.IgnoreTimestamp())
}

// TestRefusedJudgeJobsRunOnceWhenOnePanics: the refused jobs of a chunk's event run into
// its batch once each, even when one panics, and the panic does not reach the event
// (its own spans are in the batch). Before, runRefused forgot the jobs only after the
// loop: a panic left them all in the batch, the next event of the chunk ran them again
// (a judge span twice), and the event was logged as failed with its spans emitted.
func TestRefusedJudgeJobsRunOnceWhenOnePanics(t *testing.T) {
	p, _, _ := newTestProcessor(t, testConfig(), nil)
	b := p.emitter.newBatch(time.Now())
	runs := map[string]int{}
	job := func(id string, panics bool) refusedJob {
		return refusedJob{cause: judge.ErrQueueFull, job: func(ctx context.Context, b *evalBatch) {
			runs[id]++
			assert.ErrorIs(t, context.Cause(ctx), judge.ErrQueueFull)
			b.appendSpan(id, semconv.EvalKindJudge, pcommon.TraceID{1}, pcommon.SpanID{1})
			if panics {
				panic("judge job " + id)
			}
		}}
	}
	// One chunk, two events, as shard.evaluate runs them: each recovers its own panics
	// and runs the refused jobs in a deferred call.
	event := func(refused ...refusedJob) (recovered any) {
		defer func() { recovered = recover() }()
		b.refused = append(b.refused, refused...)
		defer b.runRefused(p.logger)
		return nil
	}
	assert.Nil(t, event(job("session-a", false), job("session-b", true), job("session-c", false)), "a job's panic fails no event")
	assert.Nil(t, event())
	assert.Equal(t, map[string]int{"session-a": 1, "session-b": 1, "session-c": 1}, runs, "each refused job runs once")
	assert.Empty(t, b.refused)
	var sessions []string
	for i := range b.spans.Len() {
		v, _ := b.spans.At(i).Attributes().Get(semconv.AgentEvalSessionID)
		sessions = append(sessions, v.Str())
	}
	assert.Equal(t, []string{"session-a", "session-c"}, sessions, "the panicking job's half-built span is taken out")
}
