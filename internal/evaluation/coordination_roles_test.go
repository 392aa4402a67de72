// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRoleAdherence counts the coordinating agents' calls whose tools are known.
func TestRoleAdherence(t *testing.T) {
	unauthorised := ToolCallResult{Issues: []ToolIssue{{Issue: IssueUnauthorizedTool}}}
	unknown := ToolCallResult{NotEvaluable: []string{ReasonToolsUnknown}}
	trs := []TurnResult{{Interactions: []InteractionResult{
		{AgentID: "a", ToolCalls: []ToolCallResult{{}, unauthorised, unknown}},
		{AgentID: "b", ToolCalls: []ToolCallResult{{Issues: []ToolIssue{{Issue: IssueToolError}}}}},
		{AgentID: "outsider", ToolCalls: []ToolCallResult{unauthorised}},
	}}}
	v, expl := runComponent(t, roleAdherence{}, nil, trs, "a", "b")
	score(t, "role_adherence", 2.0/3, v)
	assert.Equal(t, "2 authorised / 3 checked calls = 0.6667", expl)

	v, expl = runComponent(t, roleAdherence{}, nil, trs, "c", "d")
	assert.Nil(t, v)
	assert.Equal(t, "null: no call of a coordinating agent could be checked for authorisation", expl)
}
