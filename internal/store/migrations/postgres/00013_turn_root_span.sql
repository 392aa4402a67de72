-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- A turn identified by its root span too (docs/decisions/sessions.md §4.2), postgres
-- dialect. Keep in step with the other dialect's 00013_turn_root_span.sql.

-- +goose Up

-- One trace may hold several turns (a conversation run inside one trace, one turn per
-- invocation): a closed turn is (session_id, trace_id, root_span_id), its root span
-- being the turn marker or the highest GenAI span ('' for a turn without one). Rows
-- stored before take the root span of their record (turns.record is
-- evaluation.TurnRecord JSON, the root span at result.root_span_id), and a turn index
-- the root span of the turns row of its session and trace ('' when none: a reservation
-- whose record was not saved), so that a session continued across the upgrade saves its
-- turns' verdicts over their rows and reserves their indexes again. PostgreSQL's JSON
-- operators refuse a whole document holding a \u0000 anywhere (a NUL in an application's
-- text), so such a record's root span is read from its text instead: the first
-- "root_span_id" member after the session and trace ids, which are written first
-- (evaluation.TurnResult) and never hold a quote unescaped.
ALTER TABLE turns ADD COLUMN root_span_id TEXT NOT NULL DEFAULT '';
UPDATE turns SET root_span_id = COALESCE(CASE
    WHEN strpos(record::text, '\u0000') = 0 THEN record -> 'result' ->> 'root_span_id'
    ELSE substring(record::text from ',"root_span_id":"([^"\\]*)"')
END, '');
ALTER TABLE turns DROP CONSTRAINT turns_pkey, ADD PRIMARY KEY (session_id, trace_id, root_span_id);

ALTER TABLE turn_indexes ADD COLUMN root_span_id TEXT NOT NULL DEFAULT '';
UPDATE turn_indexes i SET root_span_id = t.root_span_id
    FROM turns t WHERE t.session_id = i.session_id AND t.trace_id = i.trace_id;
ALTER TABLE turn_indexes DROP CONSTRAINT turn_indexes_pkey, ADD PRIMARY KEY (session_id, trace_id, root_span_id);

-- +goose Down
-- (development only: of the turns of one trace, the one of the lowest index is kept)
DELETE FROM turns t USING turns u
    WHERE u.session_id = t.session_id AND u.trace_id = t.trace_id AND u.turn_index < t.turn_index;
ALTER TABLE turns DROP CONSTRAINT turns_pkey, ADD PRIMARY KEY (session_id, trace_id);
ALTER TABLE turns DROP COLUMN root_span_id;
DELETE FROM turn_indexes t USING turn_indexes u
    WHERE u.session_id = t.session_id AND u.trace_id = t.trace_id AND u.turn_index < t.turn_index;
ALTER TABLE turn_indexes DROP CONSTRAINT turn_indexes_pkey, ADD PRIMARY KEY (session_id, trace_id);
ALTER TABLE turn_indexes DROP COLUMN root_span_id;
