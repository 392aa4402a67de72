// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"math"
	"strconv"
)

// Scores, confidences, impacts and latencies leave the evaluators rounded to 4 decimals
// (docs/scoring.md "Rounding"): 0.8333 rather than 0.8333333333333334 in the JSON, the
// evaluation spans and the metrics. The results are rounded once, where they are
// finalised: a turn result when its record is made (EvaluateClosedTurn, FollowUp,
// FinishLast, EvaluateTurn), the analysis when it is aggregated. Session scores are
// computed from the rounded turn results, so a session score is the mean of the values
// shown. The explanations already print numbers with 4 decimals (num).

// round4 rounds v to 4 decimals: the decimal rounding of v's exact binary value, the
// number num prints (0.8687499999999999 is 0.8687 in both; math.Round(v*1e4) would
// give 0.8688, because v*1e4 rounds to 8687.5).
func round4(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		// An integer (0 and 1 are most scores) prints as "N.0000" and parses back to
		// itself (-0 included): no formatting needed.
		return v
	}
	if k, ok := units4(v); ok {
		// k/1e4 is the double nearest the decimal k/10⁴ (one correctly rounded division
		// of exact operands): what ParseFloat returns for that decimal.
		return k / 1e4
	}
	var buf [32]byte
	r, err := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], v, 'f', 4, 64)), 64)
	if err != nil {
		return v
	}
	return r
}

// units4 returns v·10⁴ rounded to an integer, the digits of v's 4-decimal form
// (strconv.FormatFloat(v, 'f', 4, 64)), and true when arithmetic answers for certain:
// |v| < 10⁶, and v is the double nearest k/10⁴ already (a rounded result rounded again)
// or v·10⁴ is far enough from a tie (.5) that the rounding error of s (below 2⁻¹⁸ for
// |s| < 10¹⁰) cannot carry it across. Otherwise false: format with strconv
// (TestRound4ShortcutsAsFormatted, TestNumShortcutsAsFormatted).
func units4(v float64) (float64, bool) {
	if !(math.Abs(v) < 1e6) {
		return 0, false
	}
	s := v * 1e4
	k := math.Round(s)
	return k, k/1e4 == v || math.Abs(math.Abs(s-math.Trunc(s))-0.5) > 1e-3
}

// round4In rounds *v in place, writing only when the value changes: results already
// rounded (a turn result shared by a record and an analysis) are never written again.
func round4In(v *float64) {
	if r := round4(*v); r != *v {
		*v = r
	}
}

// round4Ptr rounds the score *p points to, replacing the pointer (a score pointer may be
// shared) only when the value changes. nil stays nil.
func round4Ptr(p **float64) {
	if *p == nil {
		return
	}
	if r := round4(**p); r != **p {
		q := new(float64) // allocated only when the value changes
		*q = r
		*p = q
	}
}

// roundScores rounds the turn result's confidence, intent drift, latency and, in each
// interaction, its scores, latency and tool-call scores and latencies.
func (tr *TurnResult) roundScores() {
	round4In(&tr.Confidence)
	round4Ptr(&tr.IntentDrift)
	round4In(&tr.LatencyMs)
	for i := range tr.Interactions {
		ir := &tr.Interactions[i]
		for _, p := range []**float64{&ir.Score, &ir.ToolUse, &ir.Reasoning, &ir.Handoff, &ir.ResponseQuality} {
			round4Ptr(p)
		}
		round4In(&ir.LatencyMs)
		for j := range ir.ToolCalls {
			tc := &ir.ToolCalls[j]
			round4Ptr(&tc.Score)
			round4Ptr(&tc.LatencyMs)
		}
	}
}

// roundScores rounds every number of the analysis but counts: session scores and their
// components, per-agent scores, recommendation impacts, latencies and the turn results.
func (a *Analysis) roundScores() {
	for _, p := range []**float64{
		&a.OverallScore, &a.CoordinationScore, &a.IntentDriftScore, &a.ToolUseScore, &a.ReasoningScore,
		&a.Conversation.Score,
		&a.Coordination.NoDuplicateWork, &a.Coordination.ContextPreserved, &a.Coordination.RoleAdherence,
		&a.Coordination.NoPingPong, &a.Coordination.DependencyCompliance,
	} {
		round4Ptr(p)
	}
	for id, as := range a.PerAgentScores {
		for _, p := range []**float64{&as.Overall, &as.ToolUse, &as.Reasoning, &as.Handoff, &as.ResponseQuality} {
			round4Ptr(p)
		}
		round4In(&as.MeanLatencyMs)
		a.PerAgentScores[id] = as
	}
	for i := range a.Recommendations {
		round4In(&a.Recommendations[i].Impact)
	}
	l := &a.Latency
	for _, v := range []*float64{&l.TotalMs, &l.MeanTurnMs, &l.MaxTurnMs, &l.MeanToolCallMs, &l.MaxToolCallMs, &l.MeanInteractionMs} {
		round4In(v)
	}
	for i := range a.TurnResults {
		a.TurnResults[i].roundScores()
	}
}
