// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

//go:generate go tool mdatagen metadata.yaml

// Package agentevalhandoffextension provides the agenteval_handoff extension: a bounded
// in-process map through which the agentsession processor hands the results it emits
// as evaluation spans to the agenteval exporter of the same collector, so that the
// exporter skips the signature check and the decode of its own processor's spans
// (internal/handoff; DESIGN.md §6; docs/decisions/performance.md §8.41).
package agentevalhandoffextension // import "github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension"
