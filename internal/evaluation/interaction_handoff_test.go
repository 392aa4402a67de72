// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

func TestHandoffScore(t *testing.T) {
	tests := []struct {
		name    string
		user    string
		steps   []session.AgentStep
		payload string
		want    float64
	}{
		{"all facts passed", "Refund order #12345 for $49.99", nil, "order #12345, $49.99", 1},
		{"half the facts", "Refund order #12345 for $49.99", nil, "order #12345", 0.5},
		{"empty payload", "Refund order #12345 for $49.99", nil, "", 0},
		// The tool result obtained before the handoff adds R-778: 2 of 3.
		{"earlier tool results count", "Refund order #12345 for $49.99",
			[]session.AgentStep{toolStep("issue_refund", `{"order_id":"12345","amount":49.99}`, "refund R-778 created", 1)},
			"order #12345, refund R-778", 2.0 / 3},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := append(append([]session.AgentStep{}, tt.steps...), handoffStep("executor", "reviewer", tt.payload))
			s := newSession("h", refundAgents(), turn(0, tt.user, "ok", 10, interaction("executor", tt.user, "ok", 10, steps...)))
			r := e.EvaluateInteraction(s, 0, 0)
			score(t, "handoff", tt.want, r.Handoff)
		})
	}
	// A later tool result is not context for an earlier handoff.
	s := newSession("h", refundAgents(), turn(0, "Refund order #12345", "ok", 10, interaction("executor", "", "ok", 10,
		handoffStep("executor", "reviewer", "order #12345"), toolStep("lookup_order", `{"order_id":"12345"}`, "refund R-1 pending", 1))))
	score(t, "handoff", 1, e.EvaluateInteraction(s, 0, 0).Handoff)
	// No handoff → null.
	s = newSession("h", refundAgents(), turn(0, "Refund order #12345", "ok", 10, interaction("executor", "", "ok", 10)))
	r := e.EvaluateInteraction(s, 0, 0)
	score(t, "handoff", null, r.Handoff)
	assert.Equal(t, "null: no handoff", r.Explanations[keyHandoff])
}

// TestHandoffContextExtendedAsMadeAfresh: the handoff context extended from a turn's
// previous handoff (handoffContext) holds the texts and distinct facts made afresh for
// each handoff, in step order and when a step comes again or earlier.
func TestHandoffContextExtendedAsMadeAfresh(t *testing.T) {
	e := newEval(t)
	fresh := func(s *session.AgentSession, tu *session.Turn, ii, si int) ([]string, []text.Fact) {
		c := e.newCtx(s)
		out := []string{tu.UserMessage}
		for j := 0; j <= ii; j++ {
			steps := tu.Interactions[j].Steps
			end := len(steps)
			if j == ii {
				end = si
			}
			for k := 0; k < end; k++ {
				if j == ii && steps[k].SpanID != "" && steps[k].SpanID == steps[si].SpanID {
					continue // the call that launched the handoff: its result is the answer
				}
				if tc := steps[k].ToolCall; tc != nil && tc.Result != "" {
					if _, isHandoff := c.args.handoffTarget(tc); !isHandoff {
						out = append(out, tc.Result)
					}
				}
			}
		}
		return out, c.facts(out)
	}
	handoffs := 0
	for _, s := range e2eSessions(t) {
		c := e.newCtx(s)
		type step struct{ ii, si int }
		for ti := range s.Turns {
			tu := &s.Turns[ti]
			var steps []step
			for ii := range tu.Interactions {
				for si := range tu.Interactions[ii].Steps {
					if tu.Interactions[ii].Steps[si].Handoff != nil {
						steps = append(steps, step{ii, si})
					}
				}
			}
			handoffs += len(steps)
			// In step order, then the last again and the first again (a restart).
			if len(steps) > 0 {
				steps = append(steps, steps[len(steps)-1], steps[0])
			}
			for _, st := range steps {
				gotTexts, gotFacts := c.handoffContext(tu, st.ii, st.si)
				wantTexts, wantFacts := fresh(s, tu, st.ii, st.si)
				require.Equal(t, wantTexts, gotTexts, "turn %d step %v", ti, st)
				require.Equal(t, wantFacts, gotFacts, "turn %d step %v", ti, st)
			}
		}
	}
	require.Greater(t, handoffs, 10)
}

// TestHandoffContextWithoutItsOwnAnswer: the result of the tool call that launched an
// agent-as-tool handoff (Claude's Agent tool) is the receiving agent's answer, known only
// after the handoff: context of the later handoffs, never of its own. Before, each
// sub-agent's answer was in its own handoff's context and counted as a fact it needed and
// used (audit of the Claude golden, 2026-11-27).
func TestHandoffContextWithoutItsOwnAnswer(t *testing.T) {
	e := newEval(t)
	launch := func(id, prompt, answer string) []session.AgentStep {
		call := toolStep("Agent", `{"subagent_type":"weather","prompt":"`+prompt+`"}`, answer, 1)
		call.SpanID, call.ToolCall.SpanID = id, id
		h := handoffStep("coordinator", "weather", prompt)
		h.SpanID = id
		return []session.AgentStep{call, h}
	}
	steps := append(launch("t1", "Paris weather", "Paris is 21°C"), launch("t2", "Rome weather", "Rome is 25°C")...)
	s := newSession("h", nil, turn(0, "Compare the weather in Paris and Rome", "ok", 10,
		interaction("coordinator", "", "ok", 10, steps...),
		interaction("weather", "Paris weather", "Paris is 21°C", 1), interaction("weather", "Rome weather", "Rome is 25°C", 1)))
	for _, fresh := range []bool{true, false} {
		c := e.newCtx(s)
		tu := &s.Turns[0]
		if !fresh {
			c.handoffContext(tu, 0, 1) // extended from the first handoff
		}
		got, _ := c.handoffContext(tu, 0, 3)
		assert.Equal(t, []string{tu.UserMessage, "Paris is 21°C"}, got, "fresh %v: the second handoff knows the first answer, not its own", fresh)
		got, _ = c.handoffContext(tu, 0, 1)
		assert.Equal(t, []string{tu.UserMessage}, got, "fresh %v: the first handoff knows no answer", fresh)
	}
}
