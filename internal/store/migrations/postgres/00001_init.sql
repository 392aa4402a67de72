-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- Result store schema, PostgreSQL dialect (docs/decisions/store.md). Keep in step with
-- ../sqlite/00001_init.sql: same tables, columns, keys and indexes; only the types of
-- timestamps (here TIMESTAMPTZ) and JSON documents (here JSON) differ.
--
-- Timestamps are TIMESTAMPTZ (microsecond resolution; the analysis JSON keeps
-- nanoseconds). JSON documents use the json type, which stores the text as given (jsonb
-- would reject the \u0000 escape that captured model output can contain); cast to jsonb
-- in queries when needed.

-- +goose Up

-- One evaluated session (DESIGN.md §5.4, §7). Re-evaluation replaces the row and its
-- children (SaveAnalysis). analysis is the full Analysis JSON that the query API returns;
-- the other columns are copies of its fields, for filtering and for SQL users.
CREATE TABLE sessions (
    session_id         TEXT PRIMARY KEY,
    service            TEXT NOT NULL DEFAULT '',
    started_at         TIMESTAMPTZ NOT NULL,
    ended_at           TIMESTAMPTZ NOT NULL,
    partial            BOOLEAN NOT NULL DEFAULT FALSE,
    end_reason         TEXT NOT NULL DEFAULT '',
    overall_score      DOUBLE PRECISION,
    coordination_score DOUBLE PRECISION,
    intent_drift_score DOUBLE PRECISION,
    task_completion    BOOLEAN,
    turns              INTEGER NOT NULL DEFAULT 0,
    analysis           JSON NOT NULL,
    stored_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_ended_at_idx ON sessions (ended_at);
CREATE INDEX sessions_overall_score_idx ON sessions (overall_score);

-- One agent of a session with its per_agent_scores entry. ended_at is the session's,
-- copied so that an agent's history is one index range scan.
CREATE TABLE agent_scores (
    session_id          TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    agent_id            TEXT NOT NULL,
    ended_at            TIMESTAMPTZ NOT NULL,
    overall             DOUBLE PRECISION,
    tool_use            DOUBLE PRECISION,
    reasoning           DOUBLE PRECISION,
    handoff             DOUBLE PRECISION,
    response_quality    DOUBLE PRECISION,
    interactions_count  INTEGER NOT NULL,
    tool_calls          INTEGER NOT NULL,
    not_evaluable_calls INTEGER NOT NULL,
    mean_latency_ms     DOUBLE PRECISION NOT NULL,
    scores              JSON NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);
CREATE INDEX agent_scores_agent_id_idx ON agent_scores (agent_id, ended_at);

-- One turn's verdict; result is the TurnResult JSON (agent_eval.turn.result).
CREATE TABLE turn_results (
    session_id     TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    turn_index     INTEGER NOT NULL,
    trace_id       TEXT NOT NULL,
    root_span_id   TEXT NOT NULL,
    is_bad         BOOLEAN NOT NULL,
    detection_type TEXT NOT NULL,
    confidence     DOUBLE PRECISION NOT NULL,
    intent_drift   DOUBLE PRECISION,
    latency_ms     DOUBLE PRECISION NOT NULL,
    result         JSON NOT NULL,
    PRIMARY KEY (session_id, turn_index)
);

-- The analysis' tool_issues[], in order (ordinal = position, from 0).
CREATE TABLE tool_issues (
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    ordinal    INTEGER NOT NULL,
    turn_index INTEGER NOT NULL,
    agent_id   TEXT NOT NULL,
    tool_name  TEXT NOT NULL,
    issue      TEXT NOT NULL,
    severity   TEXT NOT NULL,
    parameter  TEXT NOT NULL DEFAULT '',
    span_id    TEXT NOT NULL,
    executed   BOOLEAN NOT NULL,
    message    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (session_id, ordinal)
);
CREATE INDEX tool_issues_agent_tool_idx ON tool_issues (agent_id, tool_name);

-- The analysis' recommendations[], in order (rank 1 = highest impact).
CREATE TABLE recommendations (
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    rank       INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    agent_id   TEXT NOT NULL DEFAULT '',
    tool_name  TEXT NOT NULL DEFAULT '',
    parameter  TEXT NOT NULL DEFAULT '',
    count      INTEGER NOT NULL DEFAULT 0,
    message    TEXT NOT NULL,
    impact     DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, rank)
);

-- SafeMolt proctor-led evaluations (DESIGN.md §8; seed safemolt-multi-agent-evaluations.md).
-- Evaluation definitions and agents (with their API keys) come from the receiver's
-- configuration, so evaluation_id and agent ids are plain text, not foreign keys.
-- Ids are the receiver's (eval_reg_..., eval_sess_..., eval_part_..., eval_msg_..., eval_res_...).

-- A candidate's registration for an evaluation; status: pending | in_progress | completed.
CREATE TABLE evaluation_registrations (
    id            TEXT PRIMARY KEY,
    evaluation_id TEXT NOT NULL,
    agent_id      TEXT NOT NULL,
    status        TEXT NOT NULL,
    registered_at TIMESTAMPTZ NOT NULL,
    started_at    TIMESTAMPTZ,
    completed_at  TIMESTAMPTZ
);
CREATE INDEX evaluation_registrations_evaluation_idx ON evaluation_registrations (evaluation_id, status);
CREATE INDEX evaluation_registrations_agent_idx ON evaluation_registrations (agent_id);

-- One run of a multi-agent evaluation; proctored sessions belong to exactly one
-- registration (created by the proctor's claim).
CREATE TABLE evaluation_sessions (
    id              TEXT PRIMARY KEY,
    evaluation_id   TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('proctored', 'live_class_work')),
    registration_id TEXT UNIQUE REFERENCES evaluation_registrations (id),
    status          TEXT NOT NULL CHECK (status IN ('active', 'ended')),
    started_at      TIMESTAMPTZ NOT NULL,
    ended_at        TIMESTAMPTZ,
    CHECK (kind <> 'proctored' OR registration_id IS NOT NULL)
);
CREATE INDEX evaluation_sessions_evaluation_idx ON evaluation_sessions (evaluation_id);

-- Who is in a session and in which role (proctor | candidate | participant).
CREATE TABLE evaluation_session_participants (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES evaluation_sessions (id) ON DELETE CASCADE,
    agent_id   TEXT NOT NULL,
    role       TEXT NOT NULL,
    joined_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (session_id, agent_id)
);

-- The session's channel: only participants post (composite foreign key); sequence
-- orders the transcript from 1.
CREATE TABLE evaluation_messages (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL REFERENCES evaluation_sessions (id) ON DELETE CASCADE,
    sender_agent_id TEXT NOT NULL,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    sequence        INTEGER NOT NULL,
    UNIQUE (session_id, sequence),
    FOREIGN KEY (session_id, sender_agent_id)
        REFERENCES evaluation_session_participants (session_id, agent_id)
);

-- The proctor's verdict; one per registration (no double submit).
CREATE TABLE evaluation_results (
    id               TEXT PRIMARY KEY,
    evaluation_id    TEXT NOT NULL,
    registration_id  TEXT NOT NULL UNIQUE REFERENCES evaluation_registrations (id),
    agent_id         TEXT NOT NULL,
    passed           BOOLEAN NOT NULL,
    proctor_agent_id TEXT,
    proctor_feedback TEXT,
    session_id       TEXT REFERENCES evaluation_sessions (id) ON DELETE SET NULL,
    completed_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX evaluation_results_evaluation_idx ON evaluation_results (evaluation_id);

-- +goose Down
DROP TABLE evaluation_results;
DROP TABLE evaluation_messages;
DROP TABLE evaluation_session_participants;
DROP TABLE evaluation_sessions;
DROP TABLE evaluation_registrations;
DROP TABLE recommendations;
DROP TABLE tool_issues;
DROP TABLE turn_results;
DROP TABLE agent_scores;
DROP TABLE sessions;
