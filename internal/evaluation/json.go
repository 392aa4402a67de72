// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"bytes"
	"encoding/json"
)

// The JSON shape of tool issues and recommendations keeps every key: an absent
// parameter, agent, tool or count is null, never a missing key, so that every item of
// tool_issues[], recommendations[] and per_agent_scores[].recommendations[] has the same
// keys. The Go fields stay plain values ("" and 0 for none); decoding null gives them.
// The evaluation spans (internal/evalspan) leave such attributes out instead.

// marshalPlain encodes v without escaping HTML characters: the caller's encoder applies
// its own setting to a MarshalJSON result (json.Marshal escapes them, an Encoder with
// SetEscapeHTML(false) does not), which it could not undo.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// nullString is s, or nil (JSON null) when s is "".
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// MarshalJSON writes the issue with "parameter": null when it has none.
func (i ToolIssue) MarshalJSON() ([]byte, error) {
	return marshalPlain(struct {
		TurnIndex int       `json:"turn_index"`
		AgentID   string    `json:"agent_id"`
		ToolName  string    `json:"tool_name"`
		Issue     IssueType `json:"issue"`
		Severity  Severity  `json:"severity"`
		Parameter *string   `json:"parameter"`
		SpanID    string    `json:"span_id"`
		Executed  bool      `json:"executed"`
		Message   string    `json:"message"`
	}{i.TurnIndex, i.AgentID, i.ToolName, i.Issue, i.Severity, nullString(i.Parameter), i.SpanID, i.Executed, i.Message})
}

// MarshalJSON writes the recommendation with all its keys: agent_id, tool_name,
// parameter and count are null when the rule has none.
func (r Recommendation) MarshalJSON() ([]byte, error) {
	var count *int
	if r.Count != 0 {
		count = &r.Count
	}
	return marshalPlain(struct {
		Kind      string  `json:"kind"`
		AgentID   *string `json:"agent_id"`
		ToolName  *string `json:"tool_name"`
		Parameter *string `json:"parameter"`
		Count     *int    `json:"count"`
		Message   string  `json:"message"`
		Impact    float64 `json:"impact"`
	}{r.Kind, nullString(r.AgentID), nullString(r.ToolName), nullString(r.Parameter), count, r.Message, r.Impact})
}
