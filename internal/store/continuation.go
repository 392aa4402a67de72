// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"cmp"
	"container/list"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// Continuation is what a session that continues after it went idle needs of its past
// (docs/decisions/sessions.md §4): its evaluated turns and its last analysis revision.
type Continuation struct {
	// Revision is the last analysis revision emitted for the session (0: none).
	Revision int
	// Turns are the session's turn records in turn index order.
	Turns []evaluation.TurnRecord
}

// SavedTurn is what ContinuationStore.SaveTurns did with one record.
type SavedTurn struct {
	// FirstFinal: this save first stored a final verdict for the turn (its stored stage
	// went from none or provisional to final). A final record saved after another one
	// (this collector's or another's) gets false: its verdict re-judges a turn already
	// counted (docs/decisions/sessions.md §4.5).
	FirstFinal bool
	// Replaced is, for a final record that is not FirstFinal and was written, the
	// detection type (evaluation.TurnResult.DetectionType) of the final verdict it
	// overwrote: the one counted or its latest revision; for a turn claimed final
	// (ClaimFinal) since its last final save, the claimed one (Claim.DetectionType; that
	// of its stored record when the claim did not name one). "" otherwise: a provisional
	// record, a FirstFinal one, or one not written because the stored verdict is further
	// on.
	Replaced string
}

// Claim is a turn whose final verdict was emitted, and counted, without its record
// saved (ContinuationStore.ClaimFinal).
type Claim struct {
	TurnKey
	// DetectionType is the detection type of the verdict counted; "" for a claim kept
	// by an earlier collector, which did not name it.
	DetectionType string `json:"detection_type,omitempty"`
}

// TurnState is one closed turn's record, keyed by session id, trace id and root span id
// (Key).
type TurnState struct {
	SessionID string
	Record    evaluation.TurnRecord
}

// Key returns the key of the turn of t.
func (t *TurnState) Key() TurnKey { return KeyOf(t.SessionID, &t.Record.Result) }

// Held reports whether the caller of LoadContinuation has the record of the session's
// turn of traceID and rootSpanID (TurnKey) at turnIndex, at verdict stage stage
// (evaluation.VerdictStage) or further on: then the stored one has nothing for it.
type Held func(traceID, rootSpanID string, turnIndex, stage int) bool

// TurnKey names a session's turn: its trace and its root span (the turn marker or the
// highest GenAI span, hex; "" for a turn without one), as one trace may hold several
// turns (a conversation run inside one trace, docs/decisions/sessions.md §4.2). JSON:
// session_id, trace_id, root_span_id.
type TurnKey struct {
	SessionID  string `json:"session_id"`
	TraceID    string `json:"trace_id"`
	RootSpanID string `json:"root_span_id"`
}

// KeyOf returns the key of the turn of result r in session sessionID.
func KeyOf(sessionID string, r *evaluation.TurnResult) TurnKey { return KeyOfTurn(sessionID, r.ID()) }

// KeyOfTurn returns the key of turn id in session sessionID.
func KeyOfTurn(sessionID string, id evaluation.TurnID) TurnKey {
	return TurnKey{SessionID: sessionID, TraceID: id.TraceID, RootSpanID: id.RootSpanID}
}

// Turn returns the turn k names within its session.
func (k TurnKey) Turn() evaluation.TurnID {
	return evaluation.TurnID{TraceID: k.TraceID, RootSpanID: k.RootSpanID}
}

// clean returns k as stored: its ids through cleanText.
func (k TurnKey) clean() TurnKey {
	return TurnKey{SessionID: cleanText(k.SessionID), TraceID: cleanText(k.TraceID), RootSpanID: cleanText(k.RootSpanID)}
}

// ContinuationStore keeps the continuation state of sessions. Implementations are safe
// for concurrent use.
type ContinuationStore interface {
	// LoadContinuation returns the session's state; an unknown session gives the zero
	// Continuation. In the result store's database it also holds, rebuilt from their
	// stored results, the turns of the session's stored analysis that have no record
	// (docs/decisions/sessions.md §4.7). held, when not nil, names the records the
	// caller has: a stored record for which it reports true is left out of Turns (and
	// not decoded).
	LoadContinuation(ctx context.Context, sessionID string, held Held) (Continuation, error)
	// SaveTurns upserts turn records by their TurnKey (TurnState.Key) in one transaction. A
	// record never replaces one whose verdict is further on (evaluation.VerdictStage: a
	// final record is never replaced by a provisional one, a verdict with follow-up never
	// by one without), so saving twice, or late, loses no verdict. It returns what each
	// save of turns did (SavedTurn): whether it first stored a final verdict for the
	// turn, and otherwise which final verdict it replaced. Collectors sharing the store
	// never both get FirstFinal for one turn. On error it returns nil: nothing is saved.
	SaveTurns(ctx context.Context, turns []TurnState) ([]SavedTurn, error)
	// ClaimFinal records that final verdicts of turns were given (emitted and counted)
	// although their final records could not be saved (the collector dropped them while
	// the store was down): a stored provisional record of such a turn is marked final,
	// its document unchanged, so that a later SaveTurns of a final record of the turn
	// returns false (docs/decisions/sessions.md §4.9); and the claim's detection type is
	// kept as the verdict counted, on a provisional or a final row, until the turn's next
	// final save, which reports it as the verdict it replaced (SavedTurn.Replaced). A turn
	// without a stored record is left as it is. On error nothing is marked.
	ClaimFinal(ctx context.Context, turns []Claim) error
	// SaveRevision records the session's last emitted analysis revision (the highest
	// wins).
	SaveRevision(ctx context.Context, sessionID string, revision int) error
	// ReserveTurns returns the turn index of each turn of turns, allocated in order in
	// one transaction: the index given before to the same TurnKey (session id, trace id,
	// root span id); in the result store's database, the index of the turn's stored turn
	// result (same trace and root span) when no other turn holds it; else one more than
	// the session's highest index (0 for its first turn): of its records, its
	// reservations (those of turns before it in turns too) and its stored turn results
	// (docs/decisions/sessions.md §4.7). Collectors sharing the store never get one
	// index for two turns (§4.5), two turns of one trace included. On error it returns
	// nil: nothing is reserved.
	ReserveTurns(ctx context.Context, turns []TurnKey) ([]int, error)
	// NextRevision allocates the session's next analysis revision (1 for the first) and
	// records it as the last: collectors sharing the store never emit one revision twice.
	NextRevision(ctx context.Context, sessionID string) (int, error)
	// Close releases the store.
	Close() error
}

// ReserveTurn allocates the index of one turn of cs (ContinuationStore.ReserveTurns).
func ReserveTurn(ctx context.Context, cs ContinuationStore, sessionID, traceID, rootSpanID string) (int, error) {
	idx, err := cs.ReserveTurns(ctx, []TurnKey{{SessionID: sessionID, TraceID: traceID, RootSpanID: rootSpanID}})
	if err != nil {
		return 0, err
	}
	return idx[0], nil
}

// OpenContinuation opens the continuation state in the result store at dsn (Open):
// the same database, shared by collectors that share it.
func OpenContinuation(ctx context.Context, driver, dsn string) (ContinuationStore, error) {
	st, err := Open(ctx, driver, dsn)
	if err != nil {
		return nil, err
	}
	return st.(*sqlStore), nil
}

var _ ContinuationStore = (*sqlStore)(nil)

const upsertTurnSQL = "INSERT INTO turns (session_id, trace_id, root_span_id, turn_index, final, verdict_stage, record, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) " +
	"ON CONFLICT (session_id, trace_id, root_span_id) DO UPDATE SET turn_index = excluded.turn_index, final = excluded.final, " +
	"verdict_stage = excluded.verdict_stage, record = excluded.record, updated_at = excluded.updated_at " +
	"WHERE excluded.verdict_stage >= turns.verdict_stage"

// A final record is saved in steps, each settling whether this save made the turn final:
// an update of a provisional row (first; on PostgreSQL an update that waited for a
// concurrent one re-reads the condition), else an insert of a new row (first), else,
// the row existing now, the update of a provisional row again, else the update that
// never lowers the stage (not first). A turn made final is mostly provisional in the
// store already: one statement, as a plain upsert.
const (
	finishTurnSQL = "UPDATE turns SET turn_index = ?, final = ?, verdict_stage = ?, record = ?, updated_at = ?, counted_detection_type = NULL " +
		"WHERE session_id = ? AND trace_id = ? AND root_span_id = ? AND verdict_stage = 0"
	insertTurnSQL = "INSERT INTO turns (session_id, trace_id, root_span_id, turn_index, final, verdict_stage, record, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) " +
		"ON CONFLICT (session_id, trace_id, root_span_id) DO NOTHING"
	replaceTurnSQL = "UPDATE turns SET turn_index = ?, final = ?, verdict_stage = ?, record = ?, updated_at = ?, counted_detection_type = NULL " +
		"WHERE session_id = ? AND trace_id = ? AND root_span_id = ? AND verdict_stage <= ?"
	// storedTurnSQL reads a stored record's verdict stage and the detection type counted
	// for it by a claim (ClaimFinal), else its record, whose detection type storedVerdict
	// decodes: PostgreSQL's JSON operators refuse a whole document that holds a \u0000
	// anywhere (a NUL in an application's text), so they are not used on records.
	storedTurnSQL = "SELECT verdict_stage, counted_detection_type, CASE WHEN counted_detection_type IS NULL THEN record END FROM turns " +
		"WHERE session_id = ? AND trace_id = ? AND root_span_id = ?"
)

// claimFinalSQL marks a provisional row final without follow-up (verdict stage 1),
// keeping its document (ClaimFinal). A key without root span (a claim kept in
// continuation.storage before turns had root spans, whose record is gone) claims its
// trace's provisional rows: before migration 00013 a trace was one turn
// (docs/decisions/sessions.md §4.2.0).
const claimFinalSQL = "UPDATE turns SET final = ?, verdict_stage = 1, updated_at = ? " +
	"WHERE session_id = ? AND trace_id = ? AND (root_span_id = ? OR CAST(? AS TEXT) = '') AND verdict_stage = 0"

// claimCountedSQL keeps a claim's detection type as the verdict counted for the turn
// (migration 00014), whatever the row's stage; a final save clears it.
const claimCountedSQL = "UPDATE turns SET counted_detection_type = ? " +
	"WHERE session_id = ? AND trace_id = ? AND (root_span_id = ? OR CAST(? AS TEXT) = '')"

const upsertRevisionSQL = "INSERT INTO session_revisions (session_id, revision, updated_at) VALUES (?, ?, ?) " +
	"ON CONFLICT (session_id) DO UPDATE SET revision = excluded.revision, updated_at = excluded.updated_at " +
	"WHERE excluded.revision > session_revisions.revision"

// reserveTurnSQL gives a turn (trace and root span) the index of its stored turn
// result, when it has one on an index neither reserved nor another turn's record (the
// result store placed it first: an analysis made while the continuation store was
// unreachable), else one more than the session's highest index of its reservations,
// records and stored turn results.
const reserveTurnSQL = "INSERT INTO turn_indexes (session_id, trace_id, root_span_id, turn_index, updated_at) " +
	"SELECT ?, ?, ?, COALESCE((SELECT MIN(r.turn_index) FROM turn_results r WHERE r.session_id = ? AND r.trace_id = ? AND r.root_span_id = ? " +
	"AND r.trace_id <> '' " +
	"AND NOT EXISTS (SELECT 1 FROM turn_indexes i WHERE i.session_id = r.session_id AND i.turn_index = r.turn_index) " +
	"AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = r.session_id AND t.turn_index = r.turn_index " +
	"AND (t.trace_id <> r.trace_id OR t.root_span_id <> r.root_span_id))), " +
	"(SELECT COALESCE(MAX(turn_index) + 1, 0) FROM (SELECT turn_index FROM turn_indexes WHERE session_id = ? " +
	"UNION ALL SELECT turn_index FROM turns WHERE session_id = ? " +
	"UNION ALL SELECT turn_index FROM turn_results WHERE session_id = ?) AS t)), ? WHERE true " +
	"ON CONFLICT (session_id, trace_id, root_span_id) DO NOTHING"

// nextRevisionSQL allocates one more than the session's last revision, and than the
// revision of its stored analysis as its current part numbers it (analysis_revision −
// revision_offset: an analysis stored by a collector without this continuation store,
// whose next revision would else be taken for an older one and skipped;
// docs/decisions/sessions.md §4.6, §4.7).
const nextRevisionSQL = "INSERT INTO session_revisions (session_id, revision, updated_at) " +
	"VALUES (?, COALESCE((SELECT analysis_revision - revision_offset FROM sessions WHERE session_id = ?), 0) + 1, ?) " +
	"ON CONFLICT (session_id) DO UPDATE SET revision = CASE WHEN session_revisions.revision >= excluded.revision " +
	"THEN session_revisions.revision + 1 ELSE excluded.revision END, updated_at = excluded.updated_at " +
	"RETURNING revision"

// lastRevisionSQL reads the session's last revision: allocated here, or of its stored
// analysis (NULL: neither).
const lastRevisionSQL = "SELECT MAX(r) FROM (SELECT revision AS r FROM session_revisions WHERE session_id = ? " +
	"UNION ALL SELECT analysis_revision - revision_offset FROM sessions WHERE session_id = ?) AS t"

// ReserveTurns inserts the (session, trace, root span) indexes in one transaction, in order; on
// PostgreSQL transaction-scoped advisory locks on the session ids (lockSessions)
// serialise the allocations of one session (SQLite serialises writers; the unique
// (session_id, turn_index) index guards both).
func (s *sqlStore) ReserveTurns(ctx context.Context, turns []TurnKey) ([]int, error) {
	if len(turns) == 0 {
		return nil, nil
	}
	idx := make([]int, len(turns))
	var at int // the turn being reserved, for the error
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if s.d.numbered {
			ids := make([]string, len(turns))
			for i := range turns {
				ids[i] = cleanText(turns[i].SessionID)
			}
			if err := lockSessions(ctx, tx, reserveLockClass, ids); err != nil {
				return err
			}
		}
		reserve, err := s.stmt(ctx, reserveTurnSQL)
		if err != nil {
			return err
		}
		reserved, err := s.stmt(ctx, "SELECT turn_index FROM turn_indexes WHERE session_id = ? AND trace_id = ? AND root_span_id = ?")
		if err != nil {
			return err
		}
		reserve, reserved = tx.StmtContext(ctx, reserve), tx.StmtContext(ctx, reserved)
		now := s.d.timeArg(time.Now())
		for at = range turns {
			id, trace, root := cleanText(turns[at].SessionID), cleanText(turns[at].TraceID), cleanText(turns[at].RootSpanID)
			if _, err := reserve.ExecContext(ctx, id, trace, root, id, trace, root, id, id, id, now); err != nil {
				return err
			}
			if err := reserved.QueryRowContext(ctx, id, trace, root).Scan(&idx[at]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: reserve %d turns (at %q/%s/%s): %w", s.d.name, len(turns), turns[at].SessionID, turns[at].TraceID,
			turns[at].RootSpanID, err)
	}
	return idx, nil
}

// NextRevision increments the session's revision row in one statement.
func (s *sqlStore) NextRevision(ctx context.Context, sessionID string) (int, error) {
	var rev int
	err := s.write(ctx, func(w writeConn) error {
		id := cleanText(sessionID)
		return w.QueryRowContext(ctx, s.d.rebind(nextRevisionSQL), id, id, s.d.timeArg(time.Now())).Scan(&rev)
	})
	if err != nil {
		return 0, fmt.Errorf("store: %s: next revision %q: %w", s.d.name, sessionID, err)
	}
	return rev, nil
}

// storedOnlySQL selects the session's stored turn results (turn_results) of a turn
// (trace and root span) without a record (turns) and on an index no record holds: the
// turns known from the result store only. A record stands over a stored result of its
// turn, also a provisional one under a stored final result (docs/decisions/sessions.md
// §4.7).
const storedOnlySQL = "FROM turn_results r WHERE r.session_id = ? AND r.trace_id <> '' " +
	"AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = r.session_id " +
	"AND (t.trace_id = r.trace_id AND t.root_span_id = r.root_span_id OR t.turn_index = r.turn_index))"

// loadTurnsSQL reads a session's turn records (kind 0) and, after them at equal index,
// its stored turn results known from the result store only (kind 1, storedOnlySQL):
// LoadContinuation.
const loadTurnsSQL = "SELECT turn_index, 0 AS kind, trace_id, root_span_id, verdict_stage, record FROM turns WHERE session_id = ? " +
	"UNION ALL SELECT r.turn_index, 1, r.trace_id, r.root_span_id, 0, r.result " + storedOnlySQL + " ORDER BY 1, 2, 3, 4"

// heldTurnsSQL is loadTurnsSQL without the documents: what LoadContinuation with a held
// filter reads first.
const heldTurnsSQL = "SELECT turn_index, 0 AS kind, trace_id, root_span_id, verdict_stage FROM turns WHERE session_id = ? " +
	"UNION ALL SELECT r.turn_index, 1, r.trace_id, r.root_span_id, 0 " + storedOnlySQL

// holdsAllStored reports whether held holds every stored record of session id (and no
// turn is known from a stored result only): then LoadContinuation reads no document.
func (s *sqlStore) holdsAllStored(ctx context.Context, id string, held Held) (bool, error) {
	q, err := s.stmt(ctx, heldTurnsSQL)
	if err != nil {
		return false, err
	}
	rows, err := q.QueryContext(ctx, id, id)
	if err != nil {
		return false, err
	}
	all := true
	for all && rows.Next() {
		var (
			idx, kind, stage int
			trace, root      string
		)
		if err := rows.Scan(&idx, &kind, &trace, &root, &stage); err != nil {
			_ = rows.Close()
			return false, err
		}
		all = kind == 0 && held(trace, root, idx, stage)
	}
	return all, closeRows(rows)
}

// LoadContinuation reads the session's turn records (by turn index) and revision. A turn
// the result store holds (a row of turn_results, from a stored analysis) and the turns
// table does not (its record never got there: its saves failed until the collector shut
// down, or the bound on records waiting to be saved dropped it) comes back as the record
// evaluation.RecordFromResult rebuilds from its stored result, at its stored index: the
// two stores agree on the session's turns, so the next turn neither takes its index
// (ReserveTurns reads turn_results too) nor leaves it out of the next analysis
// (docs/decisions/sessions.md §4.7). The revision is the highest allocated here or
// stored (the stored analysis' as its part numbers it).
func (s *sqlStore) LoadContinuation(ctx context.Context, sessionID string, held Held) (Continuation, error) {
	var c Continuation
	id := cleanText(sessionID)
	revision, err := s.stmt(ctx, lastRevisionSQL)
	if err == nil {
		var last sql.NullInt64
		err = revision.QueryRowContext(ctx, id, id).Scan(&last)
		c.Revision = int(last.Int64)
	}
	if err != nil {
		return c, fmt.Errorf("store: %s: load continuation %q: %w", s.d.name, sessionID, err)
	}
	if held != nil {
		// A session end's reload on one collector: the session holds every record.
		all, err := s.holdsAllStored(ctx, id, held)
		if err != nil {
			return c, fmt.Errorf("store: %s: load continuation %q: %w", s.d.name, sessionID, err)
		}
		if all {
			return c, nil
		}
	}
	load, err := s.stmt(ctx, loadTurnsSQL)
	if err != nil {
		return c, fmt.Errorf("store: %s: load continuation %q: %w", s.d.name, sessionID, err)
	}
	rows, err := load.QueryContext(ctx, id, id)
	if err != nil {
		return c, fmt.Errorf("store: %s: load continuation %q: %w", s.d.name, sessionID, err)
	}
	for rows.Next() {
		var (
			idx, kind, stage int
			trace, root      string
			doc              sql.RawBytes // decoded only when needed, never kept
		)
		if err := rows.Scan(&idx, &kind, &trace, &root, &stage, &doc); err != nil {
			_ = rows.Close()
			return c, fmt.Errorf("store: %s: load continuation %q: %w", s.d.name, sessionID, err)
		}
		var rec evaluation.TurnRecord
		if kind == 0 {
			if held != nil && held(trace, root, idx, stage) {
				continue
			}
			err = json.Unmarshal(doc, &rec)
		} else {
			var tr evaluation.TurnResult
			if err = json.Unmarshal(doc, &tr); err == nil {
				rec = evaluation.RecordFromResult(tr)
				rec.SetTurnIndex(idx)
				rec.Result.SessionID, rec.Result.TraceID, rec.Result.RootSpanID = sessionID, trace, root
				if held != nil && held(trace, root, idx, evaluation.VerdictStage(&rec)) {
					continue
				}
			}
		}
		if err != nil {
			_ = rows.Close()
			return c, fmt.Errorf("store: %s: load continuation %q: decode turn %d: %w", s.d.name, sessionID, idx, err)
		}
		c.Turns = append(c.Turns, rec)
	}
	if err := closeRows(rows); err != nil {
		return c, fmt.Errorf("store: %s: load continuation %q: %w", s.d.name, sessionID, err)
	}
	return c, nil
}

// SaveTurns upserts the records in one transaction: a provisional record with one
// statement, a final one with one to five (saveFinal) that tell whether it is the
// turn's first final verdict, and which one it replaced.
func (s *sqlStore) SaveTurns(ctx context.Context, turns []TurnState) ([]SavedTurn, error) {
	if len(turns) == 0 {
		return nil, nil
	}
	docs := make([]string, len(turns))
	for i := range turns {
		js, err := json.Marshal(&turns[i].Record)
		if err != nil {
			return nil, fmt.Errorf("store: %s: save turn %q/%s/%s: %w", s.d.name, turns[i].SessionID, turns[i].Record.Result.TraceID,
				turns[i].Record.Result.RootSpanID, err)
		}
		docs[i] = string(js)
	}
	now := s.d.timeArg(time.Now())
	saved := make([]SavedTurn, len(turns))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		sts := txStmts{ctx: ctx, tx: tx, s: s}
		defer sts.close()
		for i := range turns {
			r := &turns[i].Record.Result
			k := turns[i].Key().clean()
			stage := evaluation.VerdictStage(&turns[i].Record)
			var err error
			if stage == 0 {
				err = sts.exec(upsertTurnSQL, nil, k.SessionID, k.TraceID, k.RootSpanID, r.TurnIndex, r.Final, stage, docs[i], now)
			} else {
				saved[i], err = saveFinal(&sts, k, r.TurnIndex, stage, docs[i], now)
			}
			if err != nil {
				return fmt.Errorf("upsert turn %q/%s/%s: %w", turns[i].SessionID, r.TraceID, r.RootSpanID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: save %d turns: %w", s.d.name, len(turns), err)
	}
	return saved, nil
}

// ClaimFinal marks the turns' provisional rows final, and keeps the claims' detection
// types, in one transaction.
func (s *sqlStore) ClaimFinal(ctx context.Context, turns []Claim) error {
	if len(turns) == 0 {
		return nil
	}
	now := s.d.timeArg(time.Now())
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		sts := txStmts{ctx: ctx, tx: tx, s: s}
		defer sts.close()
		for _, k := range turns {
			c := k.clean()
			if err := sts.exec(claimFinalSQL, nil, true, now, c.SessionID, c.TraceID, c.RootSpanID, c.RootSpanID); err != nil {
				return fmt.Errorf("claim turn %q/%s/%s: %w", k.SessionID, k.TraceID, k.RootSpanID, err)
			}
			if k.DetectionType == "" {
				continue
			}
			if err := sts.exec(claimCountedSQL, nil, cleanText(k.DetectionType), c.SessionID, c.TraceID, c.RootSpanID, c.RootSpanID); err != nil {
				return fmt.Errorf("claim turn %q/%s/%s: %w", k.SessionID, k.TraceID, k.RootSpanID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: %s: claim %d final verdicts: %w", s.d.name, len(turns), err)
	}
	return nil
}

// saveFinal runs finishTurnSQL, insertTurnSQL and finishTurnSQL for a final record, in
// that order until one writes a row: the turn's first final verdict. Otherwise a final
// verdict is stored: storedTurnSQL reads it, and replaceTurnSQL overwrites it unless it
// is further on.
func saveFinal(sts *txStmts, key TurnKey, idx, stage int, doc string, now any) (SavedTurn, error) {
	finish := []any{idx, true, stage, doc, now, key.SessionID, key.TraceID, key.RootSpanID}
	for _, step := range [...]struct {
		query string
		args  []any
	}{
		{finishTurnSQL, finish},
		{insertTurnSQL, []any{key.SessionID, key.TraceID, key.RootSpanID, idx, true, stage, doc, now}},
		{finishTurnSQL, finish},
	} {
		var n int64
		if err := sts.exec(step.query, &n, step.args...); err != nil {
			return SavedTurn{}, err
		}
		if n > 0 {
			return SavedTurn{FirstFinal: true}, nil
		}
	}
	stored, replaced, err := sts.storedVerdict(key)
	if err != nil || stored > stage {
		return SavedTurn{}, err // a record further on is stored
	}
	var n int64
	if err := sts.exec(replaceTurnSQL, &n, append(finish, stage)...); err != nil || n == 0 {
		return SavedTurn{}, err
	}
	return SavedTurn{Replaced: replaced}, nil
}

// storedVerdict reads the verdict stage and detection type of key's stored turn record
// (storedTurnSQL), locking its row on PostgreSQL until the transaction ends, so that
// what replaceTurnSQL overwrites is what was read (on SQLite the transaction holds the
// write lock already: dialect.lockedTx).
func (t *txStmts) storedVerdict(key TurnKey) (stage int, detectionType string, err error) {
	ctx, err := t.run()
	if err != nil {
		return 0, "", err
	}
	query := storedTurnSQL
	if !t.s.d.lockedTx {
		query += " FOR UPDATE"
	}
	var (
		counted sql.NullString
		record  []byte
	)
	if err := t.tx.QueryRowContext(ctx, t.s.d.rebind(query), key.SessionID, key.TraceID, key.RootSpanID).Scan(&stage, &counted, &record); err != nil {
		return 0, "", fmt.Errorf("read stored verdict: %w", err)
	}
	if counted.Valid {
		return stage, counted.String, nil
	}
	var rec struct {
		Result struct {
			DetectionType string `json:"detection_type"`
		} `json:"result"`
	}
	if err := json.Unmarshal(record, &rec); err != nil {
		return 0, "", fmt.Errorf("read stored verdict: decode record: %w", err)
	}
	return stage, rec.Result.DetectionType, nil
}

// txStmts prepares a transaction's statements on their first use (a round trip each on
// PostgreSQL: only those a batch needs). With text set, statements run as text instead
// (SaveAnalyses on PostgreSQL: pgx keeps its own per-connection cache of prepared
// statements, so one prepared per transaction would only add round trips).
type txStmts struct {
	ctx  context.Context
	tx   *sql.Tx
	s    *sqlStore
	text bool
	sts  map[string]*sql.Stmt
	// quiet is ctx without its cancellation (run), made on first use.
	quiet context.Context
}

// run returns the context the transaction's next statement runs under, or ctx's error
// once ctx has ended. On SQLite (dialect.lockedTx) that is ctx without its
// cancellation: the write transaction holds the lock from BEGIN, so no statement waits
// for a lock, and each is short, while given a context that can end the driver starts a
// goroutine a statement to interrupt it. ctx is checked here, before each statement,
// instead, and database/sql rolls the transaction back when ctx ends. Elsewhere it is
// ctx itself, which also ends a running statement.
func (t *txStmts) run() (context.Context, error) {
	if err := t.ctx.Err(); err != nil {
		return nil, err
	}
	if !t.s.d.lockedTx {
		return t.ctx, nil
	}
	if t.quiet == nil {
		t.quiet = context.WithoutCancel(t.ctx)
	}
	return t.quiet, nil
}

// exec runs query (with '?' placeholders) with args, storing the rows it wrote in n
// (when not nil).
func (t *txStmts) exec(query string, n *int64, args ...any) error {
	var (
		res sql.Result
		err error
	)
	if t.text {
		res, err = t.tx.ExecContext(t.ctx, t.s.d.rebind(query), args...)
	} else {
		st := t.sts[query]
		if st == nil {
			if st, err = t.tx.PrepareContext(t.ctx, t.s.d.rebind(query)); err != nil {
				return fmt.Errorf("prepare: %w", err)
			}
			if t.sts == nil {
				t.sts = map[string]*sql.Stmt{}
			}
			t.sts[query] = st
		}
		var ctx context.Context
		if ctx, err = t.run(); err != nil {
			return err
		}
		res, err = st.ExecContext(ctx, args...)
	}
	if err != nil || n == nil {
		return err
	}
	*n, err = res.RowsAffected()
	return err
}

func (t *txStmts) close() {
	for _, st := range t.sts {
		_ = st.Close()
	}
}

// SaveRevision keeps the highest revision.
func (s *sqlStore) SaveRevision(ctx context.Context, sessionID string, revision int) error {
	if _, err := s.execWrite(ctx, upsertRevisionSQL, cleanText(sessionID), revision, s.d.timeArg(time.Now())); err != nil {
		return fmt.Errorf("store: %s: save revision %q: %w", s.d.name, sessionID, err)
	}
	return nil
}

// MemoryContinuation is a ContinuationStore in memory for a collector without a
// continuation database: sessions continue while the collector runs, not across a
// restart or another collector. It keeps at most maxTurns turn records, dropping the
// least recently used sessions' records whole. A dropped session keeps its counters
// (the next turn index and the last revision, a few dozen bytes) for StubsPerRecord ×
// maxTurns more sessions, so that when it comes back its turns and analysis revisions go
// on from where they were instead of restarting at 0 and 1 (which would overwrite the
// stored analysis of the same revision); its earlier turns are then no longer known
// here (docs/decisions/sessions.md §4.2).
type MemoryContinuation struct {
	mu       sync.Mutex
	maxTurns int
	turns    int
	lru      *list.List // of *memSession holding records or indexes, most recent first
	stubs    *list.List // of *memSession dropped to their counters, most recent first
	byID     map[string]*list.Element
}

// StubsPerRecord is how many dropped sessions' counters a MemoryContinuation keeps per
// turn record it may hold.
const StubsPerRecord = 4

type memSession struct {
	id       string
	revision int
	turns    map[TurnKey]evaluation.TurnRecord // by turn; nil for a stub
	claimed  map[TurnKey]bool                  // provisional records marked final (ClaimFinal), by turn
	counted  map[TurnKey]string                // claims' detection types (ClaimFinal), by turn, until its next final save
	indexes  map[TurnKey]int                   // by turn (ReserveTurns)
	next     int                               // one more than the highest index reserved or saved
}

// NewMemoryContinuation returns an empty MemoryContinuation bounded to maxTurns turn
// records (at least 1) and StubsPerRecord × maxTurns dropped sessions' counters.
func NewMemoryContinuation(maxTurns int) *MemoryContinuation {
	return &MemoryContinuation{maxTurns: max(1, maxTurns), lru: list.New(), stubs: list.New(), byID: map[string]*list.Element{}}
}

var _ ContinuationStore = (*MemoryContinuation)(nil)

// get returns the session, most recently used now; a stub gets its records back (none).
func (m *MemoryContinuation) get(id string) *memSession {
	if e, ok := m.byID[id]; ok {
		s := e.Value.(*memSession)
		if s.turns != nil {
			m.lru.MoveToFront(e)
			return s
		}
		m.stubs.Remove(e)
		s.turns = map[TurnKey]evaluation.TurnRecord{}
		m.byID[id] = m.lru.PushFront(s)
		return s
	}
	s := &memSession{id: id, turns: map[TurnKey]evaluation.TurnRecord{}}
	m.byID[id] = m.lru.PushFront(s)
	return s
}

// evict drops the records of the least recently used sessions while more than maxTurns
// are kept, keeping their counters as stubs, and forgets the oldest stubs past
// StubsPerRecord × maxTurns.
func (m *MemoryContinuation) evict() {
	for m.turns > m.maxTurns && m.lru.Len() > 0 {
		old := m.lru.Remove(m.lru.Back()).(*memSession)
		m.turns -= len(old.turns)
		old.turns, old.indexes, old.claimed, old.counted = nil, nil, nil, nil
		m.byID[old.id] = m.stubs.PushFront(old)
	}
	for m.stubs.Len() > StubsPerRecord*m.maxTurns {
		delete(m.byID, m.stubs.Remove(m.stubs.Back()).(*memSession).id)
	}
}

// LoadContinuation implements ContinuationStore.
func (m *MemoryContinuation) LoadContinuation(_ context.Context, sessionID string, held Held) (Continuation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byID[sessionID]
	if !ok {
		return Continuation{}, nil
	}
	s := e.Value.(*memSession)
	c := Continuation{Revision: s.revision}
	if len(s.turns) > 0 { // sized once: a record is a large struct, regrowth copies them all
		c.Turns = make([]evaluation.TurnRecord, 0, len(s.turns))
	}
	for _, r := range s.turns {
		if held == nil || !held(r.Result.TraceID, r.Result.RootSpanID, r.Result.TurnIndex, evaluation.VerdictStage(&r)) {
			c.Turns = append(c.Turns, r)
		}
	}
	slices.SortFunc(c.Turns, func(a, b evaluation.TurnRecord) int { return a.Result.TurnIndex - b.Result.TurnIndex })
	return c, nil
}

// SaveTurns implements ContinuationStore.
func (m *MemoryContinuation) SaveTurns(_ context.Context, turns []TurnState) ([]SavedTurn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	saved := make([]SavedTurn, len(turns))
	for i, t := range turns {
		s := m.get(t.SessionID)
		k := t.Key()
		old, ok := s.turns[k]
		stage := evaluation.VerdictStage(&t.Record)
		if ok && evaluation.VerdictStage(&old) > stage {
			continue
		}
		if stage > 0 {
			if !ok || evaluation.VerdictStage(&old) == 0 && !s.claimed[k] {
				saved[i].FirstFinal = true
			} else {
				saved[i].Replaced = cmp.Or(s.counted[k], old.Result.DetectionType)
			}
			delete(s.claimed, k)
			delete(s.counted, k)
		}
		if !ok {
			m.turns++
		}
		s.turns[k] = t.Record
		s.next = max(s.next, t.Record.Result.TurnIndex+1)
	}
	m.evict()
	return saved, nil
}

// ClaimFinal implements ContinuationStore.
func (m *MemoryContinuation) ClaimFinal(_ context.Context, turns []Claim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range turns {
		e, ok := m.byID[c.SessionID]
		if !ok {
			continue
		}
		s := e.Value.(*memSession)
		r, ok := s.turns[c.TurnKey]
		if !ok {
			continue
		}
		if evaluation.VerdictStage(&r) == 0 {
			if s.claimed == nil {
				s.claimed = map[TurnKey]bool{}
			}
			s.claimed[c.TurnKey] = true
		}
		if c.DetectionType != "" {
			if s.counted == nil {
				s.counted = map[TurnKey]string{}
			}
			s.counted[c.TurnKey] = c.DetectionType
		}
	}
	return nil
}

// SaveRevision implements ContinuationStore.
func (m *MemoryContinuation) SaveRevision(_ context.Context, sessionID string, revision int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(sessionID)
	s.revision = max(s.revision, revision)
	return nil
}

// ReserveTurns implements ContinuationStore.
func (m *MemoryContinuation) ReserveTurns(_ context.Context, turns []TurnKey) ([]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	idx := make([]int, len(turns))
	for i, k := range turns {
		s := m.get(k.SessionID)
		n, ok := s.indexes[k]
		if !ok {
			if s.indexes == nil {
				s.indexes = map[TurnKey]int{}
			}
			n = s.next
			s.indexes[k] = n
			s.next++
		}
		idx[i] = n
	}
	return idx, nil
}

// NextRevision implements ContinuationStore.
func (m *MemoryContinuation) NextRevision(_ context.Context, sessionID string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(sessionID)
	s.revision++
	return s.revision, nil
}

// Close implements ContinuationStore.
func (m *MemoryContinuation) Close() error { return nil }
