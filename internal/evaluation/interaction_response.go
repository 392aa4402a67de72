// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// responseQuality is docs/scoring.md §4 response_quality without the bad-turn rule.
// Only the turn's final responder owes the user an answer: another interaction with no
// output of its own (it worked through tools or handed off, or its content was not
// captured) has nothing to judge and gets null.
func (c *evalCtx) responseQuality(in *session.AgentInteraction, content, final bool) (*float64, string) {
	if in.Status == session.StatusError {
		why := "error status"
		if in.ErrorType != "" {
			why += " (" + in.ErrorType + ")"
		}
		return ptr(0), "0: " + why
	}
	if strings.TrimSpace(in.Output) == "" {
		if !content {
			return nil, "null: the turn has no captured content"
		}
		if c.delegates(in) {
			return nil, ExplanationDelegated
		}
		if !final {
			return nil, "null: no own output and not the turn's final responder"
		}
		return ptr(0), "0: empty output from the turn's final responder"
	}
	score := 1.0
	var why []string
	if in.FinishReason == "length" {
		score -= c.e.cfg.TruncationPenalty
		why = append(why, "truncated (finish_reason=length) −"+num(c.e.cfg.TruncationPenalty))
	}
	if text.Refusal(in.Output) {
		score -= c.e.cfg.RefusalPenalty
		why = append(why, "refusal −"+num(c.e.cfg.RefusalPenalty))
	}
	score = clamp01(score)
	if len(why) == 0 {
		return ptr(score), "1: non-empty output, not truncated, no refusal"
	}
	return ptr(score), "1 " + strings.Join(why, ", ") + " = " + num(score)
}

func (c *evalCtx) delegates(in *session.AgentInteraction) bool {
	for si := range in.Steps {
		if in.Steps[si].Handoff != nil {
			return true
		}
		if tc := in.Steps[si].ToolCall; tc != nil {
			if _, ok := c.args.handoffTarget(tc); ok {
				return true
			}
		}
	}
	return false
}

// responseQuality is the interaction's response_quality, before the bad-turn rule (the
// turn's detection sets the final responder's to 0 when the turn is bad).
type responseQuality struct{}

var _ interactionEvaluator = responseQuality{}

func (responseQuality) evaluate(c *evalCtx, x interactionInput) (*float64, string) {
	if x.t.CutBy != "" && x.in.Status != session.StatusError && strings.TrimSpace(x.in.Output) == "" {
		return nil, "null: no output seen before the collector closed the turn early (" + string(x.t.CutBy) + ")"
	}
	return c.responseQuality(x.in, x.content, x.final)
}
