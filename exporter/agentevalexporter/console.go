// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"cmp"
	"strconv"
	"strings"
	"unicode"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// ConsoleMode selects what the exporter writes to the collector's log about the
// evaluations it receives (the `console` key).
type ConsoleMode string

// Console modes.
const (
	// ConsoleNone logs nothing per evaluation (the default).
	ConsoleNone ConsoleMode = "none"
	// ConsoleSummary logs one info line per evaluated turn and one per stored session
	// analysis: ids, verdict, confidence, scores and issue types, never the analysis itself.
	ConsoleSummary ConsoleMode = "summary"
)

var validConsoleModes = []ConsoleMode{ConsoleNone, ConsoleSummary}

// Bounds of a console line: ids and names are cut to these many runes ("…" marks the
// cut), at most consoleMaxIssues issues are named, and a line never exceeds
// consoleMaxLineBytes bytes.
const (
	consoleMaxIDRunes   = 64
	consoleMaxNameRunes = 32
	consoleMaxIssues    = 3
	consoleMaxLineBytes = 300
)

// turnConsoleLine is the summary line of one turn result, e.g.
//
//	evaluate turn session=sess-1 turn=2 verdict=hallucination confidence=1.00 final=false issues=PARAMETER_HALLUCINATION(refund_order.reason)
//
// turn counts from 1 (turn_index + 1). verdict is "ok" for a good turn, else its
// detection type; final=false marks the provisional result sent when the turn closes,
// revised=true a final verdict that replaces an earlier one (replaces= the detection type
// it replaces, when that differs: agent_eval_turns_revised_total). issues names the tool
// issues of the turn's calls as TYPE(tool.parameter) (consoleIssue), at most
// consoleMaxIssues of them then "+N"; not_evaluable counts the calls that could not be
// checked. A turn span carries the calls with its provisional result only
// (evalspan.TurnSummary): a final verdict's line names none.
func turnConsoleLine(tr *evaluation.TurnResult) string {
	var b strings.Builder
	b.WriteString("evaluate turn session=")
	b.WriteString(consoleToken(tr.SessionID, consoleMaxIDRunes))
	b.WriteString(" turn=")
	b.WriteString(strconv.Itoa(tr.TurnIndex + 1))
	b.WriteString(" verdict=")
	if tr.IsBad {
		b.WriteString(consoleToken(cmp.Or(tr.DetectionType, "bad"), consoleMaxNameRunes))
	} else {
		b.WriteString("ok")
	}
	b.WriteString(" confidence=")
	b.WriteString(strconv.FormatFloat(tr.Confidence, 'f', 2, 64))
	if !tr.Final {
		b.WriteString(" final=false")
	}
	if tr.Revised {
		b.WriteString(" revised=true")
		if r := tr.ReplacedDetectionType; r != "" && r != tr.DetectionType {
			b.WriteString(" replaces=")
			b.WriteString(consoleToken(r, consoleMaxNameRunes))
		}
	}
	if tr.Partial {
		b.WriteString(" partial=true")
	}
	var issues []string
	notEvaluable := 0
	for i := range tr.Interactions {
		for j := range tr.Interactions[i].ToolCalls {
			tc := &tr.Interactions[i].ToolCalls[j]
			if tc.Verdict == evaluation.VerdictNotEvaluable {
				notEvaluable++
			}
			for k := range tc.Issues {
				issues = append(issues, consoleIssue(tc, &tc.Issues[k]))
			}
		}
	}
	if len(issues) > 0 {
		b.WriteString(" issues=")
		shown := min(len(issues), consoleMaxIssues)
		b.WriteString(strings.Join(issues[:shown], ","))
		if more := len(issues) - shown; more > 0 {
			b.WriteString(",+")
			b.WriteString(strconv.Itoa(more))
		}
	}
	if notEvaluable > 0 {
		b.WriteString(" not_evaluable=")
		b.WriteString(strconv.Itoa(notEvaluable))
	}
	return text.Cap(b.String(), consoleMaxLineBytes)
}

// sessionConsoleLine is the summary line of one stored analysis, e.g.
//
//	evaluate agent_session session=sess-1 revision=1 overall=0.81 task_completion=true partial=false turns=3 bad_turns=1 tool_issues=2
//
// A score that could not be computed reads n/a, an unknown task completion unknown.
func sessionConsoleLine(a *evaluation.Analysis) string {
	var b strings.Builder
	b.WriteString("evaluate agent_session session=")
	b.WriteString(consoleToken(a.SessionID, consoleMaxIDRunes))
	b.WriteString(" revision=")
	b.WriteString(strconv.Itoa(a.AnalysisRevision))
	b.WriteString(" overall=")
	b.WriteString(consoleScore(a.OverallScore))
	b.WriteString(" task_completion=")
	if a.TaskCompletion == nil {
		b.WriteString("unknown")
	} else {
		b.WriteString(strconv.FormatBool(*a.TaskCompletion))
	}
	b.WriteString(" partial=")
	b.WriteString(strconv.FormatBool(a.Partial))
	b.WriteString(" turns=")
	b.WriteString(strconv.Itoa(len(a.TurnResults)))
	b.WriteString(" bad_turns=")
	b.WriteString(strconv.Itoa(a.Conversation.BadResponses))
	b.WriteString(" tool_issues=")
	b.WriteString(strconv.Itoa(len(a.ToolIssues)))
	return text.Cap(b.String(), consoleMaxLineBytes)
}

// consoleIssue names issue is of call tc as TYPE(tool.parameter), or TYPE(tool) for an
// issue without a parameter. A turn span's summary (evalspan.TurnSummary) leaves out an
// issue's tool name, which is its call's: the tool is tc's when is does not name one.
func consoleIssue(tc *evaluation.ToolCallResult, is *evaluation.ToolIssue) string {
	target := consoleToken(cmp.Or(is.ToolName, tc.ToolName), consoleMaxNameRunes)
	if is.Parameter != "" {
		target += "." + consoleToken(is.Parameter, consoleMaxNameRunes)
	}
	return consoleToken(string(is.Issue), consoleMaxNameRunes) + "(" + target + ")"
}

func consoleScore(s *float64) string {
	if s == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*s, 'f', 2, 64)
}

// consoleToken makes s safe to print as one space-free token: control characters,
// spaces and the separators of the line (= , ( )) become '_', invalid UTF-8 becomes
// U+FFFD, "" becomes "-", and it is cut to maxRunes runes with "…".
func consoleToken(s string, maxRunes int) string {
	if s == "" {
		return "-"
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxRunes {
			b.WriteString("…")
			break
		}
		switch {
		case r == '=' || r == ',' || r == '(' || r == ')':
			r = '_'
		case unicode.IsSpace(r) || !unicode.IsPrint(r):
			r = '_'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
