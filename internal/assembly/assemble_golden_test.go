// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// goldenExpect states, per recorded trace, what the golden file must show: the
// interactions' agents, the handoffs (from>to:rule) and the tool calls
// (agent/tool:status), so that a regenerated golden file is still checked.
var goldenExpect = map[string]struct {
	agents   []string
	handoffs []string
	tools    []string
	root     string
}{
	"adk_live_spans": {
		agents: []string{"math_agent"}, root: session.RootRuleTurnMarker,
		tools: []string{"math_agent/calculator:ok"},
	},
	"autogen_live_spans_0295b55e": {root: session.RootRuleSpanRoot},
	"autogen_live_spans_29940edc": {
		agents: []string{"math_assistant"}, root: session.RootRuleGenAIRoot,
		tools: []string{"math_assistant/calculate:ok"},
	},
	"claude_live_spans": {
		// The sub-agent spans are named "Agent" like their launching tool: they take the
		// subagent_type the tool was called with.
		agents: []string{"ClaudeAgentSDK.query", "research-specialist", "research-specialist", "math-specialist"}, root: session.RootRuleGenAIRoot,
		handoffs: []string{"ClaudeAgentSDK.query>research-specialist:handoff_tool", "ClaudeAgentSDK.query>research-specialist:handoff_tool",
			"ClaudeAgentSDK.query>math-specialist:handoff_tool"},
		tools: []string{"ClaudeAgentSDK.query/Agent:ok", "ClaudeAgentSDK.query/Agent:ok", "ClaudeAgentSDK.query/Agent:ok",
			"research-specialist/Bash:ok", "research-specialist/Bash:ok", "math-specialist/Bash:ok"},
	},
	"openai_agents_genai_adot_spans": {
		agents: []string{"coordinator", "math_specialist"}, root: session.RootRuleTurnMarker,
		handoffs: []string{"coordinator>math_specialist:gen_ai.handoff"},
		tools: []string{"coordinator/transfer_to_math_specialist:ok", "coordinator/transfer_to_research_specialist:not_executed",
			"math_specialist/multiply_numbers:ok"},
	},
	"openai_agents_genai_live_spans": {
		agents: []string{"coordinator", "research_specialist", "math_specialist"}, root: session.RootRuleTurnMarker,
		handoffs: []string{"coordinator>research_specialist:agent_as_tool", "coordinator>math_specialist:agent_as_tool"},
		tools: []string{"coordinator/ask_research_specialist:ok", "coordinator/ask_math_specialist:ok",
			"research_specialist/lookup_stock_price:ok", "math_specialist/multiply_numbers:ok", "math_specialist/multiply_numbers:ok"},
	},
	"openai_agents_openinference_live_spans": {
		agents: []string{"coordinator", "math_specialist"}, root: session.RootRuleTurnMarker,
		handoffs: []string{"coordinator>math_specialist:agent_as_tool"},
		tools: []string{"coordinator/ask_math_specialist:ok", "math_specialist/multiply_numbers:ok",
			"math_specialist/divide_numbers:ok", "math_specialist/divide_numbers:ok"},
	},
	"openinference_live_spans": {agents: []string{"route_to_agent"}, root: session.RootRuleTurnMarker},
	"otel_genai_convention_spans": {
		agents: []string{"WeatherAssistant"}, root: session.RootRuleGenAIRoot,
		tools: []string{"WeatherAssistant/get_weather:ok", "WeatherAssistant/get_weather:error"},
	},
	"pydantic_ai_live_spans": {
		agents: []string{"agent"}, root: session.RootRuleGenAIRoot,
		tools: []string{"agent/get_weather:ok"},
	},
}

// update is the golden update flag every package uses (-update): here it rewrites
// testdata/assemble/*.turn.golden.json.
var update = flag.Bool("update", false, "rewrite testdata/assemble/*.turn.golden.json")

// TestAssembleTurnGolden assembles the SpanRecords extracted from the recorded traces of
// testdata/fixtures (see testdata/assemble/README.md) and compares the result with the
// golden files.
func TestAssembleTurnGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "assemble", "*.records.json"))
	require.NoError(t, err)
	require.Len(t, files, len(goldenExpect))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".records.json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			var recs []session.SpanRecord
			require.NoError(t, json.Unmarshal(raw, &recs))
			got := Assemble(recs)
			checkTurn(t, recs, got)
			rev := slices.Clone(recs)
			slices.Reverse(rev)
			assert.True(t, reflect.DeepEqual(got, Assemble(rev)), "record order changed the output")

			exp, ok := goldenExpect[name]
			require.True(t, ok, "no expectation for %s", name)
			var agents, hs, tools []string
			for _, in := range got.Turn.Interactions {
				agents = append(agents, in.AgentID)
				for _, s := range in.Steps {
					switch s.Kind {
					case session.StepHandoff:
						hs = append(hs, s.Handoff.FromAgent+">"+s.Handoff.ToAgent+":"+s.Handoff.SourceRule)
					case session.StepToolCall:
						tools = append(tools, in.AgentID+"/"+s.ToolCall.ToolName+":"+s.ToolCall.Status)
					}
				}
			}
			assert.Equal(t, exp.agents, agents)
			assert.Equal(t, exp.handoffs, hs)
			assert.Equal(t, exp.tools, tools)
			assert.Equal(t, exp.root, got.Turn.RootRule)

			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(got))
			golden := filepath.Join("testdata", "assemble", name+".turn.golden.json")
			if *update {
				require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o600))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -run TestAssembleTurnGolden -update")
			assert.JSONEq(t, string(want), buf.String())
		})
	}
}
