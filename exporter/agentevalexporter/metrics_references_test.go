// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

func TestRecordReferences(t *testing.T) {
	m := newPromMetrics(100, nil)
	cr := reference.CaseResult{CaseID: "papers", Results: map[string]reference.Result{
		"tool_selection": {Score: 0.5}, "tool_sequence": {Score: 1, Pass: true},
	}, Errors: map[string]string{"classification_accuracy": "no class"}}
	// As the exporter sees it: decoded from the analysis JSON.
	js, err := json.Marshal(evaluation.Analysis{SessionID: "s", References: cr})
	require.NoError(t, err)
	var a evaluation.Analysis
	require.NoError(t, json.Unmarshal(js, &a))
	m.recordAnalysis(&a)
	m.recordAnalysis(&evaluation.Analysis{SessionID: "no-case"})

	expected := `
# HELP agent_eval_reference_results_total Reference-based evaluations of sessions matched to a dataset case, by evaluator and result (pass, fail, error).
# TYPE agent_eval_reference_results_total counter
agent_eval_reference_results_total{evaluator="classification_accuracy",result="error"} 1
agent_eval_reference_results_total{evaluator="tool_selection",result="fail"} 1
agent_eval_reference_results_total{evaluator="tool_sequence",result="pass"} 1
`
	require.NoError(t, testutil.GatherAndCompare(scraped(m), strings.NewReader(expected), "agent_eval_reference_results_total"))
	h := findHistogram(t, m.registry, "agent_eval_reference_score", map[string]string{"evaluator": "tool_selection"})
	assert.Equal(t, uint64(1), h.count)
	assert.InDelta(t, 0.5, h.sum, 1e-12)
	assert.Equal(t, uint64(1), h.buckets[0.5])
}
