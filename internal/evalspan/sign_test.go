// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

func signedSessionSpan(t *testing.T, s *Signer) ptrace.Traces {
	t.Helper()
	return signedSessionSpanWith(s, EncodeAnalysis)
}

// signedSessionSpanWith is signedSessionSpan with the analysis written by encode.
func signedSessionSpanWith(s *Signer, encode func(pcommon.Map, *evaluation.Analysis)) ptrace.Traces {
	td := ptrace.NewTraces()
	m := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
	m.PutStr(semconv.AgentEvalKind, semconv.EvalKindAgentSession)
	m.PutStr(semconv.AgentEvalSessionID, "s-1")
	m.PutStr("gen_ai.conversation.id", "s-1")
	encode(m, &evaluation.Analysis{
		SessionID: "s-1", OverallScore: f64(0.88),
		PerAgentScores: map[string]evaluation.AgentScores{"triage": {Overall: f64(1)}, "refund": {Overall: f64(0.5)}},
		TurnResults:    []evaluation.TurnResult{{TraceID: "01", Explanations: map[string]string{"a": "1", "b": "2"}}},
		References:     map[string]any{"n": 1.5, "raw": []any{"x", true}},
	})
	s.Sign(m)
	return td
}

func attrsOf(td ptrace.Traces) pcommon.Map {
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
}

// TestSignVerify: a signed span verifies with the same key, also after an OTLP protobuf
// or JSON round trip (a two-tier deployment), and any change to what the exporter reads
// breaks the signature.
func TestSignVerify(t *testing.T) {
	s := NewSigner("0123456789abcdef-shared")
	td := signedSessionSpan(t, s)
	require.NoError(t, s.Verify(attrsOf(td)))

	for name, codec := range map[string]struct {
		ptrace.Marshaler
		ptrace.Unmarshaler
	}{"proto": {&ptrace.ProtoMarshaler{}, &ptrace.ProtoUnmarshaler{}}, "json": {&ptrace.JSONMarshaler{}, &ptrace.JSONUnmarshaler{}}} {
		b, err := codec.MarshalTraces(td)
		require.NoError(t, err)
		back, err := codec.UnmarshalTraces(b)
		require.NoError(t, err)
		assert.NoError(t, NewSigner("0123456789abcdef-shared").Verify(attrsOf(back)), name)
	}

	tests := map[string]func(m pcommon.Map){
		"score changed":      func(m pcommon.Map) { m.PutDouble("agent_eval.session.overall_score", 0.01) },
		"score made an int":  func(m pcommon.Map) { m.PutInt("agent_eval.session.overall_score", 1) },
		"session id changed": func(m pcommon.Map) { m.PutStr(semconv.AgentEvalSessionID, "s-2") },
		"kind changed":       func(m pcommon.Map) { m.PutStr(semconv.AgentEvalKind, semconv.EvalKindTurn) },
		"field added":        func(m pcommon.Map) { m.PutBool("agent_eval.session.partial", true) },
		"field removed":      func(m pcommon.Map) { m.Remove("agent_eval.session.overall_score") },
		"nested value": func(m pcommon.Map) {
			v, _ := m.Get("agent_eval.session.turn_results")
			v.Slice().At(0).Map().PutStr("trace_id", "02")
		},
		"signature garbage":   func(m pcommon.Map) { m.PutStr(semconv.AgentEvalSignature, "v1:zz") },
		"signature not a str": func(m pcommon.Map) { m.PutInt(semconv.AgentEvalSignature, 1) },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			td := signedSessionSpan(t, s)
			change(attrsOf(td))
			assert.ErrorIs(t, s.Verify(attrsOf(td)), ErrBadSignature)
		})
	}

	t.Run("duplicate key on the wire", func(t *testing.T) {
		// A pcommon.Map can carry a key twice (as OTLP can); the decoder's last value
		// would win, so the duplicate must break the signature.
		td := signedSessionSpan(t, s)
		m := attrsOf(td)
		const key = "agent_eval.session.overall_score"
		placeholder := strings.Repeat("z", len(key))
		m.PutDouble(placeholder, 0.01)
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		// Rename the placeholder (same length: no protobuf length changes) to a second key.
		b = bytes.Replace(b, []byte(placeholder), []byte(key), 1)
		back, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		require.NoError(t, err)
		a, err := DecodeAnalysis(attrsOf(back))
		require.NoError(t, err)
		require.InDelta(t, 0.01, *a.OverallScore, 1e-9, "the decoder takes the duplicate")
		assert.ErrorIs(t, s.Verify(attrsOf(back)), ErrBadSignature)
	})

	t.Run("unrelated attribute", func(t *testing.T) {
		td := signedSessionSpan(t, s)
		attrsOf(td).PutStr("gen_ai.conversation.id", "other")
		assert.NoError(t, s.Verify(attrsOf(td)), "only what the exporter reads is signed")
	})
	t.Run("unsigned", func(t *testing.T) {
		td := signedSessionSpan(t, s)
		attrsOf(td).Remove(semconv.AgentEvalSignature)
		assert.ErrorIs(t, s.Verify(attrsOf(td)), ErrUnsigned)
	})
	t.Run("other key", func(t *testing.T) {
		assert.ErrorIs(t, NewSigner("another-key-of-16-bytes").Verify(attrsOf(signedSessionSpan(t, s))), ErrBadSignature)
		assert.ErrorIs(t, NewSigner("").Verify(attrsOf(signedSessionSpan(t, s))), ErrBadSignature)
	})
	t.Run("process key", func(t *testing.T) {
		// Two Signers without a key (processor and exporter of one collector) agree.
		assert.NoError(t, NewSigner("").Verify(attrsOf(signedSessionSpan(t, NewSigner("")))))
	})
}

// TestSignatureIgnoresAttributeOrder: the signature depends on the attributes, not on
// the order a map holds them in. The encoder writes every map in key order, which the
// canonical encoding reads straight through; a span whose maps are in another order
// (a collector of an earlier version wrote struct fields in declaration order; OTLP
// does not keep order promises) is sorted and gives the same signature.
func TestSignatureIgnoresAttributeOrder(t *testing.T) {
	s := NewSigner("0123456789abcdef-order")
	for _, m := range []pcommon.Map{attrsOf(signedSessionSpan(t, s)), goldenTurnSpan(t, s)} {
		want := sigOf(m)
		rev := pcommon.NewMap()
		reversed(m, rev)
		require.NoError(t, s.Verify(rev))
		s.Sign(rev)
		assert.Equal(t, want, sigOf(rev))
	}
}

// goldenTurnSpan is the signed turn span of the last turn of a golden analysis.
func goldenTurnSpan(t *testing.T, s *Signer) pcommon.Map {
	as := goldenAnalyses(t, "langgraph_multi_turn")
	m := pcommon.NewMap()
	m.PutStr(semconv.AgentEvalKind, semconv.EvalKindTurn)
	m.PutStr(semconv.AgentEvalSessionID, as[0].SessionID)
	EncodeTurn(m, &as[0].TurnResults[len(as[0].TurnResults)-1])
	s.Sign(m)
	return m
}

// reversed copies src into dst with the entries of every map in reverse order.
func reversed(src, dst pcommon.Map) {
	type kv struct {
		k string
		v pcommon.Value
	}
	var es []kv
	for k, v := range src.All() {
		es = append(es, kv{k, v})
	}
	for i := len(es) - 1; i >= 0; i-- {
		reversedValue(es[i].v, dst.PutEmpty(es[i].k))
	}
}

func reversedValue(src, dst pcommon.Value) {
	switch src.Type() {
	case pcommon.ValueTypeMap:
		reversed(src.Map(), dst.SetEmptyMap())
	case pcommon.ValueTypeSlice:
		s := dst.SetEmptySlice()
		for i := range src.Slice().Len() {
			reversedValue(src.Slice().At(i), s.AppendEmpty())
		}
	default:
		src.CopyTo(dst)
	}
}
