// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// histogramPoint is one histogram series: count, sum and cumulative bucket counts by
// upper bound.
type histogramPoint struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64
}

// findHistogram returns the series of family name with exactly labels, or fails.
func findHistogram(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) histogramPoint {
	t.Helper()
	fams, err := g.Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() != name {
			continue
		}
		for _, m := range fam.GetMetric() {
			if !labelsEqual(m.GetLabel(), labels) {
				continue
			}
			h := m.GetHistogram()
			p := histogramPoint{count: h.GetSampleCount(), sum: h.GetSampleSum(), buckets: map[float64]uint64{}}
			for _, b := range h.GetBucket() {
				p.buckets[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			return p
		}
	}
	require.Failf(t, "series not found", "%s%v", name, labels)
	return histogramPoint{}
}

// countSeries counts the series of family name whose labels include match.
func countSeries(t *testing.T, g prometheus.Gatherer, name string, match map[string]string) int {
	t.Helper()
	fams, err := g.Gather()
	require.NoError(t, err)
	n := 0
	for _, fam := range fams {
		if fam.GetName() != name {
			continue
		}
	next:
		for _, m := range fam.GetMetric() {
			for k, v := range match {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			n++
		}
	}
	return n
}

func labelsEqual(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, lp := range got {
		if want[lp.GetName()] != lp.GetValue() {
			return false
		}
	}
	return true
}

func TestRecordTurnNonFinalAndFinal(t *testing.T) {
	m := newPromMetrics(100, nil)
	m.recordTurn(ptr(turn0(false)))
	m.recordTurn(ptr(turn0(true)))
	m.recordTurn(ptr(turn1(false)))
	m.recordTurn(ptr(turn1(true)))
	// The last turn judged again when its session continued: counted once, and the
	// change counted as a revision: from a collector that does not name the verdict it
	// replaces (unknown), then twice from one that does, the second time unchanged.
	revised := turn1(true)
	revised.Revised, revised.DetectionType, revised.IsBad = true, "ccm", true
	m.recordTurn(&revised)
	revised.DetectionType, revised.ReplacedDetectionType = "rdm", "ccm"
	m.recordTurn(&revised)
	revised.ReplacedDetectionType = "rdm"
	m.recordTurn(&revised)

	// Tool calls come from the non-final results only: 4, not 8.
	expected := `
# HELP agent_eval_tool_calls_total Tool calls validated, by verdict (valid, invalid, not_evaluable).
# TYPE agent_eval_tool_calls_total counter
agent_eval_tool_calls_total{agent="executor",tool="lookup_order",valid="not_evaluable"} 1
agent_eval_tool_calls_total{agent="executor",tool="refund_order",valid="invalid"} 1
agent_eval_tool_calls_total{agent="executor",tool="refund_order",valid="valid"} 2
# HELP agent_eval_tool_issues_total Tool-use issues found, by issue type and severity.
# TYPE agent_eval_tool_issues_total counter
agent_eval_tool_issues_total{agent="executor",issue="PARAMETER_HALLUCINATION",severity="MEDIUM",tool="refund_order"} 1
# HELP agent_eval_handoffs_total Handoffs between agents.
# TYPE agent_eval_handoffs_total counter
agent_eval_handoffs_total{from_agent="planner",to_agent="executor"} 1
# HELP agent_eval_not_evaluable_total Checks that could not run, by check and reason.
# TYPE agent_eval_not_evaluable_total counter
agent_eval_not_evaluable_total{check="tool_validation",reason="schema_unknown"} 1
# HELP agent_eval_turns_total Turns with a final verdict, by detection type (none, rdm, ccm, no_answer, hallucination, llm_judge).
# TYPE agent_eval_turns_total counter
agent_eval_turns_total{detection_type="none"} 1
agent_eval_turns_total{detection_type="rdm"} 1
# HELP agent_eval_turns_revised_total Final verdicts changed after agent_eval_turns_total counted the turn (a session continued after a pause, a turn that closed late), by the new detection type and the one it replaces (replaced_detection_type; unknown from an earlier collector).
# TYPE agent_eval_turns_revised_total counter
agent_eval_turns_revised_total{detection_type="ccm",replaced_detection_type="unknown"} 1
agent_eval_turns_revised_total{detection_type="rdm",replaced_detection_type="ccm"} 1
`
	require.NoError(t, testutil.GatherAndCompare(scraped(m), strings.NewReader(expected),
		"agent_eval_tool_calls_total", "agent_eval_tool_issues_total", "agent_eval_handoffs_total",
		"agent_eval_not_evaluable_total", "agent_eval_turns_total", "agent_eval_turns_revised_total"))

	// Durations in seconds (JSON carries ms): refund_order 250 ms, 50 ms, 2000 ms;
	// lookup_order never executed, so no duration.
	tool := findHistogram(t, scraped(m), "agent_eval_tool_call_duration_seconds", map[string]string{"agent": "executor", "tool": "refund_order"})
	assert.Equal(t, uint64(3), tool.count)
	assert.InDelta(t, 2.3, tool.sum, 1e-9)
	assert.Equal(t, uint64(1), tool.buckets[0.05])
	assert.Equal(t, uint64(2), tool.buckets[0.25])
	assert.Equal(t, uint64(2), tool.buckets[1])
	assert.Equal(t, uint64(3), tool.buckets[2.5])
	assert.Equal(t, 1, countSeries(t, scraped(m), "agent_eval_tool_call_duration_seconds", nil), "no lookup_order series")

	planner := findHistogram(t, scraped(m), "agent_eval_agent_interaction_duration_seconds", map[string]string{"agent": "planner"})
	assert.Equal(t, uint64(1), planner.count)
	assert.InDelta(t, 1.2, planner.sum, 1e-9)
	executor := findHistogram(t, scraped(m), "agent_eval_agent_interaction_duration_seconds", map[string]string{"agent": "executor"})
	assert.Equal(t, uint64(2), executor.count)
	assert.InDelta(t, 3.3, executor.sum, 1e-9)
}

// TestScoreExtremesHaveTheirOwnBuckets: scores of exactly 0 and 1, what most sessions
// get, are counted apart from their neighbours, so histogram_quantile reads them as 0 and
// within 0.001 of 1 (docs/decisions/deploy.md, "Quantile precision").
func TestScoreExtremesHaveTheirOwnBuckets(t *testing.T) {
	m := newPromMetrics(100, nil)
	one, zero, near := 1.0, 0.0, 0.95
	m.recordAnalysis(&evaluation.Analysis{SessionID: "a", CoordinationScore: &one, IntentDriftScore: &zero})
	m.recordAnalysis(&evaluation.Analysis{SessionID: "b", CoordinationScore: &near, IntentDriftScore: &near})
	coord := findHistogram(t, scraped(m), "agent_eval_session_score", map[string]string{"metric": "coordination"})
	assert.Equal(t, uint64(1), coord.buckets[0.999], "0.95 <= 0.999, 1 is not")
	assert.Equal(t, uint64(2), coord.buckets[1])
	drift := findHistogram(t, scraped(m), "agent_eval_session_score", map[string]string{"metric": "intent_drift"})
	assert.Equal(t, uint64(1), drift.buckets[0], "0 has the bucket with upper bound 0")
	assert.Equal(t, uint64(1), drift.buckets[0.1])
}

func TestRecordAnalysis(t *testing.T) {
	m := newPromMetrics(100, nil)
	m.recordAnalysis(ptr(analysisCheckout()))
	m.recordAnalysis(ptr(analysisSupport()))
	m.recordAnalysis(ptr(evaluation.Analysis{SessionID: "undecided"})) // no scores at all

	expected := `
# HELP agent_eval_sessions_total Session analyses stored (each revision: a session continued after a pause counts again), by task completion (true, false, unknown) and partial (true, false).
# TYPE agent_eval_sessions_total counter
agent_eval_sessions_total{partial="false",task_completion="true"} 1
agent_eval_sessions_total{partial="false",task_completion="unknown"} 1
agent_eval_sessions_total{partial="true",task_completion="false"} 1
# HELP agent_eval_recommendations_total Recommendations issued in session analyses, by kind.
# TYPE agent_eval_recommendations_total counter
agent_eval_recommendations_total{kind="parameter_hallucination"} 1
agent_eval_recommendations_total{kind="tool_use"} 1
`
	require.NoError(t, testutil.GatherAndCompare(scraped(m), strings.NewReader(expected),
		"agent_eval_sessions_total", "agent_eval_recommendations_total"))

	for _, tc := range []struct {
		metric string
		count  uint64
		sum    float64
		// le is the smallest bucket bound that holds the only (or both) observations.
		le float64
	}{
		{"overall", 2, 0.82 + 0.4, 0.9},
		{"coordination", 1, 0.9, 0.9},
		{"intent_drift", 1, 0.15, 0.2},
		{"conversation", 2, 0.5 + 1.0, 1},
		// tool_use_score: 0.8333…
		{"tool_use", 1, 2.5 / 3, 0.9},
		{"reasoning", 1, 0.7, 0.7},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			p := findHistogram(t, scraped(m), "agent_eval_session_score", map[string]string{"metric": tc.metric})
			assert.Equal(t, tc.count, p.count)
			assert.InDelta(t, tc.sum, p.sum, 1e-9)
			assert.Equal(t, tc.count, p.buckets[tc.le])
		})
	}
	overall := findHistogram(t, scraped(m), "agent_eval_session_score", map[string]string{"metric": "overall"})
	assert.Equal(t, uint64(0), overall.buckets[0.3], "0.4 is not <= 0.3")
	assert.Equal(t, uint64(1), overall.buckets[0.4], "bucket bounds are inclusive: 0.4 <= 0.4")
	assert.Equal(t, uint64(1), overall.buckets[0.8])
	assert.Equal(t, 12, len(overall.buckets), "0.1 steps and the bounds 0 and 0.999")
	assert.Equal(t, uint64(0), overall.buckets[0], "0.4 is not <= 0")
	assert.Equal(t, overall.count, overall.buckets[0.999], "no overall score is 1")

	// Per-agent scores: only present ones are observed (planner has no tool_use).
	assert.Equal(t, 7, countSeries(t, scraped(m), "agent_eval_agent_score", nil))
	for _, tc := range []struct {
		agent, metric string
		count         uint64
		sum           float64
	}{
		{"planner", "overall", 2, 0.9 + 0.4},
		{"planner", "handoff", 1, 0.8},
		{"planner", "response_quality", 2, 1.4},
		{"executor", "overall", 1, 0.8},
		{"executor", "tool_use", 1, 0.75},
		{"executor", "reasoning", 1, 0.7},
		{"executor", "response_quality", 1, 1},
	} {
		p := findHistogram(t, scraped(m), "agent_eval_agent_score", map[string]string{"agent": tc.agent, "metric": tc.metric})
		assert.Equal(t, tc.count, p.count, "%s/%s", tc.agent, tc.metric)
		assert.InDelta(t, tc.sum, p.sum, 1e-9, "%s/%s", tc.agent, tc.metric)
	}
}

func TestRecordTurnLabelCap(t *testing.T) {
	var overflowed []string
	m := newPromMetrics(2, func(domain string) { overflowed = append(overflowed, domain) })
	tr := evaluation.TurnResult{Interactions: []evaluation.InteractionResult{{
		AgentID: "executor",
		ToolCalls: []evaluation.ToolCallResult{
			{ToolName: "search_1", Verdict: evaluation.VerdictValid},
			{ToolName: "search_2", Verdict: evaluation.VerdictValid},
			{ToolName: "search_3", Verdict: evaluation.VerdictValid},
			{ToolName: "search_4", Verdict: evaluation.VerdictValid},
			{ToolName: "search_1", Verdict: evaluation.VerdictValid},
		},
	}}}
	m.recordTurn(&tr)
	expected := `
# HELP agent_eval_tool_calls_total Tool calls validated, by verdict (valid, invalid, not_evaluable).
# TYPE agent_eval_tool_calls_total counter
agent_eval_tool_calls_total{agent="executor",tool="other",valid="valid"} 2
agent_eval_tool_calls_total{agent="executor",tool="search_1",valid="valid"} 2
agent_eval_tool_calls_total{agent="executor",tool="search_2",valid="valid"} 1
`
	require.NoError(t, testutil.GatherAndCompare(scraped(m), strings.NewReader(expected), "agent_eval_tool_calls_total"))
	assert.Equal(t, []string{"tool"}, overflowed, "reported once, for the tool label only")
}

func TestLabelLimiter(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	tests := []struct {
		name   string
		max    int
		inputs []string
		want   []string
	}{
		{"first values kept, tail is other", 2, []string{"a", "b", "c", "a", "d", "b"}, []string{"a", "b", "other", "a", "other", "b"}},
		{"empty is unknown and counts as a value", 1, []string{"", "x", ""}, []string{"unknown", "other", "unknown"}},
		{"invalid UTF-8 is repaired", 5, []string{"tool\xff"}, []string{"tool\uFFFD"}},
		{"long values are cut on a rune boundary", 5, []string{long}, []string{strings.Repeat("é", 64)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLabelLimiter(tt.max, nil)
			got := make([]string, 0, len(tt.inputs))
			for _, in := range tt.inputs {
				got = append(got, l.value(domainTool, in))
			}
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("domains are capped separately, agent labels share one", func(t *testing.T) {
		l := newLabelLimiter(1, nil)
		assert.Equal(t, "planner", l.value(domainAgent, "planner"))
		assert.Equal(t, "refund_order", l.value(domainTool, "refund_order"))
		assert.Equal(t, "other", l.value(domainAgent, "executor"))
	})
}

func TestVerdict(t *testing.T) {
	issue := []evaluation.ToolIssue{{Issue: evaluation.IssueToolError}}
	tests := []struct {
		name string
		tc   evaluation.ToolCallResult
		want string
	}{
		{"explicit valid", evaluation.ToolCallResult{Verdict: "valid"}, "valid"},
		{"explicit invalid", evaluation.ToolCallResult{Verdict: "invalid"}, "invalid"},
		{"explicit not_evaluable", evaluation.ToolCallResult{Verdict: "not_evaluable", Issues: issue}, "not_evaluable"},
		{"missing, with an issue", evaluation.ToolCallResult{Issues: issue}, "invalid"},
		{"missing, with a reason", evaluation.ToolCallResult{NotEvaluable: []string{"tools_unknown"}}, "not_evaluable"},
		{"missing, clean", evaluation.ToolCallResult{}, "valid"},
		{"unknown value, clean", evaluation.ToolCallResult{Verdict: "PASS"}, "valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, verdict(&tt.tc))
		})
	}
}

// scraped gathers m as a second scrape does: the observations held back for series not
// yet served (firstScrape) are released by a served scrape first. Zero series are left
// out.
func scraped(m *promMetrics) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		m.first.scrapeServed(m.first.scrapeStarted())
		fams, err := m.registry.Gather()
		return nonZero(fams), err
	})
}

// nonZero drops the series that are still at zero (counters at 0, histograms without
// observations) and the families left empty: the tests about values compare these.
func nonZero(fams []*dto.MetricFamily) []*dto.MetricFamily {
	out := fams[:0]
	for _, f := range fams {
		kept := f.Metric[:0]
		for _, m := range f.GetMetric() {
			if m.GetCounter().GetValue() != 0 || m.GetHistogram().GetSampleCount() != 0 || m.GetGauge() != nil {
				kept = append(kept, m)
			}
		}
		f.Metric = kept
		if len(kept) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// A turn whose content was not captured counts under check turn_detection.
func TestRecordTurnNotEvaluable(t *testing.T) {
	m := newPromMetrics(100, nil)
	tr := turn0(false)
	tr.NotEvaluable = []string{evaluation.ReasonContentNotCaptured}
	m.recordTurn(&tr)
	final := turn0(true)
	final.NotEvaluable = tr.NotEvaluable
	m.recordTurn(&final)
	require.NoError(t, testutil.GatherAndCompare(scraped(m), strings.NewReader(`
# HELP agent_eval_not_evaluable_total Checks that could not run, by check and reason.
# TYPE agent_eval_not_evaluable_total counter
agent_eval_not_evaluable_total{check="tool_validation",reason="schema_unknown"} 1
agent_eval_not_evaluable_total{check="turn_detection",reason="content_not_captured"} 1
`), "agent_eval_not_evaluable_total"), "counted once, from the non-final result")
}
