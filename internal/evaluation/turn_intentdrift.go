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
	"github.com/agenteval/agenteval-collector/internal/text"
)

// intentDrift measures how far turn ti's actions and answers wander from the user's
// task (docs/scoring.md §6, docs/scoring.md §5.3). The task is the request R (the distinct
// text.Tokens of the user message) and the conversation so far T (R plus the tokens of
// the earlier turns' user messages, final responses, tool calls and tool results). The
// items are the final response, each interaction's output, each tool call (name,
// argument keys and values) and each handoff payload.
//
//   - When the request names a task (text.Tasks: cancel, refund, translate...) and the
//     turn's tool calls do tasks by their names, none of which serves it, while neither
//     a call's name nor an answer names a serving one, the turn does another task:
//     drift 1 ("Translate my cover letter" → summarize_document), whatever the items
//     share with the request (otherTask).
//   - A tool call that does the task the request asks for on the request's object (a
//     token of the request in its name or arguments) anchors the turn: drift 0 ("Will it
//     rain in Lisbon?" → get_forecast {"city": "Lisbon"}; requestedTaskOnObject).
//   - An item that shares at least anchorTokens distinct tokens with T is anchored in the
//     task: drift 0 (the agents answer about the task even when they do not repeat the
//     user's words, "Is it valid?" → "Yes, R-778 is approved"). When the request brings
//     a new subject (newSubject) and the turn repeats the previous one, saying nothing
//     new (repeatsPrevious), an item anchors only by the request's own tokens: the agents
//     answered the last question again.
//   - Otherwise drift = 1 − coverage, where coverage is the share of R found in the
//     union of the items' tokens.
//
// Null when the message has fewer than minIntentWords content words ("Great, thanks"
// states no task) or when no item has text.
const (
	minIntentWords   = 2
	anchorTokens     = 2
	newSubjectTokens = 3
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
	// repeat: the turn answers the previous turn's question again, on a new subject;
	// its items then anchor only by the request's own tokens.
	repeat := c.newSubject(reqList, ti) && c.repeatsPrevious(t, ti)
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
			if (inReq || !repeat && c.inConversation(tok, ti)) && !slices.Contains(shared, tok) {
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
	if want := requestTasks(reqList); want != 0 {
		if done, call, ok := c.otherTask(t, want); ok {
			return ptr(1.0), fmt.Sprintf("1: another task: the request's task is %s; %s does %s, and no call or answer does %s",
				want, call, done, want)
		}
		if anchoredBy == "" {
			if call, object := c.requestedTaskOnObject(t, req, want); call != "" {
				return ptr(0.0), fmt.Sprintf("0: %s does the requested %s on the request's %s", call, want, object)
			}
		}
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
	if repeat {
		semantic += "; the turn repeats the previous one's answer and calls on a new subject"
	}
	return ptr(drift), fmt.Sprintf("1 − coverage %s (%d/%d request words%s in the actions and answers; none shares %d words with the task%s) = %s",
		num(cov), len(hit), len(req), listSuffix(hit), anchorTokens, semantic, num(drift))
}

// otherTask reports whether turn t does another task than want (the request's): its
// tool calls do tasks by their names (text.TasksOfName), none of which serves want, and
// no call name, final response or output names a serving one. Only the names of the
// calls count as what the agents did: an answer mentions side effects ("the fare is
// locked", "track the return") and a translation or a summary repeats the words of its
// text. Only tasks of the request's kind count (requestTasks): an action is not vetoed
// by a lookup made on the way ("Book the cheapest flight" → get_fares), a question by
// an action its context calls for. done is the calls' tasks of that kind and call the
// first call that names one.
func (c *evalCtx) otherTask(t *session.Turn, want text.Tasks) (done text.Tasks, call string, ok bool) {
	kind := ^text.Lookups // the actions
	if want&text.Lookups != 0 {
		kind = text.Lookups
	}
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		for si := range in.Steps {
			tc := in.Steps[si].ToolCall
			if tc == nil {
				continue
			}
			tasks := text.TasksOfName(tc.ToolName)
			if tasks.Serves(want) {
				return 0, "", false
			}
			tasks &= kind
			if tasks != 0 && done == 0 {
				call = in.AgentID + " call " + tc.ToolName
			}
			done |= tasks
		}
	}
	if done == 0 || text.TasksOf(c.tokens(t.FinalResponse)).Serves(want) {
		return 0, "", false
	}
	for ii := range t.Interactions {
		if text.TasksOf(c.tokens(t.Interactions[ii].Output)).Serves(want) {
			return 0, "", false
		}
	}
	return done, call, true
}

// requestTasks returns the tasks the request (its tokens) asks for: its actions when
// it names one, else its lookups (text.Lookups). Beside an action, a lookup word names
// the action's object or its reason ("Summarize the reviews of Hotel Astoria", "My
// flight was delayed, rebook me", "The fee was charged twice, refund it").
func requestTasks(reqList []string) text.Tasks {
	want := text.TasksOf(reqList)
	if want&^text.Lookups != 0 {
		want &^= text.Lookups
	}
	return want
}

// requestedTaskOnObject returns the first tool call of turn t that does the task the
// request asks for (want) on the request's object: its name does the tasks of want and
// no other (text.TasksOfName, servesOnly), and its name or arguments hold a token of the
// request (req) that names no task and no time (text.TimeToken). object is that token.
// The task and the object are the two things the call shares with the request, as
// anchorTokens words are: "Will it rain in Lisbon on Saturday?" → get_forecast {"city": "Lisbon"}.
// The task alone is not enough ("Cancel my dentist appointment" →
// cancel_subscription {"plan": "gym"}), nor a call that also does another task
// ("Delete the Lisbon photos" → cancel_booking {"city": "Lisbon"}).
func (c *evalCtx) requestedTaskOnObject(t *session.Turn, req map[string]int, want text.Tasks) (call, object string) {
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		for si := range in.Steps {
			tc := in.Steps[si].ToolCall
			if tc == nil || !servesOnly(text.TasksOfName(tc.ToolName), want) {
				continue
			}
			for _, tok := range c.tokens(c.callText(tc)) {
				if _, ok := req[tok]; ok && text.TaskOf(tok) == 0 && !text.TimeToken(tok) {
					return in.AgentID + " call " + tc.ToolName, tok
				}
			}
		}
	}
	return "", ""
}

// servesOnly reports whether tasks is not empty, each of its tasks serves want and it
// serves each task of want: "What does a hotel in Lisbon cost?" (price and lodging) is
// not answered by get_flight_price {"to": "Lisbon"}.
func servesOnly(tasks, want text.Tasks) bool {
	if tasks == 0 {
		return false
	}
	for b := text.Tasks(1); b != 0; b <<= 1 {
		if tasks&b != 0 && !b.Serves(want) || want&b != 0 && !tasks.Serves(b) {
			return false
		}
	}
	return true
}

// newSubject reports whether the request (its distinct tokens reqList) of turn ti brings
// a new subject: at least newSubjectTokens of its tokens are not in the conversation
// before it. False for a first turn.
func (c *evalCtx) newSubject(reqList []string, ti int) bool {
	if c.prev == nil && ti == 0 {
		return false
	}
	fresh := 0
	for _, tok := range reqList {
		if !c.inConversation(tok, ti) {
			fresh++
		}
	}
	return fresh >= newSubjectTokens
}

// repeatsPrevious reports whether turn t (index ti of the view) repeats the previous
// turn and says nothing new: its final response has at least repeatMinTokens distinct
// tokens, a Jaccard similarity of at least repeatJaccard with the previous final
// response's and no token the conversation does not have; and each of its tool calls is
// of a tool the previous turn called, with no new token either (a second lookup with other
// arguments, "AA1290" after "UA88", is new). The previous turn is the previous record's
// result when a turn is evaluated alone (c.prev, the nearest earlier turn the processor
// holds), else turn ti−1 of the view. Only that turn is read, so the cost does not grow
// with the session.
func (c *evalCtx) repeatsPrevious(t *session.Turn, ti int) bool {
	var prevFinal string
	var calledBefore func(tool string) bool
	switch {
	case c.prev != nil:
		prevFinal = c.prev.FinalResponse
		calledBefore = func(tool string) bool {
			for _, ir := range c.prev.Interactions {
				for _, tc := range ir.ToolCalls {
					if tc.ToolName == tool {
						return true
					}
				}
			}
			return false
		}
	case ti > 0:
		prev := &c.s.Turns[ti-1]
		prevFinal = prev.FinalResponse
		calledBefore = func(tool string) bool {
			for ii := range prev.Interactions {
				for si := range prev.Interactions[ii].Steps {
					if tc := prev.Interactions[ii].Steps[si].ToolCall; tc != nil && tc.ToolName == tool {
						return true
					}
				}
			}
			return false
		}
	default:
		return false
	}
	says := func(toks []string) bool { // something the conversation does not have
		for _, tok := range toks {
			if !c.inConversation(tok, ti) {
				return true
			}
		}
		return false
	}
	// The cheap checks first: most turns say something new.
	final := c.tokens(t.FinalResponse)
	if says(final) {
		return false
	}
	for ii := range t.Interactions {
		for si := range t.Interactions[ii].Steps {
			tc := t.Interactions[ii].Steps[si].ToolCall
			if tc != nil && (!calledBefore(tc.ToolName) || says(c.tokens(c.callText(tc)))) {
				return false
			}
		}
	}
	d := distinctSorted(final)
	return len(d) >= repeatMinTokens && jaccardSorted(d, distinctSorted(c.tokens(prevFinal))) >= repeatJaccard
}

const (
	repeatMinTokens = 3
	repeatJaccard   = 0.8
)

// distinctSorted returns the distinct strings of toks, sorted, in a new slice.
func distinctSorted(toks []string) []string {
	d := slices.Clone(toks)
	slices.Sort(d)
	return slices.Compact(d)
}

// jaccardSorted is |A ∩ B| / |A ∪ B| of two sorted sets of distinct strings (0 when both
// are empty), by one merge: linear in their lengths.
func jaccardSorted(a, b []string) float64 {
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
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
