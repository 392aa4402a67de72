// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// TestDashboardMatchesStore is the live dashboard check (deploy/check-dashboard.sh --live
// runs it): the bundled sample sessions go through the collector over OTLP/HTTP, a real
// Prometheus server (Debian package `prometheus`) scrapes the exporter every second, and
// every panel query of deploy/grafana/agenteval-dashboard.json is run against it and
// compared with the same figure computed from the result store (read through the query
// API). Tolerance: 1e-6 for totals, shares and means (PromQL divides the same integer
// counts and float sums); one bucket width (0.1) for the score quantiles, whose
// histogram_quantile interpolates inside a bucket, and scoreEdgeTolerance where the
// store's quantile is exactly 0 or 1. Panels with no store counterpart (the
// duration quantiles) must return exactly the label sets the store has.
func TestDashboardMatchesStore(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a Prometheus server for about 20s (CI runs it)")
	}
	promBin := prometheusBin(t)

	sink := new(consumertest.TracesSink)
	ep, stop := startCollector(t, filepath.Join(t.TempDir(), "agenteval.db"), sink)
	defer stop()
	prom := startPrometheus(t, promBin, ep.prom)

	// Replay the samples, each file one OTLP/JSON request.
	files, err := filepath.Glob("../testdata/samples/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		resp, err := http.Post("http://"+ep.http+"/v1/traces", "application/json", bytes.NewReader(body))
		require.NoError(t, err, f)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode, f)
	}

	// Every session is stored (session_timeout 2s; a crashed run at turn_timeout 5s) and
	// stays so.
	var analyses []evaluation.Analysis
	stable := 0
	require.Eventually(t, func() bool {
		got := storedAnalyses(t, ep.api)
		if len(got) > 0 && len(got) == len(analyses) {
			stable++
		} else {
			stable = 0
		}
		analyses = got
		return stable >= 6 // 3s without a new session
	}, 60*time.Second, 500*time.Millisecond, "sample sessions stored")
	want := dashboardFromStore(analyses)
	t.Logf("store: %d sessions, %d turns, %d tool issues, %d handoffs", len(analyses), want.turns,
		len(want.topIssues), len(want.handoffs))

	dash := loadDashboardQueries(t)
	mismatches := panelsAgree(t, prom, dash, want)
	require.Empty(t, mismatches, "dashboard panels disagree with the result store:\n%s", strings.Join(mismatches, "\n"))

	// A conversation whose correction comes after a pause longer than session_timeout:
	// the RDM it gives the first turn is a revised verdict (agent_eval_turns_revised_total),
	// which the turn panels must count as the store has it. (The session panels count
	// each analysis revision, docs/metrics.md, so they are not compared again.)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(ep.http), otlptracehttp.WithInsecure())
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	const paused = "dashboard-paused"
	chatTurn(tp, paused, "What is the status of order 1234?")
	storedSession(t, ep.api, paused, 1)
	chatTurn(tp, paused, "No, that's wrong, I meant order 4321.")
	require.NoError(t, tp.Shutdown(context.Background()))
	pausedAn := storedSession(t, ep.api, paused, 2)
	require.Len(t, pausedAn.TurnResults, 2)
	require.Equal(t, evaluation.DetectionRDM, pausedAn.TurnResults[0].DetectionType, "the correction after the pause is RDM on the first turn")
	want = dashboardFromStore(storedAnalyses(t, ep.api))
	var turnPanels []dashboardQuery
	for _, q := range dash {
		if strings.Contains(q.panel, "by detection type") {
			turnPanels = append(turnPanels, q)
		}
	}
	require.Len(t, turnPanels, 2, "the turn panels")
	mismatches = panelsAgree(t, prom, turnPanels, want)
	require.Empty(t, mismatches, "after a revised verdict, the turn panels disagree with the result store:\n%s", strings.Join(mismatches, "\n"))
}

// panelsAgree compares the queries with want (comparePanels) once a second until they
// agree (Prometheus scrapes every second) or 30 s passed, and returns the last
// mismatches: none when they agreed.
func panelsAgree(t *testing.T, prom string, queries []dashboardQuery, want storeFigures) []string {
	t.Helper()
	var mismatches []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if mismatches = comparePanels(t, prom, queries, want); len(mismatches) == 0 {
			return nil
		}
	}
	return mismatches
}

// TestDashboardOverviewBeforeAnySession: on a collector that has stored no session
// (every collector after a start), no overview stat panel is NaN: each answers a number,
// or no series, which the panel shows as its "no sessions yet" text. Before, the shares
// and the mean divided 0 by 0.
func TestDashboardOverviewBeforeAnySession(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a Prometheus server for a few seconds (CI runs it)")
	}
	promBin := prometheusBin(t)
	ep, stop := startCollector(t, filepath.Join(t.TempDir(), "agenteval.db"), new(consumertest.TracesSink))
	defer stop()
	prom := startPrometheus(t, promBin, ep.prom)
	require.Eventually(t, func() bool {
		got, err := promQuery(t, prom, "sum(agent_eval_sessions_total)", "")
		return err == nil && len(got) == 1
	}, 30*time.Second, 200*time.Millisecond, "the exporter's series scraped")

	stats := 0
	for _, q := range loadDashboardQueries(t) {
		if q.typ != "stat" {
			continue
		}
		stats++
		got, err := promQuery(t, prom, q.expr, "")
		require.NoError(t, err, q.panel)
		for _, s := range got {
			assert.False(t, math.IsNaN(s.value), "%s: NaN (%s)", q.panel, q.expr)
		}
	}
	assert.Equal(t, 4, stats, "the overview's stat panels")
}

// prometheusBin returns the Prometheus server's path; without it the test skips, or
// fails when CI is set.
func prometheusBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed (Debian package prometheus; .ci/run installs it)")
		}
		t.Skip("prometheus not on PATH (apt-get install prometheus): the live dashboard checks need it; with CI set this fails instead (.ci/run installs it)")
	}
	return bin
}

// startPrometheus runs a Prometheus server on loopback that scrapes target every second,
// and returns its base URL.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: agenteval
    static_configs: [{targets: [%q]}]
`, target)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600))
	addr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond, "prometheus ready")
	return base
}

func storedAnalyses(t *testing.T, api string) []evaluation.Analysis {
	t.Helper()
	code, body := get(t, "http://"+api+"/api/v1/agent_sessions?limit=1000")
	require.Equal(t, http.StatusOK, code)
	var list struct {
		Sessions []store.SessionSummary `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	out := make([]evaluation.Analysis, 0, len(list.Sessions))
	for _, s := range list.Sessions {
		code, body := get(t, "http://"+api+"/api/v1/agent_sessions/"+url.PathEscape(s.SessionID))
		require.Equal(t, http.StatusOK, code)
		var a evaluation.Analysis
		require.NoError(t, json.Unmarshal(body, &a))
		out = append(out, a)
	}
	return out
}

// storeFigures are the dashboard's figures computed from the stored analyses. Keys of
// the maps are label values joined by "|" in the order the comparison names them.
type storeFigures struct {
	sessions, turns     int
	completed, decided  int
	partial             int
	sessionScores       map[string][]float64 // metric -> scores
	agentScores         map[string][]float64 // agent|metric -> scores
	detections          map[string]float64   // detection_type -> turns
	verdicts            map[string]float64   // valid -> tool calls
	agentCalls          map[string]float64   // agent -> tool calls
	agentInvalid        map[string]float64   // agent -> invalid tool calls
	topIssues           map[string]float64   // agent|tool|issue|severity -> issues
	handoffs            map[string]float64   // from|to -> handoffs
	notEvaluable        map[string]float64   // check|reason -> checks
	recommendations     map[string]float64   // kind -> recommendations
	toolLatencySeries   map[string]bool      // agent|tool with an executed call
	interactionSeries   map[string]bool      // agent with an interaction
	outcomeSessionPairs map[string]float64   // task_completion|partial -> sessions
}

func dashboardFromStore(analyses []evaluation.Analysis) storeFigures {
	f := storeFigures{
		sessionScores: map[string][]float64{}, agentScores: map[string][]float64{},
		detections: map[string]float64{}, verdicts: map[string]float64{}, agentCalls: map[string]float64{},
		agentInvalid: map[string]float64{}, topIssues: map[string]float64{}, handoffs: map[string]float64{},
		notEvaluable: map[string]float64{}, recommendations: map[string]float64{},
		toolLatencySeries: map[string]bool{}, interactionSeries: map[string]bool{}, outcomeSessionPairs: map[string]float64{},
	}
	add := func(m map[string][]float64, k string, v *float64) {
		if v != nil {
			m[k] = append(m[k], *v)
		}
	}
	orUnknown := func(s string) string { return cmp.Or(s, "unknown") }
	for i := range analyses {
		a := &analyses[i]
		f.sessions++
		tc := "unknown"
		if a.TaskCompletion != nil {
			f.decided++
			tc = strconv.FormatBool(*a.TaskCompletion)
			if *a.TaskCompletion {
				f.completed++
			}
		}
		if a.Partial {
			f.partial++
		}
		f.outcomeSessionPairs[tc+"|"+strconv.FormatBool(a.Partial)]++
		add(f.sessionScores, "overall", a.OverallScore)
		add(f.sessionScores, "coordination", a.CoordinationScore)
		add(f.sessionScores, "intent_drift", a.IntentDriftScore)
		add(f.sessionScores, "conversation", a.Conversation.Score)
		add(f.sessionScores, "tool_use", a.ToolUseScore)
		add(f.sessionScores, "reasoning", a.ReasoningScore)
		for agent, sc := range a.PerAgentScores {
			agent = orUnknown(agent)
			add(f.agentScores, agent+"|overall", sc.Overall)
			add(f.agentScores, agent+"|tool_use", sc.ToolUse)
			add(f.agentScores, agent+"|reasoning", sc.Reasoning)
			add(f.agentScores, agent+"|handoff", sc.Handoff)
			add(f.agentScores, agent+"|response_quality", sc.ResponseQuality)
		}
		for _, r := range a.Recommendations {
			f.recommendations[r.Kind]++
		}
		for _, tr := range a.TurnResults {
			f.turns++
			for _, reason := range tr.NotEvaluable {
				f.notEvaluable["turn_detection|"+reason]++
			}
			f.detections[cmp.Or(tr.DetectionType, evaluation.DetectionNone)]++
			for _, ia := range tr.Interactions {
				f.interactionSeries[orUnknown(ia.AgentID)] = true
				for _, h := range ia.Handoffs {
					f.handoffs[orUnknown(h.FromAgent)+"|"+orUnknown(h.ToAgent)]++
				}
				for _, tc := range ia.ToolCalls {
					agent := orUnknown(cmp.Or(tc.AgentID, ia.AgentID))
					tool := orUnknown(tc.ToolName)
					v := tc.Verdict
					if v == "" {
						switch {
						case len(tc.Issues) > 0:
							v = evaluation.VerdictInvalid
						case len(tc.NotEvaluable) > 0:
							v = evaluation.VerdictNotEvaluable
						default:
							v = evaluation.VerdictValid
						}
					}
					f.verdicts[v]++
					f.agentCalls[agent]++
					if v == evaluation.VerdictInvalid {
						f.agentInvalid[agent]++
					}
					if tc.LatencyMs != nil {
						f.toolLatencySeries[agent+"|"+tool] = true
					}
					for _, is := range tc.Issues {
						f.topIssues[agent+"|"+tool+"|"+string(is.Issue)+"|"+string(is.Severity)]++
					}
					for _, reason := range tc.NotEvaluable {
						f.notEvaluable["tool_validation|"+reason]++
					}
				}
			}
		}
	}
	return f
}

type dashboardQuery struct{ panel, typ, expr string }

// loadDashboardQueries returns every panel query with the Grafana variables replaced: the
// time ranges by 1h (the whole test), $agent by .* (All).
func loadDashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	b, err := os.ReadFile("../deploy/grafana/agenteval-dashboard.json")
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	r := strings.NewReplacer("$__range", "1h", "$__rate_interval", "1h", "$window", "1h", "$agent", ".*")
	var out []dashboardQuery
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if tg.Expr != "" {
				out = append(out, dashboardQuery{panel: p.Title, typ: p.Type, expr: r.Replace(tg.Expr)})
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// sample is one element of an instant vector.
type sample struct {
	labels map[string]string
	value  float64
}

func (s sample) key(names ...string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = s.labels[n]
	}
	return strings.Join(parts, "|")
}

// promQuery runs an instant query at time at (Prometheus's API time format; "" for now).
func promQuery(t *testing.T, base, expr, at string) ([]sample, error) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr) + "&time=" + url.QueryEscape(at))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s", r.Error)
	}
	out := make([]sample, 0, len(r.Data.Result))
	for _, e := range r.Data.Result {
		s, _ := e.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("value %q: %w", s, err)
		}
		out = append(out, sample{labels: e.Metric, value: v})
	}
	return out, nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// scoreEdgeTolerance is how far histogram_quantile may read a quantile of scores that are
// exactly 0 or 1: the score buckets have an upper bound at 0 (returned as is) and a last
// bucket (0.999, 1] (interpolated inside it).
const scoreEdgeTolerance = 0.001

// quantile is the q-quantile of xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, i)]
}

// comparePanels runs every dashboard query and returns what disagrees with the store.
func comparePanels(t *testing.T, prom string, queries []dashboardQuery, want storeFigures) []string {
	t.Helper()
	var bad []string
	fail := func(q dashboardQuery, format string, args ...any) {
		bad = append(bad, fmt.Sprintf("%s: %s", q.panel, fmt.Sprintf(format, args...)))
	}
	single := func(q dashboardQuery, got []sample, want float64) {
		if len(got) != 1 {
			fail(q, "want one value %.6f, got %d series", want, len(got))
			return
		}
		if math.Abs(got[0].value-want) > 1e-6 {
			fail(q, "prometheus %.6f, store %.6f", got[0].value, want)
		}
	}
	byKey := func(q dashboardQuery, got []sample, want map[string]float64, names ...string) {
		g := map[string]float64{}
		for _, s := range got {
			g[s.key(names...)] = s.value
		}
		for k, w := range want {
			if v, ok := g[k]; !ok || math.Abs(v-w) > 1e-6 {
				fail(q, "%s: prometheus %v (present %v), store %v", k, v, ok, w)
			}
		}
		for k, v := range g {
			if _, ok := want[k]; !ok && v != 0 && !math.IsNaN(v) { // NaN: 0/0, a series with no data
				fail(q, "%s: prometheus %v, not in the store", k, v)
			}
		}
	}
	sameKeys := func(q dashboardQuery, got []sample, want map[string]bool, names ...string) {
		g := map[string]bool{}
		for _, s := range got {
			if !math.IsNaN(s.value) {
				g[s.key(names...)] = true
			}
		}
		for k := range want {
			if !g[k] {
				fail(q, "no series for %s", k)
			}
		}
		for k := range g {
			if !want[k] {
				fail(q, "series %s not in the store", k)
			}
		}
	}
	shares := func(counts map[string]float64) map[string]float64 {
		total := 0.0
		for _, v := range counts {
			total += v
		}
		out := map[string]float64{}
		for k, v := range counts {
			out[k] = v / total
		}
		return out
	}
	normalise := func(got []sample) []sample {
		total := 0.0
		for _, s := range got {
			total += s.value
		}
		out := make([]sample, len(got))
		for i, s := range got {
			out[i] = sample{labels: s.labels, value: s.value / total}
		}
		return out
	}
	means := func(m map[string][]float64) map[string]float64 {
		out := map[string]float64{}
		for k, xs := range m {
			out[k] = mean(xs)
		}
		return out
	}

	// Queries run at the time of the last scrape: increase() and rate() then extrapolate
	// nothing at the end of the range, and nothing at its start either, since every series
	// was first scraped at zero.
	last, err := promQuery(t, prom, `timestamp(up{job="agenteval"})`, "")
	if err != nil || len(last) != 1 {
		return []string{fmt.Sprintf("last scrape time: %v (%d series)", err, len(last))}
	}
	at := strconv.FormatFloat(last[0].value, 'f', 3, 64)
	for _, q := range queries {
		got, err := promQuery(t, prom, q.expr, at)
		if err != nil {
			fail(q, "query %q: %v", q.expr, err)
			continue
		}
		switch q.panel {
		case "Session analyses":
			single(q, got, float64(want.sessions))
		case "Task completed":
			single(q, got, float64(want.completed)/float64(want.decided))
		case "Partial sessions":
			single(q, got, float64(want.partial)/float64(want.sessions))
		case "Mean overall score":
			single(q, got, mean(want.sessionScores["overall"]))
		case "Session analyses by task_completion / partial":
			byKey(q, normalise(got), shares(want.outcomeSessionPairs), "task_completion", "partial")
		case "Session score p50 / p90 (overall, coordination, intent drift) over $window":
			qq := 0.5
			if strings.HasPrefix(q.expr, "histogram_quantile(0.9") {
				qq = 0.9
			}
			for _, s := range got {
				xs := want.sessionScores[s.labels["metric"]]
				if len(xs) == 0 {
					fail(q, "%s: no store scores", s.labels["metric"])
					continue
				}
				w := quantile(xs, qq)
				if math.Abs(s.value-w) > 0.1+1e-9 {
					fail(q, "%s p%.0f: prometheus %.4f, store %.4f (more than one bucket apart)", s.labels["metric"], qq*100, s.value, w)
				}
				// A score of exactly 0 or 1 (no drift, every call valid: most sessions)
				// has a bucket of its own, so the panel shows it as it is, not mid-bucket.
				if (w == 0 || w == 1) && math.Abs(s.value-w) > scoreEdgeTolerance {
					fail(q, "%s p%.0f: prometheus %.4f, store %.4f (an extreme score read mid-bucket)", s.labels["metric"], qq*100, s.value, w)
				}
			}
			if len(got) != 3 {
				fail(q, "want overall, coordination and intent_drift, got %d series", len(got))
			}
		case "Session score mean by metric over $window":
			byKey(q, got, means(want.sessionScores), "metric")
		case "Per-agent mean score by metric over $window", "Per-agent mean score (time range)":
			byKey(q, got, means(want.agentScores), "agent", "metric")
		case "Agent interaction duration p95":
			sameKeys(q, got, want.interactionSeries, "agent")
		case "Handoffs from → to (time range)":
			byKey(q, got, want.handoffs, "from_agent", "to_agent")
		case "Turns by detection type":
			byKey(q, normalise(got), shares(want.detections), "detection_type")
		case "Bad-turn share by detection type over $window":
			badShare := map[string]float64{}
			for d, n := range want.detections {
				if d != evaluation.DetectionNone {
					badShare[d] = n / float64(want.turns)
				}
			}
			byKey(q, got, badShare, "detection_type")
		case "Tool calls by verdict":
			byKey(q, normalise(got), shares(want.verdicts), "valid")
		case "Invalid tool-call share per agent over $window":
			share := map[string]float64{}
			for agent, n := range want.agentCalls {
				if inv := want.agentInvalid[agent]; inv > 0 {
					share[agent] = inv / n
				}
			}
			byKey(q, got, share, "agent")
		case "Top tool issues (time range)":
			byKey(q, got, want.topIssues, "agent", "tool", "issue", "severity")
		case "Tool-call duration p95 by agent / tool":
			sameKeys(q, got, want.toolLatencySeries, "agent", "tool")
		case "Not evaluable by check / reason (time range)":
			byKey(q, got, want.notEvaluable, "check", "reason")
		case "Recommendations by kind (time range)":
			byKey(q, got, want.recommendations, "kind")
		default:
			fail(q, "no store counterpart: add one to comparePanels")
		}
	}
	sort.Strings(bad)
	return bad
}
