// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// randomSession builds a session from a seeded generator: 1–4 agents (known or
// unknown tools), 1–6 turns, 1–4 interactions per turn, tool calls with valid,
// hallucinated, missing, malformed, truncated or uncaptured arguments, handoffs with
// and without payload, reasoning, refusals, truncations, errors and empty texts.
func randomSession(r *rand.Rand) *session.AgentSession {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	allTools := refundAgents()[1].Tools
	nAgents := 1 + r.IntN(4)
	agents := make([]session.AgentDefinition, nAgents)
	for i := range agents {
		agents[i] = session.AgentDefinition{ID: fmt.Sprintf("agent%d", i)}
		if r.IntN(4) > 0 {
			agents[i].ToolsSource = "config"
			for _, t := range allTools {
				if r.IntN(2) == 0 {
					agents[i].Tools = append(agents[i].Tools, t)
				}
			}
		}
		if r.IntN(2) == 0 {
			agents[i].HandoffTargets = []string{fmt.Sprintf("agent%d", r.IntN(nAgents))}
		}
	}
	users := []string{"Please refund order #12345 for $49.99", "Is that refund valid?", "No, I meant order #123",
		"Email jane@example.com", "", "Compare 111 and 222", "How do I reset my password?", "How can I reset my password?", "That's wrong, try again"}
	outputs := []string{"", "Refund R-778 issued for order #12345.", "I'm sorry, but I can't help with that.", "Order #99999 refunded $12.50 on 2024-01-02.",
		"Done.", "Comparing 111 with 222", "Open the security page in your settings."}
	reasons := []string{"I will call lookup_order then issue_refund.", "I'm not sure which order this is.", "Hand off to agent1.", "Thinking.", ""}
	params := []string{`{"order_id":"12345"}`, `{"order_id":"12345","amount":49.99}`, `{"order_id":"1","amount":"x","reason":"y"}`,
		`"raw text"`, `[1]`, "", `null`, `{"to":"bad","body":"b"}`, `{"refund_id":"R-1"}`}
	nTurns := 1 + r.IntN(6)
	turns := make([]session.Turn, nTurns)
	for ti := range turns {
		u := pick(users...)
		var ins []session.AgentInteraction
		for k := 1 + r.IntN(4); k > 0; k-- {
			ag := fmt.Sprintf("agent%d", r.IntN(nAgents+1)) // agentN is unknown to the registry
			in := interaction(ag, pick(u, ""), pick(outputs...), float64(r.IntN(1000)))
			if r.IntN(5) == 0 {
				in.Status = "error"
			}
			if r.IntN(5) == 0 {
				in.FinishReason = "length"
			}
			for n := r.IntN(5); n > 0; n-- {
				switch r.IntN(4) {
				case 0:
					in.Steps = append(in.Steps, reasoningStep(pick(reasons...)))
				case 1:
					st := handoffStep(ag, fmt.Sprintf("agent%d", r.IntN(nAgents)), pick("", "order #12345, $49.99", "details"))
					st.Handoff.PayloadCaptured = r.IntN(4) > 0
					in.Steps = append(in.Steps, st)
				default:
					name := pick("lookup_order", "issue_refund", "send_email", "check_refund_status", "delete_database", "transfer_to_agent1")
					st := toolStep(name, pick(params...), pick("", "order 12345 delivered", "refund R-778 created"), float64(r.IntN(200)))
					st.ToolCall.ArgumentsTruncated = r.IntN(8) == 0
					if r.IntN(6) == 0 {
						st.ToolCall.Status, st.ToolCall.Error = "error", "boom"
					}
					if r.IntN(6) == 0 {
						st.ToolCall.Executed, st.ToolCall.Status, st.ToolCall.LatencyMs = false, "not_executed", nil
					}
					in.Steps = append(in.Steps, st)
				}
			}
			ins = append(ins, in)
		}
		final := ""
		if len(ins) > 0 && r.IntN(3) > 0 {
			final = ins[len(ins)-1].Output
		}
		turns[ti] = turn(ti, u, final, float64(r.IntN(3000)), ins...)
	}
	s := newSession("random", agents, turns...)
	if r.IntN(5) == 0 {
		b := r.IntN(2) == 0
		s.Outcome = &b
	}
	return s
}

func inUnit(t *testing.T, what string, v *float64) {
	t.Helper()
	if v != nil && (math.IsNaN(*v) || *v < 0 || *v > 1) {
		t.Errorf("%s = %v, outside [0,1]", what, *v)
	}
}

// TestPropertyScoresInUnitInterval: every score of every random session lies in [0,1],
// every score has an explanation, absent scores say "null", and the analysis is
// deterministic and leaves the session unchanged.
func TestPropertyScoresInUnitInterval(t *testing.T) {
	e := newEval(t)
	for seed := uint64(0); seed < 300; seed++ {
		s := randomSession(rand.New(rand.NewPCG(seed, 42)))
		before, err := json.Marshal(s)
		require.NoError(t, err)
		a := e.AnalyzeSession(s)
		after, _ := json.Marshal(s)
		require.Equal(t, string(before), string(after), "seed %d: the session was modified", seed)

		for name, v := range map[string]*float64{"overall": a.OverallScore, "coordination": a.CoordinationScore, "intent_drift": a.IntentDriftScore,
			"tool_use": a.ToolUseScore, "reasoning": a.ReasoningScore, "conversation": a.Conversation.Score,
			"no_duplicate_work": a.Coordination.NoDuplicateWork, "context_preserved": a.Coordination.ContextPreserved,
			"role_adherence": a.Coordination.RoleAdherence, "no_ping_pong": a.Coordination.NoPingPong} {
			inUnit(t, fmt.Sprintf("seed %d %s", seed, name), v)
		}
		for _, k := range []string{keyOverallScore, keyCoordinationScore, keyIntentDriftScore, keyTaskCompletion, keyConversationScore, keyToolUseScore, keyReasoningScore} {
			assert.NotEmpty(t, a.Explanations[k], "seed %d %s", seed, k)
		}
		if a.OverallScore == nil {
			assert.Contains(t, a.Explanations[keyOverallScore], "null", "seed %d", seed)
		}
		for id, as := range a.PerAgentScores {
			for name, v := range map[string]*float64{"overall": as.Overall, "tool_use": as.ToolUse, "reasoning": as.Reasoning, "handoff": as.Handoff, "response_quality": as.ResponseQuality} {
				inUnit(t, fmt.Sprintf("seed %d %s.%s", seed, id, name), v)
				assert.NotEmpty(t, as.Explanations[name], "seed %d %s.%s", seed, id, name)
				if v == nil {
					assert.Contains(t, as.Explanations[name], "null", "seed %d %s.%s", seed, id, name)
				}
			}
		}
		for _, tr := range a.TurnResults {
			inUnit(t, fmt.Sprintf("seed %d turn %d intent_drift", seed, tr.TurnIndex), tr.IntentDrift)
			inUnit(t, fmt.Sprintf("seed %d turn %d confidence", seed, tr.TurnIndex), &tr.Confidence)
			assert.Equal(t, tr.DetectionType != DetectionNone, tr.IsBad)
			for _, ir := range tr.Interactions {
				for name, v := range map[string]*float64{keyScore: ir.Score, keyToolUse: ir.ToolUse, keyReasoning: ir.Reasoning, keyHandoff: ir.Handoff, keyResponseQuality: ir.ResponseQuality} {
					inUnit(t, fmt.Sprintf("seed %d turn %d %s.%s", seed, tr.TurnIndex, ir.AgentID, name), v)
					if assert.NotEmpty(t, ir.Explanations[name]) && v == nil {
						assert.Contains(t, ir.Explanations[name], "null", "seed %d %s", seed, name)
					}
				}
				for _, tc := range ir.ToolCalls {
					inUnit(t, "call score", tc.Score)
					assert.Equal(t, tc.Score == nil, tc.Verdict == VerdictNotEvaluable)
					assert.Equal(t, tc.Score != nil && len(tc.Issues) == 0, tc.Verdict == VerdictValid)
				}
			}
		}
		for _, r := range a.Recommendations {
			assert.GreaterOrEqual(t, r.Impact, 0.0)
			assert.LessOrEqual(t, r.Impact, 1.0)
		}
		again, _ := json.Marshal(e.AnalyzeSession(s))
		first, _ := json.Marshal(a)
		require.Equal(t, string(first), string(again), "seed %d: not deterministic", seed)
	}
}

// TestPropertyRenormalisationNeverDividesByZero: any mix of absent scores and zero
// weights gives nil or a number in [0,1], never NaN or Inf.
func TestPropertyRenormalisationNeverDividesByZero(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 5000; i++ {
		terms := make([]weighted, 1+r.IntN(5))
		for k := range terms {
			terms[k].name = fmt.Sprintf("t%d", k)
			if r.IntN(3) > 0 {
				terms[k].value = ptr(r.Float64())
			}
			if r.IntN(3) > 0 {
				terms[k].weight = r.Float64()
			}
		}
		v, expl := weightedMean(terms)
		inUnit(t, "weighted mean", v)
		assert.NotEmpty(t, expl)
		if v == nil {
			assert.Contains(t, expl, "null")
		}
	}
	// Every weight configuration that validates gives finite session scores.
	cfg := DefaultConfig()
	cfg.SessionWeights = SessionWeights{IntentDrift: 1}
	cfg.AgentWeights = AgentWeights{Reasoning: 1}
	e, err := New(cfg)
	require.NoError(t, err)
	for seed := uint64(0); seed < 50; seed++ {
		a := e.AnalyzeSession(randomSession(rand.New(rand.NewPCG(seed, 1))))
		inUnit(t, "overall", a.OverallScore)
		for _, as := range a.PerAgentScores {
			inUnit(t, "agent overall", as.Overall)
		}
	}
}

// TestPropertyUnrelatedAgentNeverRaisesCoordination: adding an agent that takes part
// in no handoff and shares no tool (it answers, and calls its own tool correctly)
// never raises coordination_score, and never makes an absent one appear.
func TestPropertyUnrelatedAgentNeverRaisesCoordination(t *testing.T) {
	e := newEval(t)
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		s := randomSession(r)
		before := e.AnalyzeSession(s).CoordinationScore

		s.Agents = append(s.Agents, session.AgentDefinition{ID: "bystander", ToolsSource: "config",
			Tools: []session.ToolDefinition{{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}})
		for ti := range s.Turns {
			if r.IntN(2) == 0 {
				continue
			}
			in := interaction("bystander", "", "It is sunny in Paris.", 5, toolStep("weather", `{"city":"Paris"}`, "sunny", 3))
			ins := s.Turns[ti].Interactions
			at := r.IntN(len(ins) + 1)
			ins = append(ins[:at], append([]session.AgentInteraction{in}, ins[at:]...)...)
			s.Turns[ti].Interactions = ins
		}
		after := e.AnalyzeSession(s).CoordinationScore
		if before == nil {
			assert.Nil(t, after, "seed %d: coordination appeared", seed)
			continue
		}
		if assert.NotNil(t, after, "seed %d", seed) {
			assert.LessOrEqual(t, *after, *before+1e-12, "seed %d: coordination rose from %v to %v", seed, *before, *after)
		}
	}
}
