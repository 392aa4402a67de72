-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- The verdict the turn counters hold for a turn, postgres dialect. Keep in step with the
-- other dialect's 00014_counted_verdict.sql.

-- +goose Up

-- counted_detection_type is the detection type of the final verdict the collectors
-- counted for the turn when that is not the one its record holds: a final verdict
-- emitted without its record saved (dropped over the bound while the database was down),
-- then claimed (ContinuationStore.ClaimFinal). NULL when the record's own is the one
-- counted: every final save sets it back to NULL. A later save reports it as the verdict
-- it replaced (SavedTurn.Replaced, docs/decisions/sessions.md §4.9).
ALTER TABLE turns ADD COLUMN counted_detection_type TEXT;

-- +goose Down
ALTER TABLE turns DROP COLUMN counted_detection_type;
