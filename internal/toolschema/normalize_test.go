// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package toolschema

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		want    string
		wantErr string
	}{
		{name: "nil", in: nil, want: ""},
		{name: "empty string", in: "  ", want: ""},
		{
			name: "reask flat map: every key required, no extras",
			in:   map[string]any{"sql": "string", "limit": "int"},
			want: `{"additionalProperties":false,"properties":{"limit":{"type":"integer"},"sql":{"type":"string"}},"required":["limit","sql"],"type":"object"}`,
		},
		{
			name: "flat map with unknown type name leaves the property unconstrained",
			in:   `{"when":"datetime"}`,
			want: `{"additionalProperties":false,"properties":{"when":{}},"required":["when"],"type":"object"}`,
		},
		{
			name: "json schema kept",
			in:   `{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`,
			want: `{"properties":{"a":{"type":"number"}},"required":["a"],"type":"object"}`,
		},
		{
			name: "gemini upper-case types lowered at every level, incl. a property named type",
			in:   `{"type":"OBJECT","properties":{"type":{"type":"STRING"},"tags":{"type":"ARRAY","items":{"type":"STRING"}}}}`,
			want: `{"properties":{"tags":{"items":{"type":"string"},"type":"array"},"type":{"type":"string"}},"type":"object"}`,
		},
		{
			name: "flat map with a parameter named type",
			in:   `{"title":"string","type":"string"}`,
			want: `{"additionalProperties":false,"properties":{"title":{"type":"string"},"type":{"type":"string"}},"required":["title","type"],"type":"object"}`,
		},
		{
			name: "flat map with a parameter named required",
			in:   `{"user":"string","required":"boolean"}`,
			want: `{"additionalProperties":false,"properties":{"required":{"type":"boolean"},"user":{"type":"string"}},"required":["required","user"],"type":"object"}`,
		},
		{
			name: "flat map: keyword-named parameters with alias and unknown type names",
			in:   map[string]any{"type": "int", "properties": "dict", "due": "datetime"},
			want: `{"additionalProperties":false,"properties":{"due":{},"properties":{"type":"object"},"type":{"type":"integer"}},"required":["due","properties","type"],"type":"object"}`,
		},
		{name: "string schema kept", in: `{"type":"string"}`, want: `{"type":"string"}`},
		{name: "gemini string schema kept", in: `{"type":"STRING"}`, want: `{"type":"string"}`},
		{name: "object schema of annotations kept", in: `{"type":"object","title":"Args","description":"No arguments"}`, want: `{"type":"object","title":"Args","description":"No arguments"}`},
		{name: "string schema with a format kept", in: `{"type":"string","format":"date"}`, want: `{"type":"string","format":"date"}`},
		{name: "$ref schema of strings kept", in: `{"$ref":"#/definitions/A"}`, want: `{"$ref":"#/definitions/A"}`},
		{name: "a schema keyword holding no type name keeps a schema (invalid, reported by Compile)", in: `{"type":"function","name":"get_time"}`, want: `{"type":"function","name":"get_time"}`},
		{name: "not an object", in: `[1,2]`, wantErr: "not a JSON object"},
		{name: "not json", in: `{oops`, wantErr: "not a JSON object"},
		{name: "wrong go type", in: 42, wantErr: "must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Normalize(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, got)
				return
			}
			assert.JSONEq(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}
