// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// OpenSession is a session a collector instance holds open: it has turn records in the
// continuation store newer than its last analysis revision.
type OpenSession struct {
	ID string
	// Owner is the collector instance holding it (Recovery.Hold).
	Owner string
	// Service and Agents are what the session analysis needs besides the turn records.
	Service string
	Agents  []string
}

// openMeta is the JSON of open_sessions.meta.
type openMeta struct {
	Service string   `json:"service,omitempty"`
	Agents  []string `json:"agents,omitempty"`
}

// Recovery finds the sessions of a collector that died (kill -9) before analysing them,
// so that another instance (or the restarted one) analyses them once
// (docs/decisions/result-durability.md). A running instance renews its lease
// (Heartbeat); the sessions it holds open (Hold) are orphans once its lease ended
// (Orphans), and Claim moves an orphan to the claiming instance only if it is still
// held by the dead one: of several instances claiming it at once, exactly one succeeds.
// Implementations are safe for concurrent use. The SQL store implements it; the memory
// continuation does not (it does not survive a restart).
type Recovery interface {
	// Heartbeat creates or renews owner's lease until until.
	Heartbeat(ctx context.Context, owner string, until time.Time) error
	// Leave deletes owner's lease (a clean shutdown, once it holds nothing).
	Leave(ctx context.Context, owner string) error
	// Hold records that sessions are held open by their Owner (an upsert by session and
	// owner: several instances may hold one session open, each until it releases it).
	// Call it before saving the sessions' first turn records.
	Hold(ctx context.Context, sessions []OpenSession) error
	// Release ends owner's hold of the sessions (owner emitted their analysis, over every
	// stored turn), and the holds of instances whose lease ended before now (their
	// stored turns are in that analysis). A hold of another live instance stays.
	Release(ctx context.Context, owner string, ids []string, now time.Time) error
	// Orphans returns at most limit holds of sessions by an instance whose lease ended
	// before now, or that has none, least recently held first. A session held by two
	// dead instances comes once for each.
	Orphans(ctx context.Context, now time.Time, limit int) ([]OpenSession, error)
	// Claim moves o's hold to owner if o.Owner still holds the session (owner keeps its
	// own hold if it has one); false when another instance claimed it first.
	Claim(ctx context.Context, o OpenSession, owner string) (bool, error)
}

var _ Recovery = (*sqlStore)(nil)

const (
	upsertLeaseSQL = "INSERT INTO collector_leases (owner, lease_until) VALUES (?, ?) " +
		"ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until"
	upsertOpenSQL = "INSERT INTO open_sessions (session_id, owner, meta, updated_at) VALUES (?, ?, ?, ?) " +
		"ON CONFLICT (session_id, owner) DO UPDATE SET meta = excluded.meta, updated_at = excluded.updated_at"
	orphansSQL = "SELECT o.session_id, o.owner, o.meta FROM open_sessions o " +
		"LEFT JOIN collector_leases l ON l.owner = o.owner " +
		"WHERE l.owner IS NULL OR l.lease_until < ? ORDER BY o.updated_at, o.session_id LIMIT ?"
	releaseSQL = "DELETE FROM open_sessions WHERE session_id = ? AND (owner = ? OR NOT EXISTS " +
		"(SELECT 1 FROM collector_leases l WHERE l.owner = open_sessions.owner AND l.lease_until >= ?))"
	claimSQL    = "DELETE FROM open_sessions WHERE session_id = ? AND owner = ?"
	takeOverSQL = "INSERT INTO open_sessions (session_id, owner, meta, updated_at) VALUES (?, ?, ?, ?) " +
		"ON CONFLICT (session_id, owner) DO NOTHING"
)

// Heartbeat implements Recovery.
func (s *sqlStore) Heartbeat(ctx context.Context, owner string, until time.Time) error {
	if _, err := s.execWrite(ctx, upsertLeaseSQL, owner, s.d.timeArg(until)); err != nil {
		return fmt.Errorf("store: %s: renew lease of %s: %w", s.d.name, owner, err)
	}
	return nil
}

// Leave implements Recovery.
func (s *sqlStore) Leave(ctx context.Context, owner string) error {
	if _, err := s.execWrite(ctx, "DELETE FROM collector_leases WHERE owner = ?", owner); err != nil {
		return fmt.Errorf("store: %s: delete lease of %s: %w", s.d.name, owner, err)
	}
	return nil
}

// Hold implements Recovery, in one transaction.
func (s *sqlStore) Hold(ctx context.Context, sessions []OpenSession) error {
	if len(sessions) == 0 {
		return nil
	}
	now := s.d.timeArg(time.Now())
	err := s.execEach(ctx, upsertOpenSQL, len(sessions), func(st *sql.Stmt, i int) error {
		o := &sessions[i]
		meta, err := json.Marshal(openMeta{Service: cleanText(o.Service), Agents: o.Agents})
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, cleanText(o.ID), o.Owner, string(meta), now); err != nil {
			return fmt.Errorf("hold %q: %w", o.ID, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: %s: hold %d sessions: %w", s.d.name, len(sessions), err)
	}
	return nil
}

// Release implements Recovery, in one transaction.
func (s *sqlStore) Release(ctx context.Context, owner string, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	until := s.d.timeArg(now)
	err := s.execEach(ctx, releaseSQL, len(ids), func(st *sql.Stmt, i int) error {
		if _, err := st.ExecContext(ctx, cleanText(ids[i]), owner, until); err != nil {
			return fmt.Errorf("release %q: %w", ids[i], err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: %s: release %d sessions: %w", s.d.name, len(ids), err)
	}
	return nil
}

// Orphans implements Recovery.
func (s *sqlStore) Orphans(ctx context.Context, now time.Time, limit int) ([]OpenSession, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(orphansSQL), s.d.timeArg(now), limit)
	if err != nil {
		return nil, fmt.Errorf("store: %s: orphaned sessions: %w", s.d.name, err)
	}
	var out []OpenSession
	for rows.Next() {
		var o OpenSession
		var doc string
		if err := rows.Scan(&o.ID, &o.Owner, &doc); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: orphaned sessions: %w", s.d.name, err)
		}
		var m openMeta
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: %s: orphaned session %q: decode meta: %w", s.d.name, o.ID, err)
		}
		o.Service, o.Agents = m.Service, m.Agents
		out = append(out, o)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("store: %s: orphaned sessions: %w", s.d.name, err)
	}
	return out, nil
}

// Claim implements Recovery in one transaction: a DELETE of the dead owner's row, so
// that of concurrent claims exactly one removes it (PostgreSQL re-checks the condition
// after the first claim's row lock is released; SQLite serialises writers), then the
// winner's row (kept as it is if the winner holds the session too).
func (s *sqlStore) Claim(ctx context.Context, o OpenSession, owner string) (bool, error) {
	id := cleanText(o.ID)
	meta, err := json.Marshal(openMeta{Service: cleanText(o.Service), Agents: o.Agents})
	if err != nil {
		return false, fmt.Errorf("store: %s: claim %q: %w", s.d.name, o.ID, err)
	}
	won := false
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		won = false // a write may run twice (sqliteFile.write)
		res, err := tx.ExecContext(ctx, s.d.rebind(claimSQL), id, o.Owner)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n != 1 {
			return err
		}
		won = true
		_, err = tx.ExecContext(ctx, s.d.rebind(takeOverSQL), id, owner, string(meta), s.d.timeArg(time.Now()))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: %s: claim %q: %w", s.d.name, o.ID, err)
	}
	return won, nil
}
