-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- How far a stored turn's verdict is (docs/decisions/sessions.md §4.5), sqlite dialect.
-- Keep in step with the other dialect's 00010_turn_verdict_stage.sql.

-- +goose Up

-- 0: provisional, 1: final without the next turn's user message (the session went
-- idle before it was known), 2: final with it. A write never lowers it, so a verdict
-- given without follow-up by one collector never replaces the one another collector
-- gave with the follow-up. Final rows written before this column are taken as 2.
ALTER TABLE turns ADD COLUMN verdict_stage INTEGER NOT NULL DEFAULT 0;
UPDATE turns SET verdict_stage = 2 WHERE final;

-- +goose Down
ALTER TABLE turns DROP COLUMN verdict_stage;
