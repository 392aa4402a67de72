// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package sessiontest builds session.SpanRecords by hand for the tests of the packages
// that consume them (assembly, tracker): a span builder with options, a realistic
// multi-agent turn (TurnRecords) and random records from fuzz bytes (FuzzRecords).
package sessiontest // import "github.com/agenteval/agenteval-collector/internal/session/sessiontest"

import (
	"fmt"
	"time"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// Test helpers that build SpanRecords by hand. Times are milliseconds after T0.

// T0 is the time (Unix ns) the built records count from.
var T0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC).UnixNano()

// Ms returns T0 plus v milliseconds, in Unix nanoseconds.
func Ms(v int64) int64 { return T0 + v*int64(time.Millisecond) }

// Opt sets fields of a record built by Span.
type Opt func(*session.SpanRecord)

// Span builds a record of Trace "t1" with the given id, parent, class and times (ms).
func Span(id, parent string, c session.SpanClass, start, end int64, opts ...Opt) session.SpanRecord {
	r := session.SpanRecord{TraceID: "t1", SpanID: id, ParentSpanID: parent, Name: c.String() + " " + id,
		Class: c, StartUnixNano: Ms(start), EndUnixNano: Ms(end)}
	for _, o := range opts {
		o(&r)
	}
	return r
}

// Agent makes the record an invoke_agent span of agent name (rule gen_ai.agent.name).
func Agent(name string) Opt {
	return func(r *session.SpanRecord) {
		r.AgentName, r.AgentRule, r.Name = name, "gen_ai.agent.name", "invoke_agent "+name
	}
}

// Named sets the span name.
func Named(n string) Opt { return func(r *session.SpanRecord) { r.Name = n } }

// Trace sets the trace id.
func Trace(id string) Opt { return func(r *session.SpanRecord) { r.TraceID = id } }

// Tool makes the record an execute_tool span of tool name with call id and JSON arguments.
func Tool(name, callID, args string) Opt {
	return func(r *session.SpanRecord) {
		r.ToolName, r.ToolCallID, r.ToolArguments, r.Name = name, callID, args, "execute_tool "+name
		if args != "" {
			r.ToolArgsSource = "gen_ai.tool.call.arguments"
		}
	}
}

// Result sets the tool result text.
func Result(s string) Opt { return func(r *session.SpanRecord) { r.ToolResult = s } }

// Failed marks the span as failed with error type errType.
func Failed(errType string) Opt {
	return func(r *session.SpanRecord) { r.Error, r.ErrorType = true, errType }
}

// FailedWith marks the span as failed with error type errType and message.
func FailedWith(errType, message string) Opt {
	return func(r *session.SpanRecord) { r.Error, r.ErrorType, r.ErrorMessage = true, errType, message }
}

// Requests adds tool calls that the (LLM) span requested.
func Requests(calls ...session.RequestedToolCall) Opt {
	return func(r *session.SpanRecord) { r.RequestedCalls = append(r.RequestedCalls, calls...) }
}

// Req builds one requested tool call (id, tool name, JSON arguments).
func Req(id, name, args string) session.RequestedToolCall {
	return session.RequestedToolCall{ID: id, Name: name, Arguments: args}
}

// UserMsg sets the user message the span carries.
func UserMsg(s string) Opt {
	return func(r *session.SpanRecord) { r.UserMessage = s; r.ContentCaptured = true }
}

// Input sets the span's input text.
func Input(s string) Opt {
	return func(r *session.SpanRecord) { r.Input = s; r.ContentCaptured = true }
}

// Output sets the span's output text.
func Output(s string) Opt {
	return func(r *session.SpanRecord) { r.Output = s; r.ContentCaptured = true }
}

// UsageOf sets the span's token usage (input, output tokens).
func UsageOf(in, out int64) Opt {
	return func(r *session.SpanRecord) { r.Usage = session.Usage{InputTokens: in, OutputTokens: out} }
}

// HandoffFromTo makes the span a handoff from agent from to agent to.
func HandoffFromTo(from, to string) Opt {
	return func(r *session.SpanRecord) { r.HandoffFrom, r.HandoffTo = from, to }
}

// Session sets the record's session id.
func Session(id string) Opt {
	return func(r *session.SpanRecord) { r.SessionID, r.SessionKey = id, "gen_ai.conversation.id" }
}

// ToolDefs sets the tool definitions the span declares, by name.
func ToolDefs(names ...string) Opt {
	return func(r *session.SpanRecord) {
		for _, n := range names {
			r.ToolDefs = append(r.ToolDefs, session.ToolDefinition{Name: n, Parameters: []byte(`{"type":"object"}`)})
		}
	}
}

// With applies f to the record: for fields no other Opt sets.
func With(f func(r *session.SpanRecord)) Opt { return f }

// Steps returns the steps of kind k over all interactions, with the interaction's agent.
func Steps(t session.Turn, k session.StepKind) (steps []session.AgentStep, agents []string) {
	for _, in := range t.Interactions {
		for _, s := range in.Steps {
			if s.Kind == k {
				steps = append(steps, s)
				agents = append(agents, in.AgentID)
			}
		}
	}
	return steps, agents
}

// ToolCalls returns the tool-call steps of every interaction of t, in order.
func ToolCalls(t session.Turn) []session.ToolCall {
	steps, _ := Steps(t, session.StepToolCall)
	out := make([]session.ToolCall, len(steps))
	for i, s := range steps {
		out[i] = *s.ToolCall
	}
	return out
}

// Handoffs returns the handoff steps of every interaction of t, in order.
func Handoffs(t session.Turn) []session.Handoff {
	steps, _ := Steps(t, session.StepHandoff)
	out := make([]session.Handoff, len(steps))
	for i, s := range steps {
		out[i] = *s.Handoff
	}
	return out
}

// FuzzReader hands out the fuzz bytes one at a time (0 once exhausted).
type FuzzReader struct {
	Data []byte // the fuzz input
	Pos  int    // bytes consumed
}

// Next returns the next fuzz byte as an int (0 once the bytes are used up).
func (r *FuzzReader) Next() int {
	if r.Pos >= len(r.Data) {
		return 0
	}
	r.Pos++
	return int(r.Data[r.Pos-1])
}

// Pick returns one of options, chosen by the next fuzz byte.
func (r *FuzzReader) Pick(options ...string) string { return options[r.Next()%len(options)] }

// FuzzRecords builds up to 48 records with random parents (absent, self, missing, any
// span including later ones, so cycles), random classes, duplicate span ids, inverted
// times, handoff tools, requested calls, handoff spans, graph parents, LangGraph nodes and
// agents named only by their span name.
func FuzzRecords(data []byte) []session.SpanRecord {
	r := &FuzzReader{Data: data}
	n := r.Next()%48 + 1
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%02d", i)
		if i > 0 && r.Next()%12 == 0 {
			ids[i] = ids[r.Next()%i] // duplicate span id
		}
	}
	agents := []string{"A", "B", "C", "", "Math Agent"}
	tools := []string{"lookup", "transfer_to_B", "transfer_to_math_agent", "handoff_to_agent", "transfer_to_agent",
		"Delegate work to coworker", "ask_A", "transfer_back_to_A", ""}
	args := []string{"", "{}", `{"agent_name":"C","message":"m"}`, "not json", `{"coworker":"A","task":"t"}`, `[1,2]`, `{"input":"x"}`}
	callIDs := []string{"", "c1", "c2", "c3"}
	recs := make([]session.SpanRecord, n)
	for i := range recs {
		rec := session.SpanRecord{TraceID: "t", SpanID: ids[i], Class: session.SpanClass(r.Next() % 7)}
		switch p := r.Next() % 8; p {
		case 0:
		case 1:
			rec.ParentSpanID = rec.SpanID
		case 2:
			rec.ParentSpanID = "missing"
		default:
			rec.ParentSpanID = ids[r.Next()%n]
		}
		rec.StartUnixNano = int64(r.Next()) * 1e6
		rec.EndUnixNano = rec.StartUnixNano + int64(r.Next()%64)*1e6
		if r.Next()%10 == 0 {
			rec.EndUnixNano = rec.StartUnixNano - 5e6
		}
		rec.Name = r.Pick("invoke_agent x", "chat", "execute_tool", "handoff to B", "X.agent", "root")
		rec.Error = r.Next()%5 == 0
		if rec.Class == session.ClassAgent {
			rec.AgentName = r.Pick(agents...)
			rec.GraphNodeID = rec.AgentName
			rec.GraphParentID = r.Pick("", "", "A", "B", "C")
			rec.HandoffTargets = []string{r.Pick(agents...)}
			rec.AllowedTools = []string{r.Pick(tools...)}
		}
		rec.Input = r.Pick("", "", "question")
		rec.UserMessage = r.Pick("", "hello")
		rec.Output = r.Pick("", "answer")
		rec.Reasoning = r.Pick("", "", "thinking")
		rec.ContentCaptured = r.Next()%2 == 0
		if r.Next()%6 == 0 {
			v := r.Next()%2 == 0
			rec.Outcome = &v
		}
		switch rec.Class {
		case session.ClassTool:
			rec.ToolName = r.Pick(tools...)
			rec.ToolCallID = r.Pick(callIDs...)
			rec.ToolArguments = r.Pick(args...)
			if r.Next()%4 == 0 {
				rec.HandoffTo = r.Pick(agents...)
				rec.HandoffMode = r.Pick("", "return_to_caller")
			}
		case session.ClassLLM:
			for range r.Next() % 4 {
				rec.RequestedCalls = append(rec.RequestedCalls, session.RequestedToolCall{
					ID: r.Pick(callIDs...), Name: r.Pick(tools...), Arguments: r.Pick(args...),
				})
			}
			rec.Usage = session.Usage{InputTokens: int64(r.Next()), OutputTokens: int64(r.Next())}
			rec.ToolDefs = []session.ToolDefinition{{Name: r.Pick(tools...)}}
			rec.FinishReasons = []string{r.Pick("stop", "tool_calls")}
		case session.ClassHandoff:
			rec.HandoffFrom = r.Pick(agents...)
			rec.HandoffTo = r.Pick(agents...)
		case session.ClassOther:
			// LangGraph node spans, promoted when the trace names them as agents.
			rec.LangGraphNode = r.Pick("", "", "B", "math_agent", "tools")
		case session.ClassAgent:
			// Agents named only by their span name may be workflow wrappers.
			rec.AgentRule = r.Pick("gen_ai.agent.name", session.AgentRuleSpanName)
		}
		recs[i] = rec
	}
	return recs
}

// TurnRecords builds a realistic multi-agent turn of about n spans: a turn root, a
// coordinator that calls tools and transfers to specialists one after the other, each
// specialist with LLM calls (requesting tools), tool executions and a nested agent-as-tool.
func TurnRecords(n int) []session.SpanRecord {
	recs := []session.SpanRecord{
		Span("root", "http", session.ClassTurn, 0, 100000, UserMsg("please handle order 42"), Session("s1")),
		Span("http", "", session.ClassOther, -1, 100001),
		Span("coord", "root", session.ClassAgent, 1, 99999, Agent("coordinator"), With(func(r *session.SpanRecord) {
			r.AllowedTools = []string{"lookup", "transfer_to_spec0", "transfer_to_spec1"}
		})),
	}
	t := int64(10)
	id := 0
	next := func() string { id++; return fmt.Sprintf("s%03d", id) }
	parent := "coord"
	agentNo := 0
	for len(recs) < n {
		llm := next()
		callID := next()
		recs = append(recs,
			Span(llm, parent, session.ClassLLM, t, t+50, UsageOf(100, 20), ToolDefs("lookup", "transfer_to_spec0"),
				Requests(Req(callID, "lookup", `{"order":"42","verbose":true}`), Req("", "transfer_to_spec"+fmt.Sprint(agentNo), `{}`)),
				With(func(r *session.SpanRecord) { r.Reasoning = "look up the order, then transfer" })),
			Span(next(), parent, session.ClassTool, t+51, t+60, Tool("lookup", callID, ""), Result(`{"status":"shipped"}`)),
		)
		t += 70
		if len(recs) >= n {
			break
		}
		spec := next()
		recs = append(recs,
			Span(spec, "root", session.ClassAgent, t, t+300, Agent(fmt.Sprintf("spec%d", agentNo)), Input("order 42 shipped?")),
			Span(next(), spec, session.ClassLLM, t+1, t+40, UsageOf(50, 10), Output("it shipped")),
		)
		tool := next()
		recs = append(recs,
			Span(tool, spec, session.ClassTool, t+41, t+200, Tool("ask_helper", "", `{"input":"confirm"}`)),
			Span(next(), tool, session.ClassAgent, t+42, t+199, Agent("helper")),
		)
		t += 310
		agentNo++
		parent = spec
	}
	return recs
}
