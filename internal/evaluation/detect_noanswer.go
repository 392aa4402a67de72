// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"slices"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// noAnswerDetector finds a turn without answer: its final response is empty while some
// of its text was captured, after an error (the turn or an interaction ended with
// error status), because the turn was cut short, or because its agents produced nothing
// at all for a request: no output text, no LLM output, no tool call and no handoff for a
// user message of at least minIntentWords content words (docs/scoring.md §5.2). An empty
// final response after an action (a tool call, a handoff), or in a turn with a value that
// could not be read (session.AnomalyUnreadableValue: it may be the answer), is not judged
// here.
type noAnswerDetector struct{}

var _ turnDetector = noAnswerDetector{}

func (noAnswerDetector) detect(c *evalCtx, x *detectInput) detection {
	t := &c.s.Turns[x.ti]
	var noAnswer detection
	if strings.TrimSpace(t.FinalResponse) == "" && turnHasContent(t) {
		var why []string
		if t.Status == session.StatusError {
			why = append(why, "the turn ended with error status")
		}
		for ii := range t.Interactions {
			if t.Interactions[ii].Status == session.StatusError {
				why = append(why, t.Interactions[ii].AgentID+" ended with error status")
				break
			}
		}
		if t.Partial {
			why = append(why, "the turn was cut short")
		}
		switch {
		case len(why) > 0:
			noAnswer = detection{bad: true, typ: DetectionNoAnswer, conf: 1,
				reason: "no final response: " + strings.Join(why, ", ")}
			x.expl = append(x.expl, "no_answer: empty final response after an error ("+strings.Join(why, ", ")+")")
		case statesRequest(t.UserMessage) && producedNothing(t) && !slices.Contains(t.Anomalies, session.AnomalyUnreadableValue):
			// (A value that could not be read may be the answer: then nothing is judged.)
			noAnswer = detection{bad: true, typ: DetectionNoAnswer, conf: 1,
				reason: "no final response: the agents produced no output and took no action"}
			x.expl = append(x.expl, "no_answer: empty final response to a request, with no output, tool call or handoff by any agent")
		}
	}
	return noAnswer
}

// producedNothing: no interaction of t has output text, a message or reasoning step, an LLM
// output, a tool call or a handoff.
func producedNothing(t *session.Turn) bool {
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		if strings.TrimSpace(in.Output) != "" {
			return false
		}
		for si := range in.Steps {
			st := &in.Steps[si]
			if st.Text != "" || st.ToolCall != nil || st.Handoff != nil || st.LLMCall != nil && st.LLMCall.Output != "" {
				return false
			}
		}
	}
	return true
}
