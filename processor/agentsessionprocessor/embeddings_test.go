// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/judge/judgetest"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadatatest"
)

// driftingRun is a session whose user message shares no two words with what the agents
// do, and whose calls do not do the task it names (condense_notes for a summary is no
// task word, text.Tasks), so that intent drift asks the embeddings (docs/scoring.md §5.5).
func driftingRun(i int) ptrace.Traces {
	return datasetRun(byte(100+i), "conv-e"+string(rune('a'+i)), "", "", "Please summarise quantum chemistry lectures", "search_papers", "condense_notes")
}

// TestEmbeddingsServerHangs: with an embeddings endpoint that never answers, every span
// is passed on at once (spans in == spans out), every session is still evaluated (with
// the lexical similarity and an embeddings_error), and the evaluation worker pays one
// timeout, not one per turn: the endpoint then cools down.
func TestEmbeddingsServerHangs(t *testing.T) {
	srv := judgetest.New(t, true)
	cfg := testConfig()
	cfg.Judge.Embeddings = judge.EmbeddingsConfig{Endpoint: srv.BaseURL(), Model: "e", Timeout: 300 * time.Millisecond}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, sink, clk := newTestProcessor(t, cfg, tel)

	const sessions = 20
	in := 0
	ingest := time.Duration(0)
	for i := range sessions {
		td := driftingRun(i)
		in += td.SpanCount()
		start := time.Now()
		out, err := p.processTraces(context.Background(), td)
		ingest += time.Since(start)
		require.NoError(t, err)
		require.NoError(t, sink.ConsumeTraces(context.Background(), out)) // processorhelper passes the batch on
	}
	assert.Less(t, ingest, time.Second, "the ingest path never asks the embeddings")
	start := time.Now()
	for range 2 {
		clk.advance(3 * time.Second)
		p.step(context.Background())
	}
	assert.Less(t, time.Since(start), 5*time.Second, "one timeout, then the cooldown")
	require.NoError(t, p.shutdown(context.Background()))

	appSpans := 0
	for _, td := range sink.AllTraces() {
		appSpans += countSpans(td, false)
	}
	assert.Equal(t, in, appSpans, "spans in == spans out")
	assert.Len(t, evalSpans(sink)[semconv.EvalKindAgentSession], sessions, "every session is evaluated")
	assert.LessOrEqual(t, srv.Requests.Load(), int64(3), "the endpoint is left alone after it timed out")

	var fellBack int
	for _, sp := range evalSpans(sink)[semconv.EvalKindTurn] {
		forEachSpanEvent(sp, func(ev ptrace.SpanEvent) {
			if e, ok := ev.Attributes().Get(semconv.GenAIEvaluationExplanation); ok && strings.Contains(e.Str(), "embeddings_error") {
				fellBack++
			}
		})
	}
	assert.Positive(t, fellBack, "the fallback is recorded in the turn's explanation")
	st := p.emb.e.Stats()
	assert.Positive(t, st.Errors)
	// The requests that timed out are spans with their error; the cooldown's refusals
	// reached no server and are none.
	spans := embeddingsSpans(sink)
	require.NotEmpty(t, spans)
	assert.LessOrEqual(t, int64(len(spans)), srv.Requests.Load())
	for _, sp := range spans {
		typ, _ := sp.Attributes().Get(semconv.ErrorType)
		assert.Equal(t, semconv.EvalErrorTypeJudgeError, typ.Str())
		assert.Equal(t, ptrace.StatusCodeError, sp.Status().Code())
		_, ok := sp.Attributes().Get(semconv.GenAIUsageInputTokens)
		assert.False(t, ok, "no usage without a response")
	}
}

// TestEmbeddingsCostLimit: past judge.embeddings.max_calls_per_session the lexical
// similarity is used, the skip is recorded in the explanation and counted in
// processor_agentsession_judge_cost_limited.
func TestEmbeddingsCostLimit(t *testing.T) {
	srv := judgetest.New(t, false)
	cfg := testConfig()
	cfg.Judge.Embeddings = judge.EmbeddingsConfig{Endpoint: srv.BaseURL(), Model: "e", MaxTokensPerSession: 1}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, sink, clk := newTestProcessor(t, cfg, tel)
	runSession(t, p, clk, driftingRun(0))
	require.NoError(t, p.shutdown(context.Background()))
	assert.Zero(t, srv.Requests.Load())
	var limited int
	for _, sp := range evalSpans(sink)[semconv.EvalKindTurn] {
		forEachSpanEvent(sp, func(ev ptrace.SpanEvent) {
			if e, ok := ev.Attributes().Get(semconv.GenAIEvaluationExplanation); ok && strings.Contains(e.Str(), "embeddings_error: judge: cost limit per session reached: max_tokens_per_session 1") {
				limited++
			}
		})
	}
	assert.Positive(t, limited, "the provisional and the final turn span both carry it")
	// One turn: one intent-drift similarity asked (no follow-up, no CCM), refused once.
	metadatatest.AssertEqualProcessorAgentsessionJudgeCostLimited(t, tel, []metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())
}

// TestEmbeddingsServed: with a working endpoint the evaluator's similarities go through
// it (requests, cache hits) and are counted in the judge's series.
func TestEmbeddingsServed(t *testing.T) {
	srv := judgetest.New(t, false)
	cfg := testConfig()
	cfg.Judge.Embeddings = judge.EmbeddingsConfig{Endpoint: srv.BaseURL(), Model: "e"}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, _, clk := newTestProcessor(t, cfg, tel)
	runSession(t, p, clk, driftingRun(1))
	require.NoError(t, p.shutdown(context.Background()))
	st := p.emb.e.Stats()
	require.Positive(t, st.Calls)
	assert.Zero(t, st.Errors)
	metadatatest.AssertEqualProcessorAgentsessionJudgeCalls(t, tel, []metricdata.DataPoint[int64]{{Value: st.Calls}},
		metricdatatest.IgnoreTimestamp())
}

// TestSessionJudgeMaxTokens: past judge.max_tokens_per_session the remaining verdicts
// are judge errors naming the limit, not calls, and are counted as cost-limited.
func TestSessionJudgeMaxTokens(t *testing.T) {
	srv, prompts := verdictServer(t)
	cfg := testConfig()
	cfg.Judge = judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second,
		MaxTokensPerSession: 1, Metrics: []judge.Metric{judge.MetricTaskCompletion, judge.MetricResponseQuality}}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, sink, clk := newTestProcessor(t, cfg, tel)
	runSession(t, p, clk, datasetRun(63, "conv-t", "", "", "Find papers", "search_papers"))
	require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindJudge]) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.shutdown(context.Background()))
	assert.Empty(t, prompts())
	var capped int
	forEachSpanEvent(evalSpans(sink)[semconv.EvalKindJudge][0], func(ev ptrace.SpanEvent) {
		e, _ := ev.Attributes().Get(semconv.GenAIEvaluationExplanation)
		typ, _ := ev.Attributes().Get(semconv.ErrorType)
		if strings.Contains(e.Str(), "max_tokens_per_session 1") && typ.Str() == semconv.EvalErrorTypeJudgeError {
			capped++
		}
	})
	assert.Equal(t, 3, capped)
	metadatatest.AssertEqualProcessorAgentsessionJudgeCostLimited(t, tel, []metricdata.DataPoint[int64]{{Value: 3}},
		metricdatatest.IgnoreTimestamp())
}

// TestJudgeSpanCarriesSignedVerdicts: the judge's span carries its verdicts as the typed
// arrays the exporter stores, with the judged analysis revision, under the processor's
// signature (docs/decisions/reference-and-judge.md, late verdicts).
func TestJudgeSpanCarriesSignedVerdicts(t *testing.T) {
	srv, _ := verdictServer(t)
	cfg := testConfig()
	cfg.Judge = twoCallJudge(srv.URL)
	p, sink, clk := newTestProcessor(t, cfg, nil)
	runSession(t, p, clk, datasetRun(64, "conv-v", "", "", "Find papers", "search_papers"))
	require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindJudge]) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.shutdown(context.Background()))
	a := evalSpans(sink)[semconv.EvalKindJudge][0].Attributes()
	require.NoError(t, p.emitter.signer.Verify(a))
	rev, ok := a.Get(semconv.AgentEvalVerdictRevision)
	require.True(t, ok)
	assert.Equal(t, int64(1), rev.Int())
	names, _ := a.Get(semconv.AgentEvalVerdictNames)
	scores, _ := a.Get(semconv.AgentEvalVerdictScores)
	errs, _ := a.Get(semconv.AgentEvalVerdictErrors)
	require.Equal(t, 3, names.Slice().Len())
	require.Equal(t, 3, scores.Slice().Len())
	judged, capped := 0, 0
	for i := range 3 {
		if e := errs.Slice().At(i).Str(); e != "" {
			assert.Contains(t, e, "max_calls_per_session 2")
			assert.True(t, math.IsNaN(scores.Slice().At(i).Double()))
			capped++
		} else {
			assert.Equal(t, 0.7, scores.Slice().At(i).Double())
			judged++
		}
	}
	assert.Equal(t, [2]int{2, 1}, [2]int{judged, capped})
	a.PutStr(semconv.AgentEvalVerdictReasons, "edited")
	assert.Error(t, p.emitter.signer.Verify(a), "the verdicts are covered by the signature")
}

// TestReferenceJudgeCostLimit: a dataset case whose interactions would need more judge
// calls than max_calls_per_session gets no call; its reference span records the cost
// limit as a judge error, counted in processor_agentsession_judge_cost_limited.
func TestReferenceJudgeCostLimit(t *testing.T) {
	errs, prompts, tel := referenceJudgeErrors(t, judge.Config{MaxCallsPerSession: new(1)}, "ok")
	assert.Empty(t, prompts)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "max_calls_per_session 1 (the case needs 2 calls)")
	metadatatest.AssertEqualProcessorAgentsessionJudgeCostLimited(t, tel, []metricdata.DataPoint[int64]{{Value: 2}},
		metricdatatest.IgnoreTimestamp())
}

// TestEmbeddingsHangingServerThroughFactory: the component as the collector runs it
// (worker started), with a hanging embeddings endpoint and a long timeout: every batch
// is passed on unchanged at once, and Shutdown, which evaluates what is open, does not
// wait for the endpoint (its requests are cancelled first).
func TestEmbeddingsHangingServerThroughFactory(t *testing.T) {
	srv := judgetest.New(t, true)
	files, err := filepath.Glob(filepath.Join(fixturesDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	cfg := testConfig()
	cfg.Judge.Embeddings = judge.EmbeddingsConfig{Endpoint: srv.BaseURL(), Model: "e", Timeout: time.Hour}
	cfg.TurnSettle = 100 * time.Millisecond // the worker evaluates (and waits) before shutdown
	sink := new(consumertest.TracesSink)
	proc, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, proc.Start(context.Background(), componenttest.NewNopHost()))
	in := 0
	start := time.Now()
	batches := []ptrace.Traces{driftingRun(20), driftingRun(21)} // these ask the embeddings
	for _, f := range files {
		batches = append(batches, loadTraces(t, f))
	}
	for _, td := range batches {
		in += td.SpanCount()
		require.NoError(t, proc.ConsumeTraces(context.Background(), td))
	}
	assert.Less(t, time.Since(start), 2*time.Second, "ingest never waits for the embeddings")
	require.Eventually(t, func() bool { return srv.Requests.Load() > 0 }, 10*time.Second, 10*time.Millisecond,
		"the worker is waiting for the endpoint")
	start = time.Now()
	require.NoError(t, proc.Shutdown(context.Background()))
	assert.Less(t, time.Since(start), 10*time.Second, "shutdown cancels the hanging requests")
	passed := 0
	for _, td := range sink.AllTraces() {
		passed += countSpans(td, false)
	}
	assert.Equal(t, in, passed, "spans in == spans out")
	assert.NotEmpty(t, evalSpans(sink)[semconv.EvalKindAgentSession], "sessions are still evaluated")
}

// embeddingsSpans returns the GenAI embeddings spans the sink received.
func embeddingsSpans(sink *consumertest.TracesSink) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
			if op, ok := sp.Attributes().Get(semconv.GenAIOperationName); ok && op.Str() == semconv.OpEmbeddings {
				out = append(out, sp)
			}
		})
	}
	return out
}

// TestEmbeddingsSpans: every embeddings request is emitted as a GenAI embeddings span
// (name, operation, model, input tokens, server address) under the evaluation span of
// the event that asked for it, marked agent_eval.judge; cache hits emit none; and a
// processor fed these spans passes them on unchanged and evaluates none of them.
func TestEmbeddingsSpans(t *testing.T) {
	srv := judgetest.New(t, false)
	cfg := testConfig()
	cfg.Judge.Embeddings = judge.EmbeddingsConfig{Endpoint: srv.BaseURL(), Model: "e"}
	p, sink, clk := newTestProcessor(t, cfg, nil)
	runSession(t, p, clk, driftingRun(2))
	requests := srv.Requests.Load()
	require.Positive(t, requests)
	runSession(t, p, clk, driftingRun(3)) // the same texts: served from the cache
	require.NoError(t, p.shutdown(context.Background()))
	assert.Equal(t, requests, srv.Requests.Load(), "the second session is served from the cache")
	assert.Positive(t, p.emb.e.Stats().CacheHits)

	spans := embeddingsSpans(sink)
	require.Len(t, spans, int(requests), "one span per request, none per cache hit")
	evalByID := map[pcommon.SpanID]ptrace.Span{}
	for _, sps := range evalSpans(sink) {
		for _, sp := range sps {
			evalByID[sp.SpanID()] = sp
		}
	}
	host, port, err := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	require.NoError(t, err)
	for _, sp := range spans {
		assert.Equal(t, "embeddings e", sp.Name())
		assert.Equal(t, ptrace.SpanKindClient, sp.Kind())
		a := sp.Attributes().AsRaw()
		assert.Equal(t, "e", a[semconv.GenAIRequestModel])
		assert.Positive(t, a[semconv.GenAIUsageInputTokens])
		assert.Equal(t, host, a[semconv.ServerAddress])
		assert.Equal(t, port, fmt.Sprint(a[semconv.ServerPort]))
		assert.Equal(t, true, a[semconv.AgentEvalJudge])
		assert.NotContains(t, a, semconv.ErrorType)
		parent, ok := evalByID[sp.ParentSpanID()]
		require.True(t, ok, "a child of an evaluation span")
		assert.Equal(t, parent.TraceID(), sp.TraceID())
		sid, _ := parent.Attributes().Get(semconv.AgentEvalSessionID)
		assert.Equal(t, "conv-ec", sid.Str(), "the session that asked for it")
	}

	// Fed to a processor (a second collector tier), they are passed on and ignored.
	in := ptrace.NewTraces()
	ss := in.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for _, sp := range spans {
		sp.CopyTo(ss.Spans().AppendEmpty())
	}
	want := ptrace.NewTraces()
	in.CopyTo(want)
	p2, sink2, clk2 := newTestProcessor(t, testConfig(), nil)
	out, err := p2.processTraces(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, want, out, "spans in == spans out")
	for range 2 {
		clk2.advance(3 * time.Second)
		p2.step(context.Background())
	}
	require.NoError(t, p2.shutdown(context.Background()))
	assert.Equal(t, uint64(len(spans)), p2.tracker.Stats().SpansIgnored, "classified as the collector's own")
	assert.Empty(t, evalSpans(sink2), "no evaluation of them")
}

// runReferenceJudge runs the papers case of the test dataset through a processor with
// the judge of interactions at serverURL (jc completes the judge's configuration) until
// its evaluate reference span is emitted.
func runReferenceJudge(t *testing.T, jc judge.Config, serverURL string) (*consumertest.TracesSink, *componenttest.Telemetry) {
	t.Helper()
	cfg := referencesTestConfig()
	jc.Enabled, jc.Endpoint, jc.Model, jc.Rubric, jc.Timeout = true, serverURL+"/v1", "judge-m", "r", 5*time.Second
	cfg.Judge = jc
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, sink, clk := newTestProcessor(t, cfg, tel)
	runSession(t, p, clk, datasetRun(42, "conv-jt", "papers", "run-j", "x", "search_papers", "summarize"))
	require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindReference]) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.shutdown(context.Background()))
	return sink, tel
}

// referenceJudgeErrors runs one dataset session through a processor with the judge of
// interactions and returns the judge errors of its evaluate reference span, the prompts
// the judge received, and the processor's telemetry.
func referenceJudgeErrors(t *testing.T, jc judge.Config, reason string) ([]string, []string, *componenttest.Telemetry) {
	t.Helper()
	srv, prompts := verdictServerWith(t, reason)
	sink, tel := runReferenceJudge(t, jc, srv.URL)
	var errs []string
	forEachSpanEvent(evalSpans(sink)[semconv.EvalKindReference][0], func(ev ptrace.SpanEvent) {
		if typ, _ := ev.Attributes().Get(semconv.ErrorType); typ.Str() != semconv.EvalErrorTypeJudgeError {
			return
		}
		e, _ := ev.Attributes().Get(semconv.GenAIEvaluationExplanation)
		errs = append(errs, e.Str())
	})
	return errs, prompts(), tel
}

// TestReferenceJudgeMaxTokens: judge.max_tokens_per_session holds on the judge of a
// dataset case's interactions. A case whose calls (estimated by a dry run of the
// evaluator) would pass it gets none, and one whose real prompts pass it on the way (the
// last prompt quotes the earlier verdicts' reasons) has the rest skipped; either way the
// reference span records the limit as a judge error and the skipped calls are counted
// in processor_agentsession_judge_cost_limited.
func TestReferenceJudgeMaxTokens(t *testing.T) {
	errs, prompts, tel := referenceJudgeErrors(t, judge.Config{MaxTokensPerSession: 1}, "ok")
	assert.Empty(t, prompts, "no call")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "judge: cost limit per session reached: max_tokens_per_session 1 (the case needs ~")
	metadatatest.AssertEqualProcessorAgentsessionJudgeCostLimited(t, tel, []metricdata.DataPoint[int64]{{Value: 2}},
		metricdatatest.IgnoreTimestamp())

	// The case's estimate, from the error; then a limit it fits, with long reasons that
	// make the real last prompt some 600 tokens longer than the dry run's.
	var need int
	_, err := fmt.Sscanf(errs[0][strings.Index(errs[0], "~"):], "~%d)", &need)
	require.NoError(t, err)
	require.Greater(t, need, 512, "two calls of up to max_tokens (512) each")
	errs, prompts, tel = referenceJudgeErrors(t, judge.Config{MaxTokensPerSession: need + 100}, strings.Repeat("word ", 500))
	assert.Len(t, prompts, 1, "the first interaction is judged, the last is not")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "interaction 1 (researcher): judge: cost limit per session reached: max_tokens_per_session")
	metadatatest.AssertEqualProcessorAgentsessionJudgeCostLimited(t, tel, []metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp())

	// Within the limit, every interaction is judged.
	errs, prompts, _ = referenceJudgeErrors(t, judge.Config{MaxTokensPerSession: need + 100}, "ok")
	assert.Empty(t, errs)
	assert.Len(t, prompts, 2)
}
