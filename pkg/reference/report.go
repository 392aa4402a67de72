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
	CaseID    string `json:"case_id"`
	SessionID string `json:"session_id,omitempty"`
	Evaluator string `json:"evaluator"`
	// Agent is the judged agent of a per-agent judge verdict (judge_failures only).
	Agent  string  `json:"agent,omitempty"`
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
	Error  bool    `json:"error,omitempty"`
}

// CaseVerdict is an LLM judge's verdict on the session of a run's case, which arrives
// after the case result (the judge runs off the trace pipeline): the judge's verdict on
// the case's interactions, or on a session metric (reasoning, response_quality, ...).
type CaseVerdict struct {
	CaseID    string
	SessionID string
	// Evaluator is the judged metric or evaluator name; Agent the judged agent ("" for
	// the session).
	Evaluator string
	Agent     string
	// Score in [0,1], nil when the judge could not judge (Error says why).
	Score  *float64
	Pass   bool
	Reason string
	Error  string
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
	// JudgeStats and JudgeFailures aggregate the LLM judge's verdicts on the run's
	// sessions (SetJudgeVerdicts), by metric, apart from the deterministic figures above,
	// which they never change: a report read before the judge answered gates the same.
	// Absent without verdicts.
	JudgeStats    map[string]EvaluatorStats `json:"judge_stats,omitempty"`
	JudgeFailures []Failure                 `json:"judge_failures,omitempty"`
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
	finishStats(s.EvaluatorStats)
	sortFailures(s.Failures)
	return s
}

// SetJudgeVerdicts aggregates judge verdicts into JudgeStats (per evaluator: verdicts,
// passed, failed, errors, mean score over the scored verdicts, pass rate = passed /
// (passed + failed)) and JudgeFailures (failed verdicts with the judge's reason, and
// verdicts the judge could not give, with its error), ordered like Failures then by
// agent, replacing those of an earlier call. The deterministic figures are left as they
// are.
func (s *Summary) SetJudgeVerdicts(vs []CaseVerdict) {
	s.JudgeStats, s.JudgeFailures = nil, nil
	if len(vs) == 0 {
		return
	}
	s.JudgeStats = map[string]EvaluatorStats{}
	for _, v := range vs {
		st := s.JudgeStats[v.Evaluator]
		st.Name = v.Evaluator
		st.TotalEvaluations++
		f := Failure{CaseID: v.CaseID, SessionID: v.SessionID, Evaluator: v.Evaluator, Agent: v.Agent, Reason: v.Reason}
		switch {
		case v.Score == nil || v.Error != "":
			st.Errors++
			f.Reason, f.Error = v.Error, true
			s.JudgeFailures = append(s.JudgeFailures, f)
		case v.Pass:
			st.Passed++
			st.AverageScore += *v.Score
		default:
			st.Failed++
			st.AverageScore += *v.Score
			f.Score = *v.Score
			s.JudgeFailures = append(s.JudgeFailures, f)
		}
		s.JudgeStats[v.Evaluator] = st
	}
	finishStats(s.JudgeStats)
	sortFailures(s.JudgeFailures)
}

// finishStats turns the stats' score sums into means and sets their pass rates.
func finishStats(stats map[string]EvaluatorStats) {
	for name, st := range stats {
		if scored := st.Passed + st.Failed; scored > 0 {
			st.AverageScore /= float64(scored)
			st.PassRate = float64(st.Passed) / float64(scored)
		}
		stats[name] = st
	}
}

func sortFailures(fs []Failure) {
	slices.SortFunc(fs, func(a, b Failure) int {
		return cmp.Or(cmp.Compare(a.CaseID, b.CaseID), cmp.Compare(a.Evaluator, b.Evaluator), cmp.Compare(a.SessionID, b.SessionID),
			cmp.Compare(a.Agent, b.Agent))
	})
}

// Markdown renders the summary as a Markdown report (evalaf's markdown format).
func (s Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Evaluation report: %s\n\n", mdEscape(s.RunID))
	fmt.Fprintf(&b, "| examples | passed | failed | pass rate | average score |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %.2f%% | %.4f |\n\n", s.TotalExamples, s.PassedExamples, s.FailedExamples, 100*s.PassRate, s.AverageScore)
	mdStats(&b, "## Evaluators", s.EvaluatorStats)
	if len(s.Failures) > 0 {
		b.WriteString("\n## Failures\n\n| case | evaluator | score | reason |\n|---|---|---|---|\n")
		for _, f := range s.Failures {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(f.CaseID), mdEscape(f.Evaluator), f.mdScore(), mdEscape(f.Reason))
		}
	}
	if len(s.JudgeStats) > 0 {
		b.WriteString("\n")
		mdStats(&b, "## LLM judge", s.JudgeStats)
	}
	if len(s.JudgeFailures) > 0 {
		b.WriteString("\n## LLM judge failures\n\n| case | evaluator | agent | score | reason |\n|---|---|---|---|---|\n")
		for _, f := range s.JudgeFailures {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdEscape(f.CaseID), mdEscape(f.Evaluator), mdEscape(f.Agent), f.mdScore(), mdEscape(f.Reason))
		}
	}
	return b.String()
}

// mdStats writes a heading and the table of stats, by name.
func mdStats(b *strings.Builder, heading string, stats map[string]EvaluatorStats) {
	b.WriteString(heading + "\n\n| evaluator | evaluations | passed | failed | errors | pass rate | average score |\n|---|---|---|---|---|---|---|\n")
	for _, name := range slices.Sorted(maps.Keys(stats)) {
		st := stats[name]
		fmt.Fprintf(b, "| %s | %d | %d | %d | %d | %.2f%% | %.4f |\n", mdEscape(name), st.TotalEvaluations, st.Passed, st.Failed, st.Errors, 100*st.PassRate, st.AverageScore)
	}
}

func (f Failure) mdScore() string {
	if f.Error {
		return "error"
	}
	return fmt.Sprintf("%.4f", f.Score)
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}
