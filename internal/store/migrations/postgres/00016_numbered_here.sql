-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- A stored session whose turn indexes a collector guessed (docs/decisions/sessions.md
-- §4.6), postgres dialect. Keep in step with the other dialect's 00016_numbered_here.sql.

-- +goose Up

-- numbered_here is TRUE once an analysis whose turn indexes its collector numbered
-- without its continuation store (unreachable: agent_eval.session.numbered_here) is
-- written, until an analysis with the continuation store's indexes replaces every
-- stored turn at its own indexes. While it is TRUE, an analysis with the continuation
-- store's indexes that holds every stored turn and more may put them in its order.
ALTER TABLE sessions ADD COLUMN numbered_here BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE sessions DROP COLUMN numbered_here;
