// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference // import "github.com/agenteval/agenteval-collector/pkg/reference"

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Default evaluator names (evalaf's).
const (
	DefaultToolSelectionName  = "tool_selection"
	DefaultToolSequenceName   = "tool_sequence"
	DefaultClassificationName = "classification_accuracy"
	DefaultConfidenceName     = "confidence_check"
	DefaultTrajectoryName     = "trajectory_match"
	DefaultInteractionsName   = "interactions"
)

type toolSelection struct{ name string }

// NewToolSelectionEvaluator returns evalaf's ToolSelectionEvaluator with duplicates matched
// one-to-one (name "" = "tool_selection").
//
// Expected tools: Metadata["expected_tools"], else Metadata["expected_tool"], else
// Reference. A Reference that is a bare string is taken as the tool only when the example
// carries no other evaluator's metadata key (expected_sequence, expected_trajectory,
// expected_interactions, expected_output, expected_classification): beside one of them it is
// that evaluator's case (a class label) and Evaluate returns ErrNoReference. Expected and
// actual tools are read in every shape toolNames accepts: a string,
// a list of names or tool-call objects, `{"tool": ...}`, `{"tools": [...]}`,
// `{"selected_tools": [...]}`, `{"tool_sequence": [...]}`, OpenAI messages; an object
// carrying several lists is read through `tool`, then `tools`, `selected_tools`,
// `tool_sequence`, `sequence`, `tool_calls`, `trajectory`, `messages`. Names are trimmed
// and compared case-sensitively.
//
// Score = |expected ∩ actual| / |expected| with ∩ the multiset intersection (each actual
// call matches at most one expected call). Pass = expected and actual are equal as
// multisets. Both empty: score 1, pass. Expected empty, actual not: score 0, fail.
// Details: expected_tools, actual_tools, overlap, exact_match.
func NewToolSelectionEvaluator(name string) Evaluator {
	return toolSelection{name: cmp.Or(name, DefaultToolSelectionName)}
}

func (e toolSelection) Name() string { return e.name }

func (e toolSelection) Evaluate(_ context.Context, ex Example, output any) (Result, error) {
	want, got, err := readToolLists(e.name, ex, output, selectionKeys, stringUnlessOtherKeys, MetaExpectedTools, MetaExpectedTool)
	if err != nil {
		return Result{}, err
	}
	overlap := multisetIntersection(want, got)
	exact := len(want) == len(got) && len(overlap) == len(want)
	res := Result{
		Score: ratio(len(overlap), len(want), len(got)),
		Pass:  exact,
		Details: map[string]any{
			"expected_tools": want,
			"actual_tools":   got,
			"overlap":        overlap,
			"exact_match":    exact,
		},
	}
	switch {
	case len(got) == 0 && len(want) > 0:
		res.Reason = "No tools selected"
	case exact:
		res.Reason = fmt.Sprintf("Expected: %v, Got: %v ✓", want, got)
	case len(overlap) > 0:
		res.Reason = fmt.Sprintf("Expected: %v, Got: %v (partial match: %v)", want, got, overlap)
	default:
		res.Reason = fmt.Sprintf("Expected: %v, Got: %v ✗", want, got)
	}
	return res, nil
}

type toolSequence struct{ name string }

// NewToolCallSequenceEvaluator returns evalaf's ToolCallSequenceEvaluator (name "" =
// "tool_sequence").
//
// Expected sequence: Metadata["expected_sequence"], else Reference; both, and the output,
// are read like NewToolSelectionEvaluator's (a list, `{"tool_sequence": [...]}`,
// `{"sequence": [...]}`, tool calls, messages), except that an object carrying several
// lists is read through its own keys first: `tool_sequence`, `sequence`, then `tool`,
// `tools`, `selected_tools`, `tool_calls`, `trajectory`, `messages` (so an output with both
// a selection and a sequence is scored on the sequence). A Reference that is a bare string is not a
// sequence (it is a class label or a single expected tool, as in evalaf's datasets, whose
// sequence evaluator rejects it too): Evaluate returns ErrNoReference. A string in
// Metadata["expected_sequence"] is a one-tool sequence.
//
// Score = len(LCS(expected, actual)) / len(expected), LCS the longest common subsequence
// (repeated names count once per occurrence). Pass = the sequences are equal element-wise.
// Both empty: score 1, pass. Expected empty, actual not: score 0, fail.
// Details: expected_sequence, actual_sequence, lcs, exact_match.
func NewToolCallSequenceEvaluator(name string) Evaluator {
	return toolSequence{name: cmp.Or(name, DefaultToolSequenceName)}
}

func (e toolSequence) Name() string { return e.name }

func (e toolSequence) Evaluate(_ context.Context, ex Example, output any) (Result, error) {
	want, got, err := readToolLists(e.name, ex, output, sequenceKeys, stringNever, MetaExpectedSequence)
	if err != nil {
		return Result{}, err
	}
	lcs := LCS(want, got)
	exact := slices.Equal(want, got)
	score := ratio(len(lcs), len(want), len(got))
	reason := fmt.Sprintf("Expected sequence: %v, Got: %v", want, got)
	if exact {
		reason += " ✓"
	} else {
		reason += fmt.Sprintf(" (similarity: %.2f)", score)
	}
	return Result{
		Score:  score,
		Pass:   exact,
		Reason: reason,
		Details: map[string]any{
			"expected_sequence": want,
			"actual_sequence":   got,
			"lcs":               lcs,
			"exact_match":       exact,
		},
	}, nil
}

// readToolLists reads the expected tool names (toolReference: the first present metadata
// key, else the reference) and the output's.
func readToolLists(name string, ex Example, output any, order []string, stringOK func(Example) bool, keys ...string) (want, got []string, err error) {
	ref, src, err := toolReference(name, ex, stringOK, keys...)
	if err != nil {
		return nil, nil, err
	}
	if want, err = toolNames(ref, order); err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", name, src, err)
	}
	if got, err = toolNames(output, order); err != nil {
		return nil, nil, fmt.Errorf("%s: output: %w", name, err)
	}
	return want, got, nil
}

// ratio is matched/expected with the empty cases decided once for every evaluator of this
// package: both empty = 1, expected empty but actual not = 0.
func ratio(matched, expected, actual int) float64 {
	if expected == 0 {
		if actual == 0 {
			return 1
		}
		return 0
	}
	return float64(matched) / float64(expected)
}

// multisetIntersection returns the items of want that are matched one-to-one by items of
// got, in want's order.
func multisetIntersection(want, got []string) []string {
	counts := make(map[string]int, len(got))
	for _, g := range got {
		counts[g]++
	}
	out := make([]string, 0, min(len(want), len(got)))
	for _, w := range want {
		if counts[w] > 0 {
			counts[w]--
			out = append(out, w)
		}
	}
	return out
}

// LCS returns a longest common subsequence of a and b (classic O(len(a)·len(b)) dynamic
// programme). Among equally long subsequences it returns the one evalaf returns: the
// backtrack moves up when dp[i-1][j] > dp[i][j-1], else left.
func LCS[T comparable](a, b []T) []T {
	pairs := lcsPairs(a, b)
	out := make([]T, len(pairs))
	for k, p := range pairs {
		out[k] = a[p[0]]
	}
	return out
}

// lcsPairs returns the index pairs (index in a, index in b) of the LCS that LCS returns.
func lcsPairs[T comparable](a, b []T) [][2]int {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return nil
	}
	w := n + 1
	dp := make([]int32, (m+1)*w)
	for i := 1; i <= m; i++ {
		for j := 1; j <= n; j++ {
			if a[i-1] == b[j-1] {
				dp[i*w+j] = dp[(i-1)*w+j-1] + 1
			} else {
				dp[i*w+j] = max(dp[(i-1)*w+j], dp[i*w+j-1])
			}
		}
	}
	out := make([][2]int, dp[m*w+n])
	k := len(out)
	for i, j := m, n; i > 0 && j > 0; {
		switch {
		case a[i-1] == b[j-1]:
			k--
			out[k] = [2]int{i - 1, j - 1}
			i--
			j--
		case dp[(i-1)*w+j] > dp[i*w+j-1]:
			i--
		default:
			j--
		}
	}
	return out
}
