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
//   - a ReAsk flat map {param: "type"} (every value a string; told from a schema made of
//     strings by its values, see isFlatParamMap, so a parameter may be named "type") becomes
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

// isFlatParamMap reports whether m is a ReAsk flat map {param: "type"} rather than a JSON
// Schema. The flat form has a string, the type name, for every value, so a map with any
// other value is a schema. Among maps of strings the values decide, not the keys, because a
// parameter may be named after a schema keyword (a ticket's `type`, a `required` flag, a
// `title`). Such a map is a schema when it looks like one:
//   - its `type` is a JSON Schema type name and every other key is a string-valued schema
//     keyword whose value is not a type name: {"type":"string"},
//     {"type":"object","description":"No arguments"}, {"type":"string","format":"date"};
//   - or a structural keyword (`type`, `$ref`, `$schema`, `required`, `properties`...)
//     holds a string that is no type name: {"$ref":"#/$defs/Args"}, {"type":"function",
//     "name":"get_time"} (an invalid schema, reported as such by Compile).
//
// Otherwise it is flat: {"title":"string","type":"string"},
// {"user":"string","required":"boolean"}, {"when":"datetime"}.
func isFlatParamMap(m map[string]any) bool {
	for _, v := range m {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	if typ, ok := m["type"].(string); ok && jsonSchemaTypes[normType(typ)] {
		annotated := true
		for k, v := range m {
			if k != "type" && (!stringKeywords[k] || isTypeName(v.(string))) {
				annotated = false
				break
			}
		}
		if annotated {
			return false
		}
	}
	for k, v := range m {
		if structuralKeywords[k] && !isTypeName(v.(string)) {
			return false
		}
	}
	return true
}

// structuralKeywords are the top-level keys that make a JSON Schema; in a map of strings
// each must hold something other than a type name for the map to be one.
var structuralKeywords = map[string]bool{
	"type": true, "properties": true, "$schema": true, "anyOf": true, "oneOf": true,
	"allOf": true, "$ref": true, "required": true, "additionalProperties": true,
}

// stringKeywords are the JSON Schema keywords (draft-04 to 2020-12, and OpenAPI's example)
// that may hold a string: what may stand beside `type` in a schema made of strings.
var stringKeywords = map[string]bool{
	"title": true, "description": true, "format": true, "pattern": true, "default": true,
	"const": true, "example": true, "$comment": true, "$id": true, "$schema": true, "$ref": true,
	"$anchor": true, "$dynamicRef": true, "$dynamicAnchor": true, "$recursiveRef": true,
	"contentEncoding": true, "contentMediaType": true,
}

var jsonSchemaTypes = map[string]bool{
	"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true,
}

// flatTypeAliases are the other type names a flat map may use, with their JSON Schema type.
var flatTypeAliases = map[string]string{
	"str": "string", "int": "integer", "float": "number", "double": "number", "bool": "boolean",
	"dict": "object", "map": "object", "list": "array",
}

func normType(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// isTypeName reports whether s names a type of the flat form: a JSON Schema type or one of
// flatTypeAliases, in any case.
func isTypeName(s string) bool {
	t := normType(s)
	_, alias := flatTypeAliases[t]
	return jsonSchemaTypes[t] || alias
}

func flatMapToSchema(m map[string]any) map[string]any {
	props := make(map[string]any, len(m))
	required := make([]any, 0, len(m))
	for k, v := range m {
		typ := normType(v.(string))
		if alias, ok := flatTypeAliases[typ]; ok {
			typ = alias
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
