// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

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
		pieces, facts := c.handoffContext(t, ii, si)
		needed, used := c.neededFacts(t, ii, si, facts)
		if len(facts) > 0 && used != nil {
			if len(needed) == 0 {
				nothing++
				continue
			}
			inPayload, usedOnly := 0, 0
			for i, in := range text.FoundIn(needed, c.source(h.Payload).index) {
				if in {
					inPayload++
				} else if used[i] {
					usedOnly++
				}
			}
			cov := float64(inPayload+usedOnly) / float64(len(needed))
			vals = append(vals, ptr(cov))
			parts = append(parts, "→"+h.ToAgent+" "+strconv.Itoa(inPayload+usedOnly)+" of "+strconv.Itoa(len(needed))+
				" needed fact(s) received ("+strconv.Itoa(inPayload)+" in the payload, "+strconv.Itoa(usedOnly)+
				" used by the receiving agent) = "+num(cov))
			continue
		}
		ctxText := ""
		if len(facts) == 0 {
			ctxText = strings.Join(pieces, "\n")
		}
		cov, ok := c.coverage(facts, ctxText, h.Payload)
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
		return nil, ExplanationNoHandoff
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

// neededFacts returns the facts the receiving agent of the handoff in step si of
// interaction ii needed (docs/scoring.md §4.3) and, for each of them, whether it evidently
// had it because it used it afterwards in the turn (in its tool arguments, handoff
// payloads or output; frameworks such as LangGraph share the whole conversation, which
// the captured payload does not show). Needed are the context facts it used plus the facts
// of the user request. When its work was not captured, every context fact is needed and
// used is nil. facts are distinct (c.facts). The receiver's work is that of the
// interactions the handoff launched (receiverRuns).
func (c *evalCtx) neededFacts(t *session.Turn, ii, si int, facts []text.Fact) (needed []text.Fact, used []bool) {
	if len(facts) == 0 {
		return nil, nil
	}
	// hay is the receiving agent's work, its texts joined by newlines.
	var work strings.Builder
	texts := 0
	sep := func() {
		if texts > 0 {
			work.WriteByte('\n')
		}
		texts++
	}
	c.runs = receiverRuns(c.runs[:0], t, ii, si)
	for _, j := range c.runs {
		in := &t.Interactions[j]
		sep()
		work.WriteString(in.Output)
		for si := range in.Steps {
			if tc := in.Steps[si].ToolCall; tc != nil {
				sep()
				work.Write(tc.Parameters)
			}
			if hh := in.Steps[si].Handoff; hh != nil {
				sep()
				work.WriteString(hh.Payload)
			}
		}
	}
	hay := strings.TrimSpace(work.String())
	if hay == "" {
		return facts, nil
	}
	req := c.source(t.UserMessage).facts // distinct (SalientFacts)
	found := text.FoundIn(facts, c.index(hay))
	var split []bool // the request facts a sibling handoff carried and this one did not
	used = make([]bool, 0, len(facts))
	for i, f := range facts {
		if !found[i] && slices.Contains(req, f) {
			if split == nil {
				split = c.splitRequestFacts(t, ii, si, facts)
			}
			if split[i] {
				continue
			}
		}
		if found[i] || slices.Contains(req, f) {
			needed = append(needed, f)
			used = append(used, found[i])
		}
	}
	return needed, used
}

// splitRequestFacts reports, for each of facts, whether the delegating interaction ii
// handed it to another agent and not to the receiver of the handoff in step si: it is in
// the payload of another of ii's handoffs, one whose launching call did not fail, and
// not in this one's. A coordinator that splits a request ("New York and Seattle") into
// one task per sub-agent (or per run of one sub-agent) hands each only its part; the
// other parts are not this receiver's to need (docs/scoring.md §4.3). A handoff whose
// payload carries none of facts is no part of a split (its receiver got nothing to work
// from), and a failed delegation hands nothing over (its retry must carry the request):
// for them, nothing is reported.
func (c *evalCtx) splitRequestFacts(t *session.Turn, ii, si int, facts []text.Fact) []bool {
	split := make([]bool, len(facts))
	steps := t.Interactions[ii].Steps
	h := steps[si].Handoff
	var siblings []string
	for k := range steps {
		o := steps[k].Handoff
		if k == si || o == nil || !o.PayloadCaptured || strings.TrimSpace(o.Payload) == "" {
			continue
		}
		if lc := launchingCall(steps, k); lc >= 0 && steps[lc].ToolCall.Status != session.StatusOK {
			continue
		}
		siblings = append(siblings, o.Payload)
	}
	if len(siblings) == 0 {
		return split
	}
	own := text.FoundIn(facts, c.source(h.Payload).index)
	if !slices.Contains(own, true) {
		return split
	}
	other := text.FoundIn(facts, c.index(strings.Join(siblings, "\n")))
	for i := range facts {
		split[i] = other[i] && !own[i]
	}
	return split
}

// receiverRuns appends to runs the indexes of the interactions the handoff in step si of
// interaction ii launched: the receiving agent's interactions that started at or after the handoff
// and before the turn's next handoff to that agent (parallel agent-as-tool calls to one
// agent each launch their own run). When the handoff's or an interaction's start time
// is not known, the receiving agent's interactions after ii (step order).
func receiverRuns(runs []int, t *session.Turn, ii, si int) []int {
	st := &t.Interactions[ii].Steps[si]
	to := session.AgentKey(st.Handoff.ToAgent)
	at := st.StartedAt
	var next time.Time // the next handoff to the same agent, zero when none
	if !at.IsZero() {
		for j := range t.Interactions {
			for k := range t.Interactions[j].Steps {
				o := &t.Interactions[j].Steps[k]
				if o.Handoff != nil && o.StartedAt.After(at) && (next.IsZero() || o.StartedAt.Before(next)) &&
					session.AgentKey(o.Handoff.ToAgent) == to {
					next = o.StartedAt
				}
			}
		}
	}
	for j := range t.Interactions {
		in := &t.Interactions[j]
		if j == ii || session.AgentKey(in.AgentID) != to {
			continue
		}
		if at.IsZero() || in.StartedAt.IsZero() {
			if j > ii {
				runs = append(runs, j)
			}
			continue
		}
		if !in.StartedAt.Before(at) && (next.IsZero() || in.StartedAt.Before(next)) {
			runs = append(runs, j)
		}
	}
	return runs
}

// coverage is text.Coverage with the payload's index memoised (a payload is also a
// source of the grounding, memo.go source).
func (c *evalCtx) coverage(facts []text.Fact, ctxText, payload string) (float64, bool) {
	if len(facts) == 0 {
		return text.Coverage(nil, ctxText, payload)
	}
	return text.CoverageIn(facts, c.source(payload).index), true
}

// handoffContext is what the receiving agent may need at the handoff in step si of
// interaction ii: the user message and the results of the tool calls made before it
// in the turn (handoff tools' own results, framework plumbing, excepted), as separate
// texts, and their distinct facts (facts). The result of the tool call that launched the
// handoff itself (launchingCall: an agent-as-tool call such as Claude's Agent, whose
// result is the receiver's answer) is not context of that handoff, only of later ones.
// When the handoff's and a call's start times are known, the call's result is context
// only if the call ended (start + latency_ms) at or before the handoff started: a
// parallel agent-as-tool call still running has not answered yet (callEnd). A turn's
// handoffs are scored in step order and the step-order context extends the one before,
// so it is extended from the previous handoff of the turn, not made again; the calls
// not yet ended are left out on copies. The slices returned are shared and only read.
func (c *evalCtx) handoffContext(t *session.Turn, ii, si int) ([]string, []text.Fact) {
	h := &c.handoffCtx
	steps := t.Interactions[ii].Steps
	own := launchingCall(steps, si)
	end := si
	if own >= 0 {
		end = own
	}
	if h.t != t || ii < h.ii || ii == h.ii && end < h.si {
		// Another turn, or an earlier step: start again (never reusing the arrays of
		// slices handed out).
		*h = handoffCtx{t: t, pieces: []string{t.UserMessage}, ends: []time.Time{{}}}
		h.facts.add(c.source(t.UserMessage).facts)
	}
	for j := h.ii; j <= ii; j++ {
		steps := t.Interactions[j].Steps
		k, stop := 0, len(steps)
		if j == h.ii {
			k = h.si
		}
		if j == ii {
			stop = end
		}
		for ; k < stop; k++ {
			if r := c.contextResult(steps[k].ToolCall); r != "" {
				h.pieces = append(h.pieces, r)
				h.ends = append(h.ends, callEnd(&steps[k]))
				h.facts.add(c.source(r).facts)
			}
		}
	}
	h.ii, h.si = ii, end
	at := steps[si].StartedAt
	ended := func(e time.Time) bool { return at.IsZero() || e.IsZero() || !e.After(at) }
	fresh := own >= 0 && own+1 < si
	for _, e := range h.ends {
		if !ended(e) {
			fresh = true
			break
		}
	}
	if !fresh {
		return h.pieces, h.facts.out
	}
	// On copies: the calls not yet ended at the handoff are left out, and the calls
	// between the launching call and the handoff are added (the launching call's result
	// comes before them for the next handoffs).
	var pieces []string
	var facts distinctFacts
	keep := func(r string) {
		pieces = append(pieces, r)
		facts.add(c.source(r).facts)
	}
	for i, r := range h.pieces {
		if ended(h.ends[i]) {
			keep(r)
		}
	}
	if own >= 0 {
		for k := own + 1; k < si; k++ {
			if r := c.contextResult(steps[k].ToolCall); r != "" && ended(callEnd(&steps[k])) {
				keep(r)
			}
		}
	}
	return pieces, facts.out
}

// callEnd is when the tool call of step st ended: its start plus its latency_ms (none:
// its start); zero when its start is not known.
func callEnd(st *session.AgentStep) time.Time {
	if st.StartedAt.IsZero() || st.ToolCall == nil || st.ToolCall.LatencyMs == nil {
		return st.StartedAt
	}
	return st.StartedAt.Add(time.Duration(*st.ToolCall.LatencyMs * float64(time.Millisecond)))
}

// contextResult is the result a tool call adds to the handoff context: "" for no call, no
// result, or a handoff tool's call.
func (c *evalCtx) contextResult(tc *session.ToolCall) string {
	if tc == nil || tc.Result == "" {
		return ""
	}
	if _, isHandoff := c.args.handoffTarget(tc); isHandoff {
		return ""
	}
	return tc.Result
}

// launchingCall is the index of the tool-call step, before step si, of the tool call that
// launched the handoff in step si (the same span: the assembler records an agent-as-tool
// handoff on its tool's span), -1 when there is none.
func launchingCall(steps []session.AgentStep, si int) int {
	id := steps[si].SpanID
	if id == "" {
		return -1
	}
	for k := si - 1; k >= 0; k-- {
		if steps[k].ToolCall != nil && steps[k].SpanID == id {
			return k
		}
	}
	return -1
}

// handoffCtx is the handoff context of a turn up to step si of interaction ii
// (handoffContext).
type handoffCtx struct {
	t      *session.Turn
	ii, si int
	pieces []string
	// ends are when the call of each piece ended (callEnd; zero for the user message).
	ends  []time.Time
	facts distinctFacts
}

// handoff is the interaction's handoff: the context its handoffs pass on.
type handoff struct{}

var _ interactionEvaluator = handoff{}

func (handoff) evaluate(c *evalCtx, x interactionInput) (*float64, string) {
	return c.handoffScore(x.t, x.ii, x.content)
}
