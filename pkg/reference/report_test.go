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

// TestSummaryJudgeVerdicts: the judge's verdicts are aggregated per metric apart from the
// deterministic figures, which they never change; failures carry the judge's reason, and
// verdicts the judge could not give its error.
func TestSummaryJudgeVerdicts(t *testing.T) {
	cases := []CaseResult{
		{CaseID: "a", SessionID: "s1", Pass: true, Score: 1, Results: map[string]Result{"tool_selection": {Score: 1, Pass: true}}},
		{CaseID: "b", SessionID: "s2", Pass: true, Score: 1, Results: map[string]Result{"tool_selection": {Score: 1, Pass: true}}},
	}
	s := Summarize("run-1", cases)
	before := s
	score := func(v float64) *float64 { return &v }
	s.SetJudgeVerdicts([]CaseVerdict{
		{CaseID: "b", SessionID: "s2", Evaluator: "interactions", Score: score(0.2), Reason: "skipped the search"},
		{CaseID: "a", SessionID: "s1", Evaluator: "interactions", Score: score(0.9), Pass: true, Reason: "fine"},
		{CaseID: "a", SessionID: "s1", Evaluator: "response_quality", Agent: "planner", Score: score(0.8), Pass: true},
		{CaseID: "b", SessionID: "s2", Evaluator: "response_quality", Agent: "researcher", Error: "judge: timeout"},
	})
	if s.PassedExamples != before.PassedExamples || s.PassRate != before.PassRate || s.AverageScore != before.AverageScore || len(s.Failures) != 0 {
		t.Fatalf("the deterministic figures changed: %+v", s)
	}
	in := s.JudgeStats["interactions"]
	if in.TotalEvaluations != 2 || in.Passed != 1 || in.Failed != 1 || in.Errors != 0 || math.Abs(in.AverageScore-0.55) > 1e-12 || in.PassRate != 0.5 {
		t.Fatalf("interactions stats %+v", in)
	}
	rq := s.JudgeStats["response_quality"]
	if rq.TotalEvaluations != 2 || rq.Passed != 1 || rq.Errors != 1 || rq.AverageScore != 0.8 || rq.PassRate != 1 {
		t.Fatalf("response_quality stats %+v", rq)
	}
	want := []Failure{
		{CaseID: "b", SessionID: "s2", Evaluator: "interactions", Score: 0.2, Reason: "skipped the search"},
		{CaseID: "b", SessionID: "s2", Evaluator: "response_quality", Agent: "researcher", Reason: "judge: timeout", Error: true},
	}
	if len(s.JudgeFailures) != 2 || s.JudgeFailures[0] != want[0] || s.JudgeFailures[1] != want[1] {
		t.Fatalf("judge failures %+v", s.JudgeFailures)
	}
	md := s.Markdown()
	for _, want := range []string{"## LLM judge\n", "| interactions | 2 | 1 | 1 | 0 | 50.00% | 0.5500 |",
		"| b | interactions |  | 0.2000 | skipped the search |", "| b | response_quality | researcher | error | judge: timeout |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	js, _ := json.Marshal(s)
	if !strings.Contains(string(js), `"judge_stats":{"interactions":`) || !strings.Contains(string(js), `"judge_failures":[`) {
		t.Errorf("JSON lacks the judge: %s", js)
	}
	s.SetJudgeVerdicts(nil)
	if js, _ := json.Marshal(s); strings.Contains(string(js), "judge_") {
		t.Errorf("a run without verdicts has no judge keys: %s", js)
	}
}
