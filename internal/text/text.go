// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package text holds the deterministic text-analysis primitives the evaluators use
// (DESIGN.md §5): CCM similarity, RDM correction detection, salient-fact coverage,
// ungrounded specifics, refusal/uncertainty cues and name mentions.
package text // import "github.com/agenteval/agenteval-collector/internal/text"

// Correction reports whether a follow-up user message corrects or complains about the previous answer (RDM).
// Returns confidence in [0,1] and the matched cue. prev is the previous assistant response.
func Correction(followUp, prev string) (ok bool, confidence float64, cue string) { return false, 0, "" }

// Fact is a salient fact: Kind is one of "id", "number", "amount", "date", "email", "url", "quoted", "name";
// Value is normalised.
type Fact struct{ Kind, Value string }

// SalientFacts extracts the salient facts of s (DESIGN.md §5.2 handoff_score), deduplicated, in order of appearance.
func SalientFacts(s string) []Fact { return nil }

// Coverage is the fraction of facts found in payload, in [0,1]; ok=false when there is nothing to cover.
func Coverage(facts []Fact, contextText, payload string) (score float64, ok bool) { return 0, false }

// Ungrounded returns the facts stated in response that appear in none of the sources.
func Ungrounded(response string, sources ...string) []Fact { return nil }

// Refusal reports whether s is a refusal.
func Refusal(s string) bool { return false }

// Uncertainty reports unresolved uncertainty cues.
func Uncertainty(s string) bool { return false }

// Mentions reports which of names occur in s as whole words/identifiers. Order follows names; no duplicates.
func Mentions(s string, names []string) []string { return nil }
