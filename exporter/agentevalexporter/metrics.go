// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// This file turns turn results and session analyses into Prometheus series (docs/architecture.md §7;
// docs/metrics.md is the reference). It knows nothing of the collector.

// scoreBuckets are the histogram bucket upper bounds of every score series: 0.1 steps over
// [0,1] (written out: LinearBuckets would give 0.30000000000000004), with the two values
// most scores take in buckets of their own. A score of 0 (no intent drift, every call
// invalid) is in the bucket with upper bound 0, which histogram_quantile returns as is; a
// score of 1 (a flawless session) is in (0.999, 1], read at most 0.001 below 1. With 0.1
// steps alone both were read mid-bucket: a window of perfect sessions showed a p50 of 0.95
// and one without drift 0.05 (docs/decisions/deploy.md, "Quantile precision").
var scoreBuckets = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.999, 1}

// durationBuckets are the bucket upper bounds, in seconds, of the duration series: tool
// calls take milliseconds to tens of seconds, agent interactions up to minutes.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Values of the closed labels.
const (
	labelOther   = "other"   // a value past the max_label_values cap
	labelUnknown = "unknown" // an empty value (or task_completion not decided)

	// checkToolValidation is the `check` label of a tool call's not_evaluable reasons.
	checkToolValidation = "tool_validation"
	// checkTurnDetection is the `check` label of a turn's not_evaluable reasons.
	checkTurnDetection = "turn_detection"

	// maxLabelValueBytes truncates label values (tool names come from model output).
	maxLabelValueBytes = 128
)

// Label domains: labels holding the same kind of value share one capped value set, so an
// agent admitted under `agent` is also admitted as `from_agent`/`to_agent`.
const (
	domainAgent     = "agent"
	domainTool      = "tool"
	domainIssue     = "issue"
	domainSeverity  = "severity"
	domainDetection = "detection_type"
	domainCheck     = "check"
	domainReason    = "reason"
	domainKind      = "kind"
	domainVerdict   = "valid"
)

// promMetrics holds the agent_eval_* series on their own registry. Safe for concurrent use.
// Every series is served at zero before its first observation shows (firstScrape).
type promMetrics struct {
	registry *prometheus.Registry
	labels   *labelLimiter
	first    *firstScrape

	sessionScore        histogramVec
	agentScore          histogramVec
	toolCallDuration    histogramVec
	interactionDuration histogramVec

	sessions        counterVec
	turns           counterVec
	turnsRevised    counterVec
	toolCalls       counterVec
	toolIssues      counterVec
	handoffs        counterVec
	notEvaluable    counterVec
	recommendations counterVec
	references      *referenceSeries
}

// newPromMetrics registers the series on a new registry and creates, at zero, the series
// whose label values are known in advance (sessions by outcome, turns by detection type
// and their revisions by pair of detection types, session scores by metric,
// not-evaluable reasons of tool validation, recommendation kinds). maxLabelValues (>= 1)
// caps the distinct values per label domain; onOverflow, when not nil, is called once
// per domain the first time a value is mapped to "other".
func newPromMetrics(maxLabelValues int, onOverflow func(domain string)) *promMetrics {
	first := newFirstScrape()
	registry := prometheus.NewRegistry()
	histogram := func(opts prometheus.HistogramOpts, labels ...string) histogramVec {
		vec := prometheus.NewHistogramVec(opts, labels)
		registry.MustRegister(vec)
		return histogramVec{name: opts.Name, vec: vec, first: first}
	}
	counter := func(opts prometheus.CounterOpts, labels ...string) counterVec {
		vec := prometheus.NewCounterVec(opts, labels)
		registry.MustRegister(vec)
		return counterVec{name: opts.Name, vec: vec, first: first}
	}
	m := &promMetrics{
		registry: registry,
		labels:   newLabelLimiter(maxLabelValues, onOverflow),
		first:    first,
		sessionScore: histogram(prometheus.HistogramOpts{
			Name:    "agent_eval_session_score",
			Help:    "Session-level scores in [0,1] (intent_drift: lower is better), one observation per evaluated session and metric.",
			Buckets: scoreBuckets,
		}, "metric"),
		agentScore: histogram(prometheus.HistogramOpts{
			Name:    "agent_eval_agent_score",
			Help:    "Per-agent scores in [0,1] of each evaluated session (per_agent_scores).",
			Buckets: scoreBuckets,
		}, "agent", "metric"),
		toolCallDuration: histogram(prometheus.HistogramOpts{
			Name:    "agent_eval_tool_call_duration_seconds",
			Help:    "Duration of executed tool calls, in seconds.",
			Buckets: durationBuckets,
		}, "agent", "tool"),
		interactionDuration: histogram(prometheus.HistogramOpts{
			Name:    "agent_eval_agent_interaction_duration_seconds",
			Help:    "Duration of agent interactions (agent spans), in seconds.",
			Buckets: durationBuckets,
		}, "agent"),
		sessions: counter(prometheus.CounterOpts{
			Name: "agent_eval_sessions_total",
			Help: "Session analyses stored (each revision: a session continued after a pause counts again), by task completion (true, false, unknown) and partial (true, false).",
		}, "task_completion", "partial"),
		turns: counter(prometheus.CounterOpts{
			Name: "agent_eval_turns_total",
			Help: "Turns with a final verdict, by detection type (none, rdm, ccm, no_answer, hallucination, llm_judge).",
		}, "detection_type"),
		turnsRevised: counter(prometheus.CounterOpts{
			Name: "agent_eval_turns_revised_total",
			Help: "Final verdicts changed after agent_eval_turns_total counted the turn (a session continued after a pause, a turn that closed late), by the new detection type and the one it replaces (replaced_detection_type; unknown from an earlier collector).",
		}, "detection_type", "replaced_detection_type"),
		toolCalls: counter(prometheus.CounterOpts{
			Name: "agent_eval_tool_calls_total",
			Help: "Tool calls validated, by verdict (valid, invalid, not_evaluable).",
		}, "agent", "tool", "valid"),
		toolIssues: counter(prometheus.CounterOpts{
			Name: "agent_eval_tool_issues_total",
			Help: "Tool-use issues found, by issue type and severity.",
		}, "agent", "tool", "issue", "severity"),
		handoffs: counter(prometheus.CounterOpts{
			Name: "agent_eval_handoffs_total",
			Help: "Handoffs between agents.",
		}, "from_agent", "to_agent"),
		notEvaluable: counter(prometheus.CounterOpts{
			Name: "agent_eval_not_evaluable_total",
			Help: "Checks that could not run, by check and reason.",
		}, "check", "reason"),
		recommendations: counter(prometheus.CounterOpts{
			Name: "agent_eval_recommendations_total",
			Help: "Recommendations issued in session analyses, by kind.",
		}, "kind"),
		references: &referenceSeries{
			score:   histogram(referenceScoreOpts, "evaluator"),
			results: counter(referenceResultsOpts, "evaluator", "result"),
		},
	}
	m.createKnownSeries()
	return m
}

// sessionScoreMetrics are the `metric` values of agent_eval_session_score.
var sessionScoreMetrics = []string{"overall", "coordination", "intent_drift", "conversation", "tool_use", "reasoning"}

// createKnownSeries creates at zero the series whose label values are a closed set, so
// that dashboards read 0 (not "no data") and the first event is counted.
func (m *promMetrics) createKnownSeries() {
	for _, tc := range []string{"true", "false", labelUnknown} {
		for _, partial := range []string{"true", "false"} {
			m.sessions.create(tc, partial)
		}
	}
	detections := []string{evaluation.DetectionNone, evaluation.DetectionRDM, evaluation.DetectionCCM,
		evaluation.DetectionNoAnswer, evaluation.DetectionHallucination, evaluation.DetectionLLMJudge}
	for _, d := range detections {
		m.turns.create(m.labels.reserve(domainDetection, d))
	}
	for _, d := range detections {
		for _, replaced := range detections {
			if d != replaced {
				m.turnsRevised.create(m.labels.value(domainDetection, d), m.labels.value(domainDetection, replaced))
			}
		}
	}
	for _, metric := range sessionScoreMetrics {
		m.sessionScore.create(metric)
	}
	check := m.labels.reserve(domainCheck, checkToolValidation)
	for _, reason := range []string{evaluation.ReasonToolsUnknown, evaluation.ReasonSchemaUnknown,
		evaluation.ReasonSchemaInvalid, evaluation.ReasonArgumentsNotCaptured, evaluation.ReasonArgumentsTruncated} {
		m.notEvaluable.create(check, m.labels.reserve(domainReason, reason))
	}
	turnCheck := m.labels.reserve(domainCheck, checkTurnDetection)
	for _, reason := range []string{evaluation.ReasonContentNotCaptured, evaluation.ReasonCutByCollector} {
		m.notEvaluable.create(turnCheck, m.labels.reserve(domainReason, reason))
	}
	kinds := []string{evaluation.RecToolUse, evaluation.RecHandoff, evaluation.RecReasoning,
		evaluation.RecResponseQuality, evaluation.RecCoordination, evaluation.RecRDM, evaluation.RecCCM}
	for _, issue := range []evaluation.IssueType{evaluation.IssueUnauthorizedTool, evaluation.IssueParameterHallucination,
		evaluation.IssueMissingRequiredParam, evaluation.IssueInvalidParamValue, evaluation.IssueMalformedArguments,
		evaluation.IssueToolError} {
		kinds = append(kinds, strings.ToLower(string(issue)))
	}
	for _, kind := range kinds {
		m.recommendations.create(m.labels.reserve(domainKind, kind))
	}
}

// handler serves the registry in the Prometheus text (or OpenMetrics) format at /metrics;
// each scrape served releases the observations held back for series it showed at zero.
func (m *promMetrics) handler() http.Handler {
	mux := http.NewServeMux()
	serve := promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		n := m.first.scrapeStarted()
		serve.ServeHTTP(w, r)
		m.first.scrapeServed(n)
	})
	return mux
}

// recordTurn feeds the per-turn series from one turn result (the value of
// agent_eval.turn.* attributes). The processor emits two results per turn: a non-final one at
// turn close and a final verdict later, both carrying the same interactions. So a
// non-final result (Final=false) feeds the tool call, issue, not-evaluable, handoff and
// interaction series, and a final one (Final=true) only agent_eval_turns_total, or, when
// it is Revised (the turn was counted at its first final verdict), and its detection type
// differs from the one it replaces, agent_eval_turns_revised_total: nothing is counted
// twice, and the two give the verdicts as they stand (docs/metrics.md).
func (m *promMetrics) recordTurn(tr *evaluation.TurnResult) {
	if tr.Final {
		if !tr.Revised {
			m.turns.inc(m.labels.value(domainDetection, detectionType(tr)))
		} else if d, replaced := detectionType(tr), tr.ReplacedDetectionType; d != replaced {
			if replaced == "" {
				replaced = labelUnknown
			}
			m.turnsRevised.inc(m.labels.value(domainDetection, d), m.labels.value(domainDetection, replaced))
		}
		return
	}
	for _, reason := range tr.NotEvaluable {
		m.notEvaluable.inc(
			m.labels.value(domainCheck, checkTurnDetection),
			m.labels.value(domainReason, reason),
		)
	}
	for i := range tr.Interactions {
		ia := &tr.Interactions[i]
		agent := m.labels.value(domainAgent, ia.AgentID)
		m.interactionDuration.observe(ia.LatencyMs/1000, agent)
		for j := range ia.ToolCalls {
			m.recordToolCall(&ia.ToolCalls[j], ia.AgentID)
		}
		for _, h := range ia.Handoffs {
			m.handoffs.inc(
				m.labels.value(domainAgent, h.FromAgent),
				m.labels.value(domainAgent, h.ToAgent),
			)
		}
	}
}

func (m *promMetrics) recordToolCall(tc *evaluation.ToolCallResult, interactionAgent string) {
	agentID := tc.AgentID
	if agentID == "" {
		agentID = interactionAgent
	}
	agent := m.labels.value(domainAgent, agentID)
	tool := m.labels.value(domainTool, tc.ToolName)
	m.toolCalls.inc(agent, tool, m.labels.value(domainVerdict, verdict(tc)))
	if tc.LatencyMs != nil {
		m.toolCallDuration.observe(*tc.LatencyMs/1000, agent, tool)
	}
	for _, is := range tc.Issues {
		m.toolIssues.inc(agent, tool,
			m.labels.value(domainIssue, string(is.Issue)),
			m.labels.value(domainSeverity, string(is.Severity)),
		)
	}
	for _, reason := range tc.NotEvaluable {
		m.notEvaluable.inc(
			m.labels.value(domainCheck, checkToolValidation),
			m.labels.value(domainReason, reason),
		)
	}
}

// recordAnalysis feeds the per-session series from one stored session analysis.
func (m *promMetrics) recordAnalysis(a *evaluation.Analysis) {
	m.sessions.inc(taskCompletion(a.TaskCompletion), strconv.FormatBool(a.Partial))

	for _, s := range []struct {
		metric string
		score  *float64
	}{
		{"overall", a.OverallScore},
		{"coordination", a.CoordinationScore},
		{"intent_drift", a.IntentDriftScore},
		{"conversation", a.Conversation.Score},
		{"tool_use", a.ToolUseScore},
		{"reasoning", a.ReasoningScore},
	} {
		if s.score != nil {
			m.sessionScore.observe(*s.score, s.metric)
		}
	}

	for agentID, sc := range a.PerAgentScores {
		agent := m.labels.value(domainAgent, agentID)
		for _, s := range []struct {
			metric string
			score  *float64
		}{
			{"overall", sc.Overall},
			{"tool_use", sc.ToolUse},
			{"reasoning", sc.Reasoning},
			{"handoff", sc.Handoff},
			{"response_quality", sc.ResponseQuality},
		} {
			if s.score != nil {
				m.agentScore.observe(*s.score, agent, s.metric)
			}
		}
	}

	for _, r := range a.Recommendations {
		m.recommendations.inc(m.labels.value(domainKind, r.Kind))
	}
	m.references.record(a, m.labels)
}

// verdict returns the `valid` label of a tool call: its Verdict when it is one of
// valid, invalid, not_evaluable; otherwise derived from its issues and not-evaluable
// reasons (any issue → invalid; else any reason → not_evaluable; else valid).
func verdict(tc *evaluation.ToolCallResult) string {
	switch tc.Verdict {
	case evaluation.VerdictValid, evaluation.VerdictInvalid, evaluation.VerdictNotEvaluable:
		return tc.Verdict
	}
	switch {
	case len(tc.Issues) > 0:
		return evaluation.VerdictInvalid
	case len(tc.NotEvaluable) > 0:
		return evaluation.VerdictNotEvaluable
	default:
		return evaluation.VerdictValid
	}
}

// detectionType returns the detection_type label of a final turn verdict ("none" when
// the result names none).
func detectionType(tr *evaluation.TurnResult) string {
	if tr.DetectionType == "" {
		return evaluation.DetectionNone
	}
	return tr.DetectionType
}

// taskCompletion renders a *bool as "true", "false" or "unknown" (nil).
func taskCompletion(b *bool) string {
	if b == nil {
		return labelUnknown
	}
	return strconv.FormatBool(*b)
}

// labelLimiter bounds the cardinality of label values: per domain, the first max distinct
// values are kept and later ones become "other". Values are made valid UTF-8, truncated
// to maxLabelValueBytes, and "" becomes "unknown".
type labelLimiter struct {
	max        int
	onOverflow func(domain string)

	mu       sync.RWMutex
	seen     map[string]map[string]struct{}
	reserved map[string]map[string]struct{} // closed value sets: always kept, not counted
	overflow map[string]bool
}

func newLabelLimiter(maxValues int, onOverflow func(domain string)) *labelLimiter {
	return &labelLimiter{
		max:        maxValues,
		onOverflow: onOverflow,
		seen:       map[string]map[string]struct{}{},
		reserved:   map[string]map[string]struct{}{},
		overflow:   map[string]bool{},
	}
}

// reserve admits v in domain for good, outside the cap: for the closed value sets the
// exporter creates at start. It returns the value to use.
func (l *labelLimiter) reserve(domain, v string) string {
	v = sanitizeLabelValue(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	set := l.reserved[domain]
	if set == nil {
		set = map[string]struct{}{}
		l.reserved[domain] = set
	}
	set[v] = struct{}{}
	return v
}

// value returns the label value to use for v in domain.
func (l *labelLimiter) value(domain, v string) string {
	v = sanitizeLabelValue(v)
	l.mu.RLock()
	_, ok := l.seen[domain][v]
	if !ok {
		_, ok = l.reserved[domain][v]
	}
	l.mu.RUnlock()
	if ok {
		return v
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	set := l.seen[domain]
	if set == nil {
		set = map[string]struct{}{}
		l.seen[domain] = set
	}
	if _, ok := set[v]; ok {
		return v
	}
	if len(set) < l.max {
		set[v] = struct{}{}
		return v
	}
	if !l.overflow[domain] {
		l.overflow[domain] = true
		if l.onOverflow != nil {
			l.onOverflow(domain)
		}
	}
	return labelOther
}

func sanitizeLabelValue(v string) string {
	if v == "" {
		return labelUnknown
	}
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	if len(v) > maxLabelValueBytes {
		cut := maxLabelValueBytes
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	return v
}
