// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// JudgeVerdict is one judge verdict on a stored session, stored when it arrives, which is
// usually after the session's analysis (the judge runs on its own pool, off the trace
// pipeline): docs/decisions/reference-and-judge.md. The analysis keeps its deterministic
// scores; the verdicts sit next to it, keyed by (session id, analysis revision, kind,
// name, agent).
type JudgeVerdict struct {
	SessionID string `json:"session_id"`
	// AnalysisRevision is the analysis revision judged (a continued session is judged
	// again: its verdicts get the new revision).
	AnalysisRevision int `json:"analysis_revision"`
	// Kind is the span kind that carried it: "judge" (session metrics) or "reference"
	// (a dataset case's interactions).
	Kind string `json:"kind"`
	// Name is the metric (reasoning, response_quality, ...) or evaluator name.
	Name string `json:"name"`
	// Agent is the judged agent; "" for the session.
	Agent string `json:"agent,omitempty"`
	// Score is in [0,1]; nil when the judge could not give one (JudgeError says why).
	Score *float64 `json:"score"`
	Pass  bool     `json:"pass"`
	// Reason is the judge's explanation.
	Reason string `json:"reason,omitempty"`
	// JudgeError is why the judge could not judge (timeout, budget, cost limit,
	// malformed answer); "" when judged.
	JudgeError string `json:"judge_error,omitempty"`
	// EvaluatorVersion is the judge configuration's hash (agent_eval.evaluator.version).
	EvaluatorVersion string `json:"evaluator_version"`
}

// VerdictStore stores and reads late judge verdicts; the stores of Open implement it.
type VerdictStore interface {
	// SaveVerdicts upserts the verdicts in one transaction: a verdict delivered again
	// (an export retried) replaces its row, never adds one. A value the database refuses
	// fails it with ErrRejected.
	SaveVerdicts(ctx context.Context, vs []JudgeVerdict) error
	// JudgeVerdicts returns a session's verdicts ordered by revision, kind, name and
	// agent; empty (not an error) for a session without any.
	JudgeVerdicts(ctx context.Context, sessionID string) ([]JudgeVerdict, error)
}

var _ VerdictStore = (*sqlStore)(nil)

const upsertVerdictSQL = "INSERT INTO judge_verdicts (session_id, analysis_revision, kind, name, agent, score, pass, reason, " +
	"judge_error, evaluator_version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) " +
	"ON CONFLICT (session_id, analysis_revision, kind, name, agent) DO UPDATE SET score = excluded.score, " +
	"pass = excluded.pass, reason = excluded.reason, judge_error = excluded.judge_error, " +
	"evaluator_version = excluded.evaluator_version, updated_at = excluded.updated_at"

func (s *sqlStore) SaveVerdicts(ctx context.Context, vs []JudgeVerdict) error {
	if len(vs) == 0 {
		return nil
	}
	for i := range vs {
		if err := checkInt32("analysis_revision", vs[i].AnalysisRevision); err != nil {
			return rejectedError{fmt.Errorf("store: %s: save judge verdict %q/%s/%s: %w", s.d.name, vs[i].SessionID, vs[i].Name, vs[i].Agent, err)}
		}
	}
	now := s.d.timeArg(time.Now())
	err := s.execEach(ctx, upsertVerdictSQL, len(vs), func(st *sql.Stmt, i int) error {
		v := &vs[i]
		var score any
		if v.Score != nil {
			score = *v.Score
		}
		if _, err := st.ExecContext(ctx, cleanText(v.SessionID), v.AnalysisRevision, cleanText(v.Kind), cleanText(v.Name),
			nameKey(v.Agent), score, v.Pass, cleanText(v.Reason), cleanText(v.JudgeError), cleanText(v.EvaluatorVersion), now); err != nil {
			return fmt.Errorf("upsert verdict %q/%s/%s: %w", v.SessionID, v.Name, v.Agent, err)
		}
		return nil
	})
	if err != nil {
		return rejected(fmt.Errorf("store: %s: save %d judge verdicts: %w", s.d.name, len(vs), err))
	}
	return nil
}

func (s *sqlStore) JudgeVerdicts(ctx context.Context, sessionID string) ([]JudgeVerdict, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind("SELECT analysis_revision, kind, name, agent, score, pass, reason, judge_error, "+
		"evaluator_version FROM judge_verdicts WHERE session_id = ? ORDER BY analysis_revision, kind, name, agent"), cleanText(sessionID))
	if err != nil {
		return nil, fmt.Errorf("store: %s: judge verdicts %q: %w", s.d.name, sessionID, err)
	}
	out := []JudgeVerdict{}
	for rows.Next() {
		v := JudgeVerdict{SessionID: sessionID}
		var score sql.NullFloat64
		if err := rows.Scan(&v.AnalysisRevision, &v.Kind, &v.Name, &v.Agent, &score, &v.Pass, &v.Reason, &v.JudgeError, &v.EvaluatorVersion); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: judge verdicts %q: %w", s.d.name, sessionID, err)
		}
		if score.Valid {
			v.Score = &score.Float64
		}
		out = append(out, v)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("store: %s: judge verdicts %q: %w", s.d.name, sessionID, err)
	}
	return out, nil
}
