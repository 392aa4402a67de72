// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// metricInstructions say what a verdict's score means, per metric. Every score is a decimal
// in [0,1] where higher is better, except intent_drift (higher = further off the request),
// as in docs/scoring.md.
var metricInstructions = map[Metric]string{
	MetricReasoning: "Judge the reasoning of the agent named below: is each step justified, consistent with " +
		"the tools and agents it then calls, and free of unresolved uncertainty? 1.0 = sound, 0.0 = incoherent.",
	MetricResponseQuality: "Judge the responses of the agent named below: correct, complete, grounded in the " +
		"tool results and handoffs, no refusal or truncation. 1.0 = excellent, 0.0 = useless or wrong.",
	MetricHandoff: "Judge the handoffs between agents: did each delegating agent pass the context (ids, " +
		"amounts, constraints) the receiving agent needed? 1.0 = everything needed, 0.0 = nothing.",
	MetricHallucination: "Judge whether the final responses state anything unsupported by the user messages, " +
		"tool results or handoffs. 1.0 = fully grounded, 0.0 = fabricated specifics.",
	MetricIntentDrift: "Judge how far the agents' actions and answers wander from the user's request. " +
		"0.0 = on task throughout, 1.0 = entirely off task (higher is worse). pass = the agents stayed on task.",
	MetricTaskCompletion: "Judge whether the agents accomplished the user's task. 1.0 = fully, 0.0 = not at all.",
}

// PerAgent reports whether m is judged once per agent (reasoning, response_quality)
// rather than once per session.
func (m Metric) PerAgent() bool { return m == MetricReasoning || m == MetricResponseQuality }

// SessionMetricSystemPrompt is the system prompt of session-level metric judgements.
const SessionMetricSystemPrompt = `You evaluate a multi-agent AI system from the transcript of one conversation.
Apply the instruction and the rubric. THE SCORE MUST BE A DECIMAL BETWEEN 0.0 AND 1.0.
Answer with a JSON object {"score": <decimal>, "pass": <true|false>, "reason": "<short reasoning>"}.`

// MetricPrompt builds the user prompt that judges metric m on a transcript, for one agent
// (per-agent metrics) or the whole session (agent ""), with the rubric.
func MetricPrompt(m Metric, transcript, agent, rubric string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<Metric>%s</Metric>\n<Instruction>%s</Instruction>\n", m, metricInstructions[m])
	if agent != "" {
		fmt.Fprintf(&b, "<Agent>%s</Agent>\n", agent)
	}
	fmt.Fprintf(&b, "<Transcript>\n%s</Transcript>\n", transcript)
	if rubric != "" {
		fmt.Fprintf(&b, "<Rubric>%s</Rubric>", rubric)
	}
	return b.String()
}

// Transcript renders a session for a judge, turn by turn: the user message, each agent's
// steps (thoughts, tool calls with arguments and results or errors, handoffs) and output,
// and the final response; ReAsk's `[agent_id] ...` line format. It is cut at maxBytes
// (whole lines) with a final "[truncated]" line.
func Transcript(s *session.AgentSession, maxBytes int) string {
	var b strings.Builder
	line := func(format string, args ...any) bool {
		l := fmt.Sprintf(format, args...)
		if maxBytes > 0 && b.Len()+len(l)+1 > maxBytes {
			b.WriteString("[truncated]\n")
			return false
		}
		b.WriteString(l)
		b.WriteByte('\n')
		return true
	}
	for ti := range s.Turns {
		t := &s.Turns[ti]
		if !line("Turn %d", t.Index+1) || (t.UserMessage != "" && !line("User: %s", t.UserMessage)) {
			return b.String()
		}
		for ii := range t.Interactions {
			in := &t.Interactions[ii]
			for _, st := range in.Steps {
				ok := true
				switch {
				case st.Kind == session.StepReasoning && st.Text != "":
					ok = line("[%s] Thought: %s", in.AgentID, st.Text)
				case st.ToolCall != nil:
					tc := st.ToolCall
					res := tc.Result
					if tc.Error != "" {
						res = "error: " + tc.Error
					}
					ok = line("[%s] Tool '%s'(%s): %s", in.AgentID, tc.ToolName, string(tc.Parameters), res)
				case st.Handoff != nil:
					ok = line("[%s] Handoff to %s: %s", in.AgentID, st.Handoff.ToAgent, st.Handoff.Payload)
				}
				if !ok {
					return b.String()
				}
			}
			if in.Output != "" && !line("[%s]: %s", in.AgentID, in.Output) {
				return b.String()
			}
		}
		if t.FinalResponse != "" && !line("Assistant: %s", t.FinalResponse) {
			return b.String()
		}
	}
	return b.String()
}
