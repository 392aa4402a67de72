-- Copyright agenteval-collector contributors
-- SPDX-License-Identifier: Apache-2.0
--
-- The session list and retention order by stored_at, the collector's own clock, not by
-- the span times in ended_at, which a client controls (docs/decisions/ids-and-times.md).

-- +goose Up
CREATE INDEX sessions_stored_at_idx ON sessions (stored_at);

-- +goose Down
DROP INDEX sessions_stored_at_idx;
