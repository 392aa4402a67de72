// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseArguments(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // "" = nil
		isObject bool
	}{
		{"empty", "", "", false},
		{"blank", " \n\t", "", false},
		{"object", `{"a":1}`, `{"a":1}`, true},
		{"object compacted", "{ \"a\" : 1,\n \"b\": [1, 2] }", `{"a":1,"b":[1,2]}`, true},
		{"empty object", `{}`, `{}`, true},
		{"array is not an object", `[1, 2]`, `[1,2]`, false},
		{"number", `42`, `42`, false},
		{"json string", `"hello"`, `"hello"`, false},
		{"double-encoded object", `"{\"a\": 1}"`, `{"a":1}`, true},
		{"double-encoded non-object stays a string", `"[1]"`, `"[1]"`, false},
		{"python dict", `{'a': 'x', 'b': True, 'c': None, 'd': (1, 2.5), 'e': [False]}`, `{"a":"x","b":true,"c":null,"d":[1,2.5],"e":[false]}`, true},
		{"python nested quotes", `{'q': "it's", 'r': 'say "hi"'}`, `{"q":"it's","r":"say \"hi\""}`, true},
		{"python number keys", `{1: 'one', 2.5: 'x'}`, `{"1":"one","2.5":"x"}`, true},
		{"python trailing comma", `{'a': 1,}`, `{"a":1}`, true},
		{"python nan is not json", `{'a': nan}`, `"{'a': nan}"`, false},
		{"truncated json is raw text", `{"city": "Par`, `"{\"city\": \"Par"`, false},
		{"plain text", `Paris`, `"Paris"`, false},
		{"control characters escaped", "line1\nline2\x01", `"line1\nline2\u0001"`, false},
		{"invalid utf-8 replaced", "{\"a\":\"\xff\"}", `{"a":"` + "\uFFFD" + `"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isObj := ParseArguments(tt.in)
			if tt.want == "" {
				assert.Nil(t, got)
			} else {
				assert.Equal(t, tt.want, string(got))
				assert.True(t, json.Valid(got), "%s", got)
			}
			assert.Equal(t, tt.isObject, isObj)
		})
	}
}

func TestHandoffToolTarget(t *testing.T) {
	tests := []struct {
		tool, args   string
		target, mode string
		ok           bool
	}{
		{"transfer_to_billing", "{}", "billing", "pass_control", true},
		{"transfer_back_to_supervisor", "", "supervisor", "pass_control", true},
		{"handoff_to_writer", "", "writer", "pass_control", true},
		{"transfer_to_agent", `{"agent_name": "math_agent"}`, "math_agent", "pass_control", true},
		{"transfer_to_agent", ``, "", "pass_control", true},
		{"handoff_to_agent", `{"agent_name":"reviewer","message":"m"}`, "reviewer", "pass_control", true},
		{"handoff_to_agent", `{'agent_name': 'reviewer'}`, "reviewer", "pass_control", true},
		{"Delegate work to coworker", `{"task":"t","context":"c","coworker":"Senior Writer"}`, "Senior Writer", "return_to_caller", true},
		{"Ask question to coworker", `{"question":"q","coworker":"Analyst"}`, "Analyst", "return_to_caller", true},
		{"Agent", `{"subagent_type":"research-specialist","prompt":"p"}`, "research-specialist", "return_to_caller", true},
		{"Agent", `{"prompt":"p"}`, "", "", false},
		{"get_weather", `{"agent_name":"x"}`, "", "", false},
		{"transfer", "", "", "", false},
	}
	for _, tt := range tests {
		target, mode, ok := HandoffToolTarget(tt.tool, tt.args)
		assert.Equal(t, tt.ok, ok, "%s %s", tt.tool, tt.args)
		assert.Equal(t, tt.target, target, "%s %s", tt.tool, tt.args)
		assert.Equal(t, tt.mode, mode, "%s %s", tt.tool, tt.args)
	}
}

func TestSubagentContent(t *testing.T) {
	const args = `{"description":"d","subagent_type":"research-specialist","prompt":"What is the temperature in Seattle?","run_in_background":false}`
	tests := []struct {
		name, tool, args, result string
		input, output            string
	}{
		{"wrapper: the text of its content, never its other fields", "Agent", args,
			`{"status":"completed","prompt":"What is the temperature in Seattle?","agentId":"a1","agentType":"research-specialist",` +
				`"content":[{"type":"text","text":"72°F, partly cloudy"}],"resolvedModel":"m","totalTokens":4542}`,
			"What is the temperature in Seattle?", "72°F, partly cloudy"},
		{"wrapper with non-text parts: text parts only, joined", "Agent", args,
			`{"prompt":"What is the temperature in Seattle?","content":[{"type":"image","source":{"data":"AAAA"}},{"type":"text","text":"72°F"},` +
				`{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}},{"type":"text","text":"partly cloudy"}]}`,
			"What is the temperature in Seattle?", "72°F\npartly cloudy"},
		{"wrapper with no text part", "Agent", args, `{"status":"completed","prompt":"p","content":[{"type":"image","source":{}}]}`,
			"What is the temperature in Seattle?", ""},
		{"wrapper without content: not the answer", "Agent", args, `{"status":"error","prompt":"What is the temperature in Seattle?"}`,
			"What is the temperature in Seattle?", ""},
		{"plain string: as it is", "Agent", args, " 72°F, partly cloudy \n", "What is the temperature in Seattle?", "72°F, partly cloudy"},
		{"JSON string: its content", "Agent", args, `"72°F"`, "What is the temperature in Seattle?", "72°F"},
		{"malformed JSON", "Agent", args, `{"status":"completed","content":[{"type":"text","text":"72°F"`, "What is the temperature in Seattle?", ""},
		{"another JSON value", "Agent", args, `[{"prompt":"p"}]`, "What is the temperature in Seattle?", ""},
		{"no result", "Agent", args, "", "What is the temperature in Seattle?", ""},
		{"no prompt argument", "Agent", `{"subagent_type":"x"}`, `"ok"`, "", "ok"},
		{"another tool", "transfer_to_agent", `{"agent_name":"a","prompt":"p"}`, `"ok"`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input, output := SubagentContent(tt.tool, tt.args, tt.result)
			assert.Equal(t, tt.input, input)
			assert.Equal(t, tt.output, output)
		})
	}
}

func TestUnwrapArgsKwargs(t *testing.T) {
	tests := []struct {
		in, want  string
		lossy, ok bool
	}{
		{`{"args": [], "kwargs": {"q": 1}}`, `{"q": 1}`, false, true},
		{`{"kwargs": {"q": 1}}`, `{"q": 1}`, false, true},
		{`{"args": [], "kwargs": {}}`, `{}`, false, true},
		{`{"args": [{"q": 2}], "kwargs": {}}`, `{"q": 2}`, false, true},
		{`{"args": [1], "kwargs": {"k": 3}}`, `{"k": 3}`, true, true},
		{`{"args": [1, 2]}`, ``, true, false},
		{`{"args": [], "kwargs": {}, "other": 1}`, ``, false, false},
		{`{"q": 1}`, ``, false, false},
		{`[1]`, ``, false, false},
		{`{"args": "x"}`, ``, false, false},
	}
	for _, tt := range tests {
		got, lossy, ok := unwrapArgsKwargs(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.lossy, lossy, tt.in)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.in)
		}
	}
}
