// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session // import "github.com/agenteval/agenteval-collector/internal/session"

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// Sources of tool arguments and results carried by events (SpanRecord.ToolArgsSource).
const (
	exSrcEventDetails = "event:" + semconv.EventInferenceDetails
	exSrcEventToolMsg = "event:" + semconv.EventToolMessage
	exSrcEventChoice  = "event:" + semconv.EventChoice
	exRuleTransfer    = "gen_ai.transfer"
	exRuleHandoffTool = "handoff_tool"
	exRuleTLHandoff   = "traceloop.handoff_span"
	// exOIHandoffFrom / exOIHandoffTo are the keys of the JSON objects that the JS
	// OpenInference openai-agents instrumentation writes as input.value / output.value of
	// its "handoff to X" span (the SDK's HandoffSpanData fields).
	exOIHandoffFrom = "from_agent"
	exOIHandoffTo   = "to_agent"
)

// exToolArgKeys is the argument priority list of docs/decisions/sessions.md §1.5 (Tool call row);
// the event-carried forms follow them.
var exToolArgKeys = [...]exKey{kToolArgs, kInputValue, kOIToolParams, kAIToolArgs, kAIToolInput, kADKArgs, kTLEntityInput, kMastraArgs}

// exToolResultKeys is the result priority list.
var exToolResultKeys = [...]exKey{kToolResult, kOutputValue, kAIToolResult, kAIToolOutput, kADKResponse, kTLEntityOutput}

// toolFields fills the fields of a tool execution span.
func (e *Extractor) toolFields(s *exScan, events ptrace.SpanEventSlice, r *SpanRecord, cls exClassInfo) {
	r.ToolName = e.text(r, strings.TrimSpace(cmp.Or(s.str(kToolName), s.str(kOIToolName), s.str(kAIToolName),
		cls.nameHint, s.str(kTLEntityName))))
	r.ToolCallID = e.text(r, cmp.Or(s.str(kToolCallID), s.str(kOIToolID), s.str(kAIToolID)))
	r.ToolDescription = e.text(r, cmp.Or(s.str(kToolDesc), s.str(kOIToolDesc)))

	if s.has[kOIToolSchema] {
		e.toolSchema(s.v[kOIToolSchema], semconv.ToolSchemaOI, r)
	}
	// tool.parameters is a schema in some instrumentations and the arguments in others
	// (docs/decisions/conventions.md): a schema is never taken as arguments.
	paramsIsSchema := false
	if s.has[kOIToolParams] {
		if data, ok := exJSONBytes(s.v[kOIToolParams], e.parseLimit); ok && exIsSchema(data) {
			paramsIsSchema = true
			if r.ToolSchema == nil {
				e.toolSchema(s.v[kOIToolParams], semconv.ToolParamsOI, r)
			}
		}
	}

	// Arguments.
	for _, k := range exToolArgKeys {
		if !s.has[k] {
			continue
		}
		if k == kOIToolParams && paramsIsSchema {
			continue
		}
		text, cut := e.argsText(s.v[k])
		if strings.TrimSpace(text) == "" {
			continue
		}
		if k == kTLEntityInput && !cut {
			if args, lossy, ok := exUnwrapArgsKwargs(text); ok {
				text = args
				if lossy {
					exProblem(r, semconv.TraceloopEntityInput, "positional arguments dropped")
				}
			}
		}
		r.ToolArguments, r.ToolArgsSource, r.ToolArgsTruncated = text, exKeyNames[k], cut
		break
	}

	// Result.
	for _, k := range exToolResultKeys {
		if !s.has[k] {
			continue
		}
		t, cut := e.argsText(s.v[k])
		if strings.TrimSpace(t) == "" {
			continue
		}
		r.ToolResult = t
		if cut {
			r.Truncated = true
		}
		break
	}

	// A result that is an error object ({"error": true, "message": ...}): Mastra answers
	// arguments that fail the tool's schema this way, and the span ends OK.
	if !r.Error && exIsErrorResult(r.ToolResult) {
		r.Error = true
	}

	// A LangChain-serialised ToolMessage (OpenInference LangChain tracer): the result is
	// its content, and it carries the call id.
	if r.ToolResult != "" && s.has[kOutputValue] {
		if data, ok := exJSONBytes(s.v[kOutputValue], e.parseLimit); ok {
			if content, id, ok := exLCToolMessage(data); ok {
				r.ToolResult = e.text(r, content)
				if r.ToolCallID == "" {
					r.ToolCallID = e.text(r, id)
				}
			}
		}
	}

	// Event-carried arguments and results (Strands keeps them in events; §4.2).
	if (r.ToolArgsSource == "" || r.ToolResult == "") && events.Len() > 0 {
		e.toolEvents(events, r)
	}

	if r.ToolArgsTruncated {
		r.Truncated = true
	}
	r.ContentCaptured = r.ToolArgsSource != "" || r.ToolResult != ""

	// Handoffs: the main-branch transfer attributes, else a handoff tool by name.
	if target := cmp.Or(s.str(kTransferTargetName), s.str(kTransferTargetID)); target != "" {
		r.HandoffTo = e.text(r, target)
		r.HandoffMode = exTransferMode(s.str(kTransferMode))
		// On a transfer span gen_ai.agent.name is the source agent by definition.
		r.HandoffFrom = e.text(r, s.str(kGenAIAgentName))
		r.HandoffRule = exRuleTransfer
	} else if target, mode, ok := HandoffToolTarget(r.ToolName, r.ToolArguments); ok {
		r.HandoffTo, r.HandoffMode, r.HandoffRule = e.text(r, target), mode, exRuleHandoffTool
	}
}

// toolEvents reads a tool span's events: the tool_call / tool_call_response parts of
// gen_ai.client.inference.operation.details, or gen_ai.tool.message (arguments) and
// gen_ai.choice (result).
func (e *Extractor) toolEvents(events ptrace.SpanEventSlice, r *SpanRecord) {
	ev := exReadEvents(events)
	if r.ToolArgsSource == "" && ev.hasDetIn {
		var o exMsgOut
		if e.parse(r, semconv.EventInferenceDetails, ev.detIn, &o, exRdOutput) {
			for _, c := range o.calls {
				if r.ToolName == "" || c.Name == r.ToolName {
					e.setEventArgs(r, c.Arguments, exSrcEventDetails)
					if r.ToolCallID == "" {
						r.ToolCallID = e.text(r, c.ID)
					}
					if r.ToolName == "" {
						r.ToolName = e.text(r, c.Name)
					}
					break
				}
			}
		}
	}
	if r.ToolArgsSource == "" && ev.hasToolMsg {
		text, cut := e.argsText(ev.toolMsg)
		if strings.TrimSpace(text) != "" {
			r.ToolArguments, r.ToolArgsSource, r.ToolArgsTruncated = text, exSrcEventToolMsg, cut
		}
		if r.ToolCallID == "" {
			r.ToolCallID = e.text(r, ev.toolMsgID)
		}
	}
	if r.ToolResult == "" && ev.hasDetOut {
		var o exMsgOut
		if e.parse(r, semconv.EventInferenceDetails, ev.detOut, &o, exRdOutput) && o.hasResp {
			r.ToolResult = e.text(r, o.response)
		}
	}
	if r.ToolResult == "" && len(ev.choices) > 0 {
		t, cut := e.argsText(ev.choices[0])
		r.ToolResult = t
		if cut {
			r.Truncated = true
		}
	}
}

func (e *Extractor) setEventArgs(r *SpanRecord, args, src string) {
	if strings.TrimSpace(args) == "" {
		return
	}
	text, cut := exClean(args, e.maxText)
	r.ToolArguments, r.ToolArgsSource, r.ToolArgsTruncated = text, src, cut
}

// argsText returns a value as arguments/result text: a string as it is, a structured
// value as canonical JSON; capped at MaxTextBytes (cut reports truncation). The
// serialisation of structured values stops at the cap, so a huge kvlist costs no more
// than the cap.
func (e *Extractor) argsText(v pcommon.Value) (string, bool) {
	if t, ok := exValueText(v); ok {
		return exClean(t, e.maxText)
	}
	b, complete := exAppendJSON(make([]byte, 0, 64), v, 0, e.maxText)
	t, cut := exClean(string(b), e.maxText)
	return t, cut || !complete
}

// toolSchema reads a single tool's JSON Schema into r.ToolSchema.
func (e *Extractor) toolSchema(v pcommon.Value, key string, r *SpanRecord) {
	data, ok := exJSONBytes(v, e.maxText)
	if !ok {
		exProblem(r, key, "schema larger than max_text_bytes, dropped")
		return
	}
	if len(data) == 0 {
		return
	}
	schema, err := exToolSchema(data)
	if err != nil {
		exProblem(r, key, "not a JSON Schema object")
		return
	}
	r.ToolSchema = schema
}

// handoffFields fills an explicit handoff span (docs/decisions/sessions.md §1.5 Handoff (b), (c)).
func (e *Extractor) handoffFields(s *exScan, r *SpanRecord, cls exClassInfo) {
	r.HandoffMode = semconv.TransferModePassControl
	switch {
	case s.has[kHandoffFrom] || s.has[kHandoffTo]:
		r.HandoffFrom = e.text(r, exUnquote(s.str(kHandoffFrom)))
		r.HandoffTo = e.text(r, exUnquote(s.str(kHandoffTo)))
		r.HandoffRule = exRuleGenAIHandoff
	case cls.oiHandoff:
		// input.value is the sender and output.value the receiver: plain names (Python) or
		// JSON objects {"from_agent": ...} / {"to_agent": ...} (JS).
		in, inFrom, inTo := exHandoffEnd(e.anyText(s, kInputValue))
		out, outFrom, outTo := exHandoffEnd(e.anyText(s, kOutputValue))
		r.HandoffFrom = e.text(r, cmp.Or(inFrom, outFrom, in))
		r.HandoffTo = e.text(r, cmp.Or(outTo, inTo, out, cls.nameHint))
		r.HandoffRule = exRuleOIHandoff
	case cls.tlFrom != "" || cls.tlTo != "":
		r.HandoffFrom, r.HandoffTo = e.text(r, cls.tlFrom), e.text(r, cls.tlTo)
		r.HandoffRule = exRuleTLHandoff
	}
	if r.HandoffTo == "" && cls.tlTo != "" {
		r.HandoffTo = e.text(r, cls.tlTo)
	}
}

// anyText is an attribute's text: a string as it is, a structured value as canonical
// JSON (argsText); "" when absent.
func (e *Extractor) anyText(s *exScan, k exKey) string {
	if !s.has[k] {
		return ""
	}
	t, _ := e.argsText(s.v[k])
	return t
}

// exHandoffEnd reads one side of an OpenInference handoff span (input.value or
// output.value): a JSON object gives its from_agent and to_agent strings (name ""), any
// other value is the agent name itself (one level of JSON string quoting removed).
func exHandoffEnd(v string) (name, from, to string) {
	t := strings.TrimSpace(v)
	if !strings.HasPrefix(t, "{") {
		return exUnquote(t), "", ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(exBytes(t), &m) != nil {
		return exUnquote(t), "", ""
	}
	from, _ = exRawString(m[exOIHandoffFrom])
	to, _ = exRawString(m[exOIHandoffTo])
	return "", strings.TrimSpace(from), strings.TrimSpace(to)
}

// exUnquote trims s and removes one level of JSON string quoting ("\"coordinator\"").
func exUnquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' {
		if u, ok := exRawString(exBytes(s)); ok {
			return strings.TrimSpace(u)
		}
	}
	return s
}

// exTransferMode normalises gen_ai.transfer.mode: the two defined values, "pass_control"
// when absent, any other value kept as an identifier (at most exMaxRuleValue bytes).
func exTransferMode(m string) string {
	m = exLowerASCII(strings.TrimSpace(m))
	switch m {
	case "":
		return semconv.TransferModePassControl
	case semconv.TransferModePassControl, semconv.TransferModeReturn:
		return m
	}
	m, _ = exClean(m, exMaxRuleValue)
	return m
}

// exIsErrorResult reports whether a tool result is a JSON object whose "error" member is
// true (Mastra's rejected input: {"error":true,"message":"Tool input validation
// failed ..."}).
func exIsErrorResult(result string) bool {
	b := exBytes(result)
	if exFirstByte(b) != '{' || !bytes.Contains(b, []byte(`"error"`)) {
		return false
	}
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	return string(bytes.TrimSpace(v.Error)) == "true"
}
