// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference // import "github.com/agenteval/agenteval-collector/pkg/reference"

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CaseResult is the evaluation of one run of one dataset case: every evaluator's Result,
// or its error. It is what the collector stores under an analysis' `references`.
type CaseResult struct {
	// RunID groups the cases of one dataset run (empty outside a run).
	RunID string `json:"run_id,omitempty"`
	// CaseID names the case (see CaseID); SessionID the evaluated session.
	CaseID    string `json:"case_id"`
	SessionID string `json:"session_id,omitempty"`
	// MatchedBy says how the session was matched to the case: the attribute key, or
	// "first_user_message".
	MatchedBy string `json:"matched_by,omitempty"`
	// Results by evaluator name; Errors by evaluator name for those that could not
	// evaluate (ErrNoReference is not recorded: the case does not apply).
	Results map[string]Result `json:"results"`
	Errors  map[string]string `json:"errors,omitempty"`
	// Pass: at least one evaluator applied, every result passes and no evaluator failed
	// with an error (evalaf's rule).
	Pass bool `json:"pass"`
	// Score is the mean of the results' scores; errors count 0 (evalaf's average_score).
	Score float64 `json:"score"`
}

// Run evaluates output against ex with every evaluator and returns the case result.
// Evaluators that return ErrNoReference are skipped; other errors are recorded.
func Run(ctx context.Context, evaluators []Evaluator, ex Example, output any) CaseResult {
	cr := CaseResult{Results: map[string]Result{}}
	sum, n := 0.0, 0
	for _, ev := range evaluators {
		res, err := ev.Evaluate(ctx, ex, output)
		switch {
		case err == nil:
			cr.Results[ev.Name()] = res
			sum += res.Score
		case isNoReference(err):
			continue
		default:
			if cr.Errors == nil {
				cr.Errors = map[string]string{}
			}
			cr.Errors[ev.Name()] = err.Error()
		}
		n++
	}
	if n > 0 {
		cr.Score = sum / float64(n)
	}
	cr.Pass = n > 0 && len(cr.Errors) == 0
	for _, r := range cr.Results {
		cr.Pass = cr.Pass && r.Pass
	}
	return cr
}

func isNoReference(err error) bool { return errors.Is(err, ErrNoReference) }

// CaseID returns an example's case id: metadata.case_name, metadata.id or metadata.name
// (the first string present), else "case_<index>" (strands-evals' default case name).
func CaseID(ex Example, index int) string {
	for _, k := range []string{"case_name", "id", "name"} {
		if s, ok := ex.Metadata[k].(string); ok && s != "" {
			return s
		}
	}
	return fmt.Sprintf("case_%d", index)
}

// EvaluatorStats aggregates one evaluator over a run (evalaf's evaluator_stats, with the
// mean computed once over the evaluations that produced a score).
type EvaluatorStats struct {
	Name             string  `json:"name"`
	TotalEvaluations int     `json:"total_evaluations"`
	Passed           int     `json:"passed"`
	Failed           int     `json:"failed"`
	Errors           int     `json:"errors"`
	AverageScore     float64 `json:"average_score"`
	PassRate         float64 `json:"pass_rate"`
}

// Failure is one failed or errored evaluation of a run.
type Failure struct {
	CaseID    string  `json:"case_id"`
	SessionID string  `json:"session_id,omitempty"`
	Evaluator string  `json:"evaluator"`
	Score     float64 `json:"score"`
	Reason    string  `json:"reason"`
	Error     bool    `json:"error,omitempty"`
}

// Summary is an evalaf-style report of a dataset run.
type Summary struct {
	RunID          string                    `json:"run_id"`
	TotalExamples  int                       `json:"total_examples"`
	PassedExamples int                       `json:"passed_examples"`
	FailedExamples int                       `json:"failed_examples"`
	PassRate       float64                   `json:"pass_rate"`
	AverageScore   float64                   `json:"average_score"`
	EvaluatorStats map[string]EvaluatorStats `json:"evaluator_stats"`
	Failures       []Failure                 `json:"failures"`
}

// Summarize aggregates the case results of a run. pass_rate = passed / total examples;
// average_score = mean over every (case × evaluator) result, errors counted as 0 (evalaf);
// per evaluator: pass_rate = passed / (passed + failed), average_score over its scored
// results. Failures are ordered by case id then evaluator.
func Summarize(runID string, cases []CaseResult) Summary {
	s := Summary{RunID: runID, TotalExamples: len(cases), EvaluatorStats: map[string]EvaluatorStats{}, Failures: []Failure{}}
	sum, n := 0.0, 0
	for _, c := range cases {
		if c.Pass {
			s.PassedExamples++
		}
		for name, r := range c.Results {
			st := s.EvaluatorStats[name]
			st.Name = name
			st.TotalEvaluations++
			st.AverageScore += r.Score // a sum until the end
			if r.Pass {
				st.Passed++
			} else {
				st.Failed++
				s.Failures = append(s.Failures, Failure{CaseID: c.CaseID, SessionID: c.SessionID, Evaluator: name, Score: r.Score, Reason: r.Reason})
			}
			s.EvaluatorStats[name] = st
			sum += r.Score
			n++
		}
		for name, e := range c.Errors {
			st := s.EvaluatorStats[name]
			st.Name = name
			st.TotalEvaluations++
			st.Errors++
			s.EvaluatorStats[name] = st
			s.Failures = append(s.Failures, Failure{CaseID: c.CaseID, SessionID: c.SessionID, Evaluator: name, Reason: e, Error: true})
			n++
		}
	}
	s.FailedExamples = s.TotalExamples - s.PassedExamples
	if s.TotalExamples > 0 {
		s.PassRate = float64(s.PassedExamples) / float64(s.TotalExamples)
	}
	if n > 0 {
		s.AverageScore = sum / float64(n)
	}
	for name, st := range s.EvaluatorStats {
		if scored := st.Passed + st.Failed; scored > 0 {
			st.AverageScore /= float64(scored)
			st.PassRate = float64(st.Passed) / float64(scored)
		}
		s.EvaluatorStats[name] = st
	}
	slices.SortFunc(s.Failures, func(a, b Failure) int {
		return cmp.Or(cmp.Compare(a.CaseID, b.CaseID), cmp.Compare(a.Evaluator, b.Evaluator), cmp.Compare(a.SessionID, b.SessionID))
	})
	return s
}

// Markdown renders the summary as a Markdown report (evalaf's markdown format).
func (s Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Evaluation report: %s\n\n", mdEscape(s.RunID))
	fmt.Fprintf(&b, "| examples | passed | failed | pass rate | average score |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %.2f%% | %.4f |\n\n", s.TotalExamples, s.PassedExamples, s.FailedExamples, 100*s.PassRate, s.AverageScore)
	b.WriteString("## Evaluators\n\n| evaluator | evaluations | passed | failed | errors | pass rate | average score |\n|---|---|---|---|---|---|---|\n")
	for _, name := range slices.Sorted(maps.Keys(s.EvaluatorStats)) {
		st := s.EvaluatorStats[name]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.2f%% | %.4f |\n", mdEscape(name), st.TotalEvaluations, st.Passed, st.Failed, st.Errors, 100*st.PassRate, st.AverageScore)
	}
	if len(s.Failures) > 0 {
		b.WriteString("\n## Failures\n\n| case | evaluator | score | reason |\n|---|---|---|---|\n")
		for _, f := range s.Failures {
			score := fmt.Sprintf("%.4f", f.Score)
			if f.Error {
				score = "error"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(f.CaseID), mdEscape(f.Evaluator), score, mdEscape(f.Reason))
		}
	}
	return b.String()
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}
