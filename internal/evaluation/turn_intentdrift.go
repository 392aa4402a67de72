// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

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
	req := map[string]int{} // a request token → its index in reqList
	var reqList []string
	for _, tok := range c.tokens(t.UserMessage) {
		if _, ok := req[tok]; !ok {
			req[tok] = len(reqList)
			reqList = append(reqList, tok)
		}
	}
	if len(req) < minIntentWords {
		return nil, fmt.Sprintf("null: the user message has %d content word(s), fewer than %d to define an intent (or it was not captured)", len(req), minIntentWords)
	}
	// hits marks the request tokens found among the items' tokens (the coverage's
	// numerator); the items seen are few, and searched.
	hits := make([]bool, len(reqList))
	items := 0
	var seen []string
	var anchoredBy string
	var anchoredTokens []string
	var itemTexts, itemLabels []string // for the embedding route (semantic.go)
	var shared []string                // the item's tokens in the request or the conversation; reused until an item anchors
	consider := func(label func() string, s string) {
		if anchoredBy != "" || strings.TrimSpace(s) == "" || slices.Contains(seen, s) {
			return
		}
		seen = append(seen, s)
		items++
		if c.e.cfg.Similarity != nil {
			itemTexts, itemLabels = append(itemTexts, s), append(itemLabels, label())
		}
		shared = shared[:0]
		for _, tok := range c.tokens(s) {
			i, inReq := req[tok]
			if inReq {
				hits[i] = true
			}
			if (inReq || c.inConversation(tok, ti)) && !slices.Contains(shared, tok) {
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
		return ptr(0.0), "0: " + anchoredBy + " shares " + strings.Join(anchoredTokens, ", ") + " with the task (>= " +
			strconv.Itoa(anchorTokens) + " words of the request or the conversation)"
	}
	semantic := ""
	if i, _, why := c.e.semanticAnchor(c.s.ID, t.UserMessage, itemTexts); i >= 0 {
		return ptr(0.0), fmt.Sprintf("0: %s is on task (%s)", itemLabels[i], why)
	} else if why != "" {
		semantic = "; " + why
	}
	var hit []string
	for i, tok := range reqList {
		if hits[i] {
			hit = append(hit, tok)
		}
	}
	cov := float64(len(hit)) / float64(len(req))
	drift := float64(len(req)-len(hit)) / float64(len(req))
	return ptr(drift), fmt.Sprintf("1 − coverage %s (%d/%d request words%s in the actions and answers; none shares %d words with the task%s) = %s",
		num(cov), len(hit), len(req), listSuffix(hit), anchorTokens, semantic, num(drift))
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

// writeMapped writes s with every byte in seps written as a space: the tool name with its
// separators "_", "-" and "." as spaces, or an argument key with its "_" as spaces.
func writeMapped(b *strings.Builder, s, seps string) {
	for {
		i := strings.IndexAny(s, seps)
		if i < 0 {
			b.WriteString(s)
			return
		}
		b.WriteString(s[:i])
		b.WriteByte(' ')
		s = s[i+1:]
	}
}

// toolCallText renders a call for relevance: the tool name with separators as spaces,
// then the argument keys and scalar values, keys sorted.
func toolCallText(tc *session.ToolCall, args map[string]any) string {
	var b strings.Builder
	b.Grow(len(tc.ToolName) + len(tc.Parameters)) // the text is about as long as the call
	writeMapped(&b, tc.ToolName, "_-.")
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			var stack [8]string // most arguments have a few keys
			keys := stack[:0]
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				b.WriteByte(' ')
				writeMapped(&b, k, "_")
				walk(v[k])
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			b.WriteByte(' ')
			b.WriteString(v)
		case float64:
			var buf [32]byte
			b.WriteByte(' ')
			b.Write(strconv.AppendFloat(buf[:0], v, 'f', -1, 64))
		case bool:
			b.WriteByte(' ')
			b.WriteString(strconv.FormatBool(v))
		}
	}
	if args != nil {
		walk(args)
	}
	return b.String()
}

// turnIntentDrift sets the turn's intent_drift.
type turnIntentDrift struct{}

var _ turnEvaluator = turnIntentDrift{}

func (turnIntentDrift) evaluate(c *evalCtx, x turnInput, tr *TurnResult) {
	tr.IntentDrift, tr.Explanations[keyIntentDrift] = c.intentDrift(x.ti)
}
