// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

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

// schemaInfo is a tool's parameters schema, compiled once and kept in the Evaluator's
// bounded cache (keyed by the schema bytes).
type schemaInfo struct {
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

// schemaCache bounds the compiled schemas (an LRU from hashicorp/golang-lru, safe for
// concurrent use).
type schemaCache struct {
	lru *lru.Cache[string, *schemaInfo]
}

func newSchemaCache(size int) (*schemaCache, error) {
	c, err := lru.New[string, *schemaInfo](size)
	if err != nil {
		return nil, err
	}
	return &schemaCache{lru: c}, nil
}

func (c *schemaCache) get(raw json.RawMessage) *schemaInfo {
	key := string(raw)
	if si, ok := c.lru.Get(key); ok {
		return si
	}
	si := compileSchema(raw)
	c.lru.Add(key, si)
	return si
}

const schemaURL = "mem:///agenteval/tool-parameters.json"

// CheckToolSchema compiles a tool's parameters schema (JSON Schema draft-07) as the
// evaluators will, and returns why it cannot be used: not JSON, not an object, or not a
// valid schema (e.g. `"type": 5`, an external $ref). Configured registries call it so a bad
// schema is a configuration error rather than a run of schema_invalid results.
func CheckToolSchema(raw json.RawMessage) error {
	return compileSchema(raw).err
}

func compileSchema(raw json.RawMessage) *schemaInfo {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &schemaInfo{err: fmt.Errorf("schema is not valid JSON: %w", err)}
	}
	si := &schemaInfo{props: map[string]bool{}}
	obj, isObj := doc.(map[string]any)
	switch {
	case isObj:
	case doc == true:
		obj = map[string]any{}
	default:
		return &schemaInfo{err: fmt.Errorf("schema is not a JSON object (got %s)", jsonKind(doc))}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	// Schemas come from traces: never follow a $ref to a file or URL (the standard
	// metaschemas are embedded in the library and still resolve).
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return &schemaInfo{err: err}
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return &schemaInfo{err: err}
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

// known reports whether key is a declared parameter.
func (si *schemaInfo) known(key string) bool {
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

// schemaFinding is one violation reported by the validator.
type schemaFinding struct {
	issue     IssueType
	parameter string
	detail    string
}

// validateValues runs the JSON Schema validator over args and turns its leaf errors
// into findings: per top-level parameter one INVALID_PARAM_VALUE (the smallest message
// when several keywords fail), root `required`/`dependencies` as
// MISSING_REQUIRED_PARAM, root `additionalProperties` as PARAMETER_HALLUCINATION, any
// other root violation as one INVALID_PARAM_VALUE without parameter. Parameters in
// skip (already reported by the key checks) are left out.
func (si *schemaInfo) validateValues(args map[string]any, skip map[string]bool) []schemaFinding {
	err := si.compiled.Validate(args)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []schemaFinding{{issue: IssueInvalidParamValue, detail: err.Error()}}
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(ve, &leaves)
	var out []schemaFinding
	perParam := map[string]string{}
	rootMsg := ""
	addKey := func(issue IssueType, keys []string) {
		for _, k := range keys {
			if !skip[k] {
				skip[k] = true
				out = append(out, schemaFinding{issue: issue, parameter: k})
			}
		}
	}
	for _, l := range leaves {
		msg := l.ErrorKind.LocalizedString(printer)
		if len(l.InstanceLocation) == 0 {
			switch k := l.ErrorKind.(type) {
			case *kind.Required:
				addKey(IssueMissingRequiredParam, k.Missing)
			case *kind.Dependency:
				addKey(IssueMissingRequiredParam, k.Missing)
			case *kind.DependentRequired:
				addKey(IssueMissingRequiredParam, k.Missing)
			case *kind.AdditionalProperties:
				addKey(IssueParameterHallucination, k.Properties)
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
		out = append(out, schemaFinding{issue: IssueInvalidParamValue, parameter: p, detail: perParam[p]})
	}
	if rootMsg != "" {
		out = append(out, schemaFinding{issue: IssueInvalidParamValue, detail: rootMsg})
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

func jsonKind(v any) string {
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
