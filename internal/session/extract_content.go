// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session // import "github.com/agenteval/agenteval-collector/internal/session"

import (
	"bytes"
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// exEvents holds the content-carrying span events of one span (docs/decisions/conventions.md, §1.6):
// gen_ai.client.inference.operation.details and the deprecated per-message events.
type exEvents struct {
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

func exReadEvents(events ptrace.SpanEventSlice) (ev exEvents) {
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
			if v, ok := attrs.Get(semconv.EventAttrMessage); ok && len(ev.choices) < exMaxList {
				ev.choices = append(ev.choices, v)
			}
			if v, ok := attrs.Get(semconv.EventAttrFinishReason); ok && len(ev.choiceFinish) < exMaxList {
				if t, _ := exValueText(v); t != "" {
					ev.choiceFinish = append(ev.choiceFinish, exLowerASCII(t))
				}
			}
			if v, ok := attrs.Get(semconv.EventAttrID); ok && ev.choiceID == "" {
				ev.choiceID, _ = exValueText(v)
			}
		case semconv.EventToolMessage:
			if v, ok := attrs.Get(semconv.EventAttrContent); ok && !ev.hasToolMsg {
				ev.toolMsg, ev.hasToolMsg = v, true
				if id, ok := attrs.Get(semconv.EventAttrID); ok {
					ev.toolMsgID, _ = exValueText(id)
				}
			}
		}
	}
	return ev
}

// exReader names a message reader for Extractor.parse (a kind rather than a function
// value, so that the caller's exMsgOut can stay on its stack).
type exReader uint8

const (
	exRdInput           exReader = iota // exReadInput
	exRdOutput                          // exReadOutput
	exRdVercelPrompt                    // exReadVercelPrompt
	exRdADKRequest                      // exReadADKRequest
	exRdADKResponse                     // exReadADKResponse
	exRdVercelToolCalls                 // exReadVercelToolCalls
)

func (rd exReader) read(data []byte, o *exMsgOut) error {
	switch rd {
	case exRdInput:
		return exReadInput(data, o)
	case exRdOutput:
		return exReadOutput(data, o)
	case exRdVercelPrompt:
		return exReadVercelPrompt(data, o)
	case exRdADKRequest:
		return exReadADKRequest(data, o)
	case exRdADKResponse:
		return exReadADKResponse(data, o)
	case exRdVercelToolCalls:
		return exReadVercelToolCalls(data, o)
	}
	return nil
}

// parse reads one JSON-bearing value with reader, recording size and syntax problems.
// It reports whether the value was read.
func (e *Extractor) parse(r *SpanRecord, key string, v pcommon.Value, o *exMsgOut, reader exReader) bool {
	data, ok := exJSONBytes(v, e.parseLimit)
	if !ok {
		r.Truncated = true
		exProblem(r, key, "value larger than the parse limit, not parsed")
		return false
	}
	if len(data) == 0 {
		return false
	}
	if err := reader.read(data, o); err != nil {
		exProblem(r, key, err.Error())
		return false
	}
	return true
}

// eventMessage reads the content of a deprecated message event: plain text, a JSON list
// of content blocks (Strands: [{"text"}, {"toolUse"}]), or a message object (string or
// kvlist: {role, content, tool_calls}).
func (e *Extractor) eventMessage(r *SpanRecord, key string, v pcommon.Value, o *exMsgOut) string {
	if v.Type() == pcommon.ValueTypeStr {
		s := v.Str()
		if c := exFirstByte(exBytes(s)); c != '[' && c != '{' {
			return s
		}
	}
	data, ok := exJSONBytes(v, e.parseLimit)
	if !ok {
		r.Truncated = true
		exProblem(r, key, "value larger than the parse limit, not parsed")
		return ""
	}
	if !json.Valid(data) {
		if v.Type() == pcommon.ValueTypeStr {
			return v.Str() // text that merely starts with a bracket
		}
		exProblem(r, key, errExSyntax.Error())
		return ""
	}
	if exFirstByte(data) == '{' {
		var m exJMsg
		if err := json.Unmarshal(data, &m); err == nil || exIsTypeError(err) {
			calls := len(o.calls)
			if t := exMsgText(&m, o); t != "" || len(o.calls) > calls {
				return t
			}
		}
	}
	return exContentText(data, o)
}

// content fills UserMessage, Input, Output, Reasoning, RequestedCalls, FinishReasons and
// ContentCaptured from the first source that has them, in the order of docs/decisions/conventions.md
// §5.1 (Message row): GenAI span attributes, GenAI events, OpenInference flattened
// messages, Traceloop indexed messages, Vercel ai.*, Pydantic AI, ADK payloads, then
// the generic input.value / output.value.
func (e *Extractor) content(s *exScan, events ptrace.SpanEventSlice, r *SpanRecord) {
	ev := exReadEvents(events)
	captured := ev.hasDetIn || ev.hasDetOut || ev.hasUser || len(ev.choices) > 0 ||
		len(s.oiIn) > 0 || len(s.oiOut) > 0 || len(s.tlIn) > 0 || len(s.tlOut) > 0
	for _, k := range [...]exKey{kInMsgs, kOutMsgs, kSysInstr, kAIPrompt, kAIPromptMessages, kAIResponseText,
		kAIResponseToolCalls, kPydAllMessages, kPydFinalResult, kADKLLMRequest, kADKLLMResponse, kInputValue,
		kOutputValue, kTLEntityInput, kTLEntityOutput, kMastraRunInput} {
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

	// Input: the last user message (the current request of a multi-turn history).
	var in exMsgOut
	switch {
	case s.has[kInMsgs] && e.parse(r, semconv.GenAIInputMessages, s.v[kInMsgs], &in, exRdInput) && in.hasUser:
	case ev.hasDetIn && e.parse(r, semconv.EventInferenceDetails, ev.detIn, &in, exRdInput) && in.hasUser:
	case ev.hasUser && e.userEvent(r, ev.user, &in):
	case len(s.oiIn) > 0 && exFlatRead(s.oiIn, &in, exFlatInput) && in.hasUser:
	case len(s.tlIn) > 0 && exFlatRead(s.tlIn, &in, exFlatInput) && in.hasUser:
	case s.has[kAIPromptMessages] && e.parse(r, semconv.AIPromptMessages, s.v[kAIPromptMessages], &in, exRdInput) && in.hasUser:
	case s.has[kAIPrompt] && e.parse(r, semconv.AIPrompt, s.v[kAIPrompt], &in, exRdVercelPrompt) && in.hasUser:
	case s.has[kPydAllMessages] && e.parse(r, semconv.PydanticAIAllMessages, s.v[kPydAllMessages], &in, exRdInput) && in.hasUser:
	case s.has[kADKLLMRequest] && e.parse(r, semconv.ADKLLMRequest, s.v[kADKLLMRequest], &in, exRdADKRequest) && in.hasUser:
	case s.has[kMastraRunInput] && e.parse(r, semconv.MastraAgentRunInput, s.v[kMastraRunInput], &in, exRdInput) && in.hasUser:
	}
	if s.has[kInputValue] {
		e.genericInput(s, r, &in)
	} else if s.has[kTLEntityInput] && (r.Class == ClassAgent || r.Class == ClassTurn) {
		t, _ := exValueText(s.v[kTLEntityInput])
		r.Input = e.text(r, t)
	}
	if !in.hasUser && s.has[kMastraRunInput] {
		// Mastra records a string input as it is, not as a message list.
		if t, ok := exValueText(s.v[kMastraRunInput]); ok {
			if c := exFirstByte(exBytes(t)); c != '[' && c != '{' && strings.TrimSpace(t) != "" {
				in.user, in.hasUser = t, true
			}
		}
	}
	if in.hasUser {
		r.UserMessage = e.text(r, in.user)
	}

	// Output: the final assistant text, reasoning, requested tool calls.
	var out exMsgOut
	yielded := func() bool { return len(out.text) > 0 || len(out.calls) > 0 || len(out.reasoning) > 0 }
	switch {
	case s.has[kOutMsgs] && e.parse(r, semconv.GenAIOutputMessages, s.v[kOutMsgs], &out, exRdOutput) && yielded():
	case ev.hasDetOut && e.parse(r, semconv.EventInferenceDetails, ev.detOut, &out, exRdOutput) && yielded():
	case len(ev.choices) > 0 && e.choiceEvents(r, &ev, &out) && yielded():
	case len(s.oiOut) > 0 && exFlatRead(s.oiOut, &out, exFlatOutput) && yielded():
	case len(s.tlOut) > 0 && exFlatRead(s.tlOut, &out, exFlatOutput) && yielded():
	case (s.has[kAIResponseText] || s.has[kAIResponseToolCalls]) && e.vercelResponse(s, r, &out) && yielded():
	case s.has[kADKLLMResponse] && e.parse(r, semconv.ADKLLMResponse, s.v[kADKLLMResponse], &out, exRdADKResponse) && yielded():
	case s.has[kPydFinalResult] && e.plainOutput(s.v[kPydFinalResult], &out) && yielded():
	case s.has[kOutputValue] && e.genericOutput(s, r, &out) && yielded():
	case s.has[kTLEntityOutput] && (r.Class == ClassAgent || r.Class == ClassTurn) && e.plainOutput(s.v[kTLEntityOutput], &out) && yielded():
		// The Traceloop SDKs JSON-encode what the function returned: a string answer
		// arrives quoted.
		for i, t := range out.text {
			out.text[i] = exUnquoteJSONString(t)
		}
	}
	r.Output = e.text(r, out.outputText())
	r.Reasoning = e.text(r, out.reasoningText())
	if exMissingCallID(out.calls) && s.has[kOutputValue] {
		// OpenInference JS leaves the ids out of llm.output_messages.*; the LangChain
		// LLMResult in output.value has them.
		if data, ok := exJSONBytes(s.v[kOutputValue], e.parseLimit); ok {
			exFillCallIDs(out.calls, exLCGenerationCalls(data))
		}
	}
	if len(out.calls) > 0 {
		r.RequestedCalls = e.requested(r, out.calls)
	}

	e.finish(s, r, out.finish)
}

// exMissingCallID reports whether any call lacks an id.
func exMissingCallID(calls []RequestedToolCall) bool {
	for _, c := range calls {
		if c.ID == "" {
			return true
		}
	}
	return false
}

// finish fills FinishReasons: the gen_ai.response.finish_reasons attribute, else the
// output messages' finish reasons, else Vercel's ai.response.finishReason.
func (e *Extractor) finish(s *exScan, r *SpanRecord, fromOutput []string) {
	switch {
	case s.has[kFinishReasons]:
		r.FinishReasons = e.finishReasons(r, s.v[kFinishReasons])
	case len(fromOutput) > 0:
		r.FinishReasons = e.cleanList(r, fromOutput)
	case s.has[kAIResponseFinish]:
		if t, _ := exValueText(s.v[kAIResponseFinish]); t != "" {
			r.FinishReasons = []string{e.text(r, exLowerASCII(t))}
		}
	}
}

func exFlatRead(attrs []exFlatAttr, o *exMsgOut, f func([]exFlatAttr, *exMsgOut)) bool {
	f(attrs, o)
	return true
}

// userEvent reads the deprecated gen_ai.user.message content.
func (e *Extractor) userEvent(r *SpanRecord, v pcommon.Value, in *exMsgOut) bool {
	if t := e.eventMessage(r, semconv.EventUserMessage, v, nil); t != "" {
		in.user, in.hasUser = t, true
	}
	return in.hasUser
}

// choiceEvents reads the deprecated gen_ai.choice events.
func (e *Extractor) choiceEvents(r *SpanRecord, ev *exEvents, out *exMsgOut) bool {
	for _, v := range ev.choices {
		if t := e.eventMessage(r, semconv.EventChoice, v, out); t != "" {
			out.setText(t)
		}
	}
	out.finish = append(out.finish, ev.choiceFinish...)
	return true
}

// vercelResponse reads ai.response.text and ai.response.toolCalls.
func (e *Extractor) vercelResponse(s *exScan, r *SpanRecord, out *exMsgOut) bool {
	if s.has[kAIResponseText] {
		if t, _ := exValueText(s.v[kAIResponseText]); t != "" {
			out.text = append(out.text, t)
		}
	}
	if s.has[kAIResponseToolCalls] {
		e.parse(r, semconv.AIResponseToolCalls, s.v[kAIResponseToolCalls], out, exRdVercelToolCalls)
	}
	return true
}

// exReadVercelToolCalls reads Vercel ai.response.toolCalls: a JSON list of call parts.
func exReadVercelToolCalls(data []byte, o *exMsgOut) error {
	if exFirstByte(data) != '[' {
		return errExNotArray
	}
	var parts []exJPart
	if err := json.Unmarshal(data, &parts); err != nil && !exIsTypeError(err) {
		return errExSyntax
	}
	for i := range parts {
		_ = exPart(&parts[i], o)
	}
	return nil
}

// plainOutput takes a value as the output text.
func (e *Extractor) plainOutput(v pcommon.Value, out *exMsgOut) bool {
	t, ok := exValueText(v)
	if !ok {
		if b, complete := exAppendJSON(nil, v, 0, e.maxText); len(b) > 0 {
			t = string(b)
			_ = complete
		}
	}
	if strings.TrimSpace(t) != "" {
		out.text = append(out.text, t)
	}
	return true
}

// exUnquoteJSONString returns the string a JSON string literal encodes, or t itself when
// t is not exactly one JSON string.
func exUnquoteJSONString(t string) string {
	b := bytes.TrimSpace(exBytes(t))
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
func (e *Extractor) genericInput(s *exScan, r *SpanRecord, in *exMsgOut) {
	v := s.v[kInputValue]
	t, isText := exValueText(v)
	if !isText {
		b, _ := exAppendJSON(nil, v, 0, e.maxText)
		t = string(b)
	}
	c := exFirstByte(exBytes(t))
	if (c == '[' || c == '{') && !strings.HasPrefix(s.str(kInputMime), "text/") {
		if in.hasUser && (c == '[' || strings.Contains(t, `"messages"`)) {
			return // a message list already read from a richer source
		}
		if !in.hasUser && len(t) <= e.parseLimit {
			var probe exMsgOut
			if exReadInput(exBytes(t), &probe) == nil && probe.messages > 0 {
				if probe.hasUser {
					in.user, in.hasUser = probe.user, true
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

// genericOutput reads OpenInference output.value: a message list or LangGraph state gives
// the assistant text; plain text is the output; other JSON is the output text of agent
// and turn spans only (an LLM span's output.value is the raw provider response).
func (e *Extractor) genericOutput(s *exScan, r *SpanRecord, out *exMsgOut) bool {
	v := s.v[kOutputValue]
	t, isText := exValueText(v)
	if !isText {
		b, _ := exAppendJSON(nil, v, 0, e.maxText)
		t = string(b)
	}
	c := exFirstByte(exBytes(t))
	if (c == '[' || c == '{') && len(t) <= e.parseLimit && !strings.HasPrefix(s.str(kOutputMime), "text/") {
		var probe exMsgOut
		if err := exReadOutput(exBytes(t), &probe); err == nil && probe.messages > 0 {
			*out = probe
			return true
		}
		if r.Class == ClassLLM {
			return true
		}
	}
	if strings.TrimSpace(t) != "" {
		out.text = append(out.text, t)
	}
	return true
}

// requested caps and sanitises requested tool calls.
func (e *Extractor) requested(r *SpanRecord, calls []RequestedToolCall) []RequestedToolCall {
	if len(calls) > exMaxList {
		calls = calls[:exMaxList]
	}
	out := make([]RequestedToolCall, 0, len(calls))
	for _, c := range calls {
		if strings.TrimSpace(c.Name) == "" {
			continue
		}
		args, cut := exClean(c.Arguments, e.maxText)
		if cut {
			r.Truncated = true
		}
		out = append(out, RequestedToolCall{
			ID:                 e.text(r, c.ID),
			Name:               e.text(r, strings.TrimSpace(c.Name)),
			Arguments:          args,
			ArgumentsTruncated: cut,
		})
	}
	return out
}

// finishReasons reads gen_ai.response.finish_reasons: a string array, a JSON list in a
// string, or a single string.
func (e *Extractor) finishReasons(r *SpanRecord, v pcommon.Value) []string {
	var list []string
	switch v.Type() {
	case pcommon.ValueTypeSlice:
		sl := v.Slice()
		for i := 0; i < sl.Len() && len(list) < exMaxList; i++ {
			if t, ok := exValueText(sl.At(i)); ok && t != "" {
				list = append(list, exLowerASCII(t))
			}
		}
	case pcommon.ValueTypeStr:
		t := strings.TrimSpace(v.Str())
		if strings.HasPrefix(t, "[") {
			if names, ok := exNameList(exBytes(t), e.maxText); ok {
				for _, n := range names {
					list = append(list, exLowerASCII(n))
				}
				break
			}
		}
		if t != "" {
			list = append(list, exLowerASCII(t))
		}
	default:
		exProblem(r, semconv.GenAIResponseFinishReasons, "not a string list")
	}
	return e.cleanList(r, list)
}

func (e *Extractor) cleanList(r *SpanRecord, list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(list), exMaxList))
	for _, s := range list {
		if len(out) >= exMaxList {
			break
		}
		out = append(out, e.text(r, s))
	}
	return out
}

// exReadVercelPrompt reads Vercel ai.prompt: {"system", "prompt": string | messages,
// "messages": [...]}.
func exReadVercelPrompt(data []byte, o *exMsgOut) error {
	var p struct {
		Prompt   json.RawMessage `json:"prompt"`
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &p); err != nil && !exIsTypeError(err) {
		return errExSyntax
	}
	if s, ok := exRawString(p.Prompt); ok && strings.TrimSpace(s) != "" {
		o.user, o.hasUser = s, true
		o.messages++
		return nil
	}
	for _, list := range [2]json.RawMessage{p.Messages, p.Prompt} {
		if exFirstByte(list) == '[' {
			if err := exReadInput(list, o); err != nil {
				return err
			}
			if o.hasUser {
				return nil
			}
		}
	}
	return nil
}

// exReadADKRequest reads the last user text of ADK's gcp.vertex.agent.llm_request
// ({"contents": [{role, parts}]}).
func exReadADKRequest(data []byte, o *exMsgOut) error {
	var req struct {
		Contents json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(data, &req); err != nil && !exIsTypeError(err) {
		return errExSyntax
	}
	if exFirstByte(req.Contents) != '[' {
		return nil
	}
	return exReadInput(req.Contents, o)
}

// exReadADKResponse reads ADK's gcp.vertex.agent.llm_response ({"content": {role,
// parts}, "finish_reason"}).
func exReadADKResponse(data []byte, o *exMsgOut) error {
	var resp struct {
		Content      json.RawMessage `json:"content"`
		FinishReason string          `json:"finish_reason"`
	}
	if err := json.Unmarshal(data, &resp); err != nil && !exIsTypeError(err) {
		return errExSyntax
	}
	if exFirstByte(resp.Content) == '{' {
		if err := exReadOutput(resp.Content, o); err != nil {
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
func (e *Extractor) toolDefs(s *exScan, events ptrace.SpanEventSlice, r *SpanRecord) {
	if s.has[kToolDefs] {
		if r.ToolDefs = e.cachedDefs(r, semconv.GenAIToolDefinitions, s.v[kToolDefs]); len(r.ToolDefs) > 0 {
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
		var defs []ToolDefinition
		for _, a := range s.oiTools {
			defs = append(defs, e.cachedDefs(r, semconv.PrefixLLMTools+a.rest, a.v)...)
		}
		if r.ToolDefs = defs; len(defs) > 0 {
			return
		}
	}
	if s.has[kAIPromptTools] {
		if r.ToolDefs = e.cachedDefs(r, semconv.AIPromptTools, s.v[kAIPromptTools]); len(r.ToolDefs) > 0 {
			return
		}
	}
	if len(s.tlFuncs) > 0 {
		defs, problems := exFlatFunctions(s.tlFuncs, e.maxText, nil)
		if problems > 0 {
			exProblem(r, semconv.PrefixLLMRequestFunctions+"*", "unreadable tool definition")
		}
		if r.ToolDefs = defs; len(defs) > 0 {
			return
		}
	}
	if s.has[kADKLLMRequest] {
		data, ok := exJSONBytes(s.v[kADKLLMRequest], e.parseLimit)
		if !ok {
			return
		}
		var req struct {
			Config struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"config"`
		}
		if err := json.Unmarshal(data, &req); (err == nil || exIsTypeError(err)) && exFirstByte(req.Config.Tools) == '[' {
			r.ToolDefs = e.defsFromBytes(r, semconv.ADKLLMRequest, req.Config.Tools)
		}
	}
}

// cachedDefs parses one tool-definition value through the extractor's cache.
func (e *Extractor) cachedDefs(r *SpanRecord, key string, v pcommon.Value) []ToolDefinition {
	data, ok := exJSONBytes(v, e.parseLimit)
	if !ok {
		r.Truncated = true
		exProblem(r, key, "value larger than the parse limit, not parsed")
		return nil
	}
	return e.defsFromBytes(r, key, data)
}

func (e *Extractor) defsFromBytes(r *SpanRecord, key string, data []byte) []ToolDefinition {
	if len(data) == 0 {
		return nil
	}
	k := e.defs.key(data, e.maxText)
	defs, problems, ok := e.defs.get(k, data)
	if !ok {
		defs, problems = exParseToolDefs(data, e.maxText, nil)
		e.defs.put(k, data, defs, problems)
	}
	if problems > 0 {
		exProblem(r, key, "unreadable tool definition")
	}
	return defs
}
