// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// fjCheck decodes data with the fast reader and, when it accepts, requires json.Unmarshal
// to accept too (no error, not even a type error) and to decode the same value. It
// returns whether the fast reader accepted.
func fjCheck(t testing.TB, data []byte) (accepted int) {
	t.Helper()
	var m, wm exJMsg
	if exFastMsg(data, &m) {
		accepted++
		require.NoError(t, json.Unmarshal(data, &wm), "%q", data)
		if !reflect.DeepEqual(m, wm) {
			t.Fatalf("exJMsg of %q:\nfast %#v\njson %#v", data, m, wm)
		}
	}
	var p, wp exJPart
	if exFastPart(data, &p) {
		accepted++
		require.NoError(t, json.Unmarshal(data, &wp), "%q", data)
		if !reflect.DeepEqual(p, wp) {
			t.Fatalf("exJPart of %q:\nfast %#v\njson %#v", data, p, wp)
		}
	}
	var ps, wps []exJPart
	if exFastParts(data, &ps) {
		accepted++
		require.NoError(t, json.Unmarshal(data, &wps), "%q", data)
		if !reflect.DeepEqual(ps, wps) {
			t.Fatalf("[]exJPart of %q:\nfast %#v\njson %#v", data, ps, wps)
		}
	}
	// exRawString against json.Unmarshal into a string.
	s, ok := exRawString(data)
	var ws string
	werr := json.Unmarshal(data, &ws)
	if exFirstByte(data) == '"' {
		require.Equal(t, werr == nil, ok, "%q", data)
		require.Equal(t, ws, s, "%q", data)
	} else {
		require.False(t, ok, "%q", data)
	}
	return accepted
}

func TestFastJSONCases(t *testing.T) {
	tests := []struct {
		name string
		data string
		fast bool // exFastMsg (an object) or exFastParts (an array) decodes it, else declines
	}{
		{"genai message", `{"role":"user","parts":[{"type":"text","content":"hi"}]}`, true},
		{"openai chat with tool calls", `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`, true},
		{"empty parts", `{"role":"user","parts":[]}`, true},
		{"null parts", `{"role":"user","parts":null}`, true},
		{"null string field", `{"role":null,"type":"x"}`, true},
		{"null raw field", `{"content":null,"id":null}`, true},
		{"escapes", `{"role":"us\u0065r","name":"a\"b\\c\/d\b\f\n\r\t","content":"x\ny"}`, true},
		{"surrogates", `{"name":"\ud83d\ude00 \ud800 \udc00x \ud800\u0041"}`, true},
		{"invalid utf-8", "{\"name\":\"a\xffb\xc3\"}", true},
		{"unknown keys of every type", `{"role":"user","index":0,"x":[1,-2.5e+3,true,false,null,{"a":[]}],"y":{}}`, true},
		{"kwargs", `{"lc":1,"type":"constructor","id":["langchain","schema","messages","HumanMessage"],"kwargs":{"content":"hi","type":"human"}}`, true},
		{"bedrock blocks", `[{"text":"a"},{"toolUse":{"toolUseId":"t1","name":"f","input":{"a":1}}},{"reasoningContent":{"reasoningText":{"text":"r","signature":"s"}}}]`, true},
		{"gemini", `[{"function_call":{"id":"1","name":"f","args":{}}},{"functionCall":{"name":"g"}},{"text":"t","thought":true}]`, true},
		{"whitespace", " \t\n{ \"role\" : \"user\" , \"parts\" : [ ] } \r\n", true},
		{"numbers", `{"a":0,"b":-0.0,"c":1e5,"d":1E-5,"e":12.50}`, true},
		{"duplicate field", `{"role":"user","role":"assistant"}`, false},
		{"duplicate list", `{"parts":[{"type":"text"}],"parts":[{"content":"x"}]}`, false},
		{"case-insensitive key", `{"Role":"user"}`, false},
		{"kelvin sign key", "{\"\u212awargs\":{\"role\":\"user\"}}", false},
		{"escaped key", `{"r\u006fle":"user"}`, false},
		{"type error", `{"role":1,"parts":[{"type":"text"}]}`, false},
		{"part not an object", `{"parts":["hello"]}`, false},
		{"null part", `{"parts":[null]}`, false},
		{"bool as string", `[{"thought":"yes"}]`, false},
		{"trailing garbage", `{"role":"user"} x`, false},
		{"two values", `{"role":"user"}{}`, false},
		{"bad number", `{"a":01}`, false},
		{"bad number 2", `{"a":1.}`, false},
		{"bad number 3", `{"a":-}`, false},
		{"bad literal", `{"a":nul}`, false},
		{"control char", "{\"a\":\"x\x01\"}", false},
		{"bad escape", `{"a":"\x"}`, false},
		{"single-quote escape", `{"a":"\'"}`, false},
		{"short unicode escape", `{"a":"\u12"}`, false},
		{"trailing comma", `{"a":1,}`, false},
		{"unterminated", `{"a":"x`, false},
		{"deep", strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100), false},
		{"string", `"just text"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			fjCheck(t, data)
			var accepted bool
			switch exFirstByte(data) {
			case '{':
				accepted = exFastMsg(data, &exJMsg{})
			case '[':
				accepted = exFastParts(data, new([]exJPart))
			}
			require.Equal(t, tt.fast, accepted)
		})
	}
}

// fjFixtureValues returns every JSON-looking string attribute and event attribute of the
// fixtures, and the elements of those that are arrays.
func fjFixtureValues(t testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join(extFixtureDir, "*.otlp.json"))
	require.NoError(t, err)
	var out [][]byte
	add := func(attrs pcommon.Map) {
		attrs.Range(func(_ string, v pcommon.Value) bool {
			if v.Type() != pcommon.ValueTypeStr {
				return true
			}
			s := v.Str()
			if c := exFirstByte([]byte(s)); c != '{' && c != '[' && c != '"' {
				return true
			}
			out = append(out, []byte(s))
			if elems, err := exArrayElems([]byte(s), nil); err == nil {
				for _, e := range elems {
					out = append(out, []byte(s[e.a:e.b]))
				}
			}
			return true
		})
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(data)
		require.NoError(t, err)
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					add(sp.Attributes())
					for e := 0; e < sp.Events().Len(); e++ {
						add(sp.Events().At(e).Attributes())
					}
				}
			}
		}
	}
	return out
}

// TestFastJSONFixtures compares the fast reader with encoding/json on every JSON value
// of the recorded fixtures, and requires it to take most of them.
func TestFastJSONFixtures(t *testing.T) {
	values := fjFixtureValues(t)
	require.NotEmpty(t, values)
	accepted := 0
	for _, v := range values {
		if fjCheck(t, v) > 0 {
			accepted++
		}
	}
	t.Logf("fast reader accepted %d of %d fixture values", accepted, len(values))
	require.Greater(t, accepted, len(values)/2)
}

// FuzzFastJSON checks that whatever the fast reader accepts, encoding/json decodes
// without error into the same value.
func FuzzFastJSON(f *testing.F) {
	for _, v := range fjFixtureValues(f) {
		if len(v) < 4096 {
			f.Add(v)
		}
	}
	f.Add([]byte(`{"role":"user","parts":[{"type":"text","content":"hi \u00e9\ud83d\ude00"}],"Kwargs":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fjCheck(t, data)
	})
}
