// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package toolschema // import "github.com/agenteval/agenteval-collector/internal/toolschema"

import "math"

// fastSchema is a schema made only of the keywords most tool schemas use (type,
// properties, required, additionalProperties: false, items, string enum, annotations),
// checked without the validator: Validate runs the validator only on arguments that
// fastSchema cannot show valid. It never decides that arguments are invalid, so the
// violations (and their messages) are always the validator's.
type fastSchema struct {
	typ      func(any) bool // the type check; nil for any type
	enum     map[string]bool
	props    map[string]*fastSchema
	required []string
	closed   bool // additionalProperties: false
	items    *fastSchema
}

// draft07IDs are the $schema values that name the draft the Compiler defaults to.
var draft07IDs = map[string]bool{
	"http://json-schema.org/draft-07/schema#": true,
	"http://json-schema.org/draft-07/schema":  true,
}

// newFastSchema returns doc (a decoded schema document) as a fastSchema, or nil when
// it uses any keyword or form beyond those fastSchema checks.
func newFastSchema(doc any, root bool) *fastSchema {
	if doc == true && root {
		return &fastSchema{}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	f := &fastSchema{}
	for k, v := range obj {
		switch k {
		case "description", "title", "default", "examples", "$comment":
			// annotations: no assertion
		case "$schema":
			if s, ok := v.(string); !ok || !root || !draft07IDs[s] {
				return nil
			}
		case "type":
			s, ok := v.(string)
			if !ok {
				return nil
			}
			if f.typ = typeFromName(s); f.typ == nil {
				return nil
			}
		case "enum":
			l, ok := v.([]any)
			if !ok {
				return nil
			}
			f.enum = make(map[string]bool, len(l))
			for _, e := range l {
				s, ok := e.(string)
				if !ok {
					return nil
				}
				f.enum[s] = true
			}
		case "properties":
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			f.props = make(map[string]*fastSchema, len(m))
			for name, ps := range m {
				if f.props[name] = newFastSchema(ps, false); f.props[name] == nil {
					return nil
				}
			}
		case "required":
			l, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, e := range l {
				s, ok := e.(string)
				if !ok {
					return nil
				}
				f.required = append(f.required, s)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			f.closed = !b
		case "items":
			if f.items = newFastSchema(v, false); f.items == nil {
				return nil
			}
		default:
			return nil
		}
	}
	return f
}

// typeFromName returns the check of a JSON Schema type name, nil for an unknown name.
func typeFromName(name string) func(any) bool {
	switch name {
	case "null":
		return func(v any) bool { return v == nil }
	case "boolean":
		return func(v any) bool { _, ok := v.(bool); return ok }
	case "string":
		return func(v any) bool { _, ok := v.(string); return ok }
	case "number":
		return func(v any) bool { f, ok := v.(float64); return ok && finite(f) }
	case "integer":
		return func(v any) bool { f, ok := v.(float64); return ok && finite(f) && f == math.Trunc(f) }
	case "array":
		return func(v any) bool { _, ok := v.([]any); return ok }
	case "object":
		return func(v any) bool { _, ok := v.(map[string]any); return ok }
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// valid reports whether v (decoded by encoding/json: float64 numbers) is certainly
// valid against f; false means that the validator must decide.
func (f *fastSchema) valid(v any) bool {
	if f.typ != nil && !f.typ(v) {
		return false
	}
	if f.enum != nil {
		s, ok := v.(string)
		if !ok || !f.enum[s] {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range f.required {
			if _, ok := v[k]; !ok {
				return false
			}
		}
		for k, e := range v {
			p, ok := f.props[k]
			if !ok {
				if f.closed {
					return false
				}
				continue
			}
			if !p.valid(e) {
				return false
			}
		}
	case []any:
		if f.items != nil {
			for _, e := range v {
				if !f.items.valid(e) {
					return false
				}
			}
		}
	case float64:
		return finite(v)
	case nil, bool, string:
	default:
		return false // not a type encoding/json decodes to
	}
	return true
}
