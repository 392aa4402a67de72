// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// Google ADK native telemetry, scope "gcp.vertex.agent" (docs/decisions/conventions.md).
const (
	ADKScope        = "gcp.vertex.agent"
	ADKSessionID    = "gcp.vertex.agent.session_id"
	ADKInvocationID = "gcp.vertex.agent.invocation_id"
	ADKEventID      = "gcp.vertex.agent.event_id"
	ADKLLMRequest   = "gcp.vertex.agent.llm_request"  // JSON {model, config{system_instruction, tools[{function_declarations}]}, contents[]}
	ADKLLMResponse  = "gcp.vertex.agent.llm_response" // JSON {content{parts[{text|function_call}]}, finish_reason}
	ADKToolCallArgs = "gcp.vertex.agent.tool_call_args"
	ADKToolResponse = "gcp.vertex.agent.tool_response"
	ADKSpanInvoc    = "invocation" // root span per Runner.run: a turn
	ADKSpanCallLLM  = "call_llm"   // ADK's wrapper around one model call
	ADKTransferTool = "transfer_to_agent"
	// ADKMergedTools is the gen_ai.tool.name of the "execute_tool (merged)" span that ADK
	// Python adds beside the execute_tool spans of parallel calls (its
	// trace_merged_tool_calls): bookkeeping of the merged response, no call of its own.
	ADKMergedTools   = "(merged tools)"
	ADKTransferParam = "agent_name"
)

// MCP (semantic conventions v1.39).
const (
	MCPToolsCallPrefix = "tools/call " // span name "tools/call {gen_ai.tool.name}"
	MCPMethodToolsCall = "tools/call"
)

// Handoff tool names and argument keys used across frameworks (docs/decisions/conventions.md, §5.1 (d)).
const (
	HandoffToolTransferToPrefix     = "transfer_to_"      // OpenAI Agents, AutoGen, LangGraph supervisor/swarm
	HandoffToolTransferBackPrefix   = "transfer_back_to_" // LangGraph supervisor
	HandoffToolHandoffToPrefix      = "handoff_to_"       // some LangGraph versions
	HandoffToolStrandsSwarm         = "handoff_to_agent"  // Strands Swarm {agent_name, message, context}
	HandoffToolCrewAIDelegate       = "Delegate work to coworker"
	HandoffToolCrewAIAsk            = "Ask question to coworker"
	HandoffToolClaudeAgent          = "Agent" // Claude Agent SDK sub-agent launcher {subagent_type, prompt}
	HandoffArgAgentName             = "agent_name"
	HandoffArgAgentNameCamel        = "agentName" // ADK for TypeScript's transfer_to_agent
	HandoffArgCoworker              = "coworker"
	HandoffArgSubagentType          = "subagent_type"
	HandoffArgPrompt                = "prompt" // Claude Agent tool: the task handed to the sub-agent
	HandoffArgMessage               = "message"
	HandoffArgContext               = "context"
	OpenAIAgentsResponseFunctionRep = "ResponseFunctionToolCall(" // python repr in contrib text parts
)
