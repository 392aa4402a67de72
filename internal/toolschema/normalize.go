// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package toolschema // import "github.com/agenteval/agenteval-collector/internal/toolschema"

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Normalize turns a tool's parameter description, as configured or as found in
// a trace, into a JSON Schema (draft-07) object:
//   - a JSON Schema (an object with "type", "properties", "$schema", "anyOf"... at the top)
//     is kept, with Gemini-style upper-case type names ("OBJECT", "STRING") lower-cased
//     at every level (docs/decisions/conventions.md, §8.8);
//   - a ReAsk flat map {param: "type"} (every value a string) becomes
//     {"type":"object","properties":{param:{"type":type}},"required":[all keys],
//     "additionalProperties":false} (docs/architecture.md §3); unknown type names become
//     unconstrained properties ({}).
//
// v is a decoded JSON value (map[string]any) or raw JSON ([]byte, json.RawMessage,
// string). It returns nil for an absent or empty input, and an error for a value that is
// neither an object nor valid JSON text of one.
func Normalize(v any) (json.RawMessage, error) {
	var m map[string]any
	switch t := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		m = t
	case json.RawMessage:
		return Normalize([]byte(t))
	case string:
		return Normalize([]byte(t))
	case []byte:
		if len(strings.TrimSpace(string(t))) == 0 {
			return nil, nil
		}
		if err := json.Unmarshal(t, &m); err != nil {
			return nil, fmt.Errorf("tool schema is not a JSON object: %w", err)
		}
	default:
		return nil, fmt.Errorf("tool schema must be an object, got %T", v)
	}
	if len(m) == 0 {
		return nil, nil
	}
	if isFlatParamMap(m) {
		m = flatMapToSchema(m)
	} else {
		lowerSchemaTypes(m)
	}
	return json.Marshal(m)
}

// schemaKeywords are top-level keys that mark a value as a JSON Schema rather than a
// ReAsk flat map.
var schemaKeywords = map[string]bool{
	"type": true, "properties": true, "$schema": true, "anyOf": true, "oneOf": true,
	"allOf": true, "$ref": true, "required": true, "additionalProperties": true,
}

func isFlatParamMap(m map[string]any) bool {
	for k, v := range m {
		if schemaKeywords[k] {
			return false
		}
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

var jsonSchemaTypes = map[string]bool{
	"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true,
}

func flatMapToSchema(m map[string]any) map[string]any {
	props := make(map[string]any, len(m))
	required := make([]any, 0, len(m))
	for k, v := range m {
		typ := strings.ToLower(strings.TrimSpace(v.(string)))
		switch typ {
		case "str":
			typ = "string"
		case "int":
			typ = "integer"
		case "float", "double":
			typ = "number"
		case "bool":
			typ = "boolean"
		case "dict", "map":
			typ = "object"
		case "list":
			typ = "array"
		}
		if jsonSchemaTypes[typ] {
			props[k] = map[string]any{"type": typ}
		} else {
			props[k] = map[string]any{}
		}
		required = append(required, k)
	}
	sortAny(required)
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

// lowerSchemaTypes lower-cases "type" values (string or list) in a schema tree.
func lowerSchemaTypes(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if k == "type" {
				switch tv := val.(type) {
				case string:
					t[k] = strings.ToLower(tv)
					continue
				case []any:
					for i, e := range tv {
						if s, ok := e.(string); ok {
							tv[i] = strings.ToLower(s)
						}
					}
					continue
				}
			}
			// A property named "type" holds a schema: descend into it.
			lowerSchemaTypes(val)
		}
	case []any:
		for _, e := range t {
			lowerSchemaTypes(e)
		}
	}
}

func sortAny(s []any) {
	sort.Slice(s, func(i, j int) bool { return s[i].(string) < s[j].(string) })
}
