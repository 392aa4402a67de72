// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzFrameworkValues feeds arbitrary text to the small parsers the framework adapters
// added (docs/conventions.md): tool name + arguments of a handoff tool (ADK agentName,
// VoltAgent targetAgents), error-object results (Mastra), JSON-quoted outputs
// (Traceloop), bare-name tool-definition lists (Mastra, VoltAgent). They must never
// panic, and what they return must follow from the input. Seeds:
// testdata/fuzz/FuzzFrameworkValues.
func FuzzFrameworkValues(f *testing.F) {
	for _, s := range []string{
		`{"agentName":"refund_agent"}`, `{"agent_name":"refund_agent"}`,
		`{"task":"refund","targetAgents":["refund_agent","x"]}`, `{"targetAgents":[1,"  ",null]}`,
		`{"error":true,"message":"Tool input validation failed"}`, `{"error":"true"}`, `{"error": true `,
		`"Refund RF-1001 approved."`, `"\u00e9\ud800"`, `["lookup_order","agent-refund_agent"]`,
		`["{\"name\":\"a\"}", "b", ""]`, `[` + strings.Repeat(`"x",`, 200) + `"y"]`, ``, `{`, `null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tool := range []string{"transfer_to_agent", "delegate_task", "handoff_to_agent"} {
			target, mode, ok := HandoffToolTarget(tool, s)
			require.True(t, ok, "%s is a handoff tool whatever its arguments", tool)
			assert.NotEmpty(t, mode)
			assert.Equal(t, strings.TrimSpace(target), target)
			if target != "" && !strings.Contains(s, `\`) && utf8.ValidString(s) {
				assert.Contains(t, s, target, "the target comes from the arguments")
			}
		}

		if isErrorResult(s) {
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(s), &v))
			assert.Equal(t, true, v["error"])
		}

		u := unquoteJSONString(s)
		if u != s {
			var want string
			require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(s)), &want))
			assert.Equal(t, want, u)
		}

		defs, _ := parseToolDefs([]byte(s), 256, nil)
		assert.LessOrEqual(t, len(defs), MaxList+1)
		for _, d := range defs {
			assert.True(t, utf8.ValidString(d.Name) || !utf8.ValidString(s), "name %q", d.Name)
		}
	})
}
