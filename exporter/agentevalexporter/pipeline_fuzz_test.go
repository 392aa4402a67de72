// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/handoff/handofftest"
	"github.com/agenteval/agenteval-collector/internal/pdatautil"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

// The whole-pipeline fuzz test (docs/decisions/hostile-input.md): fuzz bytes become a
// few batches of agent-shaped spans (built from scratch or by mutating a recorded run of
// testdata/), which pass through the real agentsession processor, whose evaluation
// spans pass through the real agenteval exporter into a real store; checkPipeline
// asserts what must hold whatever the input.

// fuzzBytes hands out the fuzz input a little at a time; past its end it gives zeros.
type fuzzBytes struct{ b []byte }

func (f *fuzzBytes) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

// intn returns a value in [0, n).
func (f *fuzzBytes) intn(n int) int { return int(f.byte()) % n }

// raw returns the next up to n bytes, as they are (invalid UTF-8 and NUL included).
func (f *fuzzBytes) raw(n int) string {
	n = min(n, len(f.b))
	s := string(f.b[:n])
	f.b = f.b[n:]
	return s
}

// maxFuzzLong bounds the long strings a run builds, so that one stays fast.
const maxFuzzLong = 256 << 10

// text returns a string for a text attribute: plain, raw fuzz bytes (invalid UTF-8,
// NUL), a long one, or one of the words the evaluators look for.
func (f *fuzzBytes) text() string {
	switch f.intn(6) {
	case 0:
		return "refund order 12345 for alice@example.com"
	case 1:
		return f.raw(f.intn(32))
	case 2: // a long one: a short unit repeated, at most maxFuzzLong bytes in all
		chunk := f.raw(1 + f.intn(8))
		return strings.Repeat(chunk+"x", 1+int(f.byte())*int(f.byte())*4%maxFuzzLong/(len(chunk)+1))
	case 3:
		return "no, that's wrong, try again"
	case 4:
		return "\x00\xff\xfe" + f.raw(4) + "\u2028\xed\xa0\x80" // NUL, invalid bytes, a surrogate
	default:
		return ""
	}
}

// jsonText returns a JSON string literal of s written byte for byte (so invalid UTF-8
// and NUL stay as they are: what a careless instrumentation writes).
func jsonText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// argsJSON returns tool-call arguments: a JSON object, non-JSON, deeply nested JSON,
// JSON of the wrong type.
func (f *fuzzBytes) argsJSON() string {
	switch f.intn(6) {
	case 0:
		return `{"order_id":` + jsonText(f.text()) + `,"amount":12.5}`
	case 1:
		return f.raw(f.intn(24))
	case 2:
		d := 1 + int(f.byte())*8
		return strings.Repeat(`{"a":[`, d) + strings.Repeat(`]}`, d)
	case 3:
		return `[1,"two",null]`
	case 4:
		return `{"order_id":` // truncated
	default:
		return `"just a string"`
	}
}

// messagesJSON returns gen_ai.input/output.messages: valid GenAI messages (text and tool
// call parts), or malformed ones.
func (f *fuzzBytes) messagesJSON(role string) string {
	switch f.intn(5) {
	case 0, 1:
		parts := `{"type":"text","content":` + jsonText(f.text()) + `}`
		if role == "assistant" && f.intn(2) == 0 {
			parts += `,{"type":"tool_call","id":` + jsonText(f.callID()) + `,"name":` + jsonText(f.toolName()) +
				`,"arguments":` + f.argsJSON() + `}`
		}
		return `[{"role":"` + role + `","parts":[` + parts + `]}]`
	case 2:
		return f.raw(f.intn(40))
	case 3:
		d := 1 + int(f.byte())*8
		return strings.Repeat(`[`, d) + strings.Repeat(`]`, d)
	default:
		return `[{"role":7,"parts":{"type":"text"}},null,"x"]`
	}
}

func (f *fuzzBytes) toolName() string {
	return [...]string{"refund_order", "lookup_order", "transfer_to_executor", "handoff_to_agent", "", "\xff\x00tool"}[f.intn(6)]
}

func (f *fuzzBytes) callID() string {
	return [...]string{"call_1", "call_2", "", "call_\x00"}[f.intn(4)]
}

func (f *fuzzBytes) agentName() string {
	return [...]string{"planner", "executor", "", "\xffagent\x00"}[f.intn(4)]
}

// put sets key to the value want (a string) most of the time, else to a hostile value:
// wrong-typed (int, double, bool, slice, map, bytes), raw fuzz text, or absent.
func (f *fuzzBytes) put(m pcommon.Map, key, want string) {
	switch f.intn(12) {
	case 0:
		m.PutInt(key, int64(binary.LittleEndian.Uint16([]byte{f.byte(), f.byte()})))
	case 1:
		s := m.PutEmptySlice(key)
		s.AppendEmpty().SetStr(want)
		s.AppendEmpty().SetInt(1)
	case 2:
		mm := m.PutEmptyMap(key)
		mm.PutStr("value", want)
		mm.PutEmptyMap("nested").PutEmptySlice("x").AppendEmpty().SetBool(true)
	case 3:
		m.PutStr(key, f.text())
	case 4:
		m.PutEmptyBytes(key).FromRaw([]byte(want))
	case 5:
		m.PutDouble(key, -1.5)
	case 6:
		m.PutBool(key, true)
	case 7: // absent
	default:
		m.PutStr(key, want)
	}
}

// fuzzTraceIDs and fuzzSpanIDs are the ids the built spans choose from, so that
// duplicates, self parents and cycles come up; the zero ids are invalid ones.
var (
	fuzzTraceIDs = [...]pcommon.TraceID{{1: 0xa1}, {1: 0xb2}, {1: 0xc3}, {1: 0xd4}, {}}
	fuzzSpanIDs  = func() (ids [12]pcommon.SpanID) {
		for i := range ids {
			ids[i] = pcommon.SpanID{7: byte(i)} // ids[0] is the invalid zero id
		}
		return ids
	}()
)

// fuzzSpan appends a span built from f to ss.
func fuzzSpan(f *fuzzBytes, ss ptrace.ScopeSpans, base time.Time) {
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(fuzzTraceIDs[f.intn(len(fuzzTraceIDs))])
	sp.SetSpanID(fuzzSpanIDs[f.intn(len(fuzzSpanIDs))])
	switch p := f.intn(2 * len(fuzzSpanIDs)); {
	case p >= len(fuzzSpanIDs)+2: // a root
	case p < len(fuzzSpanIDs): // valid, self, cyclic, a later span, or the invalid zero id
		sp.SetParentSpanID(fuzzSpanIDs[p])
	case p == len(fuzzSpanIDs): // missing: never sent
		sp.SetParentSpanID(pcommon.SpanID{0xde, 0xad})
	default:
		sp.SetParentSpanID(sp.SpanID())
	}
	start := base.Add(time.Duration(f.intn(64)) * 100 * time.Millisecond)
	end := start.Add(time.Duration(int(f.byte())-32) * 50 * time.Millisecond) // may end before it starts
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	if f.intn(4) == 0 {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(f.text())
	}
	m := sp.Attributes()
	switch f.intn(4) {
	case 0:
		f.put(m, semconv.GenAIConversationID, "session-1")
	case 1:
		f.put(m, semconv.GenAIConversationID, "session-2")
	case 2:
		f.put(m, "session.id", f.raw(f.intn(12)))
	}
	agent := f.agentName()
	switch kind := f.intn(7); kind {
	case 0: // agent invocation
		sp.SetName("invoke_agent " + agent)
		f.put(m, semconv.GenAIOperationName, "invoke_agent")
		f.put(m, semconv.GenAIAgentName, agent)
		f.put(m, semconv.GenAIInputMessages, f.messagesJSON("user"))
		f.put(m, semconv.GenAIOutputMessages, f.messagesJSON("assistant"))
	case 1: // chat
		sp.SetName("chat gpt-4o")
		f.put(m, semconv.GenAIOperationName, "chat")
		f.put(m, semconv.GenAIRequestModel, "gpt-4o")
		f.put(m, semconv.GenAIInputMessages, f.messagesJSON("user"))
		f.put(m, semconv.GenAIOutputMessages, f.messagesJSON("assistant"))
		f.put(m, semconv.GenAIToolDefinitions, `[{"type":"function","name":"refund_order","parameters":{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}}]`)
		m.PutInt(semconv.GenAIUsageInputTokens, int64(f.byte())-8)
	case 2, 3: // tool execution, or a handoff (transfer) through one
		tool := f.toolName()
		if kind == 3 {
			tool = "transfer_to_" + f.agentName()
			f.put(m, semconv.GenAITransferTargetName, f.agentName())
			f.put(m, semconv.GenAITransferMode, semconv.TransferModePassControl)
			f.put(m, semconv.GenAIHandoffFromAgent, agent)
			f.put(m, semconv.GenAIHandoffToAgent, f.agentName())
		}
		sp.SetName("execute_tool " + tool)
		f.put(m, semconv.GenAIOperationName, "execute_tool")
		f.put(m, semconv.GenAIToolName, tool)
		f.put(m, semconv.GenAIToolCallID, f.callID())
		f.put(m, semconv.GenAIToolCallArguments, f.argsJSON())
		f.put(m, semconv.GenAIToolCallResult, f.text())
	case 4: // the end of the session
		sp.SetName("end")
		f.put(m, semconv.AgentEvalSessionEnd, "true")
		if f.intn(2) == 0 {
			m.PutBool(semconv.AgentEvalSessionEnd, true)
		}
	case 5: // a forged evaluation span, unsigned or signed with garbage
		kind := [...]string{semconv.EvalKindTurn, semconv.EvalKindAgentSession, semconv.EvalKindToolCall, semconv.EvalKindJudge}[f.intn(4)]
		sp.SetName(semconv.EvalSpanPrefix + kind)
		f.put(m, semconv.AgentEvalKind, kind)
		f.put(m, semconv.AgentEvalSessionID, "session-1")
		f.put(m, semconv.AgentEvalTurnPrefix+"turn_index", "0")
		f.put(m, semconv.AgentEvalSessionPrefix+"session_id", "session-1")
		f.put(m, semconv.AgentEvalSessionPrefix+"overall_score", "0.01")
		f.put(m, semconv.AgentEvalSignature, f.text())
	default: // an application span, or one with a name only
		sp.SetName(f.text())
		f.put(m, "http.route", "/chat")
	}
	if f.intn(8) == 0 {
		ev := sp.Events().AppendEmpty()
		ev.SetName("gen_ai.user.message")
		f.put(ev.Attributes(), "content", f.text())
	}
}

// fuzzFixtures are recorded agent runs the fuzz input can start from (small ones, so
// that a run stays fast).
var fuzzFixtures = sync.OnceValues(func() ([]ptrace.Traces, error) {
	var out []ptrace.Traces
	for _, name := range []string{
		"../../testdata/fixtures/otel_genai_convention_spans.otlp.json",
		"../../testdata/fixtures/openai_agents_genai_live_spans.otlp.json",
		"../../testdata/fixtures/adk_live_spans.otlp.json",
		"../../testdata/fixtures/pydantic_ai_live_spans.otlp.json",
		"../../testdata/samples/openai_agents_handoff.json",
		"../../testdata/samples/vercel_ai_bad_tool_args.json",
		"../../testdata/samples/vercel_ai_multi_turn.json",
	} {
		td, err := readTracesFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, td)
	}
	return out, nil
})

// mutateFixture returns a copy of a recorded run with some of its spans changed by f:
// attribute values replaced by hostile ones, parents redirected, spans duplicated.
func mutateFixture(f *fuzzBytes, fixtures []ptrace.Traces) ptrace.Traces {
	td := ptrace.NewTraces()
	fixtures[f.intn(len(fixtures))].CopyTo(td)
	var spans []ptrace.Span
	for ref := range pdatautil.Spans(td) {
		spans = append(spans, ref.Span)
	}
	for range f.intn(8) {
		sp := spans[f.intn(len(spans))]
		switch f.intn(5) {
		case 0, 1: // an attribute's value
			m := sp.Attributes()
			if m.Len() == 0 {
				continue
			}
			i, key := f.intn(m.Len()), ""
			for k := range m.All() {
				if i == 0 {
					key = k
					break
				}
				i--
			}
			f.put(m, key, f.text())
		case 2: // the parent: self, another span, missing
			switch f.intn(3) {
			case 0:
				sp.SetParentSpanID(sp.SpanID())
			case 1:
				sp.SetParentSpanID(spans[f.intn(len(spans))].SpanID())
			default:
				sp.SetParentSpanID(pcommon.SpanID{0xde, 0xad})
			}
		case 3: // a duplicate, sent twice
			sp.CopyTo(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty())
		default: // the span id of another span
			sp.SetSpanID(spans[f.intn(len(spans))].SpanID())
		}
	}
	return td
}

// pipelineInput is what FuzzPipeline's bytes decode to.
type pipelineInput struct {
	batches []ptrace.Traces
	// pauses[i] is how long to wait after batches[i] (timed only).
	pauses []time.Duration
	// handoff: the processor and the exporter share an agenteval_handoff.
	handoff bool
	// timed: the processor closes turns after 1ms and ends sessions after 30ms of
	// silence, so that provisional verdicts, idle sessions and their continuation (new
	// revisions) come up between batches (when the pauses let them).
	timed bool
}

// fuzzInput decodes fuzz input into batches of spans and how to run them.
func fuzzInput(data []byte) (pipelineInput, error) {
	f := &fuzzBytes{b: data}
	head := f.byte()
	in := pipelineInput{handoff: head&1 != 0, timed: head&4 != 0}
	base := time.Unix(1_700_000_000, 0)
	for range 1 + f.intn(4) {
		if head&2 != 0 && f.intn(2) == 0 {
			fixtures, err := fuzzFixtures()
			if err != nil {
				return in, err
			}
			in.batches = append(in.batches, mutateFixture(f, fixtures))
			in.pauses = append(in.pauses, time.Duration(f.intn(3))*25*time.Millisecond)
			continue
		}
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		f.put(rs.Resource().Attributes(), semconv.ServiceName, "fuzz-agent")
		if f.intn(4) == 0 {
			f.put(rs.Resource().Attributes(), semconv.GenAIConversationID, "session-"+strconv.Itoa(f.intn(3)))
		}
		ss := rs.ScopeSpans().AppendEmpty()
		for range 1 + f.intn(12) {
			fuzzSpan(f, ss, base)
		}
		in.batches = append(in.batches, td)
		in.pauses = append(in.pauses, time.Duration(f.intn(3))*25*time.Millisecond)
		base = base.Add(time.Duration(f.intn(8)) * time.Minute)
	}
	return in, nil
}

// fuzzSeeds are FuzzPipeline's seed corpus: a few short inputs (empty, recorded runs,
// timed, with a handoff) and pseudo-random ones.
func fuzzSeeds() [][]byte {
	seeds := [][]byte{
		{0},
		{1},
		{2, 0},
		{3, 0},
		{3, 1, 7, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		[]byte("\x00\x03\x05\x00\x01\x00\x00\x10\x00\x00\x08\x00\x00\x00\x00\x00"),
		[]byte("\x01\x02\x07\x01\x00\x03\x00\xff\xfe\x00\x00\x01\x02\x03\x04\x05\x06\x07"),
		{7, 3, 7, 2, 9, 1, 0, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 40, 2, 1, 0},
		[]byte("\x03\x03\x07\x02\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13"),
	}
	// Pseudo-random inputs (a fixed seed): they reach multi-turn sessions, recorded runs
	// and pauses that the short ones above do not.
	r := rand.New(rand.NewPCG(1, 2))
	for range 48 {
		b := make([]byte, 40+r.IntN(200))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// FuzzPipeline passes fuzz-built span batches through processor, exporter and store
// and checks checkPipeline's invariants.
func FuzzPipeline(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := fuzzInput(data)
		require.NoError(t, err)
		_, _ = checkPipeline(t, in, newPipelineExporter(t, in.handoff, ""))
	})
}

// TestPipelineSeeds runs FuzzPipeline's seed corpus and testdata/fuzz/FuzzPipeline/ (the
// inputs that once failed) on SQLite, each with the handoff choice its first byte does
// not make (go test runs FuzzPipeline on the corpus with the other), and checks that the
// corpus evaluates sessions and turns.
func TestPipelineSeeds(t *testing.T) {
	var sessions, turns, empty int
	for i, data := range pipelineCorpus(t) {
		in, err := fuzzInput(data)
		require.NoError(t, err)
		in.handoff = !in.handoff
		t.Run(fmt.Sprintf("%d/handoff=%v", i, in.handoff), func(t *testing.T) {
			s, n := checkPipeline(t, in, newPipelineExporter(t, in.handoff, ""))
			sessions, turns = sessions+s, turns+n
			if s == 0 {
				empty++
			}
		})
	}
	t.Logf("%d sessions and %d turns evaluated; %d inputs evaluated nothing", sessions, turns, empty)
	require.Positive(t, sessions)
	require.Positive(t, turns)
}

// TestPipelineSeedsPostgres runs the seed corpus once on PostgreSQL, which refuses NUL
// bytes and invalid UTF-8 in text (AGENTEVAL_TEST_POSTGRES_DSN; required under CI=true).
func TestPipelineSeedsPostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	// Two exporters on one schema (migrating one per input would take most of the time).
	exporters := map[bool]pipelineExporter{false: newPipelineExporter(t, false, dsn), true: newPipelineExporter(t, true, dsn)}
	for i, data := range pipelineCorpus(t) {
		in, err := fuzzInput(data)
		require.NoError(t, err)
		t.Run(strconv.Itoa(i), func(t *testing.T) { _, _ = checkPipeline(t, in, exporters[in.handoff]) })
	}
}

// pipelineCorpus is fuzzSeeds and the files of testdata/fuzz/FuzzPipeline.
func pipelineCorpus(t *testing.T) [][]byte {
	t.Helper()
	corpus := fuzzSeeds()
	files, err := filepath.Glob("testdata/fuzz/FuzzPipeline/*")
	require.NoError(t, err)
	for _, name := range files {
		corpus = append(corpus, readFuzzCorpusFile(t, name))
	}
	return corpus
}

const pipelineSigningKey = "fuzz-pipeline-signing-key-0123456789"

// pipelineExporter is checkPipeline's agenteval exporter and the handoff it takes from
// (nil: none).
type pipelineExporter struct {
	x *testExporter
	h *handoff.Handoff
}

// newPipelineExporter starts an agenteval exporter on a fresh SQLite store, or on the
// PostgreSQL pgDSN, with a handoff of its own when withHandoff; it is shut down with t.
func newPipelineExporter(t *testing.T, withHandoff bool, pgDSN string) pipelineExporter {
	var h *handoff.Handoff
	host := handofftest.Host{}
	ecfg := testConfig()
	ecfg.SigningKey = pipelineSigningKey
	if pgDSN != "" {
		ecfg.Store.Driver, ecfg.Store.DSN = StoreDriverPostgres, configopaque.String(pgDSN)
	} else {
		// Not under t.TempDir: the fuzzer's test names hold a '#', which a SQLite path may not.
		dir, err := os.MkdirTemp("", "fuzzpipe")
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, os.RemoveAll(dir)) })
		ecfg.Store.DSN = configopaque.String(filepath.Join(dir, "x.db"))
	}
	if withHandoff {
		h = handoff.New(1 << 16)
		host = handofftest.NewHost(h)
		ecfg.Handoff = &handofftest.ID
	}
	var openErr error
	x := newTestExporterWithExtensions(t, ecfg, func(e *agentEvalExporter) {
		open := e.openStore
		e.openStore = func(ctx context.Context, driver, dsn string) (store.Store, error) {
			st, err := open(ctx, driver, dsn)
			openErr = err
			return st, err
		}
	}, host) // attaches the taker, as a collector starts its exporters before its processors
	require.True(t, x.exp.isReady(), "the store opened: %v", openErr)
	return pipelineExporter{x: x, h: h}
}

// checkPipeline passes in's batches through a real agentsession processor (shut down at
// the end, which evaluates every open session), then all it passed on through a real
// agenteval exporter pe (its store emptied first), the two sharing pe's handoff if any
// (in.timed: with in.pauses). It asserts: every input batch leaves the processor
// unchanged (byte for byte) and nothing else but evaluation spans; no evaluation failed
// or was skipped; every turn and session evaluation span verifies with the exporter's
// key and decodes; the exporter accepts every batch and rejects no span (unless an input
// span forges one); the store holds the sessions evaluated and nothing else, each once,
// reading back as emitted at its latest revision, with each turn index once, every
// evaluated turn among them, never with a provisional verdict where a final one was
// emitted, and every trace of the input with an agent or chat span among their turns.
// It returns how many sessions and turns were evaluated.
func checkPipeline(t *testing.T, in pipelineInput, pe pipelineExporter) (sessions, turns int) {
	ctx := context.Background()
	x, h := pe.x, pe.h
	// The store starts empty (a shared one is emptied).
	_, err := x.exp.store.DeleteStoredBefore(ctx, time.Now().AddDate(100, 0, 0))
	require.NoError(t, err)

	pf := agentsessionprocessor.NewFactory()
	pcfg := pf.CreateDefaultConfig().(*agentsessionprocessor.Config)
	pcfg.SigningKey = pipelineSigningKey
	pcfg.Workers = 1
	if in.timed {
		pcfg.TurnSettle, pcfg.TurnTimeout, pcfg.SessionTimeout = time.Millisecond, 20*time.Millisecond, 30*time.Millisecond
	}
	host := handofftest.Host{}
	if h != nil {
		pcfg.Handoff = &handofftest.ID
		host = handofftest.NewHost(h)
	}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(ctx)) })
	set := processortest.NewNopSettings(pf.Type())
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.TracesSink)
	p, err := pf.CreateTraces(ctx, set, pcfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx, host))
	marshaler := &ptrace.ProtoMarshaler{}
	var inputs [][]byte
	for i, td := range in.batches {
		cp := ptrace.NewTraces()
		td.CopyTo(cp) // the fuzz input stays as it was
		b, err := marshaler.MarshalTraces(cp)
		require.NoError(t, err)
		inputs = append(inputs, b)
		require.NoError(t, p.ConsumeTraces(ctx, cp))
		if in.timed {
			time.Sleep(in.pauses[i])
		}
	}
	require.NoError(t, p.Shutdown(ctx))
	_, err = tel.GetMetric("otelcol_processor_agentsession_evaluation_errors")
	require.Error(t, err, "no evaluation failed or panicked")
	_, err = tel.GetMetric("otelcol_processor_agentsession_evaluation_spans_skipped")
	require.Error(t, err, "no evaluation span skipped")

	// Every input batch comes out unchanged and in order; every other batch holds only
	// evaluation spans.
	var evalBatches []ptrace.Traces
	next := 0
	for _, td := range sink.AllTraces() {
		b, err := marshaler.MarshalTraces(td)
		require.NoError(t, err)
		if next < len(inputs) && bytes.Equal(b, inputs[next]) {
			next++
			continue
		}
		require.Equal(t, td.SpanCount(), countEvalSpans(td, ""), "a batch that is neither an input batch unchanged nor evaluation spans")
		evalBatches = append(evalBatches, td)
	}
	require.Equal(t, len(inputs), next, "every input batch passed on unchanged")

	// Every turn and session span verifies and decodes; what was evaluated.
	type turnKey struct {
		session string
		index   int
	}
	final := map[turnKey]bool{}                 // each turn evaluated: whether a final verdict was emitted
	latest := map[string]*evaluation.Analysis{} // each session evaluated: its latest revision
	for _, td := range evalBatches {
		eachEvalSpan(td, semconv.EvalKindTurn, func(sp ptrace.Span) {
			require.NoError(t, x.exp.signer.Verify(sp.Attributes()), "turn span signature")
			tr, err := evalspan.DecodeTurn(sp.Attributes())
			require.NoError(t, err, "turn span decodes")
			k := turnKey{tr.SessionID, tr.TurnIndex}
			final[k] = final[k] || tr.Final
		})
		eachEvalSpan(td, semconv.EvalKindAgentSession, func(sp ptrace.Span) {
			require.NoError(t, x.exp.signer.Verify(sp.Attributes()), "session span signature")
			a, err := evalspan.DecodeAnalysis(sp.Attributes())
			require.NoError(t, err, "session span decodes")
			if prev := latest[a.SessionID]; prev == nil || a.AnalysisRevision >= prev.AnalysisRevision {
				latest[a.SessionID] = &a
			}
		})
	}

	// The exporter gets all the processor passed on, in order, as in a pipeline.
	unauthBefore := unauthenticated(x)
	for i, td := range sink.AllTraces() {
		cp := ptrace.NewTraces()
		td.CopyTo(cp)
		require.NoError(t, x.consume(cp), "batch %d exported", i)
	}
	if !forged(in.batches) {
		assert.Equal(t, unauthBefore, unauthenticated(x), "no span dropped as unauthenticated")
	}
	if h != nil {
		assert.Zero(t, h.Len(), "every handed-off result taken by the exporter")
	}

	// The store holds every evaluated session once, each turn once.
	list, err := x.exp.store.ListSessions(ctx, store.Filter{Limit: store.MaxLimit})
	require.NoError(t, err)
	listed := map[string]int{}
	for _, s := range list {
		listed[s.SessionID]++
	}
	for id := range latest {
		assert.Equal(t, 1, listed[id], "session %q listed once", id)
	}
	assert.Len(t, list, len(latest), "only evaluated sessions stored")
	stored := map[turnKey]evaluation.TurnResult{}
	storedTraces := map[string]bool{}
	for id, want := range latest {
		got, err := x.exp.store.GetAnalysis(ctx, id)
		require.NoError(t, err, "session %q reads back", id)
		assert.Equal(t, want.AnalysisRevision, got.AnalysisRevision, "session %q: the latest revision stored", id)
		for _, tr := range got.TurnResults {
			k := turnKey{id, tr.TurnIndex}
			_, dup := stored[k]
			assert.False(t, dup, "session %q turn %d stored once", id, tr.TurnIndex)
			stored[k] = tr
			storedTraces[tr.TraceID] = true
		}
		// The API lists turns in conversation order; the session span in index order.
		inOrder := *want
		inOrder.TurnResults = slices.Clone(want.TurnResults)
		evaluation.ConversationOrder(inOrder.TurnResults)
		wantJS, err := json.Marshal(inOrder)
		require.NoError(t, err)
		gotJS, err := json.Marshal(got)
		require.NoError(t, err)
		assert.JSONEq(t, string(wantJS), string(gotJS), "session %q reads back as emitted, its turns in conversation order", id)
	}
	for k, isFinal := range final {
		tr, ok := stored[k]
		if !assert.True(t, ok, "turn %d of session %q is stored", k.index, k.session) {
			continue
		}
		if isFinal {
			assert.True(t, tr.Final, "turn %d of session %q: its final verdict stored, not a provisional one", k.index, k.session)
		}
	}
	// No turn lost: every trace with an agent or chat span is in a stored turn (spans
	// without a trace or span id are invalid OTLP, passed on but not modelled).
	for _, td := range in.batches {
		for ref := range pdatautil.Spans(td) {
			sp := ref.Span
			op, ok := sp.Attributes().Get(semconv.GenAIOperationName)
			if ok && (op.Str() == "invoke_agent" || op.Str() == "chat") && !sp.TraceID().IsEmpty() && !sp.SpanID().IsEmpty() {
				assert.True(t, storedTraces[sp.TraceID().String()], "trace %s (span %s %q) is in a stored turn", sp.TraceID(), sp.SpanID(), sp.Name())
			}
		}
	}
	return len(latest), len(final)
}

// unauthenticated returns how many spans x has dropped as unauthenticated.
func unauthenticated(x *testExporter) int64 {
	m, err := x.tel.GetMetric("otelcol_exporter_agenteval_unauthenticated_spans")
	if err != nil {
		return 0 // none yet
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

// forged reports whether an input span claims to be an evaluation span.
func forged(batches []ptrace.Traces) bool {
	for _, td := range batches {
		if countEvalSpans(td, "") > 0 {
			return true
		}
	}
	return false
}

// readTracesFile reads an OTLP/JSON file.
func readTracesFile(path string) (ptrace.Traces, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ptrace.Traces{}, err
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		return ptrace.Traces{}, fmt.Errorf("%s: %w", path, err)
	}
	return td, nil
}

// readFuzzCorpusFile reads the []byte of a file in the go test fuzz v1 corpus format.
func readFuzzCorpusFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 2, path)
	require.Equal(t, "go test fuzz v1", lines[0], path)
	lit, ok := strings.CutPrefix(lines[1], "[]byte(")
	require.True(t, ok, path)
	lit, ok = strings.CutSuffix(lit, ")")
	require.True(t, ok, path)
	s, err := strconv.Unquote(lit)
	require.NoError(t, err, path)
	return []byte(s)
}
