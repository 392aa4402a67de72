-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- The evaluation channel's agents and API keys, and what its concurrency rules need
-- (docs/channel.md). Keep the sqlite and postgres files in step.

-- +goose Up

-- Agents of the channel, created by the receiver's admin endpoint.
CREATE TABLE evaluation_agents (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- API keys: key_id is the public part of the key, key_hash the hex SHA-256 of its secret
-- (the secret itself is never stored). An agent may hold several keys.
CREATE TABLE evaluation_api_keys (
    key_id     TEXT PRIMARY KEY,
    agent_id   TEXT NOT NULL REFERENCES evaluation_agents (id) ON DELETE CASCADE,
    key_hash   TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX evaluation_api_keys_agent_idx ON evaluation_api_keys (agent_id);

-- The last sequence given to a message of the session: AddMessage increments it with a
-- conditional UPDATE (status = 'active'), which serialises the writers of one session,
-- so sequences are gapless without locking the table.
ALTER TABLE evaluation_sessions ADD COLUMN message_count INTEGER NOT NULL DEFAULT 0;

-- At most one active (registered or in_progress) registration per agent and evaluation.
CREATE UNIQUE INDEX evaluation_registrations_active_idx ON evaluation_registrations (evaluation_id, agent_id)
    WHERE status IN ('registered', 'in_progress');

-- +goose Down
DROP INDEX evaluation_registrations_active_idx;
ALTER TABLE evaluation_sessions DROP COLUMN message_count;
DROP TABLE evaluation_api_keys;
DROP TABLE evaluation_agents;
