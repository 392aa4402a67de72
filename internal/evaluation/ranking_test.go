// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// Outcome classes a user ranks sessions by (docs/scoring.md §6.8), best first.
const (
	outcomeClean     = 3 // the task was done, nothing went wrong that the user could see
	outcomeRecovered = 2 // a tool call was rejected, the agents retried and got it right
	outcomeCorrected = 1 // a wrong result that the user had to correct
	outcomeNoAnswer  = 0 // the run crashed and gave no answer
)

// rankDomain is one hand-built task: a tool with its JSON Schema, correct and
// hallucinated arguments, the tool's result, the right and a wrong answer, and the
// user's correction.
type rankDomain struct {
	name, user, tool, schema, good, bad, result, answer, wrong, correction string
}

var rankDomains = []rankDomain{
	{"refund", "Please refund order #12345, the mug arrived broken.", "issue_refund",
		`{"type":"object","properties":{"order_id":{"type":"string"},"amount":{"type":"number"}},"required":["order_id","amount"],"additionalProperties":false}`,
		`{"order_id":"12345","amount":49.99}`, `{"order_id":"12345","reason":"damaged"}`, `{"refund_id":"RF-1","amount":49.99}`,
		"Refund RF-1 of $49.99 for order 12345 has been issued.", "Refund RF-1 of $49.99 for order 12354 has been issued.",
		"No, I meant order 12345, not 12354."},
	{"weather", "What's the weather in Lyon tomorrow?", "get_forecast",
		`{"type":"object","properties":{"city":{"type":"string"},"day":{"type":"string"}},"required":["city"],"additionalProperties":false}`,
		`{"city":"Lyon","day":"tomorrow"}`, `{"city":"Lyon","units":"metric","when":"tomorrow"}`, `{"city":"Lyon","temp_c":21,"sky":"sunny"}`,
		"Tomorrow in Lyon: 21°C and sunny.", "Tomorrow in Lyon: 12°C and rain.", "That's wrong, the forecast says 21°C and sunny."},
	{"booking", "Book a table for 2 at Luigi's at 20:00.", "book_table",
		`{"type":"object","properties":{"restaurant":{"type":"string"},"people":{"type":"integer"},"time":{"type":"string"}},"required":["restaurant","people","time"],"additionalProperties":false}`,
		`{"restaurant":"Luigi's","people":2,"time":"20:00"}`, `{"restaurant":"Luigi's","party":2,"time":"20:00"}`, `{"booking_id":"LG-33","time":"20:00"}`,
		"Your table for 2 at Luigi's is booked for 20:00 (LG-33).", "Your table for 4 at Luigi's is booked for 20:00 (LG-33).",
		"2 people, not 4!"},
	{"password", "Send a password reset link to sam@example.com.", "send_reset_link",
		`{"type":"object","properties":{"email":{"type":"string"}},"required":["email"],"additionalProperties":false}`,
		`{"email":"sam@example.com"}`, `{"email":"sam@example.com","expiry":"1h"}`, `{"sent":true,"email":"sam@example.com"}`,
		"A reset link has been sent to sam@example.com.", "A reset link has been sent to sam@example.org.",
		"Wrong address, it's sam@example.com."},
	{"invoice", "Why was I charged $120 on invoice INV-7?", "get_invoice",
		`{"type":"object","properties":{"invoice_id":{"type":"string"}},"required":["invoice_id"],"additionalProperties":false}`,
		`{"invoice_id":"INV-7"}`, `{"invoice":"INV-7"}`, `{"invoice_id":"INV-7","plan":99,"extra_seat":21}`,
		"INV-7 is $99 for the Pro plan plus $21 for an extra seat.", "INV-7 is $120 for the Enterprise plan.",
		"That's not right, I'm on the Pro plan."},
	{"flight", "Find a flight from Madrid to Lisbon on 2025-05-03.", "search_flights",
		`{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"},"date":{"type":"string"}},"required":["from","to","date"],"additionalProperties":false}`,
		`{"from":"MAD","to":"LIS","date":"2025-05-03"}`, `{"from":"MAD","to":"LIS","date":"2025-05-03","cabin":"eco"}`, `{"flight":"IB3110","dep":"07:15","price":49}`,
		"IB3110 leaves Madrid at 07:15 on 2025-05-03 for 49 EUR.", "IB3110 leaves Lisbon at 07:15 on 2025-05-03 for Madrid, 49 EUR.",
		"Madrid to Lisbon, not Lisbon to Madrid."},
	{"translate", "Translate 'good night' into German.", "translate",
		`{"type":"object","properties":{"text":{"type":"string"},"target":{"type":"string"}},"required":["text","target"],"additionalProperties":false}`,
		`{"text":"good night","target":"de"}`, `{"text":"good night","lang":"de"}`, `{"translation":"Gute Nacht"}`,
		"'Good night' in German is 'Gute Nacht'.", "'Good night' in French is 'Bonne nuit'.", "That's French. I need German."},
}

func rankCall(tool, args, result string, ok bool) session.AgentStep {
	tc := &session.ToolCall{ToolName: tool, Parameters: json.RawMessage(args), Requested: true, SpanID: "span-" + tool}
	if ok {
		tc.Executed, tc.Status, tc.Result = true, "ok", result
	} else {
		tc.Status, tc.Error = "not_executed", "tool call rejected: invalid arguments"
	}
	return session.AgentStep{Kind: session.StepToolCall, ToolCall: tc}
}

// rankSession builds the domain's session for an outcome class; variant adds a
// "Thanks!" closing turn (odd) so sessions differ in length.
func rankSession(d rankDomain, outcome, variant int) *session.AgentSession {
	s := &session.AgentSession{ID: fmt.Sprintf("%s-%d-%d", d.name, outcome, variant),
		Agents: []session.AgentDefinition{{ID: "assistant", ToolsSource: "config",
			Tools: []session.ToolDefinition{{Name: d.tool, Parameters: json.RawMessage(d.schema)}}}}}
	turn := func(user, final string, status string, steps ...session.AgentStep) session.Turn {
		return session.Turn{UserMessage: user, FinalResponse: final, Status: status,
			Interactions: []session.AgentInteraction{{AgentID: "assistant", Input: user, Output: final, Status: status, Steps: steps}}}
	}
	switch outcome {
	case outcomeClean:
		s.Turns = append(s.Turns, turn(d.user, d.answer, "ok", rankCall(d.tool, d.good, d.result, true)))
	case outcomeRecovered:
		s.Turns = append(s.Turns, turn(d.user, d.answer, "ok", rankCall(d.tool, d.bad, "", false), rankCall(d.tool, d.good, d.result, true)))
	case outcomeCorrected:
		s.Turns = append(s.Turns, turn(d.user, d.wrong, "ok", rankCall(d.tool, d.good, d.result, true)),
			turn(d.correction, d.answer, "ok", rankCall(d.tool, d.good, d.result, true)))
	case outcomeNoAnswer:
		st := rankCall(d.tool, d.good, "", true)
		st.ToolCall.Status, st.ToolCall.Error = "error", "upstream timeout"
		t := turn(d.user, "", "error", st)
		t.Interactions[0].ErrorType = "TimeoutError"
		s.Turns = append(s.Turns, t)
	}
	if variant%2 == 1 && outcome != outcomeNoAnswer {
		s.Turns = append(s.Turns, turn("Thanks!", "You're welcome!", "ok"))
	}
	for i := range s.Turns {
		s.Turns[i].Index = i
	}
	return s
}

type rankedSession struct {
	name    string
	outcome int
	s       *session.AgentSession
}

// rankingSet is the labelled set: the framework runs recorded in testdata/golden (the
// same shop task run by LangGraph, OpenAI Agents and the Vercel AI SDK) and the
// hand-built sessions of rankDomains.
func rankingSet(t *testing.T) []rankedSession {
	var out []rankedSession
	frameworkOutcomes := map[string]int{
		"handoff": outcomeClean, "unknown_tool": outcomeRecovered, "bad_tool_args": outcomeRecovered,
		"multi_turn": outcomeCorrected, "unknown_tool_raise": outcomeNoAnswer,
	}
	for _, fw := range []string{"langgraph", "openai_agents", "vercel_ai"} {
		for scenario, outcome := range frameworkOutcomes {
			path := filepath.Join("..", "..", "testdata", "golden", fw+"_"+scenario+".sessions.json")
			b, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				continue // not every framework has every scenario (only OpenAI Agents raises)
			}
			require.NoError(t, err)
			var ss []*session.AgentSession
			require.NoError(t, json.Unmarshal(b, &ss), path)
			for _, s := range ss {
				out = append(out, rankedSession{fw + "_" + scenario, outcome, s})
			}
		}
	}
	for _, d := range rankDomains {
		for _, o := range []int{outcomeClean, outcomeRecovered, outcomeCorrected, outcomeNoAnswer} {
			for v := 0; v < 2; v++ {
				if o == outcomeNoAnswer && v == 1 {
					continue
				}
				out = append(out, rankedSession{fmt.Sprintf("%s/%d/%d", d.name, o, v), o, rankSession(d, o, v)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// kendall returns Kendall's tau over the pairs the labels order (pairs with equal labels
// are not ordered by the user and are left out; a tie in the scores counts as half
// discordant), and tau-b over all pairs for reference.
func kendall(labels []int, scores []float64) (tau, tauB float64) {
	var c, d, ties, n0, tx, ty float64
	for i := range labels {
		for j := i + 1; j < len(labels); j++ {
			n0++
			dl := labels[i] - labels[j]
			ds := scores[i] - scores[j]
			switch {
			case dl == 0 && ds == 0:
				tx++
				ty++
			case dl == 0:
				tx++
			case ds == 0:
				ty++
				ties++
			case (dl > 0) == (ds > 0):
				c++
			default:
				d++
			}
		}
	}
	tau = (c - d - ties) / (c + d + ties)
	den := (n0 - tx) * (n0 - ty)
	if den > 0 {
		tauB = (c - d) / sqrtf(den)
	}
	return tau, tauB
}

func sqrtf(x float64) float64 {
	z := x
	for range 60 {
		z = (z + x/z) / 2
	}
	return z
}

// TestSessionRanking checks that overall_score ranks the labelled sessions as a user
// would (clean > recovered from a rejected tool call > corrected by the user > no
// answer): Kendall's tau >= 0.9 against the labels (docs/scoring.md §6.8).
func TestSessionRanking(t *testing.T) {
	e := newEval(t)
	set := rankingSet(t)
	require.GreaterOrEqual(t, len(set), 40)
	var labels []int
	var scores []float64
	for _, r := range set {
		a := e.AnalyzeSession(r.s)
		v := -1.0
		if a.OverallScore != nil {
			v = *a.OverallScore
		}
		labels = append(labels, r.outcome)
		scores = append(scores, v)
		tc := "null"
		if a.TaskCompletion != nil {
			tc = fmt.Sprint(*a.TaskCompletion)
		}
		t.Logf("%-40s outcome %d overall %.4f task_completion %s partial %t", r.name, r.outcome, v, tc, a.Partial)
	}
	tau, tauB := kendall(labels, scores)
	t.Logf("%d sessions: Kendall tau over the ordered pairs %.4f (tau-b %.4f)", len(set), tau, tauB)
	assert.GreaterOrEqual(t, tau, 0.9)
}

// TestFaultCostsOnce: each fault lowers the score it belongs to and nothing else
// (docs/scoring.md §5.2, §6.8).
func TestFaultCostsOnce(t *testing.T) {
	e := newEval(t)
	d := rankDomains[0]
	clean := e.AnalyzeSession(rankSession(d, outcomeClean, 0))
	rec := e.AnalyzeSession(rankSession(d, outcomeRecovered, 0))

	// A hallucinated parameter in a call that was rejected and retried correctly lowers
	// tool_use only: not the turn verdict, not the final responder's response_quality,
	// not task_completion.
	require.Len(t, rec.TurnResults, 1)
	calls := rec.TurnResults[0].Interactions[0].ToolCalls
	require.Len(t, calls, 2)
	assert.Equal(t, []string{"PARAMETER_HALLUCINATION/reason", "MISSING_REQUIRED_PARAM/amount", "TOOL_ERROR"}, issueKeys(calls[0].Issues))
	assert.Equal(t, "span-issue_refund", calls[0].RecoveredBy)
	assert.Equal(t, DetectionNone, rec.TurnResults[0].DetectionType)
	assert.Contains(t, rec.TurnResults[0].Explanations[keyDetection], "recovered by a later valid call")
	assert.Equal(t, clean.Conversation.Score, rec.Conversation.Score)
	assert.Equal(t, clean.TurnResults[0].Interactions[0].ResponseQuality, rec.TurnResults[0].Interactions[0].ResponseQuality)
	assert.Equal(t, clean.PerAgentScores["assistant"].ResponseQuality, rec.PerAgentScores["assistant"].ResponseQuality)
	assert.Equal(t, clean.TaskCompletion, rec.TaskCompletion)
	score(t, "clean tool_use", 1, clean.ToolUseScore)
	score(t, "recovered tool_use", 0.5, rec.ToolUseScore) // mean(0, 1)
	w := e.Config().SessionWeights
	score(t, "overall costs only tool_use", *clean.OverallScore-w.ToolUse*0.5/(w.Conversation+w.ToolUse+w.IntentDrift), rec.OverallScore)

	// The same fault left unrecovered makes the turn bad (hallucination), but the final
	// responder's response_quality is still not zeroed for it.
	s := rankSession(d, outcomeRecovered, 0)
	s.Turns[0].Interactions[0].Steps = s.Turns[0].Interactions[0].Steps[:1]
	un := e.AnalyzeSession(s)
	assert.Equal(t, DetectionHallucination, un.TurnResults[0].DetectionType)
	score(t, "unrecovered response_quality", 1, un.TurnResults[0].Interactions[0].ResponseQuality)

	// A rejected call to another agent's tool, recovered by the right agent, does not fail the task.
	s = rankSession(d, outcomeClean, 0)
	s.Agents = append(s.Agents, session.AgentDefinition{ID: "triage", ToolsSource: "config", Tools: []session.ToolDefinition{{Name: "lookup_order"}}})
	s.Turns[0].Interactions = append([]session.AgentInteraction{{AgentID: "triage", Status: "ok",
		Steps: []session.AgentStep{rankCall(d.tool, d.good, "", false)}}}, s.Turns[0].Interactions...)
	ua := e.AnalyzeSession(s)
	require.NotNil(t, ua.TaskCompletion)
	assert.True(t, *ua.TaskCompletion, ua.Explanations[keyTaskCompletion])
	assert.Equal(t, DetectionNone, ua.TurnResults[0].DetectionType)
	assert.Equal(t, "UNAUTHORIZED_TOOL", string(ua.TurnResults[0].Interactions[0].ToolCalls[0].Issues[0].Issue))

	// An empty final answer after an error is a bad turn and the task is not completed.
	na := e.AnalyzeSession(rankSession(d, outcomeNoAnswer, 0))
	assert.True(t, na.TurnResults[0].IsBad)
	assert.Equal(t, DetectionNoAnswer, na.TurnResults[0].DetectionType)
	assert.Equal(t, 1, na.Conversation.NoAnswerDetections)
	require.NotNil(t, na.TaskCompletion)
	assert.False(t, *na.TaskCompletion)

	// A partial turn makes the session partial.
	s = rankSession(d, outcomeClean, 1)
	s.Turns[1].Partial = true
	assert.True(t, e.AnalyzeSession(s).Partial)
	assert.False(t, clean.Partial)

	// A closing "Thanks!" turn neither raises nor lowers the conversation score.
	thanks := e.AnalyzeSession(rankSession(d, outcomeCorrected, 1))
	plain := e.AnalyzeSession(rankSession(d, outcomeCorrected, 0))
	assert.Equal(t, plain.Conversation.Score, thanks.Conversation.Score)
	assert.Equal(t, 3, thanks.Conversation.TotalResponses)
}

// TestRecommendationsFollowEvidence: the tool_use advice names selection or arguments
// after the agent's issues, and handoff coverage is measured against what the receiving
// agent needed, so a payload carrying the whole request is not "too little context".
func TestRecommendationsFollowEvidence(t *testing.T) {
	sel := []ToolIssue{{AgentID: "a", Issue: IssueUnauthorizedTool}}
	par := []ToolIssue{{AgentID: "a", Issue: IssueMissingRequiredParam}, {AgentID: "b", Issue: IssueUnauthorizedTool}}
	assert.Equal(t, "Consider improving tool selection logic for a", toolUseAdvice("a", sel))
	assert.Equal(t, "Consider validating a's tool arguments against the tool schemas", toolUseAdvice("a", par))
	assert.Equal(t, "Consider improving tool selection logic and validating tool arguments against the tool schemas for a",
		toolUseAdvice("a", append(sel, par...)))
	assert.Equal(t, "Tool calls by a often fail - check the tools and handle their errors", toolUseAdvice("a", []ToolIssue{{AgentID: "a", Issue: IssueToolError}}))

	e := newEval(t)
	user := "Refund order #12345, it arrived broken."
	handoffTurn := func(payload, receiverArgs, receiverOutput string) *session.AgentSession {
		return newSession("h", refundAgents(), turn(0, user, receiverOutput, 10,
			interaction("planner", user, "", 10,
				toolStep("lookup_order", `{"order_id":"12345"}`, `{"order_id":"12345","total":49.99}`, 1),
				handoffStep("planner", "executor", payload)),
			interaction("executor", payload, receiverOutput, 10, toolStep("issue_refund", receiverArgs, "refund R-1 created", 1))))
	}
	// The payload is the whole request; the receiver used the looked-up amount, so it had it.
	r := e.EvaluateInteraction(handoffTurn(user, `{"order_id":"12345","amount":49.99}`, "Refund R-1 of $49.99 issued."), 0, 0)
	score(t, "whole request passed", 1, r.Handoff)
	assert.Contains(t, r.Explanations[keyHandoff], "1 used by the receiving agent) = 1")
	// The payload lacks the order id and the receiver never used it: too little context.
	r = e.EvaluateInteraction(handoffTurn("Handle the refund please", `{}`, "Which order should I refund?"), 0, 0)
	score(t, "order id missing", 0, r.Handoff)
}
