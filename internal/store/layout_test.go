// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// jsonOf is the analysis as the query API encodes it.
func jsonOf(t *testing.T, a *evaluation.Analysis) string {
	t.Helper()
	c := *a
	c.StartedAt, c.EndedAt = a.StartedAt.UTC(), a.EndedAt.UTC()
	js, err := json.Marshal(&c)
	require.NoError(t, err)
	return string(js)
}

// queryInt returns the integer that q gives.
func queryInt(t *testing.T, s *sqlStore, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, s.db.QueryRow(s.d.rebind(q), args...).Scan(&n))
	return n
}

// TestSplitLayoutRoundTrip: every golden analysis, and the shapes the split must leave in
// the document (turn results out of turn_index order, an agent id that cleanText changes,
// empty and nil lists and maps), reads back as the same JSON the API served before
// migration 00009, while the document is stored once, without the turn results and
// agent scores that are rows.
func TestSplitLayoutRoundTrip(t *testing.T) {
	cases := map[string]*evaluation.Analysis{}
	goldens := goldenAnalyses(t)
	names := make([]string, 0, len(goldens))
	for name := range goldens {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		a := goldens[name]
		a.SessionID, a.AnalysisRevision = "golden-"+name, i%3
		cases[name] = &a
	}
	unordered := sampleAnalysis("unordered", t0, f64(0.5))
	unordered.TurnResults[0], unordered.TurnResults[1] = unordered.TurnResults[1], unordered.TurnResults[0]
	cases["unordered"] = unordered
	dirty := sampleAnalysis("dirty-agent", t0, f64(0.5), "tri\x00age", "executor")
	cases["dirty-agent"] = dirty
	empty := sampleAnalysis("empty", t0, nil)
	empty.TurnResults, empty.PerAgentScores = []evaluation.TurnResult{}, map[string]evaluation.AgentScores{}
	cases["empty"] = empty
	none := sampleAnalysis("none", t0, nil)
	none.TurnResults, none.PerAgentScores = nil, nil
	cases["none"] = none

	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		for name, a := range cases {
			require.NoError(t, s.SaveAnalysis(ctx, a), name)
		}
		for name, a := range cases {
			got, err := s.GetAnalysis(ctx, a.SessionID)
			require.NoError(t, err, name)
			assert.Equal(t, jsonOf(t, a), jsonOf(t, got), name)

			var doc string
			require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT analysis FROM sessions WHERE session_id = ?"), a.SessionID).Scan(&doc))
			assert.Equal(t, nullDoc, doc, "%s: sessions.analysis holds no copy", name)
			assert.Equal(t, layoutSplit, queryInt(t, s, "SELECT analysis_layout FROM sessions WHERE session_id = ?", a.SessionID), name)
			require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT analysis FROM session_analyses WHERE session_id = ? AND revision = ?"),
				a.SessionID, a.AnalysisRevision).Scan(&doc))
			var stored map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(doc), &stored), name)
			splitTurns := len(a.TurnResults) > 0 && name != "unordered"
			splitAgents := len(a.PerAgentScores) > 0 && name != "dirty-agent"
			assert.Equal(t, splitTurns || a.TurnResults == nil, string(stored["turn_results"]) == "null",
				"%s: turn_results left to rows", name)
			assert.Equal(t, splitAgents || a.PerAgentScores == nil, string(stored["per_agent_scores"]) == "null",
				"%s: per_agent_scores left to rows", name)
			if splitTurns {
				assert.Less(t, len(doc), len(jsonOf(t, a)), name)
			}
		}
	})
}

// saveOldLayout writes a as SaveAnalyses did before migration 00009: the whole document
// in sessions.analysis and in session_analyses, the child rows as now.
func saveOldLayout(t *testing.T, s *sqlStore, a *evaluation.Analysis, stored time.Time) {
	t.Helper()
	ctx := context.Background()
	r, err := s.rows(a, stored)
	require.NoError(t, err)
	whole := jsonOf(t, a)
	row := append([]any(nil), r.session[:len(r.session)-1]...) // no analysis_layout before 00009
	row[11] = whole
	cols := sessionCols[:len(sessionCols)-1]
	require.NoError(t, s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.d.rebind("INSERT INTO sessions ("+strings.Join(cols, ", ")+") VALUES ("+
			placeholders(len(cols))+")"), row...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.d.rebind("INSERT INTO session_analyses (session_id, revision, analysis, stored_at) VALUES (?, ?, ?, ?)"),
			r.id, a.AnalysisRevision, whole, s.d.timeArg(stored)); err != nil {
			return err
		}
		for _, rs := range r.children {
			if err := s.insert(&txStmts{ctx: ctx, tx: tx, s: s}, withoutTurnStage(rs)); err != nil {
				return err
			}
		}
		return nil
	}))
}

// withoutTurnStage returns rs, or, for turn_results, its rows without verdict_stage (its
// last column, migration 00015), as a collector before that migration wrote them.
func withoutTurnStage(rs *rowSet) *rowSet {
	if rs.table != "turn_results" {
		return rs
	}
	w := len(rs.cols)
	out := newRowSet(rs.table, rs.cols[:w-1], len(rs.args)/w)
	for i := 0; i < len(rs.args); i += w {
		out.add(rs.args[i : i+w-1]...)
	}
	return out
}

// atVersion returns a fresh database of b migrated up to version only (a schema of an
// older collector), its dialect, and the driver and DSN that Open takes to migrate it
// the rest of the way.
func atVersion(t *testing.T, b backend, version int64) (db *sql.DB, d *dialect, driver, dsn string) {
	t.Helper()
	driver, dsn = b.newDB(t)
	d, conn := postgresDialect, dsn
	if driver == DriverSQLite {
		var err error
		d = sqliteDialect
		conn, err = sqliteConnString(dsn)
		require.NoError(t, err)
	}
	db, err := sql.Open(d.sqlDriver, conn)
	require.NoError(t, err)
	require.NoError(t, migrateTo(context.Background(), db, d, version))
	return db, d, driver, dsn
}

// reopen opens the store at driver and dsn (migrating it), closed with t.
func reopen(t *testing.T, driver, dsn string) *sqlStore {
	t.Helper()
	st, err := Open(context.Background(), driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, st.Close()) })
	return st.(*sqlStore)
}

// TestOldLayoutAfterMigration: sessions stored by the schema before 00009 (the whole
// document twice) read back unchanged after the migration; a retried save of their
// revision, a newer revision, a stale one and retention work on them as on new rows.
func TestOldLayoutAfterMigration(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		db, d, driver, dsn := atVersion(t, b, 8)
		old := &sqlStore{db: db, d: d}

		golden := goldenAnalyses(t)["langgraph_multi_turn.analyses.json#"]
		r1 := &golden
		r1.SessionID, r1.AnalysisRevision = "old-1", 1
		plain := sampleAnalysis("old-0", t0, f64(0.25)) // revision 0: stored before continuation
		saveOldLayout(t, old, r1, time.Now())
		saveOldLayout(t, old, plain, time.Now())
		require.NoError(t, db.Close())

		s := reopen(t, driver, dsn)
		assert.GreaterOrEqual(t, schemaVersion(t, s), int64(9), "migrated past 00009_analysis_once")
		for _, a := range []*evaluation.Analysis{r1, plain} {
			assert.Equal(t, layoutWhole, queryInt(t, s, "SELECT analysis_layout FROM sessions WHERE session_id = ?", a.SessionID))
			got, err := s.GetAnalysis(ctx, a.SessionID)
			require.NoError(t, err)
			assert.Equal(t, jsonOf(t, a), jsonOf(t, got), "a row of the old layout reads as before")
		}
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		require.Len(t, list, 2)

		// A retried export of the old revision rewrites the row in the new layout.
		require.NoError(t, s.SaveAnalysis(ctx, r1))
		assert.Equal(t, layoutSplit, queryInt(t, s, "SELECT analysis_layout FROM sessions WHERE session_id = ?", "old-1"))
		assert.Equal(t, 1, queryInt(t, s, "SELECT COUNT(*) FROM session_analyses WHERE session_id = ?", "old-1"))
		got, err := s.GetAnalysis(ctx, "old-1")
		require.NoError(t, err)
		assert.Equal(t, jsonOf(t, r1), jsonOf(t, got))

		// A newer revision replaces it; a stale one does not.
		r2 := sampleAnalysis("old-1", t0.Add(time.Hour), f64(0.75))
		r2.AnalysisRevision = 2
		// The same conversation: revision 1's turns (trace and root span) at their indexes
		// (docs/decisions/sessions.md §4.6), their verdicts as far on (a verdict of a
		// lower stage would keep the stored one, §4.5).
		require.Len(t, r1.TurnResults, 3)
		r2.TurnResults = append(r2.TurnResults, r2.TurnResults[1])
		for i := range r2.TurnResults {
			r2.TurnResults[i].TurnIndex, r2.TurnResults[i].TraceID = i, r1.TurnResults[i].TraceID
			r2.TurnResults[i].RootSpanID = r1.TurnResults[i].RootSpanID
			r2.TurnResults[i].Final, r2.TurnResults[i].WithFollowUp = r1.TurnResults[i].Final, r1.TurnResults[i].WithFollowUp
		}
		require.NoError(t, s.SaveAnalysis(ctx, r2))
		require.NoError(t, s.SaveAnalysis(ctx, r1), "stale")
		got, err = s.GetAnalysis(ctx, "old-1")
		require.NoError(t, err)
		assert.Equal(t, jsonOf(t, r2), jsonOf(t, got))
		assert.Equal(t, 2, queryInt(t, s, "SELECT COUNT(*) FROM session_analyses WHERE session_id = ?", "old-1"))

		// Retention deletes both layouts whole.
		n, err := s.DeleteStoredBefore(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		assert.EqualValues(t, 2, n)
		for _, table := range []string{"sessions", "session_analyses", "turn_results", "agent_scores"} {
			assert.Equal(t, 0, count(t, s, table, ""), table)
		}
	})
}

// TestGetAnalysisMissingRevisionDocument: a split row whose revision document is gone
// is an error, not an analysis without its session-level fields.
func TestGetAnalysisMissingRevisionDocument(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		a := sampleAnalysis("gone", t0, f64(0.5))
		a.AnalysisRevision = 1
		require.NoError(t, s.SaveAnalysis(ctx, a))
		_, err := s.db.Exec(s.d.rebind("DELETE FROM session_analyses WHERE session_id = ?"), "gone")
		require.NoError(t, err)
		_, err = s.GetAnalysis(ctx, "gone")
		require.ErrorContains(t, err, "document of revision 1 is missing")
	})
}

// TestTurnsReadInConversationOrder: a turn that closed late has the higher index but
// started first; read back, a session's turns are in the order they started (then by
// index), whichever layout stored them. Without a start on every turn (an earlier
// collector's), they stay in the order stored.
func TestTurnsReadInConversationOrder(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		late := sampleAnalysis("late-turn", t0, f64(0.5))
		late.TurnResults[0].StartedAt = t0.Add(-30 * time.Second)
		late.TurnResults[1].StartedAt = t0.Add(-60 * time.Second) // closed late: index 1, started first
		require.NoError(t, s.SaveAnalysis(ctx, late))
		got, err := s.GetAnalysis(ctx, "late-turn")
		require.NoError(t, err)
		assert.Equal(t, []int{1, 0}, turnIndexes(got.TurnResults))
		assert.True(t, got.TurnResults[0].StartedAt.Equal(t0.Add(-60*time.Second)))

		unknown := sampleAnalysis("start-unknown", t0, f64(0.5))
		unknown.TurnResults[1].StartedAt = t0.Add(-60 * time.Second) // turn 0 has none
		require.NoError(t, s.SaveAnalysis(ctx, unknown))
		got, err = s.GetAnalysis(ctx, "start-unknown")
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1}, turnIndexes(got.TurnResults))
	})
}

func turnIndexes(trs []evaluation.TurnResult) []int {
	out := make([]int, len(trs))
	for i := range trs {
		out[i] = trs[i].TurnIndex
	}
	return out
}

// TestTurnResultStageMigration: turn results stored before migration 00015 get a verdict
// stage from their final flag, a final one the lower final stage (1: without follow-up,
// which its result cannot tell from 2), a provisional one 0, on both dialects, a NUL in
// the result (which PostgreSQL's JSON operators refuse) too. After it, a provisional save
// of the final turn keeps the stored verdict, and a final save of either stage replaces
// it, as before the column.
func TestTurnResultStageMigration(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		db, d, driver, dsn := atVersion(t, b, 14)
		old := &sqlStore{db: db, d: d}
		const id = "stage-migrated"
		a := partAnalysis(id, 1, 0, 1, 2)
		withVerdict(a, 0, false, evaluation.DetectionRDM, "revision 1")
		a.TurnResults[0].UserMessage = "a\x00b"
		a.TurnResults[1].Final = false
		saveOldLayout(t, old, a, time.Now())
		require.NoError(t, db.Close())

		s := reopen(t, driver, dsn)
		assert.GreaterOrEqual(t, schemaVersion(t, s), int64(15), "migrated past 00015_turn_result_stage")
		stageOf := func(idx int) (int, string) {
			var (
				stage int
				typ   string
			)
			require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT verdict_stage, detection_type FROM turn_results WHERE session_id = ? AND turn_index = ?"),
				id, idx).Scan(&stage, &typ))
			return stage, typ
		}
		stage, _ := stageOf(0)
		assert.Equal(t, 1, stage, "a final row: without follow-up")
		stage, _ = stageOf(1)
		assert.Equal(t, 0, stage, "a provisional row")

		prov := partAnalysis(id, 2, 0, 1, 2)
		prov.TurnResults[0].Final, prov.TurnResults[1].Final = false, false
		require.NoError(t, s.SaveAnalysis(ctx, prov))
		stage, typ := stageOf(0)
		assert.Equal(t, 1, stage, "a provisional save keeps the migrated final row")
		assert.Equal(t, evaluation.DetectionRDM, typ)

		final := partAnalysis(id, 3, 0, 1, 2)
		withVerdict(final, 0, false, evaluation.DetectionCCM, "revision 3")
		require.NoError(t, s.SaveAnalysis(ctx, final))
		stage, typ = stageOf(0)
		assert.Equal(t, 1, stage, "a final save replaces it")
		assert.Equal(t, evaluation.DetectionCCM, typ)
		stage, _ = stageOf(1)
		assert.Equal(t, 1, stage)
	})
}

// TestTurnRootSpanMigrationNUL: 00013_turn_root_span gives each stored continuation record
// its root span, also a record whose texts hold a NUL (\u0000 in its JSON), which
// PostgreSQL's JSON operators refuse: the migration failed there, and with it the start
// of a collector upgraded over such a row.
func TestTurnRootSpanMigrationNUL(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		db, d, driver, dsn := atVersion(t, b, 12)
		insert := func(trace, root, message string) {
			t.Helper()
			rec, err := json.Marshal(evaluation.TurnRecord{Result: evaluation.TurnResult{SessionID: "s", TraceID: trace, RootSpanID: root,
				UserMessage: message, Interactions: []evaluation.InteractionResult{{AgentID: "x\x00y"}}}})
			require.NoError(t, err)
			_, err = db.Exec(d.rebind("INSERT INTO turns (session_id, trace_id, turn_index, final, record, updated_at) VALUES (?, ?, ?, ?, ?, ?)"),
				"s", trace, 0, false, string(rec), time.Now())
			require.NoError(t, err)
		}
		insert("t1", "aaaaaaaaaaaaaaaa", "plain")
		insert("t2", "bbbbbbbbbbbbbbbb", "a\x00b \"root_span_id\":\"cccccccccccccccc\"")
		insert("t3", "", "no root span\x00")
		require.NoError(t, db.Close())

		s := reopen(t, driver, dsn)
		rows, err := s.db.Query("SELECT trace_id, root_span_id FROM turns ORDER BY trace_id")
		require.NoError(t, err)
		got := map[string]string{}
		for rows.Next() {
			var trace, root string
			require.NoError(t, rows.Scan(&trace, &root))
			got[trace] = root
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, map[string]string{"t1": "aaaaaaaaaaaaaaaa", "t2": "bbbbbbbbbbbbbbbb", "t3": ""}, got)
		c, err := s.LoadContinuation(context.Background(), "s", nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, 3)
	})
}
