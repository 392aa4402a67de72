// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
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
				assert.Len(t, got.ToolCalls[j].Issues, len(tc.Issues))
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
