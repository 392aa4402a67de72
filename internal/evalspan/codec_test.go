// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
)

func f64(v float64) *float64 { return &v }

// TestRoundTrip: what encoding/json would give back, the typed attributes give back:
// nil and empty lists and maps kept apart, absent pointers nil, times, raw JSON, any.
func TestRoundTrip(t *testing.T) {
	yes := true
	a := evaluation.Analysis{
		SessionID: "s-1", AnalysisRevision: 2, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		OverallScore: f64(0.75), TaskCompletion: &yes,
		PerAgentScores: map[string]evaluation.AgentScores{"triage": {Overall: f64(1), Issues: []string{}, InteractionsCount: 3}},
		TurnResults: []evaluation.TurnResult{{
			TurnIndex: 4, TraceID: "0102", Final: true, DetectionType: "rdm", Confidence: 0.9,
			Usage: session.Usage{InputTokens: 12, LLMCalls: 1}, UserMessage: "no, I meant 123",
			Interactions: []evaluation.InteractionResult{{
				AgentID: "triage", ToolCalls: []evaluation.ToolCallResult{{ToolName: "lookup", Issues: nil, LatencyMs: f64(12.5)}},
				Handoffs: []session.Handoff{{FromAgent: "triage", ToAgent: "refund", PayloadCaptured: true}},
			}},
		}},
		ToolIssues:      []evaluation.ToolIssue{},
		Recommendations: nil,
		References:      map[string]any{"tool_selection": map[string]any{"score": 0.5, "expected": []any{"a", "b"}}},
	}
	m := pcommon.NewMap()
	EncodeAnalysis(m, &a)
	got, err := DecodeAnalysis(m)
	require.NoError(t, err)
	want, _ := json.Marshal(a)
	back, _ := json.Marshal(got)
	assert.JSONEq(t, string(want), string(back))
	assert.NotNil(t, got.ToolIssues, "an empty list stays empty, not null")
	assert.Nil(t, got.Recommendations, "a nil list stays null")
	assert.Nil(t, got.IntentDriftScore)

	v, ok := m.Get("agent_eval.session.overall_score")
	require.True(t, ok)
	assert.Equal(t, pcommon.ValueTypeDouble, v.Type(), "scores are doubles")
	v, _ = m.Get("agent_eval.session.turn_results")
	assert.Equal(t, pcommon.ValueTypeSlice, v.Type())
	turn := v.Slice().At(0).Map()
	idx, _ := turn.Get("turn_index")
	assert.Equal(t, int64(4), idx.Int(), "counts are ints")
}

// TestRoundTripTypedReferences: the processor stores a reference.CaseResult (a struct)
// under References; it travels as its JSON form, as encoding/json would give it back.
func TestRoundTripTypedReferences(t *testing.T) {
	type result struct {
		Score float64  `json:"score"`
		Pass  bool     `json:"pass"`
		Tools []string `json:"tools"`
	}
	a := evaluation.Analysis{SessionID: "s-2", References: struct {
		CaseID  string            `json:"case_id"`
		Results map[string]result `json:"results"`
	}{CaseID: "papers", Results: map[string]result{"tool_selection": {Score: 0.5, Tools: []string{"search"}}}}}
	m := pcommon.NewMap()
	EncodeAnalysis(m, &a)
	got, err := DecodeAnalysis(m)
	require.NoError(t, err)
	want, _ := json.Marshal(a.References)
	back, _ := json.Marshal(got.References)
	assert.JSONEq(t, string(want), string(back))
	v, _ := m.Get("agent_eval.session.references")
	assert.Equal(t, pcommon.ValueTypeMap, v.Type(), "a struct travels as a map, not as its Go text")
}

// TestMarksRoundTrip: the marks without a JSON name (TurnsPart, NumberedHere) travel as
// their own bool attributes, each only when true, and are signed with the rest.
func TestMarksRoundTrip(t *testing.T) {
	for _, a := range []evaluation.Analysis{
		{SessionID: "s"},
		{SessionID: "s", TurnsPart: true},
		{SessionID: "s", NumberedHere: true},
		{SessionID: "s", TurnsPart: true, NumberedHere: true},
	} {
		m := pcommon.NewMap()
		EncodeAnalysis(m, &a)
		_, turnsPart := m.Get("agent_eval.session.turns_part")
		_, numberedHere := m.Get("agent_eval.session.numbered_here")
		assert.Equal(t, a.TurnsPart, turnsPart, "turns_part only when true")
		assert.Equal(t, a.NumberedHere, numberedHere, "numbered_here only when true")
		got, err := DecodeAnalysis(m)
		require.NoError(t, err)
		assert.Equal(t, a.TurnsPart, got.TurnsPart)
		assert.Equal(t, a.NumberedHere, got.NumberedHere)

		signer := NewSigner("0123456789abcdef-shared")
		sm := pcommon.NewMap()
		signer.EncodeAnalysis(sm, &a).Put(sm)
		require.NoError(t, signer.Verify(sm))
		if a.NumberedHere {
			sm.PutBool("agent_eval.session.numbered_here", false)
			require.Error(t, signer.Verify(sm), "the mark is signed")
		}
	}
	m := pcommon.NewMap()
	EncodeAnalysis(m, &evaluation.Analysis{SessionID: "s"})
	m.PutStr("agent_eval.session.numbered_here", "true")
	_, err := DecodeAnalysis(m)
	require.ErrorContains(t, err, "agent_eval.session.numbered_here: is a Str, want bool")
}

func TestDecodeErrors(t *testing.T) {
	m := pcommon.NewMap()
	_, err := DecodeTurn(m)
	require.ErrorContains(t, err, "agent_eval.turn.trace_id: attribute missing")
	m.PutStr("agent_eval.turn.trace_id", "01")
	m.PutStr("agent_eval.turn.confidence", "high")
	_, err = DecodeTurn(m)
	require.ErrorContains(t, err, "agent_eval.turn.confidence: is a Str, want a double")
	m.PutDouble("agent_eval.turn.confidence", 0.5)
	m.PutEmptySlice("agent_eval.turn.interactions").AppendEmpty().SetStr("x")
	_, err = DecodeTurn(m)
	require.ErrorContains(t, err, "agent_eval.turn.interactions: [0]: is a Str, want a map")
}

// FuzzDecode feeds arbitrary OTLP spans to the decoders: they return a value or an
// error, never panic.
func FuzzDecode(f *testing.F) {
	seed := func(fill func(pcommon.Map)) {
		td := ptrace.NewTraces()
		fill(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes())
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		require.NoError(f, err)
		f.Add(b)
	}
	seed(func(m pcommon.Map) {
		EncodeAnalysis(m, &evaluation.Analysis{SessionID: "s", OverallScore: f64(0.5),
			TurnResults: []evaluation.TurnResult{{TraceID: "01", Interactions: []evaluation.InteractionResult{{AgentID: "a"}}}}})
	})
	seed(func(m pcommon.Map) {
		EncodeTurn(m, &evaluation.TurnResult{TraceID: "01", Explanations: map[string]string{"x": "y"}})
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			return
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					_, _ = DecodeTurn(spans.At(k).Attributes())
					_, _ = DecodeAnalysis(spans.At(k).Attributes())
				}
			}
		}
	})
}

// TestDecodeIgnoresAttributeOrder: the decoder finds a struct's fields fastest in the
// order the encoder writes them (by name), and reads the same values from a span whose
// maps are in any other order (reversed here; earlier collectors wrote declaration order).
func TestDecodeIgnoresAttributeOrder(t *testing.T) {
	for _, name := range []string{"langgraph_multi_turn", "openai_agents_handoff"} {
		a := goldenAnalyses(t, name)[0]
		m := pcommon.NewMap()
		EncodeAnalysis(m, &a)
		rev := pcommon.NewMap()
		reversed(m, rev)
		want, err := DecodeAnalysis(m)
		require.NoError(t, err)
		got, err := DecodeAnalysis(rev)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
		wantJSON, _ := json.Marshal(a)
		gotJSON, _ := json.Marshal(got)
		assert.JSONEq(t, string(wantJSON), string(gotJSON), name)
	}
}
