// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package assembly rebuilds one turn of the AgentSession model from the SpanRecords of its
// trace (Assemble): the span tree with its anomalies, the turn root, the agents and
// their interactions, handoffs and tool calls (docs/architecture.md §4,
// docs/decisions/sessions.md). It reads records and writes model values; it knows neither
// spans nor the collector.
package assembly // import "github.com/agenteval/agenteval-collector/internal/assembly"
