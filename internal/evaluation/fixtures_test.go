// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// Builders for hand-built sessions. Times are fixed so the goldens are stable.

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func lat(ms float64) *float64 { return &ms }

func toolStep(name, params, result string, latencyMs float64) session.AgentStep {
	tc := &session.ToolCall{ToolName: name, Result: result, Requested: true, Executed: true, Status: "ok",
		LatencyMs: lat(latencyMs), SpanID: "tool-" + name, CallID: "call-" + name}
	if params != "" {
		tc.Parameters = json.RawMessage(params)
	}
	return session.AgentStep{Kind: session.StepToolCall, ToolCall: tc, SpanID: tc.SpanID}
}

func handoffStep(from, to, payload string) session.AgentStep {
	return session.AgentStep{Kind: session.StepHandoff, Handoff: &session.Handoff{
		FromAgent: from, ToAgent: to, Mode: "pass_control", Payload: payload, PayloadCaptured: true, SourceRule: "gen_ai.transfer"}}
}

func reasoningStep(text string) session.AgentStep {
	return session.AgentStep{Kind: session.StepReasoning, Text: text}
}

func interaction(agent, input, output string, latencyMs float64, steps ...session.AgentStep) session.AgentInteraction {
	return session.AgentInteraction{AgentID: agent, AgentRule: "gen_ai.agent.name", SpanID: "span-" + agent,
		Input: input, Output: output, FinishReason: "stop", LatencyMs: latencyMs, Status: "ok",
		Steps: append([]session.AgentStep{}, steps...)}
}

func turn(i int, user, final string, latencyMs float64, ins ...session.AgentInteraction) session.Turn {
	return session.Turn{Index: i, TraceID: fmt.Sprintf("trace-%d", i), RootSpanID: fmt.Sprintf("root-%d", i), RootRule: "root_agent",
		UserMessage: user, FinalResponse: final, StartedAt: t0.Add(time.Duration(i) * time.Minute),
		EndedAt:   t0.Add(time.Duration(i)*time.Minute + time.Duration(latencyMs)*time.Millisecond),
		LatencyMs: latencyMs, Status: "ok", Interactions: ins, SpanCount: 1 + len(ins)}
}

func newSession(id string, agents []session.AgentDefinition, turns ...session.Turn) *session.AgentSession {
	s := &session.AgentSession{ID: id, KeySource: "gen_ai.conversation.id", Service: "refund-bot", Agents: agents, Turns: turns,
		StartedAt: t0, EndReason: "session_timeout"}
	for i := range s.Turns {
		s.Turns[i].Index = i
		s.TotalLatencyMs += s.Turns[i].LatencyMs
		s.EndedAt = s.Turns[i].EndedAt
	}
	return s
}

// Tool schemas of the refund example.
const (
	lookupOrderSchema  = `{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"],"additionalProperties":false}`
	issueRefundSchema  = `{"type":"object","properties":{"order_id":{"type":"string"},"amount":{"type":"number"}},"required":["order_id","amount"],"additionalProperties":false}`
	checkRefundSchema  = `{"type":"object","properties":{"refund_id":{"type":"string"}},"required":["refund_id"],"additionalProperties":false}`
	sendEmailSchema    = `{"type":"object","properties":{"to":{"type":"string","format":"email"},"body":{"type":"string"}},"required":["to","body"],"additionalProperties":false}`
	searchOrdersSchema = `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`
)

func refundAgents() []session.AgentDefinition {
	return []session.AgentDefinition{
		{ID: "planner", Role: "primary_reasoner", ToolsSource: "config", HandoffTargets: []string{"executor", "reviewer"}, Tools: []session.ToolDefinition{}},
		{ID: "executor", Role: "executor", ToolsSource: "config", HandoffTargets: []string{"reviewer"}, Tools: []session.ToolDefinition{
			{Name: "lookup_order", Parameters: json.RawMessage(lookupOrderSchema)},
			{Name: "issue_refund", Parameters: json.RawMessage(issueRefundSchema)},
			{Name: "check_refund_status", Parameters: json.RawMessage(checkRefundSchema)},
			{Name: "send_email", Parameters: json.RawMessage(sendEmailSchema)},
		}},
		{ID: "reviewer", Role: "reviewer", ToolsSource: "config", Tools: []session.ToolDefinition{}},
	}
}

// refundSession is the ReAsk plan's example ("Process refund for order #12345": planner →
// executor → reviewer) over three turns; turn 2's send_email passes a hallucinated
// 'priority' parameter.
func refundSession() *session.AgentSession {
	u0 := "Please process a refund for order #12345, amount $49.99."
	final0 := "Refund R-778 of $49.99 for order #12345 has been issued."
	u1 := "Is that refund valid?"
	final1 := "Yes, refund R-778 is approved and valid."
	u2 := "Send a confirmation email to jane@example.com"
	final2 := "Confirmation email sent to jane@example.com."
	return newSession("refund-12345", refundAgents(),
		turn(0, u0, final0, 1200,
			interaction("planner", u0, "", 300,
				reasoningStep("The user wants a refund for order #12345. I will hand off to the executor."),
				handoffStep("planner", "executor", "Refund order #12345 for $49.99")),
			interaction("executor", "Refund order #12345 for $49.99", "Refund R-778 created for order #12345.", 600,
				reasoningStep("First lookup_order to confirm the order, then issue_refund, then pass it to the reviewer."),
				toolStep("lookup_order", `{"order_id":"12345"}`, "order 12345 delivered, total $49.99", 80),
				toolStep("issue_refund", `{"order_id":"12345","amount":49.99}`, "refund R-778 created", 120),
				handoffStep("executor", "reviewer", "Refund R-778 created for order #12345, $49.99")),
			interaction("reviewer", "Refund R-778 created for order #12345, $49.99", final0, 250)),
		turn(1, u1, final1, 700,
			interaction("planner", u1, "", 200,
				handoffStep("planner", "executor", "Check whether refund R-778 is valid")),
			interaction("executor", "Check whether refund R-778 is valid", final1, 450,
				toolStep("check_refund_status", `{"refund_id":"R-778"}`, "R-778 approved", 60))),
		turn(2, u2, final2, 900,
			interaction("planner", u2, "", 200,
				handoffStep("planner", "executor", "Email jane@example.com to confirm refund R-778")),
			interaction("executor", "Email jane@example.com to confirm refund R-778", final2, 650,
				toolStep("send_email", `{"to":"jane@example.com","body":"Your refund R-778 is approved.","priority":"high"}`, "sent", 90))),
	)
}

func supportAgents() []session.AgentDefinition {
	return []session.AgentDefinition{{ID: "support", ToolsSource: "config", Tools: []session.ToolDefinition{
		{Name: "lookup_order", Parameters: json.RawMessage(lookupOrderSchema)},
	}}}
}

// correctionSession: the user corrects turn 0 ("No, I meant order #123").
func correctionSession() *session.AgentSession {
	u0, f0 := "What is the status of order #12345?", "Order #12345 has shipped."
	u1, f1 := "No, I meant order #123", "Order #123 was delivered yesterday."
	return newSession("correction", supportAgents(),
		turn(0, u0, f0, 500, interaction("support", u0, f0, 480,
			toolStep("lookup_order", `{"order_id":"12345"}`, "order 12345: shipped", 50))),
		turn(1, u1, f1, 520, interaction("support", u1, f1, 500,
			toolStep("lookup_order", `{"order_id":"123"}`, "order 123: delivered yesterday", 55))),
	)
}

// reaskSession: the user re-asks turn 0 in turn 1, then moves on.
func reaskSession() *session.AgentSession {
	u0, f0 := "How do I reset my password?", "You can manage your account in the settings."
	u1, f1 := "How can I reset my password?", "Open the security page in your settings, choose reset password, then follow the emailed link."
	u2, f2 := "Thanks! And how do I change my username?", "Open the profile page in your settings and edit the username field."
	return newSession("reask", []session.AgentDefinition{{ID: "helpdesk"}},
		turn(0, u0, f0, 300, interaction("helpdesk", u0, f0, 290)),
		turn(1, u1, f1, 320, interaction("helpdesk", u1, f1, 300)),
		turn(2, u2, f2, 310, interaction("helpdesk", u2, f2, 300)),
	)
}

// cleanSession: two agents, three turns, nothing wrong.
func cleanSession() *session.AgentSession {
	agents := []session.AgentDefinition{
		{ID: "router", ToolsSource: "config", HandoffTargets: []string{"orders"}, Tools: []session.ToolDefinition{}},
		{ID: "orders", ToolsSource: "config", Tools: []session.ToolDefinition{
			{Name: "lookup_order", Parameters: json.RawMessage(lookupOrderSchema)},
			{Name: "search_orders", Parameters: json.RawMessage(searchOrdersSchema)},
		}},
	}
	u0, f0 := "Where is order 555?", "Order 555 is in transit and arrives on 2025-06-03."
	u1, f1 := "Which orders did I place in May?", "In May you placed orders 555 and 556."
	u2, f2 := "What is the total of order 556?", "Order 556 totals $20.00."
	return newSession("clean", agents,
		turn(0, u0, f0, 400,
			interaction("router", u0, "", 100, handoffStep("router", "orders", "Where is order 555?")),
			interaction("orders", "Where is order 555?", f0, 250,
				toolStep("lookup_order", `{"order_id":"555"}`, "order 555 in transit, arrives 2025-06-03", 40))),
		turn(1, u1, f1, 420,
			interaction("router", u1, "", 100, handoffStep("router", "orders", "List the orders placed in May")),
			interaction("orders", "List the orders placed in May", f1, 260,
				toolStep("search_orders", `{"query":"placed in May"}`, "orders 555, 556", 45))),
		turn(2, u2, f2, 410,
			interaction("router", u2, "", 100, handoffStep("router", "orders", "Total of order 556")),
			interaction("orders", "Total of order 556", f2, 250,
				toolStep("lookup_order", `{"order_id":"556"}`, "order 556 total $20.00", 42))),
	)
}

// noContentSession: content capture off — no messages, no arguments, no payloads.
func noContentSession() *session.AgentSession {
	ho := handoffStep("planner", "executor", "")
	ho.Handoff.PayloadCaptured = false
	return newSession("no-content", refundAgents(),
		turn(0, "", "", 800,
			interaction("planner", "", "", 200, ho),
			interaction("executor", "", "", 500, toolStep("lookup_order", "", "", 70))),
	)
}

// errorSession: a failing executor, an empty answer, a tool error, an unknown agent.
func errorSession() *session.AgentSession {
	u0 := "Refund order #777"
	failing := interaction("executor", "Refund order #777", "", 300,
		toolStep("issue_refund", `{"order_id":"777","amount":"all"}`, "", 30))
	failing.Status, failing.ErrorType = "error", "RateLimitError"
	failing.Steps[0].ToolCall.Status, failing.Steps[0].ToolCall.Error = "error", "429 Too Many Requests"
	ghost := interaction("ghost", "", "I am not sure.", 10, toolStep("mystery_tool", `{"x":1}`, "ok", 5))
	s := newSession("errors", refundAgents(),
		turn(0, u0, "", 500,
			interaction("planner", u0, "", 100, handoffStep("planner", "executor", "")),
			failing, ghost),
	)
	s.Turns[0].Status = "error"
	return s
}
