// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference // import "github.com/agenteval/agenteval-collector/pkg/reference"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Example is one dataset case in the evalaf format: a JSON object with `input`, `reference`
// and `metadata`. A dataset file is a JSON array of Examples (see LoadDataset).
//
// Metadata keys the evaluators read (each evaluator's doc says which): `expected_tool`,
// `expected_tools`, `expected_sequence`, `expected_trajectory`, `expected_interactions`,
// `expected_output`, `expected_classification`.
type Example struct {
	Input     any            `json:"input"`
	Reference any            `json:"reference,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Result is one evaluator's verdict on one output.
//
// Score is in [0,1], higher is better. Pass is the evaluator's own pass rule (documented on
// each constructor). Reason is a human-readable explanation. Details carries the inputs of
// the computation (expected and actual values, overlaps, matched items); its keys are listed
// on each constructor.
type Result struct {
	Score   float64        `json:"score"`
	Pass    bool           `json:"pass"`
	Reason  string         `json:"reason,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

// Evaluator scores an output against an Example. Implementations are safe for concurrent
// use. An error means the evaluation could not be made (no reference, an output of an
// unreadable shape); it is never a failing verdict.
type Evaluator interface {
	Name() string
	Evaluate(ctx context.Context, ex Example, output any) (Result, error)
}

// Errors returned by Evaluate, wrapped with the offending value; test with errors.Is.
var (
	// ErrNoReference: the Example carries no expected value for this evaluator.
	ErrNoReference = errors.New("no reference for this evaluator")
	// ErrBadShape: a reference or output value has a shape the evaluator cannot read.
	ErrBadShape = errors.New("unreadable shape")
	// ErrNoConfidence: the output carries no confidence value.
	ErrNoConfidence = errors.New("output has no confidence")
	// ErrInvalidOption: the evaluator was built with an invalid option.
	ErrInvalidOption = errors.New("invalid evaluator option")
)

// Metadata keys read from Example.Metadata.
const (
	MetaExpectedTool           = "expected_tool"
	MetaExpectedTools          = "expected_tools"
	MetaExpectedSequence       = "expected_sequence"
	MetaExpectedTrajectory     = "expected_trajectory"
	MetaExpectedInteractions   = "expected_interactions"
	MetaExpectedOutput         = "expected_output"
	MetaExpectedClassification = "expected_classification"
)

// ParseDataset decodes a dataset: a JSON array of Examples (evalaf `eval.Example`).
func ParseDataset(data []byte) ([]Example, error) {
	var out []Example
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return out, nil
}

// LoadDataset reads a dataset file (a JSON array of Examples).
func LoadDataset(path string) ([]Example, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ex, err := ParseDataset(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ex, nil
}
