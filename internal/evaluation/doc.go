// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package evaluation scores AgentSessions (DESIGN.md §5): tool validation, per-interaction
// and per-agent scores, turn-level detection (RDM, CCM, hallucination), session-level
// coordination, intent drift, task completion, the weighted overall scores and the
// recommendations. Every function is a pure function of the session model and Config;
// docs/scoring.md states each formula.
package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import "sort"

func sortStrings(s []string) { sort.Strings(s) }
