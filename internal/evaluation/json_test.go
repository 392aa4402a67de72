// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecommendationJSONShape(t *testing.T) {
	tests := []struct {
		name string
		r    Recommendation
		want string
	}{
		{
			name: "specific tool issue",
			r: Recommendation{Kind: "parameter_hallucination", AgentID: "executor", ToolName: "send_email", Parameter: "priority",
				Count: 1, Message: "executor: 1 of 1 calls to send_email passed unknown parameter 'priority'", Impact: 0.5},
			want: `{"kind":"parameter_hallucination","agent_id":"executor","tool_name":"send_email","parameter":"priority","count":1,` +
				`"message":"executor: 1 of 1 calls to send_email passed unknown parameter 'priority'","impact":0.5}`,
		},
		{
			name: "threshold rule of the seed: no tool, parameter or count",
			r:    Recommendation{Kind: RecToolUse, AgentID: "executor", Message: "Consider improving tool selection logic for executor", Impact: 0.3},
			want: `{"kind":"tool_use","agent_id":"executor","tool_name":null,"parameter":null,"count":null,` +
				`"message":"Consider improving tool selection logic for executor","impact":0.3}`,
		},
		{
			name: "session rule: no agent",
			r:    Recommendation{Kind: RecRDM, Count: 2, Message: "Users are frequently correcting responses", Impact: 0.6667},
			want: `{"kind":"rdm","agent_id":null,"tool_name":null,"parameter":null,"count":2,` +
				`"message":"Users are frequently correcting responses","impact":0.6667}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.r)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
			var back Recommendation
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tt.r, back, "null decodes to the zero value")
		})
	}
}

func TestToolIssueJSONParameterNull(t *testing.T) {
	is := ToolIssue{TurnIndex: 0, AgentID: "triage", ToolName: "issue_refund", Issue: IssueUnauthorizedTool,
		Severity: SeverityHigh, SpanID: "s1", Message: "triage called issue_refund"}
	b, err := json.Marshal(is)
	require.NoError(t, err)
	assert.JSONEq(t, `{"turn_index":0,"agent_id":"triage","tool_name":"issue_refund","issue":"UNAUTHORIZED_TOOL",`+
		`"severity":"HIGH","parameter":null,"span_id":"s1","executed":false,"message":"triage called issue_refund"}`, string(b))
	var back ToolIssue
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, is, back)

	is.Parameter = "amount"
	b, err = json.Marshal(is)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"parameter":"amount"`)
}

// TestJSONEscapingFollowsTheEncoder: a "<" in a message is escaped by json.Marshal and
// kept by an Encoder with SetEscapeHTML(false), as for any other field.
func TestJSONEscapingFollowsTheEncoder(t *testing.T) {
	r := Recommendation{Kind: RecHandoff, Message: "handoff 0 < 0.7"}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `handoff 0 \u003c 0.7`)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode([]Recommendation{r}))
	assert.Contains(t, buf.String(), `handoff 0 < 0.7`)
}

// TestConversationOrder: turns sort by start, then index (two turns may start in the same
// millisecond); one turn without a start leaves the list as given.
func TestConversationOrder(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	turn := func(index int, start time.Time) TurnResult { return TurnResult{TurnIndex: index, StartedAt: start} }
	indexes := func(trs []TurnResult) []int {
		out := make([]int, len(trs))
		for i := range trs {
			out[i] = trs[i].TurnIndex
		}
		return out
	}
	for _, c := range []struct {
		name  string
		turns []TurnResult
		want  []int
	}{
		{"in order", []TurnResult{turn(0, at), turn(1, at.Add(time.Minute)), turn(2, at.Add(2*time.Minute))}, []int{0, 1, 2}},
		{"turn 2 closed late", []TurnResult{turn(0, at), turn(1, at.Add(2*time.Minute)), turn(2, at.Add(time.Minute))}, []int{0, 2, 1}},
		{"same start, by index", []TurnResult{turn(1, at), turn(0, at)}, []int{0, 1}},
		{"a start unknown", []TurnResult{turn(1, at), turn(0, time.Time{})}, []int{1, 0}},
		{"none", nil, []int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ConversationOrder(c.turns)
			assert.Equal(t, c.want, indexes(c.turns))
		})
	}
}
