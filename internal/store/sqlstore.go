// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// sqlStore implements Store over database/sql for both dialects; only placeholders and
// timestamp binding differ (dialect). Safe for concurrent use (*sql.DB is a pool).
type sqlStore struct {
	db *sql.DB
	d  *dialect
	// inserts caches insertSQL's statement texts (insertKey to string).
	inserts sync.Map
	// stmts caches the statements prepared on db (query text to *sql.Stmt; stmt).
	stmts sync.Map
	// file is the SQLite file this store shares with the others of the process opened on
	// it (sqliteFile): its writes run on the file's write connection under its lock. nil
	// on PostgreSQL.
	file *sqliteFile
	// closed is set by Close: a SQLite store's file may stay open for the others.
	closed atomic.Bool
}

// write runs fn, a write (one statement in its own transaction, or inTx's), on the
// SQLite file's write connection under its lock (sqliteFile.write), or on PostgreSQL's
// pool.
func (s *sqlStore) write(ctx context.Context, fn func(writeConn) error) error {
	if s.file == nil {
		return fn(s.db)
	}
	if s.closed.Load() { // the file may be open for another store; this one is not
		return errClosed
	}
	return s.file.write(ctx, fn)
}

// errClosed is the error of a write to a SQLite store after its Close.
var errClosed = errors.New("the store is closed")

// execWrite runs query (in ? form), a write of one statement, under the SQLite file's
// write lock (write).
func (s *sqlStore) execWrite(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.write(ctx, func(w writeConn) error {
		var err error
		res, err = w.ExecContext(ctx, s.d.rebind(query), args...)
		return err
	})
	return res, err
}

// stmt returns query (in ? form) prepared on s.db, once per store: database/sql prepares
// it again on each connection that runs it. For the statements run once per turn or per
// session outside a transaction (LoadContinuation), whose parse would cost about as much
// as their run.
func (s *sqlStore) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s.closed.Load() { // a SQLite file's pool may be open for another store
		return nil, errClosed
	}
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, s.d.rebind(query))
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

var (
	_ Store      = (*sqlStore)(nil)
	_ BatchSaver = (*sqlStore)(nil)
)

// Columns of the tables SaveAnalysis writes, in bind order (migrations/*/00001_init.sql).
var (
	sessionCols = []string{
		"session_id", "service", "started_at", "ended_at", "partial", "end_reason",
		"overall_score", "coordination_score", "intent_drift_score", "task_completion",
		"turns", "analysis", "stored_at", "analysis_revision", "analysis_layout",
	}
	agentScoreCols = []string{
		"session_id", "agent_id", "ended_at", "overall", "tool_use", "reasoning", "handoff",
		"response_quality", "interactions_count", "tool_calls", "not_evaluable_calls",
		"mean_latency_ms", "scores",
	}
	turnResultCols = []string{
		"session_id", "turn_index", "trace_id", "root_span_id", "is_bad", "detection_type",
		"confidence", "intent_drift", "latency_ms", "result", "verdict_stage",
	}
	toolIssueCols = []string{
		"session_id", "ordinal", "turn_index", "agent_id", "tool_name", "issue", "severity",
		"parameter", "span_id", "executed", "message",
	}
	recommendationCols = []string{
		"session_id", "rank", "kind", "agent_id", "tool_name", "parameter", "count",
		"message", "impact",
	}
)

// childTables hold rows derived from one session; SaveAnalysis replaces them all.
var childTables = []string{"agent_scores", "turn_results", "tool_issues", "recommendations", "reference_results"}

// upsertSessionSQL inserts a session row or, for a known session id, overwrites every
// column when the analysis revision is not older than the stored one (a continued
// session's new revision replaces the whole; a retried or stale export changes
// nothing). It returns the session id when the row was written. The ON CONFLICT ...
// WHERE ... RETURNING form is valid SQLite (3.35+) and PostgreSQL.
var upsertSessionSQL = func() string {
	set := make([]string, 0, len(sessionCols)-1)
	for _, c := range sessionCols[1:] {
		set = append(set, c+" = excluded."+c)
	}
	return "INSERT INTO sessions (" + strings.Join(sessionCols, ", ") + ") VALUES (" +
		placeholders(len(sessionCols)) + ") ON CONFLICT (session_id) DO UPDATE SET " +
		strings.Join(set, ", ") + " WHERE excluded.analysis_revision >= sessions.analysis_revision RETURNING session_id"
}()

// Layouts of a sessions row's analysis document (sessions.analysis_layout, migration 00009).
const (
	// layoutWhole: sessions.analysis is the whole document (rows stored before 00009).
	layoutWhole = 1
	// layoutSplit: the document is session_analyses.analysis of the row's revision,
	// stored once, with turn_results and per_agent_scores null when they are rows of
	// turn_results and agent_scores; sessions.analysis is JSON null.
	layoutSplit = 2
)

// insertSessionSQL and insertRevisionDocSQL are the first save of a session known to be
// unstored, updateSessionSQL (the columns after session_id, then session_id) the save of
// a stored session whose stored revision is known not to be newer: upsertSessionSQL's
// effect where the transaction's reads are known to stay true (SQLite only: lockedTx).
var (
	insertSessionSQL     = "INSERT INTO sessions (" + strings.Join(sessionCols, ", ") + ") VALUES (" + placeholders(len(sessionCols)) + ")"
	insertRevisionDocSQL = "INSERT INTO session_analyses (session_id, revision, analysis, stored_at) VALUES (?, ?, ?, ?)"
	updateSessionSQL     = "UPDATE sessions SET " + strings.Join(sessionCols[1:], " = ?, ") + " = ? WHERE session_id = ?"
	revisionCol          = slices.Index(sessionCols, "analysis_revision")
	// updateTurnsSQL is a turns part's only write to its stored session's row
	// (saveTurnsPart).
	updateTurnsSQL = "UPDATE sessions SET turns = ? WHERE session_id = ?"
	turnsCol       = slices.Index(sessionCols, "turns")
	// turnRowsTable is turn_results' position in childTables (and its prepared delete's).
	turnRowsTable = slices.Index(childTables, "turn_results")
)

// saveRevisionDocSQL keeps each revision's document once. It runs only after the sessions
// row was written (the revision is the newest stored), so a retried or re-evaluated save
// of that revision replaces its document together with the rows it refers to.
const saveRevisionDocSQL = "INSERT INTO session_analyses (session_id, revision, analysis, stored_at) VALUES (?, ?, ?, ?) " +
	"ON CONFLICT (session_id, revision) DO UPDATE SET analysis = excluded.analysis"

// maxParamsPerStatement bounds the bind parameters of one multi-row INSERT, well under
// SQLite's (32766) and PostgreSQL's (65535) limits.
const maxParamsPerStatement = 4000

// rowSet is the rows of one table, flattened in column order.
type rowSet struct {
	table string
	cols  []string
	args  []any
}

// newRowSet returns the rowSet of table with room for n rows.
func newRowSet(table string, cols []string, n int) *rowSet {
	return &rowSet{table: table, cols: cols, args: make([]any, 0, n*len(cols))}
}

func (r *rowSet) add(vals ...any) { r.args = append(r.args, vals...) }

// SaveAnalysis is SaveAnalyses of one analysis.
func (s *sqlStore) SaveAnalysis(ctx context.Context, a *evaluation.Analysis) error {
	return s.SaveAnalyses(ctx, []*evaluation.Analysis{a})
}

// SaveAnalyses stores the analyses in one transaction with prepared statements. Per
// analysis: the sessions row is upserted unless a newer revision is stored, and then
// the revision's document is kept in session_analyses (once per revision) and the child
// rows (agent_scores, turn_results, tool_issues, recommendations, reference_results)
// are deleted and inserted again. So a retried batch writes nothing twice and an older
// revision never replaces a newer one. The document leaves out the turn results and
// per-agent scores that are rows of their own (layoutSplit; GetAnalysis puts them
// back). On SQLite, whose write transaction holds the lock from BEGIN, the same effect
// is had with cheaper statements: a session not stored yet is inserted without
// placement query or deletes, a stored one updated with the revision the placement
// query read (docs/decisions/store.md "Writes"). Times are stored in UTC. Errors: a nil
// analysis, an empty session_id, a value JSON cannot encode (NaN score), a duplicate
// turn_index or agent id, a revision or turn index beyond 32 bits (these, and the
// database's refusals of a value, are ErrRejected: the batch cannot succeed as it is),
// ctx's error once it has ended, or the database's; on error nothing of the batch is
// stored, but for one case: on PostgreSQL a ctx that ends during the COMMIT leaves its
// outcome to the server, and the batch may then be stored whole (never in part; a retry
// writes each analysis and revision once). On SQLite ctx is checked between statements,
// and a statement already running is not interrupted (none of them waits for a lock);
// on PostgreSQL it also ends a running statement.
func (s *sqlStore) SaveAnalyses(ctx context.Context, as []*evaluation.Analysis) error {
	now := time.Now()
	batch := make([]*analysisRows, 0, len(as))
	for i, a := range as {
		if a == nil {
			return rejectedError{fmt.Errorf("store: %s: save: nil analysis", s.d.name)}
		}
		if a.SessionID == "" {
			return rejectedError{fmt.Errorf("store: %s: save: empty session_id", s.d.name)}
		}
		if err := checkAnalysisInts(a); err != nil {
			return rejectedError{fmt.Errorf("store: %s: save %q: %w", s.d.name, a.SessionID, err)}
		}
		// stored_at orders the list: the analyses of one batch one microsecond apart
		// (PostgreSQL's resolution), in the order saved.
		r, err := s.rows(a, now.Add(time.Duration(i)*time.Microsecond))
		if err != nil { // a value JSON cannot encode
			return rejectedError{fmt.Errorf("store: %s: save %q: %w", s.d.name, a.SessionID, err)}
		}
		batch = append(batch, r)
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		upsert, err := tx.PrepareContext(ctx, s.d.rebind(upsertSessionSQL))
		if err != nil {
			return fmt.Errorf("prepare upsert sessions: %w", err)
		}
		defer upsert.Close()
		revision, err := tx.PrepareContext(ctx, s.d.rebind(saveRevisionDocSQL))
		if err != nil {
			return fmt.Errorf("prepare upsert session_analyses: %w", err)
		}
		defer revision.Close()
		parts, err := tx.PrepareContext(ctx, s.d.rebind(selectPartSQL))
		if err != nil {
			return fmt.Errorf("prepare select part: %w", err)
		}
		defer parts.Close()
		deletes := make([]*sql.Stmt, len(childTables))
		for i, t := range childTables {
			if deletes[i], err = tx.PrepareContext(ctx, s.d.rebind(deleteChildSQL(t))); err != nil {
				return fmt.Errorf("prepare delete %s: %w", t, err)
			}
			defer deletes[i].Close()
		}
		// The statements run for each analysis (the inserts of its sessions row and child
		// rows): on SQLite each distinct one is compiled once a transaction (txStmts).
		stmts := &txStmts{ctx: ctx, tx: tx, s: s, text: !s.d.lockedTx}
		defer stmts.close()
		// On SQLite the transaction holds the write lock from BEGIN, so a session found
		// unstored here stays so until its first save below: that save needs no
		// placement query and no deletes (it has no rows to replace).
		var unstored map[string]bool
		if s.d.lockedTx {
			if unstored, err = unstoredSessions(ctx, tx, s.d, batch); err != nil {
				return err
			}
		} else if err := lockParts(ctx, tx, batch); err != nil { // placePart reads, then writes
			return err
		}
		for _, p := range batch {
			// The context of this analysis' statements, checked before each (txStmts.run).
			sctx, cerr := stmts.run()
			if cerr != nil {
				return cerr
			}
			var pl part
			fresh := unstored[p.id]
			if fresh {
				delete(unstored, p.id) // a later save of it in this batch finds this one
				pl = part{}.place(p.a.TurnResults, nil, p.a.TurnsPart)
			} else if pl, err = placePart(sctx, parts, p.id, p.a); err != nil {
				return err
			}
			if pl.stale {
				continue // an earlier part of the session
			}
			if len(pl.moves) > 0 { // read before the deletes below
				if pl.movedTurns, err = s.readTurns(sctx, tx, p.id, pl.moves); err != nil {
					return err
				}
			}
			if len(pl.further) > 0 {
				if pl.furtherTurns, err = s.readTurns(sctx, tx, p.id, pl.further); err != nil {
					return err
				}
			}
			if p, err = s.placed(p, pl); err != nil {
				return fmt.Errorf("%q: %w", p.a.SessionID, err)
			}
			if p.a.TurnsPart && pl.found {
				if err := s.saveTurnsPart(sctx, stmts, deletes, p, pl); err != nil {
					return err
				}
				if p.session[revisionCol].(int) >= pl.storedRevision { // written
					if err := s.markNumbered(sctx, tx, p, pl); err != nil {
						return err
					}
				}
				continue
			}
			if fresh { // plain INSERTs: SQLite compiles them in about half the time of the upserts
				if err := stmts.exec(insertSessionSQL, nil, p.session...); err != nil {
					return fmt.Errorf("insert sessions %q: %w", p.a.SessionID, err)
				}
				if err := stmts.exec(insertRevisionDocSQL, nil, p.id, p.a.AnalysisRevision, p.doc, s.d.timeArg(now)); err != nil {
					return fmt.Errorf("insert session_analyses %q: %w", p.a.SessionID, err)
				}
			} else if s.d.lockedTx && pl.found { // the placement read the stored revision
				if p.session[revisionCol].(int) < pl.storedRevision {
					continue // a newer revision is stored
				}
				if err := stmts.exec(updateSessionSQL, nil, append(p.session[1:len(p.session):len(p.session)], p.id)...); err != nil {
					return fmt.Errorf("update sessions %q: %w", p.a.SessionID, err)
				}
				if _, err := revision.ExecContext(sctx, p.id, p.a.AnalysisRevision, p.doc, s.d.timeArg(now)); err != nil {
					return fmt.Errorf("upsert session_analyses %q: %w", p.a.SessionID, err)
				}
			} else {
				var got string
				switch err := upsert.QueryRowContext(sctx, p.session...).Scan(&got); {
				case errors.Is(err, sql.ErrNoRows):
					continue // a newer revision is stored
				case err != nil:
					return fmt.Errorf("upsert sessions %q: %w", p.a.SessionID, err)
				}
				if _, err := revision.ExecContext(sctx, p.id, p.a.AnalysisRevision, p.doc, s.d.timeArg(now)); err != nil {
					return fmt.Errorf("upsert session_analyses %q: %w", p.a.SessionID, err)
				}
			}
			if !fresh {
				if err := deleteChildren(sctx, deletes, p, pl); err != nil {
					return err
				}
			}
			if pl.moved {
				if _, err := tx.ExecContext(sctx, s.d.rebind(movePartSQL), pl.turnOffset, pl.revisionOffset, p.id); err != nil {
					return fmt.Errorf("move part %q: %w", p.a.SessionID, err)
				}
			}
			if err := s.markNumbered(sctx, tx, p, pl); err != nil {
				return err
			}
			for _, rs := range p.children {
				if err := s.insert(stmts, rs); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return rejected(fmt.Errorf("store: %s: save %d analyses: %w", s.d.name, len(as), err))
	}
	return nil
}

// saveTurnsPart saves a turns part (Analysis.TurnsPart) of a stored session: its turn rows
// over its range and the session's turn count, nothing else. The sessions row, the
// revision's document and the session-level rows are its session span's, which carries the
// same values: a part never writes them over a stored session's (a part of an analysis
// given the stored revision by another collector, docs/decisions/sessions.md §4.8, would
// otherwise replace its scores). A part of an older revision than the stored one writes
// nothing. A part that finds no stored session is saved whole, like its session span.
func (s *sqlStore) saveTurnsPart(ctx context.Context, stmts *txStmts, deletes []*sql.Stmt, p *analysisRows, pl part) error {
	if p.session[revisionCol].(int) < pl.storedRevision {
		return nil
	}
	if err := deleteTurnRows(ctx, deletes[turnRowsTable], p, pl); err != nil {
		return err
	}
	for _, rs := range p.children {
		if rs.table == "turn_results" {
			if err := s.insert(stmts, rs); err != nil {
				return err
			}
		}
	}
	if err := stmts.exec(updateTurnsSQL, nil, p.session[turnsCol], p.id); err != nil {
		return fmt.Errorf("update sessions %q: %w", p.a.SessionID, err)
	}
	return nil
}

// markNumbered writes the numbered_here mark of p's session when its save, placed by pl,
// changes it (part.numberedAfter): one statement for a save whose indexes its collector
// guessed, or the first one with the continuation store's indexes after it; none for the
// others.
func (s *sqlStore) markNumbered(ctx context.Context, tx *sql.Tx, p *analysisRows, pl part) error {
	mark, changed := pl.numberedAfter(p.a)
	if !changed {
		return nil
	}
	if _, err := tx.ExecContext(ctx, s.d.rebind(markNumberedSQL), mark, p.id); err != nil {
		return fmt.Errorf("mark numbered_here %q: %w", p.a.SessionID, err)
	}
	return nil
}

// deleteChildren deletes the child rows of p's session that its save replaces (deletes
// are deleteChildSQL of childTables, prepared). An analysis without a case result keeps
// the stored one: the dataset case was matched on the session's first part, and its
// continuation does not match it again (docs/decisions/store.md "Writes").
func deleteChildren(ctx context.Context, deletes []*sql.Stmt, p *analysisRows, pl part) error {
	for i, st := range deletes {
		args := []any{p.id}
		switch childTables[i] {
		case "turn_results":
			if err := deleteTurnRows(ctx, st, p, pl); err != nil {
				return err
			}
			continue
		case "reference_results":
			if !p.hasCaseResult() {
				continue
			}
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("delete %s %q: %w", childTables[i], p.a.SessionID, err)
		}
	}
	return nil
}

// deleteTurnRows deletes the turn rows of p's session that its save replaces (del is
// deleteChildSQL's of turn_results): from its first turn index to its last replaced one,
// but the stored turns it lacks in between (part.gaps); the turns outside are kept.
func deleteTurnRows(ctx context.Context, del *sql.Stmt, p *analysisRows, pl part) error {
	for _, r := range pl.deleted() {
		if _, err := del.ExecContext(ctx, p.id, r[0], r[1]); err != nil {
			return fmt.Errorf("delete turn_results %q: %w", p.a.SessionID, err)
		}
	}
	return nil
}

// hasCaseResult reports whether p holds a reference_results row (referenceRows).
func (p *analysisRows) hasCaseResult() bool {
	for _, rs := range p.children {
		if rs.table == "reference_results" {
			return len(rs.args) > 0
		}
	}
	return false
}

// unstoredSessions returns the session ids of batch that have no sessions row, read
// with one query per maxParamsPerStatement ids.
func unstoredSessions(ctx context.Context, tx *sql.Tx, d *dialect, batch []*analysisRows) (map[string]bool, error) {
	out := make(map[string]bool, len(batch))
	ids := make([]any, 0, len(batch))
	for _, p := range batch {
		if !out[p.id] {
			out[p.id] = true
			ids = append(ids, p.id)
		}
	}
	for start := 0; start < len(ids); start += maxParamsPerStatement {
		chunk := ids[start:min(start+maxParamsPerStatement, len(ids))]
		err := scanEach(ctx, tx, d.rebind("SELECT session_id FROM sessions WHERE session_id IN ("+placeholders(len(chunk))+")"), chunk,
			func(id string) { delete(out, id) })
		if err != nil {
			return nil, fmt.Errorf("read stored sessions: %w", err)
		}
	}
	return out, nil
}

// scanEach runs query (one text column) with args and calls fn on each row's value.
func scanEach(ctx context.Context, tx *sql.Tx, query string, args []any, fn func(string)) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			_ = rows.Close()
			return err
		}
		fn(v)
	}
	return closeRows(rows)
}

// analysisRows is one analysis encoded for SaveAnalyses.
type analysisRows struct {
	a        *evaluation.Analysis
	id       string // the session id as stored (cleanText)
	session  []any  // the sessions row, in sessionCols order
	doc      string // session_analyses.analysis
	children []*rowSet
}

// nullDoc is sessions.analysis of a layoutSplit row (the column is NOT NULL JSON).
const nullDoc = "null"

// rows encodes a into its rows and its document, before any database work, so that the
// transaction is short. Each turn result and agent's scores is encoded once, for its row;
// the document has them only when a row cannot give them back as they were: turn results
// not in strictly ascending turn_index order, or an agent id that cleanText changes.
func (s *sqlStore) rows(a *evaluation.Analysis, now time.Time) (*analysisRows, error) {
	c := *a
	c.StartedAt, c.EndedAt = a.StartedAt.UTC(), a.EndedAt.UTC()
	id := cleanText(a.SessionID)
	var idArg any = id // boxed once for all the rows of a
	ended := s.d.timeArg(c.EndedAt)

	// The JSON of the agents' scores, the turn results and the document is encoded into
	// one pooled buffer and copied out once (docEncoder).
	enc := getDocEncoder()
	defer putDocEncoder(enc)
	agentIDs := a.Agents()
	splitAgents := len(a.PerAgentScores) > 0
	for _, agent := range agentIDs {
		if err := enc.encode(a.PerAgentScores[agent]); err != nil {
			return nil, fmt.Errorf("encode per_agent_scores[%q]: %w", agent, err)
		}
		splitAgents = splitAgents && nameKey(agent) == agent
	}
	splitTurns := len(a.TurnResults) > 0
	for i := range a.TurnResults {
		tr := &a.TurnResults[i]
		if err := enc.encode(tr); err != nil {
			return nil, fmt.Errorf("encode turn_results[%d]: %w", i, err)
		}
		splitTurns = splitTurns && (i == 0 || a.TurnResults[i-1].TurnIndex < tr.TurnIndex)
	}
	if splitAgents {
		c.PerAgentScores = nil
	}
	if splitTurns {
		c.TurnResults = nil
	}
	if err := enc.encode(&c); err != nil {
		return nil, fmt.Errorf("encode analysis: %w", err)
	}
	docs := enc.docs()

	agents := newRowSet("agent_scores", agentScoreCols, len(agentIDs))
	for i, agent := range agentIDs {
		sc := a.PerAgentScores[agent]
		agents.add(idArg, nameKey(agent), ended, sc.Overall, sc.ToolUse, sc.Reasoning, sc.Handoff,
			sc.ResponseQuality, sc.InteractionsCount, sc.ToolCalls, sc.NotEvaluableCalls,
			sc.MeanLatencyMs, docs[i])
	}
	docs = docs[len(agentIDs):]
	turns := newRowSet("turn_results", turnResultCols, len(a.TurnResults))
	for i := range a.TurnResults {
		tr := &a.TurnResults[i]
		turns.add(idArg, tr.TurnIndex, cleanText(tr.TraceID), cleanText(tr.RootSpanID), tr.IsBad,
			cleanText(tr.DetectionType), tr.Confidence, tr.IntentDrift, tr.LatencyMs, docs[i], tr.VerdictStage())
	}
	doc := docs[len(a.TurnResults)]
	issues := newRowSet("tool_issues", toolIssueCols, len(a.ToolIssues))
	for i, is := range a.ToolIssues {
		issues.add(idArg, i, is.TurnIndex, nameKey(is.AgentID), nameKey(is.ToolName),
			cleanText(string(is.Issue)), cleanText(string(is.Severity)), cleanText(is.Parameter),
			cleanText(is.SpanID), is.Executed, cleanText(is.Message))
	}
	recs := newRowSet("recommendations", recommendationCols, len(a.Recommendations))
	for i, r := range a.Recommendations {
		recs.add(idArg, i+1, cleanText(r.Kind), nameKey(r.AgentID), nameKey(r.ToolName),
			cleanText(r.Parameter), r.Count, cleanText(r.Message), r.Impact)
	}
	refs, err := referenceRows(a, id)
	if err != nil {
		return nil, err
	}
	session := []any{
		idArg, cleanText(a.Service), s.d.timeArg(c.StartedAt), ended, a.Partial, cleanText(a.EndReason),
		a.OverallScore, a.CoordinationScore, a.IntentDriftScore, a.TaskCompletion,
		len(a.TurnResults), nullDoc, s.d.timeArg(now), a.AnalysisRevision, layoutSplit,
	}
	return &analysisRows{a: a, id: id, session: session, doc: doc,
		children: []*rowSet{agents, turns, issues, recs, refs}}, nil
}

// docEncoder encodes JSON documents one after another into one buffer; docs returns
// them as strings of one copy of the buffer. Each document is what json.Marshal gives
// (json.Encoder's output without its newline).
type docEncoder struct {
	buf  bytes.Buffer
	enc  *json.Encoder
	ends []int
}

var docEncoders = sync.Pool{New: func() any {
	e := &docEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

func getDocEncoder() *docEncoder { return docEncoders.Get().(*docEncoder) }

// putDocEncoder returns e to the pool; a buffer grown past 4 MiB (an outsized analysis)
// is dropped rather than kept alive.
func putDocEncoder(e *docEncoder) {
	if e.buf.Cap() > 4<<20 {
		return
	}
	e.buf.Reset()
	e.ends = e.ends[:0]
	docEncoders.Put(e)
}

// encode appends v's JSON; on error the buffer is left as it was.
func (e *docEncoder) encode(v any) error {
	start := e.buf.Len()
	if err := e.enc.Encode(v); err != nil {
		e.buf.Truncate(start)
		return err
	}
	e.buf.Truncate(e.buf.Len() - 1) // Encode's newline
	e.ends = append(e.ends, e.buf.Len())
	return nil
}

// docs returns the documents encoded so far, in order, sharing one string.
func (e *docEncoder) docs() []string {
	all := e.buf.String()
	out := make([]string, len(e.ends))
	start := 0
	for i, end := range e.ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

// insert writes rs with multi-row INSERTs of at most maxParamsPerStatement parameters,
// or one row a statement where the dialect says so (dialect.oneRowInserts).
func (s *sqlStore) insert(stmts *txStmts, rs *rowSet) error {
	width := len(rs.cols)
	perStmt := maxParamsPerStatement / width
	if s.d.oneRowInserts {
		perStmt = 1
	}
	for start := 0; start < len(rs.args); start += perStmt * width {
		end := min(start+perStmt*width, len(rs.args))
		if err := stmts.exec(s.insertSQL(rs, (end-start)/width), nil, rs.args[start:end]...); err != nil {
			return fmt.Errorf("insert %s: %w", rs.table, err)
		}
	}
	return nil
}

// insertKey names the text of an INSERT of n rows into table.
type insertKey struct {
	table string
	n     int
}

// maxCachedInsertRows bounds the row count of the INSERT texts insertSQL keeps (at most
// this many texts a table, some 300 KB in all).
const maxCachedInsertRows = 64

// insertSQL returns the INSERT of n rows of rs's table, rebound for the dialect; the
// texts of up to maxCachedInsertRows rows are built once per table and row count.
func (s *sqlStore) insertSQL(rs *rowSet, n int) string {
	key := insertKey{rs.table, n}
	if q, ok := s.inserts.Load(key); ok {
		return q.(string)
	}
	row := "(" + placeholders(len(rs.cols)) + ")"
	var q strings.Builder
	q.WriteString("INSERT INTO " + rs.table + " (" + strings.Join(rs.cols, ", ") + ") VALUES ")
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(row)
	}
	text := s.d.rebind(q.String())
	if n <= maxCachedInsertRows {
		s.inserts.Store(key, text)
	}
	return text
}

// getAnalysisSQL reads a session's document: sessions.analysis (layoutWhole) or its
// revision's session_analyses.analysis (layoutSplit; NULL if that row is missing).
const getAnalysisSQL = "SELECT s.analysis_layout, s.analysis_revision, " +
	"CASE WHEN s.analysis_layout = 1 THEN s.analysis ELSE a.analysis END " +
	"FROM sessions s LEFT JOIN session_analyses a ON a.session_id = s.session_id AND a.revision = s.analysis_revision " +
	"WHERE s.session_id = ?"

// GetAnalysis returns the stored analysis JSON decoded, with the turn results and
// per-agent scores of a layoutSplit document put back from their rows, the turn results
// in conversation order (evaluation.ConversationOrder: by start, then turn_index; a
// turn that closed late has a higher index than the turn after it), all read in one
// snapshot (a read-only, repeatable-read transaction);
// times are in UTC (with the nanoseconds that were saved), References is the generic
// JSON value (map[string]any...). An unknown id gives an error that wraps ErrNotFound.
func (s *sqlStore) GetAnalysis(ctx context.Context, sessionID string) (*evaluation.Analysis, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return nil, fmt.Errorf("store: %s: get %q: begin: %w", s.d.name, sessionID, err)
	}
	defer func() { _ = tx.Rollback() }()
	id := cleanText(sessionID)
	var (
		layout, revision int
		doc              sql.NullString
	)
	err = tx.QueryRowContext(ctx, s.d.rebind(getAnalysisSQL), id).Scan(&layout, &revision, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, sessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s: get %q: %w", s.d.name, sessionID, err)
	}
	if !doc.Valid {
		return nil, fmt.Errorf("store: %s: get %q: the document of revision %d is missing", s.d.name, sessionID, revision)
	}
	var a evaluation.Analysis
	if err := json.Unmarshal([]byte(doc.String), &a); err != nil {
		return nil, fmt.Errorf("store: %s: get %q: decode analysis: %w", s.d.name, sessionID, err)
	}
	if layout == layoutSplit {
		if err := s.readSplit(ctx, tx, id, &a); err != nil {
			return nil, fmt.Errorf("store: %s: get %q: %w", s.d.name, sessionID, err)
		}
	}
	evaluation.ConversationOrder(a.TurnResults)
	if a.References == nil {
		if err := readCaseResult(ctx, tx, s.d.rebind("SELECT result FROM reference_results WHERE session_id = ?"), id, &a); err != nil {
			return nil, fmt.Errorf("store: %s: get %q: case result: %w", s.d.name, sessionID, err)
		}
	}
	return &a, nil
}

// readCaseResult puts the session's stored case result (its reference_results row) into
// a document without references: a continued session's later revision, analysed without
// matching the dataset case again (the case is matched once, on the session's first
// part), shows the result of the part it was matched on (docs/decisions/store.md, "A case
// result outlives a revision without one"). No row leaves References nil.
func readCaseResult(ctx context.Context, tx *sql.Tx, query, id string, a *evaluation.Analysis) error {
	var doc string
	switch err := tx.QueryRowContext(ctx, query, id).Scan(&doc); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return json.Unmarshal([]byte(doc), &a.References)
}

// readSplit puts back into a the parts its layoutSplit document left to rows: turn
// results (by turn_index) when its turn_results is null, per-agent scores when its
// per_agent_scores is null. No rows leave the field nil, as it was saved.
func (s *sqlStore) readSplit(ctx context.Context, tx *sql.Tx, id string, a *evaluation.Analysis) error {
	if a.TurnResults == nil {
		err := scanDocs(ctx, tx, s.d.rebind("SELECT trace_id, result FROM turn_results WHERE session_id = ? ORDER BY turn_index"), id,
			func(_ string, doc []byte) error {
				a.TurnResults = append(a.TurnResults, evaluation.TurnResult{})
				return json.Unmarshal(doc, &a.TurnResults[len(a.TurnResults)-1])
			})
		if err != nil {
			return fmt.Errorf("turn results: %w", err)
		}
	}
	if a.PerAgentScores == nil {
		err := scanDocs(ctx, tx, s.d.rebind("SELECT agent_id, scores FROM agent_scores WHERE session_id = ?"), id,
			func(agent string, doc []byte) error {
				var sc evaluation.AgentScores
				if err := json.Unmarshal(doc, &sc); err != nil {
					return err
				}
				if a.PerAgentScores == nil {
					a.PerAgentScores = map[string]evaluation.AgentScores{}
				}
				a.PerAgentScores[agent] = sc
				return nil
			})
		if err != nil {
			return fmt.Errorf("agent scores: %w", err)
		}
	}
	return nil
}

// scanDocs runs query (a key and a JSON document per row) with arg and calls fn on
// each row in order.
func scanDocs(ctx context.Context, tx *sql.Tx, query string, arg any, fn func(key string, doc []byte) error) error {
	rows, err := tx.QueryContext(ctx, query, arg)
	if err != nil {
		return err
	}
	for rows.Next() {
		var (
			key string
			doc []byte
		)
		if err := rows.Scan(&key, &doc); err != nil {
			_ = rows.Close()
			return err
		}
		if err := fn(key, doc); err != nil {
			_ = rows.Close()
			return err
		}
	}
	return closeRows(rows)
}

// ListSessions returns the summaries matching f (see Filter), newest first by stored_at
// (ties by session_id, descending). Agents are sorted; Turns is the number of turn
// results. Timestamps are UTC, with nanoseconds on SQLite and microseconds on
// PostgreSQL (its timestamptz resolution).
func (s *sqlStore) ListSessions(ctx context.Context, f Filter) ([]SessionSummary, error) {
	var (
		where []string
		args  []any
	)
	if !f.Since.IsZero() {
		where = append(where, "s.ended_at >= ?")
		args = append(args, s.d.timeArg(f.Since))
	}
	if f.Agent != "" {
		where = append(where, "EXISTS (SELECT 1 FROM agent_scores a WHERE a.session_id = s.session_id AND a.agent_id = ?)")
		args = append(args, nameKey(f.Agent))
	}
	if f.MinScore != nil {
		where = append(where, "s.overall_score >= ?") // NULL compares to unknown: left out
		args = append(args, *f.MinScore)
	}
	if f.MaxScore != nil {
		where = append(where, "s.overall_score <= ?")
		args = append(args, *f.MaxScore)
	}
	if f.Partial != nil {
		where = append(where, "s.partial = ?")
		args = append(args, *f.Partial)
	}
	if f.TaskCompletion != nil {
		where = append(where, "s.task_completion = ?") // NULL: left out
		args = append(args, *f.TaskCompletion)
	}
	if f.After != nil {
		stored := s.d.timeArg(f.After.StoredAt)
		where = append(where, "(s.stored_at < ? OR (s.stored_at = ? AND s.session_id < ?))")
		args = append(args, stored, stored, cleanText(f.After.SessionID))
	}
	q := "SELECT s.session_id, s.started_at, s.ended_at, s.partial, s.overall_score, s.task_completion, s.turns, s.stored_at FROM sessions s"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY s.stored_at DESC, s.session_id DESC LIMIT ?"
	args = append(args, clampLimit(f.Limit))

	rows, err := s.db.QueryContext(ctx, s.d.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: list sessions: %w", s.d.name, err)
	}
	out := []SessionSummary{}
	byID := map[string]int{}
	for rows.Next() {
		var (
			sum     SessionSummary
			overall sql.Null[float64]
			done    sql.Null[bool]
		)
		if err := rows.Scan(&sum.SessionID, timeDest{&sum.StartedAt}, timeDest{&sum.EndedAt}, &sum.Partial,
			&overall, &done, &sum.Turns, timeDest{&sum.StoredAt}); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: list sessions: %w", s.d.name, err)
		}
		sum.OverallScore, sum.TaskCompletion = nullPtr(overall), nullPtr(done)
		sum.Agents = []string{}
		byID[sum.SessionID] = len(out)
		out = append(out, sum)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("store: %s: list sessions: %w", s.d.name, err)
	}
	if len(out) == 0 {
		return out, nil
	}

	ids := make([]any, 0, len(out))
	for _, sum := range out {
		ids = append(ids, sum.SessionID)
	}
	rows, err = s.db.QueryContext(ctx, s.d.rebind("SELECT session_id, agent_id FROM agent_scores WHERE session_id IN ("+
		placeholders(len(ids))+")"), ids...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: list session agents: %w", s.d.name, err)
	}
	for rows.Next() {
		var id, agent string
		if err := rows.Scan(&id, &agent); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: list session agents: %w", s.d.name, err)
		}
		if i, ok := byID[id]; ok {
			out[i].Agents = append(out[i].Agents, agent)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("store: %s: list session agents: %w", s.d.name, err)
	}
	for i := range out {
		sort.Strings(out[i].Agents) // Go order, not the database collation's
	}
	return out, nil
}

// AgentScoreHistory returns the agent's per_agent_scores entries, newest session first
// (by ended_at, ties by session_id descending), at most limit (clamped like
// Filter.Limit). An agent never seen gives an empty slice.
func (s *sqlStore) AgentScoreHistory(ctx context.Context, agentID string, limit int) ([]AgentScorePoint, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(
		"SELECT session_id, ended_at, scores FROM agent_scores WHERE agent_id = ? ORDER BY ended_at DESC, session_id DESC LIMIT ?"),
		nameKey(agentID), clampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("store: %s: agent score history: %w", s.d.name, err)
	}
	out := []AgentScorePoint{}
	for rows.Next() {
		var (
			p   AgentScorePoint
			doc string
		)
		if err := rows.Scan(&p.SessionID, timeDest{&p.EndedAt}, &doc); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: agent score history: %w", s.d.name, err)
		}
		if err := json.Unmarshal([]byte(doc), &p.Scores); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: agent score history: decode scores of %q: %w", s.d.name, p.SessionID, err)
		}
		out = append(out, p)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("store: %s: agent score history: %w", s.d.name, err)
	}
	return out, nil
}

// DeleteStoredBefore deletes the sessions stored before t (stored_at < t: the
// collector's clock, not the span times, which a client controls) and, by ON DELETE CASCADE,
// their agent scores, turn results, tool issues, recommendations and revisions, and the
// continuation state (turns, turn_indexes, session_revisions, open_sessions) last written before t: such a session
// that comes back is evaluated as a new one. It returns the number of sessions deleted.
// The SafeMolt tables are not touched.
func (s *sqlStore) DeleteStoredBefore(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.d.rebind("DELETE FROM sessions WHERE stored_at < ?"), s.d.timeArg(t))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		for _, table := range []string{"turns", "turn_indexes", "session_revisions", "judge_verdicts", "open_sessions"} {
			if _, err := tx.ExecContext(ctx, s.d.rebind("DELETE FROM "+table+" WHERE updated_at < ?"), s.d.timeArg(t)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: %s: delete ended before %s: %w", s.d.name, t.UTC().Format(time.RFC3339), err)
	}
	return n, nil
}

// Close closes the store's prepared statements and its connection pool; on SQLite, the
// file's pool and write connection once the file's last store closes
// (sqliteFile.release). A second Close does nothing.
func (s *sqlStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stmts.Range(func(q, st any) bool {
		_ = st.(*sql.Stmt).Close()
		s.stmts.Delete(q)
		return true
	})
	release := s.db.Close
	if s.file != nil {
		release = s.file.release
	}
	if err := release(); err != nil {
		return fmt.Errorf("store: %s: close: %w", s.d.name, err)
	}
	return nil
}

// inTx runs fn in a write transaction, committed when fn returns nil (on SQLite under
// the file's in-process write lock: fn must not start another write of the file).
func (s *sqlStore) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.write(ctx, func(w writeConn) error {
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback()
			return withCtxErr(ctx, err)
		}
		if err := tx.Commit(); err != nil {
			return withCtxErr(ctx, fmt.Errorf("commit: %w", err))
		}
		return nil
	})
}

// withCtxErr adds ctx's error to err once ctx has ended: database/sql then closes the
// transaction under a running save, whose next statement fails with "sql: statement is
// closed" or ErrTxDone rather than the context's error, and callers tell a save ended
// by its deadline from a database error with errors.Is(err, context.DeadlineExceeded).
func withCtxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%w)", err, cerr)
	}
	return err
}

// execEach runs exec(st, i) for i in [0, n) in one transaction, st being query
// (written with '?' placeholders) prepared once; the first error rolls back and is returned.
func (s *sqlStore) execEach(ctx context.Context, query string, n int, exec func(st *sql.Stmt, i int) error) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, s.d.rebind(query))
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer st.Close()
		for i := 0; i < n; i++ {
			if err := exec(st, i); err != nil {
				return err
			}
		}
		return nil
	})
}

// timeDest scans a timestamp column: time.Time (PostgreSQL) or sqliteTimeLayout text
// (SQLite), into UTC.
type timeDest struct{ t *time.Time }

func (d timeDest) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*d.t = v.UTC()
		return nil
	case string:
		return d.parse(v)
	case []byte:
		return d.parse(string(v))
	default:
		return fmt.Errorf("timestamp: unsupported type %T", src)
	}
}

func (d timeDest) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	*d.t = t.UTC()
	return nil
}

// clampLimit applies DefaultLimit and MaxLimit.
func clampLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	default:
		return n
	}
}

// placeholders returns n comma-separated ? placeholders.
func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// nullPtr converts a nullable column value to a pointer (nil for NULL).
func nullPtr[T any](n sql.Null[T]) *T {
	if !n.Valid {
		return nil
	}
	v := n.V
	return &v
}

// closeRows closes rows and returns the iteration error, if any.
func closeRows(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return err
	}
	return rows.Close()
}

// maxNameBytes bounds an agent or tool name in the columns that key or index it
// (agent_scores, tool_issues, recommendations, judge_verdicts). PostgreSQL refuses a
// B-tree entry over 2704 bytes, and the session id (at most 1024 bytes,
// conventions.MaxSessionIDBytes) shares the key; names are free text up to the
// processor's max_text_bytes (4 KiB by default).
const maxNameBytes = 512

// nameKey is how an agent or tool name is stored in a column that keys or indexes it, the
// same on both dialects, so that every name is storable and two names never become one
// key: a name longer than maxNameBytes, or one that cleanText would change (NUL, invalid
// UTF-8: "a\x00b" would become "ab"), is stored as its cleaned prefix, "~" and the first
// 16 hex digits of the SHA-256 of its bytes, at most maxNameBytes in all. Any other name
// is stored as it is. The analysis document keeps the name (docs/decisions/store.md).
func nameKey(s string) string {
	if len(s) <= maxNameBytes && utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	const suffix = 1 + 16
	return text.Cut(cleanText(s), maxNameBytes-suffix) + "~" + hex.EncodeToString(sum[:8])
}

// cleanText makes s storable in a PostgreSQL text column: NUL bytes removed and invalid
// UTF-8 replaced by U+FFFD. Applied to the text columns of both dialects (not to the
// JSON documents, which encoding/json escapes), so that they hold the same values.
func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}
