// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package sessionjson

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseForms(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantForm   Form
		wantIDs    []string // session ids in order ("" = none given)
		wantTurns  []int
		checkFirst func(t *testing.T, s Session)
	}{
		{
			name:      "multi-agent session file",
			body:      readFile(t, "multi_agent_session.json"),
			wantForm:  FormSession,
			wantIDs:   []string{"sess-refund-001"},
			wantTurns: []int{2},
			checkFirst: func(t *testing.T, s Session) {
				require.Len(t, s.Agents, 3)
				assert.Nil(t, s.Agents[2].ToolsAvailable, "absent tools_available stays unknown (nil)")
				require.Len(t, s.Turns[0].AgentInteractions, 2)
				tc := s.Turns[0].AgentInteractions[0].AgentSteps[1].ToolCall
				require.NotNil(t, tc)
				assert.Equal(t, "delegate_task", tc.ToolName)
				assert.JSONEq(t, `{"agent_id":"executor","task":"Look up order 4417"}`, string(tc.Parameters))
				assert.InDelta(t, 3.0, *tc.LatencyMs, 0)
				require.NotNil(t, s.Success)
				assert.True(t, *s.Success)
			},
		},
		{
			name:      "single-agent trace form",
			body:      readFile(t, "single_agent_trace.json"),
			wantForm:  FormSession,
			wantIDs:   []string{""},
			wantTurns: []int{2},
			checkFirst: func(t *testing.T, s Session) {
				assert.Empty(t, s.Turns[0].AgentInteractions)
				require.Len(t, s.Turns[0].AgentSteps, 2)
				assert.Equal(t, "Read the login code first", *s.Turns[0].AgentSteps[0].Thought)
			},
		},
		{
			name:      "dataset form",
			body:      readFile(t, "dataset.json"),
			wantForm:  FormDataset,
			wantIDs:   []string{"ticket-1", "ticket-2"},
			wantTurns: []int{1, 1},
			checkFirst: func(t *testing.T, s Session) {
				require.Len(t, s.Agents, 2)
				assert.NotNil(t, s.Agents[1].ToolsAvailable, "declared empty tool list is kept as non-nil")
				assert.Empty(t, s.Agents[1].ToolsAvailable)
			},
		},
		{
			name:      "ReAsk request wrapping a session",
			body:      `{"session": {"session_id": "w1", "turns": [{"user_message": "hi", "agent_interactions": [{"agent_id": "a"}]}]}, "analysis_types": ["full_all"]}`,
			wantForm:  FormRequest,
			wantIDs:   []string{"w1"},
			wantTurns: []int{1},
		},
		{
			name:      "ReAsk request wrapping a trace",
			body:      `{"trace": {"turns": [{"user_message": "hi", "agent_response": "hello"}]}, "analysis_types": ["conversation"]}`,
			wantForm:  FormRequest,
			wantIDs:   []string{""},
			wantTurns: []int{1},
		},
		{
			name:      "ReAsk request wrapping a dataset",
			body:      `{"dataset": {"conversations": [{"turns": [{"agent_response": "x"}]}, {"turns": [{"agent_steps": []}]}]}, "analysis_types": []}`,
			wantForm:  FormRequest,
			wantIDs:   []string{"", ""},
			wantTurns: []int{1, 1},
		},
		{
			name:      "unknown properties and nulls are accepted",
			body:      `{"turns": [{"user_message": null, "final_response": null, "agent_interactions": [{"agent_id": "a", "agent_steps": [{"tool_call": null, "thought": null}], "agent_response": null, "latency_ms": null, "tokens": 5}]}], "total_latency_ms": 10, "vendor": {"x": 1}}`,
			wantForm:  FormSession,
			wantIDs:   []string{""},
			wantTurns: []int{1},
			checkFirst: func(t *testing.T, s Session) {
				in := s.Turns[0].AgentInteractions[0]
				assert.Nil(t, in.AgentResponse)
				assert.Nil(t, in.AgentSteps[0].ToolCall)
			},
		},
		{
			name:      "integral numbers in any notation",
			body:      `{"turns": [{"turn_index": 1e2, "agent_response": "x", "latency_ms": 2.5e3}, {"turn_index": 3.0, "agent_response": "y"}]}`,
			wantForm:  FormSession,
			wantIDs:   []string{""},
			wantTurns: []int{2},
			checkFirst: func(t *testing.T, s Session) {
				assert.InDelta(t, 100, *s.Turns[0].TurnIndex, 0)
				assert.InDelta(t, 2500, *s.Turns[0].LatencyMs, 0)
			},
		},
		{
			name:      "non-object tool arguments pass validation (reported later as MALFORMED_ARGUMENTS)",
			body:      `{"turns": [{"agent_interactions": [{"agent_id": "a", "agent_steps": [{"tool_call": {"tool_name": "t", "parameters": "{not json"}}]}]}]}`,
			wantForm:  FormSession,
			wantIDs:   []string{""},
			wantTurns: []int{1},
			checkFirst: func(t *testing.T, s Session) {
				assert.JSONEq(t, `"{not json"`, string(s.Turns[0].AgentInteractions[0].AgentSteps[0].ToolCall.Parameters))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sessions, form, err := Parse([]byte(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.wantForm, form)
			require.Len(t, sessions, len(tt.wantIDs))
			for i, s := range sessions {
				assert.Equal(t, tt.wantIDs[i], s.SessionID)
				assert.Len(t, s.Turns, tt.wantTurns[i])
			}
			if tt.checkFirst != nil {
				tt.checkFirst(t, sessions[0])
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantField string
		wantMsg   string // substring of the message
	}{
		{name: "not JSON", body: `{"turns": [`, wantField: "", wantMsg: "not valid JSON"},
		{name: "not an object", body: `[1, 2]`, wantField: "", wantMsg: "must be a JSON object"},
		{name: "no turns", body: `{"agents": []}`, wantField: "turns", wantMsg: "missing required property"},
		// session_ids the processor would not key a session by: each turn would become a
		// session of its own, and the 202 would name a session that never exists.
		{name: "blank session_id", body: `{"session_id": "   ", "turns": [{"agent_response": "x"}]}`, wantField: "session_id", wantMsg: "session id is blank"},
		{name: "session_id with a newline", body: `{"session_id": "a\nb", "turns": [{"agent_response": "x"}]}`, wantField: "session_id", wantMsg: "control character"},
		{name: "session_id ..", body: `{"session_id": "..", "turns": [{"agent_response": "x"}]}`, wantField: "session_id", wantMsg: "names no session in a URL path"},
		{name: "session_id .", body: `{"trace": {"session_id": ".", "turns": [{"agent_response": "x"}]}}`, wantField: "trace.session_id", wantMsg: "names no session in a URL path"},
		{name: "session_id with NUL in a dataset", body: `{"conversations": [{"session_id": "ok", "turns": [{"agent_response": "x"}]}, {"session_id": "a\u0000", "turns": [{"agent_response": "x"}]}]}`, wantField: "conversations[1].session_id", wantMsg: "control character"},
		{name: "blank session_id in a request's dataset", body: `{"dataset": {"conversations": [{"session_id": " ", "turns": [{"agent_response": "x"}]}]}}`, wantField: "dataset.conversations[0].session_id", wantMsg: "session id is blank"},
		{name: "empty turns", body: `{"turns": []}`, wantField: "turns", wantMsg: "minItems"},
		{
			name:      "missing agent_id",
			body:      `{"turns": [{"agent_interactions": [{"agent_id": "a"}, {"agent_response": "x"}]}]}`,
			wantField: "turns[0].agent_interactions[1].agent_id", wantMsg: "missing required property",
		},
		{
			name:      "turn in neither form",
			body:      `{"turns": [{"user_message": "hi"}]}`,
			wantField: "turns[0]", wantMsg: "needs one of: agent_interactions, agent_response, agent_steps",
		},
		{
			name:      "wrong type deep inside",
			body:      `{"turns": [{"agent_interactions": [{"agent_id": "a", "agent_steps": [{"tool_call": {"tool_name": "t", "latency_ms": "fast"}}]}]}]}`,
			wantField: "turns[0].agent_interactions[0].agent_steps[0].tool_call.latency_ms", wantMsg: "got string",
		},
		{
			name:      "missing tool_name",
			body:      `{"turns": [{"agent_steps": [{"tool_call": {"parameters": {}}}]}]}`,
			wantField: "turns[0].agent_steps[0].tool_call.tool_name", wantMsg: "missing required property",
		},
		{
			name:      "negative latency",
			body:      `{"turns": [{"agent_interactions": [{"agent_id": "a", "latency_ms": -5}]}]}`,
			wantField: "turns[0].agent_interactions[0].latency_ms", wantMsg: "minimum",
		},
		{
			name:      "empty session_id",
			body:      `{"session_id": "", "turns": [{"agent_response": "x"}]}`,
			wantField: "session_id", wantMsg: "minLength",
		},
		{
			name:      "tool without name",
			body:      `{"agents": [{"id": "a", "tools_available": [{"description": "d"}]}], "turns": [{"agent_response": "x"}]}`,
			wantField: "agents[0].tools_available[0].name", wantMsg: "missing required property",
		},
		{
			name:      "parameters_schema not an object",
			body:      `{"agents": [{"id": "a", "tools_available": [{"name": "t", "parameters_schema": ["x"]}]}], "turns": [{"agent_response": "x"}]}`,
			wantField: "agents[0].tools_available[0].parameters_schema", wantMsg: "got array",
		},
		{
			name:      "dataset conversation invalid",
			body:      `{"conversations": [{"turns": [{"agent_response": "x"}]}, {"turns": "none"}]}`,
			wantField: "conversations[1].turns", wantMsg: "got string",
		},
		{
			name:      "request with two payloads",
			body:      `{"trace": {"turns": [{"agent_response": "x"}]}, "session": {"turns": [{"agent_response": "y"}]}}`,
			wantField: "", wantMsg: "oneOf",
		},
		{name: "number out of float64 range", body: `{"turns": [{"agent_response": "x", "latency_ms": 1e9999999}]}`,
			wantField: "turns[0].latency_ms", wantMsg: "number 1e9999999 is out of range"},
		{name: "trailing data", body: `{"turns": [{"agent_response": "x"}]} {}`, wantField: "", wantMsg: "data after the top-level value"},
		{name: "fractional turn_index", body: `{"turns": [{"turn_index": 1.5, "agent_response": "x"}]}`,
			wantField: "turns[0].turn_index", wantMsg: "got number, want"},
		{
			name:      "request payload invalid",
			body:      `{"session": {"turns": [{"agent_interactions": [{}]}]}}`,
			wantField: "session.turns[0].agent_interactions[0].agent_id", wantMsg: "missing required property",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tt.body))
			require.Error(t, err)
			var ve *ValidationError
			require.True(t, errors.As(err, &ve), "want *ValidationError, got %T: %v", err, err)
			assert.Equal(t, tt.wantField, ve.Field)
			assert.Contains(t, ve.Message, tt.wantMsg)
		})
	}
}

func TestSchemaCompiles(t *testing.T) {
	c, err := schemas()
	require.NoError(t, err)
	assert.NotNil(t, c.session)
	assert.NotNil(t, c.dataset)
	assert.NotNil(t, c.request)
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

func readTestdata(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", name))
}
