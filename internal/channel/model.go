// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package channel is the hosted multi-agent evaluation channel (docs/channel.md): a base
// of sessions, participants and ordered messages shared by every multi-agent evaluation,
// and two kinds on top of it: proctored evaluations (a proctor claims a candidate's
// registration, they talk, the proctor submits pass/fail) and live class work (several
// participants join a session and talk until its host ends it). It holds the state
// machine and every check; storage is behind Store, and it knows nothing of HTTP or of
// the collector.
package channel // import "github.com/agenteval/agenteval-collector/internal/channel"

import "time"

// Kind is the kind of a multi-agent session and the type of the evaluations the channel
// serves (the evaluation_sessions.kind discriminator).
type Kind string

const (
	// KindProctored is one proctor and one candidate; sessions are created by a claim.
	KindProctored Kind = "proctored"
	// KindLiveClassWork is a host and any number of participants.
	KindLiveClassWork Kind = "live_class_work"
)

// Role is a participant's role in a session.
type Role string

const (
	RoleProctor     Role = "proctor"     // proctored: asks (user side)
	RoleCandidate   Role = "candidate"   // proctored: answers (agent side)
	RoleHost        Role = "host"        // live class work: created the session (user side)
	RoleParticipant Role = "participant" // live class work: joined (agent side)
)

// UserSide reports whether the role speaks as the user of the conversation (its messages
// open turns) rather than as an evaluated agent.
func (r Role) UserSide() bool { return r == RoleProctor || r == RoleHost }

// RegistrationStatus is the life cycle of a registration: registered → in_progress
// (start) → completed (the proctor's submit).
type RegistrationStatus string

const (
	RegistrationRegistered RegistrationStatus = "registered"
	RegistrationInProgress RegistrationStatus = "in_progress"
	RegistrationCompleted  RegistrationStatus = "completed"
)

// SessionStatus is active until the submit (proctored) or the host's end (live class work).
type SessionStatus string

const (
	SessionActive SessionStatus = "active"
	SessionEnded  SessionStatus = "ended"
)

// Agent is an agent known to the channel (created by the admin endpoint).
type Agent struct {
	ID        string    `json:"agent_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// APIKey is the stored form of an agent's key: its public id and the SHA-256 of its
// secret (never the secret).
type APIKey struct {
	KeyID     string
	AgentID   string
	Hash      []byte
	CreatedAt time.Time
}

// Registration is a candidate's registration for an evaluation.
type Registration struct {
	ID           string             `json:"registration_id"`
	EvaluationID string             `json:"evaluation_id"`
	AgentID      string             `json:"agent_id"`
	Status       RegistrationStatus `json:"status"`
	RegisteredAt time.Time          `json:"registered_at"`
	StartedAt    *time.Time         `json:"started_at,omitempty"`
	CompletedAt  *time.Time         `json:"completed_at,omitempty"`
}

// Pending is a registration waiting for a proctor (GET .../pending-proctor).
type Pending struct {
	RegistrationID string `json:"registration_id"`
	CandidateID    string `json:"candidate_id"`
	CandidateName  string `json:"candidate_name"`
}

// Participant is an agent of a session with its role.
type Participant struct {
	ID       string    `json:"-"`
	AgentID  string    `json:"agent_id"`
	Role     Role      `json:"role"`
	JoinedAt time.Time `json:"joined_at"`
}

// Session is one run of a multi-agent evaluation. Its id is also the
// gen_ai.conversation.id of the spans its messages become, hence the session id of its
// evaluated analysis.
type Session struct {
	ID             string        `json:"session_id"`
	EvaluationID   string        `json:"evaluation_id"`
	Kind           Kind          `json:"kind"`
	RegistrationID string        `json:"registration_id,omitempty"`
	Status         SessionStatus `json:"status"`
	StartedAt      time.Time     `json:"started_at"`
	EndedAt        *time.Time    `json:"ended_at,omitempty"`
	// MessageCount is the number of messages, i.e. the last sequence given.
	MessageCount int64         `json:"message_count"`
	Participants []Participant `json:"participants"`
}

// Participant returns the session's participant with that agent id.
func (s *Session) Participant(agentID string) (Participant, bool) {
	for _, p := range s.Participants {
		if p.AgentID == agentID {
			return p, true
		}
	}
	return Participant{}, false
}

// Message is one message of a session's channel. Sequence numbers a session's messages
// 1, 2, 3... without gaps, in the order they were stored.
type Message struct {
	ID            string    `json:"id"`
	SessionID     string    `json:"-"`
	SenderAgentID string    `json:"sender_agent_id"`
	Role          Role      `json:"role"`
	Content       string    `json:"content"`
	CreatedAt     time.Time `json:"created_at"`
	Sequence      int64     `json:"sequence"`
}

// Result is the proctor's verdict on a registration.
type Result struct {
	ID              string    `json:"result_id"`
	EvaluationID    string    `json:"evaluation_id"`
	RegistrationID  string    `json:"registration_id"`
	AgentID         string    `json:"agent_id"`
	Passed          bool      `json:"passed"`
	ProctorAgentID  string    `json:"proctor_agent_id"`
	ProctorFeedback string    `json:"proctor_feedback"`
	SessionID       string    `json:"session_id"`
	CompletedAt     time.Time `json:"completed_at"`
}
