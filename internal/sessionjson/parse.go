// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package sessionjson // import "github.com/agenteval/agenteval-collector/internal/sessionjson"

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agenteval/agenteval-collector/internal/conventions"
)

// SchemaJSON is the JSON Schema (draft 2020-12) of the accepted bodies; its $defs are
// session, dataset and request (see the package doc).
//
//go:embed schema.json
var SchemaJSON []byte

const schemaURL = "https://github.com/agenteval/agenteval-collector/internal/sessionjson/schema.json"

// Form names which of the accepted shapes a body had.
type Form string

// Accepted body forms.
const (
	FormSession Form = "session" // multi-agent session or single-agent trace
	FormDataset Form = "dataset"
	FormRequest Form = "request" // ReAsk {trace|session|dataset, analysis_types}
)

// ValidationError is returned by Parse for a body that is not valid JSON or does not
// match the schema. Field locates the offending value as a dotted path with indexes
// ("turns[0].agent_interactions[1].agent_id"; "" for the whole body).
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

type compiled struct {
	session, dataset, request *jsonschema.Schema
}

var schemas = sync.OnceValues(func() (*compiled, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	out := &compiled{}
	for def, dst := range map[string]**jsonschema.Schema{"session": &out.session, "dataset": &out.dataset, "request": &out.request} {
		s, err := c.Compile(schemaURL + "#/$defs/" + def)
		if err != nil {
			return nil, fmt.Errorf("embedded schema $defs/%s: %w", def, err)
		}
		*dst = s
	}
	return out, nil
})

// Parse validates body against the embedded schema and decodes the sessions it holds, in
// body order (one for the session and trace forms, one per conversation for a dataset).
// It returns a *ValidationError for invalid input (not JSON, a number outside float64, a
// schema violation, a session_id no session can have: see checkSessionID); any other
// error is internal. Each session's IDField locates its session_id in body.
func Parse(body []byte) ([]Session, Form, error) {
	sch, err := schemas()
	if err != nil {
		return nil, "", err
	}
	inst, err := decodeInstance(body)
	if err != nil {
		return nil, "", err
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return nil, "", &ValidationError{Message: "body must be a JSON object"}
	}
	form, schema := FormSession, sch.session
	switch {
	case has(obj, "turns"):
	case has(obj, "conversations"):
		form, schema = FormDataset, sch.dataset
	case has(obj, "trace") || has(obj, "session") || has(obj, "dataset"):
		form, schema = FormRequest, sch.request
	}
	if err := validate(schema, inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, form, toValidationError(ve)
		}
		return nil, form, err
	}

	var sessions []Session
	prefix, inDataset := "", false // where the sessions sit in the body
	switch form {
	case FormSession:
		var s Session
		err = json.Unmarshal(body, &s)
		sessions = []Session{s}
	case FormDataset:
		var d Dataset
		err = json.Unmarshal(body, &d)
		sessions, prefix, inDataset = d.Conversations, "conversations", true
	case FormRequest:
		var r request
		err = json.Unmarshal(body, &r)
		switch {
		case r.Trace != nil:
			sessions, prefix = []Session{*r.Trace}, "trace."
		case r.Session != nil:
			sessions, prefix = []Session{*r.Session}, "session."
		case r.Dataset != nil:
			sessions, prefix, inDataset = r.Dataset.Conversations, "dataset.conversations", true
		}
	}
	for i := range sessions {
		if inDataset {
			sessions[i].idField = prefix + "[" + strconv.Itoa(i) + "].session_id"
		} else {
			sessions[i].idField = prefix + "session_id"
		}
	}
	if err != nil {
		// The schema accepted the body but the Go types did not: still the client's data.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, form, &ValidationError{Field: te.Field, Message: te.Error()}
		}
		return nil, form, &ValidationError{Message: err.Error()}
	}
	for i := range sessions {
		if err := checkSessionID(&sessions[i]); err != nil {
			return nil, form, err
		}
	}
	return sessions, form, nil
}

// checkSessionID refuses a session_id the processor would not key a session by (blank, or
// a conventions.SessionIDProblem): its turns would each become a session of their own
// under their trace ids, and the answer would name a session that never exists. An
// absent session_id is fine (Convert generates one).
func checkSessionID(s *Session) error {
	if s.SessionID == "" {
		return nil
	}
	p := conventions.SessionIDProblem(s.SessionID, conventions.MaxSessionIDBytes)
	if p == "" && strings.TrimSpace(s.SessionID) == "" {
		p = "session id is blank"
	}
	if p != "" {
		return &ValidationError{Field: s.idField, Message: p}
	}
	return nil
}

// decodeInstance parses body for the validator. Numbers are checked here: every one must
// fit a float64 (the validator's own arbitrary-precision path is slow on huge exponents and
// panics on some), and the instance carries float64 values.
func decodeInstance(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var inst any
	if err := dec.Decode(&inst); err != nil {
		return nil, &ValidationError{Message: "body is not valid JSON: " + err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &ValidationError{Message: "body is not valid JSON: data after the top-level value"}
	}
	v, err := toFloats(inst, nil)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// toFloats replaces json.Number values by float64, in place; loc is the path so far.
func toFloats(v any, loc []string) (any, error) {
	switch t := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return nil, &ValidationError{Field: fieldPath(loc), Message: "number " + string(t) + " is out of range"}
		}
		return f, nil
	case map[string]any:
		for k, e := range t {
			nv, err := toFloats(e, append(loc, k))
			if err != nil {
				return nil, err
			}
			t[k] = nv
		}
	case []any:
		for i, e := range t {
			nv, err := toFloats(e, append(loc, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			t[i] = nv
		}
	}
	return v, nil
}

// validate runs the schema validator, turning a panic inside it into an error.
func validate(schema *jsonschema.Schema, inst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("schema validation failed: %v", r)
		}
	}()
	return schema.Validate(inst)
}

func has(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

var printer = message.NewPrinter(language.English)

// toValidationError reduces the schema validator's error tree to its most specific leaf:
// the deepest instance location wins (so an error inside a nested object is reported
// rather than the enclosing "anyOf failed"); "required" errors name the missing property.
func toValidationError(ve *jsonschema.ValidationError) *ValidationError {
	leaf := deepestLeaf(ve)
	field := fieldPath(leaf.InstanceLocation)
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) > 0 {
			field = joinField(field, k.Missing[0])
			return &ValidationError{Field: field, Message: "missing required property"}
		}
	case *kind.AnyOf, *kind.OneOf:
		if missing := requiredAlternatives(leaf); len(missing) > 0 {
			return &ValidationError{Field: field, Message: "needs one of: " + strings.Join(missing, ", ")}
		}
	}
	return &ValidationError{Field: field, Message: leaf.ErrorKind.LocalizedString(printer)}
}

// deepestLeaf returns the leaf error with the longest instance location (first on ties).
// An anyOf/oneOf whose alternatives all fail on a missing property is a leaf itself.
func deepestLeaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	if len(ve.Causes) == 0 || len(requiredAlternatives(ve)) > 0 {
		return ve
	}
	var best *jsonschema.ValidationError
	for _, c := range ve.Causes {
		l := deepestLeaf(c)
		if best == nil || len(l.InstanceLocation) > len(best.InstanceLocation) {
			best = l
		}
	}
	return best
}

// requiredAlternatives lists the properties of an anyOf/oneOf whose every alternative
// failed only because a required property was missing at the same location.
func requiredAlternatives(ve *jsonschema.ValidationError) []string {
	switch ve.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
	default:
		return nil
	}
	if len(ve.Causes) == 0 {
		return nil
	}
	var names []string
	for _, c := range ve.Causes {
		r, ok := c.ErrorKind.(*kind.Required)
		if !ok || len(c.InstanceLocation) != len(ve.InstanceLocation) {
			return nil
		}
		names = append(names, r.Missing...)
	}
	return names
}

// fieldPath renders a JSON-pointer token list as "a.b[0].c".
func fieldPath(loc []string) string {
	var sb strings.Builder
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil {
			sb.WriteString("[" + tok + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(tok)
	}
	return sb.String()
}

func joinField(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
