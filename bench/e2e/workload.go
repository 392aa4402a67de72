// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// workloadConfig shapes the agent traffic (the testbed's "data provider").
type workloadConfig struct {
	// Seed makes the stream reproducible.
	Seed uint64
	// ActiveTurns is how many turns are in flight at once; batches interleave them. At R
	// spans/s a turn of S spans is spread over about ActiveTurns*S/R seconds.
	ActiveTurns int
	// TurnsPerSession is how many turns a session has; the last one's root carries
	// agent_eval.session.end=true.
	TurnsPerSession int
	// ChunkSpans is how many consecutive spans of one turn go into a batch before the next
	// turn's (an agent step's worth).
	ChunkSpans int
	// ThinkSpans is the user's think time between two turns of a session, counted in spans
	// of the stream (about ActiveTurns*S spans is one turn's duration).
	ThinkSpans int
	// RunID prefixes session ids, so that two runs never share a session.
	RunID string
}

func (c workloadConfig) withDefaults() workloadConfig {
	if c.ActiveTurns <= 0 {
		c.ActiveTurns = 500
	}
	if c.TurnsPerSession <= 0 {
		c.TurnsPerSession = 3
	}
	if c.ChunkSpans <= 0 {
		c.ChunkSpans = 4
	}
	if c.ThinkSpans <= 0 {
		c.ThinkSpans = c.ActiveTurns * 26
	}
	if c.RunID == "" {
		c.RunID = "bench"
	}
	return c
}

// spanSpec is one span of a turn, materialised into a batch when its turn's chunk is sent.
type spanSpec struct {
	name       string
	spanID     pcommon.SpanID
	parentID   pcommon.SpanID
	start, end time.Time
	attrs      []attr
}

type attr struct {
	key string
	str string
	num int64
	typ pcommon.ValueType
}

func sattr(k, v string) attr { return attr{key: k, str: v, typ: pcommon.ValueTypeStr} }
func iattr(k string, v int64) attr {
	return attr{key: k, num: v, typ: pcommon.ValueTypeInt}
}
func battr(k string, v bool) attr {
	var n int64
	if v {
		n = 1
	}
	return attr{key: k, num: n, typ: pcommon.ValueTypeBool}
}

// turnStream is a turn being sent: its spans in the order they end (children before
// their parent, the root last), as an SDK exports them.
type turnStream struct {
	session *sessionState
	traceID pcommon.TraceID
	spans   []spanSpec
	next    int
}

type sessionState struct {
	id    string
	turns int // turns started
	// readyAt is the stream position from which its next turn may start.
	readyAt int64
	// lastEnd is when its last turn's root ended (its spans' timestamps).
	lastEnd time.Time
}

// turnStats counts what the stream holds, to check the collector's output against.
type turnStats struct {
	Spans        int64 // every span sent
	Turns        int64 // turns whose root was sent
	Interactions int64 // invoke_agent spans
	Handoffs     int64 // transfer_to_* tool spans
	BadToolCalls int64 // tool calls with an argument outside the tool's schema
	Sessions     int64 // sessions started
	EndedByFlag  int64 // sessions whose last turn carried agent_eval.session.end
}

// batch is one OTLP request of the stream.
type batch struct {
	traces ptrace.Traces
	spans  int
	// roots are the traces whose root span this batch carries (turn-evaluation latency
	// is measured from the moment the batch is sent).
	roots []pcommon.TraceID
	// inFlight is how many turns the batch was cut from: ActiveTurns, fewer in Drain.
	inFlight int
}

// workload produces agent-shaped GenAI traffic: sessions of several turns, each turn one
// trace (an invoke_workflow root, two to four agents linked by transfer_to_* handoffs,
// chat spans with JSON messages, tool definitions and tool calls, execute_tool spans with
// arguments and results), turns of many sessions interleaved in every batch. Not safe
// for concurrent use.
type workload struct {
	cfg     workloadConfig
	rng     *rand.Rand
	active  []*turnStream
	cursor  int
	waiting []*sessionState // sessions between two turns, in readiness order
	nextSes int
	pos     int64 // spans emitted so far
	stats   turnStats
	now     func() time.Time
}

func newWorkload(cfg workloadConfig) *workload {
	cfg = cfg.withDefaults()
	return &workload{
		cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		now: time.Now,
	}
}

// Stats returns what was emitted so far.
func (w *workload) Stats() turnStats { return w.stats }

// NextBatch returns a batch of at least n spans (n rounded up to whole chunks), taken
// round robin from the active turns, which are topped up to ActiveTurns first.
func (w *workload) NextBatch(n int) batch {
	for len(w.active) < w.cfg.ActiveTurns {
		w.active = append(w.active, w.startTurn())
	}
	b := w.newBatch()
	b.inFlight = len(w.active)
	spans := b.traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for b.spans < n {
		if w.cursor >= len(w.active) {
			w.cursor = 0
		}
		ts := w.active[w.cursor]
		if w.emitChunk(ts, spans, &b) {
			// The turn is complete: its slot gets a new turn at once.
			w.active[w.cursor] = w.startTurn()
		}
		w.cursor++
	}
	return b
}

// Drain returns batches of at most n spans holding the rest of every turn in flight, so
// that every turn sent is whole. Sessions between two turns start no new turn. Each
// batch's inFlight says how many turns it was cut from: sent at the same rate, the
// batches of a shrinking set of turns would finish each turn sooner (see pacing in
// runLoad).
func (w *workload) Drain(n int) []batch {
	var out []batch
	for len(w.active) > 0 {
		b := w.newBatch()
		b.inFlight = len(w.active)
		spans := b.traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for b.spans < n && len(w.active) > 0 {
			if w.cursor >= len(w.active) {
				w.cursor = 0
			}
			if w.emitChunk(w.active[w.cursor], spans, &b) {
				w.active = append(w.active[:w.cursor], w.active[w.cursor+1:]...)
				continue
			}
			w.cursor++
		}
		out = append(out, b)
	}
	return out
}

func (w *workload) newBatch() batch {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bench-agents")
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "python")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("opentelemetry.instrumentation.openai_agents")
	return batch{traces: td}
}

// emitChunk appends the next ChunkSpans spans of ts and reports whether ts is complete.
func (w *workload) emitChunk(ts *turnStream, spans ptrace.SpanSlice, b *batch) bool {
	for i := 0; i < w.cfg.ChunkSpans && ts.next < len(ts.spans); i++ {
		spec := &ts.spans[ts.next]
		ts.next++
		materialise(spec, ts.traceID, spans.AppendEmpty())
		b.spans++
		w.pos++
		w.stats.Spans++
		if spec.parentID.IsEmpty() {
			b.roots = append(b.roots, ts.traceID)
			w.stats.Turns++
		}
	}
	if ts.next < len(ts.spans) {
		return false
	}
	s := ts.session
	if s.turns < w.cfg.TurnsPerSession {
		s.readyAt = w.pos + int64(w.cfg.ThinkSpans)
		w.waiting = append(w.waiting, s)
	}
	return true
}

func materialise(spec *spanSpec, tid pcommon.TraceID, sp ptrace.Span) {
	sp.SetTraceID(tid)
	sp.SetSpanID(spec.spanID)
	sp.SetParentSpanID(spec.parentID)
	sp.SetName(spec.name)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(spec.start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(spec.end))
	a := sp.Attributes()
	a.EnsureCapacity(len(spec.attrs))
	for _, kv := range spec.attrs {
		switch kv.typ {
		case pcommon.ValueTypeInt:
			a.PutInt(kv.key, kv.num)
		case pcommon.ValueTypeBool:
			a.PutBool(kv.key, kv.num != 0)
		default:
			a.PutStr(kv.key, kv.str)
		}
	}
}

// startTurn starts the next turn of the first session whose think time is over, else the
// first turn of a new session.
func (w *workload) startTurn() *turnStream {
	var s *sessionState
	if len(w.waiting) > 0 && w.waiting[0].readyAt <= w.pos {
		s = w.waiting[0]
		w.waiting = w.waiting[1:]
	} else {
		s = &sessionState{id: w.cfg.RunID + "-s" + strconv.Itoa(w.nextSes)}
		w.nextSes++
		w.stats.Sessions++
	}
	s.turns++
	ts := &turnStream{session: s}
	w.putRand(ts.traceID[:])
	ts.spans = w.turnSpans(s, s.turns == w.cfg.TurnsPerSession)
	return ts
}

func (w *workload) putRand(b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := w.rng.Uint64()
		for j := i; j < len(b) && j < i+8; j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
}

func (w *workload) newSpanID() pcommon.SpanID {
	var id pcommon.SpanID
	for id.IsEmpty() {
		w.putRand(id[:])
	}
	return id
}

// The agents of the bench's support system: triage hands off to one or more specialists.
var benchAgents = []struct {
	name  string
	tools []string
}{
	{"triage", []string{"lookup_order", "lookup_customer"}},
	{"refund_agent", []string{"lookup_order", "issue_refund"}},
	{"billing_agent", []string{"lookup_invoice", "update_payment_method"}},
	{"researcher", []string{"search_kb", "lookup_order"}},
}

// toolDefs is the gen_ai.tool.definitions JSON of each tool: every tool takes an order or
// customer id and an optional note, nothing else (additionalProperties false).
func toolDef(name string) string {
	return `{"type":"function","name":"` + name + `","description":"` + name + ` for the support system","parameters":{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"],"additionalProperties":false}}`
}

var userMessages = [][]string{
	{ // first turn
		"I need a refund for order #12345, it arrived damaged. The amount was $120.50.",
		"My invoice INV-2231 charged me twice this month, can you fix it?",
		"Where is my order #88410? It was due last Tuesday.",
	},
	{ // later turns: follow-ups and corrections
		"Thanks. Can you also update my card on file to the one ending 4242?",
		"No, I meant order #54321, not #12345. Please check that one instead.",
		"That's not what I asked: I want the money back, not store credit.",
		"Great, and how long will the refund take to arrive?",
	},
}

// turnSpans builds one turn in end order. The root is an invoke_workflow span with the
// user's message and the final answer; triage runs first and hands off (a transfer_to_X
// tool call and its execute_tool span with gen_ai.transfer.*) to one to three specialists;
// every agent makes two to four tool calls (chat → execute_tool) and answers (chat).
func (w *workload) turnSpans(s *sessionState, last bool) []spanSpec {
	r := w.rng
	now := w.now() // the timeline is built from now, then placed (placeTurn)
	rootID := w.newSpanID()
	first := 0
	if s.turns > 1 {
		first = 1
	}
	msgs := userMessages[first]
	user := msgs[r.IntN(len(msgs))]
	system := `{"role":"system","parts":[{"type":"text","content":"You are part of the Acme support team."}]}`
	userMsg := `{"role":"user","parts":[{"type":"text","content":` + strconv.Quote(user) + `}]}`
	convo := []attr{sattr(semconv.GenAIConversationID, s.id), sattr(semconv.GenAIProviderName, "openai")}

	var out []spanSpec
	t := now
	step := func(d time.Duration) (time.Time, time.Time) {
		a := t
		t = t.Add(d)
		return a, t
	}
	agents := []int{0}
	for n := 1 + r.IntN(3); len(agents) <= n; {
		// A specialist other than the one before it.
		next := 1 + r.IntN(len(benchAgents)-1)
		if next == agents[len(agents)-1] {
			next = 1 + next%(len(benchAgents)-1)
		}
		agents = append(agents, next)
	}
	for ai, idx := range agents {
		agent := benchAgents[idx]
		agentID := w.newSpanID()
		agentStart := t
		defs := "[" + toolDef(agent.tools[0]) + "," + toolDef(agent.tools[1]) + "]"
		var handoffTo string
		if ai+1 < len(agents) {
			handoffTo = benchAgents[agents[ai+1]].name
		}
		calls := 2 + r.IntN(3)
		for c := 0; c <= calls; c++ {
			callID := "call_" + strconv.FormatUint(r.Uint64()&0xffffffff, 16)
			tool := agent.tools[r.IntN(len(agent.tools))]
			args := `{"id":"` + strconv.Itoa(10000+r.IntN(90000)) + `"}`
			isHandoff := c == calls && handoffTo != ""
			finalAnswer := c == calls && handoffTo == ""
			switch {
			case isHandoff:
				tool = semconv.HandoffToolTransferToPrefix + handoffTo
				args = `{}`
			case !finalAnswer && r.IntN(20) == 0:
				args = `{"id":"` + strconv.Itoa(10000+r.IntN(90000)) + `","priority":"high"}`
				w.stats.BadToolCalls++
			}
			var output string
			if finalAnswer {
				output = `[{"role":"assistant","parts":[{"type":"text","content":"Your request is handled: refund RF-881 of $120.50 is on its way."}],"finish_reason":"stop"}]`
			} else {
				output = `[{"role":"assistant","parts":[{"type":"tool_call","id":"` + callID + `","name":"` + tool + `","arguments":` + args + `}],"finish_reason":"tool_call"}]`
			}
			cs, ce := step(time.Duration(300+r.IntN(900)) * time.Millisecond)
			chat := spanSpec{
				name: "chat gpt-4o", spanID: w.newSpanID(), parentID: agentID, start: cs, end: ce,
				attrs: append([]attr{
					sattr(semconv.GenAIOperationName, semconv.OpChat),
					sattr(semconv.GenAIRequestModel, "gpt-4o"),
					iattr(semconv.GenAIUsageInputTokens, int64(200+r.IntN(1800))),
					iattr(semconv.GenAIUsageOutputTokens, int64(10+r.IntN(300))),
					sattr(semconv.GenAIInputMessages, "["+system+","+userMsg+"]"),
					sattr(semconv.GenAIOutputMessages, output),
				}, convo...),
			}
			if c == 0 {
				chat.attrs = append(chat.attrs, sattr(semconv.GenAIToolDefinitions, defs))
			}
			out = append(out, chat)
			if finalAnswer {
				break
			}
			ts, te := step(time.Duration(20+r.IntN(200)) * time.Millisecond)
			exec := spanSpec{
				name: "execute_tool " + tool, spanID: w.newSpanID(), parentID: agentID, start: ts, end: te,
				attrs: append([]attr{
					sattr(semconv.GenAIOperationName, semconv.OpExecuteTool),
					sattr(semconv.GenAIToolName, tool),
					sattr(semconv.GenAIToolCallID, callID),
					sattr(semconv.GenAIToolCallArguments, args),
				}, convo...),
			}
			if isHandoff {
				exec.attrs = append(exec.attrs,
					sattr(semconv.GenAITransferTargetName, handoffTo),
					sattr(semconv.GenAITransferMode, semconv.TransferModePassControl),
					sattr(semconv.GenAIToolCallResult, `{"assistant":"`+handoffTo+`"}`))
				w.stats.Handoffs++
			} else {
				exec.attrs = append(exec.attrs, sattr(semconv.GenAIToolCallResult, `{"status":"ok","order":{"id":"12345","total":120.5,"state":"delivered"}}`))
			}
			out = append(out, exec)
		}
		out = append(out, spanSpec{
			name: "invoke_agent " + agent.name, spanID: agentID, parentID: rootID, start: agentStart, end: t,
			attrs: append([]attr{
				sattr(semconv.GenAIOperationName, semconv.OpInvokeAgent),
				sattr(semconv.GenAIAgentName, agent.name),
			}, convo...),
		})
		w.stats.Interactions++
	}
	root := spanSpec{
		name: "invoke_workflow support", spanID: rootID, start: now, end: t.Add(5 * time.Millisecond),
		attrs: append([]attr{
			sattr(semconv.GenAIOperationName, semconv.OpInvokeWorkflow),
			sattr(semconv.GenAIWorkflowName, "support"),
			sattr(semconv.GenAIInputMessages, "["+userMsg+"]"),
			sattr(semconv.GenAIOutputMessages, `[{"role":"assistant","parts":[{"type":"text","content":"Your request is handled: refund RF-881 of $120.50 is on its way."}],"finish_reason":"stop"}]`),
		}, convo[0]),
	}
	if last {
		root.attrs = append(root.attrs, battr(semconv.AgentEvalSessionEnd, true))
		w.stats.EndedByFlag++
	}
	out = append(out, root)
	// The turn has just ended: its root ends now. It began after the session's previous
	// turn ended, as the user's next message follows the answer: a turn longer than the
	// time since then (its durations are agent-sized, seconds; the stream sends a turn
	// and the think time in well under a second) has its timeline compressed to fit.
	s.lastEnd = placeTurn(out, now, root.end, s.lastEnd, now)
	return out
}

// placeTurn moves the spans of a turn that runs from begin to end (out's timestamps) so
// that it ends at now and begins after notBefore (when not zero), scaling every span's
// offset from begin when the turn is longer than the time between them. It returns the
// turn's new end (now).
func placeTurn(out []spanSpec, begin, end, notBefore, now time.Time) time.Time {
	from := now.Add(-end.Sub(begin))
	scale := 1.0
	if !notBefore.IsZero() && !from.After(notBefore) {
		if least := notBefore.Add(2 * time.Microsecond); now.Before(least) {
			now = least // a clock that barely moved (tests generate a stream at once)
		}
		from = notBefore.Add(min(time.Millisecond, now.Sub(notBefore)/2))
		if d := end.Sub(begin); d > 0 {
			scale = float64(now.Sub(from)) / float64(d)
		}
	}
	at := func(t time.Time) time.Time {
		return from.Add(time.Duration(float64(t.Sub(begin)) * scale))
	}
	for i := range out {
		out[i].start, out[i].end = at(out[i].start), at(out[i].end)
	}
	return now
}

// String describes the stream for the report.
func (c workloadConfig) String() string {
	return fmt.Sprintf("%d turns in flight, %d turns per session, batches interleave turns %d spans at a time, think time %d spans",
		c.ActiveTurns, c.TurnsPerSession, c.ChunkSpans, c.ThinkSpans)
}
