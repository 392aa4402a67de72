// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

// datasetJSON is an evalaf dataset: two cases share the papers workflow (with expected
// interactions, so the judge sees them), two are single-agent tool cases.
const datasetJSON = `[
  {"input": "Find papers about transformers and summarize them",
   "reference": ["search_papers", "summarize"],
   "metadata": {"case_name": "papers", "expected_sequence": ["search_papers", "summarize"],
     "expected_interactions": [
       {"node_name": "planner", "dependencies": [], "messages": "Plan the search"},
       {"node_name": "researcher", "dependencies": ["planner"], "messages": "Search and summarize"}]}},
  {"input": "Find papers about transformers and summarize them",
   "reference": ["search_papers", "summarize"],
   "metadata": {"case_name": "papers-again", "expected_sequence": ["search_papers", "summarize"],
     "expected_interactions": [
       {"node_name": "planner", "dependencies": [], "messages": "Plan the search"},
       {"node_name": "researcher", "dependencies": ["planner"], "messages": "Search and summarize"}]}},
  {"input": "What is the weather in Paris?", "reference": "get_weather", "metadata": {"case_name": "weather"}},
  {"input": "What time is it in Tokyo?", "reference": "get_time", "metadata": {"case_name": "time"}}
]`

// fakeJudge is an OpenAI-compatible chat completions endpoint that approves everything.
func fakeJudge(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"judge","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":"{\"score\":0.9,\"pass\":true,\"reason\":\"dependencies respected\"}"}}],
			"usage":{"prompt_tokens":200,"completion_tokens":20,"total_tokens":220}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// runCase emits one session of a dataset run through the OTel SDK: a planner hands the
// user's request to a researcher that calls tools (or, without a planner, one assistant
// calls them). caseID "" sends no case id (matched by the first user message).
func runCase(t *testing.T, tp *sdktrace.TracerProvider, conv, caseID, runID, user string, planner bool, tools ...string) int {
	t.Helper()
	tr := tp.Tracer("dataset-agents")
	n := 0
	msg := func(role, text string) string {
		b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]any{{"type": "text", "content": text}}}})
		return string(b)
	}
	span := func(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
		n++
		return tr.Start(ctx, name, trace.WithAttributes(append(attrs, attribute.String(semconv.GenAIConversationID, conv))...))
	}
	rootAttrs := []attribute.KeyValue{
		attribute.String(semconv.GenAIOperationName, "invoke_agent"),
		attribute.String("gen_ai.input.messages", msg("user", user)),
		attribute.String("gen_ai.output.messages", msg("assistant", "Here you are.")),
		attribute.String(semconv.AgentEvalDatasetRunID, runID),
	}
	if caseID != "" {
		rootAttrs = append(rootAttrs, attribute.String(semconv.GenAIEvaluationCaseName, caseID))
	}
	name := "assistant"
	if planner {
		name = "planner"
	}
	rctx, root := span(context.Background(), "invoke_agent "+name, append(rootAttrs, attribute.String(semconv.GenAIAgentName, name))...)
	actx, worker := rctx, trace.Span(nil)
	if planner {
		actx, worker = span(rctx, "invoke_agent researcher",
			attribute.String(semconv.GenAIOperationName, "invoke_agent"), attribute.String(semconv.GenAIAgentName, "researcher"),
			attribute.String("gen_ai.output.messages", msg("assistant", "Two papers found and summarised.")))
	}
	for _, tool := range tools {
		_, s := span(actx, "execute_tool "+tool,
			attribute.String(semconv.GenAIOperationName, "execute_tool"), attribute.String(semconv.GenAIToolName, tool),
			attribute.String("gen_ai.tool.call.arguments", `{"q":"x"}`))
		s.End()
	}
	if worker != nil {
		worker.End()
	}
	root.SetAttributes(attribute.Bool("agent_eval.session.end", true))
	root.End()
	return n
}

// TestDatasetRunReport replays a dataset run tagged with case ids and a run id through a
// collector with references and a judge, then fetches the run's report.
func TestDatasetRunReport(t *testing.T) {
	dir := t.TempDir()
	dataset := filepath.Join(dir, "dataset.json")
	require.NoError(t, os.WriteFile(dataset, []byte(datasetJSON), 0o600))
	judgeSrv, judgeRequests := fakeJudge(t)
	ep := endpoints{grpc: freePort(t), http: freePort(t), prom: freePort(t), api: freePort(t)}
	cfg := collectorConfig(ep, filepath.Join(dir, "agenteval.db"), fmt.Sprintf(`
    references:
      datasets: [%q]
    judge:
      enabled: true
      endpoint: %q
      model: judge
      concurrency: 1
      rubric: Does the interaction respect its dependencies?
      rubrics: {planner: "Is the plan sound?"}`, dataset, judgeSrv.URL+"/v1"))
	sink := new(consumertest.TracesSink)
	stop := runCollector(t, cfg, sink)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(ep.http), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(sdkresource.NewSchemaless(attribute.String("service.name", "dataset-agents"))))
	const run = "ci-run-7"
	const papers = "Find papers about transformers and summarize them"
	sent := runCase(t, tp, "sess-papers", "papers", run, papers, true, "search_papers", "summarize")             // pass
	sent += runCase(t, tp, "sess-papers-again", "papers-again", run, papers, true, "search_papers", "summarize") // pass
	sent += runCase(t, tp, "sess-weather", "weather", run, "What is the weather in Paris?", false, "get_weather", "get_weather")
	sent += runCase(t, tp, "sess-time", "", run, "what time is it in tokyo?", false, "get_weather") // by first user message
	sent += runCase(t, tp, "sess-other-run", "weather", "another-run", "What is the weather in Paris?", false, "get_weather")
	require.NoError(t, tp.Shutdown(ctx))

	var report reference.Summary
	require.Eventually(t, func() bool {
		code, body := get(t, "http://"+ep.api+"/api/v1/reports/"+run)
		return code == http.StatusOK && json.Unmarshal(body, &report) == nil && report.TotalExamples == 4
	}, 20*time.Second, 50*time.Millisecond, "the four sessions of the run are stored")

	assert.Equal(t, 2, report.PassedExamples, "%+v", report)
	assert.Equal(t, 2, report.FailedExamples)
	assert.InDelta(t, 0.5, report.PassRate, 1e-9)
	failed := map[string]bool{}
	for _, f := range report.Failures {
		failed[f.CaseID] = true
		assert.NotEmpty(t, f.Reason)
	}
	// weather called get_weather twice (a multiset mismatch); time called the wrong tool.
	assert.Equal(t, map[string]bool{"weather": true, "time": true}, failed)
	sel := report.EvaluatorStats["tool_selection"]
	assert.Equal(t, 4, sel.TotalEvaluations)
	assert.Equal(t, 2, sel.Passed)
	assert.Equal(t, 2, report.EvaluatorStats["interactions"].TotalEvaluations)

	code, body := get(t, "http://"+ep.api+"/api/v1/reports/"+run+"?format=markdown")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), "| 4 | 2 | 2 | 50.00% |")
	code, _ = get(t, "http://"+ep.api+"/api/v1/reports/another-run")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get(t, "http://"+ep.api+"/api/v1/reports/no-such-run")
	assert.Equal(t, http.StatusNotFound, code)

	// The judge ran off the ingest path on the two sessions expecting interactions: one
	// lookup per interaction; the second session's prompts are the first's, so they hit
	// the cache.
	require.Eventually(t, func() bool { return len(evalSpansOf(sink, semconv.EvalKindReference)) == 2 },
		10*time.Second, 50*time.Millisecond, "two judge verdicts")
	judgeSpans := 0
	appSpans := 0
	for _, td := range sink.AllTraces() {
		forEach(td, func(sp ptrace.Span) {
			if v, ok := sp.Attributes().Get(semconv.AgentEvalJudge); ok && v.Bool() {
				judgeSpans++
				return
			}
			if _, ok := sp.Attributes().Get(semconv.AgentEvalKind); !ok {
				appSpans++
			}
		})
	}
	assert.Equal(t, sent, appSpans, "spans in == spans out")
	lookups := 2 * 2 // 2 judged sessions × 2 interactions
	calls := int(judgeRequests.Load())
	assert.Equal(t, calls, judgeSpans, "one chat span per judge call")
	hitRate := 1 - float64(calls)/float64(lookups)
	t.Logf("judge: %d sessions judged, %.1f calls/session, cache hit rate %.0f%% (%d API calls for %d lookups)",
		2, float64(calls)/2, 100*hitRate, calls, lookups)
	assert.Equal(t, 2, calls, "the second session is served from the cache")
	for _, sp := range evalSpansOf(sink, semconv.EvalKindReference) {
		found := false
		for i := 0; i < sp.Events().Len(); i++ {
			a := sp.Events().At(i).Attributes()
			if v, ok := a.Get(semconv.AgentEvalEvaluatorType); ok && v.Str() == semconv.EvaluatorTypeLLMJudge {
				score, _ := a.Get(semconv.GenAIEvaluationScoreValue)
				assert.InDelta(t, 0.9, score.Double(), 1e-9)
				found = true
			}
		}
		assert.True(t, found, "the verdict carries its llm_judge provenance")
	}
	// The verdicts, emitted after the analyses, reach the store as late verdict rows of
	// their sessions, once each.
	for _, sid := range []string{"sess-papers", "sess-papers-again"} {
		var got struct {
			Verdicts []struct {
				Kind             string   `json:"kind"`
				Name             string   `json:"name"`
				Score            *float64 `json:"score"`
				AnalysisRevision int      `json:"analysis_revision"`
			} `json:"verdicts"`
		}
		require.Eventually(t, func() bool {
			code, body := get(t, "http://"+ep.api+"/api/v1/agent_sessions/"+sid+"/judge_verdicts")
			return code == http.StatusOK && json.Unmarshal(body, &got) == nil && len(got.Verdicts) > 0
		}, 10*time.Second, 50*time.Millisecond, "the judge verdict of %s is stored", sid)
		require.Len(t, got.Verdicts, 1, sid)
		assert.Equal(t, semconv.EvalKindReference, got.Verdicts[0].Kind)
		assert.Equal(t, "interactions", got.Verdicts[0].Name)
		require.NotNil(t, got.Verdicts[0].Score)
		assert.InDelta(t, 0.9, *got.Verdicts[0].Score, 1e-9)
		assert.Equal(t, 1, got.Verdicts[0].AnalysisRevision)
	}
	// The run's report now carries them apart from the deterministic figures.
	var judged reference.Summary
	code, body = get(t, "http://"+ep.api+"/api/v1/reports/"+run)
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal(body, &judged))
	assert.Equal(t, report.PassedExamples, judged.PassedExamples, "the judge leaves the gate alone")
	assert.Equal(t, report.EvaluatorStats, judged.EvaluatorStats)
	in := judged.JudgeStats["interactions"]
	assert.Equal(t, [3]int{2, 2, 0}, [3]int{in.TotalEvaluations, in.Passed, in.Errors}, "%+v", judged.JudgeStats)
	assert.InDelta(t, 0.9, in.AverageScore, 1e-9)
	assert.Empty(t, judged.JudgeFailures)
	code, body = get(t, "http://"+ep.api+"/api/v1/reports/"+run+"?format=markdown")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), "## LLM judge\n\n")
	assert.Contains(t, string(body), "| interactions | 2 | 2 | 0 | 0 | 100.00% | 0.9000 |")
	stop()
	stopped = true
}

func forEach(td ptrace.Traces, fn func(ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(spans.At(k))
			}
		}
	}
}
