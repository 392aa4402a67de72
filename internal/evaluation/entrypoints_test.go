// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import "github.com/agenteval/agenteval-collector/internal/session"

// Test entry points into one tool call and one interaction. The processor scores whole
// closed turns (EvaluateClosedTurn) and sessions (Aggregate); these reach the same code
// (validateCall, evalCtx.turn) with one call or one interaction in view.

// ValidateToolCall validates one tool call of agent in turn turnIndex (docs/scoring.md §3).
// agent may be nil (unknown agent: tools unknown). Handoff tools are authorised when
// their target is one of agent.HandoffTargets; use ValidateToolCallInSession to also
// accept handoffs to any agent of the session, as EvaluateInteraction does.
func (e *Evaluator) ValidateToolCall(agent *session.AgentDefinition, call *session.ToolCall, turnIndex int) ToolCallResult {
	return e.validateCall(agentIDOf(agent), agent, call, turnIndex, nil, nil)
}

// ValidateToolCallInSession is ValidateToolCall with the session's agents known: a
// handoff tool whose target is an agent of s is authorised too.
func (e *Evaluator) ValidateToolCallInSession(s *session.AgentSession, agent *session.AgentDefinition, call *session.ToolCall, turnIndex int) ToolCallResult {
	return e.validateCall(agentIDOf(agent), agent, call, turnIndex, sessionAgentSet(s), nil)
}

// EvaluateInteraction scores interaction interactionIndex of turn turnIndex (docs/architecture.md
// §5.2): its tool calls, tool_use, reasoning, handoff and response_quality and the
// weighted interaction score. The turn's detection is computed with the information
// at hand (final when the next turn exists) so that the final responder of a bad turn
// gets response_quality 0. Out-of-range indexes return a result whose explanation says
// so and whose scores are nil.
func (e *Evaluator) EvaluateInteraction(s *session.AgentSession, turnIndex, interactionIndex int) InteractionResult {
	if s == nil || turnIndex < 0 || turnIndex >= len(s.Turns) ||
		interactionIndex < 0 || interactionIndex >= len(s.Turns[turnIndex].Interactions) {
		return InteractionResult{ToolCalls: []ToolCallResult{}, Explanations: map[string]string{"score": "null: no such interaction"}}
	}
	c := e.newCtx(s)
	tr := c.turn(turnIndex, turnIndex+1 < len(s.Turns))
	tr.roundScores()
	return tr.Interactions[interactionIndex]
}
