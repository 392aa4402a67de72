// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan // import "github.com/agenteval/agenteval-collector/internal/evalspan"

import (
	"fmt"
	"math"
	"reflect"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Wire defaults (docs/decisions/performance.md §8.34). Most tool calls of a turn are
// valid, executed, ok, scored 1, with no issue and the one constant explanation; most
// handoffs pass control with their payload captured. Written out, those values were
// about a tenth of the evaluation spans' bytes, repeated in every turn, and paid for in
// the encode, the signature, the OTLP export's protobuf and gzip, the exporter's
// verification and its decode. A span written with defaults leaves a field out when
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
type fieldDefault struct {
	kind reflect.Kind // the field's kind
	is   func(v reflect.Value) bool
	set  func(st *decodeState, v reflect.Value)
}

// typeDefaults are the defaults of one struct type's fields, by position in its
// typeFields list (is == nil: no default); mask has a bit for each field with one.
type typeDefaults struct {
	fields []fieldDefault
	mask   uint64
}

func (td *typeDefaults) has(i int) bool { return td != nil && i < 64 && td.mask&(1<<i) != 0 }

// wireDefaults is a table of defaults: per struct type, its fields' defaults.
type wireDefaults map[reflect.Type]*typeDefaults

func (d wireDefaults) of(t reflect.Type) *typeDefaults {
	if d == nil {
		return nil
	}
	return d[t]
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

// emptyListDefault is an empty, not nil, slice (JSON [] rather than null).
func emptyListDefault() fieldDefault {
	return fieldDefault{
		kind: reflect.Slice,
		is:   func(v reflect.Value) bool { return !v.IsNil() && v.Len() == 0 },
		set:  func(_ *decodeState, v reflect.Value) { v.Set(reflect.MakeSlice(v.Type(), 0, 0)) },
	}
}

// newDefaults builds a table from defaults by JSON field name, per type. It panics on a name the type does not have, a field past the 64th or
// a default the field's kind cannot hold: a programming error found by any test.
func newDefaults(byType map[reflect.Type]map[string]fieldDefault) wireDefaults {
	d := wireDefaults{}
	for t, byName := range byType {
		tf := typeFieldsOf(t)
		td := &typeDefaults{fields: make([]fieldDefault, len(tf.list))}
		for name, fd := range byName {
			i, ok := tf.byName[name]
			if !ok || i >= 64 {
				panic(fmt.Sprintf("evalspan: no default for %s.%s", t, name))
			}
			ft := t.Field(tf.list[i].index).Type
			if ft.Kind() != fd.kind || fd.kind == reflect.Pointer && ft.Elem().Kind() != reflect.Float64 {
				panic(fmt.Sprintf("evalspan: default of %s.%s does not fit %s", t, name, ft))
			}
			td.fields[i] = fd
			td.mask |= 1 << i
		}
		d[t] = td
	}
	return d
}

// turnDefaults apply to a turn span's summary (TurnSummary: its tool calls carry no
// status, execution flag nor explanation, so those have no default here).
var turnDefaults = newDefaults(map[reflect.Type]map[string]fieldDefault{
	reflect.TypeFor[evaluation.ToolCallResult](): {
		"score":   scoreDefault(1),
		"verdict": strDefault(evaluation.VerdictValid),
		"issues":  emptyListDefault(),
	},
})

// sessionDefaults apply to a session span's analysis: the complete turn results.
var sessionDefaults = newDefaults(map[reflect.Type]map[string]fieldDefault{
	reflect.TypeFor[evaluation.ToolCallResult](): {
		"score":       scoreDefault(1),
		"verdict":     strDefault(evaluation.VerdictValid),
		"issues":      emptyListDefault(),
		"executed":    boolDefault(true),
		"status":      strDefault(session.StatusOK),
		"explanation": strDefault(evaluation.ExplanationAllChecksPassed),
	},
	reflect.TypeFor[evaluation.InteractionResult](): {
		"status": strDefault(session.StatusOK),
	},
	reflect.TypeFor[session.Handoff](): {
		"mode":             strDefault("pass_control"),
		"payload_captured": boolDefault(true),
	},
})

// defaultsOf returns the table m's typed attributes under prefix were written with
// (key is the prefix's wire-defaults attribute): none when the attribute is absent,
// an error when it names no table this version knows.
func defaultsOf(m pcommon.Map, key string, table wireDefaults) (wireDefaults, error) {
	v, ok := m.Get(key)
	if !ok {
		return nil, nil
	}
	if v.Type() != pcommon.ValueTypeInt || v.Int() != wireDefaultsVersion {
		return nil, fmt.Errorf("%s: unknown wire defaults %s", key, v.AsString())
	}
	return table, nil
}
