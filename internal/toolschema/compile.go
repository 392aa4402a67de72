// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package toolschema // import "github.com/agenteval/agenteval-collector/internal/toolschema"

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a tool's parameters schema (JSON Schema draft-07), compiled once by Compile
// or a Cache. A Schema that could not be compiled has Err set and checks nothing.
type Schema struct {
	compiled *jsonschema.Schema
	// err is set when the schema could not be compiled: parameter checks are then not
	// evaluable ("schema_invalid").
	err error
	// keyed is true when the top level declares the object's keys (`properties`,
	// `patternProperties`, `additionalProperties` or `"type": "object"`): the key checks
	// (PARAMETER_HALLUCINATION, MISSING_REQUIRED_PARAM) then run on the declared keys.
	// Otherwise only the validator's own required/additionalProperties errors count.
	keyed       bool
	props       map[string]bool
	required    []string
	allowsExtra bool
	patterns    []*regexp.Regexp
}

// Err returns why the schema cannot be used (not JSON, not an object, not a valid
// schema), nil when it compiled.
func (si *Schema) Err() error { return si.err }

// Keyed reports whether the top level declares the object's keys (`properties`,
// `patternProperties`, `additionalProperties` or `"type": "object"`), so that key checks
// on the arguments (Known, Required) are meaningful.
func (si *Schema) Keyed() bool { return si.keyed }

// Required returns the top-level `required` keys, in schema order.
func (si *Schema) Required() []string { return si.required }

// Cache bounds the compiled schemas, keyed by the schema bytes (an LRU from
// hashicorp/golang-lru, safe for concurrent use).
type Cache struct {
	lru *lru.Cache[string, *Schema]
}

// NewCache returns a Cache of at most size schemas; size must be positive.
func NewCache(size int) (*Cache, error) {
	c, err := lru.New[string, *Schema](size)
	if err != nil {
		return nil, err
	}
	return &Cache{lru: c}, nil
}

// Len returns the number of schemas held.
func (c *Cache) Len() int { return c.lru.Len() }

// Get returns the compiled raw, compiling it at the first request.
func (c *Cache) Get(raw json.RawMessage) *Schema {
	key := string(raw)
	if si, ok := c.lru.Get(key); ok {
		return si
	}
	si := Compile(raw)
	c.lru.Add(key, si)
	return si
}

const schemaURL = "mem:///agenteval/tool-parameters.json"

// Check compiles a tool's parameters schema (JSON Schema draft-07) as the
// evaluators will, and returns why it cannot be used: not JSON, not an object, or not a
// valid schema (e.g. `"type": 5`, an external $ref). Configured registries call it so a bad
// schema is a configuration error rather than a run of schema_invalid results.
func Check(raw json.RawMessage) error {
	return Compile(raw).err
}

// Compile compiles raw (JSON Schema draft-07; external $refs are refused). A schema that
// does not compile is returned with Err set.
func Compile(raw json.RawMessage) *Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &Schema{err: fmt.Errorf("schema is not valid JSON: %w", err)}
	}
	si := &Schema{props: map[string]bool{}}
	obj, isObj := doc.(map[string]any)
	switch {
	case isObj:
	case doc == true:
		obj = map[string]any{}
	default:
		return &Schema{err: fmt.Errorf("schema is not a JSON object (got %s)", JSONKind(doc))}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	// Schemas come from traces: never follow a $ref to a file or URL (the standard
	// metaschemas are embedded in the library and still resolve).
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return &Schema{err: err}
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return &Schema{err: err}
	}
	si.compiled = sch
	if p, ok := obj["properties"].(map[string]any); ok {
		si.keyed = true
		for k := range p {
			si.props[k] = true
		}
	}
	if p, ok := obj["patternProperties"].(map[string]any); ok {
		si.keyed = true
		for k := range p {
			if re, err := regexp.Compile(k); err == nil {
				si.patterns = append(si.patterns, re)
			}
		}
	}
	if ap, ok := obj["additionalProperties"]; ok {
		si.keyed = true
		switch ap := ap.(type) {
		case bool:
			si.allowsExtra = ap
		case map[string]any:
			// A schema for the additional keys: they are allowed (and validated).
			si.allowsExtra = true
		}
	}
	if t, ok := obj["type"].(string); ok && t == "object" {
		si.keyed = true
	}
	_, hasProps := obj["properties"]
	_, hasPatterns := obj["patternProperties"]
	_, hasAP := obj["additionalProperties"]
	if !hasProps && !hasPatterns && !hasAP {
		// {"type": "object"} alone declares no key: JSON Schema allows any (an agent-as-tool
		// or a framework's catch-all tool), so no argument is a hallucination.
		si.allowsExtra = true
	}
	if r, ok := obj["required"].([]any); ok {
		for _, k := range r {
			if ks, ok := k.(string); ok {
				si.required = append(si.required, ks)
			}
		}
	}
	return si
}

// refuseLoader refuses every external $ref.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not followed", url)
}

// Known reports whether key is a declared parameter: a property, a match of a
// patternProperties pattern, or any key when additional properties are allowed.
func (si *Schema) Known(key string) bool {
	if si.props[key] || si.allowsExtra {
		return true
	}
	for _, re := range si.patterns {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}

var printer = message.NewPrinter(language.English)

// ViolationKind classifies a Violation.
type ViolationKind uint8

const (
	// InvalidValue: a parameter's value (or, without Parameter, the object as a whole)
	// breaks the schema.
	InvalidValue ViolationKind = iota
	// MissingRequired: a required parameter (root `required`, `dependencies`,
	// `dependentRequired`) is absent.
	MissingRequired
	// Unexpected: a parameter that root `additionalProperties` forbids.
	Unexpected
)

// Violation is one fault that the validator found in a tool call's arguments.
type Violation struct {
	Kind      ViolationKind
	Parameter string // top-level parameter; "" for a violation of the object as a whole
	Detail    string // the validator's message (English), for InvalidValue
}

// Validate runs the JSON Schema validator over args and turns its leaf errors into
// violations: per top-level parameter one InvalidValue (the smallest message when
// several keywords fail), root `required`/`dependencies` as MissingRequired, root
// `additionalProperties` as Unexpected, any other root violation as one InvalidValue
// without parameter. Parameters in skip (already reported by the caller's key checks)
// are left out, and those reported here are added to skip; a nil skip is none (and a
// set of Validate's own is made, only when args are invalid). si must have compiled.
func (si *Schema) Validate(args map[string]any, skip map[string]bool) []Violation {
	err := si.compiled.Validate(args)
	if err == nil {
		return nil
	}
	if skip == nil {
		skip = map[string]bool{}
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Violation{{Kind: InvalidValue, Detail: err.Error()}}
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(ve, &leaves)
	var out []Violation
	perParam := map[string]string{}
	rootMsg := ""
	addKey := func(k ViolationKind, keys []string) {
		for _, key := range keys {
			if !skip[key] {
				skip[key] = true
				out = append(out, Violation{Kind: k, Parameter: key})
			}
		}
	}
	for _, l := range leaves {
		msg := l.ErrorKind.LocalizedString(printer)
		if len(l.InstanceLocation) == 0 {
			switch k := l.ErrorKind.(type) {
			case *kind.Required:
				addKey(MissingRequired, k.Missing)
			case *kind.Dependency:
				addKey(MissingRequired, k.Missing)
			case *kind.DependentRequired:
				addKey(MissingRequired, k.Missing)
			case *kind.AdditionalProperties:
				addKey(Unexpected, k.Properties)
			default:
				if rootMsg == "" || msg < rootMsg {
					rootMsg = msg
				}
			}
			continue
		}
		p := l.InstanceLocation[0]
		if skip[p] {
			continue
		}
		if cur, ok := perParam[p]; !ok || msg < cur {
			perParam[p] = msg
		}
	}
	params := make([]string, 0, len(perParam))
	for p := range perParam {
		params = append(params, p)
	}
	sort.Strings(params)
	for _, p := range params {
		out = append(out, Violation{Kind: InvalidValue, Parameter: p, Detail: perParam[p]})
	}
	if rootMsg != "" {
		out = append(out, Violation{Kind: InvalidValue, Detail: rootMsg})
	}
	return out
}

// collectLeaves gathers the innermost errors; anyOf/oneOf failures are kept whole
// (their branches' errors are alternatives, not separate faults).
func collectLeaves(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		*out = append(*out, e)
		return
	}
	if len(e.Causes) == 0 {
		*out = append(*out, e)
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, out)
	}
}

// JSONKind names the JSON type of a decoded value (encoding/json types): "null",
// "boolean", "string", "array", "object" or "number".
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "number"
	}
}
