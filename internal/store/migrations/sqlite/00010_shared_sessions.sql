-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- One session open on several collectors sharing the store (docs/decisions/sessions.md
-- §4.5), sqlite dialect. Keep in step with the other dialect's 00010_shared_sessions.sql.

-- +goose Up

-- How far a stored turn's verdict is: 0 provisional, 1 final without the next turn's
-- user message (the session went idle before it was known), 2 final with it. A write
-- never lowers it, so a verdict given without follow-up by one collector never replaces
-- the one another collector gave with the follow-up. Final rows written before this
-- column are taken as 2.
ALTER TABLE turns ADD COLUMN verdict_stage INTEGER NOT NULL DEFAULT 0;
UPDATE turns SET verdict_stage = 2 WHERE final;

-- A session is held open by each collector that saved turns of it since its last
-- analysis there: one row per (session, collector), so that one collector ending the
-- session leaves the other's hold, and the other's crash is still recovered.
CREATE TABLE open_sessions_by_owner (
    session_id TEXT NOT NULL,
    owner      TEXT NOT NULL,
    meta       TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, owner)
);
INSERT INTO open_sessions_by_owner (session_id, owner, meta, updated_at)
    SELECT session_id, owner, meta, updated_at FROM open_sessions;
DROP TABLE open_sessions;
ALTER TABLE open_sessions_by_owner RENAME TO open_sessions;
CREATE INDEX open_sessions_owner_idx ON open_sessions (owner);

-- +goose Down
CREATE TABLE open_sessions_by_id (
    session_id TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    meta       TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
INSERT OR REPLACE INTO open_sessions_by_id (session_id, owner, meta, updated_at)
    SELECT session_id, owner, meta, updated_at FROM open_sessions ORDER BY updated_at;
DROP TABLE open_sessions;
ALTER TABLE open_sessions_by_id RENAME TO open_sessions;
CREATE INDEX open_sessions_owner_idx ON open_sessions (owner);
ALTER TABLE turns DROP COLUMN verdict_stage;
