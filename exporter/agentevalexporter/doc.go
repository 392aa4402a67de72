// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package agentevalexporter is the `agenteval` exporter (docs/architecture.md §7). It consumes only the
// evaluation spans emitted by the agentsession processor (docs/architecture.md §6: spans carrying
// `agent_eval.kind`), and
//   - feeds Prometheus series (client_golang, own registry and HTTP endpoint) from the turn
//     results (`agent_eval.turn.*`) and session analyses (`agent_eval.session.*`), typed
//     attributes read with internal/evalspan;
//   - saves each session analysis in the result store (internal/store: SQLite or PostgreSQL),
//     with exporterhelper's queue and retry so a store outage loses nothing;
//   - serves the query API (docs/architecture.md §11) on a confighttp server.
//
// docs/metrics.md lists every series with its labels, units and source field.
package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"
