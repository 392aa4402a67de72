-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- A turn identified by its root span too (docs/decisions/sessions.md §4.2), sqlite
-- dialect. Keep in step with the other dialect's 00013_turn_root_span.sql.

-- +goose Up

-- One trace may hold several turns (a conversation run inside one trace, one turn per
-- invocation): a closed turn is (session_id, trace_id, root_span_id), its root span
-- being the turn marker or the highest GenAI span ('' for a turn without one). SQLite
-- cannot change a primary key: both tables are rebuilt, their other indexes made again.
-- Rows stored before take the root span of their record (turns.record is
-- evaluation.TurnRecord JSON, the root span at $.result.root_span_id), and a turn index
-- the root span of the turns row of its session and trace ('' when none: a reservation
-- whose record was not saved), so that a session continued across the upgrade saves its
-- turns' verdicts over their rows and reserves their indexes again.
CREATE TABLE turns_by_root (
    session_id    TEXT NOT NULL,
    trace_id      TEXT NOT NULL,
    root_span_id  TEXT NOT NULL DEFAULT '',
    turn_index    INTEGER NOT NULL,
    final         BOOLEAN NOT NULL,
    record        TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    verdict_stage INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, trace_id, root_span_id)
);
INSERT INTO turns_by_root (session_id, trace_id, root_span_id, turn_index, final, record, updated_at, verdict_stage)
    SELECT session_id, trace_id,
           CASE WHEN json_valid(record) THEN COALESCE(json_extract(record, '$.result.root_span_id'), '') ELSE '' END,
           turn_index, final, record, updated_at, verdict_stage
    FROM turns;
DROP TABLE turns;
ALTER TABLE turns_by_root RENAME TO turns;
CREATE INDEX turns_session_index_idx ON turns (session_id, turn_index);

CREATE TABLE turn_indexes_by_root (
    session_id   TEXT NOT NULL,
    trace_id     TEXT NOT NULL,
    root_span_id TEXT NOT NULL DEFAULT '',
    turn_index   INTEGER NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (session_id, trace_id, root_span_id)
);
INSERT INTO turn_indexes_by_root (session_id, trace_id, root_span_id, turn_index, updated_at)
    SELECT i.session_id, i.trace_id,
           COALESCE((SELECT t.root_span_id FROM turns t WHERE t.session_id = i.session_id AND t.trace_id = i.trace_id), ''),
           i.turn_index, i.updated_at
    FROM turn_indexes i;
DROP TABLE turn_indexes;
ALTER TABLE turn_indexes_by_root RENAME TO turn_indexes;
CREATE UNIQUE INDEX turn_indexes_session_index_idx ON turn_indexes (session_id, turn_index);

-- +goose Down
-- (development only: of the turns of one trace, the one of the lowest index is kept)
CREATE TABLE turns_by_trace (
    session_id    TEXT NOT NULL,
    trace_id      TEXT NOT NULL,
    turn_index    INTEGER NOT NULL,
    final         BOOLEAN NOT NULL,
    record        TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    verdict_stage INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, trace_id)
);
INSERT OR IGNORE INTO turns_by_trace (session_id, trace_id, turn_index, final, record, updated_at, verdict_stage)
    SELECT session_id, trace_id, turn_index, final, record, updated_at, verdict_stage FROM turns ORDER BY turn_index;
DROP TABLE turns;
ALTER TABLE turns_by_trace RENAME TO turns;
CREATE INDEX turns_session_index_idx ON turns (session_id, turn_index);

CREATE TABLE turn_indexes_by_trace (
    session_id TEXT NOT NULL,
    trace_id   TEXT NOT NULL,
    turn_index INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, trace_id)
);
INSERT OR IGNORE INTO turn_indexes_by_trace (session_id, trace_id, turn_index, updated_at)
    SELECT session_id, trace_id, turn_index, updated_at FROM turn_indexes ORDER BY turn_index;
DROP TABLE turn_indexes;
ALTER TABLE turn_indexes_by_trace RENAME TO turn_indexes;
CREATE UNIQUE INDEX turn_indexes_session_index_idx ON turn_indexes (session_id, turn_index);
