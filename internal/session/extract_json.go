// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session // import "github.com/agenteval/agenteval-collector/internal/session"

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"strings"

	gojson "github.com/goccy/go-json"

	"github.com/agenteval/agenteval-collector/internal/semconv"
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

// exIsTypeError reports a decode that succeeded except for values of an unexpected type
// (left at their zero value): the rest of the document was decoded and is used.
func exIsTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// exSpan is the byte range of one JSON value inside a document.
type exSpan struct{ a, b int }

func exSkipWS(data []byte, i int) int {
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

// exValueEnd returns the offset just past the JSON value starting at data[i]. It checks
// string termination and bracket balance (not full validity: elements are validated by
// the decoder when they are decoded).
func exValueEnd(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errExSyntax
	}
	switch data[i] {
	case '"':
		return exStringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := exStringEnd(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
				if depth > exMaxDepth {
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

func exStringEnd(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errExSyntax
}

// exArrayElems returns the byte ranges of the elements of the JSON array in data, appended
// to dst. A document that is not an array returns errExNotArray.
func exArrayElems(data []byte, dst []exSpan) ([]exSpan, error) {
	i := exSkipWS(data, 0)
	if i >= len(data) || data[i] != '[' {
		return dst, errExNotArray
	}
	i = exSkipWS(data, i+1)
	if i < len(data) && data[i] == ']' {
		return dst, exTrailing(data, i+1)
	}
	for {
		end, err := exValueEnd(data, i)
		if err != nil {
			return dst, err
		}
		dst = append(dst, exSpan{i, end})
		i = exSkipWS(data, end)
		if i >= len(data) {
			return dst, errExSyntax
		}
		switch data[i] {
		case ',':
			i = exSkipWS(data, i+1)
		case ']':
			return dst, exTrailing(data, i+1)
		default:
			return dst, errExSyntax
		}
	}
}

func exTrailing(data []byte, i int) error {
	if exSkipWS(data, i) != len(data) {
		return errExSyntax
	}
	return nil
}

// exFirstByte returns the first non-space byte of data, or 0.
func exFirstByte(data []byte) byte {
	i := exSkipWS(data, 0)
	if i < len(data) {
		return data[i]
	}
	return 0
}

// exJMsg is one message in any of the supported shapes.
type exJMsg struct {
	Role         string          `json:"role"`
	Type         string          `json:"type"`
	Parts        []*exJPart      `json:"parts"`
	Content      json.RawMessage `json:"content"`
	FinishReason string          `json:"finish_reason"`
	ToolCalls    []*exJPart      `json:"tool_calls"`
	Kwargs       *exJMsg         `json:"kwargs"` // LangChain serialisation
	ID           json.RawMessage `json:"id"`     // LangChain constructor path, or an item id
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments"`
	CallID       string          `json:"call_id"`
}

// exJPart is one content part / block in any of the supported shapes. Lists of parts
// are decoded as []*exJPart: go-json zeroes each new element of a []exJPart from a fresh
// allocation of the (large) struct, so a value slice cost two allocations of it per part.
type exJPart struct {
	Type             string          `json:"type"`
	Content          json.RawMessage `json:"content"`
	Text             json.RawMessage `json:"text"`
	Thinking         string          `json:"thinking"`
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Args             json.RawMessage `json:"args"`
	Input            json.RawMessage `json:"input"`
	Response         json.RawMessage `json:"response"`
	Result           json.RawMessage `json:"result"`
	Output           json.RawMessage `json:"output"`
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	CallID           string          `json:"call_id"`
	Thought          bool            `json:"thought"`
	ToolUse          *exJFuncCall    `json:"toolUse"`
	FunctionCall     *exJFuncCall    `json:"function_call"`
	FunctionCallJS   *exJFuncCall    `json:"functionCall"`
	Function         *exJFuncCall    `json:"function"`
	ReasoningContent *struct {
		ReasoningText *struct {
			Text string `json:"text"`
		} `json:"reasoningText"`
	} `json:"reasoningContent"`
}

// exJFuncCall is a nested call object: OpenAI {name, arguments}, Bedrock toolUse
// {toolUseId, name, input}, Gemini function_call {id, name, args}.
type exJFuncCall struct {
	ID        string          `json:"id"`
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Args      json.RawMessage `json:"args"`
	Input     json.RawMessage `json:"input"`
}

// exMsgOut accumulates what the message readers find.
type exMsgOut struct {
	user    string // text of the last user message with text
	hasUser bool
	text    []string // the last assistant message with text (its parts joined)
	// handoffText: text holds a message that requested a handoff tool (see exReadOutput).
	handoffText bool
	reasoning   []string
	calls       []RequestedToolCall
	finish      []string
	response    string // first tool_call_response / tool result
	hasResp     bool
	messages    int
}

func (o *exMsgOut) outputText() string    { return strings.Join(o.text, "\n") }
func (o *exMsgOut) setText(t string)      { o.text = append(o.text[:0], t) }
func (o *exMsgOut) reasoningText() string { return strings.Join(o.reasoning, "\n") }

// exUnmarshal decodes one message, part or list of parts with goccy/go-json, a drop-in
// replacement of encoding/json that decodes the same values at a fraction of the cost on
// this hot path (docs/decisions/performance.md). On an error it decodes again with
// encoding/json, which keeps every well-typed field around a type error (go-json stops at
// the first): one malformed part must not lose the tool calls beside it. *v is reset
// first and decoded in place, so that a caller decoding many values into one variable
// allocates it once.
func exUnmarshal[T any](data []byte, v *T) error {
	var zero T
	*v = zero
	if err := gojson.Unmarshal(data, v); err == nil {
		return nil
	}
	*v = zero
	return json.Unmarshal(data, v)
}

// exRole normalises a message role: user, assistant, system, tool or "".
func exRole(m *exJMsg) string {
	r := m.Role
	if r == "" && m.Kwargs != nil {
		r = exRole(m.Kwargs)
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

// exRawString decodes a JSON string literal; ok is false for any other JSON value.
func exRawString(raw json.RawMessage) (string, bool) {
	i := exSkipWS(raw, 0)
	if i >= len(raw) || raw[i] != '"' {
		return "", false
	}
	var s string
	if err := gojson.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// exRawText returns a value as text: a JSON string's content, any other JSON value as
// its (trimmed) JSON text, null as "".
func exRawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if s, ok := exRawString(raw); ok {
		return s
	}
	return string(raw)
}

// exContentText returns the text of a "content" value: a string, one part, or a list of
// parts (text parts only, joined by newlines). Calls and reasoning found in parts are
// reported to o when o is not nil.
func exContentText(raw json.RawMessage, o *exMsgOut) string {
	switch exFirstByte(raw) {
	case '"':
		s, _ := exRawString(raw)
		return s
	case '[':
		var parts []*exJPart
		_ = exUnmarshal(raw, &parts) // best effort: a type error leaves the rest decoded
		var texts []string
		for _, p := range parts {
			if p == nil {
				continue // null: a part with nothing in it
			}
			if t := exPart(p, o); t != "" {
				texts = append(texts, t)
			}
		}
		return strings.Join(texts, "\n")
	case '{':
		var p exJPart
		_ = exUnmarshal(raw, &p)
		return exPart(&p, o)
	}
	return ""
}

// exPart interprets one part: it returns the part's plain text, and reports reasoning,
// tool calls and tool responses to o (when o is not nil).
func exPart(p *exJPart, o *exMsgOut) string {
	typ := strings.ToLower(p.Type)
	switch typ {
	case "text", "output_text", "input_text":
		return exPartText(p, o)
	case "reasoning", "thinking":
		if o != nil {
			if t := exFirstText(p.Content, p.Text, p.Thinking); t != "" {
				o.reasoning = append(o.reasoning, t)
			}
		}
		return ""
	case "tool_call", "function_call", "tool-call", "tool_use":
		if o != nil {
			o.addCall(cmp.Or(p.CallID, p.ID, p.ToolCallID), cmp.Or(p.Name, p.ToolName),
				exFirstRaw(p.Arguments, p.Args, p.Input))
		}
		return ""
	case "tool_call_response", "tool-result", "tool_result", "function_call_output", "function_response":
		if o != nil && !o.hasResp {
			o.response = exRawText(exFirstRaw(p.Response, p.Result, p.Output, p.Content))
			o.hasResp = true
		}
		return ""
	case "function":
		if p.Function != nil && o != nil {
			o.addCall(p.ID, p.Function.Name, exFirstRaw(p.Function.Arguments, p.Function.Args, p.Function.Input))
		}
		return ""
	case "":
		// Untyped blocks: Bedrock/Strands, Gemini/ADK, Vercel response tool calls.
		switch {
		case p.ToolUse != nil:
			if o != nil {
				o.addCall(cmp.Or(p.ToolUse.ToolUseID, p.ToolUse.ID), p.ToolUse.Name,
					exFirstRaw(p.ToolUse.Input, p.ToolUse.Arguments, p.ToolUse.Args))
			}
			return ""
		case p.FunctionCall != nil || p.FunctionCallJS != nil:
			fc := p.FunctionCall
			if fc == nil {
				fc = p.FunctionCallJS
			}
			if o != nil {
				o.addCall(fc.ID, fc.Name, exFirstRaw(fc.Args, fc.Arguments, fc.Input))
			}
			return ""
		case p.Function != nil:
			if o != nil {
				o.addCall(p.ID, p.Function.Name, exFirstRaw(p.Function.Arguments, p.Function.Args, p.Function.Input))
			}
			return ""
		case p.ToolName != "":
			if o != nil {
				o.addCall(p.ToolCallID, p.ToolName, exFirstRaw(p.Args, p.Input, p.Arguments))
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
		return exPartText(p, o)
	}
	return ""
}

// exPartText returns a text part's text. Gemini thought parts go to reasoning, and the
// python repr "ResponseFunctionToolCall(...)" that the python-contrib openai-agents
// instrumentation writes as text becomes a tool call.
func exPartText(p *exJPart, o *exMsgOut) string {
	t := exFirstText(p.Content, p.Text, "")
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
		if call, ok := exParseResponseFunctionToolCall(t); ok {
			if o != nil {
				o.calls = append(o.calls, call)
			}
			return ""
		}
	}
	return t
}

func (o *exMsgOut) addCall(id, name string, args json.RawMessage) {
	if name == "" && len(args) == 0 {
		return
	}
	if len(o.calls) >= exMaxList {
		return
	}
	o.calls = append(o.calls, RequestedToolCall{ID: id, Name: name, Arguments: exArgsFromRaw(args)})
}

// exArgsFromRaw returns arguments text from a JSON value: a string's content (which is
// usually JSON text itself), any other value as its JSON text, null/absent as "".
func exArgsFromRaw(raw json.RawMessage) string {
	return exRawText(raw)
}

func exFirstText(a, b json.RawMessage, c string) string {
	for _, r := range [2]json.RawMessage{a, b} {
		if len(r) == 0 {
			continue
		}
		if s, ok := exRawString(r); ok && s != "" {
			return s
		}
	}
	return c
}

func exFirstRaw(rs ...json.RawMessage) json.RawMessage {
	for _, r := range rs {
		if len(r) > 0 && string(r) != "null" {
			return r
		}
	}
	return nil
}

// exMsgText returns a message's plain text and reports its calls, reasoning and tool
// responses to o (when not nil).
func exMsgText(m *exJMsg, o *exMsgOut) string {
	if m.Kwargs != nil && len(m.Parts) == 0 && len(m.Content) == 0 {
		return exMsgText(m.Kwargs, o)
	}
	var texts []string
	for _, p := range m.Parts {
		if p == nil {
			continue // null: a part with nothing in it
		}
		if t := exPart(p, o); t != "" {
			texts = append(texts, t)
		}
	}
	if len(m.Content) > 0 {
		if t := exContentText(m.Content, o); t != "" {
			texts = append(texts, t)
		}
	}
	if o != nil {
		for _, tc := range m.ToolCalls {
			switch {
			case tc == nil: // null: a part with nothing in it
			case tc.Function != nil:
				o.addCall(tc.ID, tc.Function.Name, exFirstRaw(tc.Function.Arguments, tc.Function.Args))
			case tc.Type == "" && tc.Name != "":
				// An entry of tool_calls is a call even untyped: LangChain's {name, args, id}
				// (langgraph-supervisor's synthesised transfer_back_to_* call has no type).
				o.addCall(cmp.Or(tc.ID, tc.CallID), tc.Name, exFirstRaw(tc.Args, tc.Arguments, tc.Input))
			default:
				_ = exPart(tc, o)
			}
		}
		// OpenAI Responses input item {type:function_call, name, arguments, call_id}.
		if strings.EqualFold(m.Type, "function_call") && m.Name != "" {
			id, _ := exRawString(m.ID)
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

// exMsgList returns the element ranges of a message list, appended to dst: a JSON array,
// or the "messages" array of an object ({"messages": [...]}, LangGraph state), or a
// single message object (one range).
func exMsgList(data []byte, dst []exSpan) ([]exSpan, []byte, error) {
	switch exFirstByte(data) {
	case '[':
		spans, err := exArrayElems(data, dst)
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
		if len(wrapper.Messages) > 0 && exFirstByte(wrapper.Messages) == '[' {
			spans, err := exArrayElems(wrapper.Messages, dst)
			return spans, wrapper.Messages, err
		}
		if len(wrapper.Role) > 0 || len(wrapper.Parts) > 0 {
			return append(dst, exSpan{0, len(data)}), data, nil
		}
	}
	return nil, data, errExNotArray
}

// exReadInput finds the last user message with text in a message list (the current
// request in a multi-turn history). It decodes elements from the end and stops at the
// first user message with text.
func exReadInput(data []byte, o *exMsgOut) error {
	var buf [16]exSpan
	spans, doc, err := exMsgList(data, buf[:0])
	if err != nil {
		return err
	}
	o.messages += len(spans)
	var m exJMsg // reset by exUnmarshal: one allocation for the list
	for i := len(spans) - 1; i >= 0; i-- {
		elem := doc[spans[i].a:spans[i].b]
		if !exMayBeUser(elem) {
			continue // cannot carry a user role: skip decoding it
		}
		if err := exUnmarshal(elem, &m); err != nil && !exIsTypeError(err) {
			return errExSyntax
		}
		if exRole(&m) != semconv.RoleUser {
			continue
		}
		if t := exMsgText(&m, nil); t != "" {
			o.user, o.hasUser = t, true
			return nil
		}
	}
	return nil
}

// exHandsOff reports whether any of calls is a handoff tool call (HandoffToolTarget).
func exHandsOff(calls []RequestedToolCall) bool {
	for _, c := range calls {
		if _, _, ok := HandoffToolTarget(c.Name, c.Arguments); ok {
			return true
		}
	}
	return false
}

// exMayBeUser is a cheap pre-filter: a message whose text contains none of the user-role
// spellings ("user", "human", "Human") cannot be a user message.
func exMayBeUser(elem []byte) bool {
	return bytes.Contains(elem, []byte("user")) || bytes.Contains(elem, []byte("uman")) ||
		bytes.Contains(elem, []byte("USER")) || bytes.Contains(elem, []byte("User"))
}

// exReadOutput reads every message of an output list: assistant text, reasoning, tool
// calls (from any role: Strands puts a tool span's call in a "tool" message), tool
// responses and finish reasons.
func exReadOutput(data []byte, o *exMsgOut) error {
	var buf [16]exSpan
	spans, doc, err := exMsgList(data, buf[:0])
	if err != nil {
		return err
	}
	o.messages += len(spans)
	var m exJMsg // reset by exUnmarshal: one allocation for the list
	for _, sp := range spans {
		if err := exUnmarshal(doc[sp.a:sp.b], &m); err != nil && !exIsTypeError(err) {
			return errExSyntax
		}
		role := exRole(&m)
		nCalls := len(o.calls)
		t := exMsgText(&m, o)
		if t != "" && (role == semconv.RoleAssistant || role == "") {
			// The final answer is the last assistant message with text. A message that
			// hands off ("Transferring back to triage_agent" + transfer_back_to_triage_agent,
			// which langgraph-supervisor appends to a worker's output) only announces the
			// handoff: it is the answer only when no other message has text.
			if !exHandsOff(o.calls[nCalls:]) {
				o.setText(t)
				o.handoffText = false
			} else if len(o.text) == 0 || o.handoffText {
				o.setText(t)
				o.handoffText = true
			}
		}
		if m.FinishReason != "" && len(o.finish) < exMaxList {
			o.finish = append(o.finish, strings.ToLower(m.FinishReason))
		}
	}
	return nil
}
