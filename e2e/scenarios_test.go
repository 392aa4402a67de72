// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/tracker"
)

// TestFrameworkScenarios checks that the faults injected in the traces generated with real
// frameworks (testdata/frameworks/README.md; src/expected.mjs) are found exactly where
// they were put, and that the clean runs have none.
func TestFrameworkScenarios(t *testing.T) {
	ev, err := evaluation.New(evaluation.DefaultConfig())
	require.NoError(t, err)
	type issue struct {
		turn                      int
		agent, tool, issue, param string
	}
	badArgs := []issue{
		{0, "refund_agent", "issue_refund", string(evaluation.IssueMissingRequiredParam), "amount"},
		{0, "refund_agent", "issue_refund", string(evaluation.IssueParameterHallucination), "reason"},
	}
	unknownTool := []issue{{0, "triage_agent", "issue_refund", string(evaluation.IssueUnauthorizedTool), ""}}
	tests := []struct {
		file string
		// issues are the schema and authorisation findings expected, exactly (TOOL_ERROR,
		// the framework's own rejection of a faulty call, is checked separately).
		issues []issue
		turns  int
		// rdmTurn is the turn the user's correction judges (-1: none).
		rdmTurn int
		// handoffs from triage_agent to refund_agent; -1 for one per turn with work
		// (every turn but a closing thank-you).
		handoffs int
	}{
		{"vercel_ai_handoff", nil, 1, -1, -1},
		{"vercel_ai_bad_tool_args", badArgs, 1, -1, -1},
		{"vercel_ai_unknown_tool", unknownTool, 1, -1, -1},
		{"vercel_ai_multi_turn", nil, 3, 0, -1},
		{"langgraph_handoff", nil, 1, -1, -1},
		{"langgraph_bad_tool_args", badArgs, 1, -1, -1},
		{"langgraph_unknown_tool", unknownTool, 1, -1, -1},
		{"langgraph_multi_turn", nil, 3, 0, -1},
		{"openai_agents_handoff", nil, 1, -1, -1},
		{"openai_agents_bad_tool_args", badArgs, 1, -1, -1},
		{"openai_agents_unknown_tool", unknownTool, 1, -1, -1},
		{"openai_agents_unknown_tool_raise", unknownTool, 1, -1, 0},
		{"openai_agents_multi_turn", nil, 3, 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			td := readOTLPJSON(t, filepath.Join("..", "testdata", "samples", tt.file+".json"))
			ex := conventions.NewExtractor(conventions.Config{SessionKeys: conventions.DefaultSessionKeys(), MaxTextBytes: 4096})
			sessions := tracker.Replay(td, ex, tracker.Config{})
			require.Len(t, sessions, 1, "one conversation per file")
			s := sessions[0]
			require.Len(t, s.Turns, tt.turns)
			var agents []string
			for _, a := range s.Agents {
				agents = append(agents, a.ID)
			}
			wantAgents := []string{"refund_agent", "triage_agent"}
			if tt.handoffs == 0 {
				// The run failed on the unknown tool (the SDK raised): refund_agent never ran.
				wantAgents = []string{"triage_agent"}
			}
			assert.ElementsMatch(t, wantAgents, agents, "agents")

			a := ev.AnalyzeSession(s)
			var got []issue
			for _, is := range a.ToolIssues {
				if is.Issue == evaluation.IssueToolError {
					continue
				}
				got = append(got, issue{is.TurnIndex, is.AgentID, is.ToolName, string(is.Issue), is.Parameter})
			}
			sort.Slice(got, func(i, j int) bool { return fmt.Sprint(got[i]) < fmt.Sprint(got[j]) })
			assert.Equal(t, tt.issues, got, "tool issues")

			for i, tr := range a.TurnResults {
				if i == tt.rdmTurn {
					assert.Equal(t, evaluation.DetectionRDM, tr.DetectionType, "turn %d is corrected by the next user message", i)
				} else {
					assert.NotEqual(t, evaluation.DetectionRDM, tr.DetectionType, "turn %d: %s", i, tr.Reason)
				}
			}

			// Runs hand off from triage_agent to refund_agent, once per turn with work (the
			// LangGraph supervisor also hands control back, refund_agent -> triage_agent).
			var handoffs int
			for _, turn := range s.Turns {
				for _, in := range turn.Interactions {
					for _, st := range in.Steps {
						h := st.Handoff
						if h == nil {
							continue
						}
						if h.FromAgent == "refund_agent" && h.ToAgent == "triage_agent" && strings.HasPrefix(tt.file, "langgraph_") {
							continue
						}
						assert.Equal(t, "triage_agent", h.FromAgent)
						assert.Equal(t, "refund_agent", h.ToAgent)
						handoffs++
					}
				}
			}
			want := tt.handoffs
			if want < 0 {
				want = min(tt.turns, 2)
			}
			assert.Equal(t, want, handoffs, "handoffs")
		})
	}
}
