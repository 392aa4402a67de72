// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// verdictServer is a chat-completions endpoint approving everything with score 0.7 and
// reason "ok"; it returns the user prompts it received.
func verdictServer(t *testing.T) (*httptest.Server, func() []string) {
	return verdictServerWith(t, "ok")
}

// verdictServerWith is verdictServer answering with reason.
func verdictServerWith(t *testing.T, reason string) (*httptest.Server, func() []string) {
	verdict, _ := json.Marshal(map[string]any{"score": 0.7, "pass": true, "reason": reason})
	content, _ := json.Marshal(string(verdict))
	var mu sync.Mutex
	var prompts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		prompts = append(prompts, req.Messages[1].Content)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":` + string(content) + `}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), prompts...)
	}
}

// TestSessionJudge: without any dataset, a judge configured for session metrics judges
// every sampled session off the ingest path: once per session for task_completion, once
// per agent (with that agent's rubric) for response_quality.
func TestSessionJudge(t *testing.T) {
	srv, prompts := verdictServer(t)
	cfg := testConfig()
	cfg.Judge = judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second,
		Rubric:  "shared rubric",
		Rubrics: map[string]string{"researcher": "researcher rubric"},
		Metrics: []judge.Metric{judge.MetricTaskCompletion, judge.MetricResponseQuality}}
	p, sink, clk := newTestProcessor(t, cfg, nil)
	runSession(t, p, clk, datasetRun(60, "conv-s", "", "", "Find papers", "search_papers"))
	require.Len(t, evalSpans(sink)[semconv.EvalKindAgentSession], 1, "the deterministic analysis is emitted first")
	require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindJudge]) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.shutdown(context.Background()))

	sp := evalSpans(sink)[semconv.EvalKindJudge][0]
	assert.Equal(t, semconv.EvalSpanJudge, sp.Name())
	got := map[string]string{}
	forEachSpanEvent(sp, func(ev ptrace.SpanEvent) {
		name, _ := ev.Attributes().Get(semconv.GenAIEvaluationName)
		agent, _ := ev.Attributes().Get(semconv.GenAIAgentName)
		typ, _ := ev.Attributes().Get(semconv.AgentEvalEvaluatorType)
		assert.Equal(t, semconv.EvaluatorTypeLLMJudge, typ.Str())
		got[name.Str()+"/"+agent.Str()] = "ok"
	})
	assert.Equal(t, map[string]string{"task_completion/": "ok", "response_quality/planner": "ok", "response_quality/researcher": "ok"}, got)
	require.Len(t, prompts(), 3)
	var routed int
	for _, pr := range prompts() {
		assert.Contains(t, pr, "<Transcript>")
		assert.Contains(t, pr, "[researcher] Tool 'search_papers'")
		if strings.Contains(pr, "<Agent>researcher</Agent>") {
			assert.Contains(t, pr, "<Rubric>researcher rubric</Rubric>")
			routed++
		}
		if strings.Contains(pr, "<Agent>planner</Agent>") {
			assert.Contains(t, pr, "<Rubric>shared rubric</Rubric>")
			routed++
		}
	}
	assert.Equal(t, 2, routed)
}

// TestSessionJudgeNearThreshold: with a margin, an agent whose deterministic
// response_quality is far from the recommendation threshold is not judged; a metric
// without a deterministic score (task_completion) still is.
func TestSessionJudgeNearThreshold(t *testing.T) {
	srv, prompts := verdictServer(t)
	cfg := testConfig()
	cfg.Judge = judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second,
		NearThresholdMargin: 0.05, Metrics: []judge.Metric{judge.MetricTaskCompletion, judge.MetricResponseQuality}}
	p, sink, clk := newTestProcessor(t, cfg, nil)
	runSession(t, p, clk, datasetRun(61, "conv-n", "", "", "Find papers", "search_papers"))
	_, an := sessionSpanOf(t, evalSpans(sink))
	for agent, sc := range an.PerAgentScores {
		require.NotNil(t, sc.ResponseQuality, agent)
		require.Greater(t, *sc.ResponseQuality, 0.75, "the fixture's agents answer well: %s", agent)
	}
	require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindJudge]) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.shutdown(context.Background()))
	require.Len(t, prompts(), 1)
	assert.Contains(t, prompts()[0], "<Metric>task_completion</Metric>")
}

// twoCallJudge is the judge config of the verdict server at url: task completion and
// response quality, at most 2 calls per session.
func twoCallJudge(url string) judge.Config {
	return judge.Config{Enabled: true, Endpoint: url + "/v1", Model: "m", Timeout: 5 * time.Second,
		MaxCallsPerSession: new(2), Metrics: []judge.Metric{judge.MetricTaskCompletion, judge.MetricResponseQuality}}
}

// TestSessionJudgeMaxCalls: past max_calls_per_session the remaining verdicts are judge
// errors, not calls.
func TestSessionJudgeMaxCalls(t *testing.T) {
	srv, prompts := verdictServer(t)
	cfg := testConfig()
	cfg.Judge = twoCallJudge(srv.URL)
	p, sink, clk := newTestProcessor(t, cfg, nil)
	runSession(t, p, clk, datasetRun(62, "conv-m", "", "", "Find papers", "search_papers"))
	require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindJudge]) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.shutdown(context.Background()))
	assert.Len(t, prompts(), 2)
	var capped int
	forEachSpanEvent(evalSpans(sink)[semconv.EvalKindJudge][0], func(ev ptrace.SpanEvent) {
		if e, ok := ev.Attributes().Get(semconv.GenAIEvaluationExplanation); ok && strings.Contains(e.Str(), "max_calls_per_session") {
			capped++
		}
	})
	assert.Equal(t, 1, capped)
}

// TestJudgeTextCapped: what a judge verdict carries into spans and stored rows is
// bounded. A case's reason joins one reason per interaction, each under
// judge.MaxReasonBytes, and is capped again, on a rune boundary, as explanation and in
// the sealed verdict arrays.
func TestJudgeTextCapped(t *testing.T) {
	srv, _ := verdictServerWith(t, strings.Repeat("ü", judge.MaxReasonBytes/2-100)) // 2 bytes a rune
	sink, _ := runReferenceJudge(t, judge.Config{}, srv.URL)
	sp := evalSpans(sink)[semconv.EvalKindReference][0]
	var explanations []string
	forEachSpanEvent(sp, func(ev ptrace.SpanEvent) {
		if e, ok := ev.Attributes().Get(semconv.GenAIEvaluationExplanation); ok {
			explanations = append(explanations, e.Str())
		}
	})
	reasons, ok := sp.Attributes().Get(semconv.AgentEvalVerdictReasons)
	require.True(t, ok)
	require.Equal(t, 1, reasons.Slice().Len())
	for _, s := range append(explanations, reasons.Slice().At(0).Str()) {
		assert.LessOrEqual(t, len(s), judge.MaxReasonBytes)
		assert.Greater(t, len(s), judge.MaxReasonBytes/2, "two reasons joined, then cut")
		assert.True(t, utf8.ValidString(s))
	}
}

// TestReferenceJudgeFailureHasNoScore: when the judge cannot judge a dataset case (here
// it answers without JSON), the llm_judge verdict carries no score and the judge
// error (docs/decisions/reference-and-judge.md: score null with judge_error), never the
// deterministic result under the judge's provenance.
func TestReferenceJudgeFailureHasNoScore(t *testing.T) {
	content, _ := json.Marshal("I refuse to answer in JSON.")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":` + string(content) + `}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	t.Cleanup(srv.Close)
	sink, _ := runReferenceJudge(t, judge.Config{}, srv.URL)
	sp := evalSpans(sink)[semconv.EvalKindReference][0]
	require.Equal(t, 1, sp.Events().Len())
	ev := sp.Events().At(0).Attributes()
	_, scored := ev.Get(semconv.GenAIEvaluationScoreValue)
	assert.False(t, scored, "no score")
	label, _ := ev.Get(semconv.GenAIEvaluationScoreLabel)
	assert.Equal(t, semconv.EvalLabelNotEvaluable, label.Str())
	typ, _ := ev.Get(semconv.ErrorType)
	assert.Equal(t, semconv.EvalErrorTypeJudgeError, typ.Str())
	expl, _ := ev.Get(semconv.GenAIEvaluationExplanation)
	assert.Contains(t, expl.Str(), "malformed verdict")
	evType, _ := ev.Get(semconv.AgentEvalEvaluatorType)
	assert.Equal(t, semconv.EvaluatorTypeLLMJudge, evType.Str())

	// The sealed arrays the exporter stores: score NaN (null), not passed, the error.
	a := sp.Attributes()
	scores, _ := a.Get(semconv.AgentEvalVerdictScores)
	passes, _ := a.Get(semconv.AgentEvalVerdictPasses)
	errs, _ := a.Get(semconv.AgentEvalVerdictErrors)
	reasons, _ := a.Get(semconv.AgentEvalVerdictReasons)
	require.Equal(t, 1, scores.Slice().Len())
	assert.True(t, math.IsNaN(scores.Slice().At(0).Double()), "score %v", scores.Slice().At(0).Double())
	assert.False(t, passes.Slice().At(0).Bool())
	assert.Contains(t, errs.Slice().At(0).Str(), "malformed verdict")
	assert.Empty(t, reasons.Slice().At(0).Str())
}

// judgeVerdictsOf returns the sealed verdicts of a judge span (the arrays the exporter
// stores) as "name/agent" → "score" or "error: <judge_error>".
func judgeVerdictsOf(t *testing.T, sp ptrace.Span) map[string]string {
	t.Helper()
	a := sp.Attributes()
	names, _ := a.Get(semconv.AgentEvalVerdictNames)
	agents, _ := a.Get(semconv.AgentEvalVerdictAgents)
	scores, _ := a.Get(semconv.AgentEvalVerdictScores)
	errs, _ := a.Get(semconv.AgentEvalVerdictErrors)
	got := map[string]string{}
	for i := range names.Slice().Len() {
		v := "score"
		if e := errs.Slice().At(i).Str(); e != "" {
			require.True(t, math.IsNaN(scores.Slice().At(i).Double()), "a judge error has no score")
			v = "error: " + e
		}
		got[names.Slice().At(i).Str()+"/"+agents.Slice().At(i).Str()] = v
	}
	return got
}

// hangingJudge is a chat-completions endpoint that answers its first answered calls
// with a verdict and leaves the others hanging until the request ends.
func hangingJudge(t *testing.T, answered int64) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	release := make(chan struct{})
	verdict, _ := json.Marshal(`{"score":0.9,"pass":true,"reason":"answered"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= answered {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop",
				"message":{"role":"assistant","content":` + string(verdict) + `}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv, &n
}

// TestSessionJudgeRefusedRecordsError: a session whose judge job finds the queue full
// gets its judge span at once, each planned verdict a judge_error "judge queue full";
// at shutdown the job cut off and the job still queued record "judge shut down". No
// session's verdicts are left pending (DESIGN §5.6).
func TestSessionJudgeRefusedRecordsError(t *testing.T) {
	srv, reqs := hangingJudge(t, 0)
	cfg := testConfig()
	cfg.Judge = judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", Timeout: time.Minute,
		Concurrency: 1, QueueSize: 1, Metrics: []judge.Metric{judge.MetricTaskCompletion}}
	p, sink, clk := newTestProcessor(t, cfg, nil)
	runSession(t, p, clk, datasetRun(63, "conv-a", "", "", "Find papers", "search_papers"))
	require.Eventually(t, func() bool { return reqs.Load() == 1 }, 5*time.Second, 10*time.Millisecond, "the worker holds the first job")
	runSession(t, p, clk, datasetRun(64, "conv-b", "", "", "Find papers", "search_papers")) // queued
	runSession(t, p, clk, datasetRun(65, "conv-c", "", "", "Find papers", "search_papers")) // dropped

	spans := evalSpans(sink)[semconv.EvalKindJudge]
	require.Len(t, spans, 1, "the dropped job's span is emitted at once")
	sid, _ := spans[0].Attributes().Get(semconv.AgentEvalSessionID)
	assert.Equal(t, "conv-c", sid.Str())
	assert.Equal(t, map[string]string{"task_completion/": "error: judge queue full"}, judgeVerdictsOf(t, spans[0]))

	require.NoError(t, p.shutdown(context.Background()))
	got := map[string]map[string]string{}
	for _, sp := range evalSpans(sink)[semconv.EvalKindJudge] {
		sid, _ := sp.Attributes().Get(semconv.AgentEvalSessionID)
		got[sid.Str()] = judgeVerdictsOf(t, sp)
	}
	shut := map[string]string{"task_completion/": "error: judge shut down"}
	assert.Equal(t, map[string]map[string]string{"conv-a": shut, "conv-b": shut,
		"conv-c": {"task_completion/": "error: judge queue full"}}, got)
	assert.Equal(t, int64(1), reqs.Load(), "no call for the queued job at shutdown")
}

// TestSessionJudgeShutdownKeepsAnswered: a job cut off by shutdown emits the verdicts it
// already obtained, and the judge error for the rest.
func TestSessionJudgeShutdownKeepsAnswered(t *testing.T) {
	srv, reqs := hangingJudge(t, 1)
	cfg := testConfig()
	cfg.Judge = judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", Timeout: time.Minute,
		Metrics: []judge.Metric{judge.MetricTaskCompletion, judge.MetricHandoff}}
	p, sink, clk := newTestProcessor(t, cfg, nil)
	runSession(t, p, clk, datasetRun(66, "conv-sd", "", "", "Find papers", "search_papers"))
	require.Eventually(t, func() bool { return reqs.Load() == 2 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.shutdown(context.Background()))
	spans := evalSpans(sink)[semconv.EvalKindJudge]
	require.Len(t, spans, 1)
	assert.Equal(t, map[string]string{"task_completion/": "score", "handoff/": "error: judge shut down"}, judgeVerdictsOf(t, spans[0]))
}

// TestSessionJudgeDefaultCallLimit: with max_calls_per_session left out, a session whose
// trace names 302 agents (the fixture's two and 300 more) costs judge.DefaultMaxCallsPerSession calls, not one per agent;
// every agent not judged records the limit as its judge_error. An explicit 0 is no limit.
func TestSessionJudgeDefaultCallLimit(t *testing.T) {
	td := datasetRun(67, "conv-many", "", "", "hello")
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	root := spans.At(0)
	const agents = 300
	for i := range agents {
		sp := spans.AppendEmpty()
		root.CopyTo(sp)
		sp.Attributes().Remove("agent_eval.session.end")
		sp.SetParentSpanID(root.SpanID())
		sp.SetSpanID([8]byte{67, 9, byte(i >> 8), byte(i), 0, 0, 0, 1})
		sp.SetName(fmt.Sprintf("invoke_agent a%d", i))
		sp.Attributes().PutStr(semconv.GenAIAgentName, fmt.Sprintf("a%d", i))
	}
	for _, tc := range []struct {
		limit *int
		calls int
	}{{nil, judge.DefaultMaxCallsPerSession}, {new(0), agents + 2}} {
		srv, prompts := verdictServer(t)
		cfg := testConfig()
		cfg.Judge = judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", MaxCallsPerSession: tc.limit,
			Metrics: []judge.Metric{judge.MetricResponseQuality}}
		p, sink, clk := newTestProcessor(t, cfg, nil)
		runSession(t, p, clk, ptraceClone(td))
		require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindJudge]) == 1 }, 30*time.Second, 10*time.Millisecond)
		require.NoError(t, p.shutdown(context.Background()))
		assert.Equal(t, tc.calls, len(prompts()))
		var verdicts, limited int
		forEachSpanEvent(evalSpans(sink)[semconv.EvalKindJudge][0], func(ev ptrace.SpanEvent) {
			verdicts++
			if e, ok := ev.Attributes().Get(semconv.GenAIEvaluationExplanation); ok && strings.Contains(e.Str(), "max_calls_per_session") {
				limited++
			}
		})
		assert.Equal(t, agents+2, verdicts, "one verdict per agent, judged or not")
		assert.Equal(t, agents+2-tc.calls, limited)
	}
}

func ptraceClone(td ptrace.Traces) ptrace.Traces {
	c := ptrace.NewTraces()
	td.CopyTo(c)
	return c
}
