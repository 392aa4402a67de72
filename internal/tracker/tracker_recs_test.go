// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

// randomValue fills v (settable) with a random value: every exported field of every
// struct, strings drawn from a small pool (so that interning is exercised), slices nil,
// empty or filled, pointers nil or set. The pool's ids are hex span ids or not.
func randomValue(rng *rand.Rand, v reflect.Value, pool []string) {
	switch v.Kind() {
	case reflect.String:
		if rng.IntN(4) > 0 {
			v.SetString(pool[rng.IntN(len(pool))])
		}
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		switch rng.IntN(4) {
		case 0:
		case 1:
			v.SetInt(-rng.Int64())
		default:
			v.SetInt(rng.Int64())
		}
	case reflect.Uint8:
		v.SetUint(uint64(rng.IntN(256)))
	case reflect.Float64:
		v.SetFloat(rng.NormFloat64() * 1e3)
	case reflect.Pointer:
		if rng.IntN(2) == 0 {
			p := reflect.New(v.Type().Elem())
			randomValue(rng, p.Elem(), pool)
			v.Set(p)
		}
	case reflect.Slice:
		switch rng.IntN(3) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, rng.IntN(3)))
		default:
			n := 1 + rng.IntN(4)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := 0; i < n; i++ {
				randomValue(rng, s.Index(i), pool)
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				randomValue(rng, v.Field(i), pool)
			}
		}
	default:
		panic(fmt.Sprintf("randomValue: add kind %s (%s)", v.Kind(), v.Type()))
	}
}

// TestTraceRecordsRoundTrip retains random records (every SpanRecord field set at random) and
// checks that the decoded records are exactly the ones retained: a field added to
// SpanRecord but not to the compact form fails here.
func TestTraceRecordsRoundTrip(t *testing.T) {
	pool := []string{"", "a", "chat gpt-4o", "0123456789abcdef", "fedcba9876543210", "00000000000000ff",
		"0123456789ABCDEF", "s1", "root", "héllo wörld", `{"order_id":"12345","amount":120.5}`,
		"\x00\xff", "0123456789abcde", "0123456789abcdef0"}
	defer func(v int) { vocabMax = v }(vocabMax)
	vocabMax = 6 // the pool holds more: later values stay in the traces' strings
	shared := &valueVocab{}
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(40)
		want := make([]session.SpanRecord, n)
		var c traceRecords
		vocab := []*valueVocab{nil, shared, {}}[seed%3]
		for i := range want {
			randomValue(rng, reflect.ValueOf(&want[i]).Elem(), pool)
			want[i].TraceID = "trace"
			c.add(&want[i], vocab)
		}
		got := c.records("trace", vocab)
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				gj, _ := json.Marshal(got[i])
				wj, _ := json.Marshal(want[i])
				t.Fatalf("seed %d record %d differs:\n got %s\nwant %s\n(%#v)\n(%#v)", seed, i, gj, wj, got[i], want[i])
			}
		}
	}
	require.Len(t, shared.strs, vocabMax)
}

// TestTraceRecordsWideEnds round-trips random records across the switches to 64-bit string
// ends and 32-bit index slots (at 4 GiB of text and 65534 entries in production, lowered
// here).
func TestTraceRecordsWideEnds(t *testing.T) {
	defer func(v, w int) { maxEnd32, maxIndex16 = v, w }(maxEnd32, maxIndex16)
	maxEnd32 = 40   // the pool holds more
	maxIndex16 = 20 // 50 records have more span ids
	pool := []string{"", "a", "chat gpt-4o", "0123456789abcdef", "s1", "root", `{"order_id":"12345"}`, "hé"}
	rng := rand.New(rand.NewPCG(1, 2))
	want := make([]session.SpanRecord, 50)
	var c traceRecords
	for i := range want {
		randomValue(rng, reflect.ValueOf(&want[i]).Elem(), pool)
		want[i].TraceID = "trace"
		want[i].SpanID = fmt.Sprintf("%016x", i+1)
		c.add(&want[i], nil)
	}
	require.NotNil(t, c.ends64)
	require.Nil(t, c.ends)
	require.NotNil(t, c.idIndex.s32)
	require.Nil(t, c.idIndex.s16)
	require.True(t, reflect.DeepEqual(want, c.records("trace", nil)))
}

// fixtureDir holds the recorded OTLP/JSON fixtures of the conventions.
const fixtureDir = "../../testdata/fixtures"

// TestTraceRecordsFixtures round-trips the records of every recorded fixture span.
func TestTraceRecordsFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.otlp.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	ex := conventions.NewExtractor(conventions.Config{EndAttribute: "agent_eval.session.end"})
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(data)
		require.NoError(t, err)
		vocab := &valueVocab{}
		byTrace := map[string]*traceRecords{}
		want := map[string][]session.SpanRecord{}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					r := ex.Extract(rs.Resource(), ss.Scope(), ss.Spans().At(k))
					c := byTrace[r.TraceID]
					if c == nil {
						c = &traceRecords{}
						byTrace[r.TraceID] = c
					}
					c.add(&r, vocab)
					want[r.TraceID] = append(want[r.TraceID], r)
				}
			}
		}
		for id, c := range byTrace {
			require.Equal(t, want[id], c.records(id, vocab), "%s trace %s", filepath.Base(f), id)
		}
	}
}

// TestTraceRecordsArrival checks the id table against a plain map: duplicates and the class
// of an arrived parent, with hex and non-hex ids, self-parents and missing parents.
func TestTraceRecordsArrival(t *testing.T) {
	ids := []string{"", "0123456789abcdef", "00000000000000ff", "p", "q", "0000000000000001", "1"}
	defer func(v int) { maxIndex16 = v }(maxIndex16)
	for seed := uint64(0); seed < 200; seed++ {
		maxIndex16 = []int{3, math.MaxUint16 - 1}[seed%2] // half of the runs switch to 32-bit slots
		rng := rand.New(rand.NewPCG(seed, 11))
		var c traceRecords
		vocab := []*valueVocab{nil, {}}[seed/2%2] // with the memo of parent ids, and without
		classes := map[string]session.SpanClass{}
		for i := 0; i < 60; i++ {
			r := session.SpanRecord{SpanID: ids[rng.IntN(len(ids))], ParentSpanID: ids[rng.IntN(len(ids))], Class: session.SpanClass(rng.IntN(8))}
			parentArrived, parentGenAI, dup := c.add(&r, vocab)
			_, wantDup := classes[r.SpanID]
			require.Equal(t, wantDup, dup, "seed %d step %d", seed, i)
			if !wantDup {
				classes[r.SpanID] = r.Class
			}
			wantPC, wantArrived := classes[r.ParentSpanID]
			wantArrived = wantArrived && r.ParentSpanID != "" && r.ParentSpanID != r.SpanID
			require.Equal(t, wantArrived, parentArrived, "seed %d step %d", seed, i)
			if wantArrived {
				require.Equal(t, wantPC.GenAI(), parentGenAI)
			}
		}
	}
}

// TestTrackerPinsNothingOfTheBatch extracts spans with 5 MB tool arguments and result
// (cut at max_text_bytes) and a 60 KB message list whose user message is short into a
// Tracker, drops the spans and checks that the open trace holds a few kilobytes, not what
// sub-strings of the attributes would pin.
func TestTrackerPinsNothingOfTheBatch(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	ex := conventions.NewExtractor(conventions.Config{MaxTextBytes: 4096})
	tk := New(Config{})
	batch := func(tk *Tracker, size int) {
		big := strings.Repeat("x", size)
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		ss := rs.ScopeSpans().AppendEmpty()
		tool := ss.Spans().AppendEmpty()
		tool.SetTraceID(pcommon.TraceID{1})
		tool.SetSpanID(pcommon.SpanID{1})
		tool.SetParentSpanID(pcommon.SpanID{2})
		tool.SetName("execute_tool lookup")
		tool.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
		tool.Attributes().PutStr("gen_ai.tool.name", "lookup")
		tool.Attributes().PutStr("gen_ai.tool.call.arguments", `{"q":"`+big+`"}`)
		tool.Attributes().PutStr("gen_ai.tool.call.result", big+"!")
		llm := ss.Spans().AppendEmpty()
		llm.SetTraceID(pcommon.TraceID{1})
		llm.SetSpanID(pcommon.SpanID{3})
		llm.SetParentSpanID(pcommon.SpanID{2})
		llm.SetName("chat m")
		llm.Attributes().PutStr("gen_ai.operation.name", "chat")
		llm.Attributes().PutStr("gen_ai.conversation.id", "s1")
		llm.Attributes().PutStr("gen_ai.input.messages",
			`[{"role":"system","parts":[{"type":"text","content":"`+big[:min(size, 60<<10)]+`"}]},{"role":"user","parts":[{"type":"text","content":"short question"}]}]`)
		var recs []session.SpanRecord
		for i := 0; i < ss.Spans().Len(); i++ {
			recs = append(recs, ex.Extract(rs.Resource(), ss.Scope(), ss.Spans().At(i)))
		}
		require.Len(t, recs[0].ToolResult, 4096)
		require.Equal(t, "short question", recs[1].UserMessage)
		tk.Observe(recs, testT0)
	}
	// Warm up on another tracker: the first extraction fills process-wide caches (JSON
	// decoders, interned names) that the measure must not count.
	batch(New(Config{}), 64<<10)
	before := heap()
	batch(tk, 5<<20)
	retained := int64(heap()) - int64(before)
	require.Equal(t, 2, tk.Stats().RetainedSpans)
	require.Less(t, retained, int64(32<<10), "the open trace retains %d bytes", retained)
	runtime.KeepAlive(tk)
}

// TestTraceRecordsToolDefsByContent: the spans of one agent carry the same tool definitions,
// each span its own decoded copy; the trace keeps one list. A nil schema (unknown) and an
// empty one stay apart.
func TestTraceRecordsToolDefsByContent(t *testing.T) {
	defs := func(params json.RawMessage) []session.ToolDefinition {
		return []session.ToolDefinition{{Name: "issue_refund", Description: "Refund an order", Parameters: params}}
	}
	var c traceRecords
	for i, d := range [][]session.ToolDefinition{
		defs(json.RawMessage(`{"type":"object"}`)),
		defs(json.RawMessage(`{"type":"object"}`)),
		defs(nil),
		defs(json.RawMessage{}),
		defs(nil),
	} {
		c.add(&session.SpanRecord{TraceID: "trace", SpanID: fmt.Sprintf("%016x", i+1), ToolDefs: d}, nil)
	}
	require.Len(t, c.defs, 3)
	got := c.records("trace", nil)
	require.Len(t, got, 5)
	assert.Equal(t, got[0].ToolDefs, got[1].ToolDefs)
	assert.Nil(t, got[2].ToolDefs[0].Parameters)
	assert.NotNil(t, got[3].ToolDefs[0].Parameters)
}

// TestHexID checks the table-driven hexID against strconv: exactly the strings of 16
// lower-case hex digits are ids, with their value; every byte at every position is tried.
func TestHexID(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(s string) {
		t.Helper()
		v, ok := hexID(s)
		want, err := strconv.ParseUint(s, 16, 64)
		wantOK := err == nil && len(s) == 16 && strings.ToLower(s) == s && !strings.ContainsAny(s, "+-_xX")
		require.Equal(t, wantOK, ok, "%q", s)
		if ok {
			require.Equal(t, want, v, "%q", s)
			require.Equal(t, s, fmt.Sprintf("%016x", v))
		}
	}
	for _, s := range []string{"", "0000000000000000", "ffffffffffffffff", "0123456789abcdef",
		"0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0", "span-1"} {
		check(s)
	}
	for range 200 {
		b := []byte(fmt.Sprintf("%016x", rng.Uint64()))
		check(string(b))
		for c := range 256 {
			i := rng.IntN(16)
			old := b[i]
			b[i] = byte(c)
			check(string(b))
			b[i] = old
		}
	}
}

// TestTraceRecordsMemo interleaves the records of two traces that share a vocabulary,
// with strings and parent ids that repeat within a trace and across the traces, in the
// vocabulary and past its bound: each trace decodes to exactly its records, whichever
// references the memo reused (valueVocab.memo), and forgetMemo leaves nothing of a batch.
func TestTraceRecordsMemo(t *testing.T) {
	defer func(v int) { vocabMax = v }(vocabMax)
	vocabMax = 3 // the later rules and models stay in the traces' strings
	vocab := &valueVocab{}
	rng := rand.New(rand.NewPCG(3, 4))
	values := []string{"a", "b", "chat gpt-4o", `[{"role":"user"}]`, "s1", "s2"}
	pick := func() string { return values[rng.IntN(len(values))] }
	parents := []string{"", "00000000000000aa", "00000000000000bb", "p", "0000000000000001"}
	var traces [2]traceRecords
	var want [2][]session.SpanRecord
	for i := range 400 {
		k := rng.IntN(2)
		r := session.SpanRecord{TraceID: "trace", SpanID: fmt.Sprintf("%016x", i+1)}
		r.ParentSpanID = parents[rng.IntN(len(parents))]
		r.Class = session.SpanClass(rng.IntN(numMemoClasses))
		r.Name, r.ClassRule, r.Operation, r.SessionID = pick(), pick(), pick(), pick()
		r.SessionKey, r.Service, r.Model, r.ToolName = pick(), pick(), pick(), pick()
		r.ToolArgsSource, r.AgentName, r.AgentRule = pick(), pick(), pick()
		r.Deferred.InputMessages = pick()
		traces[k].add(&r, vocab)
		want[k] = append(want[k], r)
		if rng.IntN(50) == 0 {
			vocab.forgetMemo()
		}
	}
	for k := range traces {
		require.Equal(t, want[k], traces[k].records("trace", vocab), "trace %d", k)
	}
	vocab.forgetMemo()
	for _, class := range vocab.memo {
		for _, m := range class {
			require.Zero(t, m)
		}
	}
}

// TestTrackerClosedRecordsAreTheirTraces interleaves the records of many traces of a few
// sessions in random batches, with strings that repeat within and across traces (the
// memo's hits), sessions killed by max_spans_per_session and evicted by max_sessions in
// the middle of a batch, and vocabulary bounds of 0, 2 and 4096: every record a closed
// turn hands out equals the record of that trace and span id that went in.
func TestTrackerClosedRecordsAreTheirTraces(t *testing.T) {
	defer func(v int) { vocabMax = v }(vocabMax)
	template := sessiontest.TurnRecords(20)
	names := []string{"chat", "chat gpt-4o", "execute_tool lookup", "invoke_agent spec0"}
	var evicted, dropped uint64
	models := []string{"gpt-4o", "gpt-4o-mini", "claude"}
	for _, bound := range []int{0, 2, 4096} {
		for seed := range uint64(20) {
			vocabMax = bound
			rng := rand.New(rand.NewPCG(seed, uint64(bound)))
			tk := New(Config{MaxSessions: 6, MaxSpansPerSession: 90, SessionTimeout: time.Minute,
				TurnTimeout: time.Minute, TurnSettle: time.Second, MaxSessionDuration: time.Hour})
			in := map[[2]string]session.SpanRecord{}
			var pending []session.SpanRecord
			for tr := range 60 {
				sess := fmt.Sprintf("s%d", rng.IntN(8))
				for _, r := range template {
					r.TraceID, r.SessionID = fmt.Sprintf("t%d", tr), sess
					r.Name = names[rng.IntN(len(names))]
					if r.Model != "" {
						r.Model = models[rng.IntN(len(models))]
					}
					in[[2]string{r.TraceID, r.SpanID}] = r
					pending = append(pending, r)
				}
			}
			rng.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
			clock := testT0
			var closed []Closed
			for len(pending) > 0 {
				n := min(len(pending), 1+rng.IntN(120))
				clock = clock.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
				closed = append(closed, tk.ObserveClosing(pending[:n], clock)...)
				closed = append(closed, tk.AdvanceClosing(clock)...)
				pending = pending[n:]
			}
			closed = append(closed, tk.AdvanceClosing(clock.Add(time.Hour))...)
			st := tk.Stats()
			evicted += st.SessionsEvicted
			dropped += st.SpansDropped
			var turns, recs int
			for _, c := range closed {
				if c.Records == nil {
					continue
				}
				turns++
				for _, r := range c.Records {
					want, ok := in[[2]string{r.TraceID, r.SpanID}]
					require.True(t, ok, "bound %d seed %d: a record of no trace sent: %s/%s", bound, seed, r.TraceID, r.SpanID)
					require.Equal(t, want, r, "bound %d seed %d", bound, seed)
					recs++
				}
			}
			tk.Finish(closed)
			require.Positive(t, turns, "bound %d seed %d: turns closed", bound, seed)
			require.Positive(t, recs)
		}
	}
	assert.Positive(t, evicted, "sessions evicted by max_sessions")
	assert.Positive(t, dropped, "spans of killed sessions")
}
