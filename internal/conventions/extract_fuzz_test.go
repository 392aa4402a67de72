// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// fuzzKeys are the attribute keys the fuzzer writes values to: every key the extractor
// reads, plus indexed and session keys.
var fuzzKeys = func() []string {
	keys := append([]string(nil), keyNames[:]...)
	keys = append(keys,
		"llm.input_messages.0.message.role", "llm.input_messages.0.message.content",
		"llm.output_messages.0.message.contents.0.message_content.text",
		"llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
		"llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
		"llm.tools.0.tool.json_schema", "gen_ai.prompt.0.role", "gen_ai.prompt.0.content",
		"gen_ai.completion.0.tool_calls.0.name", "gen_ai.completion.0.tool_calls.0.arguments",
		"llm.request.functions.0.name", "llm.request.functions.0.parameters",
		"session.id", "gen_ai.conversation.id", "agent_eval.session.end")
	return keys
}()

var fuzzEvents = []string{"gen_ai.client.inference.operation.details", "gen_ai.user.message", "gen_ai.choice",
	"gen_ai.tool.message", "gen_ai.tool.call.decision", "exception", "other"}

var fuzzEventKeys = []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions",
	"content", "message", "finish_reason", "id", "exception.type",
	"gen_ai.tool.call.decision.outcome", "gen_ai.tool.name", "gen_ai.tool.call.id"}

// fuzzValue puts raw into v as a structured value when it is JSON (object, array,
// number...), else as bytes.
func fuzzValue(v pcommon.Value, raw []byte) {
	var x any
	if json.Unmarshal(raw, &x) == nil {
		switch t := x.(type) {
		case map[string]any:
			if v.SetEmptyMap().FromRaw(t) == nil {
				return
			}
		case []any:
			if v.SetEmptySlice().FromRaw(t) == nil {
				return
			}
		case float64:
			v.SetDouble(t)
			return
		case bool:
			v.SetBool(t)
			return
		}
	}
	v.SetEmptyBytes().FromRaw(raw)
}

// FuzzExtract feeds arbitrary attribute values (strings, structured values, numbers) and
// events to the extractor: it must never panic, and its output must be valid UTF-8 within
// the caps.
func FuzzExtract(f *testing.F) {
	f.Add("chat gpt-4o", uint8(attrOp), "chat", uint8(attrInMsgs), `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`,
		[]byte(`[{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":{"a":1}}]}]`), int64(47), 1.5, uint16(64), uint8(0), `[{"role":"user","content":"x"}]`)
	f.Add("execute_tool t", uint8(attrOp), "execute_tool", uint8(attrToolArgs), `{"city": "Paris"`,
		[]byte(`{"a":{"b":[1,2,{"c":null}]}}`), int64(-1), -2.0, uint16(0), uint8(3), `{"x":1}`)
	f.Add("x", uint8(attrOIKind), "TOOL", uint8(attrOIToolParams), `{"type":"object","properties":{"a":{}}}`,
		[]byte(`{"args":[],"kwargs":{"k":1}}`), int64(0), 0.0, uint16(3), uint8(2), "[{\"toolUse\":{\"name\":\"n\",\"input\":{}}}]")
	f.Add("handoff to b\xff", uint8(attrOIKind), "AGENT", uint8(attrOutputValue), "\xff\xfe{", []byte("\xff"), int64(1<<62), 1e308, uint16(1), uint8(1), "ResponseFunctionToolCall(arguments='{}', name='n')")
	f.Add("ai.generateText", uint8(attrAIFunctionID), "a", uint8(attrAIPrompt), `{"prompt":"p","messages":[1]}`, []byte(`[["deep"]]`), int64(3), 3.0, uint16(9), uint8(0), strings.Repeat("[", 300))
	f.Fuzz(func(t *testing.T, name string, k1 uint8, v1 string, k2 uint8, v2 string, raw []byte, n int64, fl float64, maxText uint16, ev uint8, evVal string) {
		s := ptrace.NewSpan()
		s.SetName(name)
		s.SetSpanID(pcommon.SpanID{1})
		attrs := s.Attributes()
		attrs.PutStr(fuzzKeys[int(k1)%len(fuzzKeys)], v1)
		attrs.PutStr(fuzzKeys[int(k2)%len(fuzzKeys)], v2)
		fuzzValue(attrs.PutEmpty(fuzzKeys[(int(k1)+int(k2)+1)%len(fuzzKeys)]), raw)
		attrs.PutInt(fuzzKeys[(int(k1)*7+3)%len(fuzzKeys)], n)
		attrs.PutDouble(fuzzKeys[(int(k2)*5+1)%len(fuzzKeys)], fl)
		if n%3 == 0 {
			s.Status().SetCode(ptrace.StatusCodeError)
		}
		e := s.Events().AppendEmpty()
		e.SetName(fuzzEvents[int(ev)%len(fuzzEvents)])
		e.Attributes().PutStr(fuzzEventKeys[int(ev)%len(fuzzEventKeys)], evVal)
		fuzzValue(e.Attributes().PutEmpty(fuzzEventKeys[(int(ev)+1)%len(fuzzEventKeys)]), raw)

		res := pcommon.NewResource()
		res.Attributes().PutStr("session.id", v2)
		ex := NewExtractor(Config{MaxTextBytes: int(maxText), EndAttribute: "agent_eval.session.end"})
		r := ex.Extract(res, pcommon.NewInstrumentationScope(), s)
		checkInvariants(t, r, ex.maxText)
		for _, c := range r.RequestedCalls {
			if c.Name == "" {
				t.Errorf("requested call without a name: %+v", c)
			}
		}
		if r.Class > session.ClassEvaluation {
			t.Errorf("class %d out of range", r.Class)
		}
		var d session.SpanRecord
		ex.ExtractDeferred(nil, &d, res, pcommon.NewInstrumentationScope(), s)
		completeOne(ex, &d)
		if !reflect.DeepEqual(r, d) {
			t.Errorf("ExtractDeferred then CompleteAll differs from Extract:\n%+v\n%+v", r, d)
		}
	})
}

// FuzzExtractDeferred feeds arbitrary input and output message lists (and a few of the
// attributes around them) to ExtractDeferred: completed, the record must be the one
// Extract writes, whatever the lists hold (malformed JSON, invalid UTF-8, lists over the
// caps, candidates anywhere). Seeds: testdata/fuzz/FuzzExtractDeferred.
func FuzzExtractDeferred(f *testing.F) {
	f.Add(`[{"role":"system","content":"s"},{"role":"user","parts":[{"type":"text","content":"hi"}]}]`, `[{"role":"assistant","content":"x"}]`, uint16(0), uint8(0))
	f.Add(`[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user" "content":"c"}]`, `nope`, uint16(8), uint8(1))
	f.Add(`{"messages":[{"type":"human","content":"q"}]}`, "", uint16(3), uint8(2))
	f.Add("[{\"role\":\"USER\",\"content\":\"caf\xe9\"},\"user\",1,null]", `[]`, uint16(1), uint8(3))
	f.Add(`[{"role":"user","content":[{"type":"text","text":"`+strings.Repeat("x", 300)+`"}]}]`, `{"role":"assistant"}`, uint16(64), uint8(4))
	f.Fuzz(func(t *testing.T, in, out string, maxText uint16, flags uint8) {
		s := ptrace.NewSpan()
		s.SetName("chat m")
		s.SetSpanID(pcommon.SpanID{1})
		attrs := s.Attributes()
		attrs.PutStr("gen_ai.operation.name", [...]string{"chat", "invoke_agent", "invoke_workflow", "execute_tool"}[flags%4])
		attrs.PutStr("gen_ai.input.messages", in)
		if out != "" {
			attrs.PutStr("gen_ai.output.messages", out)
		}
		if flags&4 != 0 {
			attrs.PutStr("gen_ai.usage.input_tokens", "many") // a problem before the input
		}
		if flags&8 != 0 {
			attrs.PutStr("gen_ai.tool.definitions", out) // problems after it
		}
		if flags&16 != 0 {
			attrs.PutStr("input.value", out)
		}
		if flags&32 != 0 {
			e := s.Events().AppendEmpty()
			e.SetName(fuzzEvents[int(flags>>6)%len(fuzzEvents)])
			e.Attributes().PutStr("content", out)
		}
		ex := NewExtractor(Config{MaxTextBytes: int(maxText)})
		want := ex.Extract(pcommon.NewResource(), pcommon.NewInstrumentationScope(), s)
		var got session.SpanRecord
		ex.ExtractDeferred(nil, &got, pcommon.NewResource(), pcommon.NewInstrumentationScope(), s)
		if len(got.Deferred.InputMessages) > min(ex.maxText, maxDeferredBytes) {
			t.Errorf("deferred %d bytes, over the cap", len(got.Deferred.InputMessages))
		}
		completeOne(ex, &got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("ExtractDeferred then CompleteAll differs from Extract:\n%+v\n%+v", want, got)
		}
		checkInvariants(t, got, ex.maxText)
	})
}

// FuzzParseArguments: the result is always valid JSON with valid UTF-8, isObject matches
// its shape, and parsing an object result again gives the same object.
func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{`{"a":1}`, ` { "a" : [1, 2] } `, `"{\"a\":1}"`, `{'a': True, 'b': (1, None)}`, `{"a": 1`,
		"plain", "\xff\xfe", `[{"a":1}]`, `{'a': 'it\'s'}`, `{'\x41': '\u00e9'}`, strings.Repeat("[", 20000), `1e999`, `{1: 2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, isObj := ParseArguments(raw)
		if strings.TrimSpace(raw) == "" {
			if out != nil || isObj {
				t.Fatalf("blank input gave %q", out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %q from %q", out, raw)
		}
		if !utf8.Valid(out) {
			t.Fatalf("invalid UTF-8 %q from %q", out, raw)
		}
		if isObj != (len(out) > 0 && out[0] == '{') {
			t.Fatalf("isObject=%v for %q", isObj, out)
		}
		if isObj {
			again, obj2 := ParseArguments(string(out))
			if !obj2 || string(again) != string(out) {
				t.Fatalf("not idempotent: %q -> %q", out, again)
			}
		}
	})
}
