// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package evaluation scores AgentSessions (docs/scoring.md): tool validation, per-interaction
// and per-agent scores, turn-level detection (RDM, CCM, hallucination), session-level
// coordination, intent drift, task completion, the weighted overall scores and the
// recommendations. Every function is a pure function of the session model and Config;
// docs/scoring.md states each formula and docs/decisions/evaluation.md the choices.
//
// The processor builds one Evaluator with New(Config) and calls, as spans arrive,
// ValidateToolCall (or ValidateToolCallInSession) per tool call, EvaluateInteraction per
// agent span, EvaluateTurn per closed turn (final once the next user message is known or
// the session ended) and AnalyzeSession when the session ends. The results are the types
// of result.go (the shared contract).
package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import "sort"

func sortStrings(s []string) { sort.Strings(s) }
