-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- Judge verdicts that arrive after their session's analysis was stored
-- (docs/decisions/reference-and-judge.md), SQLite dialect. Keep in step with
-- ../postgres/00006_judge_verdicts.sql.

-- +goose Up

-- One row per verdict: the analysis revision it judges, the span kind that carried it
-- ('judge': session metrics; 'reference': a dataset case's interactions), the metric or
-- evaluator name and the agent ('' for the session). A redelivered verdict replaces its
-- row, never adds one. No foreign key to sessions: a verdict may be stored before its
-- analysis when the exporter retries the analysis; retention deletes by updated_at.
CREATE TABLE judge_verdicts (
    session_id        TEXT NOT NULL,
    analysis_revision INTEGER NOT NULL,
    kind              TEXT NOT NULL,
    name              TEXT NOT NULL,
    agent             TEXT NOT NULL,
    score             DOUBLE PRECISION,
    pass              BOOLEAN NOT NULL,
    reason            TEXT NOT NULL,
    judge_error       TEXT NOT NULL,
    evaluator_version TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    PRIMARY KEY (session_id, analysis_revision, kind, name, agent)
);
CREATE INDEX judge_verdicts_updated_at_idx ON judge_verdicts (updated_at);

-- +goose Down
DROP TABLE judge_verdicts;
