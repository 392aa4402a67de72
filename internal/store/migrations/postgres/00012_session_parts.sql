-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- A session stored in parts (docs/decisions/sessions.md §4.6), postgres dialect. Keep in
-- step with the other dialect's 00012_session_parts.sql.

-- +goose Up

-- A collector that forgot a session (continuation state in memory only: evicted, or
-- restarted) numbers its turns from 0 and its revisions from 1 again. The store places
-- such a part after the stored turns: turn_offset is added to the current part's turn
-- indexes and revision_offset to its revisions, in every save of that part. 0 and 0 for
-- a session stored in one part.
ALTER TABLE sessions ADD COLUMN turn_offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN revision_offset INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE sessions DROP COLUMN revision_offset;
ALTER TABLE sessions DROP COLUMN turn_offset;
