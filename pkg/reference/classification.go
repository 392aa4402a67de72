// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference // import "github.com/agenteval/agenteval-collector/pkg/reference"

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

type classificationEval struct {
	name    string
	classes []string
}

// NewClassificationEvaluator returns evalaf's ClassificationEvaluator (name "" =
// "classification_accuracy").
//
// Expected class: Metadata["expected_classification"], else Reference (a string, or an
// object with `classification` / `route_type`). Output: a string, `{"classification": ...}`
// or `{"route_type": ...}` (Antfly's answer agent). Score 1 and pass when both are equal
// after lower-casing and trimming, else 0 and fail. classes is reported, not enforced (a
// label outside it cannot equal a reference inside it). Details: expected, actual,
// valid_classes, in_classes (when classes is set).
func NewClassificationEvaluator(name string, classes []string) Evaluator {
	return classificationEval{name: cmp.Or(name, DefaultClassificationName), classes: slices.Clone(classes)}
}

func (e classificationEval) Name() string { return e.name }

func (e classificationEval) Evaluate(_ context.Context, ex Example, output any) (Result, error) {
	ref, src, ok := expected(ex, MetaExpectedClassification)
	if !ok {
		return Result{}, fmt.Errorf("%s: %w (want metadata.expected_classification or reference)", e.name, ErrNoReference)
	}
	want, err := classification(ref)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %s: %w", e.name, src, err)
	}
	got, err := classification(output)
	if err != nil {
		return Result{}, fmt.Errorf("%s: output: %w", e.name, err)
	}
	w, g := normClass(want), normClass(got)
	details := map[string]any{"expected": w, "actual": g, "valid_classes": e.classes}
	if len(e.classes) > 0 {
		details["in_classes"] = slices.ContainsFunc(e.classes, func(c string) bool { return normClass(c) == g })
	}
	reason := fmt.Sprintf("Expected: %q, Got: %q", w, g)
	if w == g {
		return Result{Score: 1, Pass: true, Reason: reason + " ✓", Details: details}, nil
	}
	return Result{Score: 0, Pass: false, Reason: reason + " ✗", Details: details}, nil
}

func normClass(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// DefaultConfidenceThreshold is evalaf's default minimum confidence.
const DefaultConfidenceThreshold = 0.7

type confidenceEval struct {
	name      string
	threshold float64
}

// NewConfidenceEvaluator returns evalaf's ConfidenceEvaluator (name "" =
// "confidence_check"): the output's confidence must be ≥ threshold. threshold 0 means the
// default 0.7; a threshold outside (0,1] makes every Evaluate return ErrInvalidOption
// (evalaf silently replaces it with 0.7).
//
// Output: a number, a numeric string, or an object with `confidence`. Score = the
// confidence; pass = confidence ≥ threshold. A confidence outside [0,1] (or NaN) scores 0
// and fails, in a typed Go map or struct too (map[string]float64{"confidence": NaN}, which
// json.Marshal refuses). No confidence at all is an error (ErrNoConfidence), not a failing verdict.
// Details: confidence, min_confidence.
func NewConfidenceEvaluator(name string, threshold float64) Evaluator {
	if threshold == 0 {
		threshold = DefaultConfidenceThreshold
	}
	return confidenceEval{name: cmp.Or(name, DefaultConfidenceName), threshold: threshold}
}

func (e confidenceEval) Name() string { return e.name }

func (e confidenceEval) Evaluate(_ context.Context, _ Example, output any) (Result, error) {
	if !(e.threshold > 0 && e.threshold <= 1) {
		return Result{}, fmt.Errorf("%s: %w: threshold %v not in (0,1]", e.name, ErrInvalidOption, e.threshold)
	}
	c, ok := confidence(output)
	if !ok {
		return Result{}, fmt.Errorf("%s: %w", e.name, ErrNoConfidence)
	}
	details := map[string]any{"confidence": c, "min_confidence": e.threshold}
	if math.IsNaN(c) || c < 0 || c > 1 {
		return Result{Score: 0, Pass: false, Reason: fmt.Sprintf("Confidence %.2f out of range [0, 1]", c), Details: details}, nil
	}
	pass := c >= e.threshold
	mark := " ✗"
	if pass {
		mark = " ✓"
	}
	return Result{
		Score:   c,
		Pass:    pass,
		Reason:  fmt.Sprintf("Confidence: %.2f (threshold: %.2f)", c, e.threshold) + mark,
		Details: details,
	}, nil
}
