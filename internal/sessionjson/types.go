// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package sessionjson // import "github.com/agenteval/agenteval-collector/internal/sessionjson"

import "encoding/json"

// Session is one ReAsk AgentSession (the "session" form; the single-agent "trace" form
// decodes into it too, with turn-level AgentSteps/AgentResponse). Field names are ReAsk's
// (api/routes/agent_eval.py AgentSessionInput), plus SessionID.
type Session struct {
	// SessionID becomes gen_ai.conversation.id on every span. Optional: Convert generates
	// one when it is empty. At most 256 characters.
	SessionID string `json:"session_id,omitempty"`
	// Agents declares the agents and the tools each may call. Nil when absent.
	Agents          []Agent          `json:"agents,omitempty"`
	SessionMetadata *SessionMetadata `json:"session_metadata,omitempty"`
	// InitialTask is the session's task; informational (the first user message is the
	// turn's input).
	InitialTask *string `json:"initial_task,omitempty"`
	// Success is the recorded task outcome; when set it is written as
	// agent_eval.task.completed on the last turn's root span.
	Success *bool `json:"success,omitempty"`
	// TotalCost is the session's cost in the provider's currency (not converted to spans).
	TotalCost *float64 `json:"total_cost,omitempty"`
	// TotalLatencyMs is ReAsk's session latency in milliseconds (informational: span
	// durations come from the interactions and tool calls).
	TotalLatencyMs *float64 `json:"total_latency_ms,omitempty"`
	Turns          []Turn   `json:"turns"`

	// idField is where SessionID sits in the body (set by Parse).
	idField string
}

// IDField is the path of the session's session_id in the parsed body, as
// ValidationError.Field names it: "session_id", "conversations[2].session_id",
// "dataset.conversations[0].session_id"... ("" for a Session Parse did not return).
func (s *Session) IDField() string { return s.idField }

// SessionMetadata is ReAsk's free-form session metadata.
type SessionMetadata struct {
	// Timestamp, when an RFC 3339 time, is the start time of the first turn; otherwise the
	// session is laid out so that it ends at the time of conversion.
	Timestamp *string         `json:"timestamp,omitempty"`
	Tags      []string        `json:"tags,omitempty"`
	Extra     json.RawMessage `json:"extra,omitempty"`
}

// Agent is a ReAsk AgentDef.
type Agent struct {
	// ID is the agent's key: it is written as gen_ai.agent.name and gen_ai.agent.id.
	ID          string  `json:"id"`
	Name        *string `json:"name,omitempty"`
	Role        *string `json:"role,omitempty"`
	Description *string `json:"description,omitempty"`
	// ToolsAvailable is the agent's tool set. Nil (absent) means unknown; an empty,
	// non-nil slice means the agent may call no tool.
	ToolsAvailable []Tool `json:"tools_available"`
}

// Tool is a ReAsk ToolDefinition.
type Tool struct {
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	// ParametersSchema is a JSON Schema object or ReAsk's flat {param: type} map.
	ParametersSchema json.RawMessage `json:"parameters_schema,omitempty"`
}

// Turn is one user request. In the multi-agent form AgentInteractions is set; in the
// single-agent form AgentSteps/AgentResponse are (used only when AgentInteractions is
// empty, as ReAsk does).
type Turn struct {
	// TurnIndex is informational (turns are taken in body order). A JSON number, so that
	// any integral value the schema accepts (3, 3.0, 1e20) decodes.
	TurnIndex *float64 `json:"turn_index,omitempty"`
	// UserMessage is nil for an agent-to-agent turn.
	UserMessage *string `json:"user_message,omitempty"`
	// FinalResponse overrides the turn's answer; by default it is the last non-empty
	// agent_response of the turn.
	FinalResponse     *string       `json:"final_response,omitempty"`
	AgentInteractions []Interaction `json:"agent_interactions,omitempty"`
	AgentSteps        []Step        `json:"agent_steps,omitempty"`
	AgentResponse     *string       `json:"agent_response,omitempty"`
	// LatencyMs is the single-agent form's interaction latency, in milliseconds.
	LatencyMs *float64 `json:"latency_ms,omitempty"`
}

// Interaction is what one agent did in a turn (ReAsk AgentInteractionInput).
type Interaction struct {
	AgentID       string  `json:"agent_id"`
	AgentSteps    []Step  `json:"agent_steps,omitempty"`
	AgentResponse *string `json:"agent_response,omitempty"`
	// ToolExecutionResult is an executor agent's tool execution; it becomes one more
	// execute_tool span unless a step already carries the same call.
	ToolExecutionResult *ToolExecutionResult `json:"tool_execution_result,omitempty"`
	// LatencyMs is the agent span's duration in milliseconds (at least the sum of its
	// tool calls' latencies).
	LatencyMs *float64 `json:"latency_ms,omitempty"`
}

// Step is one ReAct step: a thought, an action, an observation and/or a tool call.
type Step struct {
	Thought     *string   `json:"thought,omitempty"`
	Action      *string   `json:"action,omitempty"`
	Observation *string   `json:"observation,omitempty"`
	ToolCall    *ToolCall `json:"tool_call,omitempty"`
}

// ToolCall is a tool call made by an agent.
type ToolCall struct {
	ToolName string `json:"tool_name"`
	// CallID links the call to its execution; generated when absent.
	CallID *string `json:"call_id,omitempty"`
	// Parameters is the raw arguments value (an object normally).
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Result is a string or any JSON value.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *string         `json:"error,omitempty"`
	// LatencyMs is the execution time in milliseconds (the execute_tool span's duration);
	// 0 when absent.
	LatencyMs *float64 `json:"latency_ms,omitempty"`
}

// ToolExecutionResult is ReAsk's interaction-level tool execution record.
type ToolExecutionResult struct {
	ToolName   string          `json:"tool_name"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Error      *string         `json:"error,omitempty"`
}

// Dataset is ReAsk's DatasetInput: several sessions in one body.
type Dataset struct {
	Name          *string   `json:"name,omitempty"`
	Task          *string   `json:"task,omitempty"`
	Conversations []Session `json:"conversations"`
}

// request is ReAsk's AnalysisRequest wrapper.
type request struct {
	Trace   *Session `json:"trace,omitempty"`
	Session *Session `json:"session,omitempty"`
	Dataset *Dataset `json:"dataset,omitempty"`
}
