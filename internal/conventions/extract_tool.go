// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Sources of tool arguments and results carried by events (SpanRecord.ToolArgsSource).
const (
	srcEventDetails = "event:" + semconv.EventInferenceDetails
	srcEventToolMsg = "event:" + semconv.EventToolMessage
	srcEventChoice  = "event:" + semconv.EventChoice
	ruleTransfer    = "gen_ai.transfer"
	// RuleHandoffTool is the HandoffRule of a handoff read from a handoff tool call.
	RuleHandoffTool = "handoff_tool"
	ruleTLHandoff   = "traceloop.handoff_span"
	// oiHandoffFrom / oiHandoffTo are the keys of the JSON objects that the JS
	// OpenInference openai-agents instrumentation writes as input.value / output.value of
	// its "handoff to X" span (the SDK's HandoffSpanData fields).
	oiHandoffFrom = "from_agent"
	oiHandoffTo   = "to_agent"
)

// toolArgKeys is the argument priority list of docs/decisions/sessions.md §1.5 (Tool call row);
// the event-carried forms follow them.
var toolArgKeys = [...]attrKey{attrToolArgs, attrInputValue, attrOIToolParams, attrAIToolArgs, attrAIToolInput, attrADKArgs, attrTLEntityInput, attrMastraArgs}

// toolResultKeys is the result priority list.
var toolResultKeys = [...]attrKey{attrToolResult, attrOutputValue, attrAIToolResult, attrAIToolOutput, attrADKResponse, attrTLEntityOutput}

// toolFields fills the fields of a tool execution span.
func (e *Extractor) toolFields(s *attrScan, events ptrace.SpanEventSlice, r *session.SpanRecord, cls classInfo) {
	r.ToolName = e.text(r, strings.TrimSpace(cmp.Or(s.str(attrToolName), s.str(attrOIToolName), s.str(attrAIToolName),
		cls.nameHint, s.str(attrTLEntityName))))
	r.ToolCallID = e.text(r, cmp.Or(s.str(attrToolCallID), s.str(attrOIToolID), s.str(attrAIToolID)))
	r.ToolDescription = e.text(r, cmp.Or(s.str(attrToolDesc), s.str(attrOIToolDesc)))

	if s.has[attrOIToolSchema] {
		e.toolSchema(s.v[attrOIToolSchema], semconv.ToolSchemaOI, r)
	}
	// tool.parameters is a schema in some instrumentations and the arguments in others
	// (docs/decisions/conventions.md): a schema is never taken as arguments.
	paramsIsSchema := false
	if s.has[attrOIToolParams] {
		if data, ok := jsonBytes(s.v[attrOIToolParams], e.parseLimit); ok && isSchema(data) {
			paramsIsSchema = true
			if r.ToolSchema == nil {
				e.toolSchema(s.v[attrOIToolParams], semconv.ToolParamsOI, r)
			}
		}
	}

	// Arguments.
	for _, k := range toolArgKeys {
		if !s.has[k] {
			continue
		}
		if k == attrOIToolParams && paramsIsSchema {
			continue
		}
		text, cut := e.argsText(s.v[k])
		if strings.TrimSpace(text) == "" {
			continue
		}
		if k == attrTLEntityInput && !cut {
			if args, lossy, ok := unwrapArgsKwargs(text); ok {
				text = args
				if lossy {
					addProblem(r, semconv.TraceloopEntityInput, "positional arguments dropped")
				}
			}
		}
		r.ToolArguments, r.ToolArgsSource, r.ToolArgsTruncated = text, keyNames[k], cut
		break
	}

	// Result.
	for _, k := range toolResultKeys {
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
	if !r.Error && isErrorResult(r.ToolResult) {
		r.Error = true
	}

	// A LangChain-serialised ToolMessage (OpenInference LangChain tracer): the result is
	// its content, and it carries the call id.
	if r.ToolResult != "" && s.has[attrOutputValue] {
		if data, ok := jsonBytes(s.v[attrOutputValue], e.msgLimit); ok {
			if content, id, ok := lcToolMessage(data); ok {
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
	if target := cmp.Or(s.str(attrTransferTargetName), s.str(attrTransferTargetID)); target != "" {
		r.HandoffTo = e.text(r, target)
		r.HandoffMode = normTransferMode(s.str(attrTransferMode))
		// On a transfer span gen_ai.agent.name is the source agent by definition.
		r.HandoffFrom = e.text(r, s.str(attrGenAIAgentName))
		r.HandoffRule = ruleTransfer
	} else if target, mode, ok := HandoffToolTarget(r.ToolName, r.ToolArguments); ok {
		r.HandoffTo, r.HandoffMode, r.HandoffRule = e.text(r, target), mode, RuleHandoffTool
	}
}

// toolEvents reads a tool span's events: the tool_call / tool_call_response parts of
// gen_ai.client.inference.operation.details, or gen_ai.tool.message (arguments) and
// gen_ai.choice (result).
func (e *Extractor) toolEvents(events ptrace.SpanEventSlice, r *session.SpanRecord) {
	ev := readEvents(events)
	if r.ToolArgsSource == "" && ev.hasDetIn {
		var o msgOut
		if e.parse(r, semconv.EventInferenceDetails, ev.detIn, &o, readerOutput) {
			for _, c := range o.calls {
				if r.ToolName == "" || c.Name == r.ToolName {
					e.setEventArgs(r, c.Arguments, srcEventDetails)
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
			r.ToolArguments, r.ToolArgsSource, r.ToolArgsTruncated = text, srcEventToolMsg, cut
		}
		if r.ToolCallID == "" {
			r.ToolCallID = e.text(r, ev.toolMsgID)
		}
	}
	if r.ToolResult == "" && ev.hasDetOut {
		var o msgOut
		if e.parse(r, semconv.EventInferenceDetails, ev.detOut, &o, readerOutput) && o.hasResp {
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

func (e *Extractor) setEventArgs(r *session.SpanRecord, args, src string) {
	if strings.TrimSpace(args) == "" {
		return
	}
	text, cut := cleanText(args, e.maxText)
	r.ToolArguments, r.ToolArgsSource, r.ToolArgsTruncated = text, src, cut
}

// argsText returns a value as arguments/result text: a string as it is, a structured
// value as canonical JSON; capped at MaxTextBytes (cut reports truncation). The
// serialisation of structured values stops at the cap, so a huge kvlist costs no more
// than the cap.
func (e *Extractor) argsText(v pcommon.Value) (string, bool) {
	if t, ok := valueText(v); ok {
		return cleanText(t, e.maxText)
	}
	b, complete := appendJSON(make([]byte, 0, 64), v, 0, e.maxText)
	t, cut := cleanText(string(b), e.maxText)
	return t, cut || !complete
}

// toolSchema reads a single tool's JSON Schema into r.ToolSchema.
func (e *Extractor) toolSchema(v pcommon.Value, key string, r *session.SpanRecord) {
	data, ok := jsonBytes(v, e.maxText)
	if !ok {
		addProblem(r, key, "schema larger than max_text_bytes, dropped")
		return
	}
	if len(data) == 0 {
		return
	}
	schema, err := parseToolSchema(data)
	if err != nil {
		addProblem(r, key, "not a JSON Schema object")
		return
	}
	r.ToolSchema = schema
}

// handoffFields fills an explicit handoff span (docs/decisions/sessions.md §1.5 Handoff (b), (c)).
func (e *Extractor) handoffFields(s *attrScan, r *session.SpanRecord, cls classInfo) {
	r.HandoffMode = semconv.TransferModePassControl
	switch {
	case s.has[attrHandoffFrom] || s.has[attrHandoffTo]:
		r.HandoffFrom = e.text(r, unquote(s.str(attrHandoffFrom)))
		r.HandoffTo = e.text(r, unquote(s.str(attrHandoffTo)))
		r.HandoffRule = ruleGenAIHandoff
	case cls.oiHandoff:
		// input.value is the sender and output.value the receiver: plain names (Python) or
		// JSON objects {"from_agent": ...} / {"to_agent": ...} (JS).
		in, inFrom, inTo := handoffEnd(e.anyText(s, attrInputValue))
		out, outFrom, outTo := handoffEnd(e.anyText(s, attrOutputValue))
		r.HandoffFrom = e.text(r, cmp.Or(inFrom, outFrom, in))
		r.HandoffTo = e.text(r, cmp.Or(outTo, inTo, out, cls.nameHint))
		r.HandoffRule = ruleOIHandoff
	case cls.tlFrom != "" || cls.tlTo != "":
		r.HandoffFrom, r.HandoffTo = e.text(r, cls.tlFrom), e.text(r, cls.tlTo)
		r.HandoffRule = ruleTLHandoff
	}
	if r.HandoffTo == "" && cls.tlTo != "" {
		r.HandoffTo = e.text(r, cls.tlTo)
	}
}

// anyText is an attribute's text: a string as it is, a structured value as canonical
// JSON (argsText); "" when absent.
func (e *Extractor) anyText(s *attrScan, k attrKey) string {
	if !s.has[k] {
		return ""
	}
	t, _ := e.argsText(s.v[k])
	return t
}

// handoffEnd reads one side of an OpenInference handoff span (input.value or
// output.value): a JSON object gives its from_agent and to_agent strings (name ""), any
// other value is the agent name itself (one level of JSON string quoting removed).
func handoffEnd(v string) (name, from, to string) {
	t := strings.TrimSpace(v)
	if !strings.HasPrefix(t, "{") {
		return unquote(t), "", ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(unsafeBytes(t), &m) != nil {
		return unquote(t), "", ""
	}
	from, _ = rawString(m[oiHandoffFrom])
	to, _ = rawString(m[oiHandoffTo])
	return "", strings.TrimSpace(from), strings.TrimSpace(to)
}

// unquote trims s and removes one level of JSON string quoting ("\"coordinator\"").
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' {
		if u, ok := rawString(unsafeBytes(s)); ok {
			return strings.TrimSpace(u)
		}
	}
	return s
}

// normTransferMode normalises gen_ai.transfer.mode: the two defined values, "pass_control"
// when absent, any other value kept as an identifier (at most maxRuleValue bytes).
func normTransferMode(m string) string {
	m = lowerASCII(strings.TrimSpace(m))
	switch m {
	case "":
		return semconv.TransferModePassControl
	case semconv.TransferModePassControl, semconv.TransferModeReturn:
		return m
	}
	m, _ = cleanText(m, maxRuleValue)
	return m
}

// isErrorResult reports whether a tool result is a JSON object whose "error" member is
// true (Mastra's rejected input: {"error":true,"message":"Tool input validation
// failed ..."}).
func isErrorResult(result string) bool {
	b := unsafeBytes(result)
	if firstByte(b) != '{' || !bytes.Contains(b, []byte(`"error"`)) {
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
