// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// TestTurnSummary: a turn span's summary keeps the ids, scores, labels and what the
// exporter's per-turn metrics and live events read, leaves out the texts and
// explanations, and does not modify the result.
func TestTurnSummary(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "langgraph_multi_turn.analyses.json"))
	require.NoError(t, err)
	var as []evaluation.Analysis
	require.NoError(t, json.Unmarshal(raw, &as))
	require.NotEmpty(t, as)
	for _, tr := range as[0].TurnResults {
		before, _ := json.Marshal(tr)
		s := TurnSummary(&tr)
		after, _ := json.Marshal(tr)
		assert.JSONEq(t, string(before), string(after), "the result is not modified")

		assert.Empty(t, s.FinalResponse)
		assert.Nil(t, s.Explanations)
		assert.Equal(t, tr.DetectionType, s.DetectionType)
		assert.Equal(t, tr.Reason, s.Reason)
		assert.Equal(t, tr.Usage, s.Usage)
		if tr.Final {
			assert.Nil(t, s.Interactions, "a final verdict carries no interactions")
			continue
		}
		require.Len(t, s.Interactions, len(tr.Interactions))
		for i, ir := range tr.Interactions {
			got := s.Interactions[i]
			assert.Equal(t, ir.Score, got.Score)
			assert.Equal(t, ir.LatencyMs, got.LatencyMs)
			assert.Nil(t, got.Explanations)
			require.Len(t, got.ToolCalls, len(ir.ToolCalls))
			for j, tc := range ir.ToolCalls {
				assert.Equal(t, tc.Verdict, got.ToolCalls[j].Verdict)
				assert.Equal(t, tc.NotEvaluable, got.ToolCalls[j].NotEvaluable)
				require.Len(t, got.ToolCalls[j].Issues, len(tc.Issues))
				for k, is := range tc.Issues {
					// The console line names an issue TYPE(tool.parameter): its tool from
					// the call, its kind, severity and parameter from the summary.
					g := got.ToolCalls[j].Issues[k]
					assert.Equal(t, is.Issue, g.Issue)
					assert.Equal(t, is.Severity, g.Severity)
					assert.Equal(t, is.Parameter, g.Parameter)
					assert.Empty(t, g.Message)
				}
			}
			for j, h := range ir.Handoffs {
				assert.Equal(t, h.FromAgent+">"+h.ToAgent, got.Handoffs[j].FromAgent+">"+got.Handoffs[j].ToAgent)
				assert.Empty(t, got.Handoffs[j].Payload)
			}
		}
	}

	// Encoded, the summary is a fraction of the whole result.
	tr := as[0].TurnResults[0]
	tr.Final = false
	full, sum := pcommon.NewMap(), pcommon.NewMap()
	EncodeTurn(full, &tr)
	s := TurnSummary(&tr)
	EncodeTurn(sum, &s)
	assert.Less(t, protoSize(sum), protoSize(full))
}

// TestTurnSummaryUserMessage: the user message is cut on a rune boundary so that the
// live UI's 280-byte excerpt of it is what it would be of the whole message.
func TestTurnSummaryUserMessage(t *testing.T) {
	for _, msg := range []string{
		"short",
		strings.Repeat("a", 300),
		strings.Repeat("é", 200),
		strings.Repeat("日本", 100),
		strings.Repeat("a", 279) + "😀" + strings.Repeat("b", 50),
	} {
		s := TurnSummary(&evaluation.TurnResult{UserMessage: msg})
		assert.LessOrEqual(t, len(s.UserMessage), SummaryUserMessageBytes)
		assert.True(t, strings.HasPrefix(msg, s.UserMessage))
		assert.Equal(t, text.Truncate(msg, 280), text.Truncate(s.UserMessage, 280), msg)
	}
}

func protoSize(m pcommon.Map) int {
	td := ptrace.NewTraces()
	m.CopyTo(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes())
	return (&ptrace.ProtoMarshaler{}).TracesSize(td)
}

// referenceSummary is TurnSummary as it was before the summaries had pooled memory
// (each list allocated for itself): the oracle of TestEncodeTurnSummary.
func referenceSummary(tr *evaluation.TurnResult) evaluation.TurnResult {
	s := *tr
	s.FinalResponse = ""
	s.Explanations = nil
	s.StartedAt = time.Time{}
	s.UserMessage = text.Cut(s.UserMessage, SummaryUserMessageBytes)
	if s.Final {
		s.Interactions = nil
		return s
	}
	if tr.Interactions == nil {
		return s
	}
	s.Interactions = make([]evaluation.InteractionResult, len(tr.Interactions))
	for i := range tr.Interactions {
		ir := &tr.Interactions[i]
		out := evaluation.InteractionResult{
			AgentID: ir.AgentID, Score: ir.Score, ToolUse: ir.ToolUse, Reasoning: ir.Reasoning,
			Handoff: ir.Handoff, ResponseQuality: ir.ResponseQuality, LatencyMs: ir.LatencyMs,
		}
		if ir.Handoffs != nil {
			out.Handoffs = make([]session.Handoff, len(ir.Handoffs))
			for j, h := range ir.Handoffs {
				out.Handoffs[j] = session.Handoff{FromAgent: h.FromAgent, ToAgent: h.ToAgent}
			}
		}
		if ir.ToolCalls != nil {
			out.ToolCalls = make([]evaluation.ToolCallResult, len(ir.ToolCalls))
			for j := range ir.ToolCalls {
				tc := &ir.ToolCalls[j]
				c := evaluation.ToolCallResult{
					ToolName: tc.ToolName, AgentID: tc.AgentID, Score: tc.Score, Verdict: tc.Verdict,
					NotEvaluable: tc.NotEvaluable, LatencyMs: tc.LatencyMs,
				}
				if tc.Issues != nil {
					c.Issues = make([]evaluation.ToolIssue, len(tc.Issues))
					for k, is := range tc.Issues {
						c.Issues[k] = evaluation.ToolIssue{Issue: is.Issue, Severity: is.Severity, Parameter: is.Parameter}
					}
				}
				out.ToolCalls[j] = c
			}
		}
		s.Interactions[i] = out
	}
	return s
}

// checkEncodeTurnSummary checks that EncodeTurnSummary writes, over a span that holds a
// turn span's first attributes, the OTLP bytes and the signature that EncodeTurn of the
// reference summary writes, and that it leaves tr as it was.
func checkEncodeTurnSummary(t *testing.T, s *Signer, name string, tr *evaluation.TurnResult) {
	t.Helper()
	span := func(encode func(pcommon.Map) Signature) ([]byte, string) {
		td := ptrace.NewTraces()
		m := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
		m.PutStr(semconv.AgentEvalKind, semconv.EvalKindTurn)
		m.PutStr(semconv.AgentEvalSessionID, "s")
		encode(m).Put(m)
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		return b, sigOf(m)
	}
	// The whole result, encoded (doubles compared by their bits: NaN is not equal to itself).
	whole := func(tr *evaluation.TurnResult) pcommon.Map {
		m := pcommon.NewMap()
		EncodeTurn(m, tr)
		return m
	}
	before := whole(tr)
	got, gotSig := span(func(m pcommon.Map) Signature { return s.EncodeTurnSummary(m, tr) })
	require.True(t, sameAttributes(before, whole(tr)), "%s: the result is not modified", name)
	ref := referenceSummary(tr)
	want, wantSig := span(func(m pcommon.Map) Signature { return s.EncodeTurn(m, &ref) })
	require.True(t, bytes.Equal(want, got), "%s: attributes differ", name)
	require.Equal(t, wantSig, gotSig, name)
	sum := TurnSummary(tr)
	require.True(t, sameAttributes(whole(&ref), whole(&sum)), "%s: TurnSummary = the reference", name)
}

// TestEncodeTurnSummary: for every golden turn, provisional and final, with and without
// wire defaults, one after another through the pooled memory (a large turn then a
// small one: what an earlier summary left must not show), the pooled summary encodes
// and signs as the summary allocated for itself did.
func TestEncodeTurnSummary(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.analyses.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	n := 0
	for _, s := range []*Signer{NewSigner("0123456789abcdef-summary"), NewSigner("0123456789abcdef-summary", WithoutWireDefaults())} {
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".analyses.json")
			for _, a := range goldenAnalyses(t, name) {
				for i := range a.TurnResults {
					for _, final := range []bool{false, true} {
						tr := a.TurnResults[i]
						tr.Final = final
						checkEncodeTurnSummary(t, s, name, &tr)
						n++
					}
				}
			}
		}
	}
	t.Logf("%d turn spans", n)
}

// FuzzEncodeTurnSummary: random turn results (every field kind, nil and empty lists,
// defaulted fields), two after another through the pooled memory, encode and sign as
// their reference summaries do.
func FuzzEncodeTurnSummary(f *testing.F) {
	for seed := range uint64(300) {
		f.Add(seed)
	}
	s := NewSigner("0123456789abcdef-summary-fuzz")
	f.Fuzz(func(t *testing.T, seed uint64) {
		r := rand.New(rand.NewPCG(seed, seed>>32^0x2545f4914f6cdd1d))
		for range 2 {
			tr, _ := randomResults(r)
			checkEncodeTurnSummary(t, s, "random", &tr)
		}
	})
}
