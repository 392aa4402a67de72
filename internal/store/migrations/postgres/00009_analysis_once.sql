-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- Each analysis document stored once, without the parts that are rows of their own
-- (docs/decisions/store.md, "Migration 00009"), postgres dialect. Keep in step with the other
-- dialect's 00009_analysis_once.sql.

-- +goose Up

-- Where a sessions row's analysis document is, and in what form:
--   1: sessions.analysis is the whole Analysis JSON (every row stored before 00009);
--   2: sessions.analysis is JSON null; the document is session_analyses.analysis of the
--      row's analysis_revision, and its turn_results (per_agent_scores) is null when the
--      turns (agents) are rows of turn_results.result (agent_scores.scores): the reader
--      puts them back, turn_results in turn_index order.
-- Rows of layout 1 are read as before and rewritten as layout 2 by their next save.
ALTER TABLE sessions ADD COLUMN analysis_layout INTEGER NOT NULL DEFAULT 1;

-- +goose Down
-- (development only: the code before 00009 cannot read layout-2 rows)
ALTER TABLE sessions DROP COLUMN analysis_layout;
