// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package evalspan is the typed schema of the evaluation spans (docs/decisions/sessions.md
// §5): the one encoder/decoder pair that the agentsession processor's emitter writes
// with and the agenteval exporter reads with. A turn result is carried as attributes
// agent_eval.turn.<field>, a session analysis as agent_eval.session.<field>, where
// <field> is the field's JSON name in internal/evaluation (the declared schema) and
// every value is a typed OTLP value: scores are doubles, counts ints, flags bools,
// lists arrays and nested objects maps. Nothing is serialised to JSON text and parsed
// back. The attributes round-trip exactly: Decode(Encode(v)) equals v as encoding/json
// would give it back (nil and empty lists and maps kept apart, absent pointers nil).
package evalspan // import "github.com/agenteval/agenteval-collector/internal/evalspan"

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// EncodeTurn writes tr as agent_eval.turn.* attributes into m, with the turn spans'
// wire defaults (defaults.go) and agent_eval.turn.wire_defaults saying so.
func EncodeTurn(m pcommon.Map, tr *evaluation.TurnResult) {
	encodeTop(m, semconv.AgentEvalTurnPrefix, reflect.ValueOf(tr).Elem(), nil, turnDefaults)
}

// DecodeTurn reads the agent_eval.turn.* attributes of m, with the wire defaults that
// agent_eval.turn.wire_defaults names (none when it is absent: a span of an earlier
// collector). It fails when one has the wrong type, when agent_eval.turn.trace_id is
// missing (not a turn span) or when the defaults are unknown.
func DecodeTurn(m pcommon.Map) (evaluation.TurnResult, error) {
	var tr evaluation.TurnResult
	if _, ok := m.Get(semconv.AgentEvalTurnPrefix + "trace_id"); !ok {
		return tr, fmt.Errorf("%strace_id: attribute missing", semconv.AgentEvalTurnPrefix)
	}
	d, err := defaultsOf(m, semconv.AgentEvalTurnWireDefaults, turnDefaults)
	if err == nil {
		err = decodeFields(m, semconv.AgentEvalTurnPrefix, reflect.ValueOf(&tr).Elem(), d)
	}
	return tr, err
}

// EncodeAnalysis writes a as agent_eval.session.* attributes into m, with the session
// spans' wire defaults (defaults.go) and agent_eval.session.wire_defaults saying so,
// agent_eval.session.turns_part = true for a turns part (a.TurnsPart) and
// agent_eval.session.numbered_here = true for guessed turn indexes (a.NumberedHere).
func EncodeAnalysis(m pcommon.Map, a *evaluation.Analysis) {
	putMarks(m, a)
	encodeTop(m, semconv.AgentEvalSessionPrefix, reflect.ValueOf(a).Elem(), nil, sessionDefaults)
}

// putMarks writes the marks of an analysis that have no JSON name (a.TurnsPart,
// a.NumberedHere), each only when true, into m, before the typed attributes, so that a
// signing encode signs them.
func putMarks(m pcommon.Map, a *evaluation.Analysis) {
	if a.TurnsPart {
		m.PutBool(semconv.AgentEvalSessionTurnsPart, true)
	}
	if a.NumberedHere {
		m.PutBool(semconv.AgentEvalSessionNumberedHere, true)
	}
}

// DecodeAnalysis reads the agent_eval.session.* attributes of m, with the wire defaults
// that agent_eval.session.wire_defaults names (none when it is absent), TurnsPart from
// agent_eval.session.turns_part and NumberedHere from agent_eval.session.numbered_here.
// It fails when one has the wrong type, when agent_eval.session.session_id is missing or
// when the defaults are unknown.
func DecodeAnalysis(m pcommon.Map) (evaluation.Analysis, error) {
	var a evaluation.Analysis
	if _, ok := m.Get(semconv.AgentEvalSessionPrefix + "session_id"); !ok {
		return a, fmt.Errorf("%ssession_id: attribute missing", semconv.AgentEvalSessionPrefix)
	}
	d, err := defaultsOf(m, semconv.AgentEvalSessionWireDefaults, sessionDefaults)
	if err == nil {
		err = decodeFields(m, semconv.AgentEvalSessionPrefix, reflect.ValueOf(&a).Elem(), d)
	}
	for _, mark := range []struct {
		key string
		to  *bool
	}{{semconv.AgentEvalSessionTurnsPart, &a.TurnsPart}, {semconv.AgentEvalSessionNumberedHere, &a.NumberedHere}} {
		v, ok := m.Get(mark.key)
		if !ok || err != nil {
			continue
		}
		if v.Type() != pcommon.ValueTypeBool {
			return a, fmt.Errorf("%s: %w", mark.key, typeError(v, "bool"))
		}
		*mark.to = v.Bool()
	}
	return a, err
}

// EncodeTurn writes tr as EncodeTurn does (without wire defaults for a Signer made
// WithoutWireDefaults) and returns the signature of m's signed
// attributes (what Sign would put), computed while encoding: the canonical encoding of
// tr's attributes is written as they are put, not read back from m. m's other signed
// attributes (agent_eval.kind, agent_eval.session.id) must be written before and none
// after; put the signature (Signature.Put) once the span's unsigned attributes are.
func (s *Signer) EncodeTurn(m pcommon.Map, tr *evaluation.TurnResult) Signature {
	return s.encodeSigned(m, semconv.AgentEvalTurnPrefix, reflect.ValueOf(tr).Elem(), s.turn)
}

// EncodeAnalysis writes a as EncodeAnalysis does (without wire defaults for a Signer
// made WithoutWireDefaults) and returns the signature of m's signed attributes, computed
// while encoding (see Signer.EncodeTurn).
func (s *Signer) EncodeAnalysis(m pcommon.Map, a *evaluation.Analysis) Signature {
	putMarks(m, a)
	return s.encodeSigned(m, semconv.AgentEvalSessionPrefix, reflect.ValueOf(a).Elem(), s.session)
}

// encodeTop writes struct v as the top-level attributes prefix + JSON name into m
// with the wire defaults d and, with d, the attribute naming them (prefix +
// "wire_defaults"); with a writer w (a signing encode) their canonical entries too.
func encodeTop(m pcommon.Map, prefix string, v reflect.Value, w *canonicalWriter, d *wireDefaults) {
	if d == nil {
		encodeFields(m, prefix, v, w, nil)
		return
	}
	encodeFields(m, prefix, v, w, &encDefaults{table: d})
	key := prefix + wireDefaultsName
	start := w.key(key)
	m.PutInt(key, wireDefaultsVersion)
	w.intValue(wireDefaultsVersion)
	w.sealSorted(key, start)
}

// wireDefaultsName is the top-level field name of the wire-defaults attribute
// (semconv.AgentEvalTurnWireDefaults, AgentEvalSessionWireDefaults).
const wireDefaultsName = "wire_defaults"

// field is one encoded struct field.
type field struct {
	name      string
	index     int
	omitEmpty bool
}

// typeFields are a struct type's fields in order, and by JSON name.
type typeFields struct {
	list     []field
	names    []string                 // the JSON names, in list order
	sorted   []int                    // positions in list, by JSON name (the order they are encoded in)
	byName   map[string]int           // JSON name → position in list
	prefixed sync.Map                 // prefix → []string: prefix + names[i] (keys)
	defaults [wireSlots]*typeDefaults // the type's wire defaults in each table (defaults.go)
}

var fieldCache sync.Map // reflect.Type → *typeFields

// typeFieldsOf lists t's fields by their JSON names (encoding/json's rules for the tags
// this project uses: name, omitempty, "-").
func typeFieldsOf(t reflect.Type) *typeFields {
	if tf, ok := fieldCache.Load(t); ok {
		return tf.(*typeFields)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		fs = append(fs, field{name: name, index: i, omitEmpty: strings.Contains(opts, "omitempty")})
	}
	tf := &typeFields{list: fs, names: make([]string, len(fs)), sorted: make([]int, len(fs)), byName: make(map[string]int, len(fs))}
	for i, f := range fs {
		tf.names[i] = f.name
		tf.sorted[i] = i
		tf.byName[f.name] = i
	}
	slices.SortStableFunc(tf.sorted, func(a, b int) int { return strings.Compare(fs[a].name, fs[b].name) })
	fieldCache.Store(t, tf)
	return tf
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// encodeFields puts each field of struct v into m under prefix + JSON name, in the
// order of the names (the canonical order of the signature, sign.go: a map written in
// it is hashed without sorting, when signed and again when verified). Absent values (nil
// pointers, slices, maps and interfaces; empty omitempty values) and zero scalars
// (false, 0, "", the zero time), which decode to the same zero, are left out.
//
// With a writer w (a signing encode, Signer.EncodeTurn), it also appends to w the
// canonical encoding of what it writes, so that the signature needs no second walk of
// the values: for a nested struct (prefix "") the map's entry count and its entries;
// for the span's top level (a prefix) each entry, recorded in w.sealed (the count and
// the order among the span's other signed attributes are the signer's, macSealed).
func encodeFields(m pcommon.Map, prefix string, v reflect.Value, w *canonicalWriter, d *encDefaults) {
	top := prefix != ""
	tf := typeFieldsOf(v.Type())
	td := d.of(tf)
	// One allocation of the exact size, not one per growth nor one per field declared:
	// most fields of a nested result are absent. The fields present are noted in a
	// bitmap for the pass that writes them (structs of more than 64 fields check again),
	// the fields with a default written as an empty value in another (wire defaults:
	// a value that is the default is left out, an absent one written empty).
	n, present, empty := 0, uint64(0), uint64(0)
	for i, f := range tf.list {
		fv := v.Field(f.index)
		if td.has(i) {
			if d.isDefault(&td.fields[i], fv) {
				continue
			}
			n++
			present |= 1 << i
			if absent(fv, f.omitEmpty) {
				empty |= 1 << i
			}
			continue
		}
		if !absent(fv, f.omitEmpty) {
			n++
			if i < 64 {
				present |= 1 << i
			}
		}
	}
	reserve := 0
	if top && w != nil {
		reserve = sealReserve
	}
	m.EnsureCapacity(m.Len() + n + reserve)
	var mark int
	if !top {
		mark = w.count(n)
	}
	keys := tf.keys(prefix)
	outer := d.enter(td, v, tf)
	for _, i := range tf.sorted {
		f := tf.list[i]
		if i < 64 && present&(1<<i) == 0 {
			continue
		}
		fv := v.Field(f.index)
		if i >= 64 && absent(fv, f.omitEmpty) {
			continue
		}
		start := w.key(keys[i])
		if i < 64 && empty&(1<<i) != 0 {
			m.PutEmpty(keys[i])
			w.kind(pcommon.ValueTypeEmpty)
		} else if fd := td.fieldDefault(i); fd != nil && fd.entries != nil {
			w.kind(pcommon.ValueTypeMap)
			encodeEntries(m.PutEmpty(keys[i]).SetEmptyMap(), fv, w, fd)
		} else {
			encodeValue(m.PutEmpty(keys[i]), fv, w, d)
		}
		if top {
			w.seal(keys[i], start)
		}
	}
	d.leave(outer)
	if !top {
		w.check(m, n, mark)
	}
}

// sealReserve is the room a signing encode leaves in the span's attributes for the
// signature and the few attributes an emitter puts after the typed ones (a partial
// flag, score mirrors), so that they do not grow the attribute list again.
const sealReserve = 8

// keys returns prefix + the JSON name of each field, built once per prefix (the two
// top-level prefixes and the empty one of nested structs).
func (tf *typeFields) keys(prefix string) []string {
	if prefix == "" {
		return tf.names
	}
	if ks, ok := tf.prefixed.Load(prefix); ok {
		return ks.([]string)
	}
	ks := make([]string, len(tf.list))
	for i, f := range tf.list {
		ks[i] = prefix + f.name
	}
	tf.prefixed.Store(prefix, ks)
	return ks
}

func absent(v reflect.Value, omitEmpty bool) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.IsNil() || omitEmpty && v.Len() == 0
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32,
		reflect.Int64, reflect.Float32, reflect.Float64:
		return v.IsZero()
	case reflect.Struct:
		return (omitEmpty || v.Type() == timeType) && v.IsZero()
	}
	return omitEmpty && v.IsZero()
}

// encodeValue writes v into dst, with the wire defaults d, and, with a writer w, dst's
// canonical encoding into w (the same bytes as w.value(dst), written from v instead of
// read back from dst).
func encodeValue(dst pcommon.Value, v reflect.Value, w *canonicalWriter, d *encDefaults) {
	// The two types written otherwise than their kind says, checked by kind first:
	// comparing a reflect.Type costs an interface comparison per value.
	switch k := v.Kind(); {
	case k == reflect.Struct && v.Type() == timeType:
		s := timeOf(v).Format(time.RFC3339Nano)
		dst.SetStr(s)
		w.strValue(s)
		return
	case k == reflect.Slice && v.Type() == rawType:
		dst.SetEmptyBytes().FromRaw(v.Bytes())
		w.bytesValue(v.Bytes())
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		encodeValue(dst, v.Elem(), w, d)
	case reflect.Interface:
		encodeAny(dst, v.Interface())
		if w != nil {
			w.value(dst) // an untyped value: its canonical form read back (maps sorted)
		}
	case reflect.Bool:
		dst.SetBool(v.Bool())
		w.boolValue(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		dst.SetInt(v.Int())
		w.intValue(v.Int())
	case reflect.Float32, reflect.Float64:
		dst.SetDouble(v.Float())
		w.doubleValue(v.Float())
	case reflect.String:
		dst.SetStr(v.String())
		w.strValue(v.String())
	case reflect.Struct:
		w.kind(pcommon.ValueTypeMap)
		encodeFields(dst.SetEmptyMap(), "", v, w, d)
	case reflect.Slice:
		s := dst.SetEmptySlice()
		s.EnsureCapacity(v.Len())
		w.kind(pcommon.ValueTypeSlice)
		w.count(v.Len())
		for i := range v.Len() {
			encodeValue(s.AppendEmpty(), v.Index(i), w, d)
		}
	case reflect.Map:
		w.kind(pcommon.ValueTypeMap)
		encodeMap(dst.SetEmptyMap(), v, w, d)
	default:
		s := fmt.Sprint(v.Interface())
		dst.SetStr(s)
		w.strValue(s)
	}
}

// timeOf returns the time.Time v holds, without the copy to the heap that
// v.Interface() makes when v is addressable (a field, an element).
func timeOf(v reflect.Value) time.Time {
	if v.CanAddr() {
		return *v.Addr().Interface().(*time.Time)
	}
	return v.Interface().(time.Time)
}

// encodeMap puts the entries of the Go map v (string keys) into mm sorted by key, the
// canonical order of the signature (see encodeFields), and with a writer w their
// canonical encoding into w.
func encodeMap(mm pcommon.Map, v reflect.Value, w *canonicalWriter, d *encDefaults) {
	n := v.Len()
	mm.EnsureCapacity(n)
	w.count(n)
	if ss, ok := v.Interface().(map[string]string); ok {
		// The explanations: keys sorted on the stack, values read without reflection.
		var buf [8]string
		keys := buf[:0]
		for k := range ss {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.key(k)
			mm.PutEmpty(k).SetStr(ss[k])
			w.strValue(ss[k])
		}
		return
	}
	// The entries are copied out once (Key and Value would allocate a copy each) and
	// encoded in key order.
	type kv struct {
		k string
		i int
	}
	keys := make([]kv, 0, n)
	vals := reflect.MakeSlice(reflect.SliceOf(v.Type().Elem()), n, n)
	k := reflect.New(v.Type().Key()).Elem()
	iter := v.MapRange()
	for iter.Next() {
		k.SetIterKey(iter)
		vals.Index(len(keys)).SetIterValue(iter)
		keys = append(keys, kv{k.String(), len(keys)})
	}
	slices.SortFunc(keys, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	for _, e := range keys {
		w.key(e.k)
		encodeValue(mm.PutEmpty(e.k), vals.Index(e.i), w, d)
	}
}

// decodeFields sets the fields of struct v from m's prefix + JSON name entries, in one
// pass over m, with the wire defaults d (nil: none); other entries are ignored.
func decodeFields(m pcommon.Map, prefix string, v reflect.Value, d *wireDefaults) error {
	st := decodeState{defaults: d}
	return structDecoderFor(v.Type()).decode(&st, m, prefix, v)
}

// decodeState is the scratch of one decode: the float64s that decoded *float64 fields
// point to, allocated in blocks rather than one by one (a turn summary has a few
// scores, a session analysis about a hundred).
// defaults are the wire defaults the span was written with (nil: none).
// pending are fields whose default is the enclosing scope's value (fieldDefault.enclosing),
// set when the struct that is their scope is decoded; scopes counts the scopes being
// decoded.
type decodeState struct {
	floats   []float64
	defaults *wireDefaults
	pending  []reflect.Value
	scopes   int
}

func (st *decodeState) float(f float64) *float64 {
	if len(st.floats) == cap(st.floats) {
		st.floats = make([]float64, 0, min(4*cap(st.floats)+8, 64))
	}
	st.floats = append(st.floats, f)
	return &st.floats[len(st.floats)-1]
}

// A decoder sets dst, a settable value of the type it was built for, from src. The
// decoders of a type are built once (decoderFor), so that decoding a value does not
// inspect its type again.
type decoder func(st *decodeState, src pcommon.Value, dst reflect.Value) error

var decoders sync.Map // reflect.Type → decoder

// decoderFor returns the decoder of t, building it on first use (as encoding/json
// builds its encoders: a type that contains itself gets a stand-in that waits for it).
func decoderFor(t reflect.Type) decoder {
	if d, ok := decoders.Load(t); ok {
		return d.(decoder)
	}
	var (
		wg   sync.WaitGroup
		real decoder
	)
	wg.Add(1)
	d, loaded := decoders.LoadOrStore(t, decoder(func(st *decodeState, src pcommon.Value, dst reflect.Value) error {
		wg.Wait()
		return real(st, src, dst)
	}))
	if loaded {
		return d.(decoder)
	}
	real = newDecoder(t)
	wg.Done()
	decoders.Store(t, real)
	return real
}

var float64PtrType = reflect.TypeFor[*float64]()

func newDecoder(t reflect.Type) decoder {
	switch {
	case t == timeType:
		return decodeTime
	case t == rawType:
		return decodeRaw
	case t == float64PtrType:
		return decodeFloatPtr
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem, et := decoderFor(t.Elem()), t.Elem()
		return func(st *decodeState, src pcommon.Value, dst reflect.Value) error {
			p := reflect.New(et)
			if err := elem(st, src, p.Elem()); err != nil {
				return err
			}
			dst.Set(p)
			return nil
		}
	case reflect.Interface:
		return decodeAny
	case reflect.Bool:
		return decodeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt
	case reflect.Float32, reflect.Float64:
		return decodeFloat
	case reflect.String:
		return decodeString
	case reflect.Struct:
		sd := structDecoderFor(t)
		return func(st *decodeState, src pcommon.Value, dst reflect.Value) error {
			if src.Type() != pcommon.ValueTypeMap {
				return typeError(src, "a map")
			}
			return sd.decode(st, src.Map(), "", dst)
		}
	case reflect.Slice:
		return sliceDecoder(t)
	case reflect.Map:
		return mapDecoder(t)
	}
	return func(*decodeState, pcommon.Value, reflect.Value) error {
		return fmt.Errorf("unsupported field type %s", t)
	}
}

func decodeTime(_ *decodeState, src pcommon.Value, dst reflect.Value) error {
	if src.Type() != pcommon.ValueTypeStr {
		return typeError(src, "a time string")
	}
	ts, err := time.Parse(time.RFC3339Nano, src.Str())
	if err != nil {
		return err
	}
	dst.Set(reflect.ValueOf(ts))
	return nil
}

func decodeRaw(_ *decodeState, src pcommon.Value, dst reflect.Value) error {
	if src.Type() != pcommon.ValueTypeBytes {
		return typeError(src, "bytes")
	}
	dst.SetBytes(append([]byte(nil), src.Bytes().AsRaw()...))
	return nil
}

func decodeAny(_ *decodeState, src pcommon.Value, dst reflect.Value) error {
	if raw := src.AsRaw(); raw != nil {
		dst.Set(reflect.ValueOf(raw))
	}
	return nil
}

// scalar returns the decoder of a scalar held as an OTLP value of type typ (want
// names it in errors), which set stores.
func scalar(typ pcommon.ValueType, want string, set func(src pcommon.Value, dst reflect.Value)) decoder {
	return func(_ *decodeState, src pcommon.Value, dst reflect.Value) error {
		if src.Type() != typ {
			return typeError(src, want)
		}
		set(src, dst)
		return nil
	}
}

var (
	decodeBool   = scalar(pcommon.ValueTypeBool, "a bool", func(src pcommon.Value, dst reflect.Value) { dst.SetBool(src.Bool()) })
	decodeInt    = scalar(pcommon.ValueTypeInt, "an int", func(src pcommon.Value, dst reflect.Value) { dst.SetInt(src.Int()) })
	decodeString = scalar(pcommon.ValueTypeStr, "a string", func(src pcommon.Value, dst reflect.Value) { dst.SetString(src.Str()) })
)

// asFloat reads a double, or an int as a double.
func asFloat(src pcommon.Value) (float64, error) {
	switch src.Type() {
	case pcommon.ValueTypeDouble:
		return src.Double(), nil
	case pcommon.ValueTypeInt:
		return float64(src.Int()), nil
	}
	return 0, typeError(src, "a double")
}

func decodeFloat(_ *decodeState, src pcommon.Value, dst reflect.Value) error {
	f, err := asFloat(src)
	if err == nil {
		dst.SetFloat(f)
	}
	return err
}

func decodeFloatPtr(st *decodeState, src pcommon.Value, dst reflect.Value) error {
	f, err := asFloat(src)
	if err == nil {
		dst.Set(reflect.ValueOf(st.float(f)))
	}
	return err
}

func sliceDecoder(t reflect.Type) decoder {
	elem := decoderFor(t.Elem())
	return func(st *decodeState, src pcommon.Value, dst reflect.Value) error {
		if src.Type() != pcommon.ValueTypeSlice {
			return typeError(src, "an array")
		}
		s := src.Slice()
		out := reflect.MakeSlice(t, s.Len(), s.Len())
		for i := range s.Len() {
			if err := elem(st, s.At(i), out.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		dst.Set(out)
		return nil
	}
}

func mapDecoder(t reflect.Type) decoder {
	elem := decoderFor(t.Elem())
	return func(st *decodeState, src pcommon.Value, dst reflect.Value) error {
		if src.Type() != pcommon.ValueTypeMap {
			return typeError(src, "a map")
		}
		out := reflect.MakeMapWithSize(t, src.Map().Len())
		// One key and one value, reused: SetMapIndex copies them into the map.
		kv, ev := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		for k, v := range src.Map().All() {
			ev.SetZero()
			if err := elem(st, v, ev); err != nil {
				return fmt.Errorf("[%q]: %w", k, err)
			}
			kv.SetString(k)
			out.SetMapIndex(kv, ev)
		}
		dst.Set(out)
		return nil
	}
}

// structDecoder sets a struct's fields from the entries of a map.
type structDecoder struct {
	tf   *typeFields
	decs []decoder // the decoder of each field, by position in tf.list
	rank []int     // the position of each field of tf.list in tf.sorted
}

var structDecoders sync.Map // reflect.Type → *structDecoder

func structDecoderFor(t reflect.Type) *structDecoder {
	if sd, ok := structDecoders.Load(t); ok {
		return sd.(*structDecoder)
	}
	tf := typeFieldsOf(t)
	sd := &structDecoder{tf: tf, decs: make([]decoder, len(tf.list)), rank: make([]int, len(tf.list))}
	for i, f := range tf.list {
		sd.decs[i] = decoderFor(t.Field(f.index).Type)
	}
	for r, i := range tf.sorted {
		sd.rank[i] = r
	}
	sd2, _ := structDecoders.LoadOrStore(t, sd)
	return sd2.(*structDecoder)
}

// decode sets the fields of struct v from m's prefix + JSON name entries, in one pass
// over m; other entries are ignored. A key present twice sets its field twice (the
// last value stays).
//
// With wire defaults, a field that has one is set to it when m has no entry for it,
// and left zero when its entry is an empty value.
func (sd *structDecoder) decode(st *decodeState, m pcommon.Map, prefix string, v reflect.Value) error {
	next := 0
	td, seen := st.defaults.of(sd.tf), uint64(0)
	mark := len(st.pending)
	if td != nil && td.scope >= 0 {
		st.scopes++
	}
	for k, src := range m.All() {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		i, ok := sd.field(name, &next)
		if !ok {
			continue
		}
		if td.has(i) {
			seen |= 1 << i
			if src.Type() == pcommon.ValueTypeEmpty {
				v.Field(sd.tf.list[i].index).SetZero() // a key present twice: the last stays
				continue
			}
			if fd := &td.fields[i]; fd.entries != nil {
				if err := decodeEntries(src, v.Field(sd.tf.list[i].index), fd); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				continue
			}
		}
		if err := sd.decs[i](st, src, v.Field(sd.tf.list[i].index)); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	if td != nil {
		st.setDefaults(td, td.mask&^seen, v, sd.tf, mark)
	}
	return nil
}

// lookAhead is how many fields past the last one found field compares a name with
// before it looks the name up by hash: the encoder writes fields in name order, most
// of them present.
const lookAhead = 6

// field returns the position in tf.list of the field called name. *next is the
// position in tf.sorted after the field found last; the fields of a map the encoder
// wrote come in that order, so the name is usually one of the next few there.
func (sd *structDecoder) field(name string, next *int) (int, bool) {
	sorted, names := sd.tf.sorted, sd.tf.names
	for r := *next; r < len(sorted) && r < *next+lookAhead; r++ {
		if names[sorted[r]] == name {
			*next = r + 1
			return sorted[r], true
		}
	}
	i, ok := sd.tf.byName[name]
	if ok {
		*next = sd.rank[i] + 1
	}
	return i, ok
}

func typeError(src pcommon.Value, want string) error {
	return fmt.Errorf("is a %s, want %s", src.Type(), want)
}

// encodeAny writes an untyped value (Analysis.References: a reference.CaseResult or its
// decoded JSON) as the OTLP value of its JSON form: objects as maps, arrays as slices,
// numbers as doubles. A value that has no JSON form is written as its JSON error text.
func encodeAny(dst pcommon.Value, v any) {
	if dst.FromRaw(v) == nil {
		return
	}
	js, err := json.Marshal(v)
	if err != nil {
		dst.SetStr("unencodable: " + err.Error())
		return
	}
	var raw any
	if err := json.Unmarshal(js, &raw); err != nil || dst.FromRaw(raw) != nil {
		dst.SetStr(string(js))
	}
}
