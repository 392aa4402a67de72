-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- Turn indexes allocated in the store (docs/decisions/sessions.md §4.2), postgres dialect.
-- Keep in step with the other dialect's 00008_turn_indexes.sql.

-- +goose Up

-- The index of each turn of a session, allocated when the turn closes, before its
-- record is evaluated: the first allocation for (session_id, trace_id) is one more than
-- the session's highest index here or in turns, and later ones return it again. Two
-- collectors that hold the same session open therefore never give two turns one index.
CREATE TABLE turn_indexes (
    session_id TEXT NOT NULL,
    trace_id   TEXT NOT NULL,
    turn_index INTEGER NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, trace_id)
);
CREATE UNIQUE INDEX turn_indexes_session_index_idx ON turn_indexes (session_id, turn_index);

-- +goose Down
DROP TABLE turn_indexes;
