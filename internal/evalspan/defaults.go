// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan // import "github.com/agenteval/agenteval-collector/internal/evalspan"

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"reflect"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Wire defaults (docs/decisions/performance.md §8.33). Most tool calls of a turn are
// valid, executed, ok, scored 1, with no issue, the one constant explanation and the
// agent of their interaction; most handoffs pass control, from that agent, with their
// payload captured; most interactions share a few null-score explanations. Written
// out, those values were a fifth of the evaluation spans' bytes, repeated in every
// turn, and paid for in the encode, the signature, the OTLP export's protobuf and gzip,
// the exporter's verification, copy and decode. A span written with defaults leaves a field out when
// its value is the default and writes an empty OTLP value when the field's value is
// absent in the plain form (nil, "", false) but not the default; the decoder sets the
// default for a field left out and the zero value for an empty one, so the decoded
// result is the one that was encoded. The span says which table it was written with
// (semconv.AgentEvalTurnWireDefaults, AgentEvalSessionWireDefaults: an int, signed with
// the rest); a span without it (an earlier collector's) is read with no defaults.

// wireDefaultsVersion is the version of the tables below; a change of any default
// needs a new version, and the decoder keeps the old tables for spans in flight.
const wireDefaultsVersion = 1

// fieldDefault is one field's default: is reports whether a value equals it, set sets
// it (st gives decoded *float64 their storage).
//
// An enclosing default (is and set nil) is the value of the nearest enclosing struct
// that is a scope (typeDefaults.scope): a tool call's agent is, most of the time, the
// agent of the interaction that holds it.
type fieldDefault struct {
	kind      reflect.Kind // the field's kind
	is        func(v reflect.Value) bool
	set       func(st *decodeState, v reflect.Value)
	enclosing bool
	// entries are the default entries of a map[string]string field (a nil map is its
	// own default, left out): an entry whose value is its default is left out, a
	// default key the map does not hold is written as an empty value. keys are
	// entries' keys in order.
	entries map[string]string
	keys    []string
}

// typeDefaults are the defaults of one struct type's fields, by position in its
// typeFields list; mask has a bit for each field with one. scope is the position of
// the string field whose value is the enclosing default of the structs this one holds
// (-1: none).
type typeDefaults struct {
	fields []fieldDefault
	mask   uint64
	scope  int
}

func (td *typeDefaults) has(i int) bool { return td != nil && i < 64 && td.mask&(1<<i) != 0 }

// fieldDefault returns the default of the field at position i, or nil.
func (td *typeDefaults) fieldDefault(i int) *fieldDefault {
	if !td.has(i) {
		return nil
	}
	return &td.fields[i]
}

// wireDefaults is a table of defaults: per struct type, its fields' defaults (types),
// also held by each type's typeFields in its slot, so that an encode or a decode finds
// them without a look-up by type.
type wireDefaults struct {
	slot  int
	types map[reflect.Type]*typeDefaults
}

// The slots of the tables in typeFields.defaults.
const (
	turnSlot = iota
	sessionSlot
	wireSlots
)

// of returns the defaults of the struct type whose fields are tf (nil: none).
func (d *wireDefaults) of(tf *typeFields) *typeDefaults {
	if d == nil {
		return nil
	}
	return tf.defaults[d.slot]
}

func strDefault(s string) fieldDefault {
	return fieldDefault{
		kind: reflect.String,
		is:   func(v reflect.Value) bool { return v.String() == s },
		set:  func(_ *decodeState, v reflect.Value) { v.SetString(s) },
	}
}

func boolDefault(b bool) fieldDefault {
	return fieldDefault{
		kind: reflect.Bool,
		is:   func(v reflect.Value) bool { return v.Bool() == b },
		set:  func(_ *decodeState, v reflect.Value) { v.SetBool(b) },
	}
}

// enclosingDefault is the value of the enclosing scope (a string field).
func enclosingDefault() fieldDefault {
	return fieldDefault{kind: reflect.String, enclosing: true}
}

// entriesDefault is a map[string]string whose entries default to entries.
func entriesDefault(entries map[string]string) fieldDefault {
	keys := slices.Sorted(maps.Keys(entries))
	if len(keys) > 64 {
		panic("evalspan: more than 64 default entries")
	}
	return fieldDefault{
		kind:    reflect.Map,
		is:      func(v reflect.Value) bool { return v.IsNil() },
		set:     func(*decodeState, reflect.Value) {},
		entries: entries,
		keys:    keys,
	}
}

// encodeEntries writes the map[string]string v into mm with its default entries fd
// (entriesDefault), sorted by key, and with a writer w their canonical encoding.
func encodeEntries(mm pcommon.Map, v reflect.Value, w *canonicalWriter, fd *fieldDefault) {
	ss := v.Interface().(map[string]string)
	var buf [16]string
	keys := buf[:0]
	for k, s := range ss {
		if d, ok := fd.entries[k]; !ok || s != d {
			keys = append(keys, k)
		}
	}
	for _, k := range fd.keys {
		if _, ok := ss[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	mm.EnsureCapacity(len(keys))
	mark := w.count(len(keys))
	for _, k := range keys {
		w.key(k)
		dst := mm.PutEmpty(k)
		if s, ok := ss[k]; ok {
			dst.SetStr(s)
			w.strValue(s)
		} else {
			w.kind(pcommon.ValueTypeEmpty)
		}
	}
	w.check(mm, len(keys), mark)
}

// decodeEntries sets the map[string]string dst from src, written with its default
// entries fd (encodeEntries): an empty value is a key the map did not hold, a default
// key src does not hold has its default value.
func decodeEntries(src pcommon.Value, dst reflect.Value, fd *fieldDefault) error {
	if src.Type() != pcommon.ValueTypeMap {
		return typeError(src, "a map")
	}
	out := make(map[string]string, src.Map().Len()+len(fd.keys))
	var held uint64 // the default keys src holds, by position in fd.keys
	for k, v := range src.Map().All() {
		if i, ok := slices.BinarySearch(fd.keys, k); ok {
			held |= 1 << i
		}
		switch v.Type() {
		case pcommon.ValueTypeEmpty:
			delete(out, k) // a key present twice: the last stays
		case pcommon.ValueTypeStr:
			out[k] = v.Str()
		default:
			return fmt.Errorf("[%q]: %w", k, typeError(v, "a string"))
		}
	}
	for i, k := range fd.keys {
		if held&(1<<i) == 0 {
			out[k] = fd.entries[k]
		}
	}
	dst.Set(reflect.ValueOf(out))
	return nil
}

// scoreDefault is a *float64 that points to f (bit for bit: not -0 for 0).
func scoreDefault(f float64) fieldDefault {
	return fieldDefault{
		kind: reflect.Pointer,
		is: func(v reflect.Value) bool {
			return !v.IsNil() && math.Float64bits(v.Elem().Float()) == math.Float64bits(f)
		},
		set: func(st *decodeState, v reflect.Value) { v.Set(reflect.ValueOf(st.float(f))) },
	}
}

// emptyListDefault is an empty, not nil, slice (JSON [] rather than null). newDefaults
// sets set, to one empty slice of the field's type that every default shares (of no
// capacity: an append copies it).
func emptyListDefault() fieldDefault {
	return fieldDefault{
		kind: reflect.Slice,
		is:   func(v reflect.Value) bool { return !v.IsNil() && v.Len() == 0 },
	}
}

// typeSpec declares a type's defaults: by JSON field name, and the JSON name of its
// scope field ("": none).
type typeSpec struct {
	fields map[string]fieldDefault
	scope  string
}

// newDefaults builds a table from defaults by JSON field name, per type. It panics on a name the type does not have, a field past the 64th or
// a default the field's kind cannot hold: a programming error found by any test.
func newDefaults(slot int, byType map[reflect.Type]typeSpec) *wireDefaults {
	d := &wireDefaults{slot: slot, types: map[reflect.Type]*typeDefaults{}}
	for t, spec := range byType {
		tf := typeFieldsOf(t)
		td := &typeDefaults{fields: make([]fieldDefault, len(tf.list)), scope: -1}
		if spec.scope != "" {
			i, ok := tf.byName[spec.scope]
			if !ok || t.Field(tf.list[i].index).Type.Kind() != reflect.String {
				panic(fmt.Sprintf("evalspan: no scope %s.%s", t, spec.scope))
			}
			td.scope = i
		}
		for name, fd := range spec.fields {
			i, ok := tf.byName[name]
			if !ok || i >= 64 {
				panic(fmt.Sprintf("evalspan: no default for %s.%s", t, name))
			}
			ft := t.Field(tf.list[i].index).Type
			if ft.Kind() != fd.kind || fd.kind == reflect.Pointer && ft.Elem().Kind() != reflect.Float64 ||
				fd.kind == reflect.Map && ft != reflect.TypeFor[map[string]string]() {
				panic(fmt.Sprintf("evalspan: default of %s.%s does not fit %s", t, name, ft))
			}
			if fd.kind == reflect.Slice {
				empty := reflect.MakeSlice(ft, 0, 0)
				fd.set = func(_ *decodeState, v reflect.Value) { v.Set(empty) }
			}
			if fd.enclosing && td.scope >= 0 {
				panic(fmt.Sprintf("evalspan: %s is a scope and has an enclosing default", t))
			}
			td.fields[i] = fd
			td.mask |= 1 << i
		}
		d.types[t] = td
		tf.defaults[slot] = td
	}
	for t, td := range d.types {
		if td.scope >= 0 {
			checkScope(d, t, false, map[scopePath]bool{})
		}
	}
	return d
}

// checkScope panics when a struct with an enclosing default is reached from a scope
// through a map: the decoder sets such a field once its scope is decoded, through the
// field's place, and a map's value is decoded in a temporary and copied. A type is
// walked once per way it is reached (through a map or not): one reached both ways is
// checked on both.
func checkScope(d *wireDefaults, t reflect.Type, viaMap bool, seen map[scopePath]bool) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		checkScope(d, t.Elem(), viaMap, seen)
	case reflect.Map:
		checkScope(d, t.Elem(), true, seen)
	case reflect.Struct:
		if seen[scopePath{t, viaMap}] {
			return
		}
		seen[scopePath{t, viaMap}] = true
		if td := d.types[t]; viaMap && td != nil {
			for _, fd := range td.fields {
				if fd.enclosing {
					panic(fmt.Sprintf("evalspan: %s with an enclosing default is held in a map", t))
				}
			}
		}
		for i := range t.NumField() {
			checkScope(d, t.Field(i).Type, viaMap, seen)
		}
	}
}

// scopePath is a struct type reached from a scope, and whether through a map.
type scopePath struct {
	t      reflect.Type
	viaMap bool
}

// encDefaults is an encode's wire defaults: the table, and the enclosing scope's value
// (inScope: inside a struct that is a scope). A nil *encDefaults encodes without
// defaults.
type encDefaults struct {
	table   *wireDefaults
	scope   string
	inScope bool
}

func (e *encDefaults) of(tf *typeFields) *typeDefaults {
	if e == nil {
		return nil
	}
	return e.table.of(tf)
}

// isDefault reports whether v, a field's value, is the field's default fd.
func (e *encDefaults) isDefault(fd *fieldDefault, v reflect.Value) bool {
	if fd.enclosing {
		return e.inScope && v.String() == e.scope
	}
	return fd.is(v)
}

// enter makes struct v (with defaults td and fields tf) the enclosing scope of what it
// holds when it is a scope, and returns the scope to restore (leave) after its fields.
func (e *encDefaults) enter(td *typeDefaults, v reflect.Value, tf *typeFields) encDefaults {
	if e == nil {
		return encDefaults{}
	}
	outer := *e
	if td != nil && td.scope >= 0 {
		e.scope, e.inScope = v.Field(tf.list[td.scope].index).String(), true
	}
	return outer
}

func (e *encDefaults) leave(outer encDefaults) {
	if e != nil {
		*e = outer
	}
}

// setDefaults sets the fields of struct v (defaults td, fields tf) that unset names
// (a bit per position in tf.list) to their defaults. An enclosing default waits in
// st.pending for its scope; when v is a scope, the fields waiting since mark (those
// of the structs it holds) get its value.
func (st *decodeState) setDefaults(td *typeDefaults, unset uint64, v reflect.Value, tf *typeFields, mark int) {
	for ; unset != 0; unset &= unset - 1 {
		i := bits.TrailingZeros64(unset)
		f := v.Field(tf.list[i].index)
		switch fd := &td.fields[i]; {
		case !fd.enclosing:
			fd.set(st, f)
		case st.scopes > 0:
			if st.pending == nil {
				st.pending = make([]reflect.Value, 0, 8) // reused by every scope: one allocation for most spans
			}
			st.pending = append(st.pending, f)
		}
	}
	if td.scope < 0 {
		return
	}
	st.scopes--
	scope := v.Field(tf.list[td.scope].index).String()
	for _, f := range st.pending[mark:] {
		f.SetString(scope)
	}
	clear(st.pending[mark:])
	st.pending = st.pending[:mark]
}

// turnDefaults apply to a turn span's summary (TurnSummary: its tool calls carry no
// status, execution flag nor explanation, so those have no default here).
var turnDefaults = newDefaults(turnSlot, map[reflect.Type]typeSpec{
	reflect.TypeFor[evaluation.InteractionResult](): {scope: "agent_id"},
	reflect.TypeFor[evaluation.ToolCallResult](): {fields: map[string]fieldDefault{
		"agent_id": enclosingDefault(),
		"score":    scoreDefault(1),
		"verdict":  strDefault(evaluation.VerdictValid),
		"issues":   emptyListDefault(),
	}},
	reflect.TypeFor[session.Handoff](): {fields: map[string]fieldDefault{
		"from_agent": enclosingDefault(),
	}},
})

// sessionDefaults apply to a session span's analysis: the complete turn results.
var sessionDefaults = newDefaults(sessionSlot, map[reflect.Type]typeSpec{
	reflect.TypeFor[evaluation.ToolCallResult](): {fields: map[string]fieldDefault{
		"agent_id":    enclosingDefault(),
		"score":       scoreDefault(1),
		"verdict":     strDefault(evaluation.VerdictValid),
		"issues":      emptyListDefault(),
		"executed":    boolDefault(true),
		"status":      strDefault(session.StatusOK),
		"explanation": strDefault(evaluation.ExplanationAllChecksPassed),
	}},
	reflect.TypeFor[evaluation.InteractionResult](): {scope: "agent_id", fields: map[string]fieldDefault{
		"status": strDefault(session.StatusOK),
		"explanations": entriesDefault(map[string]string{
			"reasoning":        evaluation.ExplanationNoReasoning,
			"handoff":          evaluation.ExplanationNoHandoff,
			"response_quality": evaluation.ExplanationDelegated,
		}),
	}},
	reflect.TypeFor[session.Handoff](): {fields: map[string]fieldDefault{
		"from_agent":       enclosingDefault(),
		"mode":             strDefault("pass_control"),
		"payload_captured": boolDefault(true),
	}},
})

// defaultsOf returns the table m's typed attributes under prefix were written with
// (key is the prefix's wire-defaults attribute): none when the attribute is absent,
// an error when it names no table this version knows.
func defaultsOf(m pcommon.Map, key string, table *wireDefaults) (*wireDefaults, error) {
	v, ok := m.Get(key)
	if !ok {
		return nil, nil
	}
	if v.Type() != pcommon.ValueTypeInt {
		return nil, fmt.Errorf("%s: %w", key, typeError(v, "an int"))
	}
	if v.Int() != wireDefaultsVersion {
		return nil, fmt.Errorf("%s: unknown wire defaults %d (this collector knows %d; a newer collector's processor wrote the span: upgrade the exporter's collector)", key, v.Int(), wireDefaultsVersion)
	}
	return table, nil
}
