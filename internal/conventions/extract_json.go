// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	gojson "github.com/goccy/go-json"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// This file reads message lists in every shape the conventions use (docs/decisions/conventions.md,
// §2.2, §4): OTel GenAI {role, parts[]}, OpenAI chat {role, content, tool_calls[]},
// OpenAI Responses items {type: message|function_call, ...}, Anthropic and Vercel content
// blocks, Bedrock/Strands {text}|{toolUse}|{reasoningContent}, Gemini/ADK {text}|
// {function_call}, LangChain {type: human|ai, content} and its serialised {kwargs}.
//
// Lists are walked with a small allocation-free scanner; only the elements needed are
// decoded (for an input list, from the last element back to the last user message).

var (
	errExNotArray = errors.New("not a JSON array")
	errExSyntax   = errors.New("malformed JSON")
	errExDepth    = errors.New("JSON nested too deeply")
)

// isTypeError reports a decode that succeeded except for values of an unexpected type
// (left at their zero value): the rest of the document was decoded and is used.
func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// jsonSpan is the byte range of one JSON value inside a document.
type jsonSpan struct{ a, b int }

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// valueEnd returns the offset just past the JSON value starting at data[i]. It checks
// string termination and bracket balance (not full validity: elements are validated by
// the decoder when they are decoded).
func valueEnd(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errExSyntax
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := stringEnd(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
				if depth > maxDepth {
					return 0, errExDepth
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errExSyntax
	default:
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errExSyntax
				}
				return j, nil
			}
			j++
		}
		return j, nil
	}
}

// stringEnd returns the offset just past the JSON string whose opening quote is
// data[i]. It finds each quote with bytes.IndexByte (a message's texts are most of its
// bytes, docs/decisions/performance.md §8.39): a quote ends the string when an even
// number of backslashes precede it within the string (each pair is an escaped
// backslash), else it is escaped.
func stringEnd(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); {
		q := bytes.IndexByte(data[j:], '"')
		if q < 0 {
			break
		}
		q += j
		k := q
		for k > i+1 && data[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
	return 0, errExSyntax
}

// arrayElems returns the byte ranges of the elements of the JSON array in data, appended
// to dst. A document that is not an array returns errExNotArray.
func arrayElems(data []byte, dst []jsonSpan) ([]jsonSpan, error) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '[' {
		return dst, errExNotArray
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == ']' {
		return dst, checkTrailing(data, i+1)
	}
	for {
		end, err := valueEnd(data, i)
		if err != nil {
			return dst, err
		}
		dst = append(dst, jsonSpan{i, end})
		i = skipWS(data, end)
		if i >= len(data) {
			return dst, errExSyntax
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case ']':
			return dst, checkTrailing(data, i+1)
		default:
			return dst, errExSyntax
		}
	}
}

func checkTrailing(data []byte, i int) error {
	if skipWS(data, i) != len(data) {
		return errExSyntax
	}
	return nil
}

// firstByte returns the first non-space byte of data, or 0.
func firstByte(data []byte) byte {
	i := skipWS(data, 0)
	if i < len(data) {
		return data[i]
	}
	return 0
}

// rawJSON is a json.RawMessage that keeps the bytes its decoder hands it instead of
// copying them: go-json hands each such value its own copy (unmarshalJSONDecoder), and
// encoding/json a slice of the input, which here is an attribute's string or a buffer
// built for this decode, never written again. A RawMessage copied them once more: an
// allocation per tool call's arguments and per message content
// (docs/decisions/performance.md §8.30). It decodes "null" as RawMessage does.
type rawJSON []byte

// UnmarshalJSON keeps data (see rawJSON).
func (r *rawJSON) UnmarshalJSON(data []byte) error {
	*r = data
	return nil
}

// jMsg is one message in any of the supported shapes.
type jMsg struct {
	Role         string   `json:"role"`
	Type         string   `json:"type"`
	Parts        []*jPart `json:"parts"`
	Content      rawJSON  `json:"content"`
	FinishReason string   `json:"finish_reason"`
	ToolCalls    []*jPart `json:"tool_calls"`
	Kwargs       *jMsg    `json:"kwargs"` // LangChain serialisation
	ID           rawJSON  `json:"id"`     // LangChain constructor path, or an item id
	Name         string   `json:"name"`
	Arguments    rawJSON  `json:"arguments"`
	CallID       string   `json:"call_id"`
}

// jPart is one content part / block in any of the supported shapes. Lists of parts
// are decoded as []*jPart: go-json zeroes each new element of a []jPart from a fresh
// allocation of the (large) struct, so a value slice cost two allocations of it per part.
type jPart struct {
	Type             string     `json:"type"`
	Content          rawJSON    `json:"content"`
	Text             rawJSON    `json:"text"`
	Thinking         string     `json:"thinking"`
	ID               string     `json:"id"`
	Name             string     `json:"name"`
	Arguments        rawJSON    `json:"arguments"`
	Args             rawJSON    `json:"args"`
	Input            rawJSON    `json:"input"`
	Response         rawJSON    `json:"response"`
	Result           rawJSON    `json:"result"`
	Output           rawJSON    `json:"output"`
	ToolCallID       string     `json:"toolCallId"`
	ToolName         string     `json:"toolName"`
	CallID           string     `json:"call_id"`
	Thought          bool       `json:"thought"`
	ToolUse          *jFuncCall `json:"toolUse"`
	FunctionCall     *jFuncCall `json:"function_call"`
	FunctionCallJS   *jFuncCall `json:"functionCall"`
	Function         *jFuncCall `json:"function"`
	ReasoningContent *struct {
		ReasoningText *struct {
			Text string `json:"text"`
		} `json:"reasoningText"`
	} `json:"reasoningContent"`
}

// jFuncCall is a nested call object: OpenAI {name, arguments}, Bedrock toolUse
// {toolUseId, name, input}, Gemini function_call {id, name, args}.
type jFuncCall struct {
	ID        string  `json:"id"`
	ToolUseID string  `json:"toolUseId"`
	Name      string  `json:"name"`
	Arguments rawJSON `json:"arguments"`
	Args      rawJSON `json:"args"`
	Input     rawJSON `json:"input"`
}

// msgOut accumulates what the message readers find.
type msgOut struct {
	user    string // text of the last user message with text
	hasUser bool
	text    []string // the last assistant message with text (its parts joined)
	// handoffText: text holds a message that requested a handoff tool (see readOutput).
	handoffText bool
	reasoning   []string
	calls       []session.RequestedToolCall
	finish      []string
	response    string // first tool_call_response / tool result
	hasResp     bool
	messages    int
}

func (o *msgOut) outputText() string    { return strings.Join(o.text, "\n") }
func (o *msgOut) setText(t string)      { o.text = append(o.text[:0], t) }
func (o *msgOut) reasoningText() string { return strings.Join(o.reasoning, "\n") }

// unmarshal decodes one message, part or list of parts with goccy/go-json, a drop-in
// replacement of encoding/json that decodes the same values at a fraction of the cost on
// this hot path (docs/decisions/performance.md). On an error it decodes again with
// encoding/json, which keeps every well-typed field around a type error (go-json stops at
// the first): one malformed part must not lose the tool calls beside it. *v is reset
// first and decoded in place, so that a caller decoding many values into one variable
// allocates it once.
func unmarshal[T any](data []byte, v *T) error {
	var zero T
	*v = zero
	if err := gojson.Unmarshal(data, v); err == nil {
		return nil
	}
	*v = zero
	return json.Unmarshal(data, v)
}

// msgRole normalises a message role: user, assistant, system, tool or "".
func msgRole(m *jMsg) string {
	r := m.Role
	if r == "" && m.Kwargs != nil {
		r = msgRole(m.Kwargs)
		if r != "" {
			return r
		}
	}
	if r == "" && !strings.EqualFold(m.Type, "constructor") {
		r = m.Type
	}
	if r == "" && len(m.ID) > 0 && m.ID[0] == '[' {
		// LangChain constructor: "id": ["langchain", "schema", "messages", "HumanMessage"].
		var path []string
		if json.Unmarshal(m.ID, &path) == nil && len(path) > 0 {
			r = path[len(path)-1]
		}
	}
	switch strings.ToLower(r) {
	case "user", "human", "humanmessage", "humanmessagechunk":
		return semconv.RoleUser
	case "assistant", "ai", "model", "bot", "aimessage", "aimessagechunk", "function_call":
		return semconv.RoleAssistant
	case "system", "developer", "systemmessage":
		return semconv.RoleSystem
	case "tool", "function", "ipython", "toolmessage", "function_call_output":
		return semconv.RoleTool
	}
	return ""
}

// rawString decodes a JSON string literal; ok is false for any other JSON value.
func rawString(raw []byte) (string, bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '"' {
		return "", false
	}
	var s string
	if err := gojson.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// rawText returns a value as text: a JSON string's content, any other JSON value as
// its (trimmed) JSON text, null as "". The text of a value that is not a string shares
// raw's memory: raw is a rawJSON field of a decoded message or part, bytes that nothing
// writes to again, so copying them once more would only cost an allocation per tool
// call (docs/decisions/performance.md §8.30).
func rawText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if s, ok := rawString(raw); ok {
		return s
	}
	return unsafeString(raw)
}

// contentText returns the text of a "content" value: a string, one part, a list of
// parts (text parts only, joined by newlines), or an object holding a "parts" list
// (Mastra's stored message, MastraDBMessage format 2: {"format": 2, "parts": [...],
// "content": "<text>"}, where the optional "content" repeats the parts' text; a
// sub-agent's mastra.agent_run.input has no "content"). Calls and reasoning found in
// parts are reported to o when o is not nil.
func contentText(raw []byte, o *msgOut) string {
	switch firstByte(raw) {
	case '"':
		s, _ := rawString(raw)
		return s
	case '[':
		var parts []*jPart
		_ = unmarshal(raw, &parts) // best effort: a type error leaves the rest decoded
		return strings.Join(appendPartTexts(nil, parts, o), "\n")
	case '{':
		var p struct {
			jPart
			Parts []*jPart `json:"parts"`
		}
		_ = unmarshal(raw, &p)
		if len(p.Parts) > 0 {
			return strings.Join(appendPartTexts(nil, p.Parts, o), "\n")
		}
		return readPart(&p.jPart, o)
	}
	return ""
}

// appendPartTexts reads a list of parts (readPart) and appends the text parts' text to
// texts.
func appendPartTexts(texts []string, parts []*jPart, o *msgOut) []string {
	for _, p := range parts {
		if p == nil {
			continue // null: a part with nothing in it
		}
		if t := readPart(p, o); t != "" {
			texts = append(texts, t)
		}
	}
	return texts
}

// readPart interprets one part: it returns the part's plain text, and reports reasoning,
// tool calls and tool responses to o (when o is not nil).
func readPart(p *jPart, o *msgOut) string {
	typ := strings.ToLower(p.Type)
	switch typ {
	case "text", "output_text", "input_text":
		return partText(p, o)
	case "reasoning", "thinking":
		if o != nil {
			if t := firstText(p.Content, p.Text, p.Thinking); t != "" {
				o.reasoning = append(o.reasoning, t)
			}
		}
		return ""
	case "tool_call", "function_call", "tool-call", "tool_use":
		if o != nil {
			o.addCall(cmp.Or(p.CallID, p.ID, p.ToolCallID), cmp.Or(p.Name, p.ToolName),
				firstRaw(p.Arguments, p.Args, p.Input))
		}
		return ""
	case "tool_call_response", "tool-result", "tool_result", "function_call_output", "function_response":
		if o != nil && !o.hasResp {
			o.response = rawText(firstRaw(p.Response, p.Result, p.Output, p.Content))
			o.hasResp = true
		}
		return ""
	case "function":
		if p.Function != nil && o != nil {
			o.addCall(p.ID, p.Function.Name, firstRaw(p.Function.Arguments, p.Function.Args, p.Function.Input))
		}
		return ""
	case "":
		// Untyped blocks: Bedrock/Strands, Gemini/ADK, Vercel response tool calls.
		switch {
		case p.ToolUse != nil:
			if o != nil {
				o.addCall(cmp.Or(p.ToolUse.ToolUseID, p.ToolUse.ID), p.ToolUse.Name,
					firstRaw(p.ToolUse.Input, p.ToolUse.Arguments, p.ToolUse.Args))
			}
			return ""
		case p.FunctionCall != nil || p.FunctionCallJS != nil:
			fc := p.FunctionCall
			if fc == nil {
				fc = p.FunctionCallJS
			}
			if o != nil {
				o.addCall(fc.ID, fc.Name, firstRaw(fc.Args, fc.Arguments, fc.Input))
			}
			return ""
		case p.Function != nil:
			if o != nil {
				o.addCall(p.ID, p.Function.Name, firstRaw(p.Function.Arguments, p.Function.Args, p.Function.Input))
			}
			return ""
		case p.ToolName != "":
			if o != nil {
				o.addCall(p.ToolCallID, p.ToolName, firstRaw(p.Args, p.Input, p.Arguments))
			}
			return ""
		case p.ReasoningContent != nil:
			if o != nil && p.ReasoningContent.ReasoningText != nil && p.ReasoningContent.ReasoningText.Text != "" {
				o.reasoning = append(o.reasoning, p.ReasoningContent.ReasoningText.Text)
			}
			return ""
		case p.Thinking != "":
			if o != nil {
				o.reasoning = append(o.reasoning, p.Thinking)
			}
			return ""
		}
		return partText(p, o)
	}
	return ""
}

// partText returns a text part's text. Gemini thought parts go to reasoning, and the
// python repr "ResponseFunctionToolCall(...)" that the python-contrib openai-agents
// instrumentation writes as text becomes a tool call.
func partText(p *jPart, o *msgOut) string {
	t := firstText(p.Content, p.Text, "")
	if t == "" {
		return ""
	}
	if p.Thought {
		if o != nil {
			o.reasoning = append(o.reasoning, t)
		}
		return ""
	}
	if strings.HasPrefix(t, semconv.OpenAIAgentsResponseFunctionRep) {
		if call, ok := parseResponseFunctionToolCall(t); ok {
			if o != nil {
				o.calls = append(o.calls, call)
			}
			return ""
		}
	}
	return t
}

func (o *msgOut) addCall(id, name string, args []byte) {
	if name == "" && len(args) == 0 {
		return
	}
	if len(o.calls) >= MaxList {
		return
	}
	o.calls = append(o.calls, session.RequestedToolCall{ID: id, Name: name, Arguments: argsFromRaw(args)})
}

// argsFromRaw returns arguments text from a JSON value: a string's content (which is
// usually JSON text itself), any other value as its JSON text, null/absent as "".
func argsFromRaw(raw []byte) string {
	return rawText(raw)
}

func firstText(a, b []byte, c string) string {
	for _, r := range [2][]byte{a, b} {
		if len(r) == 0 {
			continue
		}
		if s, ok := rawString(r); ok && s != "" {
			return s
		}
	}
	return c
}

func firstRaw(rs ...[]byte) []byte {
	for _, r := range rs {
		if len(r) > 0 && string(r) != "null" {
			return r
		}
	}
	return nil
}

// msgText returns a message's plain text and reports its calls, reasoning and tool
// responses to o (when not nil).
func msgText(m *jMsg, o *msgOut) string {
	if m.Kwargs != nil && len(m.Parts) == 0 && len(m.Content) == 0 {
		return msgText(m.Kwargs, o)
	}
	texts := appendPartTexts(nil, m.Parts, o)
	if len(m.Content) > 0 {
		if t := contentText(m.Content, o); t != "" {
			texts = append(texts, t)
		}
	}
	if o != nil {
		for _, tc := range m.ToolCalls {
			switch {
			case tc == nil: // null: a part with nothing in it
			case tc.Function != nil:
				o.addCall(tc.ID, tc.Function.Name, firstRaw(tc.Function.Arguments, tc.Function.Args))
			case tc.Type == "" && tc.Name != "":
				// An entry of tool_calls is a call even untyped: LangChain's {name, args, id}
				// (langgraph-supervisor's synthesised transfer_back_to_* call has no type).
				o.addCall(cmp.Or(tc.ID, tc.CallID), tc.Name, firstRaw(tc.Args, tc.Arguments, tc.Input))
			default:
				_ = readPart(tc, o)
			}
		}
		// OpenAI Responses input item {type:function_call, name, arguments, call_id}.
		if strings.EqualFold(m.Type, "function_call") && m.Name != "" {
			id, _ := rawString(m.ID)
			o.addCall(cmp.Or(m.CallID, id), m.Name, m.Arguments)
		}
	}
	switch len(texts) {
	case 0:
		return ""
	case 1:
		return texts[0]
	}
	return strings.Join(texts, "\n")
}

// msgList returns the element ranges of a message list, appended to dst: a JSON array,
// or the "messages" array of an object ({"messages": [...]}, LangGraph state), or a
// single message object (one range).
func msgList(data []byte, dst []jsonSpan) ([]jsonSpan, []byte, error) {
	switch firstByte(data) {
	case '[':
		spans, err := arrayElems(data, dst)
		return spans, data, err
	case '{':
		var wrapper struct {
			Messages json.RawMessage `json:"messages"`
			Role     json.RawMessage `json:"role"`
			Parts    json.RawMessage `json:"parts"`
		}
		if err := json.Unmarshal(data, &wrapper); err != nil {
			return nil, data, errExSyntax
		}
		if len(wrapper.Messages) > 0 && firstByte(wrapper.Messages) == '[' {
			spans, err := arrayElems(wrapper.Messages, dst)
			return spans, wrapper.Messages, err
		}
		if len(wrapper.Role) > 0 || len(wrapper.Parts) > 0 {
			return append(dst, jsonSpan{0, len(data)}), data, nil
		}
	}
	return nil, data, errExNotArray
}

// msgs holds the *jMsg that readInput and readOutput decode message lists into: a
// message is decoded, read and dropped before the next, and nothing keeps a pointer to
// the struct (what is kept is strings and go-json's own allocations).
var msgs = sync.Pool{New: func() any { return new(jMsg) }}

func getMsg() *jMsg { return msgs.Get().(*jMsg) }

// putMsg clears m (so that it pins no decoded data) and pools it.
func putMsg(m *jMsg) {
	*m = jMsg{}
	msgs.Put(m)
}

// readInput finds the last user message with text in a message list (the current
// request in a multi-turn history). It decodes elements from the end and stops at the
// first user message with text.
func readInput(data []byte, o *msgOut) error {
	var buf [16]jsonSpan
	spans, doc, err := msgList(data, buf[:0])
	if err != nil {
		return err
	}
	o.messages += len(spans)
	m := getMsg() // reset by unmarshal
	defer putMsg(m)
	for i := len(spans) - 1; i >= 0; i-- {
		elem := doc[spans[i].a:spans[i].b]
		if !mayBeUser(elem) {
			continue // cannot carry a user role: skip decoding it
		}
		if err := unmarshal(elem, m); err != nil && !isTypeError(err) {
			return errExSyntax
		}
		if msgRole(m) != semconv.RoleUser {
			continue
		}
		if t := msgText(m, nil); t != "" {
			o.user, o.hasUser = t, true
			return nil
		}
	}
	return nil
}

// handsOff reports whether any of calls is a handoff tool call (HandoffToolTarget).
func handsOff(calls []session.RequestedToolCall) bool {
	for _, c := range calls {
		if _, _, ok := HandoffToolTarget(c.Name, c.Arguments); ok {
			return true
		}
	}
	return false
}

// mayBeUser is a cheap pre-filter: a message whose text contains none of the user-role
// spellings ("user", "human", "Human") cannot be a user message.
func mayBeUser(elem []byte) bool {
	return bytes.Contains(elem, []byte("user")) || bytes.Contains(elem, []byte("uman")) ||
		bytes.Contains(elem, []byte("USER")) || bytes.Contains(elem, []byte("User"))
}

// readOutput reads every message of an output list: assistant text, reasoning, tool
// calls (from any role: Strands puts a tool span's call in a "tool" message), tool
// responses and finish reasons.
func readOutput(data []byte, o *msgOut) error {
	var buf [16]jsonSpan
	spans, doc, err := msgList(data, buf[:0])
	if err != nil {
		return err
	}
	o.messages += len(spans)
	m := getMsg() // reset by unmarshal
	defer putMsg(m)
	for _, sp := range spans {
		if err := unmarshal(doc[sp.a:sp.b], m); err != nil && !isTypeError(err) {
			return errExSyntax
		}
		role := msgRole(m)
		nCalls := len(o.calls)
		t := msgText(m, o)
		if t != "" && (role == semconv.RoleAssistant || role == "") {
			// The final answer is the last assistant message with text. A message that
			// hands off ("Transferring back to triage_agent" + transfer_back_to_triage_agent,
			// which langgraph-supervisor appends to a worker's output) only announces the
			// handoff: it is the answer only when no other message has text.
			if !handsOff(o.calls[nCalls:]) {
				o.setText(t)
				o.handoffText = false
			} else if len(o.text) == 0 || o.handoffText {
				o.setText(t)
				o.handoffText = true
			}
		}
		if m.FinishReason != "" && len(o.finish) < MaxList {
			o.finish = append(o.finish, strings.ToLower(m.FinishReason))
		}
	}
	return nil
}
