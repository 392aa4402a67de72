// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// encodePlain writes v (*TurnResult or *Analysis) as an earlier collector did: no wire
// defaults, no wire-defaults attribute.
func encodePlain(m pcommon.Map, v any) {
	switch v := v.(type) {
	case *evaluation.TurnResult:
		encodeTop(m, semconv.AgentEvalTurnPrefix, reflect.ValueOf(v).Elem(), nil, nil)
	case *evaluation.Analysis:
		encodeTop(m, semconv.AgentEvalSessionPrefix, reflect.ValueOf(v).Elem(), nil, nil)
	}
}

// encodeDefault writes v with its prefix's wire defaults (EncodeTurn, EncodeAnalysis).
func encodeDefault(m pcommon.Map, v any) {
	switch v := v.(type) {
	case *evaluation.TurnResult:
		EncodeTurn(m, v)
	case *evaluation.Analysis:
		EncodeAnalysis(m, v)
	}
}

// decodeBack decodes m as v's type and returns a pointer to the result.
func decodeBack(t testing.TB, m pcommon.Map, v any) any {
	t.Helper()
	switch v.(type) {
	case *evaluation.TurnResult:
		tr, err := DecodeTurn(m)
		require.NoError(t, err)
		return &tr
	case *evaluation.Analysis:
		a, err := DecodeAnalysis(m)
		require.NoError(t, err)
		return &a
	}
	t.Fatalf("unexpected %T", v)
	return nil
}

// sameDecoded checks the wire defaults' promise on v: what DecodeTurn/DecodeAnalysis
// give back from v written with them, and from v written in the plain form of earlier
// collectors, is v as the plain form writes it (every field, nil and empty kept apart,
// doubles by their bits).
func sameDecoded(t testing.TB, name string, v any) {
	t.Helper()
	want := pcommon.NewMap()
	encodePlain(want, v)
	for _, form := range []struct {
		name   string
		encode func(pcommon.Map, any)
	}{{"defaults", encodeDefault}, {"plain", encodePlain}} {
		m := pcommon.NewMap()
		form.encode(m, v)
		got := pcommon.NewMap()
		encodePlain(got, decodeBack(t, m, v))
		require.True(t, sameMap(want, got, true), "%s, %s form: decoded differs", name, form.name)
	}
}

// withDefaults sets, at random, the fields of v (and of the structs it holds) that have
// a wire default in d to that default, so that random values exercise both branches;
// an enclosing default to the enclosing scope's value (scope, when inScope).
func withDefaults(r *rand.Rand, v reflect.Value, d *wireDefaults) {
	var walk func(v reflect.Value, scope string, inScope bool)
	walk = func(v reflect.Value, scope string, inScope bool) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), scope, inScope)
			}
		case reflect.Slice:
			if v.Type() == rawType {
				return
			}
			for i := range v.Len() {
				walk(v.Index(i), scope, inScope)
			}
		case reflect.Struct:
			if v.Type() == timeType {
				return
			}
			tf := typeFieldsOf(v.Type())
			td := d.of(tf)
			inner, innerIn := scope, inScope
			if td != nil && td.scope >= 0 {
				inner, innerIn = v.Field(tf.list[td.scope].index).String(), true
			}
			var st decodeState
			for i, f := range tf.list {
				switch fd := td.fieldDefault(i); {
				case fd != nil && fd.entries != nil:
					if m, ok := v.Field(f.index).Interface().(map[string]string); ok && m != nil {
						for _, k := range fd.keys {
							switch r.IntN(3) {
							case 0:
								m[k] = fd.entries[k]
							case 1:
								delete(m, k)
							default:
								m[k] = randString(r)
							}
						}
					}
				case fd != nil && fd.enclosing && inScope && r.IntN(2) == 0:
					v.Field(f.index).SetString(scope)
				case fd != nil && !fd.enclosing && r.IntN(2) == 0:
					fd.set(&st, v.Field(f.index))
				default:
					walk(v.Field(f.index), inner, innerIn)
				}
			}
		}
	}
	walk(v, "", false)
}

// TestWireDefaultsOnGoldens: every golden analysis (the session span), each turn's
// complete result and its summaries (provisional and final) decode to what was encoded,
// from the form with wire defaults and from the plain one; the wire defaults make the
// session spans smaller, and the plain form's signatures are the ones
// TestSignatureIsStable pins for it.
func TestWireDefaultsOnGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.analyses.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var plainBytes, defaultBytes int
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".analyses.json")
		for _, a := range goldenAnalyses(t, name) {
			sameDecoded(t, name+"/session", &a)
			p, d := pcommon.NewMap(), pcommon.NewMap()
			encodePlain(p, &a)
			encodeDefault(d, &a)
			plainBytes += protoSize(p)
			defaultBytes += protoSize(d)
			// What the exporter stores is the analysis' JSON: the same from either form.
			back, err := DecodeAnalysis(d)
			require.NoError(t, err)
			want, _ := json.Marshal(a)
			got, _ := json.Marshal(back)
			require.JSONEq(t, string(want), string(got), name)
			for i := range a.TurnResults {
				sameDecoded(t, name+"/turn", &a.TurnResults[i])
				for _, final := range []bool{false, true} {
					tr := a.TurnResults[i]
					tr.Final = final
					sum := TurnSummary(&tr)
					sameDecoded(t, name+"/summary", &sum)
				}
			}
		}
	}
	assert.Less(t, defaultBytes, plainBytes)
	t.Logf("session spans: %d bytes plain, %d with wire defaults", plainBytes, defaultBytes)
}

// TestWireDefaultsEdges: a field whose value is absent in the plain form but not its
// default (a not-evaluable call: no score, no verdict text, nil issues, not executed, no
// status, no explanation) is written as an empty value and decodes to that absent value;
// a default is left out and decodes to the default.
func TestWireDefaultsEdges(t *testing.T) {
	one := 1.0
	a := evaluation.Analysis{SessionID: "s", TurnResults: []evaluation.TurnResult{{
		TraceID: "01",
		Interactions: []evaluation.InteractionResult{{AgentID: "a", ToolCalls: []evaluation.ToolCallResult{
			{ToolName: "none"}, // every defaulted field absent
			{ToolName: "all", AgentID: "a", Score: &one, Verdict: evaluation.VerdictValid, Issues: []evaluation.ToolIssue{},
				Executed: true, Status: "ok", Explanation: evaluation.ExplanationAllChecksPassed},
			{ToolName: "other", AgentID: "b"}, // not the enclosing interaction's agent
		}, Handoffs: []session.Handoff{{FromAgent: "a", ToAgent: "b"}, {ToAgent: "c"}},
			Explanations: map[string]string{"reasoning": evaluation.ExplanationNoReasoning, "handoff": "other", "score": "s"}}},
	}}}
	m := pcommon.NewMap()
	EncodeAnalysis(m, &a)
	v, ok := m.Get(semconv.AgentEvalSessionWireDefaults)
	require.True(t, ok)
	assert.Equal(t, int64(wireDefaultsVersion), v.Int())
	tr, _ := m.Get(semconv.AgentEvalSessionPrefix + "turn_results")
	calls, _ := tr.Slice().At(0).Map().Get("interactions")
	calls, _ = calls.Slice().At(0).Map().Get("tool_calls")
	none, all := calls.Slice().At(0).Map(), calls.Slice().At(1).Map()
	agent, _ := calls.Slice().At(2).Map().Get("agent_id")
	assert.Equal(t, "b", agent.Str(), "another agent than the enclosing one is written")
	for _, k := range []string{"agent_id", "score", "verdict", "issues", "executed", "status", "explanation"} {
		e, ok := none.Get(k)
		require.True(t, ok, k)
		assert.Equal(t, pcommon.ValueTypeEmpty, e.Type(), k)
		_, ok = all.Get(k)
		assert.False(t, ok, "%s: a default is left out", k)
	}
	sameDecoded(t, "edges", &a)
	back, err := DecodeAnalysis(m)
	require.NoError(t, err)
	got := back.TurnResults[0].Interactions[0].ToolCalls
	assert.Equal(t, a.TurnResults[0].Interactions[0].ToolCalls, got)
	assert.Nil(t, got[0].Issues)
	ex, _ := tr.Slice().At(0).Map().Get("interactions")
	ex, _ = ex.Slice().At(0).Map().Get("explanations")
	assert.Equal(t, map[string]any{"handoff": "other", "response_quality": nil, "score": "s"}, ex.Map().AsRaw(),
		"a default entry left out, a missing default key empty")
	assert.Equal(t, a.TurnResults[0].Interactions[0].Explanations, back.TurnResults[0].Interactions[0].Explanations)
	assert.Equal(t, a.TurnResults[0].Interactions[0].Handoffs, back.TurnResults[0].Interactions[0].Handoffs)
	assert.NotNil(t, got[1].Issues)

	// An unknown table is refused, not read as another.
	m.PutInt(semconv.AgentEvalSessionWireDefaults, 99)
	_, err = DecodeAnalysis(m)
	assert.ErrorContains(t, err, "unknown wire defaults")
	m.PutStr(semconv.AgentEvalSessionWireDefaults, "1")
	_, err = DecodeAnalysis(m)
	assert.ErrorContains(t, err, "want an int")
}

// Types of TestCheckScopeReachedTwoWays: a struct with an enclosing default held by a
// scope in a list and in a map.
type scopeLeaf struct {
	Agent string `json:"agent"`
	N     int    `json:"n"`
}

type scopeListAndMap struct {
	Agent string               `json:"agent"`
	List  []scopeLeaf          `json:"list"`
	ByKey map[string]scopeLeaf `json:"by_key"`
}

// TestCheckScopeReachedTwoWays: a struct with an enclosing default that a scope holds in
// a map is refused when the table is built, also when the same type is reached through a
// list first (the decoder could not set its default inside the map's copy).
func TestCheckScopeReachedTwoWays(t *testing.T) {
	assert.PanicsWithValue(t, "evalspan: evalspan.scopeLeaf with an enclosing default is held in a map", func() {
		newDefaults(turnSlot, map[reflect.Type]typeSpec{
			reflect.TypeFor[scopeListAndMap](): {scope: "agent"},
			reflect.TypeFor[scopeLeaf]():       {fields: map[string]fieldDefault{"agent": enclosingDefault()}},
		})
	})
}

// randomResults returns a random turn result and analysis (fill), the fields that have
// a wire default set to it at random (withDefaults).
func randomResults(r *rand.Rand) (evaluation.TurnResult, evaluation.Analysis) {
	var tr evaluation.TurnResult
	fill(r, reflect.ValueOf(&tr).Elem(), 0)
	withDefaults(r, reflect.ValueOf(&tr).Elem(), turnDefaults)
	var a evaluation.Analysis
	fill(r, reflect.ValueOf(&a).Elem(), 0)
	withDefaults(r, reflect.ValueOf(&a).Elem(), sessionDefaults)
	return tr, a
}

// FuzzWireDefaults: random turn results and analyses (every field kind, the defaulted
// fields at random set to their defaults) decode to what was encoded, from the form
// with wire defaults and from the plain one.
func FuzzWireDefaults(f *testing.F) {
	for seed := range uint64(300) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		tr, a := randomResults(rand.New(rand.NewPCG(seed, seed>>32^0x51ed27a3c5b3d9e1)))
		tr.TraceID, a.SessionID = "t"+tr.TraceID, "s"+a.SessionID // what the decoders require
		sameDecoded(t, "turn", &tr)
		sameDecoded(t, "analysis", &a)
	})
}
