// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// VoltAgent (@voltagent/core) traces in its own vocabulary, without any gen_ai.*
// attribute (docs/conventions.md):
//   - the agent run: a span named after the agent, entity.type=agent, entity.name = the
//     agent, input = the user's text, output = the answer;
//   - a sub-agent run: "subagent:<agent>" with subagent.name (its entity.name is the
//     *parent* agent, as on every span under it);
//   - one model run: "llm:generateText" / "llm:streamText", span.type=llm, llm.messages
//     (the request messages), llm.tools (the offered tool names, comma-separated),
//     llm.usage.*; the tool loop's steps are not separate spans;
//   - a tool run: "tool.execution:<tool>", span.type=tool, tool.name, tool.call.id,
//     input = the arguments, output = the result; tool.parameters is the zod schema's
//     internal form, not JSON Schema, and is not read;
//   - memory.* spans (ClassOther).
//
// ClassRule values of VoltAgent spans (RuleVoltLLM: an LLM call; RuleVoltOther: any
// other VoltAgent span).
const (
	ruleVoltAgent    = "voltagent.agent"
	ruleVoltSubagent = "voltagent.subagent"
	RuleVoltLLM      = "voltagent.llm"
	ruleVoltTool     = "voltagent.tool"
	RuleVoltOther    = "voltagent"
)

// classifyVolt classifies a span carrying VoltAgent's entity.type or span.type; false
// leaves it to the other name patterns.
func (e *Extractor) classifyVolt(s *attrScan, r *session.SpanRecord, info *classInfo) bool {
	name := r.Name
	info.volt = true
	switch {
	case strings.HasPrefix(name, semconv.VoltSpanPrefixSubagent):
		agent := strings.TrimSpace(cmp.Or(s.str(attrVoltSubagentName), name[len(semconv.VoltSpanPrefixSubagent):]))
		if agent == "" {
			break
		}
		r.Class, r.ClassRule = session.ClassAgent, ruleVoltSubagent
		r.AgentName, r.AgentRule = e.text(r, agent), semconv.VoltSubagentName
	case strings.HasPrefix(name, semconv.VoltSpanPrefixLLM):
		r.Class, r.ClassRule = session.ClassLLM, RuleVoltLLM
	case strings.HasPrefix(name, semconv.VoltSpanPrefixTool):
		info.nameHint = strings.TrimSpace(name[len(semconv.VoltSpanPrefixTool):])
		r.Class, r.ClassRule = session.ClassTool, ruleVoltTool
	case s.str(attrVoltEntityType) == "agent" && name != "" && name == s.str(attrVoltEntityName) && !s.has[attrVoltSubagentName]:
		r.Class, r.ClassRule = session.ClassAgent, ruleVoltAgent
		r.AgentName, r.AgentRule = e.text(r, name), semconv.VoltEntityName
	default:
		if !s.has[attrVoltEntityType] {
			info.volt = false
			return false
		}
		r.Class, r.ClassRule = session.ClassOther, RuleVoltOther
	}
	return true
}

// voltToolFields reads a VoltAgent tool span: the call id, the arguments (input) and
// the result (output), which the generic keys do not cover.
func (e *Extractor) voltToolFields(s *attrScan, r *session.SpanRecord) {
	if r.ToolCallID == "" {
		r.ToolCallID = e.text(r, s.str(attrVoltToolCallID))
	}
	if s.has[attrVoltInput] {
		if text, cut := e.argsText(s.v[attrVoltInput]); strings.TrimSpace(text) != "" {
			r.ToolArguments, r.ToolArgsSource, r.ToolArgsTruncated = text, semconv.VoltInput, cut
			r.Truncated = r.Truncated || cut
		}
	}
	if s.has[attrVoltOutput] {
		if t, cut := e.argsText(s.v[attrVoltOutput]); strings.TrimSpace(t) != "" {
			r.ToolResult = t
			r.Truncated = r.Truncated || cut
		}
	}
	if !r.Error && isErrorResult(r.ToolResult) {
		r.Error = true
	}
	r.ContentCaptured = r.ToolArgsSource != "" || r.ToolResult != ""
	if target, mode, ok := HandoffToolTarget(r.ToolName, r.ToolArguments); ok && r.HandoffTo == "" {
		r.HandoffTo, r.HandoffMode, r.HandoffRule = e.text(r, target), mode, RuleHandoffTool
	}
}

// voltContent reads the agent and model spans' content: the agent's input and output,
// the model request's messages and the offered tool names (name-only definitions:
// authorisation decidable, schemas unknown).
//
// An agent's input is the user's text, or a message list: always for a sub-agent (the
// delegated task as a UI message), and for any agent the application gives messages
// (a chat UI sends the new message as [{id, role, parts}] when memory holds the
// history). A list's input is its last user message, as for llm.messages; the history
// memory loads is in llm.messages, never in input.
func (e *Extractor) voltContent(s *attrScan, r *session.SpanRecord) {
	var in msgOut
	switch {
	case s.has[attrVoltLLMMessages] && e.parse(r, semconv.VoltLLMMessages, s.v[attrVoltLLMMessages], &in, readerInput) && in.hasUser:
		r.UserMessage = e.text(r, in.user)
	case r.Class == session.ClassAgent && s.has[attrVoltInput]:
		if t, ok := valueText(s.v[attrVoltInput]); ok {
			if c := firstByte(unsafeBytes(t)); c != '[' && c != '{' {
				t = e.text(r, t)
				r.UserMessage, r.Input = t, t
			} else if user, ok := e.listUser(t); ok && user != "" {
				r.UserMessage = e.text(r, user)
			} else {
				r.Input = e.text(r, t)
			}
		}
	}
	if r.Class == session.ClassAgent && s.has[attrVoltOutput] {
		if t, ok := valueText(s.v[attrVoltOutput]); ok {
			r.Output = e.text(r, t)
		}
	}
	if r.Class == session.ClassLLM && len(r.ToolDefs) == 0 {
		for _, n := range strings.Split(s.str(attrVoltLLMTools), ",") {
			if n = strings.TrimSpace(n); n != "" && len(r.ToolDefs) < MaxList {
				r.ToolDefs = append(r.ToolDefs, session.ToolDefinition{Name: e.text(r, n)})
			}
		}
	}
}

// voltSaved is the input of a VoltAgent memory.write span: the message saved, in the
// AI SDK UI-message form; an assistant message lists the tool calls of the run as parts
// {"type": "tool-<name>", "toolCallId", "input", "output"}.
type voltSaved struct {
	Message struct {
		Role  string `json:"role"`
		Parts []struct {
			Type       string          `json:"type"`
			ToolCallID string          `json:"toolCallId"`
			Input      json.RawMessage `json:"input"`
		} `json:"parts"`
	} `json:"message"`
}

// voltSavedCalls reads the tool calls of the assistant message a memory.write span saves.
// VoltAgent records no requested call on its llm:* span, and a call the AI SDK rejects
// before running it (bad arguments, a tool the agent does not have) has no tool span: the
// saved message is the only record of it. The calls are the span's RequestedCalls; the
// assembler gives them to the agent's model span (assemble.go inheritSavedCalls).
func (e *Extractor) voltSavedCalls(s *attrScan, r *session.SpanRecord) {
	data, ok := jsonBytes(s.v[attrVoltInput], e.msgLimit)
	if !ok || !s.has[attrVoltInput] {
		return
	}
	var saved voltSaved
	if json.Unmarshal(data, &saved) != nil || saved.Message.Role != "assistant" {
		return
	}
	var calls []session.RequestedToolCall
	for _, p := range saved.Message.Parts {
		name, ok := strings.CutPrefix(p.Type, semconv.VoltUIToolPartPrefix)
		if !ok || name == "" || len(calls) >= MaxList {
			continue
		}
		calls = append(calls, session.RequestedToolCall{ID: p.ToolCallID, Name: name, Arguments: string(p.Input)})
	}
	if len(calls) > 0 {
		r.RequestedCalls = e.requested(r, calls)
		r.ContentCaptured = true
	}
}
