// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenteval/agenteval-collector/internal/session"
)

func TestTranscriptAndMetricPrompt(t *testing.T) {
	s := &session.AgentSession{Turns: []session.Turn{{
		Index: 0, UserMessage: "Refund order 12345", FinalResponse: "Refund issued.",
		Interactions: []session.AgentInteraction{
			{AgentID: "triage", Output: "Handing over", Steps: []session.AgentStep{
				{Kind: session.StepReasoning, Text: "The user wants a refund"},
				{Kind: session.StepHandoff, Handoff: &session.Handoff{ToAgent: "refund_agent", Payload: "order 12345"}},
			}},
			{AgentID: "refund_agent", Output: "Done", Steps: []session.AgentStep{
				{Kind: session.StepToolCall, ToolCall: &session.ToolCall{ToolName: "issue_refund",
					Parameters: json.RawMessage(`{"order_id":"12345"}`), Error: "timeout"}},
			}},
		},
	}}}
	want := "Turn 1\nUser: Refund order 12345\n[triage] Thought: The user wants a refund\n" +
		"[triage] Handoff to refund_agent: order 12345\n[triage]: Handing over\n" +
		"[refund_agent] Tool 'issue_refund'({\"order_id\":\"12345\"}): error: timeout\n[refund_agent]: Done\nAssistant: Refund issued.\n"
	if got := Transcript(s, 0); got != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", got, want)
	}
	cut := Transcript(s, 60)
	if !strings.HasSuffix(cut, "[truncated]\n") || len(cut) > 60+len("[truncated]\n") {
		t.Fatalf("cut transcript %q", cut)
	}
	p := MetricPrompt(MetricReasoning, "T", "triage", "R")
	for _, part := range []string{"<Metric>reasoning</Metric>", "<Agent>triage</Agent>", "<Transcript>\nT</Transcript>", "<Rubric>R</Rubric>"} {
		if !strings.Contains(p, part) {
			t.Errorf("prompt lacks %q:\n%s", part, p)
		}
	}
	if strings.Contains(MetricPrompt(MetricTaskCompletion, "T", "", ""), "<Agent>") {
		t.Error("a session metric names no agent")
	}
	for _, m := range knownMetrics {
		if m != MetricInteractions && metricInstructions[m] == "" {
			t.Errorf("metric %s has no instruction", m)
		}
	}
	if !MetricReasoning.PerAgent() || MetricHandoff.PerAgent() {
		t.Error("PerAgent")
	}
}
