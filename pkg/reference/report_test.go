// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestRunAndSummarize(t *testing.T) {
	evs := []Evaluator{NewToolSelectionEvaluator(""), NewToolCallSequenceEvaluator(""), NewConfidenceEvaluator("", 0.7)}
	ctx := context.Background()
	ex := Example{Metadata: map[string]any{"case_name": "weather", "expected_tools": []any{"get_weather"}, "expected_sequence": []any{"get_weather"}}}
	pass := Run(ctx, evs, ex, map[string]any{"tools": []any{"get_weather"}, "confidence": 0.9})
	if !pass.Pass || pass.Score != (1+1+0.9)/3 || len(pass.Errors) != 0 {
		t.Fatalf("pass case %+v", pass)
	}
	// A confidence error counts as a failure of the case and as 0 in the score.
	errCase := Run(ctx, evs, ex, map[string]any{"tools": []any{"get_weather"}})
	if errCase.Pass || errCase.Errors["confidence_check"] == "" || errCase.Score != 2.0/3 {
		t.Fatalf("error case %+v", errCase)
	}
	// Evaluators without a reference in the case are skipped, not errors.
	skip := Run(ctx, []Evaluator{NewClassificationEvaluator("", nil), NewToolSelectionEvaluator("")}, ex, []any{"other"})
	if _, ok := skip.Results["classification_accuracy"]; ok || len(skip.Errors) != 0 || skip.Pass || skip.Score != 0 {
		t.Fatalf("skip case %+v", skip)
	}
	pass.CaseID, errCase.CaseID, skip.CaseID = "a", "b", "c"
	s := Summarize("run-1", []CaseResult{pass, errCase, skip})
	if s.TotalExamples != 3 || s.PassedExamples != 1 || s.FailedExamples != 2 || math.Abs(s.PassRate-1.0/3) > 1e-12 {
		t.Fatalf("summary %+v", s)
	}
	// (1+1+0.9) + (1+1+0 error) + (0) over 7 evaluations.
	if math.Abs(s.AverageScore-4.9/7) > 1e-12 {
		t.Fatalf("average %v", s.AverageScore)
	}
	conf := s.EvaluatorStats["confidence_check"]
	if conf.TotalEvaluations != 2 || conf.Errors != 1 || conf.Passed != 1 || conf.PassRate != 1 || conf.AverageScore != 0.9 {
		t.Fatalf("confidence stats %+v", conf)
	}
	if len(s.Failures) != 2 || s.Failures[0].CaseID != "b" || !s.Failures[0].Error || s.Failures[1].Evaluator != "tool_selection" {
		t.Fatalf("failures %+v", s.Failures)
	}
	md := s.Markdown()
	for _, want := range []string{"# Evaluation report: run-1", "| 3 | 1 | 2 | 33.33% |", "| confidence_check | 2 | 1 | 0 | 1 | 100.00% | 0.9000 |", "| b | confidence_check | error |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	js, _ := json.Marshal(s)
	for _, key := range []string{`"total_examples":3`, `"passed_examples":1`, `"pass_rate":`, `"average_score":`, `"evaluator_stats":`, `"failures":`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	if got := CaseID(Example{}, 4); got != "case_4" {
		t.Fatalf("CaseID default %q", got)
	}
	if got := CaseID(Example{Metadata: map[string]any{"id": "x"}}, 4); got != "x" {
		t.Fatalf("CaseID id %q", got)
	}
}
