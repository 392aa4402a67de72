// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

func TestHandoffScore(t *testing.T) {
	tests := []struct {
		name    string
		user    string
		steps   []session.AgentStep
		payload string
		want    float64
	}{
		{"all facts passed", "Refund order #12345 for $49.99", nil, "order #12345, $49.99", 1},
		{"half the facts", "Refund order #12345 for $49.99", nil, "order #12345", 0.5},
		{"empty payload", "Refund order #12345 for $49.99", nil, "", 0},
		// The tool result obtained before the handoff adds R-778: 2 of 3.
		{"earlier tool results count", "Refund order #12345 for $49.99",
			[]session.AgentStep{toolStep("issue_refund", `{"order_id":"12345","amount":49.99}`, "refund R-778 created", 1)},
			"order #12345, refund R-778", 2.0 / 3},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := append(append([]session.AgentStep{}, tt.steps...), handoffStep("executor", "reviewer", tt.payload))
			s := newSession("h", refundAgents(), turn(0, tt.user, "ok", 10, interaction("executor", tt.user, "ok", 10, steps...)))
			r := e.EvaluateInteraction(s, 0, 0)
			score(t, "handoff", tt.want, r.Handoff)
		})
	}
	// A later tool result is not context for an earlier handoff.
	s := newSession("h", refundAgents(), turn(0, "Refund order #12345", "ok", 10, interaction("executor", "", "ok", 10,
		handoffStep("executor", "reviewer", "order #12345"), toolStep("lookup_order", `{"order_id":"12345"}`, "refund R-1 pending", 1))))
	score(t, "handoff", 1, e.EvaluateInteraction(s, 0, 0).Handoff)
	// No handoff → null.
	s = newSession("h", refundAgents(), turn(0, "Refund order #12345", "ok", 10, interaction("executor", "", "ok", 10)))
	r := e.EvaluateInteraction(s, 0, 0)
	score(t, "handoff", null, r.Handoff)
	assert.Equal(t, "null: no handoff", r.Explanations[keyHandoff])
}

// TestHandoffContextExtendedAsMadeAfresh: the handoff context extended from a turn's
// previous handoff (handoffContext) holds the texts and distinct facts made afresh for
// each handoff, in step order and when a step comes again or earlier, the calls that had
// not ended at the handoff left out.
func TestHandoffContextExtendedAsMadeAfresh(t *testing.T) {
	e := newEval(t)
	fresh := func(s *session.AgentSession, tu *session.Turn, ii, si int) ([]string, []text.Fact) {
		c := e.newCtx(s)
		out := []string{tu.UserMessage}
		at := tu.Interactions[ii].Steps[si].StartedAt
		for j := 0; j <= ii; j++ {
			steps := tu.Interactions[j].Steps
			end := len(steps)
			if j == ii {
				end = si
			}
			for k := 0; k < end; k++ {
				if j == ii && steps[k].SpanID != "" && steps[k].SpanID == steps[si].SpanID {
					continue // the call that launched the handoff: its result is the answer
				}
				if ended := callEnd(&steps[k]); !at.IsZero() && !ended.IsZero() && ended.After(at) {
					continue // still running at the handoff
				}
				if tc := steps[k].ToolCall; tc != nil && tc.Result != "" {
					if _, isHandoff := c.args.handoffTarget(tc); !isHandoff {
						out = append(out, tc.Result)
					}
				}
			}
		}
		return out, c.facts(out)
	}
	handoffs := 0
	for _, s := range e2eSessions(t) {
		c := e.newCtx(s)
		type step struct{ ii, si int }
		for ti := range s.Turns {
			tu := &s.Turns[ti]
			var steps []step
			for ii := range tu.Interactions {
				for si := range tu.Interactions[ii].Steps {
					if tu.Interactions[ii].Steps[si].Handoff != nil {
						steps = append(steps, step{ii, si})
					}
				}
			}
			handoffs += len(steps)
			// In step order, then the last again and the first again (a restart).
			if len(steps) > 0 {
				steps = append(steps, steps[len(steps)-1], steps[0])
			}
			for _, st := range steps {
				gotTexts, gotFacts := c.handoffContext(tu, st.ii, st.si)
				wantTexts, wantFacts := fresh(s, tu, st.ii, st.si)
				require.Equal(t, wantTexts, gotTexts, "turn %d step %v", ti, st)
				require.Equal(t, wantFacts, gotFacts, "turn %d step %v", ti, st)
			}
		}
	}
	require.Greater(t, handoffs, 10)
}

// TestHandoffContextWithoutItsOwnAnswer: the result of the tool call that launched an
// agent-as-tool handoff (Claude's Agent tool) is the receiving agent's answer, known only
// after the handoff: context of the later handoffs, never of its own. Before, each
// sub-agent's answer was in its own handoff's context and counted as a fact it needed and
// used (audit of the Claude golden, 2026-11-27).
func TestHandoffContextWithoutItsOwnAnswer(t *testing.T) {
	e := newEval(t)
	untimed := func(id, prompt, answer string) []session.AgentStep {
		call := toolStep("Agent", `{"subagent_type":"weather","prompt":"`+prompt+`"}`, answer, 1)
		call.SpanID, call.ToolCall.SpanID = id, id
		h := handoffStep("coordinator", "weather", prompt)
		h.SpanID = id
		return []session.AgentStep{call, h}
	}
	steps := append(untimed("t1", "Paris weather", "Paris is 21°C"), untimed("t2", "Rome weather", "Rome is 25°C")...)
	s := newSession("h", nil, turn(0, "Compare the weather in Paris and Rome", "ok", 10,
		interaction("coordinator", "", "ok", 10, steps...),
		interaction("weather", "Paris weather", "Paris is 21°C", 1), interaction("weather", "Rome weather", "Rome is 25°C", 1)))
	for _, fresh := range []bool{true, false} {
		c := e.newCtx(s)
		tu := &s.Turns[0]
		if !fresh {
			c.handoffContext(tu, 0, 1) // extended from the first handoff
		}
		got, _ := c.handoffContext(tu, 0, 3)
		assert.Equal(t, []string{tu.UserMessage, "Paris is 21°C"}, got, "fresh %v: the second handoff knows the first answer, not its own", fresh)
		got, _ = c.handoffContext(tu, 0, 1)
		assert.Equal(t, []string{tu.UserMessage}, got, "fresh %v: the first handoff knows no answer", fresh)
	}
}

// msAt is t0 plus ms milliseconds.
func msAt(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// agentLaunch is coordinator's agent-as-tool call of weather (Claude's Agent tool) with prompt,
// started at start ms and answering answer after latency ms, and its handoff (same span).
func agentLaunch(id, prompt, answer string, start, latency int) []session.AgentStep {
	call := toolStep("Agent", `{"subagent_type":"weather","prompt":"`+prompt+`"}`, answer, float64(latency))
	call.SpanID, call.ToolCall.SpanID, call.StartedAt = id, id, msAt(start)
	h := handoffStep("coordinator", "weather", prompt)
	h.SpanID, h.StartedAt = id, msAt(start)
	return []session.AgentStep{call, h}
}

// weatherRun is a run of weather started at start ms.
func weatherRun(input, output string, start int) session.AgentInteraction {
	in := interaction("weather", input, output, 1000)
	in.StartedAt = msAt(start)
	return in
}

// TestHandoffContextByTime: parallel agent-as-tool calls (Claude's Agent). A tool result is
// context of a handoff only when its call ended at or before the handoff started, and the
// receiver's work is the run that handoff launched, not every run of the same agent.
// Before, the answer of a call still running at the handoff was its context (step order)
// and the other run of the agent counted as the receiver's work (review of 8d436dd).
func TestHandoffContextByTime(t *testing.T) {
	e := newEval(t)
	// Paris starts at 0 and answers at 7000; Rome is handed off at 1000, while Paris runs.
	steps := append(agentLaunch("t1", "Paris weather", "Paris is 21°C, sunny", 0, 7000), agentLaunch("t2", "Rome weather", "Rome is 25°C", 1000, 5000)...)
	coord := interaction("coordinator", "", "ok", 10000, steps...)
	coord.StartedAt = msAt(0)
	s := newSession("h", nil, turn(0, "Compare the weather in Paris and Rome", "ok", 10000,
		coord, weatherRun("Paris weather", "Paris is 21°C, sunny", 10), weatherRun("Rome weather", "Rome is 25°C", 1010)))
	tu := &s.Turns[0]
	for _, fresh := range []bool{true, false} {
		c := e.newCtx(s)
		if !fresh {
			c.handoffContext(tu, 0, 1)
		}
		got, _ := c.handoffContext(tu, 0, 3)
		assert.Equal(t, []string{tu.UserMessage}, got, "fresh %v: Paris answered after the Rome handoff", fresh)
	}
	c := e.newCtx(s)
	_, facts := c.handoffContext(tu, 0, 3)
	needed, used := c.neededFacts(tu, 0, 3, facts)
	for _, f := range needed {
		assert.NotContains(t, f.Value, "21", "needed fact %v: the Paris run is not the Rome receiver's work", f)
	}
	assert.Len(t, used, len(needed))
	// Each handoff launched its own run: Paris's ends where the Rome handoff starts.
	assert.Equal(t, []int{1}, receiverRuns(nil, tu, 0, 1))
	assert.Equal(t, []int{2}, receiverRuns(nil, tu, 0, 3))

	// Without times, step order: the Paris answer (an earlier step) is context of the
	// Rome handoff, as before.
	for ii := range tu.Interactions {
		tu.Interactions[ii].StartedAt = time.Time{}
		for si := range tu.Interactions[ii].Steps {
			tu.Interactions[ii].Steps[si].StartedAt = time.Time{}
		}
	}
	got, _ := e.newCtx(s).handoffContext(tu, 0, 3)
	assert.Equal(t, []string{tu.UserMessage, "Paris is 21°C, sunny"}, got)
	assert.Equal(t, []int{1, 2}, receiverRuns(nil, tu, 0, 1), "without times, every later run of the agent")
}

// TestHandoffClaudeGoldenParallel: in the Claude golden the New York Agent call runs from
// 21:20:24.627 to 21:20:31.501 and the Seattle handoff happens at 21:20:25.592: the New
// York answer is not context of the Seattle handoff, and the New York run of
// research-specialist is not the Seattle receiver's work. Before, the Seattle handoff
// TestHandoffSplitRequest: a coordinator that splits the request into one task per
// receiver hands each only its part; a request fact another handoff of the same
// interaction carried, and this one did not, is not this receiver's to need. Alone, the
// same partial payload still misses a needed fact.
func TestHandoffSplitRequest(t *testing.T) {
	e := newEval(t)
	const request = "Compare the weather in Paris and Rome"
	steps := append(agentLaunch("t1", "Paris weather", "Sunny", 0, 7000), agentLaunch("t2", "Rome weather", "Cloudy", 1000, 5000)...)
	coord := interaction("coordinator", "", "ok", 10000, steps...)
	coord.StartedAt = msAt(0)
	s := newSession("h", nil, turn(0, request, "ok", 10000,
		coord, weatherRun("Paris weather", "Sunny", 10), weatherRun("Rome weather", "Cloudy", 1010)))
	score, expl := e.newCtx(s).handoffScore(&s.Turns[0], 0, true)
	require.NotNil(t, score, expl)
	assert.InDelta(t, 1, *score, 1e-9, "each receiver got its part of the request: %s", expl)

	// One handoff with Paris only: Rome is still needed (nothing else carried it).
	alone := interaction("coordinator", "", "ok", 10000, agentLaunch("t1", "Paris weather", "Sunny", 0, 7000)...)
	alone.StartedAt = msAt(0)
	s = newSession("h", nil, turn(0, request, "ok", 10000, alone, weatherRun("Paris weather", "Sunny", 10)))
	score, expl = e.newCtx(s).handoffScore(&s.Turns[0], 0, true)
	require.NotNil(t, score, expl)
	assert.Less(t, *score, 1.0, "no sibling carried Rome: %s", expl)

	// A handoff that carries nothing of the request is no part of a split: its
	// receiver still needed the request (review of the first version, which scored 1).
	vacuous := append(agentLaunch("t1", "Paris and Rome weather", "Sunny, cloudy", 0, 1000), agentLaunch("t2", "Write the comparison", "Which cities do you mean?", 2000, 1000)...)
	coord = interaction("coordinator", "", "ok", 10000, vacuous...)
	coord.StartedAt = msAt(0)
	s = newSession("h", nil, turn(0, request, "ok", 10000,
		coord, weatherRun("Paris and Rome weather", "Sunny, cloudy", 10), weatherRun("Write the comparison", "Which cities do you mean?", 2010)))
	c := e.newCtx(s)
	_, facts := c.handoffContext(&s.Turns[0], 0, 3)
	assert.NotContains(t, c.splitRequestFacts(&s.Turns[0], 0, 3, facts), true, "the second handoff carried no fact")

	// A retry after a failed delegation: the failed call handed nothing over, so the
	// retry still needs the request's facts.
	failed := agentLaunch("t1", "Paris and Rome weather", "timeout", 0, 1000)
	failed[0].ToolCall.Status = session.StatusError
	retry := append(failed, agentLaunch("t2", "Paris weather please", "Paris: sunny", 2000, 1000)...)
	coord = interaction("coordinator", "", "ok", 10000, retry...)
	coord.StartedAt = msAt(0)
	s = newSession("h", nil, turn(0, request, "ok", 10000, coord, weatherRun("Paris weather please", "Paris: sunny", 2010)))
	c = e.newCtx(s)
	_, facts = c.handoffContext(&s.Turns[0], 0, 3)
	assert.NotContains(t, c.splitRequestFacts(&s.Turns[0], 0, 3, facts), true, "a failed sibling splits nothing")
}

// TestHandoffClaudeGoldenParallel: in the Claude golden the New York Agent call runs from
// 21:20:24.627 to 21:20:31.501 and the Seattle handoff happens at 21:20:25.592: the New
// York answer is not context of the Seattle handoff, and the New York run of
// research-specialist is not the Seattle receiver's work. Before, the Seattle handoff
// needed 5 facts, 3 of them from the New York answer.
func TestHandoffClaudeGoldenParallel(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "claude_live_spans.sessions.json"))
	require.NoError(t, err)
	var ss []*session.AgentSession
	require.NoError(t, json.Unmarshal(data, &ss))
	require.Len(t, ss, 1)
	s := ss[0]
	tu := &s.Turns[0]
	steps := tu.Interactions[0].Steps
	require.Equal(t, "Get current weather in Seattle", gjsonString(t, steps[2].ToolCall.Parameters, "description"))
	require.NotNil(t, steps[3].Handoff)
	e := newEval(t)
	c := e.newCtx(s)
	pieces, facts := c.handoffContext(tu, 0, 3)
	assert.Equal(t, []string{tu.UserMessage}, pieces, "the New York answer arrived after the Seattle handoff")
	needed, _ := c.neededFacts(tu, 0, 3, facts)
	require.NotEmpty(t, needed)
	for _, f := range needed { // "new york" itself is in the request
		assert.NotEqual(t, "new york city", strings.ToLower(f.Value), "needed fact %v", f)
		assert.NotContains(t, f.Value, "89", "needed fact %v", f)
	}
	// The math handoff, after both answers, knows both.
	pieces, _ = c.handoffContext(tu, 0, 5)
	require.Len(t, pieces, 3)
	assert.Contains(t, pieces[1], "89")
	assert.Contains(t, pieces[2], "72")
}

func gjsonString(t *testing.T, raw json.RawMessage, key string) string {
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	s, _ := m[key].(string)
	return s
}
