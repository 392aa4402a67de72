// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// fixtureDir holds the real-run OTLP/JSON fixtures (see its README.md).
const fixtureDir = "../../testdata/fixtures"

// load reads an OTLP/JSON file.
func load(t testing.TB, path string) ptrace.Traces {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(data)
	require.NoError(t, err)
	return td
}

// extractAll extracts every span of td, in order.
func extractAll(ex *Extractor, td ptrace.Traces) []session.SpanRecord {
	var all []session.SpanRecord
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				all = append(all, ex.Extract(rs.Resource(), ss.Scope(), ss.Spans().At(k)))
			}
		}
	}
	return all
}

// fixtureRecords extracts every span of an OTLP/JSON file, keyed by hex span id, plus the
// records in file order.
func fixtureRecords(t testing.TB, ex *Extractor, path string) (map[string]session.SpanRecord, []session.SpanRecord) {
	t.Helper()
	all := extractAll(ex, load(t, path))
	byID := make(map[string]session.SpanRecord, len(all))
	for _, r := range all {
		byID[r.SpanID] = r
	}
	return byID, all
}

// newSpan builds a span with the given name and attributes (pcommon.Map.FromRaw values:
// string, int, float64, bool, []any, map[string]any).
func newSpan(t testing.TB, name string, attrs map[string]any) ptrace.Span {
	t.Helper()
	s := ptrace.NewSpan()
	s.SetName(name)
	s.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	s.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	s.SetParentSpanID(pcommon.SpanID{8, 7, 6, 5, 4, 3, 2, 1})
	require.NoError(t, s.Attributes().FromRaw(attrs))
	return s
}

// addEvent appends an event with the given attributes to s.
func addEvent(t testing.TB, s ptrace.Span, name string, attrs map[string]any) {
	t.Helper()
	ev := s.Events().AppendEmpty()
	ev.SetName(name)
	require.NoError(t, ev.Attributes().FromRaw(attrs))
}

// extractOne runs a default extractor over one span with an empty resource and scope.
func extractOne(t testing.TB, s ptrace.Span) session.SpanRecord {
	t.Helper()
	r := NewExtractor(Config{}).Extract(pcommon.NewResource(), pcommon.NewInstrumentationScope(), s)
	checkInvariants(t, r, DefaultMaxTextBytes)
	return r
}

// jsonEq asserts that got is JSON equal to want.
func jsonEq(t testing.TB, want, got string, msgAndArgs ...any) {
	t.Helper()
	require.JSONEq(t, want, got, msgAndArgs...)
}

// checkInvariants asserts the SpanRecord contract: valid UTF-8 and capped text.
func checkInvariants(t testing.TB, r session.SpanRecord, maxText int) {
	t.Helper()
	texts := []string{r.Name, r.ErrorType, r.Operation, r.SessionID, r.Service,
		r.AgentName, r.AgentDescription, r.GraphNodeID, r.GraphParentID, r.LangGraphNode, r.ToolName, r.ToolCallID,
		r.ToolArguments, r.ToolResult, r.ToolDescription, r.UserMessage, r.Input, r.Output,
		r.Reasoning, r.Model, r.HandoffFrom, r.HandoffTo}
	texts = append(texts, r.FinishReasons...)
	texts = append(texts, r.AllowedTools...)
	texts = append(texts, r.HandoffTargets...)
	// Rule and source names come from a fixed vocabulary (plus at most maxRuleValue
	// bytes of an attribute value); problems have their own bound.
	for _, s := range append([]string{r.ClassRule, r.AgentRule, r.ToolArgsSource, r.HandoffRule, r.HandoffMode, r.SessionKey}, r.Problems...) {
		if !utf8.ValidString(s) || len(s) > max(maxProblemLen, 128) {
			t.Errorf("bad rule/problem string %q", s)
		}
	}
	for _, c := range r.RequestedCalls {
		texts = append(texts, c.ID, c.Name, c.Arguments)
	}
	for _, d := range r.ToolDefs {
		texts = append(texts, d.Name, d.Description)
		if d.Parameters != nil && !json.Valid(d.Parameters) {
			t.Errorf("tool %q has an invalid schema %q", d.Name, d.Parameters)
		}
	}
	if r.ToolSchema != nil && !json.Valid(r.ToolSchema) {
		t.Errorf("invalid tool schema %q", r.ToolSchema)
	}
	for _, s := range texts {
		if !utf8.ValidString(s) {
			t.Errorf("invalid UTF-8 in %q", s)
		}
		if len(s) > maxText {
			t.Errorf("text of %d bytes exceeds the cap %d", len(s), maxText)
		}
	}
	for _, p := range r.Problems {
		if p == "extract: internal error" {
			t.Errorf("extractor recovered from a panic")
		}
	}
}

func fixturePath(name string) string { return filepath.Join(fixtureDir, name+".otlp.json") }

// runExtract extracts with ex and checks the record invariants.
func runExtract(t testing.TB, ex *Extractor, res pcommon.Resource, scope pcommon.InstrumentationScope, s ptrace.Span) session.SpanRecord {
	t.Helper()
	r := ex.Extract(res, scope, s)
	checkInvariants(t, r, ex.maxText)
	return r
}
