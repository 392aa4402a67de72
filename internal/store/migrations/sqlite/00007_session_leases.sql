-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- Sessions cut by a crash (kill -9) are found and analysed after the restart
-- (docs/decisions/result-durability.md), sqlite dialect. Keep in step with the other
-- dialect's 00006_session_leases.sql.

-- +goose Up

-- A session a collector holds open: it has turn records newer than its last analysis
-- revision. The row is written when the collector first saves a turn of the session and
-- deleted when it emits the session's analysis. owner is the collector instance
-- (collector_leases); meta is what the analysis needs besides the turn records
-- (service, agent ids), as JSON.
CREATE TABLE open_sessions (
    session_id TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    meta       TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX open_sessions_owner_idx ON open_sessions (owner);

-- One row per running collector instance, renewed while it runs: a session held by an
-- instance whose lease ended is an orphan that another instance may claim (an
-- UPDATE ... WHERE owner = <the dead owner>, so exactly one claim succeeds).
CREATE TABLE collector_leases (
    owner       TEXT PRIMARY KEY,
    lease_until TEXT NOT NULL
);

-- +goose Down
DROP TABLE collector_leases;
DROP TABLE open_sessions;
