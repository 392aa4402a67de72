// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session // import "github.com/agenteval/agenteval-collector/internal/session"

import (
	"encoding/json"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// SpanClass is what a span is to the AgentSession model.
type SpanClass uint8

// Span classes, decided by Extractor.Extract (docs/decisions/conventions.md and §5.1).
const (
	// ClassOther is any span the model does not use except as a tree node (HTTP, DB,
	// framework-internal spans such as OpenAI Agents "unknown" task/turn spans).
	ClassOther SpanClass = iota
	// ClassTurn is an explicit turn marker or workflow root: handle_conversation_turn,
	// invoke_workflow, invoke_swarm/invoke_graph, traceloop workflow, ADK "invocation",
	// an agent-operation span without a resolvable agent name ("Agent workflow").
	ClassTurn
	// ClassAgent is an agent span (invoke_agent, OpenInference AGENT, traceloop agent...).
	ClassAgent
	// ClassLLM is an inference span (chat, generate_content, text_completion, LLM...).
	ClassLLM
	// ClassTool is a tool execution span (execute_tool, TOOL, ai.toolCall, tools/call...).
	ClassTool
	// ClassHandoff is an explicit handoff span (agent_handoff / handoff operation,
	// OpenInference "handoff to X" TOOL span).
	ClassHandoff
	// ClassEvaluation is a span this collector emitted (evaluate ...) or a judge call:
	// never evaluated, never part of a turn.
	ClassEvaluation
)

var classNames = [...]string{"other", "turn", "agent", "llm", "tool", "handoff", "evaluation"}

// String returns the lower-case class name.
func (c SpanClass) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// GenAI reports whether the class is one of the model's (turn, agent, LLM, tool,
// handoff): a span the trace's GenAI tree is made of.
func (c SpanClass) GenAI() bool {
	switch c {
	case ClassTurn, ClassAgent, ClassLLM, ClassTool, ClassHandoff:
		return true
	}
	return false
}

// RequestedToolCall is a tool call found in an LLM span's output (gen_ai.output.messages
// tool_call parts, llm.output_messages.*.tool_calls.*, gen_ai.completion.N.tool_calls.*,
// ai.response.toolCalls).
type RequestedToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is the raw arguments text (JSON when well formed), capped by
	// max_text_bytes; "" when absent.
	Arguments          string `json:"arguments,omitempty"`
	ArgumentsTruncated bool   `json:"arguments_truncated,omitempty"`
}

// SpanRecord is the compact, convention-independent extract of one span that the
// processor keeps while a turn is open. Text fields are capped at max_text_bytes and
// valid UTF-8. IDs are hex strings ("" when absent).
type SpanRecord struct {
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id,omitempty"`
	// ParentRemote is true when the span's parent is in another process (the OTLP span
	// flags say the parent context is remote, as a W3C traceparent from the caller
	// gives): the span tops its process's part of the trace, and the parent arrives only
	// if that other process exports here too. False when the flags do not say (older
	// SDKs).
	ParentRemote bool   `json:"parent_remote,omitempty"`
	Name         string `json:"name"`
	// StartUnixNano and EndUnixNano are the span's timestamps (ns since the Unix epoch).
	StartUnixNano int64 `json:"start_unix_nano"`
	EndUnixNano   int64 `json:"end_unix_nano"`
	// Error is true for status ERROR, an error.type attribute or gen_ai.tool.status=error.
	Error     bool   `json:"error,omitempty"`
	ErrorType string `json:"error_type,omitempty"`
	// ErrorMessage is the status description of a span with status ERROR, the error as
	// the application reported it ("payment gateway timeout").
	ErrorMessage string `json:"error_message,omitempty"`

	Class SpanClass `json:"class"`
	// ClassRule names the rule that classified the span, e.g.
	// "gen_ai.operation.name=invoke_agent", "openinference.span.kind=TOOL", "name:ai.toolCall".
	ClassRule string `json:"class_rule,omitempty"`
	Operation string `json:"operation,omitempty"`

	// SessionID is the first configured session key found on the span or its resource;
	// SessionKey names that key ("resource:" prefix for resource attributes).
	SessionID  string `json:"session_id,omitempty"`
	SessionKey string `json:"session_key,omitempty"`
	Service    string `json:"service,omitempty"`
	// EndSignal is true when the configured end attribute is true on the span.
	EndSignal bool `json:"end_signal,omitempty"`
	// Outcome is an explicit task outcome (agent_eval.task.completed), nil if absent.
	Outcome *bool `json:"outcome,omitempty"`

	// AgentName is set on ClassAgent spans only (never trusted on other spans);
	// AgentRule names the attribute it came from.
	AgentName        string `json:"agent_name,omitempty"`
	AgentRule        string `json:"agent_rule,omitempty"`
	AgentDescription string `json:"agent_description,omitempty"`
	// GraphNodeID / GraphParentID are OpenInference graph.node.id / graph.node.parent_id.
	GraphNodeID   string `json:"graph_node_id,omitempty"`
	GraphParentID string `json:"graph_parent_id,omitempty"`
	// LangGraphNode is the LangGraph node this span runs: the `metadata` JSON key
	// langgraph_node when it equals the span name (the node's own span, not a runnable
	// inside it); "" otherwise. Turn assembly uses it to recognise agent nodes that only
	// the trace as a whole identifies (handoff targets; docs/decisions/sessions.md §1.7).
	LangGraphNode string `json:"langgraph_node,omitempty"`

	// Tool execution (ClassTool).
	ToolName          string          `json:"tool_name,omitempty"`
	ToolCallID        string          `json:"tool_call_id,omitempty"`
	ToolArguments     string          `json:"tool_arguments,omitempty"`
	ToolArgsSource    string          `json:"tool_args_source,omitempty"`
	ToolArgsTruncated bool            `json:"tool_args_truncated,omitempty"`
	ToolResult        string          `json:"tool_result,omitempty"`
	ToolSchema        json.RawMessage `json:"tool_schema,omitempty"`
	ToolDescription   string          `json:"tool_description,omitempty"`

	// Content. UserMessage is the first user message of the input (messages, input.value,
	// ai.prompt); Input is the whole input text when it is not a message list; Output is
	// the final assistant text (output messages, output.value, ai.response.text).
	UserMessage string `json:"user_message,omitempty"`
	Input       string `json:"input,omitempty"`
	Output      string `json:"output,omitempty"`
	// Reasoning is reasoning/thought content (reasoning parts, thinking blocks).
	Reasoning string `json:"reasoning,omitempty"`
	// ContentCaptured is true when any message content was present on the span.
	ContentCaptured bool `json:"content_captured,omitempty"`

	// Inference (ClassLLM).
	Model          string              `json:"model,omitempty"`
	FinishReasons  []string            `json:"finish_reasons,omitempty"`
	Usage          Usage               `json:"usage"`
	RequestedCalls []RequestedToolCall `json:"requested_calls,omitempty"`
	// ToolDefs are tool definitions offered on this span (gen_ai.tool.definitions,
	// llm.tools.N.tool.json_schema, ai.prompt.tools, llm.request.functions.N.*).
	ToolDefs []ToolDefinition `json:"tool_defs,omitempty"`
	// AllowedTools are tool names declared on an agent span (Strands gen_ai.agent.tools).
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// HandoffTargets are declared handoff targets (openai.agent.handoffs).
	HandoffTargets []string `json:"handoff_targets,omitempty"`
	Cost           *float64 `json:"cost,omitempty"`

	// Handoff (ClassHandoff, or a ClassTool span carrying gen_ai.transfer.*).
	HandoffFrom string `json:"handoff_from,omitempty"`
	HandoffTo   string `json:"handoff_to,omitempty"`
	HandoffMode string `json:"handoff_mode,omitempty"`
	HandoffRule string `json:"handoff_rule,omitempty"`

	// Truncated is true when any text field was cut at max_text_bytes.
	Truncated bool `json:"truncated,omitempty"`
	// Problems lists attribute values that could not be read (malformed JSON messages,
	// wrong types), as "key: reason". The span is still used.
	Problems []string `json:"problems,omitempty"`

	// Deferred holds what the ingest left undecoded (conventions.Extractor.ExtractDeferred):
	// the zero value on a complete record. conventions.Extractor.CompleteAll decodes it
	// into UserMessage (and Problems), as Extract would have, when the turn is
	// assembled. Not in JSON (the tracker's record codec keeps it while the trace is
	// open).
	Deferred DeferredContent `json:"-"`
}

// DeferredContent is the part of a span's content that is read only when its turn is
// assembled (docs/decisions/performance.md §8.19): the elements of the raw GenAI input
// message list that may be the user message, at most min(max_text_bytes, 4 KiB) long
// (more is decoded at once), and where its decoding's problems go.
type DeferredContent struct {
	// InputMessages is the body of a JSON array: the candidate elements of the span's
	// gen_ai.input.messages as it carried them (not checked: possibly malformed or
	// invalid UTF-8); "" when nothing is deferred.
	InputMessages string
	// ProblemsAt is the index in Problems at which the decoding's problems are inserted
	// (where Extract would have appended them).
	ProblemsAt int
}

// ClientSide reports whether a tool span records a call handed back to the caller
// instead of run (Mastra's client_tool_call operation): requested, not executed here.
func (r *SpanRecord) ClientSide() bool {
	return r.Class == ClassTool && strings.EqualFold(r.Operation, semconv.MastraOpClientToolCall)
}
