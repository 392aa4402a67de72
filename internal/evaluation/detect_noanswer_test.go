// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestNoAnswerDetector: an empty final response is no_answer after an error or a cut, or
// when the agents produced nothing for a request; never after an action alone (the tool
// call may be the answer) or for a closing remark, and only when some text of the turn was
// captured.
func TestNoAnswerDetector(t *testing.T) {
	detect := func(t *testing.T, mod func(*session.Turn)) (detection, []string) {
		tu := turn(0, "Refund order #777", "", 10, interaction("executor", "Refund order #777", "", 10))
		mod(&tu)
		c := newEval(t).newCtx(newSession("n", refundAgents(), tu))
		x := detectInput{followUpConf: -1}
		return noAnswerDetector{}.detect(c, &x), x.expl
	}
	noVerdict := map[string]func(*session.Turn){
		"answered": func(tu *session.Turn) { tu.FinalResponse = "Done."; tu.Status = session.StatusError },
		"empty after a tool call": func(tu *session.Turn) {
			tu.Interactions[0].Steps = []session.AgentStep{{Kind: session.StepToolCall, ToolCall: &session.ToolCall{ToolName: "issue_refund"}}}
		},
		"empty after a handoff": func(tu *session.Turn) {
			tu.Interactions[0].Steps = []session.AgentStep{{Kind: session.StepHandoff, Handoff: &session.Handoff{FromAgent: "executor", ToAgent: "billing"}}}
		},
		"empty after LLM text": func(tu *session.Turn) {
			tu.Interactions[0].Steps = []session.AgentStep{{Kind: session.StepLLMCall, LLMCall: &session.LLMCall{Output: "Let me check."}}}
		},
		"closing remark":      func(tu *session.Turn) { tu.UserMessage, tu.Interactions[0].Input = "Thanks!", "Thanks!" },
		"an unreadable value": func(tu *session.Turn) { tu.Anomalies = []string{session.AnomalyUnreadableValue} },
		"nothing captured": func(tu *session.Turn) {
			tu.UserMessage, tu.Interactions[0].Input, tu.Status = "", "", session.StatusError
		},
	}
	for name, mod := range noVerdict {
		t.Run(name, func(t *testing.T) {
			d, expl := detect(t, mod)
			assert.Equal(t, detection{}, d)
			assert.Empty(t, expl)
		})
	}
	// Keyed by the verdict's reason.
	verdicts := map[string]func(*session.Turn){
		"no final response: the turn ended with error status":                 func(tu *session.Turn) { tu.Status = session.StatusError },
		"no final response: executor ended with error status":                 func(tu *session.Turn) { tu.Interactions[0].Status = session.StatusError },
		"no final response: the turn was cut short":                           func(tu *session.Turn) { tu.Partial = true },
		"no final response: the agents produced no output and took no action": func(*session.Turn) {},
	}
	for reason, mod := range verdicts {
		t.Run(reason, func(t *testing.T) {
			d, expl := detect(t, mod)
			assert.Equal(t, detection{bad: true, typ: DetectionNoAnswer, conf: 1, reason: reason}, d)
			assert.Len(t, expl, 1)
		})
	}
}

// TestTurnCutByCollector: a turn the collector closed early (max_sessions evicting its
// session, max_spans_per_session, a shutdown) while its spans could still come is not
// judged: an audit found evicted fragments judged no_answer and CCM, their final
// responders scored 0, although the agents did answer after the cut. The turn is none,
// not evaluable (cut_by_collector), its final responder's response_quality null, its
// follow-up verdict none, and it is left out of conversation_score. A turn the run left
// unfinished (no root by turn_timeout: Partial without CutBy) is still no_answer.
func TestTurnCutByCollector(t *testing.T) {
	e := newEval(t)
	cut := turn(0, "Refund order #777 please", "", 10, interaction("executor", "Refund order #777 please", "", 10))
	cut.Partial, cut.CutBy = true, session.EndReasonMaxSessions
	next := turn(1, "Refund order #777 please", "Refunded.", 10, interaction("executor", "Refund order #777 please", "Refunded.", 10))

	a := e.AnalyzeSession(newSession("cut", refundAgents(), cut, next))
	tr := a.TurnResults[0]
	assert.False(t, tr.IsBad, "a re-ask of an answer never seen is no CCM")
	assert.Equal(t, DetectionNone, tr.DetectionType)
	assert.Contains(t, tr.NotEvaluable, ReasonCutByCollector)
	assert.Contains(t, tr.Explanations[keyDetection], "not judged: the collector closed the turn early (max_sessions)")
	assert.Nil(t, tr.Interactions[0].ResponseQuality)
	require.NotNil(t, a.Conversation.Score)
	assert.Equal(t, 1.0, *a.Conversation.Score, "only the judged turn counts")

	// The processor's path: the turn evaluated on close, its follow-up verdict later.
	rec := e.EvaluateClosedTurn("cut", refundAgents(), &cut, 0, nil)
	assert.False(t, rec.Result.IsBad)
	rec = e.FollowUp(rec, "Refund order #777 please")
	assert.True(t, rec.Result.Final)
	assert.False(t, rec.Result.IsBad, "no follow-up verdict either")

	crashed := cut
	crashed.CutBy = ""
	a = e.AnalyzeSession(newSession("crashed", refundAgents(), crashed))
	assert.Equal(t, DetectionNoAnswer, a.TurnResults[0].DetectionType, "the run itself stopped: no answer")
}
