// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// sameAttributes reports whether a and b hold the same entries in the same order, nested
// maps included, doubles by their bits. The maps of the untyped Analysis.References
// (written from Go maps, in their random order) may hold them in any order.
func sameAttributes(a, b pcommon.Map) bool { return sameMap(a, b, false) }

func sameMap(a, b pcommon.Map, anyOrder bool) bool {
	if a.Len() != b.Len() {
		return false
	}
	type kv struct {
		k string
		v pcommon.Value
	}
	var as, bs []kv
	for k, v := range a.All() {
		as = append(as, kv{k, v})
	}
	for k, v := range b.All() {
		bs = append(bs, kv{k, v})
	}
	if anyOrder {
		byKey := func(x, y kv) int { return strings.Compare(x.k, y.k) }
		slices.SortStableFunc(as, byKey)
		slices.SortStableFunc(bs, byKey)
	}
	for i := range as {
		if as[i].k != bs[i].k || !sameValue(as[i].v, bs[i].v, anyOrder || strings.HasSuffix(as[i].k, "references")) {
			return false
		}
	}
	return true
}

func sameValue(a, b pcommon.Value, anyOrder bool) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Type() {
	case pcommon.ValueTypeMap:
		return sameMap(a.Map(), b.Map(), anyOrder)
	case pcommon.ValueTypeSlice:
		if a.Slice().Len() != b.Slice().Len() {
			return false
		}
		for i := range a.Slice().Len() {
			if !sameValue(a.Slice().At(i), b.Slice().At(i), anyOrder) {
				return false
			}
		}
		return true
	case pcommon.ValueTypeDouble:
		return math.Float64bits(a.Double()) == math.Float64bits(b.Double())
	}
	return a.Equal(b) // scalars and bytes
}

// sealedAndWalked encodes v into two spans that hold the attributes pre wrote: one
// with the signing encode (Signer.EncodeTurn/EncodeAnalysis, then Put), one with the
// plain encode and Sign, which walks the finished map. It returns both spans' OTLP
// protobuf bytes and signatures.
func sealedAndWalked(t testing.TB, s *Signer, pre func(pcommon.Map), v any) (sealed, walked []byte, sealedSig, walkedSig string) {
	t.Helper()
	span := func(encode func(pcommon.Map)) ([]byte, string) {
		td := ptrace.NewTraces()
		m := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
		pre(m)
		encode(m)
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		return b, sigOf(m)
	}
	sealed, sealedSig = span(func(m pcommon.Map) {
		switch v := v.(type) {
		case *evaluation.TurnResult:
			s.EncodeTurn(m, v).Put(m)
		case *evaluation.Analysis:
			s.EncodeAnalysis(m, v).Put(m)
		}
	})
	walked, walkedSig = span(func(m pcommon.Map) {
		switch v := v.(type) {
		case *evaluation.TurnResult:
			EncodeTurn(m, v)
		case *evaluation.Analysis:
			EncodeAnalysis(m, v)
		}
		s.Sign(m)
	})
	return sealed, walked, sealedSig, walkedSig
}

// TestSealedSignatureOnGoldens: on every golden analysis, the signing encode writes the
// same attributes, in the same order, as the plain encode, and the signature Sign
// computes by walking them: for the session span, each turn's complete result and its
// summaries (provisional and final), as the processor emits them. The signatures verify.
func TestSealedSignatureOnGoldens(t *testing.T) {
	s := NewSigner("0123456789abcdef-sealed")
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.analyses.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	spans := 0
	check := func(name string, pre func(pcommon.Map), v any) {
		sealed, walked, sealedSig, walkedSig := sealedAndWalked(t, s, pre, v)
		require.True(t, bytes.Equal(sealed, walked), "%s: attributes differ", name)
		require.Equal(t, walkedSig, sealedSig, name)
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(sealed)
		require.NoError(t, err)
		require.NoError(t, s.Verify(attrsOf(td)), name)
		spans++
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".analyses.json")
		for ai, a := range goldenAnalyses(t, name) {
			check(name+"/session", func(m pcommon.Map) {
				m.PutStr(semconv.AgentEvalKind, semconv.EvalKindAgentSession)
				m.PutStr(semconv.AgentEvalSessionID, a.SessionID)
				m.PutStr(semconv.GenAIConversationID, a.SessionID)
				m.PutBool(semconv.AgentEvalPartial, a.Partial)
			}, &a)
			for i := range a.TurnResults {
				pre := func(m pcommon.Map) {
					m.PutStr(semconv.AgentEvalKind, semconv.EvalKindTurn)
					m.PutStr(semconv.AgentEvalSessionID, a.SessionID)
				}
				check(name+"/turn", pre, &a.TurnResults[i])
				for _, final := range []bool{false, true} {
					tr := a.TurnResults[i]
					tr.Final = final
					sum := TurnSummary(&tr)
					check(name+"/summary", pre, &sum)
				}
			}
			_ = ai
		}
	}
	t.Logf("%d spans from %d golden files", spans, len(files))
}

// FuzzSealedSignature: on random turn results and analyses (every field kind: nil,
// empty and full lists and maps, absent and present pointers, untyped references whose
// maps come in random order, times, raw JSON, NaN and -0), over spans that already hold
// other attributes (signed or not, of a key the encode then writes, of a key under the
// prefix that no field has), the signing encode writes what the plain encode writes and
// signs what Sign signs.
func FuzzSealedSignature(f *testing.F) {
	for seed := range uint64(300) {
		f.Add(seed, uint8(seed))
	}
	s := NewSigner("0123456789abcdef-sealed-fuzz")
	f.Fuzz(func(t *testing.T, seed uint64, pre uint8) {
		tr, a := randomResults(rand.New(rand.NewPCG(seed, seed>>32^0x9e3779b97f4a7c15)))
		for _, c := range []struct {
			prefix string
			v      any
		}{{semconv.AgentEvalTurnPrefix, &tr}, {semconv.AgentEvalSessionPrefix, &a}} {
			sealed, walked, sealedSig, walkedSig := sealedAndWalked(t, s, preAttributes(c.prefix, pre), c.v)
			require.True(t, sameAttributes(attrsOfProto(t, sealed), attrsOfProto(t, walked)), "seed %d/%d %s: attributes differ", seed, pre, c.prefix)
			require.Equal(t, walkedSig, sealedSig, "seed %d/%d %s", seed, pre, c.prefix)
		}
	})
}

func attrsOfProto(t testing.TB, b []byte) pcommon.Map {
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	return attrsOf(td)
}

// preAttributes returns what a span holds before the typed attributes are encoded,
// chosen by the bits of pre.
func preAttributes(prefix string, pre uint8) func(pcommon.Map) {
	return func(m pcommon.Map) {
		if pre&1 != 0 {
			m.PutStr("gen_ai.conversation.id", "c") // not signed
		}
		m.PutStr(semconv.AgentEvalKind, "k")
		if pre&2 != 0 {
			m.PutStr(semconv.AgentEvalSessionID, "s")
		}
		if pre&4 != 0 {
			m.PutInt(prefix+"trace_id", 7) // a key the encode writes again, another type
		}
		if pre&8 != 0 {
			m.PutStr(prefix+"zz_not_a_field", "x") // signed, no field of that name
		}
		if pre&16 != 0 {
			m.PutStr(prefix+"aa_not_a_field", "y")
		}
		if pre&32 != 0 {
			m.PutEmptyMap(prefix+"m_not_a_field").PutStr("b", "1")
		}
		if pre&64 != 0 {
			m.PutDouble(semconv.AgentEvalPrefix+"overall_score", 0.5) // not signed
		}
	}
}

// fill sets v to a random value of its type, down to a session analysis's tool calls and
// their issues (analysis → turns → interactions → tool calls → issues: depth 10).
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if depth > 10 {
		return
	}
	switch {
	case v.Type() == timeType:
		if r.IntN(4) > 0 {
			v.Set(reflect.ValueOf(time.Unix(r.Int64N(2e9), r.Int64N(1e9)).In(time.FixedZone("z", 3600*(r.IntN(5)-2)))))
		}
		return
	case v.Type() == rawType:
		if r.IntN(3) > 0 {
			v.SetBytes([]byte(`{"a":` + randString(r) + `}`)[:r.IntN(6)])
		}
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(r.Int64N(7) - 3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1, -0.25, math.Copysign(0, -1), math.NaN(), math.Inf(1), r.Float64()}[r.IntN(7)])
	case reflect.String:
		v.SetString(randString(r))
	case reflect.Pointer:
		if r.IntN(3) > 0 {
			p := reflect.New(v.Type().Elem())
			fill(r, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		switch r.IntN(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + r.IntN(3)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch r.IntN(4) {
		case 0:
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + r.IntN(4) {
				k := reflect.New(v.Type().Key()).Elem()
				fill(r, k, depth+1)
				e := reflect.New(v.Type().Elem()).Elem()
				fill(r, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Interface:
		if x := randAny(r, depth); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	}
}

func randString(r *rand.Rand) string {
	return []string{"", "a", "b", "ab", "é", "x y", strings.Repeat("long", 40)}[r.IntN(7)]
}

// randAny is an untyped value as the evaluator's references hold one: JSON values, maps
// of several keys (a Go map, written in random order), and a struct (no OTLP form:
// written through its JSON).
func randAny(r *rand.Rand, depth int) any {
	switch r.IntN(7) {
	case 0:
		return r.Float64()
	case 1:
		return randString(r)
	case 2:
		return r.IntN(2) == 1
	case 3:
		if depth > 6 {
			return nil
		}
		return []any{randAny(r, depth+1), randString(r)}
	case 4:
		if depth > 6 {
			return map[string]any{}
		}
		m := map[string]any{}
		for i := range 2 + r.IntN(5) {
			m[string(rune('a'+i))+randString(r)] = randAny(r, depth+1)
		}
		return m
	case 5:
		return struct {
			N float64 `json:"n"`
			S string  `json:"s"`
		}{r.Float64(), randString(r)}
	}
	return nil
}

// TestSealedSignatureDuplicateOnWire: a span that already holds a key twice (possible on
// the wire) gets the signature Sign gives it, whichever of its entries the encode writes.
func TestSealedSignatureDuplicateOnWire(t *testing.T) {
	s := NewSigner("0123456789abcdef-sealed-dup")
	const key = semconv.AgentEvalTurnPrefix + "trace_id"
	placeholder := strings.Repeat("z", len(key))
	td := ptrace.NewTraces()
	m := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
	m.PutStr(semconv.AgentEvalKind, semconv.EvalKindTurn)
	m.PutStr(key, "first")
	m.PutStr(placeholder, "second")
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	b = bytes.Replace(b, []byte(placeholder), []byte(key), 1)
	tr := &evaluation.TurnResult{TraceID: "0af7651916cd43dd8448eb211c80319c", IntentDrift: f64(0.5)}
	spans := func() pcommon.Map {
		back, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		require.NoError(t, err)
		return attrsOf(back)
	}
	sealed, walked := spans(), spans()
	require.Equal(t, 3, sealed.Len(), "the key is held twice")
	s.EncodeTurn(sealed, tr).Put(sealed)
	EncodeTurn(walked, tr)
	s.Sign(walked)
	assert.True(t, sameAttributes(sealed, walked))
	assert.Equal(t, sigOf(walked), sigOf(sealed))
}

// TestEncodeWideStruct: a struct of more than 64 fields (past the presence bitmap)
// gets exactly its present fields, and their canonical encoding as a nested map.
func TestEncodeWideStruct(t *testing.T) {
	var fs []reflect.StructField
	for i := range 70 {
		fs = append(fs, reflect.StructField{
			Name: "F" + strconv.Itoa(i), Type: reflect.TypeFor[string](),
			Tag: reflect.StructTag(`json:"f` + strconv.Itoa(100+i) + `"`),
		})
	}
	v := reflect.New(reflect.StructOf(fs)).Elem()
	var want []string
	for i := range 70 {
		if i%3 == 1 || i == 69 {
			v.Field(i).SetString("x")
			want = append(want, "f"+strconv.Itoa(100+i))
		}
	}
	w := new(canonicalWriter)
	val := pcommon.NewValueEmpty()
	encodeValue(val, v, w, nil)
	var got []string
	for k := range val.Map().All() {
		got = append(got, k)
	}
	assert.Equal(t, want, got)
	walked := new(canonicalWriter)
	walked.value(val)
	assert.Equal(t, walked.b, w.b, "canonical bytes written while encoding = read back")
}
