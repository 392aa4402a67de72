// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/pkg/reference"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadatatest"
)

// datasetRun builds one turn of a planner → researcher run in the GenAI conventions: the
// root agent span carries the case and run ids; the researcher calls the given tools.
func datasetRun(traceByte byte, conv, caseID, runID, user string, tools ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "dataset-agents")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	tid := pcommon.TraceID{traceByte, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	n := byte(0)
	add := func(parent pcommon.SpanID, name string, attrs map[string]string) ptrace.Span {
		n++
		sp := spans.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID{traceByte, n, 0, 0, 0, 0, 0, 1})
		sp.SetParentSpanID(parent)
		sp.SetName(name)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(n) * time.Millisecond)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second - time.Duration(n)*time.Millisecond)))
		sp.Attributes().PutStr(semconv.GenAIConversationID, conv)
		for k, v := range attrs {
			sp.Attributes().PutStr(k, v)
		}
		return sp
	}
	msg := func(role, text string) string {
		b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]any{{"type": "text", "content": text}}}})
		return string(b)
	}
	rootAttrs := map[string]string{
		semconv.GenAIOperationName: "invoke_agent", semconv.GenAIAgentName: "planner",
		"gen_ai.input.messages": msg("user", user), "gen_ai.output.messages": msg("assistant", "done"),
	}
	if caseID != "" {
		rootAttrs[semconv.GenAIEvaluationCaseName] = caseID
	}
	if runID != "" {
		rootAttrs[semconv.AgentEvalDatasetRunID] = runID
	}
	root := add(pcommon.SpanID{}, "invoke_agent planner", rootAttrs)
	researcher := add(root.SpanID(), "invoke_agent researcher", map[string]string{
		semconv.GenAIOperationName: "invoke_agent", semconv.GenAIAgentName: "researcher",
		"gen_ai.output.messages": msg("assistant", "summary"),
	})
	for _, tool := range tools {
		add(researcher.SpanID(), "execute_tool "+tool, map[string]string{
			semconv.GenAIOperationName: "execute_tool", semconv.GenAIToolName: tool,
			"gen_ai.tool.call.arguments": `{"q":"transformers"}`,
		})
	}
	// Move the session end signal on the root so that the session ends once the turn closes.
	root.Attributes().PutBool("agent_eval.session.end", true)
	return td
}

// runSession feeds one run and advances past turn_settle, then to the session end.
func runSession(t *testing.T, p *agentSessionProcessor, clk *testClock, td ptrace.Traces) {
	t.Helper()
	_, err := p.processTraces(context.Background(), td)
	require.NoError(t, err)
	for range 2 {
		clk.advance(3 * time.Second)
		p.step(context.Background())
	}
}

func referencesTestConfig() *Config {
	cfg := testConfig()
	cfg.References.Datasets = []string{"testdata/dataset.json"}
	cfg.References.Evaluators = []string{refToolSelection, refToolSequence, refTrajectory, refInteractions}
	cfg.References.Trajectory = TrajectoryConfig{Mode: "in_order", ArgsMode: "ignore"}
	return cfg
}

func sessionSpanOf(t *testing.T, spans map[string][]ptrace.Span) (ptrace.Span, evaluation.Analysis) {
	t.Helper()
	require.Len(t, spans[semconv.EvalKindAgentSession], 1)
	sp := spans[semconv.EvalKindAgentSession][0]
	an, err := evalspan.DecodeAnalysis(sp.Attributes())
	require.NoError(t, err)
	return sp, an
}

func TestReferencesByCaseID(t *testing.T) {
	p, sink, clk := newTestProcessor(t, referencesTestConfig(), nil)
	// The researcher skips summarize: selection 0.5, sequence 0.5, in_order trajectory fails.
	runSession(t, p, clk, datasetRun(1, "conv-1", "papers", "run-42", "unrelated text", "search_papers"))

	sp, an := sessionSpanOf(t, evalSpans(sink))
	var cr reference.CaseResult
	js, _ := json.Marshal(an.References)
	require.NoError(t, json.Unmarshal(js, &cr))
	assert.Equal(t, "papers", cr.CaseID)
	assert.Equal(t, "run-42", cr.RunID)
	assert.Equal(t, semconv.GenAIEvaluationCaseName, cr.MatchedBy)
	assert.False(t, cr.Pass)
	assert.InDelta(t, 0.5, cr.Results[refToolSelection].Score, 1e-9)
	assert.InDelta(t, 0.5, cr.Results[refToolSequence].Score, 1e-9)
	assert.False(t, cr.Results[refTrajectory].Pass)
	inter := cr.Results[refInteractions]
	assert.True(t, inter.Pass, inter.Reason)
	assert.Equal(t, 1.0, inter.Details["dependency_compliance"])

	// tool_use_score folds the reference scores in; coordination has dependency compliance.
	require.NotNil(t, an.Coordination.DependencyCompliance)
	assert.Equal(t, 1.0, *an.Coordination.DependencyCompliance)
	assert.Contains(t, an.Explanations["tool_use_score"], "tool_selection(0.5)")

	attr := func(k string) pcommon.Value { v, _ := sp.Attributes().Get(k); return v }
	assert.Equal(t, "papers", attr(semconv.GenAIEvaluationCaseName).Str())
	assert.Equal(t, "run-42", attr(semconv.AgentEvalDatasetRunID).Str())
	assert.False(t, attr(semconv.AgentEvalReferencePass).Bool())
	found := map[string]string{}
	forEachSpanEvent(sp, func(ev ptrace.SpanEvent) {
		name, _ := ev.Attributes().Get(semconv.GenAIEvaluationName)
		if typ, ok := ev.Attributes().Get(semconv.AgentEvalEvaluatorType); ok {
			assert.Equal(t, semconv.EvaluatorTypeReference, typ.Str())
			label, _ := ev.Attributes().Get(semconv.GenAIEvaluationScoreLabel)
			ver, _ := ev.Attributes().Get(semconv.AgentEvalEvaluatorVersion)
			assert.Len(t, ver.Str(), 12)
			found[name.Str()] = label.Str()
		}
	})
	assert.Equal(t, map[string]string{refToolSelection: "fail", refToolSequence: "fail", refTrajectory: "fail", refInteractions: "pass"}, found)
}

func TestReferencesByFirstUserMessage(t *testing.T) {
	p, sink, clk := newTestProcessor(t, referencesTestConfig(), nil)
	runSession(t, p, clk, datasetRun(2, "conv-2", "", "", "  find papers about TRANSFORMERS and summarize them ", "search_papers", "summarize"))
	_, an := sessionSpanOf(t, evalSpans(sink))
	js, _ := json.Marshal(an.References)
	var cr reference.CaseResult
	require.NoError(t, json.Unmarshal(js, &cr))
	assert.Equal(t, "papers", cr.CaseID)
	assert.Equal(t, matchedByFirstUserMsg, cr.MatchedBy)
	assert.True(t, cr.Pass, "%+v", cr)

	// A session matching no case has no references.
	p2, sink2, clk2 := newTestProcessor(t, referencesTestConfig(), nil)
	runSession(t, p2, clk2, datasetRun(3, "conv-3", "", "", "hello", "x"))
	_, an2 := sessionSpanOf(t, evalSpans(sink2))
	assert.Nil(t, an2.References)
}

func TestDatasetErrors(t *testing.T) {
	cfg := referencesTestConfig()
	cfg.References.Datasets = []string{"testdata/missing.json"}
	_, err := newProcessorCore(processortest.NewNopSettings(metadata.Type).TelemetrySettings, nil, cfg)
	require.ErrorContains(t, err, "references.datasets[0]")
}

// TestHangingJudgeNeverHoldsSpans: with a judge whose API never answers, every span
// still goes through at once, the deterministic results are emitted, and shutdown
// returns (the judge's job is cancelled), every case recording the judge error.
func TestHangingJudgeNeverHoldsSpans(t *testing.T) {
	release := make(chan struct{})
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	cfg := referencesTestConfig()
	cfg.Judge = judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", Rubric: "r",
		Timeout: time.Hour, Concurrency: 1, QueueSize: 1}
	p, sink, clk := newTestProcessor(t, cfg, nil)

	const sessions = 20
	in := 0
	start := time.Now()
	for i := range sessions {
		td := datasetRun(byte(10+i), "conv-h"+string(rune('a'+i)), "papers", "run-h", "x", "search_papers", "summarize")
		in += td.SpanCount()
		out, err := p.processTraces(context.Background(), td)
		require.NoError(t, err)
		require.NoError(t, sink.ConsumeTraces(context.Background(), out)) // processorhelper passes the batch on
	}
	clk.advance(3 * time.Second)
	p.step(context.Background())
	clk.advance(3 * time.Second)
	p.step(context.Background())
	elapsed := time.Since(start)
	assert.Less(t, elapsed, 5*time.Second, "ingest and evaluation must not wait for the judge")

	appSpans, sessionsEmitted := 0, 0
	for _, td := range sink.AllTraces() {
		appSpans += countSpans(td, false)
	}
	sessionsEmitted = len(evalSpans(sink)[semconv.EvalKindAgentSession])
	assert.Equal(t, in, appSpans, "spans in == spans out")
	assert.Equal(t, sessions, sessionsEmitted, "every session is evaluated deterministically")
	require.Eventually(t, func() bool { return requests.Load() >= 1 }, 5*time.Second, 10*time.Millisecond)
	st := p.judge.client.Stats()
	assert.Positive(t, st.Drops, "a full judge queue drops jobs instead of blocking")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, p.shutdown(ctx))
	// Every session's case records why the judge gave no verdict (dropped, or cut off or
	// still queued at shutdown); none looks pending and none has a score.
	refs := evalSpans(sink)[semconv.EvalKindReference]
	require.Len(t, refs, sessions)
	for _, sp := range refs {
		require.Equal(t, 1, sp.Events().Len())
		ev := sp.Events().At(0).Attributes()
		_, scored := ev.Get(semconv.GenAIEvaluationScoreValue)
		assert.False(t, scored)
		expl, _ := ev.Get(semconv.GenAIEvaluationExplanation)
		assert.Contains(t, []string{judge.ErrQueueFull.Error(), judge.ErrShutdown.Error()}, expl.Str())
	}
}

func TestJudgeVerdictSpan(t *testing.T) {
	var prompts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prompts.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"judge-m","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":"{\"score\":0.6,\"pass\":true,\"reason\":\"fine\"}"}}],
			"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}`))
	}))
	defer srv.Close()
	sink, tel := runReferenceJudge(t, judge.Config{}, srv.URL)

	sp := evalSpans(sink)[semconv.EvalKindReference][0]
	assert.Equal(t, semconv.EvalSpanReference, sp.Name())
	var verdict ptrace.SpanEvent
	forEachSpanEvent(sp, func(ev ptrace.SpanEvent) { verdict = ev })
	get := func(k string) pcommon.Value { v, _ := verdict.Attributes().Get(k); return v }
	assert.Equal(t, refInteractions, get(semconv.GenAIEvaluationName).Str())
	assert.InDelta(t, 0.6, get(semconv.GenAIEvaluationScoreValue).Double(), 1e-9)
	assert.Equal(t, semconv.EvaluatorTypeLLMJudge, get(semconv.AgentEvalEvaluatorType).Str())
	jc := judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "judge-m", Rubric: "r", Timeout: 5 * time.Second}
	assert.Equal(t, jc.Provenance(refInteractions).Version, get(semconv.AgentEvalEvaluatorVersion).Str())
	// One chat span per judge call (two interactions), marked never to be evaluated.
	var chats int
	for _, td := range sink.AllTraces() {
		forEachSpan(td, func(_ pcommon.Resource, s ptrace.Span) {
			if v, ok := s.Attributes().Get(semconv.AgentEvalJudge); ok && v.Bool() {
				chats++
				assert.Equal(t, "chat judge-m", s.Name())
				addr, _ := s.Attributes().Get(semconv.ServerAddress)
				assert.Equal(t, "127.0.0.1", addr.Str())
				assert.Equal(t, sp.SpanID(), s.ParentSpanID())
			}
		})
	}
	assert.Equal(t, 2, chats)
	assert.Equal(t, int64(2), prompts.Load())
	metadatatest.AssertEqualProcessorAgentsessionJudgeCalls(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorAgentsessionJudgeTokens(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 120}}, metricdatatest.IgnoreTimestamp())
}
