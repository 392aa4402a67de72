// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// ErrRejected marks a save error that no retry of the same analyses cures: an analysis
// the store cannot take (nil, an empty session_id, a value JSON cannot encode such as a
// NaN score, a revision or turn index beyond a 32-bit INTEGER column) or one the
// database refuses (a constraint it breaks, such as a duplicate turn_index, or a value
// the database cannot hold: SQLite's CONSTRAINT, TOOBIG and MISMATCH results,
// PostgreSQL's SQLSTATE classes 22 "data exception" and 23 "integrity constraint
// violation", and 54000 "program limit exceeded", such as an index entry over 2704
// bytes). A batch that fails with it (SaveAnalyses: all or nothing) may hold
// analyses that are saved on their own. Test it with errors.Is; the error keeps the
// store's message and the driver's error.
var ErrRejected = errors.New("rejected by the result store")

// rejectedError is err marked as ErrRejected (errors.Is finds both).
type rejectedError struct{ err error }

func (e rejectedError) Error() string   { return e.err.Error() }
func (e rejectedError) Unwrap() []error { return []error{e.err, ErrRejected} }

// rejected marks err as ErrRejected when the database refused the statement for the
// data it was given (ErrRejected lists the codes); other errors (a lost connection, a
// busy or full database, a cancelled context, a serialization failure) are returned as
// they are, since a retry may succeed.
func rejected(err error) error {
	if err == nil || errors.Is(err, ErrRejected) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary result code of an extended one
		case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH:
			return rejectedError{err}
		}
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23") || pe.Code == "54000") {
		return rejectedError{err}
	}
	return err
}

// checkInt32 returns an error naming field when v does not fit the 32-bit INTEGER
// column that holds it on PostgreSQL (whose driver would refuse it before the server
// could, with an error that names no SQLSTATE). Its callers mark it ErrRejected, on
// SQLite too, whose integers are 64-bit, so that both keep the same rule.
func checkInt32(field string, v int) error {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return fmt.Errorf("%s %d does not fit an INTEGER column", field, v)
	}
	return nil
}

// checkAnalysisInts checks that a's revision and turn indexes fit their INTEGER columns.
func checkAnalysisInts(a *evaluation.Analysis) error {
	if err := checkInt32("analysis_revision", a.AnalysisRevision); err != nil {
		return err
	}
	for i := range a.TurnResults {
		if err := checkInt32("turn_index", a.TurnResults[i].TurnIndex); err != nil {
			return err
		}
	}
	return nil
}
