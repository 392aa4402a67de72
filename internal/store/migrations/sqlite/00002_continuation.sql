-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- Session continuation and analysis revisions (docs/decisions/sessions.md §4), sqlite
-- dialect. Keep in step with the other dialect's 00002_continuation.sql.

-- +goose Up

-- A session continued after it went idle is analysed again over all its turns and
-- stored as a new revision; the sessions row holds the latest (an older revision never
-- replaces a newer one).
ALTER TABLE sessions ADD COLUMN analysis_revision INTEGER NOT NULL DEFAULT 0;

-- Every stored revision of a session's analysis (written once: a retried export of the
-- same revision changes nothing).
CREATE TABLE session_analyses (
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    revision   INTEGER NOT NULL,
    analysis   TEXT NOT NULL,
    stored_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, revision)
);

-- One row per closed turn, keyed by its trace: what the session analysis and a
-- continued session need of it (evaluation.TurnRecord JSON), written by the processor
-- when the turn closes and when its verdict becomes final. turn_index is the turn's
-- stable index in its session.
CREATE TABLE turns (
    session_id TEXT NOT NULL,
    trace_id   TEXT NOT NULL,
    turn_index INTEGER NOT NULL,
    final      BOOLEAN NOT NULL,
    record     TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, trace_id)
);
CREATE INDEX turns_session_index_idx ON turns (session_id, turn_index);

-- The last analysis revision the processor emitted for a session.
CREATE TABLE session_revisions (
    session_id TEXT PRIMARY KEY,
    revision   INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);

-- +goose Down
DROP TABLE session_revisions;
DROP TABLE turns;
DROP TABLE session_analyses;
ALTER TABLE sessions DROP COLUMN analysis_revision;
