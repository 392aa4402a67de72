// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package sessionjson

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/assembly"
	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestConvertedToolErrorKeepsItsText follows the refund call of the README's sample
// (its tool_call.error is "payment gateway timeout") through extraction and assembly: the
// assembled tool call's error is that text, not the span's error.type ("tool_error").
func TestConvertedToolErrorKeepsItsText(t *testing.T) {
	got := Convert(parseOne(t, readFile(t, "multi_agent_session.json")), testOptions())
	ex := conventions.NewExtractor(conventions.Config{})
	byTrace := map[string][]session.SpanRecord{}
	rss := got.Traces.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				r := ex.Extract(rs.Resource(), ss.Scope(), ss.Spans().At(k))
				byTrace[r.TraceID] = append(byTrace[r.TraceID], r)
			}
		}
	}
	var errs []string
	for _, recs := range byTrace {
		turn := assembly.Assemble(recs).Turn
		for _, in := range turn.Interactions {
			for _, st := range in.Steps {
				if st.ToolCall != nil && st.ToolCall.ToolName == "refund_order" {
					errs = append(errs, st.ToolCall.Error)
				}
			}
		}
	}
	require.Len(t, errs, 1, "one refund_order call")
	assert.Equal(t, "payment gateway timeout", errs[0])
}
