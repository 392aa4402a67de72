// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

// latency summarises the session's latencies in milliseconds; totalMs, when not zero,
// is the session's total (else the sum of the turns').
func latency(totalMs float64, trs []TurnResult) LatencySummary {
	var l LatencySummary
	var turnSum, toolSum, inSum float64
	ins := 0
	for ti := range trs {
		tr := &trs[ti]
		turnSum += tr.LatencyMs
		l.MaxTurnMs = max(l.MaxTurnMs, tr.LatencyMs)
		for ii := range tr.Interactions {
			ir := &tr.Interactions[ii]
			ins++
			inSum += ir.LatencyMs
			for ci := range ir.ToolCalls {
				tc := &ir.ToolCalls[ci]
				if tc.LatencyMs == nil {
					continue
				}
				l.ToolCalls++
				toolSum += *tc.LatencyMs
				l.MaxToolCallMs = max(l.MaxToolCallMs, *tc.LatencyMs)
			}
		}
	}
	l.TotalMs = totalMs
	if l.TotalMs == 0 {
		l.TotalMs = turnSum
	}
	if n := len(trs); n > 0 {
		l.MeanTurnMs = turnSum / float64(n)
	}
	if l.ToolCalls > 0 {
		l.MeanToolCallMs = toolSum / float64(l.ToolCalls)
	}
	if ins > 0 {
		l.MeanInteractionMs = inSum / float64(ins)
	}
	return l
}

// sessionLatency sets the latency summary.
type sessionLatency struct{}

var _ sessionEvaluator = sessionLatency{}

func (sessionLatency) evaluate(_ *Evaluator, x sessionInput, a *Analysis) {
	a.Latency = latency(x.meta.TotalLatencyMs, a.TurnResults)
}
