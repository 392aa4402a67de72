// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlatSchemaAgreesWithTheValidator: arguments the flat-schema fast path calls valid are
// valid for the JSON Schema validator, and the schemas it does not understand are left to
// the validator.
func TestFlatSchemaAgreesWithTheValidator(t *testing.T) {
	flat := []string{
		`{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"],"additionalProperties":false}`,
		`{"type":"object","description":"d","properties":{"id":{"type":"string","description":"the id"},"n":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"}}}`,
		`{"properties":{"n":{"type":"number","title":"N"}},"required":["n","b"],"additionalProperties":true}`,
		`{"type":"object"}`,
		`{}`,
		`true`,
	}
	notFlat := []string{
		`{"type":"object","properties":{"id":{"type":"string","minLength":3}}}`,
		`{"type":"object","properties":{"n":{"type":"integer"}}}`,
		`{"type":"object","properties":{"n":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"o":{"type":"object"}}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`,
		`{"type":"object","properties":{"id":{"enum":["a"]}}}`,
		`{"type":"object","properties":{"id":{}}}`,
	}
	for _, raw := range notFlat {
		si := compileSchema(json.RawMessage(raw))
		require.NoError(t, si.err, raw)
		assert.Nil(t, si.flat, raw)
	}
	keys := []string{"id", "note", "n", "b", "z", "x"}
	values := []any{"s", "", 1.5, 2.0, math.Copysign(0, -1), true, false, nil, []any{}, []any{"a"}, map[string]any{}, map[string]any{"k": 1.0}}
	r := rand.New(rand.NewPCG(21, 22))
	valid := 0
	for _, raw := range flat {
		si := compileSchema(json.RawMessage(raw))
		require.NoError(t, si.err, raw)
		require.NotNil(t, si.flat, raw)
		for range 3000 {
			args := map[string]any{}
			for range r.IntN(4) {
				args[keys[r.IntN(len(keys))]] = values[r.IntN(len(values))]
			}
			if si.flat.valid(args) {
				valid++
				require.NoError(t, si.compiled.Validate(args), "%s: %v", raw, args)
			}
		}
	}
	assert.Greater(t, valid, 1000)
}

// TestDecodeFlatObjectIsUnmarshal: whatever the fast path of decodeJSON decodes,
// json.Unmarshal decodes to the same value.
func TestDecodeFlatObjectIsUnmarshal(t *testing.T) {
	pieces := []string{"{", "}", `"id"`, `"note"`, `"12345"`, `""`, ":", ",", " ", "\t", "\n", `"a\"b"`, `"é"`, "1", "null", `"x`, "[]", `"<&>"`, "\x01", `"\u0041"`}
	r := rand.New(rand.NewPCG(23, 24))
	fast := 0
	inputs := []string{`{}`, ` { } `, `{"id":"12345"}`, `{"id":"1","id":"2"}`, `{"a" : "b" ,"c":"d"}`, `{"a":"b",}`, `{"a":"b"}x`}
	for range 200000 {
		s := "{"
		for range r.IntN(10) {
			s += pieces[r.IntN(len(pieces))]
		}
		if r.IntN(2) == 0 {
			s += "}"
		}
		inputs = append(inputs, s)
	}
	for _, s := range inputs {
		m, ok := decodeFlatObject([]byte(s))
		if !ok {
			continue
		}
		fast++
		var want any
		require.NoError(t, json.Unmarshal([]byte(s), &want), "%q", s)
		require.Equal(t, want, any(m), "%q", s)
	}
	assert.Greater(t, fast, 1000)
	for _, s := range []string{`{"a":"b",}`, `{"a":"b"}x`, `{"a":1}`, `{"a":"\n"}`, `[]`, ``} {
		_, ok := decodeFlatObject([]byte(s))
		assert.False(t, ok, s)
	}
}
