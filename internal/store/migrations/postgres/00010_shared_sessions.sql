-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- One session open on several collectors sharing the store (docs/decisions/sessions.md
-- §4.5), postgres dialect. Keep in step with the other dialect's 00010_shared_sessions.sql.

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
ALTER TABLE open_sessions DROP CONSTRAINT open_sessions_pkey;
ALTER TABLE open_sessions ADD PRIMARY KEY (session_id, owner);

-- +goose Down
DELETE FROM open_sessions o USING open_sessions n
    WHERE o.session_id = n.session_id AND (o.updated_at, o.owner) < (n.updated_at, n.owner);
ALTER TABLE open_sessions DROP CONSTRAINT open_sessions_pkey;
ALTER TABLE open_sessions ADD PRIMARY KEY (session_id);
ALTER TABLE turns DROP COLUMN verdict_stage;
