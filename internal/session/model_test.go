// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddToolsMergesByName(t *testing.T) {
	d := &AgentDefinition{ID: "a", Tools: []ToolDefinition{{Name: "lookup"}}}
	d.AddTools([]ToolDefinition{
		{Name: ""}, // no name: skipped
		{Name: "lookup", Description: "find an order", Parameters: []byte(`{"type":"object"}`)},
		{Name: "lookup", Description: "later, ignored"},
		{Name: "refund"},
	})
	require.Len(t, d.Tools, 2)
	assert.Equal(t, "find an order", d.Tool("lookup").Description)
	assert.JSONEq(t, `{"type":"object"}`, string(d.Tool("lookup").Parameters))
	assert.NotNil(t, d.Tool("refund"))
	assert.Nil(t, d.Tool("other"))
}

func TestSpanClass(t *testing.T) {
	assert.Equal(t, "llm", ClassLLM.String())
	assert.Equal(t, "unknown", SpanClass(200).String())
	for _, c := range []SpanClass{ClassTurn, ClassAgent, ClassLLM, ClassTool, ClassHandoff} {
		assert.True(t, c.GenAI(), c.String())
	}
	assert.False(t, ClassOther.GenAI())
	assert.False(t, ClassEvaluation.GenAI())
}

func TestUsageAdd(t *testing.T) {
	u := Usage{InputTokens: 1, OutputTokens: 2, LLMCalls: 1}
	u.Add(Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 5, ReasoningTokens: 3, LLMCalls: 2})
	assert.Equal(t, Usage{InputTokens: 11, OutputTokens: 22, CacheReadTokens: 5, ReasoningTokens: 3, LLMCalls: 3}, u)
}

func TestAgentKey(t *testing.T) {
	for in, want := range map[string]string{
		"Math Specialist":   "math_specialist",
		"math-specialist":   "math_specialist",
		" --Refund__Agent ": "refund_agent",
		"already_a_key":     "already_a_key",
		"Überprüfer":        "überprüfer",
	} {
		assert.Equal(t, want, AgentKey(in), in)
	}
}
