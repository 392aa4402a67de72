// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package text holds the deterministic text-analysis primitives the evaluators use
// (docs/scoring.md): CCM similarity, RDM correction detection, salient-fact coverage,
// ungrounded specifics, refusal/uncertainty cues and name mentions.
package text // import "github.com/agenteval/agenteval-collector/internal/text"
