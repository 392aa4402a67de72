// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui // import "github.com/agenteval/agenteval-collector/internal/webui"

import (
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Score bands of the badges. Scores are in [0,1], higher is better; the bands follow
// the recommendation threshold (0.7, docs/scoring.md): below it is "poor".
const (
	bandGoodMin = 0.9
	bandFairMin = 0.7
)

// Band names: the badge's CSS class and the word printed next to the number, so the
// badge reads the same without colour.
const (
	bandGood = "good"
	bandFair = "fair"
	bandPoor = "poor"
	bandNone = "n/a"
)

// band classifies a score (higher is better) as score prints it, rounded to two
// decimals, so that a badge's number and word agree: 0.8996 prints "0.90" and is good.
// live.js applies the same rule. nil is bandNone.
func band(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return bandNone
	}
	switch r := rounded(*v); {
	case r >= bandGoodMin:
		return bandGood
	case r >= bandFairMin:
		return bandFair
	default:
		return bandPoor
	}
}

// driftBand classifies intent_drift_score, where lower is better, as score prints it:
// the band of 1 − the rounded value.
func driftBand(v *float64) string {
	if v == nil {
		return bandNone
	}
	inv := 1 - rounded(*v)
	return band(&inv)
}

// score formats a score with two decimals; nil is "n/a".
func score(v *float64) string {
	if v == nil {
		return bandNone
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// rounded returns v rounded to two decimals as score prints it.
func rounded(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64) // always a number
	return r
}

// ms formats a duration given in milliseconds: "850 ms", "2.4 s", "3m 05s".
func ms(v float64) string {
	switch {
	case v < 1000:
		return fmt.Sprintf("%.0f ms", v)
	case v < 60_000:
		return fmt.Sprintf("%.1f s", v/1000)
	default:
		d := time.Duration(v) * time.Millisecond
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}

// when formats a time in UTC to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// isoTime is the machine-readable form for <time datetime>.
func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func sessionURL(id string) string { return "/sessions/" + url.PathEscape(id) }

func agentURL(id string) string { return "/agents/" + url.PathEscape(id) }

func apiSessionURL(id string) string { return "/api/v1/agent_sessions/" + url.PathEscape(id) }

// yesNo prints a tri-state flag.
func yesNo(v *bool, yes, no string) string {
	switch {
	case v == nil:
		return "unknown"
	case *v:
		return yes
	default:
		return no
	}
}

// detectionType is a bad-turn verdict (TurnResult.DetectionType) and what it means, as
// the pages' legend and titles say it.
type detectionType struct{ Type, Meaning string }

// detectionTypes are the bad-turn verdicts in the order of their priority
// (docs/scoring.md §5.2), with RDM and CCM spelled out as the ReAsk plan names them.
var detectionTypes = []detectionType{
	{evaluation.DetectionRDM, "response dissatisfaction: the next user message corrects the answer or complains about it"},
	{evaluation.DetectionCCM, "conversation continuity: the next user message asks the same thing again"},
	{evaluation.DetectionNoAnswer, "the turn ended without a final response"},
	{evaluation.DetectionHallucination, "the answer states specifics found in none of its inputs, or a tool call invented parameters"},
	{evaluation.DetectionLLMJudge, "the LLM judge found the answer bad"},
}

// detectionMeaning returns what verdict (or recommendation kind) t means, "" when it is
// not a bad-turn verdict.
func detectionMeaning(t string) string {
	for _, d := range detectionTypes {
		if d.Type == t {
			return d.Meaning
		}
	}
	return ""
}

// anomalyLabels are the words the session page shows for a turn's anomalies
// (TurnResult.Anomalies, the session.Anomaly* values); the code stays in the label's
// title, as the API and the turn anomaly metric name it.
var anomalyLabels = map[string]string{
	session.AnomalyCycle:           "↻ span parent cycle, broken",
	session.AnomalyDuplicateSpan:   "⧉ duplicate span, first kept",
	session.AnomalyMissingParent:   "⚠ missing parent span",
	session.AnomalySelfParent:      "⚠ span is its own parent",
	session.AnomalyLateSpan:        "⏱ span arrived after the turn closed",
	session.AnomalyTruncatedText:   "✂ text cut at max_text_bytes",
	session.AnomalyUnreadableValue: "⚠ unreadable span value, not used",
}

// anomalyLabel returns the words for anomaly code a; an unknown code (a newer
// collector's) is shown as it is.
func anomalyLabel(a string) string {
	if l, ok := anomalyLabels[a]; ok {
		return l
	}
	return "⚠ " + a
}

func funcs() template.FuncMap {
	return template.FuncMap{
		"band":             band,
		"driftBand":        driftBand,
		"score":            score,
		"ms":               ms,
		"when":             when,
		"isoTime":          isoTime,
		"sessionURL":       sessionURL,
		"agentURL":         agentURL,
		"apiSessionURL":    apiSessionURL,
		"yesNo":            yesNo,
		"anomalyLabel":     anomalyLabel,
		"detectionMeaning": detectionMeaning,
		"detectionTypes":   func() []detectionType { return detectionTypes },
		// turnNo is the turn number shown to people: turn_index 0 is "Turn 1".
		"turnNo": func(i int) int { return i + 1 },
		"duration": func(a, b time.Time) string {
			if a.IsZero() || b.IsZero() {
				return "–"
			}
			return ms(float64(b.Sub(a)) / float64(time.Millisecond))
		},
	}
}
