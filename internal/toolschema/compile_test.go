// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package toolschema

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	require.NoError(t, Check(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)))
	require.NoError(t, Check(json.RawMessage(`true`)))
	assert.ErrorContains(t, Check(json.RawMessage(`{"type":`)), "not valid JSON")
	assert.ErrorContains(t, Check(json.RawMessage(`[1]`)), "not a JSON object (got array)")
	assert.Error(t, Check(json.RawMessage(`{"type":5}`)))
	assert.ErrorContains(t, Check(json.RawMessage(`{"$ref":"https://example.com/s.json"}`)), "not followed")
}

func TestSchemaKeysAndValidate(t *testing.T) {
	s := Compile(json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"n":{"type":"integer"}},
		"patternProperties":{"^x_":{}},"required":["city"],"additionalProperties":false}`))
	require.NoError(t, s.Err())
	assert.True(t, s.Keyed())
	assert.Equal(t, []string{"city"}, s.Required())
	assert.True(t, s.Known("n"))
	assert.True(t, s.Known("x_extra"))
	assert.False(t, s.Known("other"))

	skip := map[string]bool{}
	got := s.Validate(map[string]any{"n": "three", "other": 1.0}, skip)
	assert.Equal(t, []Violation{
		{Kind: MissingRequired, Parameter: "city"},
		{Kind: Unexpected, Parameter: "other"},
		{Kind: InvalidValue, Parameter: "n", Detail: "got string, want integer"},
	}, got)
	assert.Equal(t, map[string]bool{"city": true, "other": true}, skip)

	open := Compile(json.RawMessage(`{"type":"object"}`))
	assert.True(t, open.Keyed())
	assert.True(t, open.Known("anything"), "an object schema without keys allows any argument")
}

func TestCache(t *testing.T) {
	c, err := NewCache(2)
	require.NoError(t, err)
	a := json.RawMessage(`{"type":"object"}`)
	assert.Same(t, c.Get(a), c.Get(a))
	c.Get(json.RawMessage(`{"type":"string"}`))
	c.Get(json.RawMessage(`{"type":"number"}`))
	assert.Equal(t, 2, c.Len())
	_, err = NewCache(0)
	assert.Error(t, err)
}

func TestJSONKind(t *testing.T) {
	for v, want := range map[any]string{nil: "null", true: "boolean", "s": "string", 1.5: "number"} {
		assert.Equal(t, want, JSONKind(v))
	}
	assert.Equal(t, "array", JSONKind([]any{}))
	assert.Equal(t, "object", JSONKind(map[string]any{}))
}
