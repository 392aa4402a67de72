// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package toolschema

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fastSchemas are schemas of the forms fastSchema checks; slowSchemas use more.
var (
	fastSchemas = []string{
		`true`,
		`{}`,
		`{"type":"object"}`,
		`{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"],"additionalProperties":false}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","description":"d","properties":{"n":{"type":"integer","description":"x","default":1},"x":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"}}}`,
		`{"type":"object","properties":{"unit":{"type":"string","enum":["c","f"]},"tags":{"type":"array","items":{"type":"string"}},"any":{},"o":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"],"additionalProperties":false}},"additionalProperties":true,"required":["unit"]}`,
		`{"properties":{"e":{"enum":["a","b"]},"l":{"type":"array"}},"title":"t","examples":[{"e":"a"}],"$comment":"c"}`,
	}
	slowSchemas = []string{
		`{"type":"object","properties":{"s":{"type":"string","minLength":2}}}`,
		`{"type":"object","properties":{"d":{"type":"string","format":"date"}}}`,
		`{"type":"object","properties":{"n":{"type":["integer","null"]}}}`,
		`{"type":"object","properties":{"n":{"enum":[1,2]}}}`,
		`{"type":"object","patternProperties":{"^x_":{}},"additionalProperties":false}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
		`{"type":"object","properties":{"a":{"$ref":"#/definitions/a"}},"definitions":{"a":{"type":"string"}}}`,
		`{"type":"object","x-vendor":true}`,
		`{"type":"object","properties":{"l":{"type":"array","items":[{"type":"string"}]}}}`,
	}
	fastArgs = []string{
		`{}`,
		`{"id":"a"}`,
		`{"id":"a","note":"b"}`,
		`{"id":1}`,
		`{"id":"a","other":1}`,
		`{"note":"b"}`,
		`{"n":1,"x":1.5,"b":true,"z":null}`,
		`{"n":1.5}`,
		`{"n":1e300}`,
		`{"n":"1"}`,
		`{"x":"1"}`,
		`{"b":0}`,
		`{"z":false}`,
		`{"unit":"c","tags":["a","b"]}`,
		`{"unit":"k"}`,
		`{"unit":"c","tags":["a",1]}`,
		`{"unit":"c","tags":"a"}`,
		`{"unit":"c","o":{"k":"v"}}`,
		`{"unit":"c","o":{"k":"v","j":1}}`,
		`{"unit":"c","o":{}}`,
		`{"unit":"c","o":[]}`,
		`{"unit":"c","any":[1,{"a":null}],"extra":{"deep":[1]}}`,
		`{"e":"a","l":[1,"x"]}`,
		`{"e":"c"}`,
		`{"e":1}`,
		`{"s":"a","d":"2024-13-45","a":1,"x_1":2,"y":"z","l":["a"]}`,
	}
)

// TestFastSchemaAgreesWithValidator checks that Validate gives the validator's answer
// whether or not fastSchema takes part: every schema, fast or not, against every
// argument object.
func TestFastSchemaAgreesWithValidator(t *testing.T) {
	for _, raw := range fastSchemas {
		require.NotNil(t, Compile(json.RawMessage(raw)).fast, "fast form: %s", raw)
	}
	for _, raw := range slowSchemas {
		require.NoError(t, Compile(json.RawMessage(raw)).Err(), raw)
		assert.Nil(t, Compile(json.RawMessage(raw)).fast, "not a fast form: %s", raw)
	}
	took := 0
	for _, raw := range append(append([]string{}, fastSchemas...), slowSchemas...) {
		s := Compile(json.RawMessage(raw))
		require.NoError(t, s.Err(), raw)
		slow := *s
		slow.fast = nil
		for _, a := range fastArgs {
			var args map[string]any
			require.NoError(t, json.Unmarshal([]byte(a), &args))
			name := fmt.Sprintf("%s %s", raw, a)
			want := slow.Validate(args, map[string]bool{})
			// as sets: the validator lists a root additionalProperties error's keys in map order
			assert.ElementsMatch(t, want, s.Validate(args, map[string]bool{}), name)
			if s.fast != nil && s.fast.valid(args) {
				took++
				assert.Empty(t, want, "fast path says valid: %s", name)
			}
		}
	}
	assert.Positive(t, took, "the fast path decided some arguments")
}

func BenchmarkValidate(b *testing.B) {
	s := Compile(json.RawMessage(fastSchemas[3]))
	var args map[string]any
	require.NoError(b, json.Unmarshal([]byte(`{"id":"a","note":"b"}`), &args))
	for _, tc := range []struct {
		name string
		fast *fastSchema
	}{{"validator", nil}, {"fast", s.fast}} {
		b.Run(tc.name, func(b *testing.B) {
			si := *s
			si.fast = tc.fast
			b.ReportAllocs()
			for b.Loop() {
				if v := si.Validate(args, nil); v != nil {
					b.Fatal(v)
				}
			}
		})
	}
}
