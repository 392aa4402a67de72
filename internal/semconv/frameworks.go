// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// Mastra (@mastra/otel-exporter): GenAI spans plus Mastra's own operations; the
// tracingOptions.metadata of a run become mastra.metadata.<key> on every span
// (docs/conventions.md).
const (
	MastraMetadataPref      = "mastra.metadata."
	MastraMetadataSessionID = "mastra.metadata.sessionId"
	// MastraMetadataArgs holds the arguments on a client_tool_call span.
	MastraMetadataArgs = "mastra.metadata.args"
	// MastraAgentRunInput is the agent run's input messages ([{role, content}]).
	MastraAgentRunInput = "mastra.agent_run.input"
	// Mastra's operations besides the GenAI ones.
	MastraOpModelGeneration = "model_generation"
	MastraOpModelChunk      = "model_chunk"
	// MastraOpClientToolCall: a call of a tool the agent does not run itself (a client
	// tool, or one the agent does not have), handed back to the caller, not executed.
	MastraOpClientToolCall = "client_tool_call"
)

// VoltAgent (@voltagent/core observability): its own vocabulary, no gen_ai.* at all.
// Span names: "<agent>" (the agent run), "llm:<generateText|streamText>",
// "tool.execution:<tool>", "subagent:<agent>", "memory.*".
const (
	VoltEntityType      = "entity.type" // "agent"
	VoltEntityName      = "entity.name" // the agent; on sub-agent spans the *parent* agent
	VoltEntityID        = "entity.id"
	VoltConversationID  = "conversation.id"
	VoltSubagentName    = "subagent.name"
	VoltParentAgentName = "agent.parent.name"
	VoltIsSubagent      = "voltagent.is_subagent"
	VoltSpanType        = "span.type" // "tool", "llm", "memory"…
	VoltInput           = "input"
	VoltOutput          = "output"
	VoltToolCallID      = "tool.call.id"
	VoltLLMMessages     = "llm.messages"
	VoltLLMTools        = "llm.tools"
	VoltLLMModel        = "llm.model"
	VoltLLMPromptTok    = "llm.usage.prompt_tokens"
	VoltLLMComplTok     = "llm.usage.completion_tokens"
	VoltLLMFinish       = "llm.finish_reason"
	VoltAgentMessages   = "agent.messages"

	VoltSpanMemoryWrite    = "memory.write" // input: {message: the saved UI message}
	VoltUIToolPartPrefix   = "tool-"        // UI message part type "tool-<name>"
	VoltSpanPrefixLLM      = "llm:"
	VoltSpanPrefixTool     = "tool.execution:"
	VoltSpanPrefixSubagent = "subagent:"
	VoltDelegateTool       = "delegate_task" // {task, targetAgents[], context}
	VoltDelegateTargets    = "targetAgents"
)
