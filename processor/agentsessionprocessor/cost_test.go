// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// meteredJudge is a chat-completions endpoint approving everything; it counts the calls
// it receives and their estimated tokens, computed as the processor estimates them
// (system and user message bytes / 4, plus max_completion_tokens).
type meteredJudge struct {
	mu            sync.Mutex
	calls, tokens int
}

func (m *meteredJudge) serve(t *testing.T) *httptest.Server {
	verdict, _ := json.Marshal(map[string]any{"score": 0.7, "pass": true, "reason": "ok"})
	content, _ := json.Marshal(string(verdict))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
			MaxCompletionTokens int `json:"max_completion_tokens"`
		}
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.calls++
		m.tokens += judge.EstimateTokens(req.Messages[0].Content, req.Messages[1].Content) + req.MaxCompletionTokens
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop",
			"message":{"role":"assistant","content":` + string(content) + `}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (m *meteredJudge) spent() (calls, tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls, m.tokens
}

// costLimitErrors counts the evaluation events of spans recording a per-session cost
// limit as their judge error.
func costLimitErrors(spans []ptrace.Span) int {
	n := 0
	for _, sp := range spans {
		forEachSpanEvent(sp, func(ev ptrace.SpanEvent) {
			if typ, _ := ev.Attributes().Get(semconv.ErrorType); typ.Str() != semconv.EvalErrorTypeJudgeError {
				return
			}
			e, _ := ev.Attributes().Get(semconv.GenAIEvaluationExplanation)
			if strings.Contains(e.Str(), judge.ErrCostLimit.Error()) {
				n++
			}
		})
	}
	return n
}

// TestJudgeCostLimitPerSession: max_calls_per_session and max_tokens_per_session hold per
// session across its two judge jobs, which run concurrently. The session metrics need 3
// calls (task_completion; response_quality for planner and researcher) and the dataset
// case 2; each job fits a limit alone, both together do not. Which job is refused may
// depend on timing; what the judge server receives never passes the limit, and the
// refused calls are recorded as judge errors naming the limit.
func TestJudgeCostLimitPerSession(t *testing.T) {
	metrics := []judge.Metric{judge.MetricInteractions, judge.MetricTaskCompletion, judge.MetricResponseQuality}
	for _, tc := range []struct {
		name string
		jc   judge.Config
	}{
		{"calls", judge.Config{MaxCallsPerSession: new(3)}},
		// A case needs ~1.2k estimated tokens, a session metric call ~0.6k.
		{"tokens", judge.Config{MaxTokensPerSession: 2000}},
	} {
		for i := range 4 { // timings vary between runs
			t.Run(fmt.Sprintf("%s/%d", tc.name, i), func(t *testing.T) {
				var m meteredJudge
				srv := m.serve(t)
				cfg := referencesTestConfig()
				jc := tc.jc
				jc.Enabled, jc.Endpoint, jc.Model, jc.Rubric, jc.Timeout = true, srv.URL+"/v1", "judge-m", "r", 5*time.Second
				jc.Metrics, jc.Concurrency = metrics, 2 // the two jobs run at once
				cfg.Judge = jc
				p, sink, clk := newTestProcessor(t, cfg, nil)
				runSession(t, p, clk, datasetRun(70+byte(i), fmt.Sprintf("conv-cost-%d", i), "papers", "run-c", "x", "search_papers", "summarize"))
				require.Eventually(t, func() bool {
					s := evalSpans(sink)
					return len(s[semconv.EvalKindReference]) == 1 && len(s[semconv.EvalKindJudge]) == 1
				}, 5*time.Second, 10*time.Millisecond)
				require.NoError(t, p.shutdown(context.Background()))

				calls, tokens := m.spent()
				assert.Positive(t, calls, "one job at least is judged")
				if n := jc.MaxCallsPerSession; n != nil && *n > 0 {
					assert.LessOrEqual(t, calls, *n, "calls of the session at the judge")
				}
				if n := jc.MaxTokensPerSession; n > 0 {
					assert.LessOrEqual(t, tokens, n, "estimated tokens of the session at the judge")
				}
				s := evalSpans(sink)
				assert.Positive(t, costLimitErrors(append(s[semconv.EvalKindReference], s[semconv.EvalKindJudge]...)),
					"the refused calls record the limit")
			})
		}
	}
}

// TestJudgeChargesOnlySentCalls: max_calls_per_session counts the calls sent to the
// judge. A call refused by calls_per_minute or served from the verdict cache reaches no
// server and is not charged to the session.
func TestJudgeChargesOnlySentCalls(t *testing.T) {
	var m meteredJudge
	srv := m.serve(t)
	cfg := testConfig()
	cfg.Judge = judge.Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second,
		Concurrency: 1, CallsPerMinute: 1, MaxCallsPerSession: new(2),
		Metrics: []judge.Metric{judge.MetricTaskCompletion, judge.MetricHallucination}}
	p, sink, clk := newTestProcessor(t, cfg, nil)
	// Two sessions with the same transcript, judged one after the other: the first sends
	// task_completion and is refused hallucination by the budget; the second gets
	// task_completion from the cache and is refused hallucination too.
	runSession(t, p, clk, datasetRun(91, "conv-sent-a", "", "", "Find papers", "search_papers"))
	require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindJudge]) == 1 }, 5*time.Second, 10*time.Millisecond)
	runSession(t, p, clk, datasetRun(92, "conv-sent-b", "", "", "Find papers", "search_papers"))
	require.Eventually(t, func() bool { return len(evalSpans(sink)[semconv.EvalKindJudge]) == 2 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.shutdown(context.Background()))
	st := p.judge.client.Stats()
	calls, _ := m.spent()
	require.Equal(t, 1, calls, "one call sent")
	require.Equal(t, int64(1), st.CacheHits, "the second session's task_completion came from the cache")
	require.Equal(t, int64(2), st.BudgetDenied)

	// What is left of max_calls_per_session: one call for the first session, two for
	// the second.
	require.NoError(t, p.judge.ledger.Spend("conv-sent-a", 1))
	assert.ErrorIs(t, p.judge.ledger.Spend("conv-sent-a", 1), judge.ErrCostLimit)
	require.NoError(t, p.judge.ledger.Spend("conv-sent-b", 1))
	require.NoError(t, p.judge.ledger.Spend("conv-sent-b", 1))
}
