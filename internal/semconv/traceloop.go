// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// OpenLLMetry / Traceloop keys, opentelemetry-semantic-conventions-ai 0.5.2
// (docs/decisions/conventions.md).
const (
	TraceloopSpanKind      = "traceloop.span.kind"
	TraceloopEntityName    = "traceloop.entity.name"
	TraceloopEntityPath    = "traceloop.entity.path"
	TraceloopEntityVersion = "traceloop.entity.version"
	TraceloopEntityInput   = "traceloop.entity.input"  // JSON {"args":[...],"kwargs":{...}}
	TraceloopEntityOutput  = "traceloop.entity.output" // JSON
	TraceloopWorkflowName  = "traceloop.workflow.name"
	// TraceloopAssociationPrefix + key: association properties (session_id, user_id...).
	TraceloopAssociationPrefix = "traceloop.association.properties."
	TraceloopSessionID         = "traceloop.association.properties.session_id"
	TraceloopUserID            = "traceloop.association.properties.user_id"

	// Legacy indexed messages (OpenLLMetry before about 0.61):
	// PrefixGenAIPrompt + "<i>.role" / ".content" / ".tool_calls.<j>.{id,name,arguments}",
	// PrefixGenAICompletion + "<i>.role" / ".content" / ".finish_reason" / ".tool_calls.<j>.*".
	PrefixGenAIPrompt     = "gen_ai.prompt."
	PrefixGenAICompletion = "gen_ai.completion."
	// PrefixLLMRequestFunctions + "<i>.name" / ".description" / ".parameters".
	PrefixLLMRequestFunctions = "llm.request.functions."
	LLMUsageTotalTokens       = "llm.usage.total_tokens"
	// LLMRequestType is the legacy OpenLLMetry inference marker: chat | completion |
	// embedding | rerank (span names "openai.chat", "anthropic.completion"...).
	LLMRequestType = "llm.request.type"

	SuffixRole         = "role"
	SuffixContent      = "content"
	SuffixFinishReason = "finish_reason"
	SuffixToolCalls    = "tool_calls."
	SuffixID           = "id"
	SuffixName         = "name"
	SuffixArguments    = "arguments"
	SuffixDescription  = "description"
	SuffixParameters   = "parameters"

	LangGraphCommandSource = "langgraph.command.source_node"
	LangGraphCommandGoto   = "langgraph.command.goto_node"
	LangGraphCommandGotos  = "langgraph.command.goto_nodes"
)

// traceloop.span.kind values.
const (
	TraceloopKindWorkflow = "workflow"
	TraceloopKindTask     = "task"
	TraceloopKindAgent    = "agent"
	TraceloopKindTool     = "tool"
	TraceloopKindHandoff  = "handoff"
	TraceloopKindUnknown  = "unknown"
)

// Span-name patterns of the Traceloop decorators and its openai-agents instrumentation:
// "{entity}.workflow", "{agent}.agent", "{tool}.tool", "{task}.task",
// "{from} → {to}.handoff", "openai.response" (the LLM call), root "Agent Workflow".
const (
	TraceloopSuffixWorkflow = ".workflow"
	TraceloopSuffixAgent    = ".agent"
	TraceloopSuffixTool     = ".tool"
	TraceloopSuffixTask     = ".task"
	TraceloopSuffixHandoff  = ".handoff"
	TraceloopHandoffArrow   = " → "
	SpanNameOpenAIResponse  = "openai.response"
	SpanNameAgentWorkflow   = "Agent workflow" // OpenAI Agents SDK default trace name ("Agent Workflow" in OpenLLMetry)
)
