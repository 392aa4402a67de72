// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

// RunStore reads the reference-based results of dataset runs.
type RunStore interface {
	// ReferenceRun returns the case results of the sessions of a run, ordered by case id
	// then session id; empty for an unknown run.
	ReferenceRun(ctx context.Context, runID string) ([]reference.CaseResult, error)
	// RunVerdicts returns the LLM judge's verdicts (judge_verdicts, both kinds) on the
	// sessions of a run, with their case id: for each session, metric and agent the
	// verdict of the latest analysis revision judged. Ordered by case id, session id,
	// kind, name, agent; empty for an unknown run or one not judged.
	RunVerdicts(ctx context.Context, runID string) ([]reference.CaseVerdict, error)
}

var _ RunStore = (*sqlStore)(nil)

var referenceResultCols = []string{"session_id", "run_id", "case_id", "pass", "score", "result"}

// referenceRows encodes the analysis' references (a reference.CaseResult, typed or as
// decoded JSON) into its reference_results row; an empty set without a matched case.
func referenceRows(a *evaluation.Analysis, id string) (*rowSet, error) {
	rs := &rowSet{table: "reference_results", cols: referenceResultCols}
	if a.References == nil {
		return rs, nil
	}
	js, err := json.Marshal(a.References)
	if err != nil {
		return nil, fmt.Errorf("encode references: %w", err)
	}
	var cr reference.CaseResult
	if err := json.Unmarshal(js, &cr); err != nil || cr.CaseID == "" {
		return rs, nil // references of another shape stay in the analysis only
	}
	rs.add(id, cleanText(cr.RunID), cleanText(cr.CaseID), cr.Pass, cr.Score, string(js))
	return rs, nil
}

func (s *sqlStore) ReferenceRun(ctx context.Context, runID string) ([]reference.CaseResult, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(
		"SELECT result FROM reference_results WHERE run_id = ? ORDER BY case_id, session_id"), runID)
	if err != nil {
		return nil, fmt.Errorf("store: %s: reference run %q: %w", s.d.name, runID, err)
	}
	var out []reference.CaseResult
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: reference run %q: %w", s.d.name, runID, err)
		}
		var cr reference.CaseResult
		if err := json.Unmarshal([]byte(doc), &cr); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: reference run %q: decode: %w", s.d.name, runID, err)
		}
		out = append(out, cr)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("store: %s: reference run %q: %w", s.d.name, runID, err)
	}
	return out, nil
}

// runVerdictsSQL reads the verdicts of a run's sessions, every revision: RunVerdicts keeps
// the last one of each (session, kind, name, agent).
const runVerdictsSQL = "SELECT r.case_id, v.session_id, v.kind, v.name, v.agent, v.score, v.pass, v.reason, v.judge_error " +
	"FROM reference_results r JOIN judge_verdicts v ON v.session_id = r.session_id WHERE r.run_id = ? " +
	"ORDER BY r.case_id, v.session_id, v.kind, v.name, v.agent, v.analysis_revision"

func (s *sqlStore) RunVerdicts(ctx context.Context, runID string) ([]reference.CaseVerdict, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(runVerdictsSQL), runID)
	if err != nil {
		return nil, fmt.Errorf("store: %s: run verdicts %q: %w", s.d.name, runID, err)
	}
	out := []reference.CaseVerdict{}
	var lastKind string
	for rows.Next() {
		var v reference.CaseVerdict
		var kind string
		var score sql.NullFloat64
		if err := rows.Scan(&v.CaseID, &v.SessionID, &kind, &v.Evaluator, &v.Agent, &score, &v.Pass, &v.Reason, &v.Error); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: run verdicts %q: %w", s.d.name, runID, err)
		}
		if score.Valid {
			v.Score = &score.Float64
		}
		if n := len(out); n > 0 && kind == lastKind && sameVerdictKey(out[n-1], v) {
			out[n-1] = v // a later revision's verdict
			continue
		}
		out, lastKind = append(out, v), kind
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("store: %s: run verdicts %q: %w", s.d.name, runID, err)
	}
	return out, nil
}

func sameVerdictKey(a, b reference.CaseVerdict) bool {
	return a.SessionID == b.SessionID && a.Evaluator == b.Evaluator && a.Agent == b.Agent
}
