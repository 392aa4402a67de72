// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"bytes"
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// spanEvents holds the content-carrying span events of one span (docs/decisions/conventions.md, §1.6):
// gen_ai.client.inference.operation.details and the deprecated per-message events.
type spanEvents struct {
	detIn, detOut, detDefs          pcommon.Value
	hasDetIn, hasDetOut, hasDetDefs bool
	user                            pcommon.Value // last gen_ai.user.message content
	hasUser                         bool
	choices                         []pcommon.Value // gen_ai.choice message, in order
	choiceFinish                    []string
	choiceID                        string
	toolMsg                         pcommon.Value // gen_ai.tool.message content (tool spans: arguments)
	hasToolMsg                      bool
	toolMsgID                       string
}

func readEvents(events ptrace.SpanEventSlice) (ev spanEvents) {
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		attrs := e.Attributes()
		switch e.Name() {
		case semconv.EventInferenceDetails:
			if v, ok := attrs.Get(semconv.GenAIInputMessages); ok {
				ev.detIn, ev.hasDetIn = v, true
			}
			if v, ok := attrs.Get(semconv.GenAIOutputMessages); ok {
				ev.detOut, ev.hasDetOut = v, true
			}
			if v, ok := attrs.Get(semconv.GenAIToolDefinitions); ok {
				ev.detDefs, ev.hasDetDefs = v, true
			}
		case semconv.EventUserMessage:
			if v, ok := attrs.Get(semconv.EventAttrContent); ok {
				ev.user, ev.hasUser = v, true
			}
		case semconv.EventChoice:
			if v, ok := attrs.Get(semconv.EventAttrMessage); ok && len(ev.choices) < MaxList {
				ev.choices = append(ev.choices, v)
			}
			if v, ok := attrs.Get(semconv.EventAttrFinishReason); ok && len(ev.choiceFinish) < MaxList {
				if t, _ := valueText(v); t != "" {
					ev.choiceFinish = append(ev.choiceFinish, lowerASCII(t))
				}
			}
			if v, ok := attrs.Get(semconv.EventAttrID); ok && ev.choiceID == "" {
				ev.choiceID, _ = valueText(v)
			}
		case semconv.EventToolMessage:
			if v, ok := attrs.Get(semconv.EventAttrContent); ok && !ev.hasToolMsg {
				ev.toolMsg, ev.hasToolMsg = v, true
				if id, ok := attrs.Get(semconv.EventAttrID); ok {
					ev.toolMsgID, _ = valueText(id)
				}
			}
		}
	}
	return ev
}

// msgReader names a message reader for Extractor.parse (a kind rather than a function
// value, so that the caller's msgOut can stay on its stack).
type msgReader uint8

const (
	readerInput           msgReader = iota // readInput
	readerOutput                           // readOutput
	readerVercelPrompt                     // readVercelPrompt
	readerADKRequest                       // readADKRequest
	readerADKResponse                      // readADKResponse
	readerVercelToolCalls                  // readVercelToolCalls
)

func (rd msgReader) read(data []byte, o *msgOut) error {
	switch rd {
	case readerInput:
		return readInput(data, o)
	case readerOutput:
		return readOutput(data, o)
	case readerVercelPrompt:
		return readVercelPrompt(data, o)
	case readerADKRequest:
		return readADKRequest(data, o)
	case readerADKResponse:
		return readADKResponse(data, o)
	case readerVercelToolCalls:
		return readVercelToolCalls(data, o)
	}
	return nil
}

// parse reads one JSON-bearing value with reader, recording size and syntax problems.
// It reports whether the value was read.
func (e *Extractor) parse(r *session.SpanRecord, key string, v pcommon.Value, o *msgOut, reader msgReader) bool {
	data, ok := jsonBytes(v, e.msgLimit)
	if !ok {
		r.Truncated = true
		addProblem(r, key, "value larger than the parse limit, not parsed")
		return false
	}
	if len(data) == 0 {
		return false
	}
	if err := reader.read(data, o); err != nil {
		addProblem(r, key, err.Error())
		return false
	}
	return true
}

// eventMessage reads the content of a deprecated message event: plain text, a JSON list
// of content blocks (Strands: [{"text"}, {"toolUse"}]), or a message object (string or
// kvlist: {role, content, tool_calls}).
func (e *Extractor) eventMessage(r *session.SpanRecord, key string, v pcommon.Value, o *msgOut) string {
	if v.Type() == pcommon.ValueTypeStr {
		s := v.Str()
		if c := firstByte(unsafeBytes(s)); c != '[' && c != '{' {
			return s
		}
	}
	data, ok := jsonBytes(v, e.msgLimit)
	if !ok {
		r.Truncated = true
		addProblem(r, key, "value larger than the parse limit, not parsed")
		return ""
	}
	if !json.Valid(data) {
		if v.Type() == pcommon.ValueTypeStr {
			return v.Str() // text that merely starts with a bracket
		}
		addProblem(r, key, errExSyntax.Error())
		return ""
	}
	if firstByte(data) == '{' {
		var m jMsg
		if err := json.Unmarshal(data, &m); err == nil || isTypeError(err) {
			// o is nil for a user message event: it reports no calls.
			calls := 0
			if o != nil {
				calls = len(o.calls)
			}
			if t := msgText(&m, o); t != "" || (o != nil && len(o.calls) > calls) {
				return t
			}
			if len(m.Parts) > 0 {
				// msgText read the parts (a message of reasoning only); contentText would
				// read them again, as a {parts} object.
				return ""
			}
		}
	}
	return contentText(data, o)
}

// content fills UserMessage, Input, Output, Reasoning, RequestedCalls, FinishReasons and
// ContentCaptured from the first source that has them, in the order of docs/decisions/conventions.md
// §5.1 (Message row): GenAI span attributes, GenAI events, OpenInference flattened
// messages, Traceloop indexed messages, Vercel ai.*, Pydantic AI, ADK payloads, then
// the generic input.value / output.value. With lazy, the input message list may be
// left raw for CompleteAll (deferInput).
func (e *Extractor) content(s *attrScan, events ptrace.SpanEventSlice, r *session.SpanRecord, lazy bool) {
	ev := readEvents(events)
	captured := ev.hasDetIn || ev.hasDetOut || ev.hasUser || len(ev.choices) > 0 ||
		len(s.oiIn) > 0 || len(s.oiOut) > 0 || len(s.tlIn) > 0 || len(s.tlOut) > 0
	for _, k := range [...]attrKey{attrInMsgs, attrOutMsgs, attrSysInstr, attrAIPrompt, attrAIPromptMessages, attrAIResponseText,
		attrAIResponseToolCalls, attrPydAllMessages, attrPydFinalResult, attrADKLLMRequest, attrADKLLMResponse, attrInputValue,
		attrOutputValue, attrTLEntityInput, attrTLEntityOutput, attrMastraRunInput} {
		if s.has[k] {
			captured = true
			break
		}
	}
	if !captured {
		e.finish(s, r, nil)
		return
	}
	r.ContentCaptured = true
	if !lazy || !e.deferInput(s, &ev, r) {
		e.contentInput(s, &ev, r)
	}
	e.contentOutput(s, &ev, r)
}

// contentInput fills UserMessage and Input (content's first half).
func (e *Extractor) contentInput(s *attrScan, ev *spanEvents, r *session.SpanRecord) {
	// Input: the last user message (the current request of a multi-turn history).
	var in msgOut
	switch {
	case s.has[attrInMsgs] && e.parse(r, semconv.GenAIInputMessages, s.v[attrInMsgs], &in, readerInput) && in.hasUser:
	case ev.hasDetIn && e.parse(r, semconv.EventInferenceDetails, ev.detIn, &in, readerInput) && in.hasUser:
	case ev.hasUser && e.userEvent(r, ev.user, &in):
	case len(s.oiIn) > 0 && flatRead(s.oiIn, &in, flatInput) && in.hasUser:
	case len(s.tlIn) > 0 && flatRead(s.tlIn, &in, flatInput) && in.hasUser:
	case s.has[attrAIPromptMessages] && e.parse(r, semconv.AIPromptMessages, s.v[attrAIPromptMessages], &in, readerInput) && in.hasUser:
	case s.has[attrAIPrompt] && e.parse(r, semconv.AIPrompt, s.v[attrAIPrompt], &in, readerVercelPrompt) && in.hasUser:
	case s.has[attrPydAllMessages] && e.parse(r, semconv.PydanticAIAllMessages, s.v[attrPydAllMessages], &in, readerInput) && in.hasUser:
	case s.has[attrADKLLMRequest] && e.parse(r, semconv.ADKLLMRequest, s.v[attrADKLLMRequest], &in, readerADKRequest) && in.hasUser:
	case s.has[attrMastraRunInput] && e.parse(r, semconv.MastraAgentRunInput, s.v[attrMastraRunInput], &in, readerInput) && in.hasUser:
	}
	if s.has[attrInputValue] {
		e.genericInput(s, r, &in)
	} else if s.has[attrTLEntityInput] && (r.Class == session.ClassAgent || r.Class == session.ClassTurn) {
		t, _ := valueText(s.v[attrTLEntityInput])
		// OpenLLMetry records a Python call's arguments as {"args": [...], "kwargs": {...}}:
		// the input is the named arguments, none when the call had none.
		if args, _, ok := unwrapArgsKwargs(t); ok {
			t = args
			if t == "{}" {
				t = ""
			}
		}
		r.Input = e.text(r, t)
	}
	if !in.hasUser && s.has[attrMastraRunInput] {
		// Mastra records a string input as it is, not as a message list.
		if t, ok := valueText(s.v[attrMastraRunInput]); ok {
			if c := firstByte(unsafeBytes(t)); c != '[' && c != '{' && strings.TrimSpace(t) != "" {
				in.user, in.hasUser = t, true
			}
		}
	}
	if in.hasUser {
		r.UserMessage = e.text(r, in.user)
	}
}

// contentOutput fills Output, Reasoning, RequestedCalls and FinishReasons (content's
// second half).
func (e *Extractor) contentOutput(s *attrScan, ev *spanEvents, r *session.SpanRecord) {

	// Output: the final assistant text, reasoning, requested tool calls.
	var out msgOut
	yielded := func() bool { return len(out.text) > 0 || len(out.calls) > 0 || len(out.reasoning) > 0 }
	switch {
	case s.has[attrOutMsgs] && e.parse(r, semconv.GenAIOutputMessages, s.v[attrOutMsgs], &out, readerOutput) && yielded():
	case ev.hasDetOut && e.parse(r, semconv.EventInferenceDetails, ev.detOut, &out, readerOutput) && yielded():
	case len(ev.choices) > 0 && e.choiceEvents(r, ev, &out) && yielded():
	case len(s.oiOut) > 0 && flatRead(s.oiOut, &out, flatOutput) && yielded():
	case len(s.tlOut) > 0 && flatRead(s.tlOut, &out, flatOutput) && yielded():
	case (s.has[attrAIResponseText] || s.has[attrAIResponseToolCalls]) && e.vercelResponse(s, r, &out) && yielded():
	case s.has[attrADKLLMResponse] && e.parse(r, semconv.ADKLLMResponse, s.v[attrADKLLMResponse], &out, readerADKResponse) && yielded():
	case s.has[attrPydFinalResult] && e.plainOutput(s.v[attrPydFinalResult], &out) && yielded():
	case s.has[attrOutputValue] && e.genericOutput(s, r, &out) && yielded():
	case s.has[attrTLEntityOutput] && (r.Class == session.ClassAgent || r.Class == session.ClassTurn) && e.plainOutput(s.v[attrTLEntityOutput], &out) && yielded():
		// The Traceloop SDKs JSON-encode what the function returned: a string answer
		// arrives quoted.
		for i, t := range out.text {
			out.text[i] = unquoteJSONString(t)
		}
	}
	r.Output = e.text(r, out.outputText())
	r.Reasoning = e.text(r, out.reasoningText())
	if missingCallID(out.calls) && s.has[attrOutputValue] {
		// OpenInference JS leaves the ids out of llm.output_messages.*; the LangChain
		// LLMResult in output.value has them.
		if data, ok := jsonBytes(s.v[attrOutputValue], e.msgLimit); ok {
			fillCallIDs(out.calls, lcGenerationCalls(data))
		}
	}
	if len(out.calls) > 0 {
		r.RequestedCalls = e.requested(r, out.calls)
	}

	e.finish(s, r, out.finish)
}

// missingCallID reports whether any call lacks an id.
func missingCallID(calls []session.RequestedToolCall) bool {
	for _, c := range calls {
		if c.ID == "" {
			return true
		}
	}
	return false
}

// finish fills FinishReasons: the gen_ai.response.finish_reasons attribute, else the
// output messages' finish reasons, else Vercel's ai.response.finishReason.
func (e *Extractor) finish(s *attrScan, r *session.SpanRecord, fromOutput []string) {
	switch {
	case s.has[attrFinishReasons]:
		r.FinishReasons = e.finishReasons(r, s.v[attrFinishReasons])
	case len(fromOutput) > 0:
		r.FinishReasons = e.cleanList(r, fromOutput)
	case s.has[attrAIResponseFinish]:
		if t, _ := valueText(s.v[attrAIResponseFinish]); t != "" {
			r.FinishReasons = []string{e.text(r, lowerASCII(t))}
		}
	}
}

func flatRead(attrs []flatAttr, o *msgOut, f func([]flatAttr, *msgOut)) bool {
	f(attrs, o)
	return true
}

// userEvent reads the deprecated gen_ai.user.message content.
func (e *Extractor) userEvent(r *session.SpanRecord, v pcommon.Value, in *msgOut) bool {
	if t := e.eventMessage(r, semconv.EventUserMessage, v, nil); t != "" {
		in.user, in.hasUser = t, true
	}
	return in.hasUser
}

// choiceEvents reads the deprecated gen_ai.choice events.
func (e *Extractor) choiceEvents(r *session.SpanRecord, ev *spanEvents, out *msgOut) bool {
	for _, v := range ev.choices {
		if t := e.eventMessage(r, semconv.EventChoice, v, out); t != "" {
			out.setText(t)
		}
	}
	out.finish = append(out.finish, ev.choiceFinish...)
	return true
}

// vercelResponse reads ai.response.text and ai.response.toolCalls.
func (e *Extractor) vercelResponse(s *attrScan, r *session.SpanRecord, out *msgOut) bool {
	if s.has[attrAIResponseText] {
		if t, _ := valueText(s.v[attrAIResponseText]); t != "" {
			out.text = append(out.text, t)
		}
	}
	if s.has[attrAIResponseToolCalls] {
		e.parse(r, semconv.AIResponseToolCalls, s.v[attrAIResponseToolCalls], out, readerVercelToolCalls)
	}
	return true
}

// readVercelToolCalls reads Vercel ai.response.toolCalls: a JSON list of call parts.
func readVercelToolCalls(data []byte, o *msgOut) error {
	if firstByte(data) != '[' {
		return errExNotArray
	}
	var parts []jPart
	if err := json.Unmarshal(data, &parts); err != nil && !isTypeError(err) {
		return errExSyntax
	}
	for i := range parts {
		_ = readPart(&parts[i], o)
	}
	return nil
}

// plainOutput takes a value as the output text.
func (e *Extractor) plainOutput(v pcommon.Value, out *msgOut) bool {
	t, ok := valueText(v)
	if !ok {
		if b, complete := appendJSON(nil, v, 0, e.maxText); len(b) > 0 {
			t = string(b)
			_ = complete
		}
	}
	if strings.TrimSpace(t) != "" {
		out.text = append(out.text, t)
	}
	return true
}

// unquoteJSONString returns the string a JSON string literal encodes, or t itself when
// t is not exactly one JSON string.
func unquoteJSONString(t string) string {
	b := bytes.TrimSpace(unsafeBytes(t))
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return t
	}
	var u string
	if json.Unmarshal(b, &u) != nil {
		return t
	}
	return u
}

// genericInput reads OpenInference input.value: a message list (JSON array, LangGraph
// {"messages": [...]}, OpenAI Responses input items) gives the user message; any other
// value is the Input text, and the user message of agent, turn and LLM spans when no
// message source gave one.
func (e *Extractor) genericInput(s *attrScan, r *session.SpanRecord, in *msgOut) {
	v := s.v[attrInputValue]
	t, isText := valueText(v)
	if !isText {
		b, _ := appendJSON(nil, v, 0, e.maxText)
		t = string(b)
	}
	c := firstByte(unsafeBytes(t))
	if (c == '[' || c == '{') && !strings.HasPrefix(s.str(attrInputMime), "text/") {
		if in.hasUser && (c == '[' || strings.Contains(t, `"messages"`)) {
			return // a message list already read from a richer source
		}
		if !in.hasUser {
			if user, ok := e.listUser(t); ok {
				if user != "" {
					in.user, in.hasUser = user, true
				}
				return
			}
		}
	}
	r.Input = e.text(r, t)
	if !in.hasUser && strings.TrimSpace(t) != "" {
		in.user, in.hasUser = t, true
	}
}

// listUser reads t as a message list (msgList's shapes): ok when it is one, with its
// last user message's text (empty when it has none). Text over the parse limit, or that
// is no message list, is not ok and records no problem: the caller keeps it as it is.
func (e *Extractor) listUser(t string) (user string, ok bool) {
	if len(t) > e.msgLimit {
		return "", false
	}
	var probe msgOut
	if readInput(unsafeBytes(t), &probe) != nil || probe.messages == 0 {
		return "", false
	}
	return probe.user, true
}

// genericOutput reads OpenInference output.value: a message list or LangGraph state gives
// the assistant text; plain text is the output; other JSON is the output text of agent
// and turn spans only (an LLM span's output.value is the raw provider response).
func (e *Extractor) genericOutput(s *attrScan, r *session.SpanRecord, out *msgOut) bool {
	v := s.v[attrOutputValue]
	t, isText := valueText(v)
	if !isText {
		b, _ := appendJSON(nil, v, 0, e.maxText)
		t = string(b)
	}
	c := firstByte(unsafeBytes(t))
	if (c == '[' || c == '{') && len(t) <= e.msgLimit && !strings.HasPrefix(s.str(attrOutputMime), "text/") {
		var probe msgOut
		if err := readOutput(unsafeBytes(t), &probe); err == nil && probe.messages > 0 {
			*out = probe
			return true
		}
		if r.Class == session.ClassLLM {
			return true
		}
	}
	if strings.TrimSpace(t) != "" {
		out.text = append(out.text, t)
	}
	return true
}

// requested caps and sanitises requested tool calls, in place: calls is the caller's
// own list, read once (docs/decisions/performance.md §8.39).
func (e *Extractor) requested(r *session.SpanRecord, calls []session.RequestedToolCall) []session.RequestedToolCall {
	if len(calls) > MaxList {
		calls = calls[:MaxList]
	}
	out := calls[:0] // written at or before the call it reads
	for _, c := range calls {
		// The name is checked once capped: a cap below its first rune empties it.
		name := e.text(r, strings.TrimSpace(c.Name))
		if name == "" {
			continue
		}
		args, cut := cleanText(c.Arguments, e.maxText)
		if cut {
			r.Truncated = true
		}
		out = append(out, session.RequestedToolCall{
			ID:                 e.text(r, c.ID),
			Name:               name,
			Arguments:          args,
			ArgumentsTruncated: cut,
		})
	}
	return out
}

// finishReasons reads gen_ai.response.finish_reasons: a string array, a JSON list in a
// string, or a single string.
func (e *Extractor) finishReasons(r *session.SpanRecord, v pcommon.Value) []string {
	var list []string
	switch v.Type() {
	case pcommon.ValueTypeSlice:
		sl := v.Slice()
		for i := 0; i < sl.Len() && len(list) < MaxList; i++ {
			if t, ok := valueText(sl.At(i)); ok && t != "" {
				list = append(list, lowerASCII(t))
			}
		}
	case pcommon.ValueTypeStr:
		t := strings.TrimSpace(v.Str())
		if strings.HasPrefix(t, "[") {
			if names, ok := parseNameList(unsafeBytes(t), e.maxText); ok {
				for _, n := range names {
					list = append(list, lowerASCII(n))
				}
				break
			}
		}
		if t != "" {
			list = append(list, lowerASCII(t))
		}
	default:
		addProblem(r, semconv.GenAIResponseFinishReasons, "not a string list")
	}
	return e.cleanList(r, list)
}

// cleanList caps and sanitises a list of names, in place: list is the caller's own.
func (e *Extractor) cleanList(r *session.SpanRecord, list []string) []string {
	if len(list) == 0 {
		return nil
	}
	list = list[:min(len(list), MaxList)]
	for i, s := range list {
		list[i] = e.text(r, s)
	}
	return list
}

// readVercelPrompt reads Vercel ai.prompt: {"system", "prompt": string | messages,
// "messages": [...]}.
func readVercelPrompt(data []byte, o *msgOut) error {
	var p struct {
		Prompt   json.RawMessage `json:"prompt"`
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &p); err != nil && !isTypeError(err) {
		return errExSyntax
	}
	if s, ok := rawString(p.Prompt); ok && strings.TrimSpace(s) != "" {
		o.user, o.hasUser = s, true
		o.messages++
		return nil
	}
	for _, list := range [2]json.RawMessage{p.Messages, p.Prompt} {
		if firstByte(list) == '[' {
			if err := readInput(list, o); err != nil {
				return err
			}
			if o.hasUser {
				return nil
			}
		}
	}
	return nil
}

// readADKRequest reads the last user text of ADK's gcp.vertex.agent.llm_request
// ({"contents": [{role, parts}]}).
func readADKRequest(data []byte, o *msgOut) error {
	var req struct {
		Contents json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(data, &req); err != nil && !isTypeError(err) {
		return errExSyntax
	}
	if firstByte(req.Contents) != '[' {
		return nil
	}
	return readInput(req.Contents, o)
}

// readADKResponse reads ADK's gcp.vertex.agent.llm_response ({"content": {role,
// parts}, "finish_reason"}).
func readADKResponse(data []byte, o *msgOut) error {
	var resp struct {
		Content      json.RawMessage `json:"content"`
		FinishReason string          `json:"finish_reason"`
	}
	if err := json.Unmarshal(data, &resp); err != nil && !isTypeError(err) {
		return errExSyntax
	}
	if firstByte(resp.Content) == '{' {
		if err := readOutput(resp.Content, o); err != nil {
			return err
		}
	}
	if resp.FinishReason != "" {
		o.finish = append(o.finish, strings.ToLower(resp.FinishReason))
	}
	return nil
}

// toolDefs fills ToolDefs from the first source that has definitions:
// gen_ai.tool.definitions (span, then event), llm.tools.N.tool.json_schema,
// ai.prompt.tools, llm.request.functions.N.*, ADK llm_request config.tools.
func (e *Extractor) toolDefs(s *attrScan, events ptrace.SpanEventSlice, r *session.SpanRecord) {
	if s.has[attrToolDefs] {
		if r.ToolDefs = e.cachedDefs(r, semconv.GenAIToolDefinitions, s.v[attrToolDefs]); len(r.ToolDefs) > 0 {
			return
		}
	}
	if events.Len() > 0 {
		for i := events.Len() - 1; i >= 0; i-- {
			ev := events.At(i)
			if ev.Name() != semconv.EventInferenceDetails {
				continue
			}
			if v, ok := ev.Attributes().Get(semconv.GenAIToolDefinitions); ok {
				if r.ToolDefs = e.cachedDefs(r, semconv.GenAIToolDefinitions, v); len(r.ToolDefs) > 0 {
					return
				}
			}
		}
	}
	if len(s.oiTools) > 0 {
		var defs []session.ToolDefinition
		for _, a := range s.oiTools {
			defs = append(defs, e.cachedDefs(r, semconv.PrefixLLMTools+a.rest, a.v)...)
		}
		if r.ToolDefs = defs; len(defs) > 0 {
			return
		}
	}
	if s.has[attrAIPromptTools] {
		if r.ToolDefs = e.cachedDefs(r, semconv.AIPromptTools, s.v[attrAIPromptTools]); len(r.ToolDefs) > 0 {
			return
		}
	}
	if len(s.tlFuncs) > 0 {
		defs, problems := flatFunctions(s.tlFuncs, e.maxText, nil)
		if problems > 0 {
			addProblem(r, semconv.PrefixLLMRequestFunctions+"*", "unreadable tool definition")
		}
		if r.ToolDefs = defs; len(defs) > 0 {
			return
		}
	}
	if s.has[attrADKLLMRequest] {
		data, ok := jsonBytes(s.v[attrADKLLMRequest], e.msgLimit)
		if !ok {
			return
		}
		var req struct {
			Config struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"config"`
		}
		if err := json.Unmarshal(data, &req); (err == nil || isTypeError(err)) && firstByte(req.Config.Tools) == '[' {
			if len(req.Config.Tools) > e.parseLimit {
				// The request is read up to the message limit; its definitions keep theirs.
				r.Truncated = true
				addProblem(r, semconv.ADKLLMRequest, "tool definitions larger than the parse limit, not parsed")
				return
			}
			r.ToolDefs = e.defsFromBytes(r, semconv.ADKLLMRequest, req.Config.Tools)
		}
	}
}

// cachedDefs parses one tool-definition value through the extractor's cache.
func (e *Extractor) cachedDefs(r *session.SpanRecord, key string, v pcommon.Value) []session.ToolDefinition {
	data, ok := jsonBytes(v, e.parseLimit)
	if !ok {
		r.Truncated = true
		addProblem(r, key, "value larger than the parse limit, not parsed")
		return nil
	}
	return e.defsFromBytes(r, key, data)
}

func (e *Extractor) defsFromBytes(r *session.SpanRecord, key string, data []byte) []session.ToolDefinition {
	if len(data) == 0 {
		return nil
	}
	k := e.defs.key(data, e.maxText)
	defs, problems, ok := e.defs.get(k, data)
	if !ok {
		defs, problems = parseToolDefs(data, e.maxText, nil)
		e.defs.put(k, data, defs, problems)
	}
	if problems > 0 {
		addProblem(r, key, "unreadable tool definition")
	}
	return defs
}
