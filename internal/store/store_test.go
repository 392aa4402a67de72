// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

// backend is one database the shared suite runs against.
type backend struct {
	name string
	// newDB returns the driver and DSN of a fresh, empty database for t (cleaned up
	// with t).
	newDB func(t *testing.T) (driver, dsn string)
	// precision is the resolution of the timestamp columns (summaries, history).
	precision time.Duration
}

func sqliteBackend() backend {
	return backend{
		name: DriverSQLite,
		newDB: func(t *testing.T) (string, string) {
			return DriverSQLite, filepath.Join(t.TempDir(), "nested", "dir", "agenteval.db")
		},
		precision: time.Nanosecond,
	}
}

// postgresBackend gives every test its own schema (search_path) in the database named
// by AGENTEVAL_TEST_POSTGRES_DSN, dropped when the test ends.
func postgresBackend() backend {
	return backend{
		name:      DriverPostgres,
		newDB:     func(t *testing.T) (string, string) { return DriverPostgres, storetest.PostgresDSN(t) },
		precision: time.Microsecond,
	}
}

func backends() []backend { return []backend{sqliteBackend(), postgresBackend()} }

// open opens a fresh store of b, closed with t.
func open(t *testing.T, b backend) (*sqlStore, string, string) {
	t.Helper()
	driver, dsn := b.newDB(t)
	s, err := Open(context.Background(), driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s.(*sqlStore), driver, dsn
}

// runAll runs test against every backend.
func runAll(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

func f64(v float64) *float64 { return &v }
func boolp(v bool) *bool     { return &v }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// sampleAnalysis is a complete analysis with every kind of value: nil and present
// scores, nested turn results, issues, recommendations, references, NUL and non-ASCII
// text, nanosecond timestamps.
func sampleAnalysis(id string, ended time.Time, overall *float64, agents ...string) *evaluation.Analysis {
	if len(agents) == 0 {
		agents = []string{"triage", "executor"}
	}
	a := &evaluation.Analysis{
		SessionID:         id,
		Service:           "support-bot",
		StartedAt:         ended.Add(-90*time.Second - 654321*time.Nanosecond),
		EndedAt:           ended,
		Partial:           false,
		EndReason:         "session_timeout",
		OverallScore:      overall,
		CoordinationScore: f64(0.8),
		IntentDriftScore:  nil,
		TaskCompletion:    boolp(true),
		PerAgentScores:    map[string]evaluation.AgentScores{},
		Conversation: evaluation.ConversationSummary{
			TotalResponses: 2, GoodResponses: 1, BadResponses: 1, RDMDetections: 1, Score: f64(0.5),
		},
		Latency: evaluation.LatencySummary{TotalMs: 1500.25, MeanTurnMs: 750.125, MaxTurnMs: 900, ToolCalls: 1},
		Usage:   session.Usage{InputTokens: 1200, OutputTokens: 300, LLMCalls: 4},
		References: map[string]any{
			"tool_selection": map[string]any{"score": 0.75, "expected": []any{"lookup_order", "refund_order"}},
		},
		Explanations: map[string]string{"intent_drift_score": "no user request text captured"},
	}
	for i, agent := range agents {
		a.PerAgentScores[agent] = evaluation.AgentScores{
			Overall:           f64(0.5 + float64(i)/10),
			ToolUse:           f64(0.9),
			Reasoning:         nil,
			Handoff:           f64(0.25),
			ResponseQuality:   f64(1),
			InteractionsCount: 2 + i,
			ToolCalls:         3,
			MeanLatencyMs:     412.5,
			Issues:            []string{"PARAMETER_HALLUCINATION"},
			Recommendations:   []evaluation.Recommendation{},
			Explanations:      map[string]string{"reasoning": "no reasoning content"},
		}
	}
	for turn := range 2 {
		a.TurnResults = append(a.TurnResults, evaluation.TurnResult{
			SessionID: id, TurnIndex: turn, TraceID: fmt.Sprintf("%032x", turn+1), RootSpanID: fmt.Sprintf("%016x", turn+1),
			Final: true, IsBad: turn == 0, DetectionType: map[bool]string{true: evaluation.DetectionRDM, false: evaluation.DetectionNone}[turn == 0],
			Confidence: 0.9, Reason: "user said \"that's wrong\"", IntentDrift: f64(0.125), LatencyMs: 750.125,
			Usage: session.Usage{InputTokens: 600, OutputTokens: 150, LLMCalls: 2},
			Interactions: []evaluation.InteractionResult{{
				AgentID: agents[0], SpanID: "00000000000000a1", Score: f64(0.7), ToolUse: f64(0.5), ResponseQuality: f64(1),
				LatencyMs: 320, Status: "ok",
				ToolCalls: []evaluation.ToolCallResult{{
					ToolName: "refund_order", CallID: "call_1", SpanID: "00000000000000b1", AgentID: agents[0],
					Score: f64(0.5), Verdict: evaluation.VerdictInvalid, Executed: false, Status: "unset",
					Issues: []evaluation.ToolIssue{{
						TurnIndex: turn, AgentID: agents[0], ToolName: "refund_order", Issue: evaluation.IssueParameterHallucination,
						Severity: evaluation.SeverityMedium, Parameter: "reason", SpanID: "00000000000000b1",
						Message: "unknown parameter 'reason'",
					}},
					Explanation: "1 issue",
				}},
				Handoffs: []session.Handoff{{FromAgent: agents[0], ToAgent: agents[len(agents)-1], Mode: "pass_control",
					Payload: "order #4411 \x00 für Zoë", PayloadCaptured: true, SourceRule: "gen_ai.handoff"}},
				Explanations: map[string]string{"tool_use": "mean of 1 call"},
			}},
		})
	}
	a.ToolIssues = []evaluation.ToolIssue{
		{TurnIndex: 0, AgentID: agents[0], ToolName: "refund_order", Issue: evaluation.IssueParameterHallucination,
			Severity: evaluation.SeverityMedium, Parameter: "reason", SpanID: "00000000000000b1", Message: "unknown parameter 'reason'"},
		{TurnIndex: 1, AgentID: agents[0], ToolName: "refund_order", Issue: evaluation.IssueParameterHallucination,
			Severity: evaluation.SeverityMedium, Parameter: "reason", SpanID: "00000000000000b2", Executed: true,
			Message: "unknown parameter 'reason'"},
		{TurnIndex: 1, AgentID: agents[len(agents)-1], ToolName: "send_email\x00", Issue: evaluation.IssueToolError,
			Severity: evaluation.SeverityLow, SpanID: "00000000000000b3", Executed: true, Message: "timeout"},
	}
	a.Recommendations = []evaluation.Recommendation{
		{Kind: "parameter_hallucination", AgentID: agents[0], ToolName: "refund_order", Parameter: "reason", Count: 2,
			Message: agents[0] + ": 2 calls to refund_order passed unknown parameter 'reason'", Impact: 0.5},
		{Kind: "rdm", Message: "users corrected 1 of 2 answers", Impact: 0.25},
	}
	return a
}

// count returns the rows of table for session id (all rows when id is "").
func count(t *testing.T, s *sqlStore, table, id string) int {
	t.Helper()
	q, args := "SELECT COUNT(*) FROM "+table, []any{}
	if id != "" {
		q, args = q+" WHERE session_id = ?", []any{id}
	}
	var n int
	require.NoError(t, s.db.QueryRow(s.d.rebind(q), args...).Scan(&n))
	return n
}

func TestSaveGetRoundTrip(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		in := sampleAnalysis("sess-1", t0, f64(0.625))
		require.NoError(t, s.SaveAnalysis(ctx, in))

		got, err := s.GetAnalysis(ctx, "sess-1")
		require.NoError(t, err)
		assert.Equal(t, in, got)
		assert.Equal(t, 123456789, got.EndedAt.Nanosecond(), "nanoseconds survive in the analysis")

		// Derived rows.
		assert.Equal(t, 2, count(t, s, "agent_scores", "sess-1"))
		assert.Equal(t, 2, count(t, s, "turn_results", "sess-1"))
		assert.Equal(t, 3, count(t, s, "tool_issues", "sess-1"))
		assert.Equal(t, 2, count(t, s, "recommendations", "sess-1"))
		var (
			tool, param string
			executed    bool
		)
		require.NoError(t, s.db.QueryRow(s.d.rebind(
			"SELECT tool_name, parameter, executed FROM tool_issues WHERE session_id = ? AND ordinal = ?"), "sess-1", 2).
			Scan(&tool, &param, &executed))
		assert.Regexp(t, `^send_email~[0-9a-f]{16}$`, tool, "NUL removed from text columns; a name it changed keeps a hash of its bytes (nameKey)")
		assert.Empty(t, param)
		assert.True(t, executed)
		var turnDoc string
		require.NoError(t, s.db.QueryRow(s.d.rebind(
			"SELECT result FROM turn_results WHERE session_id = ? AND turn_index = 1"), "sess-1").Scan(&turnDoc))
		var turn evaluation.TurnResult
		require.NoError(t, json.Unmarshal([]byte(turnDoc), &turn))
		assert.Equal(t, in.TurnResults[1], turn)

		// Summary.
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.WithinDuration(t, time.Now(), list[0].StoredAt, time.Minute, "stored_at is the store's clock")
		assert.Equal(t, SessionSummary{
			SessionID:      "sess-1",
			StartedAt:      in.StartedAt.Truncate(b.precision),
			EndedAt:        in.EndedAt.Truncate(b.precision),
			OverallScore:   f64(0.625),
			TaskCompletion: boolp(true),
			Agents:         []string{"executor", "triage"},
			Turns:          2,
			StoredAt:       list[0].StoredAt,
		}, list[0])
	})
}

func TestSaveConvertsTimesToUTC(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		in := sampleAnalysis("sess-tz", t0, nil)
		in.EndedAt = t0.In(time.FixedZone("CEST", 2*3600))
		in.StartedAt = in.StartedAt.In(time.FixedZone("PST", -8*3600))
		require.NoError(t, s.SaveAnalysis(ctx, in))
		got, err := s.GetAnalysis(ctx, "sess-tz")
		require.NoError(t, err)
		assert.Equal(t, t0, got.EndedAt)
		assert.Equal(t, time.UTC, got.StartedAt.Location())
		assert.True(t, in.StartedAt.Equal(got.StartedAt))
	})
}

func TestSaveReplacesChildRows(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		first := sampleAnalysis("sess-r", t0, f64(0.4), "a", "b", "c")
		require.NoError(t, s.SaveAnalysis(ctx, first))
		require.NoError(t, s.SaveAnalysis(ctx, first), "saving the same analysis twice is idempotent")
		assert.Equal(t, 3, count(t, s, "agent_scores", "sess-r"))
		assert.Equal(t, 3, count(t, s, "tool_issues", "sess-r"))

		second := sampleAnalysis("sess-r", t0.Add(time.Minute), f64(0.9), "a")
		second.ToolIssues = second.ToolIssues[:1]
		second.TurnResults = second.TurnResults[1:]
		second.Recommendations = nil
		second.Partial = true
		require.NoError(t, s.SaveAnalysis(ctx, second))

		got, err := s.GetAnalysis(ctx, "sess-r")
		require.NoError(t, err)
		// A save never deletes a turn below its first one (docs/decisions/sessions.md §4.6).
		want := *second
		want.TurnResults = append([]evaluation.TurnResult{first.TurnResults[0]}, second.TurnResults...)
		assert.Equal(t, &want, got)
		assert.Equal(t, 1, count(t, s, "sessions", ""))
		assert.Equal(t, 1, count(t, s, "agent_scores", "sess-r"))
		assert.Equal(t, 2, count(t, s, "turn_results", "sess-r"))
		assert.Equal(t, 1, count(t, s, "tool_issues", "sess-r"))
		assert.Equal(t, 0, count(t, s, "recommendations", "sess-r"))

		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, []string{"a"}, list[0].Agents)
		assert.Equal(t, 2, list[0].Turns)
		assert.True(t, list[0].Partial)
		assert.Equal(t, f64(0.9), list[0].OverallScore)
		assert.True(t, list[0].EndedAt.Equal(t0.Add(time.Minute).Truncate(b.precision)))

		hist, err := s.AgentScoreHistory(ctx, "b", 0)
		require.NoError(t, err)
		assert.Empty(t, hist, "agent b left the session on re-evaluation")
	})
}

func TestListSessionsFilters(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		// Ended one minute apart; s6 ends 1µs after s5 (order within a second).
		saves := []*evaluation.Analysis{
			sampleAnalysis("s1", t0, f64(0.2), "planner", "executor"),
			sampleAnalysis("s2", t0.Add(1*time.Minute), f64(0.5), "executor"),
			sampleAnalysis("s3", t0.Add(2*time.Minute), nil, "executor"),
			sampleAnalysis("s4", t0.Add(3*time.Minute), f64(0.9), "planner"),
			sampleAnalysis("s5", t0.Add(4*time.Minute), f64(0.7), "critic"),
			sampleAnalysis("s6", t0.Add(4*time.Minute+time.Microsecond), f64(1), "critic", "planner"),
		}
		for _, a := range saves {
			require.NoError(t, s.SaveAnalysis(ctx, a))
		}
		tests := []struct {
			name string
			f    Filter
			want []string
		}{
			{"all newest first", Filter{}, []string{"s6", "s5", "s4", "s3", "s2", "s1"}},
			{"limit", Filter{Limit: 2}, []string{"s6", "s5"}},
			{"negative limit means default", Filter{Limit: -1}, []string{"s6", "s5", "s4", "s3", "s2", "s1"}},
			{"since inclusive", Filter{Since: t0.Add(2 * time.Minute)}, []string{"s6", "s5", "s4", "s3"}},
			{"since in another zone", Filter{Since: t0.Add(3 * time.Minute).In(time.FixedZone("X", -5*3600))}, []string{"s6", "s5", "s4"}},
			{"agent", Filter{Agent: "planner"}, []string{"s6", "s4", "s1"}},
			{"unknown agent", Filter{Agent: "nobody"}, []string{}},
			{"min score inclusive, null excluded", Filter{MinScore: f64(0.5)}, []string{"s6", "s5", "s4", "s2"}},
			{"max score inclusive, null excluded", Filter{MaxScore: f64(0.5)}, []string{"s2", "s1"}},
			{"score range", Filter{MinScore: f64(0.3), MaxScore: f64(0.8)}, []string{"s5", "s2"}},
			{"zero min score still excludes null", Filter{MinScore: f64(0)}, []string{"s6", "s5", "s4", "s2", "s1"}},
			{"all filters", Filter{Agent: "executor", Since: t0.Add(30 * time.Second), MinScore: f64(0), Limit: 5}, []string{"s2"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.ListSessions(ctx, tt.f)
				require.NoError(t, err)
				ids := []string{}
				for _, sum := range got {
					ids = append(ids, sum.SessionID)
					assert.True(t, sort.StringsAreSorted(sum.Agents), "agents sorted: %v", sum.Agents)
					assert.NotNil(t, sum.Agents)
				}
				assert.Equal(t, tt.want, ids)
			})
		}
		got, err := s.ListSessions(ctx, Filter{Agent: "planner", Limit: 1})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, []string{"critic", "planner"}, got[0].Agents)
	})
}

func TestListSessionsLimitClamp(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		// Rows inserted directly: 1001 analyses through SaveAnalysis would be slow for
		// nothing. Only the sessions columns matter for the list.
		tx, err := s.db.Begin()
		require.NoError(t, err)
		for i := range MaxLimit + 1 {
			_, err := tx.Exec(s.d.rebind("INSERT INTO sessions (session_id, started_at, ended_at, turns, analysis, stored_at) VALUES (?, ?, ?, 0, '{}', ?)"),
				fmt.Sprintf("bulk-%04d", i), s.d.timeArg(t0), s.d.timeArg(t0.Add(time.Duration(i)*time.Second)), s.d.timeArg(t0))
			require.NoError(t, err)
		}
		require.NoError(t, tx.Commit())
		for _, tt := range []struct{ limit, want int }{{0, DefaultLimit}, {MaxLimit + 500, MaxLimit}, {7, 7}} {
			got, err := s.ListSessions(ctx, Filter{Limit: tt.limit})
			require.NoError(t, err)
			assert.Len(t, got, tt.want, "limit %d", tt.limit)
			assert.Equal(t, "bulk-1000", got[0].SessionID)
		}
	})
}

func TestGetAnalysisUnknown(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		_, err := s.GetAnalysis(context.Background(), "missing")
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrNotFound)
		assert.Contains(t, err.Error(), `"missing"`)
	})
}

func TestSaveAnalysisRejectsInvalid(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		err := s.SaveAnalysis(ctx, nil)
		require.ErrorContains(t, err, "nil analysis")
		assert.ErrorIs(t, err, ErrRejected)
		err = s.SaveAnalysis(ctx, &evaluation.Analysis{})
		require.ErrorContains(t, err, "empty session_id")
		assert.ErrorIs(t, err, ErrRejected)
		nan := sampleAnalysis("nan-score", t0, f64(math.NaN()))
		assert.ErrorIs(t, s.SaveAnalysis(ctx, nan), ErrRejected, "a value JSON cannot encode")
		far := sampleAnalysis("far-revision", t0, f64(0.5))
		far.AnalysisRevision = 1 << 40
		assert.ErrorIs(t, s.SaveAnalysis(ctx, far), ErrRejected, "a revision beyond an INTEGER column")
		farTurn := sampleAnalysis("far-turn", t0, f64(0.5))
		farTurn.TurnResults[1].TurnIndex = 1 << 40
		assert.ErrorIs(t, s.SaveAnalysis(ctx, farTurn), ErrRejected, "a turn index beyond an INTEGER column")

		dup := sampleAnalysis("dup-turn", t0, f64(0.5))
		dup.TurnResults[1].TurnIndex = 0
		err = s.SaveAnalysis(ctx, dup)
		require.Error(t, err)
		assert.Contains(t, err.Error(), b.name)
		assert.Contains(t, err.Error(), "turn_results")
		assert.ErrorIs(t, err, ErrRejected, "the database's constraint: no retry stores it")
		_, err = s.GetAnalysis(ctx, "dup-turn")
		assert.ErrorIs(t, err, ErrNotFound, "a failed save leaves nothing behind (one transaction)")
	})
}

// TestSaveOutageIsNotRejected: errors a retry may cure (a cancelled context, a closed
// database) are not ErrRejected, so the exporter retries the batch whole.
func TestSaveOutageIsNotRejected(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := s.SaveAnalysis(ctx, sampleAnalysis("cancelled", t0, f64(0.5)))
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrRejected)

		require.NoError(t, s.Close())
		err = s.SaveAnalysis(context.Background(), sampleAnalysis("closed", t0, f64(0.5)))
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrRejected)
	})
}

func TestAgentScoreHistory(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		for i := range 5 {
			a := sampleAnalysis(fmt.Sprintf("h%d", i), t0.Add(time.Duration(i)*time.Hour), f64(0.5), "executor", "other")
			sc := a.PerAgentScores["executor"]
			sc.Overall = f64(float64(i) / 10)
			a.PerAgentScores["executor"] = sc
			require.NoError(t, s.SaveAnalysis(ctx, a))
		}
		hist, err := s.AgentScoreHistory(ctx, "executor", 3)
		require.NoError(t, err)
		require.Len(t, hist, 3)
		for i, want := range []int{4, 3, 2} {
			assert.Equal(t, fmt.Sprintf("h%d", want), hist[i].SessionID)
			assert.True(t, hist[i].EndedAt.Equal(t0.Add(time.Duration(want)*time.Hour).Truncate(b.precision)))
			assert.Equal(t, f64(float64(want)/10), hist[i].Scores.Overall)
		}
		full := sampleAnalysis("h4", t0, nil, "executor", "other").PerAgentScores["executor"]
		full.Overall = f64(0.4)
		assert.Equal(t, full, hist[0].Scores, "the whole per_agent_scores entry comes back")

		all, err := s.AgentScoreHistory(ctx, "executor", 0)
		require.NoError(t, err)
		assert.Len(t, all, 5)
		none, err := s.AgentScoreHistory(ctx, "nobody", 10)
		require.NoError(t, err)
		assert.Empty(t, none)
		assert.NotNil(t, none)
	})
}

func TestDeleteStoredBeforeCascades(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		// r0 and r1 are stored first although their spans claim later end times.
		for i := range 4 {
			ended := t0.Add(time.Duration(4-i) * 24 * time.Hour)
			require.NoError(t, s.SaveAnalysis(ctx, sampleAnalysis(fmt.Sprintf("r%d", i), ended, f64(0.5))))
			if i == 1 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		cutoff := list[1].StoredAt // r2's: r0, r1 stored before it; r2 stored exactly at the cutoff stays
		n, err := s.DeleteStoredBefore(ctx, cutoff)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)

		for _, id := range []string{"r0", "r1"} {
			_, err := s.GetAnalysis(ctx, id)
			assert.ErrorIs(t, err, ErrNotFound)
			for _, table := range childTables {
				assert.Zero(t, count(t, s, table, id), "%s rows of %s cascade-deleted", table, id)
			}
		}
		for _, id := range []string{"r2", "r3"} {
			_, err := s.GetAnalysis(ctx, id)
			assert.NoError(t, err)
			assert.Equal(t, 3, count(t, s, "tool_issues", id))
		}
		hist, err := s.AgentScoreHistory(ctx, "triage", 0)
		require.NoError(t, err)
		assert.Len(t, hist, 2)

		n, err = s.DeleteStoredBefore(ctx, cutoff.Add(-time.Hour))
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}

// TestClientTimesDoNotDecideOrderOrRetention: span times are the client's; a session
// whose spans say it ended at the Unix epoch (or at 0001-01-01, a zero timestamp) is not
// deleted by a 30-day retention at once, and one that ended in 2200 does not pin the
// top of the list: both use the time the collector stored the analysis.
func TestClientTimesDoNotDecideOrderOrRetention(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		for _, c := range []struct {
			id    string
			ended time.Time
		}{
			{"future", time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)},
			{"epoch", time.Unix(0, 0)},
			{"zero", time.Time{}},
			{"now", time.Now()},
		} {
			require.NoError(t, s.SaveAnalysis(ctx, sampleAnalysis(c.id, c.ended, f64(0.5))))
		}
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		ids := make([]string, 0, len(list))
		for _, sum := range list {
			ids = append(ids, sum.SessionID)
		}
		assert.Equal(t, []string{"now", "zero", "epoch", "future"}, ids, "newest stored first")
		assert.True(t, list[3].EndedAt.Equal(time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)), "span times kept as data")

		n, err := s.DeleteStoredBefore(ctx, time.Now().Add(-720*time.Hour))
		require.NoError(t, err)
		assert.Zero(t, n, "nothing was stored 30 days ago")
		n, err = s.DeleteStoredBefore(ctx, time.Now().Add(time.Second))
		require.NoError(t, err)
		assert.Equal(t, int64(4), n)
	})
}

func TestOpenTwiceIsIdempotent(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, driver, dsn := open(t, b)
		ctx := context.Background()
		in := sampleAnalysis("keep", t0, f64(0.5))
		require.NoError(t, s.SaveAnalysis(ctx, in))
		version := schemaVersion(t, s)
		assert.Positive(t, version)

		again, err := Open(ctx, driver, dsn)
		require.NoError(t, err, "second Open finds the schema current")
		defer func() { assert.NoError(t, again.Close()) }()
		got, err := again.GetAnalysis(ctx, "keep")
		require.NoError(t, err)
		assert.Equal(t, in, got)
		assert.Equal(t, version, schemaVersion(t, again.(*sqlStore)))

		var applied int
		require.NoError(t, s.db.QueryRow("SELECT COUNT(*) FROM "+versionTable+" WHERE version_id > 0").Scan(&applied))
		files, err := migrations.ReadDir(s.d.migrations)
		require.NoError(t, err)
		assert.Equal(t, len(files), applied, "each migration applied exactly once")
	})
}

func schemaVersion(t *testing.T, s *sqlStore) int64 {
	t.Helper()
	var v int64
	require.NoError(t, s.db.QueryRow("SELECT MAX(version_id) FROM "+versionTable).Scan(&v))
	return v
}

// TestSchemaTables checks that both dialects create the same tables, the SafeMolt ones
// included, with the same columns.
func TestSchemaTables(t *testing.T) {
	want := map[string][]string{
		"sessions":                        sortedCopy(append([]string{"turn_offset", "revision_offset", "numbered_here"}, sessionCols...)),
		"agent_scores":                    sortedCopy(agentScoreCols),
		"turn_results":                    sortedCopy(turnResultCols),
		"tool_issues":                     sortedCopy(toolIssueCols),
		"recommendations":                 sortedCopy(recommendationCols),
		"reference_results":               sortedCopy(referenceResultCols),
		"evaluation_registrations":        {"agent_id", "completed_at", "evaluation_id", "id", "registered_at", "started_at", "status"},
		"evaluation_sessions":             {"ended_at", "evaluation_id", "id", "kind", "message_count", "registration_id", "started_at", "status"},
		"evaluation_session_participants": {"agent_id", "id", "joined_at", "role", "session_id"},
		"evaluation_messages":             {"content", "created_at", "id", "role", "sender_agent_id", "sequence", "session_id"},
		"evaluation_results": {"agent_id", "completed_at", "evaluation_id", "id", "passed", "proctor_agent_id",
			"proctor_feedback", "registration_id", "session_id"},
		"evaluation_agents":   {"created_at", "id", "name"},
		"evaluation_api_keys": {"agent_id", "created_at", "key_hash", "key_id"},
		"session_analyses":    {"analysis", "revision", "session_id", "stored_at"},
		"session_revisions":   {"revision", "session_id", "updated_at"},
		"turns":               {"counted_detection_type", "final", "record", "root_span_id", "session_id", "trace_id", "turn_index", "updated_at", "verdict_stage"},
		"turn_indexes":        {"root_span_id", "session_id", "trace_id", "turn_index", "updated_at"},
		"judge_verdicts": {"agent", "analysis_revision", "evaluator_version", "judge_error", "kind", "name", "pass",
			"reason", "score", "session_id", "updated_at"},
		"open_sessions":    {"meta", "owner", "session_id", "updated_at"},
		"collector_leases": {"lease_until", "owner"},
	}
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		var q string
		if b.name == DriverSQLite {
			q = "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '" + versionTable + "'"
		} else {
			q = "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> '" + versionTable + "'"
		}
		rows, err := s.db.Query(q)
		require.NoError(t, err)
		got := map[string][]string{}
		for rows.Next() {
			var table, col string
			require.NoError(t, rows.Scan(&table, &col))
			got[table] = append(got[table], col)
		}
		require.NoError(t, closeRows(rows))
		for table := range got {
			sort.Strings(got[table])
		}
		assert.Equal(t, want, got)
	})
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// TestSafeMoltConstraints exercises SafeMolt's rules that the schema enforces: one
// session per registration, only participants post, ordered unique sequence, one
// result per registration, cascade from session to transcript.
func TestSafeMoltConstraints(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ts := s.d.timeArg(t0)
		exec := func(q string, args ...any) error {
			_, err := s.db.Exec(s.d.rebind(q), args...)
			return err
		}
		require.NoError(t, exec("INSERT INTO evaluation_registrations (id, evaluation_id, agent_id, status, registered_at) VALUES (?, ?, ?, ?, ?)",
			"eval_reg_1", "sip-5", "candidate-1", "in_progress", ts))
		require.NoError(t, exec("INSERT INTO evaluation_sessions (id, evaluation_id, kind, registration_id, status, started_at) VALUES (?, ?, ?, ?, ?, ?)",
			"eval_sess_1", "sip-5", "proctored", "eval_reg_1", "active", ts))
		assert.Error(t, exec("INSERT INTO evaluation_sessions (id, evaluation_id, kind, registration_id, status, started_at) VALUES (?, ?, ?, ?, ?, ?)",
			"eval_sess_2", "sip-5", "proctored", "eval_reg_1", "active", ts), "one session per registration")
		assert.Error(t, exec("INSERT INTO evaluation_sessions (id, evaluation_id, kind, status, started_at) VALUES (?, ?, ?, ?, ?)",
			"eval_sess_3", "sip-5", "proctored", "active", ts), "proctored needs a registration")
		assert.Error(t, exec("INSERT INTO evaluation_sessions (id, evaluation_id, kind, status, started_at) VALUES (?, ?, ?, ?, ?)",
			"eval_sess_4", "sip-5", "solo", "active", ts), "unknown kind")
		require.NoError(t, exec("INSERT INTO evaluation_sessions (id, evaluation_id, kind, status, started_at) VALUES (?, ?, ?, ?, ?)",
			"eval_sess_5", "class-1", "live_class_work", "active", ts))
		for _, p := range [][]any{{"eval_part_1", "eval_sess_1", "proctor-1", "proctor"}, {"eval_part_2", "eval_sess_1", "candidate-1", "candidate"}} {
			require.NoError(t, exec("INSERT INTO evaluation_session_participants (id, session_id, agent_id, role, joined_at) VALUES (?, ?, ?, ?, ?)", append(p, ts)...))
		}
		assert.Error(t, exec("INSERT INTO evaluation_session_participants (id, session_id, agent_id, role, joined_at) VALUES (?, ?, ?, ?, ?)",
			"eval_part_3", "eval_sess_1", "proctor-1", "candidate", ts), "one role per agent per session")
		msg := "INSERT INTO evaluation_messages (id, session_id, sender_agent_id, role, content, created_at, sequence) VALUES (?, ?, ?, ?, ?, ?, ?)"
		require.NoError(t, exec(msg, "eval_msg_1", "eval_sess_1", "proctor-1", "proctor", "Hello", ts, 1))
		require.NoError(t, exec(msg, "eval_msg_2", "eval_sess_1", "candidate-1", "candidate", "Hi", ts, 2))
		assert.Error(t, exec(msg, "eval_msg_3", "eval_sess_1", "intruder", "candidate", "spam", ts, 3), "only participants post")
		assert.Error(t, exec(msg, "eval_msg_4", "eval_sess_1", "candidate-1", "candidate", "again", ts, 2), "sequence unique per session")
		res := "INSERT INTO evaluation_results (id, evaluation_id, registration_id, agent_id, passed, proctor_agent_id, proctor_feedback, session_id, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
		require.NoError(t, exec(res, "eval_res_1", "sip-5", "eval_reg_1", "candidate-1", true, "proctor-1", "fine", "eval_sess_1", ts))
		assert.Error(t, exec(res, "eval_res_2", "sip-5", "eval_reg_1", "candidate-1", false, "proctor-1", "again", "eval_sess_1", ts), "no double submit")

		require.NoError(t, exec("DELETE FROM evaluation_sessions WHERE id = ?", "eval_sess_1"))
		var msgs, parts int
		require.NoError(t, s.db.QueryRow("SELECT COUNT(*) FROM evaluation_messages").Scan(&msgs))
		require.NoError(t, s.db.QueryRow("SELECT COUNT(*) FROM evaluation_session_participants").Scan(&parts))
		assert.Zero(t, msgs)
		assert.Zero(t, parts)
		var sessionID sql.NullString
		require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT session_id FROM evaluation_results WHERE id = ?"), "eval_res_1").Scan(&sessionID))
		assert.False(t, sessionID.Valid, "the result outlives its session")
	})
}

func TestConcurrentSaves(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const workers, perWorker = 8, 12
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWorker {
					// Half the saves go to ids shared by all workers (concurrent upserts of
					// one session), half to the worker's own.
					id := fmt.Sprintf("w%d-%d", w, i)
					if i%2 == 0 {
						id = fmt.Sprintf("shared-%d", i)
					}
					if err := s.SaveAnalysis(ctx, sampleAnalysis(id, t0.Add(time.Duration(i)*time.Second), f64(0.5))); err != nil {
						errs <- err
					}
					if _, err := s.ListSessions(ctx, Filter{Limit: 5}); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		shared, own := perWorker/2, workers*perWorker/2
		assert.Equal(t, shared+own, count(t, s, "sessions", ""))
		assert.Equal(t, 3*(shared+own), count(t, s, "tool_issues", ""), "no duplicated child rows")
		assert.Equal(t, 2*(shared+own), count(t, s, "agent_scores", ""))
	})
}

// largeAnalysis is an analysis of about size bytes of JSON: many turns with long
// handoff payloads.
func largeAnalysis(id string, size int) *evaluation.Analysis {
	a := sampleAnalysis(id, t0, f64(0.5))
	tmpl := a.TurnResults[0]
	payload := strings.Repeat("The customer asks about order #4411 placed 2026-02-27 for 129.90 EUR. ", 60)
	a.TurnResults = nil
	for i := 0; ; i++ {
		tr := tmpl
		tr.TurnIndex = i
		tr.Interactions = []evaluation.InteractionResult{tmpl.Interactions[0]}
		tr.Interactions[0].Handoffs = []session.Handoff{{FromAgent: "triage", ToAgent: "executor", Payload: fmt.Sprintf("%d: %s", i, payload), PayloadCaptured: true}}
		a.TurnResults = append(a.TurnResults, tr)
		if i%20 == 0 {
			if doc, _ := json.Marshal(a); len(doc) >= size {
				return a
			}
		}
	}
}

func TestLargeAnalysis(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		in := largeAnalysis("big", 1<<20)
		doc, err := json.Marshal(in)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(doc), 1<<20)

		require.NoError(t, s.SaveAnalysis(ctx, in))
		got, err := s.GetAnalysis(ctx, "big")
		require.NoError(t, err)
		assert.Equal(t, in, got)
		assert.Equal(t, len(in.TurnResults), count(t, s, "turn_results", "big"))
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, len(in.TurnResults), list[0].Turns)
	})
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, "mysql", "x")
	assert.ErrorContains(t, err, `unknown driver "mysql"`)

	for _, path := range []string{"", ":memory:", "file:x.db?mode=memory", "a?b.db"} {
		_, err := Open(ctx, DriverSQLite, path)
		assert.ErrorContains(t, err, "store: sqlite:", "path %q", path)
	}
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	_, err = Open(ctx, DriverSQLite, filepath.Join(blocker, "sub", "agenteval.db"))
	assert.ErrorContains(t, err, "store: sqlite: create directory")

	_, err = Open(ctx, DriverPostgres, " ")
	assert.ErrorContains(t, err, "store: postgres: empty DSN")
	_, err = Open(ctx, DriverPostgres, "postgres://agenteval:s3cret@127.0.0.1:1/agenteval?sslmode=disable&connect_timeout=2")
	require.ErrorContains(t, err, "store: postgres: connect")
	assert.NotContains(t, err.Error(), "s3cret", "the DSN's password is not echoed")
}

func TestOpenCreatesSQLiteFileInWAL(t *testing.T) {
	s, _, dsn := open(t, sqliteBackend())
	_, err := os.Stat(dsn)
	require.NoError(t, err)
	var mode string
	require.NoError(t, s.db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	var fk int
	require.NoError(t, s.db.QueryRow("PRAGMA foreign_keys").Scan(&fk))
	assert.Equal(t, 1, fk)
	var pageSize, spill int
	require.NoError(t, s.db.QueryRow("PRAGMA page_size").Scan(&pageSize))
	assert.Equal(t, sqlitePageSize, pageSize, "a new database gets the store's page size")
	require.NoError(t, s.db.QueryRow("PRAGMA cache_spill").Scan(&spill))
	assertSpillsAt16MiB(t, spill, pageSize)
	var cacheSize int
	require.NoError(t, s.db.QueryRow("PRAGMA cache_size").Scan(&cacheSize))
	assert.Equal(t, -16384, cacheSize, "the page cache keeps, between transactions, the 16 MiB a transaction may dirty")
}

// assertSpillsAt16MiB checks that the cache_spill threshold, in pages of pageSize bytes
// and SQLite's per-page bookkeeping (under 1 KiB), is 16 MiB.
func assertSpillsAt16MiB(t *testing.T, spill, pageSize int) {
	t.Helper()
	assert.LessOrEqual(t, spill, 16<<20/pageSize)
	assert.Greater(t, spill, 16<<20/(pageSize+1024))
}

// TestOpenKeepsAnExistingPageSize: a database created before with SQLite's default page
// size (4 KiB) keeps it, and the store migrates, writes and reads it as any other.
func TestOpenKeepsAnExistingPageSize(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", dsn)
	require.NoError(t, err)
	_, err = old.Exec("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE before_the_store (x INTEGER)")
	require.NoError(t, err)
	require.NoError(t, old.Close())

	st, err := Open(context.Background(), DriverSQLite, dsn)
	require.NoError(t, err)
	defer st.Close()
	s := st.(*sqlStore)
	var pageSize, spill int
	require.NoError(t, s.db.QueryRow("PRAGMA page_size").Scan(&pageSize))
	assert.Equal(t, 4096, pageSize)
	require.NoError(t, s.db.QueryRow("PRAGMA cache_spill").Scan(&spill))
	assertSpillsAt16MiB(t, spill, pageSize) // a threshold in bytes, whatever the page size
	a := sampleAnalysis("old-page-size", t0, f64(0.5), "triage", "executor")
	require.NoError(t, s.SaveAnalysis(context.Background(), a))
	got, err := s.GetAnalysis(context.Background(), "old-page-size")
	require.NoError(t, err)
	assert.Equal(t, a.SessionID, got.SessionID)
	assert.Len(t, got.TurnResults, len(a.TurnResults))
}

func TestRebind(t *testing.T) {
	q := "SELECT a FROM t WHERE b = ? AND c IN (?, ?)"
	assert.Equal(t, q, sqliteDialect.rebind(q))
	assert.Equal(t, "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)", postgresDialect.rebind(q))
}

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         "plain",
		"für Zoë":       "für Zoë",
		"a\x00b":        "ab",
		"bad \xff byte": "bad \uFFFD byte",
		"":              "",
	} {
		assert.Equal(t, want, cleanText(in), "%q", in)
	}
}

// TestNameKey: agent and tool names are stored in their keyed and indexed columns as they
// are, unless too long for a PostgreSQL index entry or changed by cleanText; then as a
// cleaned prefix and a hash of the bytes, so that two names never share a key.
func TestNameKey(t *testing.T) {
	for _, name := range []string{"executor", "für Zoë", "", strings.Repeat("a", maxNameBytes)} {
		assert.Equal(t, name, nameKey(name))
	}
	long := strings.Repeat("é", 2000) // 4000 bytes
	for _, name := range []string{long, long + "x", "a\x00b", "a\xffb", strings.Repeat("a", maxNameBytes+1)} {
		k := nameKey(name)
		assert.LessOrEqual(t, len(k), maxNameBytes, "%.20q", name)
		assert.True(t, utf8.ValidString(k) && !strings.ContainsRune(k, 0), "%.20q", name)
		assert.Regexp(t, `~[0-9a-f]{16}$`, k)
	}
	assert.NotEqual(t, nameKey(long), nameKey(long+"x"), "names sharing a long prefix stay apart")
	assert.NotEqual(t, "ab", nameKey("a\x00b"), "a name with NUL is not the name without it")
	assert.NotEqual(t, nameKey("a\x00b"), nameKey("a\xffb"))
}

// TestLongAndNULNamesStored: an agent or tool name of 4000 bytes (the processor allows
// names up to max_text_bytes) failed PostgreSQL's index entry limit (SQLSTATE 54000), which
// was not ErrRejected, so the exporter retried the whole batch forever; and two agents whose
// names differ by a NUL byte broke agent_scores' key on both stores. Now every such
// analysis is stored, in one batch with a plain one, and reads back with its names.
func TestLongAndNULNamesStored(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		long := strings.Repeat("agent-", 700) // 4200 bytes
		a := sampleAnalysis("long-names", t0, f64(0.5), long, "ab", "a\x00b")
		a.ToolIssues[0].ToolName = strings.Repeat("tool-", 800)
		plain := sampleAnalysis("plain", t0, f64(0.5))
		require.NoError(t, s.SaveAnalyses(ctx, []*evaluation.Analysis{plain, a}))
		got, err := s.GetAnalysis(ctx, "long-names")
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{long, "ab", "a\x00b"}, got.Agents(), "the document keeps the names")
		assert.Equal(t, a.ToolIssues[0].ToolName, got.ToolIssues[0].ToolName)
		_, err = s.GetAnalysis(ctx, "plain")
		require.NoError(t, err)
		hist, err := s.AgentScoreHistory(ctx, long, 10)
		require.NoError(t, err)
		assert.Len(t, hist, 1, "the per-agent history finds the long name")
		list, err := s.ListSessions(ctx, Filter{Agent: "a\x00b"})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, "long-names", list[0].SessionID)
	})
}

func TestMigrationSetsMatch(t *testing.T) {
	names := func(dir string) []string {
		entries, err := migrations.ReadDir(dir)
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	sqlite, postgres := names(sqliteDialect.migrations), names(postgresDialect.migrations)
	require.NotEmpty(t, sqlite)
	assert.Equal(t, sqlite, postgres, "every migration exists for both dialects")
}

func BenchmarkSaveAnalysis(b *testing.B) {
	s, err := Open(context.Background(), DriverSQLite, filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	defer s.Close()
	ctx := context.Background()
	a := sampleAnalysis("", t0, f64(0.5), "triage", "executor", "critic")
	doc, err := json.Marshal(a)
	require.NoError(b, err)
	b.Run("insert", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			a.SessionID = fmt.Sprintf("bench-%d", i)
			if err := s.SaveAnalysis(ctx, a); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(doc)), "json_bytes") // after the loop: b.Loop resets metrics
	})
	b.Run("replace", func(b *testing.B) {
		b.ReportAllocs()
		a.SessionID = "bench-replace"
		for b.Loop() {
			if err := s.SaveAnalysis(ctx, a); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(doc)), "json_bytes") // after the loop: b.Loop resets metrics
	})
}

// BenchmarkSaveAnalysesBatch compares storing 64 analyses in one transaction
// (SaveAnalyses, the exporter's path per export batch) with 64 transactions.
func BenchmarkSaveAnalysesBatch(b *testing.B) {
	s, err := Open(context.Background(), DriverSQLite, filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	defer s.Close()
	ctx := context.Background()
	const n = 64
	batch := func(run int) []*evaluation.Analysis {
		as := make([]*evaluation.Analysis, n)
		for i := range as {
			as[i] = sampleAnalysis(fmt.Sprintf("bench-%d-%d", run, i), t0, f64(0.5), "triage", "executor", "critic")
			as[i].AnalysisRevision = 1
		}
		return as
	}
	b.Run("one_transaction", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime(b)
		for i := 0; b.Loop(); i++ {
			if err := s.(BatchSaver).SaveAnalyses(ctx, batch(i)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/analysis")
		b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N*n), "cpu_ns/analysis")
	})
	b.Run("transaction_per_analysis", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime(b)
		for i := 0; b.Loop(); i++ {
			for _, a := range batch(-i - 1) {
				if err := s.SaveAnalysis(ctx, a); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/analysis")
		b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N*n), "cpu_ns/analysis")
	})
}

// BenchmarkSaveLargeAnalysesBatch stores 48 analyses of the size the e2e benchmark's
// sessions have (the golden multi-turn analysis, about 19 KB of JSON and its rows) per
// transaction: about 2.5 MB of pages, more than SQLite's default 2 MB page cache.
func BenchmarkSaveLargeAnalysesBatch(b *testing.B) { benchmarkSaveGoldenBatches(b, 48, false) }

// BenchmarkSaveRandomAnalysesBatch stores 128 golden-size analyses a transaction under
// random session ids (as UUIDs are) with varied scores: the shape of the e2e benchmark's
// batches at 30k spans/s (the batch processor's 8,192 spans, some 100 sessions), whose
// rows land all over the session-keyed indexes, so that a transaction dirties more
// pages than SQLite's default 2 MB page cache holds.
func BenchmarkSaveRandomAnalysesBatch(b *testing.B) { benchmarkSaveGoldenBatches(b, 128, true) }

// benchmarkSaveGoldenBatches saves n copies of the golden multi-turn analysis (new
// sessions) a transaction, with ascending session ids or (random) pseudo-random ones
// and overall scores, and reports the time, CPU time, bytes written and database size
// per analysis.
func benchmarkSaveGoldenBatches(b *testing.B, n int, random bool) {
	golden, s := goldenBenchStore(b)
	// With a deadline, as exporterhelper's timeout gives the exporter's saves: the
	// SQLite driver then watches the context during each statement.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	written, cpu := writtenBytes(b), cpuTime(b)
	for i := 0; b.Loop(); i++ {
		as := make([]*evaluation.Analysis, n)
		for j := range as {
			a := golden[0]
			a.SessionID = fmt.Sprintf("bench-%d-%d", i, j)
			if random {
				a.SessionID = fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64())
				a.OverallScore = f64(rng.Float64())
			}
			as[j] = &a
		}
		if err := s.(BatchSaver).SaveAnalyses(ctx, as); err != nil {
			b.Fatal(err)
		}
	}
	analyses := float64(b.N * n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/analyses, "ns/analysis")
	// The database it leaves, after a checkpoint of what the WAL still holds; CPU and
	// bytes written (WAL frames and checkpoints) count that last checkpoint, so that a
	// setting that checkpoints less often does not look cheaper by leaving work undone.
	db := databaseBytes(b, s)
	b.ReportMetric(float64(cpuTime(b)-cpu)/analyses, "cpu_ns/analysis")
	b.ReportMetric(float64(writtenBytes(b)-written)/analyses, "written_B/analysis")
	b.ReportMetric(float64(db)/analyses, "db_B/analysis")
}

// BenchmarkSaveContinuedAnalysesBatch stores the next revision of 48 stored sessions a
// transaction (a continued conversation): revision 1 holds the golden analysis' first
// two turns, revision 2 all three, with turn 1's result changed (the next turn's user
// message changes the previous turn's verdict). Only the second transaction is timed.
func BenchmarkSaveContinuedAnalysesBatch(b *testing.B) {
	golden, s := goldenBenchStore(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // as benchmarkSaveGoldenBatches
	defer cancel()
	const n = 48
	b.ReportAllocs()
	var written int64 // by the timed saves
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		first, next := make([]*evaluation.Analysis, n), make([]*evaluation.Analysis, n)
		for j := range n {
			a := golden[0]
			a.SessionID = fmt.Sprintf("bench-%d-%d", i, j)
			a.AnalysisRevision = 2
			next[j] = &a
			p := a
			p.AnalysisRevision = 1
			p.TurnResults = slices.Clone(a.TurnResults[:2])
			p.TurnResults[1].Confidence /= 2
			first[j] = &p
		}
		require.NoError(b, s.(BatchSaver).SaveAnalyses(ctx, first))
		w := writtenBytes(b)
		b.StartTimer()
		require.NoError(b, s.(BatchSaver).SaveAnalyses(ctx, next))
		written += writtenBytes(b) - w
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/analysis")
	b.ReportMetric(float64(written)/float64(b.N*n), "written_B/analysis")
}

// writtenBytes is the bytes this process has passed to write system calls
// (/proc/self/io wchar; Linux).
func writtenBytes(b *testing.B) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/self/io")
	require.NoError(b, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(b, err)
			return n
		}
	}
	b.Fatal("no wchar in /proc/self/io")
	return 0
}

// cpuTime is the CPU time (user and system) this process has used, in nanoseconds: on
// a shared machine a steadier measure of a benchmark's cost than its wall time
// (getrusage; it counts the GC's background work too).
func cpuTime(b *testing.B) int64 {
	b.Helper()
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// databaseBytes is the size of the SQLite database s after a checkpoint.
func databaseBytes(b *testing.B, s Store) int64 {
	b.Helper()
	db := s.(*sqlStore).db
	_, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	require.NoError(b, err)
	var pages, size int64
	require.NoError(b, db.QueryRow("PRAGMA page_count").Scan(&pages))
	require.NoError(b, db.QueryRow("PRAGMA page_size").Scan(&size))
	return pages * size
}

// BenchmarkGetAnalysis reads a stored golden multi-turn analysis (the query API's
// GET /api/v1/agent_sessions/{id}).
func BenchmarkGetAnalysis(b *testing.B) {
	golden, s := goldenBenchStore(b)
	ctx := context.Background()
	a := golden[0]
	a.AnalysisRevision = 1
	require.NoError(b, s.SaveAnalysis(ctx, &a))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetAnalysis(ctx, a.SessionID); err != nil {
			b.Fatal(err)
		}
	}
}

// goldenBenchStore reads the golden multi-turn analyses and opens an empty SQLite store
// (closed with b).
func goldenBenchStore(b *testing.B) ([]evaluation.Analysis, Store) {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "langgraph_multi_turn.analyses.json"))
	require.NoError(b, err)
	var golden []evaluation.Analysis
	require.NoError(b, json.Unmarshal(raw, &golden))
	s, err := Open(context.Background(), DriverSQLite, filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close() })
	return golden, s
}

// TestValidateDSN: a PostgreSQL DSN is parsed offline as Open's driver parses it; an
// unparseable one is an error that does not echo it (it may hold a password), and
// another driver's DSN is left to Open.
func TestValidateDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://agenteval:secret@db.internal:5432/agenteval?sslmode=disable",
		"host=db user=agenteval password=secret dbname=agenteval",
	} {
		assert.NoError(t, ValidateDSN(DriverPostgres, dsn), dsn)
	}
	for _, dsn := range []string{"not a dsn", "postgres://u:s3cret@db:port/x", "host=db password=s3cret port=notaport"} {
		err := ValidateDSN(DriverPostgres, dsn)
		require.ErrorContains(t, err, "not a PostgreSQL DSN", dsn)
		assert.NotContains(t, err.Error(), "s3cret")
	}
	assert.NoError(t, ValidateDSN(DriverSQLite, "not a dsn"))
}
