// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package sessionjson reads recorded agent sessions in ReAsk's AgentSession JSON
// (the ReAsk evaluation plan's format) and turns them into
// spans in the OpenTelemetry GenAI conventions, so that a recorded session is evaluated
// exactly like a live one (docs/architecture.md §8).
//
// Accepted bodies, validated against the embedded JSON Schema (schema.json, draft 2020-12):
//   - a multi-agent session: {session_id?, agents[], session_metadata?, initial_task?,
//     success?, total_cost?, turns:[{user_message, agent_interactions:[{agent_id,
//     agent_steps[], agent_response, tool_execution_result?, latency_ms}]}]};
//   - the single-agent trace form: {initial_task?, agents?, turns:[{user_message,
//     agent_steps, agent_response}]}, wrapped like ReAsk does into one interaction per turn
//     by the first declared agent, else by {"id":"agent","name":"Agent","role":"primary"};
//   - a dataset: {name?, task?, conversations:[session...], metadata?}, one session each;
//   - ReAsk's analysis request {trace|session|dataset, analysis_types}.
//
// Parse validates and decodes; Convert lays one session out as traces (one trace per turn)
// with synthetic, strictly ordered timestamps. The package depends on pdata only.
package sessionjson // import "github.com/agenteval/agenteval-collector/internal/sessionjson"
