// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference // import "github.com/agenteval/agenteval-collector/pkg/reference"

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Keys of structured outputs (evalaf agent package, Antfly's answer agent, OpenAI /
// agentevals messages). An object holding a tool list is read through the first of these
// keys present, in an order of each evaluator's own: its own keys first (evalaf's selection
// reads `tool` and `tools`, its sequence `tool_sequence` and `sequence`, agentevals'
// trajectory `messages`), then the others. So one output object carrying both a selection
// and a sequence (evalaf's complete example) gives each evaluator its own list. `tool` is a
// single tool name (see trajectory).
var (
	selectionKeys      = []string{"tool", "tools", "selected_tools", "tool_sequence", "sequence", "tool_calls", "trajectory", "messages"}
	sequenceKeys       = []string{"tool_sequence", "sequence", "tool", "tools", "selected_tools", "tool_calls", "trajectory", "messages"}
	trajectoryKeys     = []string{"trajectory", "messages", "tool_calls", "tool_sequence", "sequence", "tool", "tools", "selected_tools"}
	classificationKeys = []string{"classification", "route_type"}
	callArgKeys        = []string{"args", "arguments", "parameters", "input"}
	callNameKeys       = []string{"name", "tool_name", "tool"}
)

// normalize turns any Go value into the JSON model (nil, bool, float64, string, []any,
// map[string]any) so that every reader works on the same shapes: typed Go slices and maps,
// structs with JSON tags, json.RawMessage and []byte holding JSON are all accepted.
func normalize(v any) any {
	switch t := v.(type) {
	case nil, bool, float64, string, []any, map[string]any:
		return v
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case float32:
		return float64(t)
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return string(t)
		}
		return f
	case json.RawMessage:
		return decodeJSON(t)
	case []byte:
		return decodeJSON(t)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return v
		}
		return decodeJSON(b)
	}
}

func decodeJSON(b []byte) any {
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return string(b)
	}
	return out
}

func shapeError(what string, v any) error {
	return fmt.Errorf("%w: %s: %T %s", ErrBadShape, what, v, truncate(fmt.Sprint(v), 120))
}

// truncate cuts s to at most n bytes on a rune boundary, with "…" when it was cut. The
// collector's internal/text.Truncate does the same; this package stays free of internal
// imports.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// toolNames reads a list of tool names from a string (one tool), a list of names or of
// tool-call objects, OpenAI/agentevals messages (the tool calls of every message, in
// order), one tool-call object (`{"tool": "search", "args": {...}}` keeps its arguments), or
// an object with one of the keys `tool` (a string, without argument keys), `tools`, `selected_tools`,
// `tool_sequence`, `sequence`, `tool_calls`, `trajectory`, `messages`, tried in the order
// keys gives (selectionKeys, sequenceKeys, trajectoryKeys). Names are trimmed; empty names
// are dropped. Any other shape is an ErrBadShape error.
func toolNames(v any, keys []string) ([]string, error) {
	calls, err := toolCalls(v, keys)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(calls))
	for _, c := range calls {
		names = append(names, c.Name)
	}
	return names, nil
}

// ToolCall is one tool call of a trajectory: the tool's name and its arguments (nil when
// the shape carried none; an empty map and nil compare equal).
type ToolCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args,omitempty"`
}

// message is one step of a trajectory: an OpenAI-style message (role + tool calls), or one
// tool call of a flat list (role "assistant").
type message struct {
	Role  string
	Calls []ToolCall
}

const roleAssistant = "assistant"

// toolCalls flattens a trajectory into its tool calls, in order.
func toolCalls(v any, keys []string) ([]ToolCall, error) {
	msgs, err := trajectory(v, keys)
	if err != nil {
		return nil, err
	}
	var out []ToolCall
	for _, m := range msgs {
		out = append(out, m.Calls...)
	}
	return out, nil
}

// trajectory reads a trajectory in every accepted shape (see toolNames), an object's list
// keys tried in the order keys gives.
func trajectory(v any, keys []string) ([]message, error) {
	switch t := normalize(v).(type) {
	case nil:
		return nil, nil
	case string:
		name := strings.TrimSpace(t)
		if name == "" {
			return nil, nil
		}
		return []message{{Role: roleAssistant, Calls: []ToolCall{{Name: name}}}}, nil
	case []any:
		out := make([]message, 0, len(t))
		for _, item := range t {
			item = normalize(item)
			if m, ok := item.(map[string]any); ok {
				if _, isMsg := m["role"]; isMsg {
					msg, err := readMessage(m)
					if err != nil {
						return nil, err
					}
					out = append(out, msg)
					continue
				}
			}
			c, ok, err := readCall(item)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, message{Role: roleAssistant, Calls: []ToolCall{c}})
			}
		}
		return out, nil
	case map[string]any:
		if _, isMsg := t["role"]; isMsg {
			msg, err := readMessage(t)
			if err != nil {
				return nil, err
			}
			return []message{msg}, nil
		}
		for _, k := range keys {
			inner, ok := t[k]
			if !ok {
				continue
			}
			if k == "tool" {
				// {"tool": "search"} names one tool; with arguments it is one tool call
				// ({"tool": "search", "args": {...}}), read by readCall below.
				if s, ok := inner.(string); ok && !hasArgs(t) {
					return trajectory(s, keys)
				}
				continue
			}
			return trajectory(inner, keys)
		}
		if c, ok, err := readCall(t); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return []message{{Role: roleAssistant, Calls: []ToolCall{c}}}, nil
		}
		return nil, shapeError("tools", v)
	default:
		return nil, shapeError("tools", v)
	}
}

// hasArgs reports whether a tool-call object carries one of the argument keys.
func hasArgs(m map[string]any) bool {
	for _, k := range callArgKeys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func readMessage(m map[string]any) (message, error) {
	role, _ := m["role"].(string)
	if role == "ai" {
		role = roleAssistant
	}
	msg := message{Role: role}
	raw, ok := m["tool_calls"]
	if !ok || raw == nil {
		return msg, nil
	}
	list, ok := normalize(raw).([]any)
	if !ok {
		return msg, shapeError("tool_calls", raw)
	}
	msg.Calls = make([]ToolCall, 0, len(list))
	for _, item := range list {
		c, ok, err := readCall(item)
		if err != nil {
			return msg, err
		}
		if ok {
			msg.Calls = append(msg.Calls, c)
		}
	}
	return msg, nil
}

// readCall reads one tool call: a name string, or an object with a name (`name`,
// `tool_name`, `tool`, or `function.name`) and arguments (`args`, `arguments`,
// `parameters`, `input`, or `function.arguments`; an object or a JSON string). ok is false
// for an empty name.
func readCall(v any) (ToolCall, bool, error) {
	switch t := normalize(v).(type) {
	case string:
		name := strings.TrimSpace(t)
		return ToolCall{Name: name}, name != "", nil
	case map[string]any:
		if fn, ok := normalize(t["function"]).(map[string]any); ok {
			t = fn
		}
		var name string
		for _, k := range callNameKeys {
			if s, ok := t[k].(string); ok {
				name = strings.TrimSpace(s)
				break
			}
		}
		if name == "" {
			return ToolCall{}, false, shapeError("tool call without a name", v)
		}
		c := ToolCall{Name: name}
		for _, k := range callArgKeys {
			raw, ok := t[k]
			if !ok || raw == nil {
				continue
			}
			args, err := readArgs(raw)
			if err != nil {
				return ToolCall{}, false, fmt.Errorf("tool call %q: %w", name, err)
			}
			c.Args = args
			break
		}
		return c, true, nil
	default:
		return ToolCall{}, false, shapeError("tool call", v)
	}
}

func readArgs(raw any) (map[string]any, error) {
	if s, ok := raw.(string); ok {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, shapeError("arguments are not a JSON object", s)
		}
		return m, nil
	}
	m, ok := normalize(raw).(map[string]any)
	if !ok {
		return nil, shapeError("arguments are not an object", raw)
	}
	return m, nil
}

// classification reads a class label: a string, or an object's `classification` then
// `route_type`.
func classification(v any) (string, error) {
	switch t := normalize(v).(type) {
	case string:
		return t, nil
	case map[string]any:
		for _, k := range classificationKeys {
			if s, ok := t[k].(string); ok {
				return s, nil
			}
		}
	}
	return "", shapeError("classification", v)
}

// confidence reads a confidence: a number, a numeric string, or an object's `confidence`.
func confidence(v any) (float64, bool) {
	switch t := normalize(v).(type) {
	case nil, bool, []any:
		return 0, false
	case float64:
		return t, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		return f, err == nil
	case map[string]any:
		if c, ok := t["confidence"]; ok && c != nil {
			if _, isMap := normalize(c).(map[string]any); isMap {
				return 0, false
			}
			return confidence(c)
		}
	default:
		// A Go value that json.Marshal refused: a typed map or struct holding NaN or ±Inf
		// (map[string]float64{"confidence": NaN}). Read it as its JSON form would be read,
		// so that it scores 0 and fails like map[string]any{"confidence": NaN}.
		return reflectConfidence(reflect.ValueOf(t))
	}
	return 0, false
}

// reflectConfidence finds a confidence in a value json.Marshal cannot encode: a float, a
// map with string keys holding `confidence`, or a struct whose field encodes as
// `confidence` (its json tag name, else its Go name), through pointers and interfaces.
func reflectConfidence(rv reflect.Value) (float64, bool) {
	rv, ok := indirect(rv)
	if !ok {
		return 0, false
	}
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return 0, false
		}
		c := rv.MapIndex(reflect.ValueOf("confidence").Convert(rv.Type().Key()))
		if !c.IsValid() {
			return 0, false
		}
		return fieldConfidence(c)
	case reflect.Struct:
		for i := range rv.NumField() {
			f := rv.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if cmp.Or(name, f.Name) == "confidence" {
				return fieldConfidence(rv.Field(i))
			}
		}
	}
	return 0, false
}

// fieldConfidence reads the value under a `confidence` key found by reflection: a float
// directly (NaN and ±Inf included), anything else as confidence() reads it (an object is
// no confidence).
func fieldConfidence(c reflect.Value) (float64, bool) {
	c, ok := indirect(c)
	if !ok {
		return 0, false
	}
	switch c.Kind() {
	case reflect.Float32, reflect.Float64:
		return c.Float(), true
	case reflect.Map, reflect.Struct:
		return 0, false
	}
	return confidence(c.Interface())
}

// metaExpectedKeys are the metadata keys of every evaluator's expected value.
var metaExpectedKeys = []string{
	MetaExpectedTool, MetaExpectedTools, MetaExpectedSequence, MetaExpectedTrajectory,
	MetaExpectedInteractions, MetaExpectedOutput, MetaExpectedClassification,
}

// toolReference returns the expected value of a tool evaluator (selection, sequence,
// trajectory): the first present metadata key of its own, else the reference. A reference
// that is a bare string is a tool name only when stringOK says so: otherwise it is another
// evaluator's expectation (the seed's `"reference": "question"` is a class label) and this
// evaluator has no reference (ErrNoReference), as the interactions evaluator rules for a
// reference that is not a list of interactions. Expected values from metadata are never
// refused.
func toolReference(name string, ex Example, stringOK func(Example) bool, keys ...string) (any, string, error) {
	want := "metadata." + strings.Join(keys, ", metadata.")
	ref, src, ok := expected(ex, keys...)
	if !ok {
		return nil, "", fmt.Errorf("%s: %w (want %s or reference)", name, ErrNoReference, want)
	}
	if src == "reference" && !stringOK(ex) {
		if s, isString := normalize(ref).(string); isString {
			return nil, "", fmt.Errorf("%s: %w (want %s or a reference that is a list or a tool call; the string reference %q belongs to another evaluator)",
				name, ErrNoReference, want, truncate(s, 60))
		}
	}
	return ref, src, nil
}

// stringNever refuses a bare-string reference (tool sequence, trajectory: evalaf's sequence
// evaluator rejects a string reference too).
func stringNever(Example) bool { return false }

// stringUnlessOtherKeys accepts a bare-string reference as the expected tool unless the
// example carries the metadata key of another evaluator than tool selection: then the
// string is that evaluator's case (a class label beside expected_sequence, say).
func stringUnlessOtherKeys(ex Example) bool {
	for _, k := range metaExpectedKeys {
		if k == MetaExpectedTool || k == MetaExpectedTools {
			continue
		}
		if v, ok := ex.Metadata[k]; ok && v != nil {
			return false
		}
	}
	return true
}

// expected returns the first present metadata key, else the reference.
func expected(ex Example, keys ...string) (any, string, bool) {
	for _, k := range keys {
		if v, ok := ex.Metadata[k]; ok && v != nil {
			return v, "metadata." + k, true
		}
	}
	if ex.Reference != nil {
		return ex.Reference, "reference", true
	}
	return nil, "", false
}

// indirect follows rv through pointers and interfaces to the value they hold; false at a
// nil one.
func indirect(rv reflect.Value) (reflect.Value, bool) {
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return rv, false
		}
		rv = rv.Elem()
	}
	return rv, true
}
