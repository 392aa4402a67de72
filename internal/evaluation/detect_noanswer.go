// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// noAnswerDetector finds a turn without answer: its final response is empty while some
// of its text was captured, after an error (the turn or an interaction ended with
// error status) or because the turn was cut short (docs/scoring.md §5.2).
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
		if len(why) > 0 {
			noAnswer = detection{bad: true, typ: DetectionNoAnswer, conf: 1,
				reason: "no final response: " + strings.Join(why, ", ")}
			x.expl = append(x.expl, "no_answer: empty final response after an error ("+strings.Join(why, ", ")+")")
		}
	}
	return noAnswer
}
