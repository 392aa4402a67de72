-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- The verdict stage of a stored turn result, postgres dialect. Keep in step with the other
-- dialect's 00015_turn_result_stage.sql.

-- +goose Up

-- verdict_stage is the stage of the turn's verdict in result: 0 provisional, 1 final
-- without the next turn's user message, 2 final with it (evaluation.VerdictStage, as the
-- continuation store's turns.verdict_stage). A save that rewrites a stored turn keeps the
-- stored row when its stage is higher: an older revision of another collector, stored
-- after the newer one because it adds turns, never takes a turn's verdict back
-- (docs/decisions/sessions.md §4.5).
ALTER TABLE turn_results ADD COLUMN verdict_stage INTEGER NOT NULL DEFAULT 0;

-- A row stored before holds no stage, only its result's final flag, and a final verdict
-- with follow-up cannot be told from one without: such a row is taken as final without
-- follow-up (1), the lower of the two, so that it holds back no later final save (one
-- of either stage replaces it, as before this column), only a provisional one. Taken as
-- 2, a row whose verdict was without follow-up would keep it over a later save's verdict
-- of the same stage. A provisional row is 0 (the default). The flag is matched in the
-- text: PostgreSQL's JSON operators refuse a document that holds \u0000 (a NUL in a
-- user message, which encoding/json escapes so), and in encoding/json's compact output
-- "final":true is the turn result's own key (a quote inside a string is escaped, and no
-- value nested in a turn result has a key "final"). The same test on both dialects.
UPDATE turn_results SET verdict_stage = 1 WHERE result::text LIKE '%"final":true%';

-- +goose Down
ALTER TABLE turn_results DROP COLUMN verdict_stage;
