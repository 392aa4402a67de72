// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel // import "github.com/agenteval/agenteval-collector/internal/channel"

import (
	"context"
	"time"
)

// Store persists the channel (internal/store implements it over SQLite and PostgreSQL).
// Methods return errors wrapping ErrNotFound or ErrConflict for the cases named; any other
// error is a storage failure. Every write that races with another is decided by the
// database (unique keys, conditional updates), so several collectors may share one
// PostgreSQL store.
type Store interface {
	// PutAgent creates the agent or renames it, and adds key to it, in one transaction.
	PutAgent(ctx context.Context, a Agent, key APIKey) error
	// Agent returns an agent; ErrNotFound if unknown.
	Agent(ctx context.Context, id string) (Agent, error)
	// AgentKey returns the key with that id and its agent; ErrNotFound if unknown.
	AgentKey(ctx context.Context, keyID string) (APIKey, Agent, error)

	// Register inserts r unless the agent has an active (registered or in_progress)
	// registration for the evaluation: then ErrConflict and that registration.
	Register(ctx context.Context, r Registration) (Registration, error)
	// StartRegistration moves the agent's registered registration for the evaluation to
	// in_progress; ErrNotFound without one, ErrConflict when it is already in progress.
	StartRegistration(ctx context.Context, evaluationID, agentID string, at time.Time) (Registration, error)
	// Registration returns a registration; ErrNotFound if unknown.
	Registration(ctx context.Context, id string) (Registration, error)
	// PendingRegistrations lists the evaluation's in_progress registrations that have
	// neither a session nor a result, oldest first, at most limit, leaving out excludeAgent's.
	PendingRegistrations(ctx context.Context, evaluationID, excludeAgent string, limit int) ([]Pending, error)

	// CreateSession inserts s with its participants in one transaction. For a proctored
	// session it fails with ErrConflict when the registration already has a session.
	CreateSession(ctx context.Context, s Session) error
	// Session returns a session with its participants; ErrNotFound if unknown.
	Session(ctx context.Context, id string) (Session, error)
	// SessionByRegistration returns the registration's session; ErrNotFound if none.
	SessionByRegistration(ctx context.Context, registrationID string) (Session, error)
	// AddParticipant adds p to an active session; ErrConflict if the session ended or the
	// agent is already in it.
	AddParticipant(ctx context.Context, sessionID string, p Participant) error
	// AddMessage appends m to an active session and returns it with the next sequence
	// (1, 2, 3... per session, gapless even under concurrent writers); ErrConflict if the
	// session ended.
	AddMessage(ctx context.Context, m Message) (Message, error)
	// Messages returns the session's messages with sequence > since, in sequence order,
	// at most limit (>= 1; none, and more false, when limit <= 0); when maxBytes > 0, also
	// only as many as hold at most maxBytes bytes of content together, but at least the
	// first (a message larger than maxBytes comes alone), so that a call returns a message
	// whenever one follows since. more reports that messages followed the returned ones
	// when they were read, from the same read (messages posted while the caller read
	// anything else are counted), so that a reader stops exactly at the end.
	Messages(ctx context.Context, sessionID string, since int64, limit, maxBytes int) (msgs []Message, more bool, err error)
	// EndSession sets an active session ended at t; ErrConflict if it already ended.
	EndSession(ctx context.Context, sessionID string, t time.Time) error

	// SubmitResult stores r, completes its registration and ends its session (if any), in
	// one transaction; ErrConflict when the registration already has a result.
	SubmitResult(ctx context.Context, r Result) error
	// Result returns a result; ErrNotFound if unknown.
	Result(ctx context.Context, id string) (Result, error)
}
