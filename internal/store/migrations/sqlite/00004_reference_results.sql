-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- Reference-based results of dataset sessions (docs/scoring.md §11), SQLite dialect. Keep
-- in step with ../postgres/00002_reference_results.sql.

-- +goose Up

-- The dataset case a session was matched to, with every reference evaluator's result
-- (result: the reference.CaseResult JSON, the analysis' references). One row per session;
-- re-evaluation replaces it. run_id is '' outside a dataset run.
CREATE TABLE reference_results (
    session_id TEXT PRIMARY KEY REFERENCES sessions (session_id) ON DELETE CASCADE,
    run_id     TEXT NOT NULL,
    case_id    TEXT NOT NULL,
    pass       BOOLEAN NOT NULL,
    score      DOUBLE PRECISION NOT NULL,
    result     TEXT NOT NULL
);
CREATE INDEX reference_results_run_idx ON reference_results (run_id, case_id);

-- +goose Down
DROP TABLE reference_results;
