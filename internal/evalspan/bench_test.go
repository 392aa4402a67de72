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
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "langgraph_multi_turn.analyses.json"))
	require.NoError(b, err)
	var as []evaluation.Analysis
	require.NoError(b, json.Unmarshal(raw, &as))
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
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "langgraph_multi_turn.analyses.json"))
	require.NoError(b, err)
	var as []evaluation.Analysis
	require.NoError(b, json.Unmarshal(raw, &as))
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
