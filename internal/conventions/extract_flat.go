// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"encoding/json"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Flattened, indexed message attributes: OpenInference llm.input_messages.N.message.* /
// llm.output_messages.N.message.* (docs/decisions/conventions.md) and the legacy Traceloop
// gen_ai.prompt.N.* / gen_ai.completion.N.* (§3). Both reduce to the same fields once the
// optional "message." and "tool_call."/"function." segments are stripped.

// flatAttr is one attribute under an indexed prefix; rest is the key after the prefix.
type flatAttr struct {
	rest string
	v    pcommon.Value
}

type flatField uint8

const (
	flatIgnore flatField = iota
	flatRole
	flatContent
	flatContentPart
	flatFinish
	flatCallID
	flatCallName
	flatCallArgs
)

type flatItem struct {
	idx, j int
	field  flatField
	v      pcommon.Value
}

// maxFlatIndex bounds message and part indexes (a hostile "llm.input_messages.
// 999999999.message.role" must not cost anything).
const maxFlatIndex = 1 << 16

// leadingIndex splits "12.rest" into 12 and "rest".
func leadingIndex(s string) (int, string, bool) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		if n > maxFlatIndex {
			return 0, "", false
		}
		i++
	}
	if i == 0 || i >= len(s) || s[i] != '.' {
		return 0, "", false
	}
	return n, s[i+1:], true
}

// wholeIndex parses s as a bounded decimal index.
func wholeIndex(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= maxFlatIndex
}

// flatClassify maps the key rest after the message index to a field.
func flatClassify(rest string) (flatField, int) {
	rest = strings.TrimPrefix(rest, "message.")
	switch rest {
	case semconv.SuffixRole:
		return flatRole, 0
	case semconv.SuffixContent:
		return flatContent, 0
	case semconv.SuffixFinishReason:
		return flatFinish, 0
	}
	switch {
	case strings.HasPrefix(rest, "content."): // Claude Agent SDK: message.content.<j>
		if j, ok := wholeIndex(rest[len("content."):]); ok {
			return flatContentPart, j
		}
	case strings.HasPrefix(rest, "contents."): // message.contents.<j>.message_content.text
		if j, tail, ok := leadingIndex(rest[len("contents."):]); ok && tail == semconv.SuffixContentText {
			return flatContentPart, j
		}
	case strings.HasPrefix(rest, "tool_calls."):
		j, tail, ok := leadingIndex(rest[len("tool_calls."):])
		if !ok {
			return flatIgnore, 0
		}
		tail = strings.TrimPrefix(tail, "tool_call.")
		tail = strings.TrimPrefix(tail, "function.")
		switch tail {
		case semconv.SuffixID:
			return flatCallID, j
		case semconv.SuffixName:
			return flatCallName, j
		case semconv.SuffixArguments:
			return flatCallArgs, j
		}
	}
	return flatIgnore, 0
}

// flatItems parses and sorts the attributes of one indexed family.
func flatItems(attrs []flatAttr) []flatItem {
	items := make([]flatItem, 0, len(attrs))
	for _, a := range attrs {
		idx, rest, ok := leadingIndex(a.rest)
		if !ok {
			continue
		}
		f, j := flatClassify(rest)
		if f == flatIgnore {
			continue
		}
		items = append(items, flatItem{idx: idx, j: j, field: f, v: a.v})
	}
	sort.SliceStable(items, func(a, b int) bool {
		if items[a].idx != items[b].idx {
			return items[a].idx < items[b].idx
		}
		if items[a].j != items[b].j {
			return items[a].j < items[b].j
		}
		return items[a].field < items[b].field
	})
	return items
}

// flatMessage is one reassembled message.
type flatMessage struct {
	role   string
	text   []string
	finish string
	calls  []session.RequestedToolCall
}

// flatMessages groups sorted items into messages, in index order.
func flatMessages(items []flatItem) []flatMessage {
	var msgs []flatMessage
	for i := 0; i < len(items); {
		idx := items[i].idx
		var m flatMessage
		callAt := -1 // index in m.calls of the call with tool_calls index lastJ
		lastJ := -1
		for ; i < len(items) && items[i].idx == idx; i++ {
			it := &items[i]
			s, _ := valueText(it.v)
			switch it.field {
			case flatRole:
				m.role = msgRole(&jMsg{Role: s})
			case flatContent, flatContentPart:
				if s != "" {
					m.text = append(m.text, s)
				}
			case flatFinish:
				m.finish = strings.ToLower(s)
			case flatCallID, flatCallName, flatCallArgs:
				if it.j != lastJ || callAt < 0 {
					if len(m.calls) >= MaxList {
						continue
					}
					m.calls = append(m.calls, session.RequestedToolCall{})
					callAt, lastJ = len(m.calls)-1, it.j
				}
				c := &m.calls[callAt]
				switch it.field {
				case flatCallID:
					c.ID = s
				case flatCallName:
					c.Name = s
				case flatCallArgs:
					if it.v.Type() == pcommon.ValueTypeStr {
						c.Arguments = s
					} else if b, ok := appendJSON(nil, it.v, 0, 1<<20); ok {
						c.Arguments = string(b)
					}
				}
			}
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// flatInput returns the last user message with text.
func flatInput(attrs []flatAttr, o *msgOut) {
	msgs := flatMessages(flatItems(attrs))
	o.messages += len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].role == semconv.RoleUser && len(msgs[i].text) > 0 {
			o.user, o.hasUser = strings.Join(msgs[i].text, "\n"), true
			return
		}
	}
}

// flatOutput collects assistant text, tool calls and finish reasons of every message.
func flatOutput(attrs []flatAttr, o *msgOut) {
	msgs := flatMessages(flatItems(attrs))
	o.messages += len(msgs)
	for i := range msgs {
		m := &msgs[i]
		if m.role == semconv.RoleAssistant || m.role == "" {
			var texts []string
			for _, t := range m.text {
				if strings.HasPrefix(t, semconv.OpenAIAgentsResponseFunctionRep) {
					if c, ok := parseResponseFunctionToolCall(t); ok {
						o.calls = append(o.calls, c)
						continue
					}
				}
				texts = append(texts, t)
			}
			if len(texts) > 0 { // the final answer is the last assistant message with text
				o.setText(strings.Join(texts, "\n"))
			}
		}
		for _, c := range m.calls {
			if c.Name != "" && len(o.calls) < MaxList {
				o.calls = append(o.calls, c)
			}
		}
		if m.finish != "" && len(o.finish) < MaxList {
			o.finish = append(o.finish, m.finish)
		}
	}
}

// flatFunctions reads Traceloop llm.request.functions.N.{name,description,parameters}.
func flatFunctions(attrs []flatAttr, maxText int, dst []session.ToolDefinition) ([]session.ToolDefinition, int) {
	type fn struct {
		jToolDef
		idx int
	}
	var fns []fn
	for _, a := range attrs {
		idx, rest, ok := leadingIndex(a.rest)
		if !ok {
			continue
		}
		k := 0
		for k < len(fns) && fns[k].idx != idx {
			k++
		}
		if k == len(fns) {
			if len(fns) >= MaxList {
				continue
			}
			fns = append(fns, fn{idx: idx})
		}
		f := &fns[k]
		switch rest {
		case semconv.SuffixName:
			f.Name, _ = valueText(a.v)
		case semconv.SuffixDescription:
			f.Description, _ = valueText(a.v)
		case semconv.SuffixParameters:
			if a.v.Type() == pcommon.ValueTypeStr {
				f.Parameters = json.RawMessage(a.v.Str())
			} else if b, ok := appendJSON(nil, a.v, 0, maxText); ok {
				f.Parameters = b
			}
		}
	}
	sort.Slice(fns, func(a, b int) bool { return fns[a].idx < fns[b].idx })
	problems := 0
	for i := range fns {
		dst = appendToolDef(dst, &fns[i].jToolDef, maxText, &problems)
	}
	return dst, problems
}
