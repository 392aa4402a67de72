// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestExtractBadInput: malformed JSON, wrong attribute types and invalid UTF-8 never
// break extraction; each unreadable value is a short problem note.
func TestExtractBadInput(t *testing.T) {
	tests := []struct {
		name     string
		span     string
		attrs    map[string]any
		class    session.SpanClass
		problems []string
		check    func(t *testing.T, r session.SpanRecord)
	}{
		{"malformed input messages", "chat x", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"hi"}`,
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"ok"}]}]`},
			session.ClassLLM, []string{"gen_ai.input.messages: malformed JSON"},
			func(t *testing.T, r session.SpanRecord) {
				assert.Empty(t, r.UserMessage)
				assert.Equal(t, "ok", r.Output, "the output is still read")
				assert.True(t, r.ContentCaptured)
			}},
		{"messages not a list", "chat x", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.input.messages": int64(42),
			"gen_ai.output.messages": `{"foo": 1}`},
			session.ClassLLM, []string{"gen_ai.input.messages: not a JSON array", "gen_ai.output.messages: not a JSON array"}, nil},
		{"wrong part types", "chat x", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.output.messages": `[{"role":7,"parts":[{"type":"text","content":5},{"type":"tool_call","name":"f","arguments":{"a":1},"id":9}]}]`},
			session.ClassLLM, nil,
			func(t *testing.T, r session.SpanRecord) {
				require.Len(t, r.RequestedCalls, 1, "the well-typed call survives the type errors around it")
				assert.Equal(t, `{"a":1}`, r.RequestedCalls[0].Arguments)
			}},
		{"tool definitions of the wrong type", "chat x", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.tool.definitions": true}, session.ClassLLM, []string{"gen_ai.tool.definitions: unreadable tool definition"}, nil},
		{"agent tools not a list", "invoke_agent a", map[string]any{"gen_ai.operation.name": "invoke_agent",
			"gen_ai.agent.tools": "get_weather"}, session.ClassAgent, []string{"gen_ai.agent.tools: not a JSON list of names"}, nil},
		{"finish reasons as a map", "chat x", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.response.finish_reasons": map[string]any{"a": 1}}, session.ClassLLM, []string{"gen_ai.response.finish_reasons: not a string list"}, nil},
		{"operation name as a number", "x", map[string]any{"gen_ai.operation.name": int64(5)}, session.ClassOther, nil, nil},
		{"schema that is not an object", "get_weather", map[string]any{"openinference.span.kind": "TOOL",
			"tool.json_schema": `[1,2]`}, session.ClassTool, []string{"tool.json_schema: not a JSON Schema object"}, nil},
		{"invalid UTF-8 everywhere", "execute_tool bad\xffname", map[string]any{"gen_ai.operation.name": "execute_tool",
			"gen_ai.tool.call.arguments": "{\"a\":\"\xfe\xfe\"}", "session.id": "s\xc3", "error.type": "E\xff"},
			session.ClassTool, nil,
			func(t *testing.T, r session.SpanRecord) {
				assert.Equal(t, "execute_tool bad\uFFFDname", r.Name)
				assert.Equal(t, "bad\uFFFDname", r.ToolName)
				assert.Equal(t, "{\"a\":\"\uFFFD\"}", r.ToolArguments, "a run of invalid bytes becomes one U+FFFD")
				assert.Empty(t, r.SessionID, "an invalid session id is rejected, not repaired (two could merge)")
				assert.Contains(t, r.Problems, "session.id: session id is not valid UTF-8; ignored")
			}},
		{"invalid UTF-8 inside JSON content", "chat x", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.input.messages": "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"caf\xe9\"}]}]"},
			session.ClassLLM, nil,
			func(t *testing.T, r session.SpanRecord) { assert.Equal(t, "caf\uFFFD", r.UserMessage) }},
		{"hostile indexes", "x", map[string]any{"openinference.span.kind": "LLM",
			"llm.input_messages.99999999999.message.role":                        "user",
			"llm.input_messages.99999999999.message.content":                     "x",
			"llm.input_messages.-1.message.role":                                 "user",
			"llm.output_messages.0.message.tool_calls.x.tool_call.function.name": "f"},
			session.ClassLLM, nil,
			func(t *testing.T, r session.SpanRecord) {
				assert.Empty(t, r.UserMessage)
				assert.Empty(t, r.RequestedCalls)
			}},
		{"problems are bounded", "chat x", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.usage.input_tokens": "a", "gen_ai.usage.prompt_tokens": "b", "llm.token_count.prompt": "c",
			"ai.usage.inputTokens": "d", "ai.usage.promptTokens": "e", "gen_ai.usage.output_tokens": "f",
			"gen_ai.usage.completion_tokens": "g", "llm.token_count.completion": "h", "ai.usage.outputTokens": "i",
			"ai.usage.completionTokens": "j"},
			session.ClassLLM, nil,
			func(t *testing.T, r session.SpanRecord) { assert.Len(t, r.Problems, maxProblems) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := extractOne(t, newSpan(t, tt.span, tt.attrs))
			assert.Equal(t, tt.class, r.Class)
			if tt.problems != nil {
				assert.Equal(t, tt.problems, r.Problems)
			} else if tt.check == nil {
				assert.Empty(t, r.Problems)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

// bytesAllocated returns the bytes allocated while f runs.
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestExtractLongMessageLists: a message list of 1 MiB (a long conversation's input, a
// long answer) is read: the user message and the answer are found, cut to max_text_bytes.
// With a parse limit of 64 KiB both were dropped whole, and a 70 KB answer was scored as
// an empty one (task failed, response_quality 0).
func TestExtractLongMessageLists(t *testing.T) {
	const maxText = 4 << 10
	ex := NewExtractor(Config{MaxTextBytes: maxText})
	res, scope := pcommon.NewResource(), pcommon.NewInstrumentationScope()
	var history strings.Builder
	history.WriteString(`[`)
	for i := range 400 { // 400 earlier turns of about 2.6 KB
		fmt.Fprintf(&history, `{"role":"user","parts":[{"type":"text","content":"question %d %s"}]},`, i, strings.Repeat("x", 1300))
		fmt.Fprintf(&history, `{"role":"assistant","parts":[{"type":"text","content":"answer %d %s"}]},`, i, strings.Repeat("y", 1300))
	}
	history.WriteString(`{"role":"user","parts":[{"type":"text","content":"What is the refund status of order 4411?"}]}]`)
	answer := "Order 4411 was refunded. " + strings.Repeat("Details follow. ", 70<<10/16)
	output := `[{"role":"assistant","parts":[{"type":"text","content":"` + answer + `"}]}]`
	require.Greater(t, history.Len(), 1<<20)
	chat := newSpan(t, "chat x", map[string]any{"gen_ai.operation.name": "chat",
		"gen_ai.input.messages": history.String(), "gen_ai.output.messages": output})
	var r session.SpanRecord
	alloc := bytesAllocated(func() { r = runExtract(t, ex, res, scope, chat) })
	t.Logf("%d bytes of messages read, %d bytes allocated", history.Len()+len(output), alloc)
	assert.Less(t, alloc, uint64(history.Len()+len(output)), "transient allocation below the bytes read")
	assert.Equal(t, "What is the refund status of order 4411?", r.UserMessage)
	assert.True(t, strings.HasPrefix(r.Output, "Order 4411 was refunded."), "%.40q", r.Output)
	assert.LessOrEqual(t, len(r.Output), maxText)
	assert.True(t, r.Truncated, "the answer was cut to max_text_bytes")
	assert.Empty(t, r.Problems)
}

// TestExtractHugeValues: 5 MB values are capped before any expensive work. The
// allocation bound shows that the big values are neither copied nor parsed.
func TestExtractHugeValues(t *testing.T) {
	const maxText = 4 << 10
	big := strings.Repeat("é", 5<<20/2) // 5 MiB of two-byte runes
	ex := NewExtractor(Config{MaxTextBytes: maxText})
	res, scope := pcommon.NewResource(), pcommon.NewInstrumentationScope()

	messages := `[{"role":"user","parts":[{"type":"text","content":"` + big + `"}]}]`
	chat := newSpan(t, "chat x", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.input.messages": messages,
		"gen_ai.output.messages": messages, "gen_ai.tool.definitions": `[` + strings.Repeat(`{"name":"t"},`, 1<<18) + `{"name":"u"}]`})
	var r session.SpanRecord
	alloc := bytesAllocated(func() { r = runExtract(t, ex, res, scope, chat) })
	assert.Less(t, alloc, uint64(256<<10), "a 5 MB message list must not be copied or parsed")
	assert.True(t, r.Truncated)
	assert.Contains(t, r.Problems, "gen_ai.input.messages: value larger than the parse limit, not parsed")
	assert.Contains(t, r.Problems, "gen_ai.output.messages: value larger than the parse limit, not parsed")
	assert.Contains(t, r.Problems, "gen_ai.tool.definitions: value larger than the parse limit, not parsed")

	tool := newSpan(t, "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool",
		"gen_ai.tool.call.arguments": `{"x":"` + big + `"}`, "gen_ai.tool.call.result": big})
	alloc = bytesAllocated(func() { r = runExtract(t, ex, res, scope, tool) })
	assert.Less(t, alloc, uint64(256<<10))
	assert.True(t, r.ToolArgsTruncated)
	assert.True(t, r.Truncated)
	assert.LessOrEqual(t, len(r.ToolArguments), maxText)
	assert.Greater(t, len(r.ToolArguments), maxText-4, "cut at the last rune boundary under the cap")
	assert.True(t, utf8.ValidString(r.ToolResult))

	agent := newSpan(t, "x", map[string]any{"openinference.span.kind": "AGENT", "agent.name": "a",
		"input.value": big, "input.mime_type": "text/plain", "output.value": big})
	r = runExtract(t, ex, res, scope, agent)
	assert.Len(t, r.Output, maxText)
	assert.Len(t, r.UserMessage, maxText)
	assert.True(t, r.Truncated)

	// A huge structured argument value is serialised only up to the cap.
	huge := newSpan(t, "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool"})
	m := huge.Attributes().PutEmptyMap("gen_ai.tool.call.arguments")
	for i := 0; i < 100_000; i++ {
		m.PutStr("k"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strings.Repeat("y", i%5), "v")
	}
	r = runExtract(t, ex, res, scope, huge)
	assert.True(t, r.ToolArgsTruncated)
	assert.LessOrEqual(t, len(r.ToolArguments), maxText)
}

// TestExtractDeepNesting: deeply nested JSON and structured values never overflow.
func TestExtractDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	deepObj := strings.Repeat(`{"a":`, 50_000) + "1" + strings.Repeat("}", 50_000)
	ex := NewExtractor(Config{MaxTextBytes: 1 << 20})
	res, scope := pcommon.NewResource(), pcommon.NewInstrumentationScope()
	r := runExtract(t, ex, res, scope, newSpan(t, "chat x", map[string]any{"gen_ai.operation.name": "chat",
		"gen_ai.input.messages": deep, "gen_ai.output.messages": "[" + deepObj + "]", "gen_ai.tool.definitions": deep}))
	assert.Contains(t, r.Problems, "gen_ai.input.messages: JSON nested too deeply")
	assert.Contains(t, r.Problems, "gen_ai.output.messages: JSON nested too deeply")

	s := newSpan(t, "execute_tool t", map[string]any{"gen_ai.operation.name": "execute_tool"})
	v := s.Attributes().PutEmptyMap("gen_ai.tool.call.arguments")
	for i := 0; i < 2000; i++ {
		v = v.PutEmptyMap("a")
	}
	r = runExtract(t, ex, res, scope, s)
	assert.True(t, r.ToolArgsTruncated, "serialisation stops at the depth bound")

	params, isObj := ParseArguments(deepObj)
	assert.False(t, isObj, "JSON beyond the decoder's depth limit is not valid arguments")
	assert.True(t, json.Valid(params))
}

// TestExtractSmallCap: every text field is cut at a rune boundary under a tiny cap.
func TestExtractSmallCap(t *testing.T) {
	ex := NewExtractor(Config{MaxTextBytes: 7})
	r := runExtract(t, ex, pcommon.NewResource(), pcommon.NewInstrumentationScope(), newSpan(t, "invoke_agent héllo wörld", map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ägënt-ñame",
		"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"ünïcödé"}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","name":"ffffffffff","arguments":{"ä":"ö"}}]}]`,
	}))
	assert.Equal(t, "invoke_", r.Name)
	assert.Equal(t, "ägënt", r.AgentName)
	assert.Equal(t, "ünïc", r.UserMessage)
	require.Len(t, r.RequestedCalls, 1)
	assert.True(t, r.RequestedCalls[0].ArgumentsTruncated)
	assert.True(t, r.Truncated)
}

// TestExtractConcurrent: one Extractor is safe for concurrent use (run with -race).
func TestExtractConcurrent(t *testing.T) {
	ex := NewExtractor(Config{})
	td := load(t, fixturePath("openai_agents_genai_live_spans"))
	want := extractAll(ex, td)
	done := make(chan []session.SpanRecord, 4)
	for i := 0; i < 4; i++ {
		go func() { done <- extractAll(ex, td) }()
	}
	for i := 0; i < 4; i++ {
		assert.Equal(t, want, <-done)
	}
}

// TestExtractADKRequestKeepsTheDefinitionsLimit: an ADK LLM request is read up to the
// message limit (4 MiB), but the tool definitions inside it keep the definitions' limit
// (64 KiB here): definitions are compiled, and cost far more than their bytes.
func TestExtractADKRequestKeepsTheDefinitionsLimit(t *testing.T) {
	ex := NewExtractor(Config{MaxTextBytes: 4 << 10})
	res, scope := pcommon.NewResource(), pcommon.NewInstrumentationScope()
	decl := `{"name":"t%d","description":"%s","parameters":{"type":"object"}}`
	var defs []string
	for i := range 400 { // about 80 KB
		defs = append(defs, fmt.Sprintf(decl, i, strings.Repeat("d", 180)))
	}
	req := `{"model":"gemini","config":{"tools":[{"function_declarations":[` + strings.Join(defs, ",") +
		`]}]},"contents":[{"role":"user","parts":[{"text":"Find order 4411"}]}]}`
	chat := newSpan(t, "call_llm", map[string]any{"gen_ai.operation.name": "chat", "gcp.vertex.agent.llm_request": req})
	r := runExtract(t, ex, res, scope, chat)
	assert.Empty(t, r.ToolDefs)
	assert.Contains(t, r.Problems, "gcp.vertex.agent.llm_request: tool definitions larger than the parse limit, not parsed")

	small := `{"model":"gemini","config":{"tools":[{"function_declarations":[` + fmt.Sprintf(decl, 1, "d") +
		`]}]},"contents":[{"role":"user","parts":[{"text":"Find order 4411"}]}]}`
	r = runExtract(t, ex, res, scope, newSpan(t, "call_llm", map[string]any{"gen_ai.operation.name": "chat", "gcp.vertex.agent.llm_request": small}))
	require.Len(t, r.ToolDefs, 1, "definitions under the limit are read")
}
