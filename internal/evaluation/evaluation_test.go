// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// score asserts a nullable score: want < 0 means nil.
func score(t *testing.T, name string, want float64, got *float64) {
	t.Helper()
	if want < 0 {
		assert.Nil(t, got, "%s should be null", name)
		return
	}
	if assert.NotNil(t, got, "%s should be present", name) {
		assert.InDelta(t, want, *got, 1e-4, name)
	}
}

const null = -1.0

// A turnsCase is a case of a session score computed from the turn results: the score
// wanted (null: absent) and its explanation.
type turnsCase struct {
	name  string
	turns []TurnResult
	want  float64
	expl  string
}

// testTurnsScore runs ev on an analysis holding each case's turn results and checks the
// score got reads and the explanation under key.
func testTurnsScore(t *testing.T, ev sessionEvaluator, key string, got func(*Analysis) *float64, cases []turnsCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			a := Analysis{TurnResults: tt.turns, Explanations: map[string]string{}}
			ev.evaluate(newEval(t), sessionInput{}, &a)
			score(t, key, tt.want, got(&a))
			assert.Equal(t, tt.expl, a.Explanations[key])
		})
	}
}

func detections(a Analysis) []string {
	out := []string{}
	for _, tr := range a.TurnResults {
		out = append(out, tr.DetectionType)
	}
	return out
}

// TestRefundExample is the ReAsk plan's refund example (planner → executor → reviewer,
// order #12345), every number computed by hand in the comments (docs/scoring.md
// "Worked example" walks through the same session).
func TestRefundExample(t *testing.T) {
	a := newEval(t).AnalyzeSession(refundSession())

	require.Len(t, a.TurnResults, 3)
	assert.Equal(t, []string{DetectionNone, DetectionNone, DetectionHallucination}, detections(a))
	assert.Equal(t, 1.0, a.TurnResults[2].Confidence) // a schema-verified hallucinated parameter

	// Turn 0: everything right.
	t0 := a.TurnResults[0]
	require.Len(t, t0.Interactions, 3)
	planner, executor, reviewer := t0.Interactions[0], t0.Interactions[1], t0.Interactions[2]
	score(t, "planner.tool_use", null, planner.ToolUse)
	score(t, "planner.reasoning", 1, planner.Reasoning) // names executor, hands off to executor: P=R=1
	score(t, "planner.handoff", 1, planner.Handoff)     // payload has #12345 and $49.99
	score(t, "planner.response_quality", null, planner.ResponseQuality)
	score(t, "planner.score", 1, planner.Score)
	score(t, "executor.tool_use", 1, executor.ToolUse)
	score(t, "executor.reasoning", 1, executor.Reasoning) // lookup_order, issue_refund, reviewer
	score(t, "executor.handoff", 1, executor.Handoff)     // 12345, 49.99, R-778
	score(t, "executor.response_quality", 1, executor.ResponseQuality)
	score(t, "reviewer.score", 1, reviewer.Score)

	// Turn 2: send_email got 'priority' → call 1 − 0.5 = 0.5. The turn is bad
	// (hallucination), but the fault is the call's: it is counted in tool_use and the
	// conversation score, and the final responder keeps response_quality 1:
	// score = (0.35·0.5 + 0.2·1)/0.55.
	ex2 := a.TurnResults[2].Interactions[1]
	require.Len(t, ex2.ToolCalls, 1)
	assert.Equal(t, []string{"PARAMETER_HALLUCINATION/priority"}, issueKeys(ex2.ToolCalls[0].Issues))
	score(t, "t2.executor.tool_use", 0.5, ex2.ToolUse)
	score(t, "t2.executor.response_quality", 1, ex2.ResponseQuality)
	score(t, "t2.executor.score", 0.375/0.55, ex2.Score)
	assert.Equal(t, DetectionHallucination, a.TurnResults[2].DetectionType)

	// Per agent.
	ex := a.PerAgentScores["executor"]
	assert.Equal(t, 3, ex.InteractionsCount)
	assert.Equal(t, 4, ex.ToolCalls)
	score(t, "executor.tool_use", 2.5/3, ex.ToolUse)             // mean(1, 1, 0.5)
	score(t, "executor.reasoning", 1, ex.Reasoning)              // turn 0 only
	score(t, "executor.handoff", 1, ex.Handoff)                  // turn 0 only
	score(t, "executor.response_quality", 1, ex.ResponseQuality) // mean(1, 1, 1)
	score(t, "executor.overall", 0.35*2.5/3+0.25+0.2+0.2*1, ex.Overall)
	assert.Equal(t, []string{"PARAMETER_HALLUCINATION: send_email got unknown parameter 'priority' (turn 3)"}, ex.Issues)
	assert.Equal(t, 566.6667, ex.MeanLatencyMs) // (600+450+650)/3, rounded to 4 decimals
	pl := a.PerAgentScores["planner"]
	score(t, "planner.overall", 1, pl.Overall)
	score(t, "planner.handoff", 1, pl.Handoff)
	score(t, "planner.response_quality", null, pl.ResponseQuality)
	score(t, "reviewer.overall", 1, a.PerAgentScores["reviewer"].Overall)

	// Session.
	assert.Equal(t, ConversationSummary{TotalResponses: 3, GoodResponses: 2, BadResponses: 1, HallucinationDetections: 1, Score: ptr(0.6667)}, a.Conversation)
	score(t, "tool_use_score", 3.5/4, a.ToolUseScore)
	score(t, "reasoning_score", 1, a.ReasoningScore)
	score(t, "no_duplicate_work", null, a.Coordination.NoDuplicateWork)
	score(t, "context_preserved", 1, a.Coordination.ContextPreserved)
	score(t, "role_adherence", 1, a.Coordination.RoleAdherence)
	score(t, "no_ping_pong", 1, a.Coordination.NoPingPong)
	score(t, "coordination", 1, a.CoordinationScore)
	require.NotNil(t, a.TaskCompletion)
	assert.False(t, *a.TaskCompletion)
	require.NotNil(t, a.IntentDriftScore)
	drift := *a.IntentDriftScore
	score(t, "overall", 0.3*2.0/3+0.25*0.875+0.2*1+0.15*1+0.1*(1-drift), a.OverallScore)

	require.Len(t, a.ToolIssues, 1)
	assert.Equal(t, ToolIssue{TurnIndex: 2, AgentID: "executor", ToolName: "send_email", Issue: IssueParameterHallucination,
		Severity: SeverityMedium, Parameter: "priority", SpanID: "tool-send_email", Executed: true,
		Message: "executor: send_email got unknown parameter 'priority'"}, a.ToolIssues[0])
	require.Len(t, a.Recommendations, 1)
	assert.Equal(t, Recommendation{Kind: "parameter_hallucination", AgentID: "executor", ToolName: "send_email", Parameter: "priority",
		Count: 1, Impact: 0.5, Message: "executor: 1 of 1 calls to send_email passed unknown parameter 'priority'"}, a.Recommendations[0])
	assert.Equal(t, a.Recommendations[:1], ex.Recommendations, "per-agent recommendations are the analysis' objects")

	// 2800/3 and 2650/7, rounded to 4 decimals.
	assert.Equal(t, LatencySummary{TotalMs: 2800, MeanTurnMs: 933.3333, MaxTurnMs: 1200, ToolCalls: 4,
		MeanToolCallMs: 350.0 / 4, MaxToolCallMs: 120, MeanInteractionMs: 378.5714}, a.Latency)
}

// TestDetectionOnTheRightTurns: multi-turn sessions where the user corrects, re-asks,
// or is satisfied; the verdicts must land exactly on the turn concerned.
func TestDetectionOnTheRightTurns(t *testing.T) {
	tests := []struct {
		name    string
		s       *session.AgentSession
		want    []string
		conf    []float64 // -1: not checked here
		good    int
		summary ConversationSummary
	}{
		{"turn 1 corrects turn 0", correctionSession(), []string{DetectionRDM, DetectionNone}, []float64{-1, 0}, 1,
			ConversationSummary{TotalResponses: 2, GoodResponses: 1, BadResponses: 1, RDMDetections: 1, Score: ptr(0.5)}},
		{"turn 1 re-asks turn 0", reaskSession(), []string{DetectionCCM, DetectionNone, DetectionNone}, []float64{1, -1, 0}, 2,
			ConversationSummary{TotalResponses: 3, GoodResponses: 2, BadResponses: 1, CCMDetections: 1, Score: ptr(0.6667)}},
		{"nothing wrong", cleanSession(), []string{DetectionNone, DetectionNone, DetectionNone}, []float64{-1, -1, 0}, 3,
			ConversationSummary{TotalResponses: 3, GoodResponses: 3, Score: ptr(1)}},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := e.AnalyzeSession(tt.s)
			assert.Equal(t, tt.want, detections(a))
			for i, c := range tt.conf {
				if c >= 0 {
					assert.InDelta(t, c, a.TurnResults[i].Confidence, 1e-9, "turn %d confidence", i)
				}
			}
			for _, tr := range a.TurnResults {
				assert.Equal(t, tr.DetectionType != DetectionNone, tr.IsBad)
				assert.True(t, tr.Final)
				assert.NotEmpty(t, tr.Reason)
				assert.NotEmpty(t, tr.Explanations[keyDetection])
			}
			assert.Equal(t, tt.summary, a.Conversation)
		})
	}
}

func TestCorrectionSession(t *testing.T) {
	a := newEval(t).AnalyzeSession(correctionSession())
	assert.Contains(t, a.TurnResults[0].Reason, "corrects")
	// The support agent answered turn 0, which is bad: response_quality 0 there, 1 in turn 1.
	score(t, "t0 response_quality", 0, a.TurnResults[0].Interactions[0].ResponseQuality)
	score(t, "t1 response_quality", 1, a.TurnResults[1].Interactions[0].ResponseQuality)
	sup := a.PerAgentScores["support"]
	score(t, "support.response_quality", 0.5, sup.ResponseQuality)
	score(t, "support.tool_use", 1, sup.ToolUse)
	score(t, "support.overall", (0.35*1+0.2*0.5)/0.55, sup.Overall)
	// One agent and no handoff: coordination is null, and so is each component.
	assert.Nil(t, a.CoordinationScore)
	assert.Equal(t, CoordinationComponents{}, a.Coordination)
	assert.Contains(t, a.Explanations[keyCoordinationScore], "fewer than two agents")
	// The last turn is good and answered: task completed.
	require.NotNil(t, a.TaskCompletion)
	assert.True(t, *a.TaskCompletion)
	// 1 RDM of 1 follow-up ≥ 0.2 → the ReAsk plan's "High RDM" recommendation, impact 1.
	require.NotEmpty(t, a.Recommendations)
	assert.Equal(t, Recommendation{Kind: RecRDM, Count: 1, Impact: 1,
		Message: "Users are frequently correcting responses - improve accuracy (1 of 1 follow-ups are corrections)"}, a.Recommendations[0])
}

func TestReaskSession(t *testing.T) {
	a := newEval(t).AnalyzeSession(reaskSession())
	assert.Contains(t, a.TurnResults[0].Reason, "re-asks")
	// helpdesk's tools are unknown, but it calls none: tool_use is null, not a pass.
	h := a.PerAgentScores["helpdesk"]
	score(t, "helpdesk.tool_use", null, h.ToolUse)
	score(t, "helpdesk.response_quality", 2.0/3, h.ResponseQuality)
	score(t, "helpdesk.overall", 2.0/3, h.Overall)
	var kinds []string
	for _, r := range a.Recommendations {
		kinds = append(kinds, r.Kind)
	}
	require.Equal(t, []string{RecCCM, RecResponseQuality}, kinds)
	assert.Equal(t, "Users are re-asking questions - improve response completeness (1 of 2 follow-ups re-ask)", a.Recommendations[0].Message)
	assert.Equal(t, 0.5, a.Recommendations[0].Impact)
}

func TestCleanSession(t *testing.T) {
	a := newEval(t).AnalyzeSession(cleanSession())
	for name, v := range map[string]*float64{
		"conversation": a.Conversation.Score, "tool_use": a.ToolUseScore, "coordination": a.CoordinationScore,
		"context_preserved": a.Coordination.ContextPreserved, "role_adherence": a.Coordination.RoleAdherence,
		"no_ping_pong": a.Coordination.NoPingPong,
	} {
		score(t, name, 1, v)
	}
	score(t, "reasoning", null, a.ReasoningScore)
	require.NotNil(t, a.TaskCompletion)
	assert.True(t, *a.TaskCompletion)
	assert.Empty(t, a.ToolIssues)
	assert.Empty(t, a.Recommendations)
	for id, as := range a.PerAgentScores {
		score(t, id+".overall", 1, as.Overall)
		assert.Empty(t, as.Issues)
	}
}

func TestNoContentCaptured(t *testing.T) {
	a := newEval(t).AnalyzeSession(noContentSession())
	tr := a.TurnResults[0]
	assert.Equal(t, DetectionNone, tr.DetectionType)
	assert.Equal(t, 0.0, tr.Confidence)
	assert.Nil(t, tr.IntentDrift)
	assert.Equal(t, []string{ReasonContentNotCaptured}, tr.NotEvaluable, "the verdict says why it could not be judged")
	for _, other := range newEval(t).AnalyzeSession(refundSession()).TurnResults {
		assert.Empty(t, other.NotEvaluable, "a turn with content is evaluable")
	}
	planner, executor := tr.Interactions[0], tr.Interactions[1]
	// Payload not captured → handoff null; no output because nothing was captured →
	// response_quality null, not 0.
	score(t, "planner.handoff", null, planner.Handoff)
	assert.Equal(t, "null: handoff payload not captured", planner.Explanations[keyHandoff])
	score(t, "planner.response_quality", null, planner.ResponseQuality)
	score(t, "planner.score", null, planner.Score)
	assert.Equal(t, "null: no component score is present", planner.Explanations[keyScore])
	// The call's authorisation is still checked; its arguments are not.
	require.Len(t, executor.ToolCalls, 1)
	assert.Equal(t, []string{ReasonArgumentsNotCaptured}, executor.ToolCalls[0].NotEvaluable)
	score(t, "executor.tool_use", 1, executor.ToolUse)
	score(t, "executor.response_quality", null, executor.ResponseQuality)
	score(t, "executor.score", 1, executor.Score)
	assert.Nil(t, a.TaskCompletion)
	assert.Nil(t, a.IntentDriftScore)
	// Nothing was judged: conversation_score is null, not a silent 1 (DESIGN §5); the turn
	// stays in the counters.
	score(t, "conversation", null, a.Conversation.Score)
	assert.Equal(t, 1, a.Conversation.TotalResponses)
	// Coordination: one handoff (planner → executor), no loop; context null.
	score(t, "context_preserved", null, a.Coordination.ContextPreserved)
	score(t, "role_adherence", 1, a.Coordination.RoleAdherence)
	score(t, "no_ping_pong", 1, a.Coordination.NoPingPong)
	score(t, "coordination", 1, a.CoordinationScore)
}

func TestEmptyAndNilSessions(t *testing.T) {
	e := newEval(t)
	for name, s := range map[string]*session.AgentSession{"nil": nil, "no turns": {ID: "empty"}} {
		t.Run(name, func(t *testing.T) {
			a := e.AnalyzeSession(s)
			assert.Nil(t, a.OverallScore)
			assert.Nil(t, a.CoordinationScore)
			assert.Nil(t, a.IntentDriftScore)
			assert.Nil(t, a.TaskCompletion)
			assert.Nil(t, a.Conversation.Score)
			assert.Empty(t, a.TurnResults)
			assert.NotNil(t, a.TurnResults)
			assert.NotNil(t, a.ToolIssues)
			assert.NotNil(t, a.Recommendations)
			assert.Equal(t, "null: no component score is present", a.Explanations[keyOverallScore])
			for _, k := range []string{keyOverallScore, keyCoordinationScore, keyIntentDriftScore, keyTaskCompletion,
				keyConversationScore, keyToolUseScore, keyReasoningScore} {
				assert.NotEmpty(t, a.Explanations[k], k)
			}
		})
	}
	// Out-of-range indexes never panic.
	s := refundSession()
	assert.Nil(t, e.EvaluateInteraction(s, 5, 0).Score)
	assert.Nil(t, e.EvaluateInteraction(s, 0, 9).Score)
	assert.Equal(t, DetectionNone, e.EvaluateTurn(s, -1, true).DetectionType)
}

func TestErrorSession(t *testing.T) {
	a := newEval(t).AnalyzeSession(errorSession())
	tr := a.TurnResults[0]
	planner, executor, ghost := tr.Interactions[0], tr.Interactions[1], tr.Interactions[2]
	// An empty captured payload scores 0.
	score(t, "planner.handoff", 0, planner.Handoff)
	// issue_refund: amount "all" (LOW) + tool error (LOW) → 1 − 0.5.
	require.Len(t, executor.ToolCalls, 1)
	assert.Equal(t, []string{"INVALID_PARAM_VALUE/amount", "TOOL_ERROR"}, issueKeys(executor.ToolCalls[0].Issues))
	score(t, "executor.tool_use", 0.5, executor.ToolUse)
	score(t, "executor.response_quality", 0, executor.ResponseQuality)
	assert.Equal(t, "0: error status (RateLimitError)", executor.Explanations[keyResponseQuality])
	// The ghost agent is not in the registry: its call is not evaluable.
	require.Len(t, ghost.ToolCalls, 1)
	assert.Equal(t, VerdictNotEvaluable, ghost.ToolCalls[0].Verdict)
	score(t, "ghost.tool_use", null, ghost.ToolUse)
	assert.Equal(t, 1, a.PerAgentScores["ghost"].NotEvaluableCalls)
	// Task: empty final response and error status → false.
	require.NotNil(t, a.TaskCompletion)
	assert.False(t, *a.TaskCompletion)
	assert.Contains(t, a.Explanations[keyTaskCompletion], "the last turn gave no answer")
	assert.Contains(t, a.Explanations[keyTaskCompletion], "error status")
	assert.Equal(t, DetectionNoAnswer, a.TurnResults[0].DetectionType)
	assert.Contains(t, a.PerAgentScores["executor"].Issues, "AGENT_ERROR: agent span ended with error status (RateLimitError) (turn 1)")
	assert.Contains(t, a.PerAgentScores["executor"].Issues, "TOOL_ERROR: issue_refund failed: 429 Too Many Requests (turn 1)")
}

// TestStreamingTurn: before the follow-up arrives only hallucination is checked; the
// final verdict comes with the next user message.
func TestStreamingTurn(t *testing.T) {
	e := newEval(t)
	s := correctionSession()
	first := &session.AgentSession{ID: s.ID, Agents: s.Agents, Turns: s.Turns[:1]}
	pending := e.EvaluateTurn(first, 0, false)
	assert.False(t, pending.Final)
	assert.Equal(t, DetectionNone, pending.DetectionType)
	assert.Contains(t, pending.Explanations[keyDetection], "pending")
	final := e.EvaluateTurn(s, 0, true)
	assert.True(t, final.Final)
	assert.Equal(t, DetectionRDM, final.DetectionType)
	// EvaluateInteraction sees the follow-up when the next turn exists.
	in := e.EvaluateInteraction(s, 0, 0)
	score(t, "response_quality", 0, in.ResponseQuality)
	in = e.EvaluateInteraction(first, 0, 0)
	score(t, "response_quality", 1, in.ResponseQuality)
	// AnalyzeSession agrees with EvaluateTurn(final=true) turn by turn.
	a := e.AnalyzeSession(s)
	for i := range s.Turns {
		assert.Equal(t, e.EvaluateTurn(s, i, true), a.TurnResults[i])
	}
}

func TestIssueRecommendationsAggregate(t *testing.T) {
	agents := []session.AgentDefinition{{ID: "order-agent", ToolsSource: "config", Tools: []session.ToolDefinition{
		{Name: "issue_refund", Parameters: []byte(issueRefundSchema)}}}}
	u := "Refund order 1"
	in := interaction("order-agent", u, "Refunded.", 10,
		toolStep("issue_refund", `{"order_id":"1"}`, "", 1),
		toolStep("issue_refund", `{"order_id":"1","amount":5}`, "", 1))
	s := newSession("agg", agents,
		turn(0, u, "Refunded.", 10, in),
		turn(1, "Refund order 2", "Refunded.", 10, interaction("order-agent", "Refund order 2", "Refunded.", 10,
			toolStep("issue_refund", `{"order_id":"2"}`, "", 1))))
	a := newEval(t).AnalyzeSession(s)
	require.NotEmpty(t, a.Recommendations)
	// 2 of 3 calls omitted 'amount': impact 0.5 × 2/3.
	assert.Equal(t, Recommendation{Kind: "missing_required_param", AgentID: "order-agent", ToolName: "issue_refund", Parameter: "amount",
		Count: 2, Impact: 0.3333, Message: "order-agent: 2 of 3 calls to issue_refund omitted required 'amount'"}, a.Recommendations[0])
	// Deterministic: the same analysis twice gives the same recommendations.
	assert.Equal(t, a.Recommendations, newEval(t).AnalyzeSession(s).Recommendations)
	msgs := map[string]bool{}
	for _, r := range a.Recommendations {
		assert.False(t, msgs[r.Message], "duplicate %q", r.Message)
		msgs[r.Message] = true
	}
}

func TestWeightedMean(t *testing.T) {
	v, expl := weightedMean([]weighted{{"a", ptr(1), 0.35}, {"b", nil, 0.25}, {"c", ptr(0.5), 0.2}})
	score(t, "mean", (0.35+0.1)/0.55, v)
	assert.Equal(t, "(0.35×a(1) + 0.2×c(0.5)) / 0.55 = 0.8182; absent: b", expl)
	v, expl = weightedMean([]weighted{{"a", nil, 1}, {"b", nil, 1}})
	assert.Nil(t, v)
	assert.Equal(t, "null: no component score is present", expl)
	v, expl = weightedMean([]weighted{{"a", ptr(1), 0}, {"b", nil, 1}})
	assert.Nil(t, v)
	assert.Equal(t, "null: the present components (a) all have weight 0", expl)
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"negative weight", func(c *Config) { c.AgentWeights.ToolUse = -0.1 }, "scoring.agent_weights.tool_use: must be >= 0"},
		{"all agent weights zero", func(c *Config) { c.AgentWeights = AgentWeights{} }, "scoring.agent_weights: at least one weight must be > 0"},
		{"all session weights zero", func(c *Config) { c.SessionWeights = SessionWeights{} }, "scoring.session_weights: at least one weight must be > 0"},
		{"threshold above 1", func(c *Config) { c.CCMSimilarityThreshold = 1.5 }, "scoring.ccm_similarity_threshold: must be in [0,1]"},
		{"answered threshold below 0", func(c *Config) { c.CCMAnsweredThreshold = -0.1 }, "scoring.ccm_answered_threshold: must be in [0,1]"},
		{"negative threshold", func(c *Config) { c.RecommendationThreshold = -1 }, "scoring.recommendation_threshold: must be in [0,1]"},
		{"penalty above 1", func(c *Config) { c.SeverityPenalties.High = 2 }, "scoring.severity_penalties.high: must be in [0,1]"},
		{"rate threshold", func(c *Config) { c.RDMRateThreshold = 7 }, "scoring.rdm_rate_threshold: must be in [0,1]"},
		{"cache size", func(c *Config) { c.SchemaCacheSize = 0 }, "scoring.schema_cache_size: must be > 0"},
		// Each weight finite, their sum not: the weighted mean would be Inf/Inf, NaN.
		{"weights whose sum overflows", func(c *Config) { c.SessionWeights.Conversation, c.SessionWeights.IntentDrift = 1e308, 1e308 },
			"scoring.session_weights: the weights' sum must be finite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mod(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = New(c)
			assert.Error(t, err)
		})
	}
	// Several errors are all reported.
	c := DefaultConfig()
	c.AgentWeights.Handoff = -1
	c.PingPongPenalty = 3
	err := c.Validate()
	require.Error(t, err)
	assert.Equal(t, 2, strings.Count(err.Error(), "scoring."))
}
