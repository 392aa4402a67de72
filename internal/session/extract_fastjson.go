// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session // import "github.com/agenteval/agenteval-collector/internal/session"

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file decodes the message shapes of extract_json.go (exJMsg, exJPart, exJFuncCall)
// without reflection: encoding/json spent most of the extractor's time and allocations on
// them (docs/decisions/performance.md §3). The reader is strict and conservative: it
// produces exactly what json.Unmarshal would, or reports that it cannot (ok=false) and
// the caller uses json.Unmarshal. It declines:
//   - any syntax error (json.Unmarshal then reports it);
//   - a key with an escape, a non-ASCII key that is not a field, or a key that names a
//     field only case-insensitively (json matches those by Unicode folding);
//   - a field given twice (json then merges into what the first one decoded);
//   - a value of another type than the field's (json reports an UnmarshalTypeError and
//     decodes the rest), and list elements that are not objects;
//   - nesting deeper than exFastMaxDepth.
//
// Differences that do not matter to the callers: json.RawMessage fields alias the input
// (json copies them; the extractor never writes to them) with their capacity capped, and
// strings without escapes alias it too (see exDec.text).
// extract_fastjson_test.go checks the equivalence on the fixtures and by fuzzing.

// exFastMaxDepth bounds the nesting the fast reader follows.
const exFastMaxDepth = 64

// exDec reads one JSON document.
type exDec struct {
	d []byte
	i int
}

func (x *exDec) ws() {
	for x.i < len(x.d) {
		switch x.d[x.i] {
		case ' ', '\t', '\n', '\r':
			x.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (x *exDec) peek() byte {
	x.ws()
	if x.i < len(x.d) {
		return x.d[x.i]
	}
	return 0
}

// str scans the string starting at x.i (a '"'). It returns the bounds of its content and
// whether the content is plain (no escape, valid UTF-8), i.e. is the string's value.
func (x *exDec) str() (a, b int, plain, ok bool) {
	a = x.i + 1
	plain = true
	ascii := true
	for j := a; j < len(x.d); j++ {
		c := x.d[j]
		switch {
		case c == '"':
			x.i = j + 1
			if plain && !ascii {
				plain = utf8.Valid(x.d[a:j])
			}
			return a, j, plain, true
		case c == '\\':
			plain = false
			j++
			if j >= len(x.d) {
				return 0, 0, false, false
			}
			switch x.d[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(x.d) {
					return 0, 0, false, false
				}
				for k := j + 1; k <= j+4; k++ {
					if exUnhex(x.d[k]) < 0 {
						return 0, 0, false, false
					}
				}
				j += 4
			default:
				return 0, 0, false, false
			}
		case c < 0x20:
			return 0, 0, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, 0, false, false
}

func exUnhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

func exIsDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// num scans a number at x.i (JSON grammar).
func (x *exDec) num() bool {
	d, j := x.d, x.i
	if j < len(d) && d[j] == '-' {
		j++
	}
	switch {
	case j < len(d) && d[j] == '0':
		j++
	case j < len(d) && d[j] >= '1' && d[j] <= '9':
		for j < len(d) && exIsDigitByte(d[j]) {
			j++
		}
	default:
		return false
	}
	if j < len(d) && d[j] == '.' {
		j++
		if j >= len(d) || !exIsDigitByte(d[j]) {
			return false
		}
		for j < len(d) && exIsDigitByte(d[j]) {
			j++
		}
	}
	if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
		j++
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		if j >= len(d) || !exIsDigitByte(d[j]) {
			return false
		}
		for j < len(d) && exIsDigitByte(d[j]) {
			j++
		}
	}
	x.i = j
	return true
}

func (x *exDec) lit(s string) bool {
	if len(x.d)-x.i < len(s) || string(x.d[x.i:x.i+len(s)]) != s {
		return false
	}
	x.i += len(s)
	return true
}

// skip scans (and validates) any value.
func (x *exDec) skip(depth int) bool {
	switch x.peek() {
	case '"':
		_, _, _, ok := x.str()
		return ok
	case '{':
		return x.object(depth, func([]byte) (bool, bool) { return false, true })
	case '[':
		return x.array(depth, func(int) bool { return x.skip(depth + 1) })
	case 't':
		return x.lit("true")
	case 'f':
		return x.lit("false")
	case 'n':
		return x.lit("null")
	case 0:
		return false
	}
	return x.num()
}

// object walks the object at x.i. field is called with each key, x.i at the value; it
// either reads the value (handled) or leaves it to be skipped; ok=false aborts.
func (x *exDec) object(depth int, field func(key []byte) (handled, ok bool)) bool {
	if depth > exFastMaxDepth || x.peek() != '{' {
		return false
	}
	x.i++
	if x.peek() == '}' {
		x.i++
		return true
	}
	for {
		if x.peek() != '"' {
			return false
		}
		a, b, plain, ok := x.str()
		if !ok || !plain {
			return false
		}
		if x.peek() != ':' {
			return false
		}
		x.i++
		x.ws()
		handled, ok := field(x.d[a:b])
		if !ok {
			return false
		}
		if !handled && !x.skip(depth+1) {
			return false
		}
		switch x.peek() {
		case ',':
			x.i++
		case '}':
			x.i++
			return true
		default:
			return false
		}
	}
}

// array walks the array at x.i, calling elem for each element (x.i at it).
func (x *exDec) array(depth int, elem func(i int) bool) bool {
	if depth > exFastMaxDepth || x.peek() != '[' {
		return false
	}
	x.i++
	if x.peek() == ']' {
		x.i++
		return true
	}
	for n := 0; ; n++ {
		x.ws()
		if !elem(n) {
			return false
		}
		switch x.peek() {
		case ',':
			x.i++
		case ']':
			x.i++
			return true
		default:
			return false
		}
	}
}

// raw reads any value as a json.RawMessage aliasing the input (capacity capped).
func (x *exDec) raw(depth int, dst *json.RawMessage) bool {
	start := x.i
	if !x.skip(depth) {
		return false
	}
	*dst = json.RawMessage(x.d[start:x.i:x.i])
	return true
}

// text reads a string value into dst (null leaves dst as is, as json does). A string
// without escapes aliases the input; one with escapes is unquoted as json does.
func (x *exDec) text(dst *string) bool {
	switch x.peek() {
	case 'n':
		return x.lit("null")
	case '"':
		a, b, plain, ok := x.str()
		if !ok {
			return false
		}
		if plain {
			*dst = exView(x.d[a:b])
			return true
		}
		s, ok := exUnescape(x.d[a:b])
		*dst = s
		return ok
	}
	return false // a type error: json's partial decode is not reproduced here
}

// boolean reads a bool value into dst (null leaves it).
func (x *exDec) boolean(dst *bool) bool {
	switch x.peek() {
	case 'n':
		return x.lit("null")
	case 't':
		*dst = true
		return x.lit("true")
	case 'f':
		*dst = false
		return x.lit("false")
	}
	return false
}

// exView returns b as a string without copying; b must never change afterwards.
func exView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// exUnescape decodes the content of a valid JSON string literal that has escapes or
// invalid UTF-8, as encoding/json does: invalid UTF-8 bytes and unpaired surrogates
// become U+FFFD.
func exUnescape(s []byte) (string, bool) {
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			r++
			if r >= len(s) {
				return "", false
			}
			switch s[r] {
			case '"', '\\', '/':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				rr := exGetU4(s[r-1:])
				if rr < 0 {
					return "", false
				}
				r += 5
				if utf16.IsSurrogate(rr) {
					rr1 := exGetU4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			default:
				return "", false
			}
		case c == '"', c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return exView(b), true
}

// exGetU4 decodes \uXXXX from the beginning of s, returning the hex value, or -1.
func exGetU4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		v := exUnhex(c)
		if v < 0 {
			return -1
		}
		r = r*16 + rune(v)
	}
	return r
}

// exFoldsTo reports whether an unknown key could still name one of the fields by json's
// case-insensitive matching: an ASCII key equal to a name but for case, or any non-ASCII
// key (Unicode folding: the Kelvin sign folds to k).
func exFoldsTo(key []byte, names []string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, n := range names {
		if len(n) == len(key) && strings.EqualFold(n, exView(key)) {
			return true
		}
	}
	return false
}

// exDone reports whether only spaces follow.
func (x *exDec) done() bool {
	x.ws()
	return x.i == len(x.d)
}

// exFastMsg decodes data (one JSON object) into a zero m as json.Unmarshal would.
func exFastMsg(data []byte, m *exJMsg) bool {
	x := exDec{d: data}
	return x.msg(0, m) && x.done()
}

// exFastPart decodes data (one JSON object) into a zero p as json.Unmarshal would.
func exFastPart(data []byte, p *exJPart) bool {
	x := exDec{d: data}
	return x.part(0, p) && x.done()
}

// exFastParts decodes data (a JSON array of objects) into a nil *ps as json.Unmarshal
// would.
func exFastParts(data []byte, ps *[]exJPart) bool {
	x := exDec{d: data}
	return x.parts(0, ps) && x.done()
}

var exMsgFields = []string{"role", "type", "parts", "content", "finish_reason", "tool_calls", "kwargs", "id",
	"name", "arguments", "call_id"}

func (x *exDec) msg(depth int, m *exJMsg) bool {
	var seen uint32
	return x.object(depth, func(key []byte) (bool, bool) {
		var f int
		var ok bool
		switch string(key) {
		case "role":
			f, ok = 0, x.text(&m.Role)
		case "type":
			f, ok = 1, x.text(&m.Type)
		case "parts":
			f, ok = 2, x.parts(depth+1, &m.Parts)
		case "content":
			f, ok = 3, x.raw(depth+1, &m.Content)
		case "finish_reason":
			f, ok = 4, x.text(&m.FinishReason)
		case "tool_calls":
			f, ok = 5, x.parts(depth+1, &m.ToolCalls)
		case "kwargs":
			f = 6
			switch x.peek() {
			case 'n':
				ok = x.lit("null")
			case '{':
				m.Kwargs = new(exJMsg)
				ok = x.msg(depth+1, m.Kwargs)
			}
		case "id":
			f, ok = 7, x.raw(depth+1, &m.ID)
		case "name":
			f, ok = 8, x.text(&m.Name)
		case "arguments":
			f, ok = 9, x.raw(depth+1, &m.Arguments)
		case "call_id":
			f, ok = 10, x.text(&m.CallID)
		default:
			return false, !exFoldsTo(key, exMsgFields)
		}
		if seen&(1<<f) != 0 {
			return true, false
		}
		seen |= 1 << f
		return true, ok
	})
}

// parts reads a list of part objects (null leaves *ps nil; [] gives an empty list).
func (x *exDec) parts(depth int, ps *[]exJPart) bool {
	if x.peek() == 'n' {
		return x.lit("null")
	}
	out := []exJPart{}
	ok := x.array(depth, func(int) bool {
		if x.peek() != '{' {
			return false
		}
		out = append(out, exJPart{})
		return x.part(depth+1, &out[len(out)-1])
	})
	*ps = out
	return ok
}

var exPartFields = []string{"type", "content", "text", "thinking", "id", "name", "arguments", "args", "input",
	"response", "result", "output", "toolCallId", "toolName", "call_id", "thought", "toolUse", "function_call",
	"functionCall", "function", "reasoningContent"}

func (x *exDec) part(depth int, p *exJPart) bool {
	var seen uint32
	return x.object(depth, func(key []byte) (bool, bool) {
		var f int
		var ok bool
		switch string(key) {
		case "type":
			f, ok = 0, x.text(&p.Type)
		case "content":
			f, ok = 1, x.raw(depth+1, &p.Content)
		case "text":
			f, ok = 2, x.raw(depth+1, &p.Text)
		case "thinking":
			f, ok = 3, x.text(&p.Thinking)
		case "id":
			f, ok = 4, x.text(&p.ID)
		case "name":
			f, ok = 5, x.text(&p.Name)
		case "arguments":
			f, ok = 6, x.raw(depth+1, &p.Arguments)
		case "args":
			f, ok = 7, x.raw(depth+1, &p.Args)
		case "input":
			f, ok = 8, x.raw(depth+1, &p.Input)
		case "response":
			f, ok = 9, x.raw(depth+1, &p.Response)
		case "result":
			f, ok = 10, x.raw(depth+1, &p.Result)
		case "output":
			f, ok = 11, x.raw(depth+1, &p.Output)
		case "toolCallId":
			f, ok = 12, x.text(&p.ToolCallID)
		case "toolName":
			f, ok = 13, x.text(&p.ToolName)
		case "call_id":
			f, ok = 14, x.text(&p.CallID)
		case "thought":
			f, ok = 15, x.boolean(&p.Thought)
		case "toolUse":
			f, ok = 16, x.funcCall(depth+1, &p.ToolUse)
		case "function_call":
			f, ok = 17, x.funcCall(depth+1, &p.FunctionCall)
		case "functionCall":
			f, ok = 18, x.funcCall(depth+1, &p.FunctionCallJS)
		case "function":
			f, ok = 19, x.funcCall(depth+1, &p.Function)
		case "reasoningContent":
			f, ok = 20, x.reasoningContent(depth+1, p)
		default:
			return false, !exFoldsTo(key, exPartFields)
		}
		if seen&(1<<f) != 0 {
			return true, false
		}
		seen |= 1 << f
		return true, ok
	})
}

var exFuncCallFields = []string{"id", "toolUseId", "name", "arguments", "args", "input"}

// funcCall reads a call object into a new *dst (null leaves it nil).
func (x *exDec) funcCall(depth int, dst **exJFuncCall) bool {
	switch x.peek() {
	case 'n':
		return x.lit("null")
	case '{':
	default:
		return false
	}
	fc := new(exJFuncCall)
	*dst = fc
	var seen uint32
	return x.object(depth, func(key []byte) (bool, bool) {
		var f int
		var ok bool
		switch string(key) {
		case "id":
			f, ok = 0, x.text(&fc.ID)
		case "toolUseId":
			f, ok = 1, x.text(&fc.ToolUseID)
		case "name":
			f, ok = 2, x.text(&fc.Name)
		case "arguments":
			f, ok = 3, x.raw(depth+1, &fc.Arguments)
		case "args":
			f, ok = 4, x.raw(depth+1, &fc.Args)
		case "input":
			f, ok = 5, x.raw(depth+1, &fc.Input)
		default:
			return false, !exFoldsTo(key, exFuncCallFields)
		}
		if seen&(1<<f) != 0 {
			return true, false
		}
		seen |= 1 << f
		return true, ok
	})
}

// reasoningContent reads Bedrock's {"reasoningText": {"text": ...}} into p.
func (x *exDec) reasoningContent(depth int, p *exJPart) bool {
	switch x.peek() {
	case 'n':
		return x.lit("null")
	case '{':
	default:
		return false
	}
	rc := &struct {
		ReasoningText *struct {
			Text string `json:"text"`
		} `json:"reasoningText"`
	}{}
	p.ReasoningContent = rc
	seenRT := false
	return x.object(depth, func(key []byte) (bool, bool) {
		if string(key) != "reasoningText" {
			return false, !exFoldsTo(key, []string{"reasoningText"})
		}
		if seenRT {
			return true, false
		}
		seenRT = true
		switch x.peek() {
		case 'n':
			return true, x.lit("null")
		case '{':
		default:
			return true, false
		}
		rc.ReasoningText = &struct {
			Text string `json:"text"`
		}{}
		seenText := false
		return true, x.object(depth+1, func(key []byte) (bool, bool) {
			if string(key) != "text" {
				return false, !exFoldsTo(key, []string{"text"})
			}
			if seenText {
				return true, false
			}
			seenText = true
			return true, x.text(&rc.ReasoningText.Text)
		})
	})
}
