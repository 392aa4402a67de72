// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/pdatautil"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// deferredEqual extracts s both ways and asserts that the deferred record, completed,
// equals the record Extract writes; it reports whether anything was deferred.
func deferredEqual(t testing.TB, ex *Extractor, res pcommon.Resource, scope pcommon.InstrumentationScope, s ptrace.Span) bool {
	t.Helper()
	want := ex.Extract(res, scope, s)
	var got session.SpanRecord
	ex.ExtractDeferred(nil, &got, res, scope, s)
	deferred := got.Deferred != (session.DeferredContent{})
	if deferred {
		assert.Empty(t, got.UserMessage, "the deferred part is not decoded at ingest")
	}
	// With a shared id buffer (the processor's ingest), the same record.
	var ids IDBuffer
	var withIDs session.SpanRecord
	ex.ExtractDeferred(&ids, &withIDs, res, scope, s)
	assert.Equal(t, got, withIDs, "span %q, ExtractDeferred with an IDBuffer", s.Name())
	batch := []session.SpanRecord{got, got}
	completeOne(ex, &got)
	assert.Equal(t, want, got, "span %q", s.Name())
	ex.CompleteAll(batch)
	assert.Equal(t, []session.SpanRecord{want, want}, batch, "span %q, CompleteAll", s.Name())
	return deferred
}

// TestExtractDeferredFixtures: for every span of every fixture, ExtractDeferred (with
// and without an IDBuffer) then CompleteAll gives the record Extract gives (the goldens' records), and some spans of the
// fixtures (those whose user message comes from gen_ai.input.messages) are deferred.
func TestExtractDeferredFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.otlp.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, maxText := range []int{0, 64} {
		ex := NewExtractor(Config{EndAttribute: "agent_eval.session.end", MaxTextBytes: maxText})
		deferred := 0
		for _, f := range files {
			for ref := range pdatautil.Spans(load(t, f)) {
				if deferredEqual(t, ex, ref.Resource, ref.Scope, ref.Span) {
					deferred++
				}
			}
		}
		if maxText == 0 {
			assert.Positive(t, deferred, "some fixture spans are deferred")
		}
	}
}

// TestExtractDeferredCases covers what the fixtures may not: bad input (malformed JSON,
// invalid UTF-8, a list over the deferral cap or over the text cap, more problems than
// a record keeps), problems noted before and after the input (their order is kept),
// and the sources that keep the input eager.
func TestExtractDeferredCases(t *testing.T) {
	in := `[{"role":"system","parts":[{"type":"text","content":"sys"}]},{"role":"user","parts":[{"type":"text","content":"I need a refund"}]}]`
	out := `[{"role":"assistant","parts":[{"type":"text","content":"Done."},{"type":"tool_call","id":"c1","name":"refund","arguments":{"a":1}}],"finish_reason":"tool_call"}]`
	long := `[{"role":"system","content":"` + strings.Repeat("x", 9000) + `"},{"role":"user","parts":[{"type":"text","content":"` + strings.Repeat("x", 5000) + `"}]}]`
	badDefs := `[{"type":"function","name":` // an unreadable tool definition: a problem after the content
	// Seven problems before the input: the input's is the eighth and last a record
	// keeps, the output's and the tool definitions' are dropped.
	manyProblems := map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `[{"role":"user" "content":"hi"}]`, semconv.GenAIOutputMessages: `nope`,
		semconv.GenAIToolDefinitions: badDefs, semconv.AgentEvalTaskCompleted: "maybe"}
	for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens",
		"llm.token_count.prompt", "llm.token_count.completion", "gen_ai.usage.prompt_tokens"} {
		manyProblems[k] = "many"
	}
	cases := []struct {
		name  string
		attrs map[string]any
		event string // an event added to the span, if any
		lazy  bool   // expected to leave something for CompleteAll
	}{
		{"both lists", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: in, semconv.GenAIOutputMessages: out}, "", true},
		{"non-contiguous candidates", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `[{"role":"user","content":"first"}, {"role":"assistant","content":"ok"}  ,{"role":"user","content":"second"},{"role":"tool","content":"r"}]`}, "", true},
		{"last candidate not a user", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `[{"role":"user","content":"q"} , {"role":"system","content":"the user is nice"}]`}, "", true},
		{"candidate without text", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `[{"role":"human","content":"q"},{"role":"user","content":""},"user",7]`}, "", true},
		{"messages wrapper", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `{"messages":[{"type":"human","content":"hi"},{"type":"ai","content":"yes"}]}`}, "", true},
		{"one message object", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `{"role":"user","content":"hi"}`}, "", true},
		{"malformed element", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `[{"role":"system","content":"s"},{"role":"user" "content":"hi"}]`}, "", true},
		{"problems around", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "many",
			semconv.GenAIInputMessages: `[{"role":"user" "content":"hi"}]`, semconv.GenAIOutputMessages: `nope`, semconv.GenAIToolDefinitions: badDefs}, "", true},
		{"no user message (nothing to defer)", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `[{"role":"system","content":"s"}]`}, "", false},
		{"malformed list", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `[{"role":"user",`, semconv.GenAIOutputMessages: `{"x":1}`}, "", false},
		{"not a list", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: `"hello user"`}, "", false},
		{"problems over the bound", manyProblems, "", true},
		{"invalid UTF-8", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: "[{\"role\":\"user\",\"content\":\"caf\xe9 \xff\"}]",
			semconv.GenAIOutputMessages: "[{\"role\":\"assistant\",\"content\":\"\xc3\"}]"}, "", true},
		{"agent", map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a", semconv.GenAIInputMessages: in}, "", true},
		{"workflow", map[string]any{"gen_ai.operation.name": "invoke_workflow", semconv.GenAIInputMessages: in}, "", true},
		{"output-side event", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: in}, semconv.EventToolCallDecision, true},
		{"with Vercel finish", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: in, semconv.AIResponseFinishReason: "stop"}, "", true},
		{"empty list", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: ""}, "", false},
		{"over the cap", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: long}, "", false},
		{"not a string", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: []any{map[string]any{"role": "user", "content": "hi"}}}, "", false},
		{"user message event", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: in}, semconv.EventUserMessage, false},
		{"with input.value", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: in, "input.value": "hello"}, "", false},
		{"with indexed messages", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: in, "llm.input_messages.0.message.content": "x"}, "", false},
		{"tool span", map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", semconv.GenAIInputMessages: in}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSpan(t, "span", c.attrs)
			switch c.event {
			case semconv.EventToolCallDecision:
				addEvent(t, s, c.event, map[string]any{semconv.GenAIToolCallDecisionOutcome: "deny", semconv.GenAIToolName: "t"})
			case semconv.EventUserMessage:
				addEvent(t, s, c.event, map[string]any{semconv.EventAttrContent: "from the event"})
			}
			for _, maxText := range []int{0, 16} {
				ex := NewExtractor(Config{MaxTextBytes: maxText})
				got := deferredEqual(t, ex, pcommon.NewResource(), pcommon.NewInstrumentationScope(), s)
				if c.name == "problems over the bound" {
					r := ex.Extract(pcommon.NewResource(), pcommon.NewInstrumentationScope(), s)
					require.Len(t, r.Problems, maxProblems)
					assert.Equal(t, semconv.GenAIInputMessages+": "+errExSyntax.Error(), r.Problems[maxProblems-1])
				}
				if maxText == 0 {
					assert.Equal(t, c.lazy, got, "deferred")
				}
			}
		})
	}
}

// TestCompleteOwnsItsTexts: a completed record's texts are copies, not substrings of the
// raw lists, so that a turn keeping its user message does not keep the whole list.
func TestCompleteOwnsItsTexts(t *testing.T) {
	in := `[{"role":"user","parts":[{"type":"text","content":"I need a refund for order 12345"}]}]`
	s := newSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: in})
	ex := NewExtractor(Config{})
	var r session.SpanRecord
	ex.ExtractDeferred(nil, &r, pcommon.NewResource(), pcommon.NewInstrumentationScope(), s)
	raw := r.Deferred.InputMessages
	require.NotEmpty(t, raw)
	completeOne(ex, &r)
	require.Equal(t, "I need a refund for order 12345", r.UserMessage)
	within := func(sub, whole string) bool {
		if sub == "" {
			return false
		}
		p, a := uintptr(unsafe.Pointer(unsafe.StringData(sub))), uintptr(unsafe.Pointer(unsafe.StringData(whole)))
		return p >= a && p < a+uintptr(len(whole))
	}
	assert.False(t, within(r.UserMessage, raw), "the user message points into the raw list")
	// CompleteAll is idempotent: the deferred part is gone.
	before := r
	completeOne(ex, &r)
	assert.Equal(t, before, r)
}

// TestCompleteAll: records that share a deferred list (decoded once) but differ around
// it (problems before and after, the bound on problems), and more distinct lists than
// CompleteAll remembers, complete as Extract extracts them.
func TestCompleteAll(t *testing.T) {
	ex := NewExtractor(Config{MaxTextBytes: 24})
	var spans []ptrace.Span
	for i := range 40 {
		in := fmt.Sprintf(`[{"role":"system","content":"s"},{"role":"user","content":"question number %d, a long one"}]`, i%20)
		if i%7 == 0 {
			in = `[{"role":"user" "content":"malformed"}]`
		}
		attrs := map[string]any{"gen_ai.operation.name": "chat", semconv.GenAIInputMessages: in}
		for k := range i % 9 { // 0 to 8 problems before the input
			attrs[[...]string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens",
				"llm.token_count.prompt", "llm.token_count.completion", "gen_ai.usage.prompt_tokens", semconv.AgentEvalTaskCompleted,
				"gen_ai.usage.reasoning.output_tokens"}[min(k, 7)]] = "many"
		}
		if i%3 == 0 {
			attrs[semconv.GenAIOutputMessages] = "nope" // a problem after it
		}
		spans = append(spans, newSpan(t, "chat", attrs))
	}
	var want, got []session.SpanRecord
	for _, s := range spans {
		want = append(want, ex.Extract(pcommon.NewResource(), pcommon.NewInstrumentationScope(), s))
		got = append(got, session.SpanRecord{})
		ex.ExtractDeferred(nil, &got[len(got)-1], pcommon.NewResource(), pcommon.NewInstrumentationScope(), s)
	}
	ex.CompleteAll(got)
	require.Equal(t, want, got)
}

// completeOne completes r alone, as Closed.Assemble completes a turn's records.
func completeOne(ex *Extractor, r *session.SpanRecord) {
	recs := []session.SpanRecord{*r}
	ex.CompleteAll(recs)
	*r = recs[0]
}
