// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"encoding/json"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

// domainEvaluator is the label domain of reference evaluator names.
const domainEvaluator = "evaluator"

// Values of the `result` label of agent_eval_reference_results_total.
const (
	refResultPass  = "pass"
	refResultFail  = "fail"
	refResultError = "error"
)

// referenceSeries are the series of reference-based results (docs/scoring.md §11): one
// observation per stored session matched to a dataset case and evaluator.
type referenceSeries struct {
	score   histogramVec
	results counterVec
}

var (
	referenceScoreOpts = prometheus.HistogramOpts{
		Name:    "agent_eval_reference_score",
		Help:    "Reference-based scores in [0,1] of sessions matched to a dataset case, by evaluator.",
		Buckets: scoreBuckets,
	}
	referenceResultsOpts = prometheus.CounterOpts{
		Name: "agent_eval_reference_results_total",
		Help: "Reference-based evaluations of sessions matched to a dataset case, by evaluator and result (pass, fail, error).",
	}
)

// record feeds the series from the analysis' references (a reference.CaseResult, decoded
// from JSON); an analysis without one is ignored.
func (r *referenceSeries) record(a *evaluation.Analysis, labels *labelLimiter) {
	if a.References == nil {
		return
	}
	js, err := json.Marshal(a.References)
	if err != nil {
		return
	}
	var cr reference.CaseResult
	if json.Unmarshal(js, &cr) != nil || cr.CaseID == "" {
		return
	}
	for name, res := range cr.Results {
		ev := labels.value(domainEvaluator, name)
		r.score.observe(res.Score, ev)
		result := refResultFail
		if res.Pass {
			result = refResultPass
		}
		r.results.inc(ev, result)
	}
	for name := range cr.Errors {
		r.results.inc(labels.value(domainEvaluator, name), refResultError)
	}
}
