// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// ParseArguments turns tool-call arguments text (SpanRecord.ToolArguments,
// RequestedToolCall.Arguments) into the JSON value kept in ToolCall.Parameters
// (docs/architecture.md §3, §5.1):
//   - empty or blank text returns nil (no arguments captured);
//   - valid JSON is returned compacted; a JSON string whose content is itself a JSON
//     object (double-encoded arguments) is unwrapped once;
//   - a Python literal (a dict or list repr with single quotes, True/False/None, as some
//     instrumentations write) is converted to the equivalent JSON;
//   - anything else returns a JSON string holding the raw text, so the evaluator reports
//     MALFORMED_ARGUMENTS for it.
//
// isObject is true when the result is a JSON object, the only well-formed shape of tool
// arguments. The result is always valid JSON with valid UTF-8. Arguments cut at
// max_text_bytes (ArgumentsTruncated) are not valid JSON: callers should report them as
// truncated rather than malformed.
func ParseArguments(raw string) (params json.RawMessage, isObject bool) {
	t := strings.TrimSpace(raw)
	if t == "" {
		return nil, false
	}
	if !utf8.ValidString(t) {
		t = strings.ToValidUTF8(t, "\uFFFD")
	}
	b := unsafeBytes(t)
	if json.Valid(b) {
		if t[0] == '"' {
			var inner string
			if json.Unmarshal(b, &inner) == nil {
				in := strings.TrimSpace(inner)
				if in != "" && in[0] == '{' && json.Valid(unsafeBytes(in)) {
					return compactJSON(in), true
				}
			}
		}
		return compactJSON(t), t[0] == '{'
	}
	if t[0] == '{' || t[0] == '[' {
		if js, ok := pyLiteralToJSON(t); ok {
			return js, js[0] == '{'
		}
	}
	return appendJSONString(make([]byte, 0, len(t)+2), t), false
}

// compactJSON returns valid JSON text s without insignificant whitespace.
func compactJSON(s string) json.RawMessage {
	var buf bytes.Buffer
	buf.Grow(len(s))
	if err := json.Compact(&buf, unsafeBytes(s)); err != nil {
		return json.RawMessage(s)
	}
	return buf.Bytes()
}

// unwrapArgsKwargs reads the Traceloop entity input form {"args": [...], "kwargs": {...}}
// (docs/decisions/conventions.md) and returns the named arguments as JSON text:
//   - kwargs when there are no positional args;
//   - the single positional argument when it is an object and kwargs is empty;
//   - kwargs otherwise (positional arguments cannot be named; lossy is then true).
//
// ok is false when text is not of that form.
func unwrapArgsKwargs(text string) (args string, lossy, ok bool) {
	b := unsafeBytes(strings.TrimSpace(text))
	if firstByte(b) != '{' {
		return "", false, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || len(m) == 0 {
		return "", false, false
	}
	for k := range m {
		if k != "args" && k != "kwargs" {
			return "", false, false
		}
	}
	var pos []json.RawMessage
	if raw, has := m["args"]; has && string(raw) != "null" {
		if json.Unmarshal(raw, &pos) != nil {
			return "", false, false
		}
	}
	kw := bytes.TrimSpace(m["kwargs"])
	kwEmpty := len(kw) == 0 || string(kw) == "null" || string(kw) == "{}"
	switch {
	case len(pos) == 0 && kwEmpty:
		return "{}", false, true
	case len(pos) == 0:
		return string(kw), false, true
	case len(pos) == 1 && kwEmpty && firstByte(pos[0]) == '{':
		return string(bytes.TrimSpace(pos[0])), false, true
	case !kwEmpty:
		return string(kw), true, true
	}
	return "", true, false
}

// HandoffToolTarget reports whether a tool is a handoff or delegation tool by its name
// (docs/decisions/conventions.md and §5.1 Handoff (d)), and returns the target agent, taken from
// the arguments (agent_name, coworker, subagent_type) or from the name suffix
// (transfer_to_<agent>), and the transfer mode ("pass_control" or "return_to_caller").
// Names match case-insensitively, except Claude's "Agent" tool, which needs its
// subagent_type argument to count.
// The result is inferred, never explicit. target is "" when the tool is a handoff tool
// but the target is not captured (arguments off).
func HandoffToolTarget(toolName, arguments string) (target, mode string, ok bool) {
	name := strings.ToLower(toolName)
	switch {
	case name == semconv.ADKTransferTool || name == semconv.HandoffToolStrandsSwarm:
		t := cmp.Or(argString(arguments, semconv.HandoffArgAgentName), argString(arguments, semconv.HandoffArgAgentNameCamel))
		return t, semconv.TransferModePassControl, true
	case toolName == semconv.VoltDelegateTool:
		// VoltAgent's supervisor tool: the sub-agents are named in targetAgents; the
		// supervisor gets their answers back.
		return argFirstString(arguments, semconv.VoltDelegateTargets), semconv.TransferModeReturn, true
	case strings.EqualFold(toolName, semconv.HandoffToolCrewAIDelegate) || strings.EqualFold(toolName, semconv.HandoffToolCrewAIAsk):
		return argString(arguments, semconv.HandoffArgCoworker), semconv.TransferModeReturn, true
	case toolName == semconv.HandoffToolClaudeAgent:
		t := argString(arguments, semconv.HandoffArgSubagentType)
		if t == "" {
			return "", "", false // a tool merely named "Agent": not evidence enough
		}
		return t, semconv.TransferModeReturn, true
	}
	for _, p := range []string{semconv.HandoffToolTransferBackPrefix, semconv.HandoffToolTransferToPrefix, semconv.HandoffToolHandoffToPrefix} {
		if len(toolName) > len(p) && strings.EqualFold(toolName[:len(p)], p) {
			return toolName[len(p):], semconv.TransferModePassControl, true
		}
	}
	return "", "", false
}

// SubagentContent returns the input and the output of a sub-agent whose own spans record
// neither, read from the tool call that launched it. Only the Claude Agent SDK's "Agent"
// tool is read (semconv.HandoffToolClaudeAgent, case-sensitive as in HandoffToolTarget):
//
//   - input is the "prompt" argument, the task the calling agent handed over;
//   - output is the text of the result's "content" parts, the sub-agent's answer: the
//     result is a JSON wrapper {status, prompt, agentId, content: [{type: "text",
//     text}, ...], resolvedModel, totalTokens, ...} whose other fields (the prompt
//     again, ids, counters) are never the output. Text parts are joined by "\n", parts
//     of another type (images, tool calls) are skipped.
//
// A result that is not JSON (plain text) or is a JSON string is the output as it is. Any
// other result gives "": a JSON value that is not the wrapper, malformed or truncated
// JSON, a wrapper with no text part (docs/decisions/conventions.md, "Claude sub-agent
// content"). Both are "" for another tool, and input is "" when the arguments have no
// string prompt. Nothing is an error: a missing answer leaves the output empty.
func SubagentContent(toolName, arguments, result string) (input, output string) {
	if toolName != semconv.HandoffToolClaudeAgent {
		return "", ""
	}
	input = argString(arguments, semconv.HandoffArgPrompt)
	raw := []byte(strings.TrimSpace(result))
	switch firstByte(raw) {
	case 0, '[':
		return input, ""
	case '"':
		s, _ := rawString(raw)
		return input, s
	case '{':
		var w struct {
			Content rawJSON `json:"content"`
		}
		if unmarshal(raw, &w) != nil {
			return input, ""
		}
		return input, strings.TrimSpace(contentText(w.Content, nil))
	}
	if string(raw) == "null" {
		return input, ""
	}
	return input, string(raw)
}

// argString returns the string value of key in a JSON (or Python-literal) arguments
// object, or "".
func argString(arguments, key string) string {
	params, isObj := ParseArguments(arguments)
	if !isObj {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return ""
	}
	s, _ := rawString(m[key])
	return strings.TrimSpace(s)
}

// argFirstString returns the first string of the array value of key in a JSON
// arguments object, or "".
func argFirstString(arguments, key string) string {
	params, isObj := ParseArguments(arguments)
	if !isObj {
		return ""
	}
	var m map[string]json.RawMessage
	var list []json.RawMessage
	if json.Unmarshal(params, &m) != nil || json.Unmarshal(m[key], &list) != nil {
		return ""
	}
	for _, v := range list {
		if s, ok := rawString(v); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// parseResponseFunctionToolCall reads the python repr that the python-contrib
// openai-agents instrumentation writes as a text part:
// ResponseFunctionToolCall(arguments='{"a":42}', call_id='call_1', name='multiply', ...).
func parseResponseFunctionToolCall(s string) (session.RequestedToolCall, bool) {
	rest := strings.TrimPrefix(s, semconv.OpenAIAgentsResponseFunctionRep)
	var call session.RequestedToolCall
	var itemID string
	for rest != "" {
		rest = strings.TrimLeft(rest, " ,\n\t")
		if rest == "" || rest[0] == ')' {
			break
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return session.RequestedToolCall{}, false
		}
		key := strings.TrimSpace(rest[:eq])
		rest = rest[eq+1:]
		var val string
		if rest != "" && (rest[0] == '\'' || rest[0] == '"') {
			v, n, ok := pyString(rest)
			if !ok {
				return session.RequestedToolCall{}, false
			}
			val, rest = v, rest[n:]
		} else {
			n := pyBareEnd(rest)
			val, rest = strings.TrimSpace(rest[:n]), rest[n:]
		}
		switch key {
		case "arguments":
			call.Arguments = val
		case "call_id":
			call.ID = val
		case "name":
			call.Name = val
		case "id":
			itemID = val
		}
	}
	if call.ID == "" {
		call.ID = itemID
	}
	return call, call.Name != ""
}

// pyBareEnd returns the length of an unquoted python value (None, 3, Foo(a=1)) up to the
// next top-level ',' or ')'.
func pyBareEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		case '\'', '"':
			if _, n, ok := pyString(s[i:]); ok {
				i += n - 1
			}
		}
	}
	return len(s)
}

// pyString decodes a python string literal at the start of s ('...' or "...") and
// returns its value and length.
func pyString(s string) (string, int, bool) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", 0, false
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+n >= len(s) {
					return "", 0, false
				}
				r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
				if err != nil {
					return "", 0, false
				}
				b.WriteRune(rune(r))
				i += n
			default: // \\ \' \" and unknown escapes keep the character
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// pyLiteralToJSON converts a Python literal (dict, list, tuple, str, int, float, True,
// False, None) to JSON. ok is false for anything else.
func pyLiteralToJSON(s string) (json.RawMessage, bool) {
	p := pyParser{s: s}
	out, ok := p.value(make([]byte, 0, len(s)+8), 0)
	if !ok {
		return nil, false
	}
	p.ws()
	if p.i != len(p.s) || !json.Valid(out) {
		return nil, false
	}
	return out, true
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) value(out []byte, depth int) ([]byte, bool) {
	if depth > maxDepth {
		return out, false
	}
	p.ws()
	if p.i >= len(p.s) {
		return out, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.container(out, depth, '}', true)
	case c == '[':
		return p.container(out, depth, ']', false)
	case c == '(':
		return p.container(out, depth, ')', false)
	case c == '\'' || c == '"':
		v, n, ok := pyString(p.s[p.i:])
		if !ok {
			return out, false
		}
		p.i += n
		return appendJSONString(out, v), true
	default:
		j := p.i
		for j < len(p.s) && strings.IndexByte(",:]})} \t\r\n", p.s[j]) < 0 {
			j++
		}
		tok := p.s[p.i:j]
		p.i = j
		switch tok {
		case "True":
			return append(out, "true"...), true
		case "False":
			return append(out, "false"...), true
		case "None":
			return append(out, "null"...), true
		}
		if n, err := strconv.ParseInt(tok, 10, 64); err == nil {
			return strconv.AppendInt(out, n, 10), true
		}
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil || tok == "" || strings.ContainsAny(tok, "nN") { // no inf/nan
			return out, false
		}
		return strconv.AppendFloat(out, f, 'g', -1, 64), true
	}
}

func (p *pyParser) container(out []byte, depth int, closer byte, dict bool) ([]byte, bool) {
	p.i++ // opener
	if dict {
		out = append(out, '{')
	} else {
		out = append(out, '[')
	}
	first := true
	for {
		p.ws()
		if p.i >= len(p.s) {
			return out, false
		}
		if p.s[p.i] == closer {
			p.i++
			break
		}
		if !first {
			if p.s[p.i] != ',' {
				return out, false
			}
			p.i++
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == closer { // trailing comma
				p.i++
				break
			}
		}
		first = false
		var ok bool
		if dict {
			start := len(out)
			if out, ok = p.value(out, depth+1); !ok {
				return out, false
			}
			if out[start] != '"' { // JSON keys are strings: quote numbers/booleans
				key := string(out[start:])
				out = appendJSONString(out[:start], key)
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return out, false
			}
			p.i++
			out = append(out, ':')
		}
		if out, ok = p.value(out, depth+1); !ok {
			return out, false
		}
		out = append(out, ',')
	}
	if !first && out[len(out)-1] == ',' {
		out = out[:len(out)-1]
	}
	if dict {
		return append(out, '}'), true
	}
	return append(out, ']'), true
}
