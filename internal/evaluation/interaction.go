// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
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

// interaction scores interaction ii of turn ti, without the bad-turn rule (applied by
// turn once the detection is known).
func (c *evalCtx) interaction(ti, ii int) InteractionResult {
	t := &c.s.Turns[ti]
	in := &t.Interactions[ii]
	r := InteractionResult{
		AgentID:      in.AgentID,
		SpanID:       in.SpanID,
		LatencyMs:    in.LatencyMs,
		Status:       in.Status,
		ToolCalls:    []ToolCallResult{},
		Explanations: map[string]string{},
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
	content := turnHasContent(t)
	r.ToolUse, r.Explanations[keyToolUse] = toolUseScore(r.ToolCalls)
	r.Reasoning, r.Explanations[keyReasoning] = c.reasoningScore(in)
	r.Handoff, r.Explanations[keyHandoff] = c.handoffScore(t, ii, content)
	r.ResponseQuality, r.Explanations[keyResponseQuality] = c.responseQuality(in, content, ii == finalResponder(t))
	c.score(&r)
	return r
}

// score sets the interaction's weighted score from its components.
func (c *evalCtx) score(r *InteractionResult) {
	w := c.e.cfg.AgentWeights
	r.Score, r.Explanations[keyScore] = weightedMean([]weighted{
		{keyToolUse, r.ToolUse, w.ToolUse},
		{keyReasoning, r.Reasoning, w.Reasoning},
		{keyHandoff, r.Handoff, w.Handoff},
		{keyResponseQuality, r.ResponseQuality, w.ResponseQuality},
	})
}

// toolUseScore is the mean score of the evaluable calls (docs/scoring.md §4).
func toolUseScore(calls []ToolCallResult) (*float64, string) {
	if len(calls) == 0 {
		return nil, "null: no tool calls"
	}
	vals := make([]*float64, len(calls))
	var parts []string
	for i := range calls {
		vals[i] = calls[i].Score
		if calls[i].Score != nil {
			parts = append(parts, num(*calls[i].Score))
		}
	}
	m, n := meanOf(vals)
	if m == nil {
		return nil, fmt.Sprintf("null: none of the %d tool call(s) is evaluable", len(calls))
	}
	expl := fmt.Sprintf("mean of %d evaluable call score(s) (%s) = %s", n, strings.Join(parts, ", "), num(*m))
	if n < len(calls) {
		expl += fmt.Sprintf("; %d not evaluable", len(calls)-n)
	}
	return m, expl
}

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
		return nil, "null: no reasoning content"
	}
	reasoning := strings.Join(texts, "\n")
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

// handoffScore is the mean coverage, over the interaction's handoffs whose payload was
// captured, of the turn's salient facts known before the handoff (user message and the
// results of the tool calls made earlier in the turn) by the payload; 0 for an empty
// payload (docs/scoring.md §4).
func (c *evalCtx) handoffScore(t *session.Turn, ii int, content bool) (*float64, string) {
	in := &t.Interactions[ii]
	var vals []*float64
	var parts []string
	total, uncaptured, nothing := 0, 0, 0
	for si := range in.Steps {
		h := in.Steps[si].Handoff
		if h == nil {
			continue
		}
		total++
		if !h.PayloadCaptured {
			uncaptured++
			continue
		}
		if strings.TrimSpace(h.Payload) == "" {
			vals = append(vals, ptr(0))
			parts = append(parts, "→"+h.ToAgent+" empty payload 0")
			continue
		}
		if !content {
			nothing++
			continue
		}
		pieces := c.handoffContext(t, ii, si)
		facts := c.facts(pieces)
		needed, used := c.neededFacts(t, ii, h, facts)
		if len(facts) > 0 && used != nil {
			if len(needed) == 0 {
				nothing++
				continue
			}
			inPayload, usedOnly := 0, 0
			for i, in := range text.Found(needed, h.Payload) {
				if in {
					inPayload++
				} else if used[needed[i]] {
					usedOnly++
				}
			}
			cov := float64(inPayload+usedOnly) / float64(len(needed))
			vals = append(vals, ptr(cov))
			parts = append(parts, fmt.Sprintf("→%s %d of %d needed fact(s) received (%d in the payload, %d used by the receiving agent) = %s",
				h.ToAgent, inPayload+usedOnly, len(needed), inPayload, usedOnly, num(cov)))
			continue
		}
		ctxText := ""
		if len(facts) == 0 {
			ctxText = strings.Join(pieces, "\n")
		}
		cov, ok := text.Coverage(facts, ctxText, h.Payload)
		if !ok {
			nothing++
			continue
		}
		cov = clamp01(cov)
		vals = append(vals, ptr(cov))
		if len(facts) > 0 {
			parts = append(parts, fmt.Sprintf("→%s coverage %s of %d salient fact(s)", h.ToAgent, num(cov), len(facts)))
		} else {
			parts = append(parts, fmt.Sprintf("→%s coverage %s of the context's content words (no salient fact)", h.ToAgent, num(cov)))
		}
	}
	if total == 0 {
		return nil, "null: no handoff"
	}
	m, _ := meanOf(vals)
	if m == nil {
		switch {
		case uncaptured == total:
			return nil, "null: handoff payload not captured"
		case !content:
			return nil, "null: the turn has no captured content"
		default:
			return nil, "null: nothing to cover (no salient fact or content word before the handoff)"
		}
	}
	expl := "mean(" + strings.Join(parts, "; ") + ") = " + num(*m)
	if uncaptured > 0 || nothing > 0 {
		expl += fmt.Sprintf("; %d handoff(s) not scored", uncaptured+nothing)
	}
	return m, expl
}

// neededFacts returns the facts the receiving agent of h needed (docs/scoring.md §4.3)
// and, among them, those it evidently had because it used them afterwards in the turn
// (in its tool arguments, handoff payloads or output; frameworks such as LangGraph
// share the whole conversation, which the captured payload does not show). Needed are
// the context facts it used plus the facts of the user request. When its work was not
// captured, every context fact is needed and none counts as used.
func (c *evalCtx) neededFacts(t *session.Turn, ii int, h *session.Handoff, facts []text.Fact) (needed []text.Fact, used map[text.Fact]bool) {
	if len(facts) == 0 {
		return nil, nil
	}
	to := session.AgentKey(h.ToAgent)
	var work []string
	for j := ii + 1; j < len(t.Interactions); j++ {
		in := &t.Interactions[j]
		if session.AgentKey(in.AgentID) != to {
			continue
		}
		work = append(work, in.Output)
		for si := range in.Steps {
			if tc := in.Steps[si].ToolCall; tc != nil {
				work = append(work, string(tc.Parameters))
			}
			if hh := in.Steps[si].Handoff; hh != nil {
				work = append(work, hh.Payload)
			}
		}
	}
	hay := strings.TrimSpace(strings.Join(work, "\n"))
	if hay == "" {
		return facts, nil
	}
	used = map[text.Fact]bool{}
	req := map[text.Fact]bool{}
	for _, f := range c.facts([]string{t.UserMessage}) {
		req[f] = true
	}
	found := text.Found(facts, hay)
	for i, f := range facts {
		if found[i] {
			used[f] = true
			needed = append(needed, f)
		} else if req[f] {
			needed = append(needed, f)
		}
	}
	return needed, used
}

// handoffContext is what the receiving agent may need at the handoff in step si of
// interaction ii: the user message and the results of the tool calls made before it
// in the turn (handoff tools' own results, framework plumbing, excepted), as separate
// texts.
func (c *evalCtx) handoffContext(t *session.Turn, ii, si int) []string {
	out := []string{t.UserMessage}
	for j := 0; j <= ii; j++ {
		steps := t.Interactions[j].Steps
		end := len(steps)
		if j == ii {
			end = si
		}
		for k := 0; k < end; k++ {
			if tc := steps[k].ToolCall; tc != nil && tc.Result != "" {
				if _, isHandoff := c.args.handoffTarget(tc); !isHandoff {
					out = append(out, tc.Result)
				}
			}
		}
	}
	return out
}

// facts is text.SalientFacts of the texts joined by newlines, computed per text once
// per session evaluation: the union of each text's facts, deduplicated, in order.
func (c *evalCtx) facts(texts []string) []text.Fact {
	var out []text.Fact
	seen := map[text.Fact]bool{}
	for _, s := range texts {
		for _, f := range c.salient(s) {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// responseQuality is docs/scoring.md §4 response_quality without the bad-turn rule.
// Only the turn's final responder owes the user an answer: another interaction with no
// output of its own (it worked through tools or handed off, or its content was not
// captured) has nothing to judge and gets null.
func (c *evalCtx) responseQuality(in *session.AgentInteraction, content, final bool) (*float64, string) {
	if in.Status == session.StatusError {
		why := "error status"
		if in.ErrorType != "" {
			why += " (" + in.ErrorType + ")"
		}
		return ptr(0), "0: " + why
	}
	if strings.TrimSpace(in.Output) == "" {
		if !content {
			return nil, "null: the turn has no captured content"
		}
		if c.delegates(in) {
			return nil, "null: no own output; the interaction delegated (handoff)"
		}
		if !final {
			return nil, "null: no own output and not the turn's final responder"
		}
		return ptr(0), "0: empty output from the turn's final responder"
	}
	score := 1.0
	var why []string
	if in.FinishReason == "length" {
		score -= c.e.cfg.TruncationPenalty
		why = append(why, "truncated (finish_reason=length) −"+num(c.e.cfg.TruncationPenalty))
	}
	if text.Refusal(in.Output) {
		score -= c.e.cfg.RefusalPenalty
		why = append(why, "refusal −"+num(c.e.cfg.RefusalPenalty))
	}
	score = clamp01(score)
	if len(why) == 0 {
		return ptr(score), "1: non-empty output, not truncated, no refusal"
	}
	return ptr(score), "1 " + strings.Join(why, ", ") + " = " + num(score)
}

func (c *evalCtx) delegates(in *session.AgentInteraction) bool {
	for si := range in.Steps {
		if in.Steps[si].Handoff != nil {
			return true
		}
		if tc := in.Steps[si].ToolCall; tc != nil {
			if _, ok := c.args.handoffTarget(tc); ok {
				return true
			}
		}
	}
	return false
}

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
