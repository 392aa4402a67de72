// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly // import "github.com/agenteval/agenteval-collector/internal/assembly"

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// interCall is a tool call of an interaction: a requested call (from an LLM span's output)
// and/or its execution span.
type interCall struct {
	req     *session.RequestedToolCall
	reqNode *treeNode
	exec    *treeNode
	tc      session.ToolCall
	// at is the step time: the execution span's start, else the requesting LLM span's end.
	at int64
	// args is the raw arguments text behind tc.Parameters.
	args string
	// handoff describes a handoff tool (transfer_to_*, handoff_to_agent...); nil otherwise.
	handoff *handoffTool
}

// joinToolCalls joins the calls requested by the interaction's LLM spans with its tool
// execution spans (docs/architecture.md §4 "Tool calls"):
//  1. by call id (a request and an execution span with the same id);
//  2. by tool name and order: an execution span takes the latest still unmatched request
//     of the same tool whose LLM span started no later than it (the earliest one when
//     none did), unless both carry different call ids;
//  3. a request left alone was not executed (Status "not_executed"); an execution span
//     left alone was not seen requested (Requested=false).
//
// The requests are those of the interaction's LLM spans; an interaction without LLM span
// uses those recorded on its own agent (or synthetic root) span.
func (a *assembler) joinToolCalls(in *interactionBuilder) {
	type reqRef struct {
		node *treeNode
		call *session.RequestedToolCall
		exec int
	}
	var reqs []reqRef
	sources := in.llms
	if len(sources) == 0 {
		// No LLM span (Claude Agent SDK through OpenInference): the agent span's output
		// messages are the model's.
		sources = []*treeNode{in.node}
	}
	for _, l := range sources {
		for i := range l.rec.RequestedCalls {
			reqs = append(reqs, reqRef{node: l, call: &l.rec.RequestedCalls[i], exec: -1})
		}
	}
	execReq := make([]int, len(in.tools))
	for j := range execReq {
		execReq[j] = -1
	}
	for i := range reqs {
		id := reqs[i].call.ID
		if id == "" {
			continue
		}
		for j, e := range in.tools {
			if execReq[j] < 0 && e.rec.ToolCallID == id {
				reqs[i].exec, execReq[j] = j, i
				break
			}
		}
	}
	for j, e := range in.tools {
		if execReq[j] >= 0 {
			continue
		}
		name := execToolName(e.rec)
		before, first := -1, -1
		for i := range reqs {
			r := &reqs[i]
			if r.exec >= 0 || r.call.Name != name || (r.call.ID != "" && e.rec.ToolCallID != "") {
				continue
			}
			if first < 0 {
				first = i
			}
			if r.node.start() <= e.start() && (before < 0 || r.node.start() > reqs[before].node.start()) {
				before = i
			}
		}
		if before < 0 {
			before = first
		}
		if before >= 0 {
			reqs[before].exec, execReq[j] = j, before
		}
	}
	n := len(reqs)
	for j := range in.tools {
		if execReq[j] < 0 {
			n++
		}
	}
	calls := a.takeCalls(n)
	in.calls = slices.Grow(in.calls, n)
	for _, r := range reqs {
		var exec *treeNode
		if r.exec >= 0 {
			exec = in.tools[r.exec]
		}
		in.calls = append(in.calls, a.newCall(&calls[0], r.call, r.node, exec))
		calls = calls[1:]
	}
	for j, e := range in.tools {
		if execReq[j] < 0 {
			in.calls = append(in.calls, a.newCall(&calls[0], nil, nil, e))
			calls = calls[1:]
		}
	}
}

func execToolName(r *session.SpanRecord) string {
	if r.ToolName != "" {
		return r.ToolName
	}
	return r.Name
}

// newCall sets c (zero) to the call of req and exec and returns it.
func (a *assembler) newCall(c *interCall, req *session.RequestedToolCall, reqNode, exec *treeNode) *interCall {
	*c = interCall{req: req, reqNode: reqNode, exec: exec}
	tc := &c.tc
	tc.Requested = req != nil
	tc.Executed = exec != nil
	if req != nil {
		tc.ToolName, tc.CallID = req.Name, req.ID
		tc.RequestSpanID = reqNode.rec.SpanID
		tc.SpanID = reqNode.rec.SpanID
		c.at = reqNode.end()
		if req.Arguments != "" {
			c.args = req.Arguments
			tc.ArgumentsSource = argsSourceLLMOutput
			tc.ArgumentsTruncated = req.ArgumentsTruncated
		}
		tc.Status = session.StatusNotExecuted
	}
	if exec != nil {
		r := exec.rec
		if tc.ToolName == "" {
			tc.ToolName = execToolName(r)
		}
		if tc.CallID == "" {
			tc.CallID = r.ToolCallID
		}
		if c.args == "" && r.ToolArguments != "" {
			c.args = r.ToolArguments
			tc.ArgumentsSource = r.ToolArgsSource
			tc.ArgumentsTruncated = r.ToolArgsTruncated
		}
		tc.SpanID = r.SpanID
		tc.Result = r.ToolResult
		tc.Status = exec.status()
		if r.Error {
			// The error as the application reported it (status description), else its
			// class (error.type), else the result the tool returned.
			tc.Error = cmp.Or(r.ErrorMessage, r.ErrorType, r.ToolResult, session.StatusError)
		}
		if r.ClientSide() {
			// Handed back to the caller (Mastra client_tool_call): the span records the
			// request, nothing ran.
			tc.Requested, tc.Executed, tc.Status = true, false, session.StatusNotExecuted
		} else {
			ms := exec.durationMs()
			tc.LatencyMs = &ms
		}
		c.at = exec.start()
		exec.call = c
	}
	tc.Parameters, _ = conventions.ParseArguments(c.args)
	if h := handoffToolInfo(tc.ToolName, tc.Parameters); h != nil {
		tc.IsHandoff = true
		c.handoff = h
	}
	return c
}

// argsObject decodes arguments that are a JSON object; nil otherwise.
func argsObject(p json.RawMessage) map[string]any {
	if len(p) == 0 || p[0] != '{' {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(p, &m) != nil {
		return nil
	}
	return m
}

// handoffTool is a recognised handoff tool (docs/decisions/sessions.md §1.5 (d)).
type handoffTool struct {
	// target is the receiving agent as named by the tool ("" when the arguments that
	// name it were not captured).
	target string
	mode   string
}

// handoffToolInfo recognises a handoff tool call (docs/decisions/sessions.md §1.5 (d)) with
// HandoffToolTarget; it returns nil for other tools.
func handoffToolInfo(name string, params json.RawMessage) *handoffTool {
	target, mode, ok := conventions.HandoffToolTarget(name, string(params))
	if !ok {
		return nil
	}
	return &handoffTool{target: target, mode: mode}
}

// payloadKeys are the handoff-tool argument keys whose values are the context handed to
// the receiving agent, in the order they are joined.
var payloadKeys = []string{
	semconv.HandoffArgMessage, "task", "question", "input", "query", "request", semconv.HandoffArgPrompt, semconv.HandoffArgContext,
}

// argsPayload extracts the handoff payload from tool arguments: the values of the
// payload keys, joined by new lines (non-string values as JSON text).
func argsPayload(params json.RawMessage) string {
	m := argsObject(params)
	if m == nil {
		return ""
	}
	var parts []string
	for _, k := range payloadKeys {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		if s, ok := v.(string); ok {
			if s = strings.TrimSpace(s); s != "" {
				parts = append(parts, s)
			}
			continue
		}
		if b, err := json.Marshal(v); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}
