// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// BenchmarkAnalysisRoundTrip compares what the result path costs per session analysis,
// from the processor's evaluation span to the exporter's Go value: the typed attributes
// (this package) against the former JSON string attribute (json.Marshal, then
// json.Unmarshal), on the largest golden analysis, with the OTLP protobuf encoding
// of the span that carries it (what the trace export pays).
func BenchmarkAnalysisRoundTrip(b *testing.B) {
	as := goldenAnalyses(b, "langgraph_multi_turn")
	a := &as[0]
	marshaler := ptrace.ProtoMarshaler{}
	span := func() (ptrace.Traces, pcommon.Map) {
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		return td, sp.Attributes()
	}
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		var size int
		for b.Loop() {
			td, m := span()
			EncodeAnalysis(m, a)
			buf, err := marshaler.MarshalTraces(td)
			if err != nil {
				b.Fatal(err)
			}
			size = len(buf)
			if _, err := DecodeAnalysis(m); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size), "otlp_bytes")
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		var size int
		for b.Loop() {
			td, m := span()
			js, err := json.Marshal(a)
			if err != nil {
				b.Fatal(err)
			}
			m.PutStr(semconv.AgentEvalAnalysis, string(js))
			buf, err := marshaler.MarshalTraces(td)
			if err != nil {
				b.Fatal(err)
			}
			size = len(buf)
			v, _ := m.Get(semconv.AgentEvalAnalysis)
			var back evaluation.Analysis
			if err := json.Unmarshal([]byte(v.Str()), &back); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size), "otlp_bytes")
	})
}

// BenchmarkSignVerify measures what authentication adds per session span: Sign in the
// processor, Verify in the exporter, on the largest golden analysis.
func BenchmarkSignVerify(b *testing.B) {
	as := goldenAnalyses(b, "langgraph_multi_turn")
	m := pcommon.NewMap()
	m.PutStr(semconv.AgentEvalKind, semconv.EvalKindAgentSession)
	EncodeAnalysis(m, &as[0])
	s := NewSigner("")
	b.Run("sign", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Sign(m)
		}
	})
	b.Run("verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Verify(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// goldenAnalyses reads testdata/golden/<name>.analyses.json.
func goldenAnalyses(tb testing.TB, name string) []evaluation.Analysis {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", name+".analyses.json"))
	require.NoError(tb, err)
	var as []evaluation.Analysis
	require.NoError(tb, json.Unmarshal(raw, &as))
	return as
}

// benchSpans returns the attributes of the evaluation spans the processor emits for
// the three golden sessions of three turns (bench/e2e's shape: 3 turns a session), signed
// with s: per turn a provisional and a final turn span carrying the turn's summary
// (TurnSummary), per session one session span carrying the analysis, each with the
// unsigned attributes the processor writes beside them (partial flag, score mirrors,
// conversation id). Built as processor/agentsessionprocessor/emit.go builds them.
func benchSpans(b *testing.B, s *Signer) (turns, sessions []pcommon.Map) {
	b.Helper()
	for _, name := range []string{"langgraph_multi_turn", "openai_agents_multi_turn", "vercel_ai_multi_turn"} {
		as := goldenAnalyses(b, name)
		a := &as[0]
		for i := range a.TurnResults {
			for _, final := range []bool{false, true} {
				tr := a.TurnResults[i]
				tr.Final = final
				m := pcommon.NewMap()
				m.PutStr(semconv.AgentEvalKind, semconv.EvalKindTurn)
				m.PutStr(semconv.AgentEvalSessionID, a.SessionID)
				sum := TurnSummary(&tr)
				EncodeTurn(m, &sum)
				m.PutBool(semconv.AgentEvalPartial, tr.Partial)
				m.PutDouble(semconv.AgentEvalPrefix+"turn", 1)
				s.Sign(m)
				turns = append(turns, m)
			}
		}
		m := pcommon.NewMap()
		m.PutStr(semconv.AgentEvalKind, semconv.EvalKindAgentSession)
		m.PutStr(semconv.AgentEvalSessionID, a.SessionID)
		m.PutStr("gen_ai.conversation.id", a.SessionID)
		m.PutBool(semconv.AgentEvalPartial, a.Partial)
		if a.OverallScore != nil {
			m.PutDouble(semconv.AgentEvalPrefix+"overall_score", *a.OverallScore)
		}
		EncodeAnalysis(m, a)
		s.Sign(m)
		sessions = append(sessions, m)
	}
	return turns, sessions
}

// BenchmarkEvaluationSpans measures, per evaluation span of the bench/e2e shape
// (benchSpans), what authentication and decoding cost: Sign in the processor, Verify
// and the typed decode in the exporter (DecodeTurn before its queue, DecodeAnalysis
// behind it). One op is one span, cycling through the spans of the kind, so ns/op and
// allocs/op are per span.
//
//	go test -run '^$' -bench EvaluationSpans -count=6 ./internal/evalspan/
func BenchmarkEvaluationSpans(b *testing.B) {
	s := NewSigner("0123456789abcdef-bench")
	turns, sessions := benchSpans(b, s)
	each := func(ms []pcommon.Map, f func(pcommon.Map)) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f(ms[i%len(ms)])
				i++
			}
		}
	}
	verify := func(m pcommon.Map) {
		if err := s.Verify(m); err != nil {
			b.Fatal(err)
		}
	}
	for _, k := range []struct {
		name   string
		ms     []pcommon.Map
		decode func(pcommon.Map) error
	}{
		{"turn", turns, func(m pcommon.Map) error { _, err := DecodeTurn(m); return err }},
		{"session", sessions, func(m pcommon.Map) error { _, err := DecodeAnalysis(m); return err }},
	} {
		b.Run("sign/"+k.name, each(k.ms, s.Sign))
		b.Run("verify/"+k.name, each(k.ms, verify))
		b.Run("decode/"+k.name, each(k.ms, func(m pcommon.Map) {
			if err := k.decode(m); err != nil {
				b.Fatal(err)
			}
		}))
	}
}
