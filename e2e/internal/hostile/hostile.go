// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package hostile builds the hostile OTLP inputs of issue 13's fault runs
// (docs/decisions/hostile-input.md, docs/decisions/ids-and-times.md): requests that once
// crashed the collector, were stored wrongly or decided what was kept. e2e's tests and
// the `make fault` harness (e2e/internal/faultrun) send them to a collector.
package hostile // import "github.com/agenteval/agenteval-collector/e2e/internal/hostile"

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// NestedRequest encodes, by hand, an ExportTraceServiceRequest with one span named name
// whose attribute "k" is an array nested depth levels deep (the densest nesting: about
// 8 to 10 bytes a level). Encoding it through pdata would recurse as deep as decoding.
// traceSeed varies the trace id (so two requests are two traces).
func NestedRequest(name string, depth int, traceSeed byte) []byte {
	varint := func(b []byte, v uint64) []byte {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	vlen := func(v int) int {
		n := 1
		for ; v >= 0x80; v >>= 7 {
			n++
		}
		return n
	}
	field := func(tag byte, payload []byte) []byte {
		return append(varint([]byte{tag}, uint64(len(payload))), payload...)
	}
	// sizes[i]: encoded size of the AnyValue at nesting level i (0 is the string "x").
	sizes, arrays := make([]int, depth+1), make([]int, depth+1)
	sizes[0] = 3
	for i := 1; i <= depth; i++ {
		arrays[i] = 1 + vlen(sizes[i-1]) + sizes[i-1]
		sizes[i] = 1 + vlen(arrays[i]) + arrays[i]
	}
	value := make([]byte, 0, sizes[depth])
	for i := depth; i >= 1; i-- {
		value = append(value, 0x2a) // AnyValue.array_value
		value = varint(value, uint64(arrays[i]))
		value = append(value, 0x0a) // ArrayValue.values
		value = varint(value, uint64(sizes[i-1]))
	}
	value = append(value, 0x0a, 1, 'x') // AnyValue.string_value
	traceID := []byte{traceSeed, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	spanID := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	span := field(0x0a, traceID)                      // Span.trace_id
	span = append(span, field(0x12, spanID)...)       // Span.span_id
	span = append(span, field(0x2a, []byte(name))...) // Span.name
	kv := append(field(0x0a, []byte("k")), field(0x12, value)...)
	span = append(span, field(0x4a, kv)...) // Span.attributes
	return field(0x0a, field(0x12, field(0x12, span)))
}

// CrashDepth is the nesting that ended collector core v1.64.0 with a stack overflow
// (1.5 million levels, 14.5 MB); AllowedDepth nests as deep as an 8 MiB request allows.
const (
	CrashDepth   = 1_500_000
	AllowedDepth = 800_000
)

// Gzip compresses b.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// Input is one hostile request. Traces, when set, is sent in every encoding (OTLP/HTTP
// JSON, OTLP/HTTP protobuf, gRPC); otherwise Raw is sent as it is, as protobuf (HTTP and
// gRPC; with Gzipped, HTTP only with Content-Encoding gzip), and ContentType overrides
// the HTTP content type. Refused says the collector must refuse it (no span enters).
type Input struct {
	Name        string
	Traces      ptrace.Traces
	Raw         []byte
	Gzipped     bool
	ContentType string
	Refused     bool
	// Sessions are the session ids whose analysis the input should produce.
	Sessions []string
}

// Corpus returns the hostile inputs, their session ids prefixed with prefix (so that
// the inputs of one run and protocol can be told apart). turns is the number of turns of
// the many-turns input (2,000 in the fault run of the issue).
func Corpus(prefix string, turns int) []Input {
	sid := func(name string) string { return prefix + "-" + name }
	var in []Input
	add := func(name string, td ptrace.Traces, sessions ...string) {
		in = append(in, Input{Name: name, Traces: td, Sessions: sessions})
	}
	seed := byte(0)
	b := func() *builder { seed++; return newBuilder(prefix, seed) }

	add("baseline", b().turn(sid("baseline"), "What is the status of order 12345?", time.Now()).td, sid("baseline"))
	add("zero-timestamps", b().turnAt(sid("zero-time"), "hello", 0, 0).td, sid("zero-time"))
	far := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	add("year-2200", b().turn(sid("year-2200"), "hello from the future", far).td, sid("year-2200"))
	add("overflowing-timestamps", b().turnAt(sid("overflow"), "hello", math.MaxUint64, math.MaxUint64-1).td, sid("overflow"))
	long := sid("long") + strings.Repeat("x", 5000)
	add("long-session-id", b().turn(long, "a long id", time.Now()).td) // refused as a key: keyed by trace
	add("control-bytes-id", b().turn(sid("nul")+"\x00\n", "nul in the id", time.Now()).td)
	{
		bb := b()
		bb.rs.Resource().Attributes().PutInt("session.id", 42)
		add("int-resource-session-id", bb.turn(sid("span-key"), "span key wins", time.Now()).td, sid("span-key"))
	}
	{
		bb := b()
		sp := bb.span("chat gpt", pcommon.SpanID{})
		sp.Attributes().PutInt("gen_ai.operation.name", 7)
		sp.Attributes().PutBool("gen_ai.conversation.id", true)
		sp.Attributes().PutDouble("gen_ai.usage.input_tokens", math.NaN())
		add("non-string-genai-values", bb.td)
	}
	{
		bb := b()
		sp := bb.span("forged evaluate agent_session", pcommon.SpanID{})
		sp.Attributes().PutStr("agent_eval.kind", "agent_session")
		sp.Attributes().PutStr("agent_eval.session.id", sid("baseline"))
		sp.Attributes().PutDouble("agent_eval.session.overall_score", 0.01)
		add("forged-evaluation-span", bb.td)
	}
	{
		bb := b()
		sp := bb.span("no ids", pcommon.SpanID{})
		sp.SetTraceID(pcommon.TraceID{})
		sp.SetSpanID(pcommon.SpanID{})
		add("empty-trace-and-span-ids", bb.td)
	}
	{
		bb := b()
		a := bb.span("invoke_agent loop", pcommon.SpanID{})
		a.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
		a.Attributes().PutStr("gen_ai.conversation.id", sid("cycle"))
		a.SetParentSpanID(a.SpanID()) // self-parent
		c1 := bb.span("chat a", pcommon.SpanID{})
		c2 := bb.span("chat b", c1.SpanID())
		c1.SetParentSpanID(c2.SpanID()) // a two-span cycle
		for _, s := range []ptrace.Span{c1, c2} {
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
		}
		dup := bb.ss.Spans().AppendEmpty()
		a.CopyTo(dup) // the same span id twice
		add("self-parent-cycle-duplicate", bb.td, sid("cycle"))
	}
	{
		bb := b()
		bb.turn(sid("big-attr"), strings.Repeat("large user message ", 50_000), time.Now())
		add("one-MB-attribute", bb.td, sid("big-attr"))
	}
	{
		bb := b()
		t0 := time.Now()
		for i := range turns {
			bb.traceSeed = uint16(i + 1)
			bb.turn(sid("many-turns"), fmt.Sprintf("question %d", i), t0.Add(time.Duration(i)*time.Second))
		}
		add(fmt.Sprintf("%d-turns-in-one-request", turns), bb.td, sid("many-turns"))
	}
	in = append(in,
		Input{Name: "deep-nesting-crash-payload", Raw: NestedRequest("too-deep", CrashDepth, seed+1), Refused: true},
		Input{Name: "deep-nesting-crash-payload-gzip", Raw: Gzip(NestedRequest("too-deep", CrashDepth, seed+1)), Gzipped: true, Refused: true},
		Input{Name: "gzip-bomb-64MiB", Raw: Gzip(make([]byte, 64<<20)), Gzipped: true, Refused: true},
		Input{Name: "deep-nesting-under-limit", Raw: NestedRequest("deep-but-allowed", AllowedDepth, seed+2)},
		Input{Name: "garbage-bytes", Raw: []byte("\xff\xff\xff\xff not protobuf \x00\x01"), Refused: true},
		Input{Name: "protobuf-sent-as-json", Raw: NestedRequest("as-json", 3, seed+3), ContentType: "application/json", Refused: true},
	)
	return in
}

// builder makes one resource's spans; each turn is a trace of an agent span and its LLM
// span.
type builder struct {
	td        ptrace.Traces
	rs        ptrace.ResourceSpans
	ss        ptrace.ScopeSpans
	seed      byte
	traceSeed uint16
	nextSpan  uint32
	prefix    string
}

func newBuilder(prefix string, seed byte) *builder {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "hostile-"+prefix)
	b := &builder{td: td, rs: rs, ss: rs.ScopeSpans().AppendEmpty(), seed: seed, prefix: prefix}
	return b
}

func (b *builder) traceID() pcommon.TraceID {
	id := pcommon.TraceID{b.seed, byte(b.traceSeed >> 8), byte(b.traceSeed), 0xa1}
	copy(id[4:], b.prefix)
	return id
}

// span appends a span of the current trace under parent (none when zero).
func (b *builder) span(name string, parent pcommon.SpanID) ptrace.Span {
	b.nextSpan++
	n := b.nextSpan
	sp := b.ss.Spans().AppendEmpty()
	sp.SetName(name)
	sp.SetTraceID(b.traceID())
	sp.SetSpanID(pcommon.SpanID{b.seed, 0xee, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), 1, 1})
	sp.SetParentSpanID(parent)
	now := time.Now()
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(50 * time.Millisecond)))
	return sp
}

func (b *builder) turn(id, user string, start time.Time) *builder {
	st := pcommon.NewTimestampFromTime(start)
	return b.turnAt(id, user, st, st+pcommon.Timestamp(100*time.Millisecond))
}

func (b *builder) turnAt(id, user string, start, end pcommon.Timestamp) *builder {
	msg := func(role, text string) string {
		js, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]any{{"type": "text", "content": text}}}})
		return string(js)
	}
	root := b.span("invoke_agent support", pcommon.SpanID{})
	llm := b.span("chat gpt-4o", root.SpanID())
	for _, sp := range []ptrace.Span{root, llm} {
		sp.SetStartTimestamp(start)
		sp.SetEndTimestamp(end)
		sp.Attributes().PutStr("gen_ai.conversation.id", id)
		sp.Attributes().PutStr("gen_ai.input.messages", msg("user", user))
		sp.Attributes().PutStr("gen_ai.output.messages", msg("assistant", "Order 12345 shipped."))
	}
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	root.Attributes().PutStr("gen_ai.agent.name", "support")
	llm.Attributes().PutStr("gen_ai.operation.name", "chat")
	return b
}

// LoadResourceKey is the resource attribute that marks LoadTurn's spans (its value is n).
const LoadResourceKey = "load.n"

// LoadTurn is one turn of session id in a trace of its own (n makes the trace id): the
// load of the SIGTERM-under-load scenario.
func LoadTurn(n uint32, id string) ptrace.Traces {
	b := newBuilder("load", 0xfe)
	b.traceSeed = uint16(n)
	b.td.ResourceSpans().At(0).Resource().Attributes().PutInt(LoadResourceKey, int64(n))
	tid := b.traceID()
	tid[12], tid[13], tid[14], tid[15] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	b.turn(id, fmt.Sprintf("load question %d about order %d", n, n%1000), time.Now())
	for i := 0; i < b.ss.Spans().Len(); i++ {
		b.ss.Spans().At(i).SetTraceID(tid)
	}
	return b.td
}

// RawCodec is a gRPC codec that sends a request's bytes as they are, so that a test can
// send protobuf that no generated client would marshal.
type RawCodec struct{}

// Marshal returns v, a []byte.
func (RawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("RawCodec: %T", v)
	}
	return b, nil
}

// Unmarshal copies data into v, a *[]byte.
func (RawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("RawCodec: %T", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}

// Name is "proto": the server decodes the bytes as protobuf.
func (RawCodec) Name() string { return "proto" }
