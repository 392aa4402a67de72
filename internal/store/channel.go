// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/agenteval/agenteval-collector/internal/channel"
)

// ChannelStore is the evaluation channel's storage (channel.Store) over the same
// database, tables and migrations as the result store: evaluation_agents,
// evaluation_api_keys, evaluation_registrations, evaluation_sessions,
// evaluation_session_participants, evaluation_messages and evaluation_results
// (migrations/*/00001_init.sql, 00003_channel.sql). Safe for concurrent use, also by
// several processes sharing one PostgreSQL database: every race is decided by a unique
// key or a conditional UPDATE.
type ChannelStore struct {
	s *sqlStore
}

var _ channel.Store = (*ChannelStore)(nil)

// OpenChannel opens and migrates the store like Open (same drivers and DSNs) and returns
// its channel side.
func OpenChannel(ctx context.Context, driver, dsn string) (*ChannelStore, error) {
	st, err := Open(ctx, driver, dsn)
	if err != nil {
		return nil, err
	}
	return &ChannelStore{s: st.(*sqlStore)}, nil
}

// ChannelOf returns the channel side of a store opened with Open, sharing its
// connection pool (for the query API and the web UI: an analysis' session id is its channel
// session id, so ChannelOf(st).Session and .Messages give its transcript). Closing the
// result closes st.
func ChannelOf(st Store) (*ChannelStore, bool) {
	s, ok := st.(*sqlStore)
	if !ok {
		return nil, false
	}
	return &ChannelStore{s: s}, true
}

// Close releases the database.
func (c *ChannelStore) Close() error { return c.s.Close() }

func (c *ChannelStore) q(query string) string { return c.s.d.rebind(query) }
func (c *ChannelStore) t(t time.Time) any     { return c.s.d.timeArg(t) }

func (c *ChannelStore) wrap(op string, err error) error {
	if err == nil || errors.Is(err, channel.ErrNotFound) || errors.Is(err, channel.ErrConflict) {
		return err
	}
	return fmt.Errorf("store: %s: %s: %w", c.s.d.name, op, err)
}

// nullTimeDest scans a nullable timestamp column into a *time.Time (nil for NULL).
type nullTimeDest struct{ t **time.Time }

func (d nullTimeDest) Scan(src any) error {
	if src == nil {
		*d.t = nil
		return nil
	}
	var t time.Time
	if err := (timeDest{&t}).Scan(src); err != nil {
		return err
	}
	*d.t = &t
	return nil
}

// PutAgent implements channel.Store.
func (c *ChannelStore) PutAgent(ctx context.Context, a channel.Agent, key channel.APIKey) error {
	return c.wrap("put agent", c.s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, c.q("INSERT INTO evaluation_agents (id, name, created_at) VALUES (?, ?, ?) "+
			"ON CONFLICT (id) DO UPDATE SET name = excluded.name"), cleanText(a.ID), cleanText(a.Name), c.t(a.CreatedAt)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, c.q("INSERT INTO evaluation_api_keys (key_id, agent_id, key_hash, created_at) VALUES (?, ?, ?, ?)"),
			key.KeyID, cleanText(a.ID), hex.EncodeToString(key.Hash), c.t(key.CreatedAt))
		return err
	}))
}

// Agent implements channel.Store.
func (c *ChannelStore) Agent(ctx context.Context, id string) (channel.Agent, error) {
	var a channel.Agent
	err := c.s.db.QueryRowContext(ctx, c.q("SELECT id, name, created_at FROM evaluation_agents WHERE id = ?"), cleanText(id)).
		Scan(&a.ID, &a.Name, timeDest{&a.CreatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return a, channel.Errorf(channel.ErrNotFound, "agent %q not found", id)
	}
	return a, c.wrap("agent", err)
}

// AgentKey implements channel.Store.
func (c *ChannelStore) AgentKey(ctx context.Context, keyID string) (channel.APIKey, channel.Agent, error) {
	var (
		k    channel.APIKey
		a    channel.Agent
		hash string
	)
	err := c.s.db.QueryRowContext(ctx, c.q("SELECT k.key_id, k.key_hash, k.created_at, a.id, a.name, a.created_at "+
		"FROM evaluation_api_keys k JOIN evaluation_agents a ON a.id = k.agent_id WHERE k.key_id = ?"), keyID).
		Scan(&k.KeyID, &hash, timeDest{&k.CreatedAt}, &a.ID, &a.Name, timeDest{&a.CreatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return k, a, channel.Errorf(channel.ErrNotFound, "key not found")
	}
	if err != nil {
		return k, a, c.wrap("agent key", err)
	}
	k.AgentID = a.ID
	if k.Hash, err = hex.DecodeString(hash); err != nil {
		return k, a, c.wrap("agent key", err)
	}
	return k, a, nil
}

const registrationCols = "id, evaluation_id, agent_id, status, registered_at, started_at, completed_at"

func scanRegistration(row interface{ Scan(...any) error }) (channel.Registration, error) {
	var r channel.Registration
	err := row.Scan(&r.ID, &r.EvaluationID, &r.AgentID, &r.Status, timeDest{&r.RegisteredAt},
		nullTimeDest{&r.StartedAt}, nullTimeDest{&r.CompletedAt})
	return r, err
}

// Register implements channel.Store.
func (c *ChannelStore) Register(ctx context.Context, r channel.Registration) (channel.Registration, error) {
	res, err := c.s.execWrite(ctx, "INSERT INTO evaluation_registrations (id, evaluation_id, agent_id, status, registered_at) "+
		"VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", r.ID, r.EvaluationID, cleanText(r.AgentID), string(r.Status), c.t(r.RegisteredAt))
	if err != nil {
		return r, c.wrap("register", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return r, c.wrap("register", err)
	}
	prev, err := scanRegistration(c.s.db.QueryRowContext(ctx, c.q("SELECT "+registrationCols+" FROM evaluation_registrations "+
		"WHERE evaluation_id = ? AND agent_id = ? AND status IN ('registered', 'in_progress')"), r.EvaluationID, cleanText(r.AgentID)))
	if err != nil {
		return r, c.wrap("register", err)
	}
	return prev, channel.Errorf(channel.ErrConflict, "agent %q already has registration %q (%s) for evaluation %q",
		r.AgentID, prev.ID, prev.Status, r.EvaluationID)
}

// StartRegistration implements channel.Store.
func (c *ChannelStore) StartRegistration(ctx context.Context, evaluationID, agentID string, at time.Time) (channel.Registration, error) {
	res, err := c.s.execWrite(ctx, "UPDATE evaluation_registrations SET status = 'in_progress', started_at = ? "+
		"WHERE evaluation_id = ? AND agent_id = ? AND status = 'registered'", c.t(at), evaluationID, cleanText(agentID))
	if err != nil {
		return channel.Registration{}, c.wrap("start", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return channel.Registration{}, c.wrap("start", err)
	}
	r, err := scanRegistration(c.s.db.QueryRowContext(ctx, c.q("SELECT "+registrationCols+" FROM evaluation_registrations "+
		"WHERE evaluation_id = ? AND agent_id = ? AND status IN ('registered', 'in_progress')"), evaluationID, cleanText(agentID)))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, channel.Errorf(channel.ErrNotFound, "agent %q has no active registration for evaluation %q: register first", agentID, evaluationID)
	case err != nil:
		return r, c.wrap("start", err)
	case n == 0:
		return r, channel.Errorf(channel.ErrConflict, "registration %q is already %s", r.ID, r.Status)
	}
	return r, nil
}

// Registration implements channel.Store.
func (c *ChannelStore) Registration(ctx context.Context, id string) (channel.Registration, error) {
	r, err := scanRegistration(c.s.db.QueryRowContext(ctx, c.q("SELECT "+registrationCols+" FROM evaluation_registrations WHERE id = ?"), cleanText(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return r, channel.Errorf(channel.ErrNotFound, "registration %q not found", id)
	}
	return r, c.wrap("registration", err)
}

// PendingRegistrations implements channel.Store.
func (c *ChannelStore) PendingRegistrations(ctx context.Context, evaluationID, excludeAgent string, limit int) ([]channel.Pending, error) {
	rows, err := c.s.db.QueryContext(ctx, c.q("SELECT r.id, r.agent_id, COALESCE(a.name, r.agent_id) "+
		"FROM evaluation_registrations r LEFT JOIN evaluation_agents a ON a.id = r.agent_id "+
		"WHERE r.evaluation_id = ? AND r.status = 'in_progress' AND r.agent_id <> ? "+
		"AND NOT EXISTS (SELECT 1 FROM evaluation_sessions s WHERE s.registration_id = r.id) "+
		"AND NOT EXISTS (SELECT 1 FROM evaluation_results x WHERE x.registration_id = r.id) "+
		"ORDER BY r.started_at, r.id LIMIT ?"), evaluationID, cleanText(excludeAgent), limit)
	if err != nil {
		return nil, c.wrap("pending", err)
	}
	out := []channel.Pending{}
	for rows.Next() {
		var p channel.Pending
		if err := rows.Scan(&p.RegistrationID, &p.CandidateID, &p.CandidateName); err != nil {
			_ = rows.Close()
			return nil, c.wrap("pending", err)
		}
		out = append(out, p)
	}
	return out, c.wrap("pending", closeRows(rows))
}

// CreateSession implements channel.Store.
func (c *ChannelStore) CreateSession(ctx context.Context, s channel.Session) error {
	var reg any
	if s.RegistrationID != "" {
		reg = s.RegistrationID
	}
	return c.wrap("create session", c.s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, c.q("INSERT INTO evaluation_sessions (id, evaluation_id, kind, registration_id, status, started_at) "+
			"VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"), s.ID, s.EvaluationID, string(s.Kind), reg, string(s.Status), c.t(s.StartedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return channel.Errorf(channel.ErrConflict, "registration %q has already been claimed", s.RegistrationID)
		}
		for _, p := range s.Participants {
			if err := c.insertParticipant(ctx, tx, s.ID, p); err != nil {
				return err
			}
		}
		return nil
	}))
}

func (c *ChannelStore) insertParticipant(ctx context.Context, tx *sql.Tx, sessionID string, p channel.Participant) error {
	res, err := tx.ExecContext(ctx, c.q("INSERT INTO evaluation_session_participants (id, session_id, agent_id, role, joined_at) "+
		"VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"), p.ID, sessionID, cleanText(p.AgentID), string(p.Role), c.t(p.JoinedAt))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return channel.Errorf(channel.ErrConflict, "agent %q is already a participant of session %q", p.AgentID, sessionID)
	}
	return nil
}

const channelSessionCols = "id, evaluation_id, kind, registration_id, status, started_at, ended_at, message_count"

// Session implements channel.Store.
func (c *ChannelStore) Session(ctx context.Context, id string) (channel.Session, error) {
	return c.session(ctx, "id", id)
}

// SessionByRegistration implements channel.Store.
func (c *ChannelStore) SessionByRegistration(ctx context.Context, registrationID string) (channel.Session, error) {
	return c.session(ctx, "registration_id", registrationID)
}

// session reads a session by col; participants in joining order (a proctor before its
// candidate, who join at the same instant: role DESC).
func (c *ChannelStore) session(ctx context.Context, col, v string) (channel.Session, error) {
	var (
		s   channel.Session
		reg sql.NullString
	)
	err := c.s.db.QueryRowContext(ctx, c.q("SELECT "+channelSessionCols+" FROM evaluation_sessions WHERE "+col+" = ?"), cleanText(v)).
		Scan(&s.ID, &s.EvaluationID, &s.Kind, &reg, &s.Status, timeDest{&s.StartedAt}, nullTimeDest{&s.EndedAt}, &s.MessageCount)
	if errors.Is(err, sql.ErrNoRows) {
		return s, channel.Errorf(channel.ErrNotFound, "session not found (%s %q)", col, v)
	}
	if err != nil {
		return s, c.wrap("session", err)
	}
	s.RegistrationID = reg.String
	rows, err := c.s.db.QueryContext(ctx, c.q("SELECT id, agent_id, role, joined_at FROM evaluation_session_participants "+
		"WHERE session_id = ? ORDER BY joined_at, role DESC, agent_id"), s.ID)
	if err != nil {
		return s, c.wrap("session", err)
	}
	for rows.Next() {
		var p channel.Participant
		if err := rows.Scan(&p.ID, &p.AgentID, &p.Role, timeDest{&p.JoinedAt}); err != nil {
			_ = rows.Close()
			return s, c.wrap("session", err)
		}
		s.Participants = append(s.Participants, p)
	}
	return s, c.wrap("session", closeRows(rows))
}

// sessionGone explains why a conditional update of an active session touched no row.
func (c *ChannelStore) sessionGone(ctx context.Context, tx *sql.Tx, id string) error {
	var status string
	err := tx.QueryRowContext(ctx, c.q("SELECT status FROM evaluation_sessions WHERE id = ?"), id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return channel.Errorf(channel.ErrNotFound, "session %q not found", id)
	}
	if err != nil {
		return err
	}
	return channel.Errorf(channel.ErrConflict, "session %q has ended", id)
}

// AddParticipant implements channel.Store.
func (c *ChannelStore) AddParticipant(ctx context.Context, sessionID string, p channel.Participant) error {
	return c.wrap("add participant", c.s.inTx(ctx, func(tx *sql.Tx) error {
		var status string
		err := tx.QueryRowContext(ctx, c.q("SELECT status FROM evaluation_sessions WHERE id = ?"), sessionID).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return channel.Errorf(channel.ErrNotFound, "session %q not found", sessionID)
		}
		if err != nil {
			return err
		}
		if status != string(channel.SessionActive) {
			return channel.Errorf(channel.ErrConflict, "session %q has ended", sessionID)
		}
		return c.insertParticipant(ctx, tx, sessionID, p)
	}))
}

// AddMessage implements channel.Store: the session's message_count is incremented by a
// conditional UPDATE (which holds the row's write lock until commit on PostgreSQL, and
// the database's write lock on SQLite), then the message is inserted with that sequence,
// in one transaction: sequences are gapless and ordered under concurrent writers.
func (c *ChannelStore) AddMessage(ctx context.Context, m channel.Message) (channel.Message, error) {
	err := c.s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, c.q("UPDATE evaluation_sessions SET message_count = message_count + 1 "+
			"WHERE id = ? AND status = 'active' RETURNING message_count"), m.SessionID).Scan(&m.Sequence)
		if errors.Is(err, sql.ErrNoRows) {
			return c.sessionGone(ctx, tx, m.SessionID)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, c.q("INSERT INTO evaluation_messages (id, session_id, sender_agent_id, role, content, created_at, sequence) "+
			"VALUES (?, ?, ?, ?, ?, ?, ?)"), m.ID, m.SessionID, cleanText(m.SenderAgentID), string(m.Role), cleanText(m.Content), c.t(m.CreatedAt), m.Sequence)
		return err
	})
	return m, c.wrap("add message", err)
}

// Messages implements channel.Store. With maxBytes > 0 it first reads the sizes of the
// next limit+1 messages (octet_length, which neither database computes by reading the
// content), keeps the prefix within maxBytes (at least one message, at most limit), and
// only then reads those messages: the content read is bounded by the budget, not by
// limit. Without maxBytes it reads limit+1 messages. Either way the row after the kept
// ones, if any, is more: it comes from the same query, not from a count read earlier.
// The second read holds the same messages as the first: messages are never deleted, and
// a message is visible only after every earlier sequence (AddMessage).
func (c *ChannelStore) Messages(ctx context.Context, sessionID string, since int64, limit, maxBytes int) ([]channel.Message, bool, error) {
	if limit <= 0 {
		return []channel.Message{}, false, nil
	}
	read, more := limit+1, false
	if maxBytes > 0 {
		n, m, err := c.fitting(ctx, sessionID, since, limit, maxBytes)
		if err != nil {
			return nil, false, c.wrap("messages", err)
		}
		limit, read, more = n, n, m
		if n == 0 {
			return []channel.Message{}, false, nil
		}
	}
	rows, err := c.s.db.QueryContext(ctx, c.q("SELECT id, session_id, sender_agent_id, role, content, created_at, sequence "+
		"FROM evaluation_messages WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?"), sessionID, since, read)
	if err != nil {
		return nil, false, c.wrap("messages", err)
	}
	out := []channel.Message{}
	for rows.Next() {
		var m channel.Message
		if err := rows.Scan(&m.ID, &m.SessionID, &m.SenderAgentID, &m.Role, &m.Content, timeDest{&m.CreatedAt}, &m.Sequence); err != nil {
			_ = rows.Close()
			return nil, false, c.wrap("messages", err)
		}
		out = append(out, m)
	}
	if err := closeRows(rows); err != nil {
		return nil, false, c.wrap("messages", err)
	}
	if len(out) > limit {
		out, more = out[:limit], true
	}
	return out, more, nil
}

// fitting returns how many of the at most limit messages after since hold at most
// maxBytes bytes of content together: at least 1 if any follows (a larger message is a
// page alone), 0 if none does; and whether messages follow those (more), from the sizes
// of limit+1 messages.
func (c *ChannelStore) fitting(ctx context.Context, sessionID string, since int64, limit, maxBytes int) (n int, more bool, err error) {
	rows, err := c.s.db.QueryContext(ctx, c.q("SELECT octet_length(content) FROM evaluation_messages "+
		"WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?"), sessionID, since, limit+1)
	if err != nil {
		return 0, false, err
	}
	total := 0
	for rows.Next() {
		var size int
		if err := rows.Scan(&size); err != nil {
			_ = rows.Close()
			return 0, false, err
		}
		if total += size; n == limit || (n > 0 && total > maxBytes) {
			more = true
			break
		}
		n++
	}
	return n, more, closeRows(rows)
}

// EndSession implements channel.Store.
func (c *ChannelStore) EndSession(ctx context.Context, sessionID string, t time.Time) error {
	return c.wrap("end session", c.s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, c.q("UPDATE evaluation_sessions SET status = 'ended', ended_at = ? WHERE id = ? AND status = 'active'"),
			c.t(t), sessionID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return c.sessionGone(ctx, tx, sessionID)
		}
		return nil
	}))
}

// SubmitResult implements channel.Store.
func (c *ChannelStore) SubmitResult(ctx context.Context, r channel.Result) error {
	var sess any
	if r.SessionID != "" {
		sess = r.SessionID
	}
	return c.wrap("submit", c.s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, c.q("INSERT INTO evaluation_results (id, evaluation_id, registration_id, agent_id, passed, "+
			"proctor_agent_id, proctor_feedback, session_id, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
			r.ID, r.EvaluationID, r.RegistrationID, cleanText(r.AgentID), r.Passed, cleanText(r.ProctorAgentID),
			cleanText(r.ProctorFeedback), sess, c.t(r.CompletedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return channel.Errorf(channel.ErrConflict, "registration %q already has a result", r.RegistrationID)
		}
		if _, err := tx.ExecContext(ctx, c.q("UPDATE evaluation_registrations SET status = 'completed', completed_at = ? WHERE id = ?"),
			c.t(r.CompletedAt), r.RegistrationID); err != nil {
			return err
		}
		if r.SessionID != "" {
			if _, err := tx.ExecContext(ctx, c.q("UPDATE evaluation_sessions SET status = 'ended', ended_at = ? WHERE id = ? AND status = 'active'"),
				c.t(r.CompletedAt), r.SessionID); err != nil {
				return err
			}
		}
		return nil
	}))
}

// Result implements channel.Store.
func (c *ChannelStore) Result(ctx context.Context, id string) (channel.Result, error) {
	var (
		r                  channel.Result
		proctor, fb, sessN sql.NullString
	)
	err := c.s.db.QueryRowContext(ctx, c.q("SELECT id, evaluation_id, registration_id, agent_id, passed, proctor_agent_id, "+
		"proctor_feedback, session_id, completed_at FROM evaluation_results WHERE id = ?"), cleanText(id)).
		Scan(&r.ID, &r.EvaluationID, &r.RegistrationID, &r.AgentID, &r.Passed, &proctor, &fb, &sessN, timeDest{&r.CompletedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return r, channel.Errorf(channel.ErrNotFound, "result %q not found", id)
	}
	r.ProctorAgentID, r.ProctorFeedback, r.SessionID = proctor.String, fb.String, sessN.String
	return r, c.wrap("result", err)
}
