// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package store is the result store (docs/architecture.md §7): session analyses, per-agent scores,
// turn results, tool issues and recommendations in SQLite (embedded, pure Go) or
// PostgreSQL (pgx), with versioned migrations.
package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"errors"
	"time"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// ErrNotFound is returned by GetAnalysis for an unknown session id.
var ErrNotFound = errors.New("session not found")

// SessionSummary is one row of the session list (docs/architecture.md §11 GET /api/v1/agent_sessions).
type SessionSummary struct {
	SessionID      string    `json:"session_id"`
	StartedAt      time.Time `json:"started_at"`
	EndedAt        time.Time `json:"ended_at"`
	Partial        bool      `json:"partial"`
	OverallScore   *float64  `json:"overall_score"`
	TaskCompletion *bool     `json:"task_completion"`
	Agents         []string  `json:"agents"`
	Turns          int       `json:"turns"`
	// StoredAt is when this collector stored the session's current analysis (UTC): the
	// list order and retention use it, not the span times in EndedAt, which a client
	// controls (docs/decisions/ids-and-times.md).
	StoredAt time.Time `json:"stored_at"`
}

// Limits of ListSessions and AgentScoreHistory: a limit <= 0 means DefaultLimit, one
// above MaxLimit means MaxLimit.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Filter selects sessions; zero fields do not filter. Results are newest first (by
// stored_at: when the collector stored the analysis), at most Limit (default 100).
type Filter struct {
	// Limit caps the result: <= 0 means DefaultLimit (100), above MaxLimit (1000) means
	// MaxLimit.
	Limit int
	// Since keeps sessions with ended_at >= Since.
	Since time.Time
	// Agent keeps sessions in which this agent id has per_agent_scores.
	Agent string
	// MinScore and MaxScore keep sessions with MinScore <= overall_score <= MaxScore
	// (bounds inclusive); sessions without an overall_score are left out when either
	// is set.
	MinScore *float64
	MaxScore *float64
	// Partial, when set, keeps sessions whose partial flag equals it.
	Partial *bool
	// TaskCompletion, when set, keeps sessions whose task_completion equals it (sessions
	// without a task_completion verdict are left out).
	TaskCompletion *bool
	// After, when set, keeps the sessions that come after it in the list order (older,
	// or as old with a smaller session id): pass the last summary of a page to get the
	// next page (keyset pagination, stable while sessions are added).
	After *Cursor
}

// Cursor is a position in the session list: a session's stored_at and id.
type Cursor struct {
	StoredAt  time.Time
	SessionID string
}

// AgentScorePoint is one session's score for one agent (per-agent score history).
type AgentScorePoint struct {
	SessionID string                 `json:"session_id"`
	EndedAt   time.Time              `json:"ended_at"`
	Scores    evaluation.AgentScores `json:"scores"`
}

// BatchSaver is implemented by the stores of Open: SaveAnalyses saves a batch of
// analyses like SaveAnalysis, all in one transaction (all or nothing). Saving the same
// revision again changes nothing. A batch that fails with ErrRejected holds at least one
// analysis the store never takes; the others can be saved without it.
type BatchSaver interface {
	SaveAnalyses(ctx context.Context, as []*evaluation.Analysis) error
}

// Store persists analyses. Implementations are safe for concurrent use.
type Store interface {
	// SaveAnalysis inserts or replaces (by session id) the analysis and its derived rows
	// in one transaction, unless a newer analysis_revision of the session is stored.
	SaveAnalysis(ctx context.Context, a *evaluation.Analysis) error
	// GetAnalysis returns the stored analysis, or ErrNotFound.
	GetAnalysis(ctx context.Context, sessionID string) (*evaluation.Analysis, error)
	// ListSessions returns session summaries matching f, newest first.
	ListSessions(ctx context.Context, f Filter) ([]SessionSummary, error)
	// AgentScoreHistory returns an agent's scores, newest first, at most limit.
	AgentScoreHistory(ctx context.Context, agentID string, limit int) ([]AgentScorePoint, error)
	// DeleteStoredBefore deletes sessions stored before t (retention; stored_at, the
	// collector's clock, not the span times) and returns
	// how many were deleted.
	DeleteStoredBefore(ctx context.Context, t time.Time) (int64, error)
	// Close releases the database.
	Close() error
}
