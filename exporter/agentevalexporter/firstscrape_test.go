// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

func scrapeText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// Prometheus's increase() and rate() take a series' first sample as the baseline, so
// each series must be scraped at zero before its first event shows.
func TestSeriesServedAtZeroBeforeFirstEvent(t *testing.T) {
	m := newPromMetrics(100, nil)
	srv := httptest.NewServer(m.handler())
	defer srv.Close()

	done := true
	m.recordAnalysis(&evaluation.Analysis{TaskCompletion: &done})
	m.recordTurn(ptr(turn0(false)))

	first := scrapeText(t, srv.URL)
	// Closed label sets exist from the start, at zero, even with an event recorded.
	assert.Contains(t, first, `agent_eval_sessions_total{partial="false",task_completion="true"} 0`)
	assert.Contains(t, first, `agent_eval_turns_total{detection_type="rdm"} 0`)
	assert.Contains(t, first, `agent_eval_turns_total{detection_type="no_answer"} 0`)
	assert.Equal(t, 30, strings.Count(first, "\nagent_eval_turns_revised_total{"), "every pair of two detection types")
	assert.Contains(t, first, `agent_eval_turns_revised_total{detection_type="rdm",replaced_detection_type="none"} 0`)
	assert.Contains(t, first, `agent_eval_not_evaluable_total{check="tool_validation",reason="schema_unknown"} 0`)
	assert.Contains(t, first, `agent_eval_recommendations_total{kind="parameter_hallucination"} 0`)
	assert.Contains(t, first, `agent_eval_session_score_count{metric="overall"} 0`)
	// A label set first seen with an event is created at zero too.
	assert.Contains(t, first, `agent_eval_tool_calls_total{agent="executor",tool="refund_order",valid="invalid"} 0`)

	second := scrapeText(t, srv.URL)
	assert.Contains(t, second, `agent_eval_sessions_total{partial="false",task_completion="true"} 1`)
	assert.Contains(t, second, `agent_eval_tool_calls_total{agent="executor",tool="refund_order",valid="invalid"} 1`)

	// Once served, a series counts at once.
	m.recordAnalysis(&evaluation.Analysis{TaskCompletion: &done})
	third := scrapeText(t, srv.URL)
	assert.Contains(t, third, `agent_eval_sessions_total{partial="false",task_completion="true"} 2`)
}

func TestFirstScrapeSeriesCreatedDuringAScrape(t *testing.T) {
	f := newFirstScrape()
	applied := 0
	n := f.scrapeStarted()
	f.do("s", func() { applied++ }) // created while scrape n gathers: it may not be in it
	f.scrapeServed(n)
	assert.Equal(t, 0, applied, "held until a scrape that began after the series was created")
	f.scrapeServed(f.scrapeStarted())
	assert.Equal(t, 1, applied)
	f.do("s", func() { applied++ })
	assert.Equal(t, 2, applied, "served series apply at once")
}

func TestFirstScrapePendingIsBounded(t *testing.T) {
	f := newFirstScrape()
	applied := 0
	for i := 0; i < maxPendingObservations+10; i++ {
		f.do("s", func() { applied++ })
	}
	assert.Equal(t, 10, applied, "past the bound, observations apply at once")
	assert.Len(t, f.pending, maxPendingObservations)
	f.scrapeServed(f.scrapeStarted())
	assert.Equal(t, maxPendingObservations+10, applied)
	assert.Empty(t, f.pending)
	assert.True(t, strings.HasPrefix(seriesKey("a", []string{"b", "c"}), "a\xff"))
}
