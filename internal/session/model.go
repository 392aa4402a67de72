// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package session holds the AgentSession model (docs/architecture.md §3): the session, its
// turns, agents, interactions, steps, LLM and tool calls, the SpanRecord that the
// conventions adapters (internal/conventions) make of a span, and the vocabulary of typed
// statuses, end reasons, tool sources, anomalies and rules. The packages of the data path
// (conventions, tracker, assembly, evaluation) import it; it imports none of them.
//
// The package knows nothing of the collector: it holds plain Go values. Times are UTC;
// durations are float64 milliseconds (`*_ms`).
package session // import "github.com/agenteval/agenteval-collector/internal/session"

import (
	"encoding/json"
	"slices"
	"time"
)

// AgentSession is one conversation between a user and a multi-agent system: the set of
// turns (traces) that share a session key (docs/architecture.md §3, §4).
type AgentSession struct {
	// ID is the session key value (e.g. the gen_ai.conversation.id), or the hex trace id
	// when no configured key is present on any span of the trace.
	ID string `json:"session_id"`
	// KeySource names the attribute that supplied ID ("gen_ai.conversation.id",
	// "resource:session.id", ...) or KeySourceTraceID for the fallback.
	KeySource string `json:"session_key_source"`
	// Service is the resource service.name of the first span seen.
	Service string `json:"service,omitempty"`
	// Agents are the agents seen in the session, with the tools each may use
	// (configured registry first, then tool definitions seen in the trace).
	Agents []AgentDefinition `json:"agents"`
	// Turns are ordered by start time; Turn.Index is the position in this slice.
	Turns []Turn `json:"turns"`
	// TotalCost is the summed cost when an instrumentation reports one (OpenInference
	// llm.cost.total), in the provider's currency; nil when unknown.
	TotalCost *float64 `json:"total_cost,omitempty"`
	// TotalLatencyMs is the sum of the turns' latencies, in milliseconds.
	TotalLatencyMs float64 `json:"total_latency_ms"`
	// Usage sums the token usage of inference (LLM) spans only (never agent spans, which
	// carry accumulated totals; docs/decisions/conventions.md).
	Usage     Usage     `json:"usage"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	// Partial is true when the session was closed before its natural end (eviction under
	// memory pressure, max_session_duration, max_spans_per_session or shutdown).
	Partial bool `json:"partial"`
	// EndReason is why the session was closed: one of the EndReason* values.
	EndReason EndReason `json:"end_reason,omitempty"`
	// Outcome is an explicit task outcome signalled by the application or the receiver's
	// proctor submit (agent_eval.task.completed); nil when none was seen.
	Outcome *bool `json:"outcome,omitempty"`
}

// Agent returns the definition of the agent with the given id, or nil.
func (s *AgentSession) Agent(id string) *AgentDefinition {
	for i := range s.Agents {
		if s.Agents[i].ID == id {
			return &s.Agents[i]
		}
	}
	return nil
}

// AgentDefinition describes one agent and the tools it is allowed to call.
type AgentDefinition struct {
	// ID is the agent's name as resolved from its agent span (gen_ai.agent.name,
	// agent.name, graph.node.id, span-name suffix); it is the key used everywhere.
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Role        string `json:"role,omitempty"`
	Description string `json:"description,omitempty"`
	// Tools is the set of tools this agent may call. Empty with ToolsSource "" means the
	// set is unknown: tool authorisation is then "not evaluable", never a pass.
	Tools []ToolDefinition `json:"tools_available"`
	// ToolsSource is ToolsSourceConfig (the processor's agents registry),
	// ToolsSourceTrace (tool definitions seen on the agent's LLM spans) or "" (unknown).
	ToolsSource string `json:"tools_source,omitempty"`
	// HandoffTargets are agents this agent may hand off to (openai.agent.handoffs,
	// handoff tools); calls to their handoff tools are authorised.
	HandoffTargets []string `json:"handoff_targets,omitempty"`
}

// Tool returns the definition of the named tool, or nil.
func (a *AgentDefinition) Tool(name string) *ToolDefinition {
	for i := range a.Tools {
		if a.Tools[i].Name == name {
			return &a.Tools[i]
		}
	}
	return nil
}

// ToolDefinition is a tool an agent may call.
type ToolDefinition struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is a JSON Schema (draft-07) object, normalised: Gemini upper-case types
	// lower-cased, ReAsk flat {param: type} maps converted (every key required, no
	// additional properties). Nil when the schema is unknown.
	Parameters json.RawMessage `json:"parameters_schema,omitempty"`
}

// Turn is one user request and everything the agents did for it: usually one trace
// (docs/architecture.md §4).
type Turn struct {
	Index   int    `json:"turn_index"`
	TraceID string `json:"trace_id"`
	// RootSpanID is the span the turn's evaluation is parented to: the turn marker or the
	// highest GenAI span of the trace (hex).
	RootSpanID string `json:"root_span_id"`
	// RootRule records which recognition rule chose the root (docs/decisions/sessions.md §1.5 Turn).
	RootRule      string    `json:"root_rule"`
	UserMessage   string    `json:"user_message"`
	FinalResponse string    `json:"final_response"`
	StartedAt     time.Time `json:"started_at"`
	EndedAt       time.Time `json:"ended_at"`
	// LatencyMs is the root span's duration (or the trace's extent), in milliseconds.
	LatencyMs float64 `json:"latency_ms"`
	// Status is StatusOK or StatusError (the root span's status).
	Status       string             `json:"status"`
	Interactions []AgentInteraction `json:"agent_interactions"`
	Usage        Usage              `json:"usage"`
	// SpanCount is the number of distinct spans of the trace that were observed.
	SpanCount int `json:"span_count"`
	// Anomalies lists what was odd in the input and how it was handled: "cycle",
	// "missing_parent", "duplicate_span", "late_span", "self_parent", "truncated_text",
	// "unreadable_value" (the Anomaly constants).
	Anomalies []string `json:"anomalies,omitempty"`
	// Partial is true when the turn closed by turn_timeout without its root span, or was
	// cut short by a partial session close.
	Partial bool `json:"partial,omitempty"`
	// CutBy is the collector's own reason when it closed the turn early, before its root
	// span arrived (EndReasonMaxSessions, EndReasonMaxSpans, EndReasonMaxDuration,
	// EndReasonShutdown): what the run did after the cut was not seen, so the turn's
	// answer is not judged. Empty for a turn whose root arrived (its answer is there) and
	// for a turn the run itself left unfinished (no root by turn_timeout, an idle session).
	CutBy EndReason `json:"cut_by,omitempty"`
}

// CollectorCut reports whether reason closes a session's open turns for the collector's
// own limits or shutdown rather than because the run stopped sending spans.
func CollectorCut(reason EndReason) bool {
	switch reason {
	case EndReasonMaxSessions, EndReasonMaxSpans, EndReasonMaxDuration, EndReasonShutdown:
		return true
	}
	return false
}

// AgentInteraction is what one agent did in a turn: one agent span and its steps.
type AgentInteraction struct {
	AgentID string `json:"agent_id"`
	// AgentRule records which rule resolved the agent name (e.g. "gen_ai.agent.name").
	AgentRule     string `json:"agent_rule"`
	SpanID        string `json:"span_id"`
	ParentAgentID string `json:"parent_agent_id,omitempty"`
	Input         string `json:"input,omitempty"`
	Output        string `json:"output,omitempty"`
	// FinishReason is the last LLM finish reason of this interaction ("stop", "length",
	// "tool_calls", "content_filter", ...).
	FinishReason string    `json:"finish_reason,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	// LatencyMs is the agent span's duration, in milliseconds.
	LatencyMs float64 `json:"latency_ms"`
	// Status is StatusOK or StatusError.
	Status    string      `json:"status"`
	ErrorType string      `json:"error_type,omitempty"`
	Steps     []AgentStep `json:"agent_steps"`
	Usage     Usage       `json:"usage"`
}

// StepKind is the kind of an AgentStep.
type StepKind string

// Step kinds (docs/architecture.md §3).
const (
	StepLLMCall   StepKind = "llm_call"
	StepToolCall  StepKind = "tool_call"
	StepHandoff   StepKind = "handoff"
	StepReasoning StepKind = "reasoning"
	StepMessage   StepKind = "message"
)

// AgentStep is one thing an agent did, in start-time order. Exactly one of the
// pointer fields matching Kind is set (Reasoning and Message use Text).
type AgentStep struct {
	Kind      StepKind  `json:"kind"`
	SpanID    string    `json:"span_id,omitempty"`
	StartedAt time.Time `json:"started_at"`
	LLMCall   *LLMCall  `json:"llm_call,omitempty"`
	ToolCall  *ToolCall `json:"tool_call,omitempty"`
	Handoff   *Handoff  `json:"handoff,omitempty"`
	// Text is the reasoning/thought content (StepReasoning) or message (StepMessage).
	Text string `json:"text,omitempty"`
}

// LLMCall is one inference span (chat / generate_content / text_completion).
type LLMCall struct {
	Model         string   `json:"model,omitempty"`
	FinishReasons []string `json:"finish_reasons,omitempty"`
	LatencyMs     float64  `json:"latency_ms"`
	Usage         Usage    `json:"usage"`
	// ToolsOffered are the names of the tool definitions sent to the model.
	ToolsOffered []string `json:"tools_offered,omitempty"`
	Output       string   `json:"output,omitempty"`
	Status       string   `json:"status"`
}

// ToolCall is a tool call the model requested (from the LLM output) joined with its
// execution span when there is one (docs/architecture.md §4 "Tool calls").
type ToolCall struct {
	ToolName string `json:"tool_name"`
	CallID   string `json:"call_id,omitempty"`
	// Parameters is the arguments as a JSON value when they parsed as JSON; when they did
	// not, a JSON string holding the raw text (so a non-object value is MALFORMED_ARGUMENTS).
	// Nil when no arguments were captured (content capture off).
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// ArgumentsSource names the attribute or event the arguments came from.
	ArgumentsSource string `json:"arguments_source,omitempty"`
	// ArgumentsTruncated is true when the arguments exceeded max_text_bytes.
	ArgumentsTruncated bool   `json:"arguments_truncated,omitempty"`
	Result             string `json:"result,omitempty"`
	Error              string `json:"error,omitempty"`
	// Requested is true when the call was seen in an LLM output (the model asked for it).
	Requested bool `json:"requested"`
	// Executed is true when an execution span of the call was seen.
	Executed bool `json:"executed"`
	// Status is StatusOK, StatusError (execution failed) or StatusNotExecuted.
	Status string `json:"status"`
	// LatencyMs is the execution span's duration in milliseconds; nil when not executed.
	LatencyMs *float64 `json:"latency_ms,omitempty"`
	// SpanID is the execution span, else the LLM span that requested the call.
	SpanID string `json:"span_id"`
	// RequestSpanID is the LLM span whose output requested the call, when known.
	RequestSpanID string `json:"request_span_id,omitempty"`
	// Handoff is set when the call is a handoff tool (transfer_to_*, handoff_to_agent...).
	IsHandoff bool `json:"is_handoff,omitempty"`
}

// Handoff transfers work from one agent to another (docs/decisions/sessions.md §1.5 Handoff).
type Handoff struct {
	FromAgent string `json:"from_agent"`
	ToAgent   string `json:"to_agent"`
	// Mode is "pass_control" or "return_to_caller" (gen_ai.transfer.mode semantics).
	Mode string `json:"mode"`
	// Payload is the context passed to the receiving agent (handoff tool arguments,
	// the receiving agent's input), capped by max_text_bytes; "" when not captured.
	Payload string `json:"payload,omitempty"`
	// PayloadCaptured is false when no content was captured for the handoff.
	PayloadCaptured bool `json:"payload_captured"`
	// SourceRule names the signal that produced the handoff: "gen_ai.transfer",
	// "gen_ai.handoff", "openinference.handoff_span", "handoff_tool", "agent_as_tool",
	// "sibling_agents".
	SourceRule string `json:"source_rule"`
	// Inferred is true for signals that are not explicit in the trace (tool names,
	// nesting, sibling order).
	Inferred bool `json:"inferred"`
}

// Usage counts tokens. Zero values mean "not reported".
type Usage struct {
	InputTokens     int64 `json:"input_tokens"`
	OutputTokens    int64 `json:"output_tokens"`
	CacheReadTokens int64 `json:"cache_read_input_tokens,omitempty"`
	ReasoningTokens int64 `json:"reasoning_output_tokens,omitempty"`
	// LLMCalls is the number of inference spans counted.
	LLMCalls int `json:"llm_calls"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.LLMCalls += o.LLMCalls
}

// Status values of Turn, AgentInteraction, LLMCall and ToolCall. (The Status fields stay
// strings until assembly returns these constants: docs/decisions/maintenance.md.)
const (
	StatusOK    = "ok"
	StatusError = "error"
	// StatusNotExecuted: a tool call the model requested that never ran.
	StatusNotExecuted = "not_executed"
)

// AgentDefinition.ToolsSource values; "" means unknown (tool authorisation is then not
// evaluable).
const (
	// ToolsSourceConfig: the processor's agents registry.
	ToolsSourceConfig = "config"
	// ToolsSourceTrace: tool definitions seen on the agent's LLM spans.
	ToolsSourceTrace = "trace"
)

// AddTools merges tool definitions into d by name: the first definition of a name is
// kept, completed by later ones (schema, description) where it lacks them.
func (d *AgentDefinition) AddTools(defs []ToolDefinition) {
	for _, t := range defs {
		if t.Name == "" {
			continue
		}
		if have := d.Tool(t.Name); have != nil {
			if have.Parameters == nil && t.Parameters != nil {
				have.Parameters = slices.Clone(t.Parameters)
			}
			if have.Description == "" {
				have.Description = t.Description
			}
			continue
		}
		t.Parameters = slices.Clone(t.Parameters)
		d.Tools = append(d.Tools, t)
	}
}

// EndReason is why a session was closed (AgentSession.EndReason).
type EndReason string

// AgentSession.EndReason values set by the Tracker.
const (
	// EndReasonSessionTimeout: session_timeout of silence once every turn was closed.
	EndReasonSessionTimeout EndReason = "session_timeout"
	// EndReasonEndSignal: a record carried the end signal and the open turns closed.
	EndReasonEndSignal EndReason = "end_signal"
	// EndReasonSingleTrace: a session keyed by its trace id (no session key on any span
	// of the trace) ends with its trace (its root arrived): nothing else can join it.
	EndReasonSingleTrace EndReason = "single_trace"
	// EndReasonMaxDuration: max_session_duration elapsed since the first record (partial).
	EndReasonMaxDuration EndReason = "max_session_duration"
	// EndReasonMaxSessions: evicted as the least recently active of more than
	// max_sessions open sessions (partial, but for a session keyed by a trace whose
	// root has not arrived and that has no open turn: none is cut).
	EndReasonMaxSessions EndReason = "max_sessions"
	// EndReasonMaxSpans: the session exceeded max_spans_per_session (partial).
	EndReasonMaxSpans EndReason = "max_spans_per_session"
	// EndReasonShutdown is the reason the processor passes to CloseAll (partial).
	EndReasonShutdown EndReason = "shutdown"
	// EndReasonRestart: the collector holding the session open died (kill -9, a crash)
	// and no span of it arrived within session_timeout after a restart; the session is
	// analysed from its stored turn records by the recovery sweep (partial; not set by
	// the Tracker, see Recovery).
	EndReasonRestart EndReason = "restart"
)

// KeySourceTraceID is the AgentSession.KeySource of a session keyed by its trace id (no
// session key on any span of the trace): it has one turn and never continues.
const KeySourceTraceID = "trace_id"
