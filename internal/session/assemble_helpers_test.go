// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

import (
	"time"
)

// Test helpers that build SpanRecords by hand. Times are milliseconds after asT0.

var asT0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC).UnixNano()

func asMs(v int64) int64 { return asT0 + v*int64(time.Millisecond) }

type asOpt func(*SpanRecord)

// asSpan builds a record of asTrace "t1" with the given id, parent, class and times (ms).
func asSpan(id, parent string, c SpanClass, start, end int64, opts ...asOpt) SpanRecord {
	r := SpanRecord{TraceID: "t1", SpanID: id, ParentSpanID: parent, Name: c.String() + " " + id,
		Class: c, StartUnixNano: asMs(start), EndUnixNano: asMs(end)}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func asAgent(name string) asOpt {
	return func(r *SpanRecord) {
		r.AgentName, r.AgentRule, r.Name = name, "gen_ai.agent.name", "invoke_agent "+name
	}
}

func asNamed(n string) asOpt { return func(r *SpanRecord) { r.Name = n } }

func asTrace(id string) asOpt { return func(r *SpanRecord) { r.TraceID = id } }

func asTool(name, callID, args string) asOpt {
	return func(r *SpanRecord) {
		r.ToolName, r.ToolCallID, r.ToolArguments, r.Name = name, callID, args, "execute_tool "+name
		if args != "" {
			r.ToolArgsSource = "gen_ai.tool.call.arguments"
		}
	}
}

func asResult(s string) asOpt { return func(r *SpanRecord) { r.ToolResult = s } }

func asFailed(errType string) asOpt {
	return func(r *SpanRecord) { r.Error, r.ErrorType = true, errType }
}

func asFailedWith(errType, message string) asOpt {
	return func(r *SpanRecord) { r.Error, r.ErrorType, r.ErrorMessage = true, errType, message }
}

func asRequests(calls ...RequestedToolCall) asOpt {
	return func(r *SpanRecord) { r.RequestedCalls = append(r.RequestedCalls, calls...) }
}

func asReq(id, name, args string) RequestedToolCall {
	return RequestedToolCall{ID: id, Name: name, Arguments: args}
}

func asUserMsg(s string) asOpt {
	return func(r *SpanRecord) { r.UserMessage = s; r.ContentCaptured = true }
}

func asInput(s string) asOpt { return func(r *SpanRecord) { r.Input = s; r.ContentCaptured = true } }

func asOutput(s string) asOpt { return func(r *SpanRecord) { r.Output = s; r.ContentCaptured = true } }

func asUsage(in, out int64) asOpt {
	return func(r *SpanRecord) { r.Usage = Usage{InputTokens: in, OutputTokens: out} }
}

func asHandoff(from, to string) asOpt {
	return func(r *SpanRecord) { r.HandoffFrom, r.HandoffTo = from, to }
}

func asSession(id string) asOpt {
	return func(r *SpanRecord) { r.SessionID, r.SessionKey = id, "gen_ai.conversation.id" }
}

func asToolDefs(names ...string) asOpt {
	return func(r *SpanRecord) {
		for _, n := range names {
			r.ToolDefs = append(r.ToolDefs, ToolDefinition{Name: n, Parameters: []byte(`{"type":"object"}`)})
		}
	}
}

func asWith(f func(r *SpanRecord)) asOpt { return f }

// asSteps returns the steps of kind k over all interactions, with the interaction's agent.
func asSteps(t Turn, k StepKind) (steps []AgentStep, agents []string) {
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

func asToolCalls(t Turn) []ToolCall {
	steps, _ := asSteps(t, StepToolCall)
	out := make([]ToolCall, len(steps))
	for i, s := range steps {
		out[i] = *s.ToolCall
	}
	return out
}

func asHandoffs(t Turn) []Handoff {
	steps, _ := asSteps(t, StepHandoff)
	out := make([]Handoff, len(steps))
	for i, s := range steps {
		out[i] = *s.Handoff
	}
	return out
}
