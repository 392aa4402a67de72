// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package agentsessionreceiver serves POST /v1/agent_sessions: it accepts recorded agent
// sessions as ReAsk AgentSession JSON (the multi-agent session, single-agent trace, dataset
// and analysis-request forms), validates them against a JSON Schema and passes them on as
// OTel GenAI spans, one trace per turn, so that recorded sessions are evaluated like live
// ones (docs/architecture.md §8). The conversion lives in internal/sessionjson; this package is the
// collector adapter (HTTP server via confighttp, obsreport, status codes).
package agentsessionreceiver // import "github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver"
