// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// Explanation keys of a TurnResult.
const (
	keyDetection   = "detection"
	keyIntentDrift = "intent_drift"
)

// turn evaluates turn ti: its interactions, the detection (docs/scoring.md §5), the
// bad-turn rule on the final responder and the turn's intent drift.
func (c *evalCtx) turn(ti int, final bool) TurnResult {
	t := &c.s.Turns[ti]
	tr := TurnResult{
		SessionID:    c.s.ID,
		TurnIndex:    ti,
		TraceID:      t.TraceID,
		RootSpanID:   t.RootSpanID,
		Final:        final,
		LatencyMs:    t.LatencyMs,
		Usage:        t.Usage,
		Partial:      t.Partial,
		Interactions: make([]InteractionResult, 0, len(t.Interactions)),
		Explanations: map[string]string{},
	}
	tr.UserMessage, tr.FinalResponse = t.UserMessage, t.FinalResponse
	for ii := range t.Interactions {
		tr.Interactions = append(tr.Interactions, c.interaction(ti, ii))
	}
	markRecovered(tr.Interactions)
	d := c.detect(ti, final, tr.Interactions)
	tr.IsBad, tr.DetectionType, tr.Confidence, tr.Reason = d.bad, d.typ, d.conf, d.reason
	tr.Explanations[keyDetection] = d.expl
	// The bad-turn rule judges the final response: a verdict on a tool call's
	// parameters is counted in tool_use and the conversation score, not again here.
	if d.bad && !d.fromParams {
		if fr := finalResponder(t); fr >= 0 {
			ir := &tr.Interactions[fr]
			ir.ResponseQuality = ptr(0)
			ir.Explanations[keyResponseQuality] = "0: final responder of a bad turn (" + d.typ + ")"
			c.score(ir)
		}
	}
	tr.IntentDrift, tr.Explanations[keyIntentDrift] = c.intentDrift(ti)
	if !turnHasContent(t) {
		tr.NotEvaluable = []string{ReasonContentNotCaptured}
	}
	return tr
}

type detection struct {
	bad    bool
	typ    string
	conf   float64
	reason string
	expl   string
	// fromParams: the verdict is a parameter hallucination of a tool call.
	fromParams bool
}

// markRecovered sets RecoveredBy on each call of the turn with a MEDIUM or HIGH issue
// when a later call of the turn (any agent) to the same tool ended ok without any MEDIUM
// or HIGH issue: the fault was rejected and retried correctly (docs/scoring.md §5.2).
func markRecovered(irs []InteractionResult) {
	type ref struct{ i, j int }
	var calls []ref
	for i := range irs {
		for j := range irs[i].ToolCalls {
			calls = append(calls, ref{i, j})
		}
	}
	serious := func(tc *ToolCallResult) bool {
		for _, is := range tc.Issues {
			if is.Severity == SeverityHigh || is.Severity == SeverityMedium {
				return true
			}
		}
		return false
	}
	for k, r := range calls {
		tc := &irs[r.i].ToolCalls[r.j]
		if !serious(tc) {
			continue
		}
		for _, r2 := range calls[k+1:] {
			later := &irs[r2.i].ToolCalls[r2.j]
			if later.ToolName == tc.ToolName && later.Status == session.StatusOK && !serious(later) {
				tc.RecoveredBy = cmp.Or(later.SpanID, later.CallID, later.ToolName)
				break
			}
		}
	}
}

// detect applies docs/scoring.md §5 with the priority RDM > CCM > hallucination > none.
// RDM and CCM need the follow-up (final and a next turn); hallucination always runs.
func (c *evalCtx) detect(ti int, final bool, irs []InteractionResult) detection {
	t := &c.s.Turns[ti]
	var expl []string
	var rdm, ccm, hall *detection
	followUpConf := -1.0 // max signal strength of the follow-up checks, when they ran

	switch {
	case !final:
		expl = append(expl, "rdm/ccm: pending (follow-up not known yet)")
	case ti+1 >= len(c.s.Turns):
		expl = append(expl, "rdm/ccm: not applicable (last turn, no follow-up)")
	case strings.TrimSpace(c.s.Turns[ti+1].UserMessage) == "":
		expl = append(expl, "rdm/ccm: not checked (follow-up user message not captured)")
	default:
		fd := c.e.DetectFollowUp(t.UserMessage, t.FinalResponse, c.s.Turns[ti+1].UserMessage)
		expl = append(expl, fd.Checks...)
		followUpConf = fd.Signal
		switch fd.Type {
		case DetectionRDM:
			rdm = &detection{bad: true, typ: DetectionRDM, conf: fd.Confidence, reason: fd.Reason}
		case DetectionCCM:
			ccm = &detection{bad: true, typ: DetectionCCM, conf: fd.Confidence, reason: fd.Reason}
		}
	}

	// Hallucination: ungrounded specifics in the final response, or a hallucinated
	// tool parameter in the turn.
	var params, recovered []string
	for i := range irs {
		for j := range irs[i].ToolCalls {
			for _, is := range irs[i].ToolCalls[j].Issues {
				if is.Issue != IssueParameterHallucination {
					continue
				}
				if irs[i].ToolCalls[j].RecoveredBy != "" {
					recovered = append(recovered, is.AgentID+"→"+is.ToolName+"."+is.Parameter)
				} else {
					params = append(params, is.AgentID+"→"+is.ToolName+"."+is.Parameter)
				}
			}
		}
	}
	if len(recovered) > 0 {
		expl = append(expl, "hallucination: parameter hallucination ("+strings.Join(recovered, ", ")+") recovered by a later valid call; counted in tool_use only")
	}
	var noAnswer *detection
	if strings.TrimSpace(t.FinalResponse) == "" && turnHasContent(t) {
		var why []string
		if t.Status == session.StatusError {
			why = append(why, "the turn ended with error status")
		}
		for ii := range t.Interactions {
			if t.Interactions[ii].Status == session.StatusError {
				why = append(why, t.Interactions[ii].AgentID+" ended with error status")
				break
			}
		}
		if t.Partial {
			why = append(why, "the turn was cut short")
		}
		if len(why) > 0 {
			noAnswer = &detection{bad: true, typ: DetectionNoAnswer, conf: 1,
				reason: "no final response: " + strings.Join(why, ", ")}
			expl = append(expl, "no_answer: empty final response after an error ("+strings.Join(why, ", ")+")")
		}
	}
	var ungrounded []text.Fact
	final_ := strings.TrimSpace(t.FinalResponse)
	if final_ != "" {
		ungrounded = c.ungrounded(ti, t.FinalResponse)
	}
	switch {
	case len(params) > 0:
		hall = &detection{bad: true, typ: DetectionHallucination, conf: 1, fromParams: true,
			reason: "a tool call passed hallucinated parameter(s): " + strings.Join(params, ", ")}
		expl = append(expl, "hallucination: parameter hallucination ("+strings.Join(params, ", ")+"), confidence 1")
		if len(ungrounded) > 0 {
			hall.reason += "; ungrounded specifics in the final response: " + factList(ungrounded)
		}
	case len(ungrounded) > 0 && !weakEvidence(ungrounded):
		stated := len(c.salient(t.FinalResponse))
		if stated < len(ungrounded) {
			stated = len(ungrounded)
		}
		conf := 0.5 + 0.5*float64(len(ungrounded))/float64(stated)
		hall = &detection{bad: true, typ: DetectionHallucination, conf: conf,
			reason: "the final response states specifics found in no source: " + factList(ungrounded)}
		expl = append(expl, fmt.Sprintf("hallucination: %d of %d stated specific(s) ungrounded (%s), confidence 0.5 + 0.5×%d/%d = %s",
			len(ungrounded), stated, factList(ungrounded), len(ungrounded), stated, num(conf)))
	case len(ungrounded) > 0:
		expl = append(expl, "hallucination: only one ungrounded proper name ("+factList(ungrounded)+"), not evidence enough; no parameter hallucination")
	case final_ == "":
		expl = append(expl, "hallucination: final response empty or not captured; no parameter hallucination")
	default:
		expl = append(expl, "hallucination: every stated specific is grounded; no parameter hallucination")
	}

	d := chooseDetection(rdm, ccm, noAnswer, hall, followUpConf)
	expl = append(expl, "→ "+d.typ+", confidence "+num(d.conf))
	d.expl = strings.Join(expl, "; ")
	return d
}

// chooseDetection applies the verdict priority RDM > CCM > no_answer > hallucination >
// none (docs/scoring.md §5.2). followUpConf is the strongest follow-up signal when the
// follow-up checks ran (the confidence of none is 1 − it), negative when they did not.
// Both the whole-session path (detect) and the turn-by-turn path (finalize) use it.
func chooseDetection(rdm, ccm, noAnswer, hall *detection, followUpConf float64) detection {
	for _, d := range []*detection{rdm, ccm, noAnswer, hall} {
		if d != nil {
			return *d
		}
	}
	d := detection{typ: DetectionNone}
	if followUpConf >= 0 {
		d.conf = clamp01(1 - followUpConf)
		d.reason = "the follow-up neither corrects nor re-asks, and nothing is ungrounded"
	} else {
		d.reason = "no follow-up to judge by, and nothing is ungrounded"
	}
	return d
}

// weakEvidence reports whether the ungrounded facts are a single proper name and nothing
// else. A capitalised word absent from the sources is often a paraphrase ("Amazon" for
// AMZN, "Python" from the model's knowledge); ids, numbers, amounts, dates, emails and
// URLs are not, so one of those, or two names, is needed to call a hallucination.
func weakEvidence(fs []text.Fact) bool {
	return len(fs) == 1 && fs[0].Kind == text.KindName
}

func factList(fs []text.Fact) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Kind + " " + f.Value
	}
	return strings.Join(parts, ", ")
}

// ungrounded returns text.Ungrounded(final, sources of turns 0..ti). Grounding in more
// sources can only find more facts, so it widens the sources in three stages and stops
// as soon as nothing is left ungrounded: the user message with the final responder's
// input and tool results, then all of the turn's sources, then those of turns 0..ti.
// The result is the same as the last stage's; the common case costs a few texts.
func (c *evalCtx) ungrounded(ti int, final string) []text.Fact {
	t := &c.s.Turns[ti]
	stated := c.salient(final)
	if fr := finalResponder(t); fr >= 0 {
		in := &t.Interactions[fr]
		first := []string{t.UserMessage, in.Input}
		for si := range in.Steps {
			if tc := in.Steps[si].ToolCall; tc != nil {
				first = append(first, tc.Result)
			}
		}
		if len(text.UngroundedFacts(stated, first...)) == 0 {
			return nil
		}
	}
	out := text.UngroundedFacts(stated, c.turnSources(ti)...)
	if len(out) == 0 || ti == 0 {
		return out
	}
	all := make([]string, 0, 8*(ti+1))
	for k := 0; k <= ti; k++ {
		all = append(all, c.turnSources(k)...)
	}
	return text.UngroundedFacts(stated, all...)
}

// turnSources returns the texts a final response may draw on from turn ti: the user
// message, the agents' inputs (instructions), the tool results and errors and the
// handoff payloads.
func (c *evalCtx) turnSources(ti int) []string {
	if c.sources == nil {
		c.sources = make([][]string, len(c.s.Turns))
	}
	if c.sources[ti] != nil {
		return c.sources[ti]
	}
	t := &c.s.Turns[ti]
	src := []string{}
	seen := map[string]bool{}
	add := func(s string) {
		// An agent's input is often the previous handoff payload: index each text once.
		if strings.TrimSpace(s) != "" && !seen[s] {
			seen[s] = true
			src = append(src, s)
		}
	}
	add(t.UserMessage)
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		add(in.Input)
		for si := range in.Steps {
			st := &in.Steps[si]
			if st.ToolCall != nil {
				add(st.ToolCall.Result)
				add(st.ToolCall.Error)
			}
			if st.Handoff != nil {
				add(st.Handoff.Payload)
			}
		}
	}
	c.sources[ti] = src
	return src
}

// intentDrift measures how far turn ti's actions and answers wander from the user's
// task (docs/scoring.md §6, docs/scoring.md §5.3). The task is the request R (the distinct
// text.Tokens of the user message) and the conversation so far T (R plus the tokens of
// the earlier turns' user messages, final responses, tool calls and tool results). The
// items are the final response, each interaction's output, each tool call (name,
// argument keys and values) and each handoff payload.
//
//   - An item that shares at least anchorTokens distinct tokens with T is anchored in the
//     task: drift 0 (the agents answer about the task even when they do not repeat the
//     user's words, "Is it valid?" → "Yes, R-778 is approved").
//   - Otherwise drift = 1 − coverage, where coverage is the share of R found in the
//     union of the items' tokens.
//
// Null when the message has fewer than minIntentWords content words ("Great, thanks"
// states no task) or when no item has text.
const (
	minIntentWords = 2
	anchorTokens   = 2
)

func (c *evalCtx) intentDrift(ti int) (*float64, string) {
	t := &c.s.Turns[ti]
	req := map[string]bool{}
	var reqList []string
	for _, tok := range c.tokens(t.UserMessage) {
		if !req[tok] {
			req[tok] = true
			reqList = append(reqList, tok)
		}
	}
	if len(req) < minIntentWords {
		return nil, fmt.Sprintf("null: the user message has %d content word(s), fewer than %d to define an intent (or it was not captured)", len(req), minIntentWords)
	}
	inTask := func(tok string) bool { return req[tok] || c.inConversation(tok, ti) }
	union := map[string]bool{}
	items := 0
	seen := map[string]bool{}
	var anchoredBy string
	var anchoredTokens []string
	consider := func(label func() string, s string) {
		if anchoredBy != "" || strings.TrimSpace(s) == "" || seen[s] {
			return
		}
		seen[s] = true
		items++
		var shared []string
		for _, tok := range c.tokens(s) {
			union[tok] = true
			if inTask(tok) && !slices.Contains(shared, tok) {
				shared = append(shared, tok)
			}
		}
		if len(shared) >= anchorTokens {
			anchoredBy, anchoredTokens = label(), shared
		}
	}
	consider(func() string { return "final response" }, t.FinalResponse)
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		consider(func() string { return in.AgentID + " output" }, in.Output)
		for si := range in.Steps {
			st := &in.Steps[si]
			if st.ToolCall != nil {
				consider(func() string { return in.AgentID + " call " + st.ToolCall.ToolName }, c.callText(st.ToolCall))
			}
			if st.Handoff != nil {
				consider(func() string { return in.AgentID + " handoff to " + st.Handoff.ToAgent }, st.Handoff.Payload)
			}
		}
	}
	if items == 0 {
		return nil, "null: no captured action or answer"
	}
	if anchoredBy != "" {
		return ptr(0.0), fmt.Sprintf("0: %s shares %s with the task (>= %d words of the request or the conversation)",
			anchoredBy, strings.Join(anchoredTokens, ", "), anchorTokens)
	}
	var hit []string
	for _, tok := range reqList {
		if union[tok] {
			hit = append(hit, tok)
		}
	}
	cov := float64(len(hit)) / float64(len(req))
	drift := float64(len(req)-len(hit)) / float64(len(req))
	return ptr(drift), fmt.Sprintf("1 − coverage %s (%d/%d request words%s in the actions and answers; none shares %d words with the task) = %s",
		num(cov), len(hit), len(req), listSuffix(hit), anchorTokens, num(drift))
}

func listSuffix(ts []string) string {
	if len(ts) == 0 {
		return ""
	}
	return ": " + strings.Join(ts, ", ")
}

// inConversation reports whether tok occurs in turns 0..ti−1 (conversationTexts), or
// in the conversation before this view (priorConversation). The first turn of each token
// is memoised per session and extended turn by turn.
func (c *evalCtx) inConversation(tok string, ti int) bool {
	if c.priorConversation[tok] {
		return true
	}
	if c.convFirst == nil {
		c.convFirst = map[string]int{}
	}
	for ; c.convTurns < ti; c.convTurns++ {
		k := c.convTurns
		c.conversationTexts(k, func(s string) {
			for _, tok := range c.tokens(s) {
				if _, ok := c.convFirst[tok]; !ok {
					c.convFirst[tok] = k
				}
			}
		})
	}
	k, ok := c.convFirst[tok]
	return ok && k < ti
}

// conversationTexts calls add with the texts of turn k that later turns' intent is
// judged against: the user message, the final response, each tool call (rendered as for
// intentDrift) and its result.
func (c *evalCtx) conversationTexts(k int, add func(string)) {
	t := &c.s.Turns[k]
	add(t.UserMessage)
	add(t.FinalResponse)
	for ii := range t.Interactions {
		for si := range t.Interactions[ii].Steps {
			if tc := t.Interactions[ii].Steps[si].ToolCall; tc != nil {
				add(c.callText(tc))
				add(tc.Result)
			}
		}
	}
}

var nameSeparators = strings.NewReplacer("_", " ", "-", " ", ".", " ")

// toolCallText renders a call for relevance: the tool name with separators as spaces,
// then the argument keys and scalar values, keys sorted.
func toolCallText(tc *session.ToolCall, args map[string]any) string {
	var b strings.Builder
	b.WriteString(nameSeparators.Replace(tc.ToolName))
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				b.WriteString(" ")
				b.WriteString(strings.ReplaceAll(k, "_", " "))
				walk(v[k])
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			b.WriteString(" ")
			b.WriteString(v)
		case float64:
			b.WriteString(" ")
			b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			fmt.Fprintf(&b, " %t", v)
		}
	}
	if args != nil {
		walk(args)
	}
	return b.String()
}
