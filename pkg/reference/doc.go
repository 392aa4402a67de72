// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package reference scores an agent's output against an expected answer: the
// reference-based evaluators of evalaf (classification, confidence, tool selection, tool-call
// sequence by LCS), the trajectory match modes of agentevals (strict, unordered, subset,
// superset × argument modes exact, ignore, subset, superset, with per-tool overrides) and of
// Google ADK (in_order, any_order), and strands-evals' interactions evaluator (expected
// interactions with dependencies, per-node rubrics and an optional LLM judge).
//
// The types follow evalaf's: an Example (`input`, `reference`, `metadata`, the dataset
// format), an Evaluator with Name and Evaluate, a Result with Score in [0,1], Pass, Reason
// and Details. The package depends on no collector type; users of evalaf's agent package
// can switch to it by changing the import.
//
// Outputs are read in every shape the peers use: a string, a list, `{"tool"}`, `{"tools"}`,
// `{"selected_tools"}`, `{"tool_sequence"}`, `{"classification"}`, `{"route_type"}`,
// `{"confidence"}`, OpenAI / agentevals messages, strands' `{"output", "interactions"}`, and
// any Go value that marshals to one of these.
//
// Expected values come from the evaluator's own metadata key first, then from `reference`.
// A `reference` that is a bare string belongs to the classification evaluator (evalaf's
// datasets put the class label there) or, alone, to tool selection: the sequence and
// trajectory evaluators never read it as tools, and tool selection does not when the example
// carries another evaluator's metadata key; they return ErrNoReference instead.
//
// Three rules apply to every evaluator and differ from at least one peer (docs/scoring.md,
// "Reference-based evaluators", says where and why): repeated items are matched one-to-one
// (multiset, never deduplicated); an empty expectation met by an empty output scores 1.0; a
// confidence outside [0,1] fails.
package reference // import "github.com/agenteval/agenteval-collector/pkg/reference"
