// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// reasoningScore is the plan–action consistency of the interaction's reasoning
// (docs/scoring.md §4; docs/scoring.md "reasoning_score"):
//
//	N = entities (tools, agents) the reasoning names, A = entities the interaction acts on
//	P = |N∩A|/|N| (when N ≠ ∅), R = |N∩A|/|A| (when A ≠ ∅)
//	consistency = mean of the defined P, R; 1 when both are undefined
//	score = max(0, consistency − uncertainty_penalty·[unresolved uncertainty])
func (c *evalCtx) reasoningScore(in *session.AgentInteraction) (*float64, string) {
	var texts []string
	lastUncertain := -1
	for si := range in.Steps {
		st := &in.Steps[si]
		if st.Kind == session.StepReasoning && strings.TrimSpace(st.Text) != "" {
			texts = append(texts, st.Text)
			if text.Uncertainty(st.Text) {
				lastUncertain = si
			}
		}
	}
	if len(texts) == 0 {
		return nil, ExplanationNoReasoning
	}
	reasoning := strings.Join(texts, "\n")
	c.nameIndex()
	named := map[string]bool{}
	for _, m := range text.Mentions(reasoning, c.candidates(in.AgentID)) {
		named[c.canon[m]] = true
	}
	acted := map[string]bool{}
	for si := range in.Steps {
		st := &in.Steps[si]
		switch {
		case st.ToolCall != nil:
			if t, ok := c.args.handoffTarget(st.ToolCall); ok {
				acted["agent:"+session.AgentKey(t)] = true
			} else {
				acted["tool:"+st.ToolCall.ToolName] = true
			}
		case st.Handoff != nil && st.Handoff.ToAgent != "":
			acted["agent:"+session.AgentKey(st.Handoff.ToAgent)] = true
		}
	}
	both := 0
	for k := range named {
		if acted[k] {
			both++
		}
	}
	var parts []string
	var sum float64
	var n int
	if len(named) > 0 {
		p := float64(both) / float64(len(named))
		sum += p
		n++
		parts = append(parts, fmt.Sprintf("precision %d/%d named entities acted on", both, len(named)))
	}
	if len(acted) > 0 {
		r := float64(both) / float64(len(acted))
		sum += r
		n++
		parts = append(parts, fmt.Sprintf("recall %d/%d actions named", both, len(acted)))
	}
	consistency := 1.0
	expl := "names no tool or agent and acts on none: consistency 1"
	if n > 0 {
		consistency = sum / float64(n)
		expl = "consistency = mean(" + strings.Join(parts, ", ") + ") = " + num(consistency)
	}
	score := consistency
	if lastUncertain >= 0 {
		resolved := false
		for si := lastUncertain + 1; si < len(in.Steps); si++ {
			if in.Steps[si].ToolCall != nil || in.Steps[si].Handoff != nil {
				resolved = true
				break
			}
		}
		if resolved {
			expl += "; uncertainty resolved by a later tool call or handoff"
		} else {
			score = clamp01(score - c.e.cfg.UncertaintyPenalty)
			expl += "; unresolved uncertainty −" + num(c.e.cfg.UncertaintyPenalty)
		}
	}
	expl += "; score " + num(score)
	return ptr(score), expl
}

// candidates are the names the reasoning of agentID is searched for: every known tool
// and agent name except the agent's own.
func (c *evalCtx) candidates(agentID string) []string {
	c.nameIndex()
	if cs, ok := c.candidateMemo[agentID]; ok {
		return cs
	}
	own := map[string]bool{}
	for _, n := range c.agentNames[agentID] {
		own[n] = true
	}
	cs := make([]string, 0, len(c.names))
	for _, n := range c.names {
		if !own[n] {
			cs = append(cs, n)
		}
	}
	c.candidateMemo[agentID] = cs
	return cs
}

// reasoning is the interaction's reasoning: plan–action consistency.
type reasoning struct{}

var _ interactionEvaluator = reasoning{}

func (reasoning) evaluate(c *evalCtx, x interactionInput) (*float64, string) {
	return c.reasoningScore(x.in)
}
