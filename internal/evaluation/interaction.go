// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"slices"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// Explanation keys of an InteractionResult and of AgentScores.
const (
	keyScore           = "score"
	keyToolUse         = "tool_use"
	keyReasoning       = "reasoning"
	keyHandoff         = "handoff"
	keyResponseQuality = "response_quality"
)

// The most frequent explanations of an interaction's null scores, which the evaluation
// spans leave out as their defaults (internal/evalspan).
const (
	ExplanationNoReasoning = "null: no reasoning content"
	ExplanationNoHandoff   = "null: no handoff"
	ExplanationDelegated   = "null: no own output; the interaction delegated (handoff)"
)

// interaction scores interaction ii of turn ti into r, without the bad-turn rule (applied by
// turn once the detection is known).
func (c *evalCtx) interaction(ti, ii int, r *InteractionResult) {
	t := &c.s.Turns[ti]
	in := &t.Interactions[ii]
	calls, handoffs := 0, 0
	for si := range in.Steps {
		if in.Steps[si].ToolCall != nil {
			calls++
		} else if in.Steps[si].Handoff != nil {
			handoffs++
		}
	}
	*r = InteractionResult{
		AgentID:      in.AgentID,
		SpanID:       in.SpanID,
		LatencyMs:    in.LatencyMs,
		Status:       in.Status,
		ToolCalls:    make([]ToolCallResult, 0, calls),
		Explanations: make(map[string]string, len(interactionEvaluators)+1),
	}
	if handoffs > 0 {
		r.Handoffs = make([]session.Handoff, 0, handoffs)
	}
	agent := c.s.Agent(in.AgentID)
	for si := range in.Steps {
		st := &in.Steps[si]
		switch {
		case st.ToolCall != nil:
			r.ToolCalls = append(r.ToolCalls, c.e.validateCall(in.AgentID, agent, st.ToolCall, ti, c.sessionAgents, c.args))
		case st.Handoff != nil:
			r.Handoffs = append(r.Handoffs, *st.Handoff)
		}
	}
	x := interactionInput{t: t, ii: ii, in: in, content: turnHasContent(t), final: ii == finalResponder(t), calls: r.ToolCalls}
	for _, ev := range interactionEvaluators {
		*ev.field(r), r.Explanations[ev.name] = ev.evaluate(c, x)
	}
	c.score(r)
}

// interactionInput is what an interactionEvaluator reads of interaction ii of turn t.
type interactionInput struct {
	t  *session.Turn
	ii int
	in *session.AgentInteraction
	// content: some text of the turn was captured (turnHasContent).
	content bool
	// final: the interaction gave the turn's final response (finalResponder).
	final bool
	// calls are the interaction's tool calls, validated (toolcall.go), in step order.
	calls []ToolCallResult
}

// score sets the interaction's weighted score from its components.
func (c *evalCtx) score(r *InteractionResult) {
	w := c.e.cfg.AgentWeights
	var buf [8]weighted
	terms := buf[:0]
	for _, ev := range interactionEvaluators {
		terms = append(terms, weighted{ev.name, *ev.field(r), ev.weight(w)})
	}
	r.Score, r.Explanations[keyScore] = weightedMean(terms)
}

// facts is text.SalientFacts of the texts joined by newlines, computed per text once
// per session evaluation: the union of each text's facts, deduplicated, in order. The
// texts are sources (the handoff context: user message and tool results), indexed with
// the same lexing for the grounding (memo.go source).
func (c *evalCtx) facts(texts []string) []text.Fact {
	var fs distinctFacts
	for _, s := range texts {
		fs.add(c.source(s).facts)
	}
	return fs.out
}

// distinctFacts gathers facts in order, each once.
type distinctFacts struct {
	out  []text.Fact
	seen map[text.Fact]bool // made once out has more than smallFacts facts
}

func (d *distinctFacts) add(fs []text.Fact) {
	for _, f := range fs {
		switch {
		case d.seen != nil:
			if d.seen[f] {
				continue
			}
			d.seen[f] = true
		case slices.Contains(d.out, f):
			continue
		case len(d.out) == smallFacts:
			d.seen = make(map[text.Fact]bool, 2*smallFacts)
			for _, g := range d.out {
				d.seen[g] = true
			}
			d.seen[f] = true
		}
		d.out = append(d.out, f)
	}
}

// smallFacts bounds the distinct facts that facts deduplicates by searching its result;
// past it, facts keeps a set.
const smallFacts = 32

// turnHasContent reports whether any text of the turn was captured (user message,
// final response, an interaction's input or output, a reasoning/message step, an LLM
// output, a tool result or arguments). Without it, content-based scores are null
// rather than 0 (content capture is off).
func turnHasContent(t *session.Turn) bool {
	if strings.TrimSpace(t.UserMessage) != "" || strings.TrimSpace(t.FinalResponse) != "" {
		return true
	}
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		if in.Input != "" || in.Output != "" {
			return true
		}
		for si := range in.Steps {
			st := &in.Steps[si]
			if st.Text != "" || st.LLMCall != nil && st.LLMCall.Output != "" ||
				st.ToolCall != nil && (st.ToolCall.Result != "" || len(st.ToolCall.Parameters) > 0) ||
				st.Handoff != nil && st.Handoff.Payload != "" {
				return true
			}
		}
	}
	return false
}

// finalResponder returns the index of the interaction that produced the turn's final
// response: the last one whose output equals it, else the last top-level one
// (no parent agent), else the last one; -1 without interactions.
func finalResponder(t *session.Turn) int {
	n := len(t.Interactions)
	if n == 0 {
		return -1
	}
	final := strings.TrimSpace(t.FinalResponse)
	if final != "" {
		for i := n - 1; i >= 0; i-- {
			if strings.TrimSpace(t.Interactions[i].Output) == final {
				return i
			}
		}
	}
	for i := n - 1; i >= 0; i-- {
		if t.Interactions[i].ParentAgentID == "" {
			return i
		}
	}
	return n - 1
}
