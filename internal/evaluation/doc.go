// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package evaluation scores AgentSessions (docs/scoring.md): tool validation, per-interaction
// and per-agent scores, turn-level detection (RDM, CCM, hallucination), session-level
// coordination, intent drift, task completion, the weighted overall scores and the
// recommendations. Every function is a pure function of the session model and Config;
// docs/scoring.md states each formula and docs/decisions/evaluation.md the choices.
//
// The processor builds one Evaluator with New(Config), calls EvaluateClosedTurn as each turn
// closes, FollowUp once the next user message is known (or FinishLast when the session
// ends without one) and Aggregate over the turn records when the session ends.
// AnalyzeSession does the same for a whole assembled session at once (the golden and
// end-to-end tests compare both paths). The results are the types of result.go (the shared contract).
//
// Each score is computed by an evaluator in a file of its own, behind the interface of its
// level (interaction, turn, turn detector, session, coordination component); the lists in
// evaluators.go say which run and in which order.
package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"
