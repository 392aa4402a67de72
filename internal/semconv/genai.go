// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// OpenTelemetry GenAI attribute keys, v1.41.1 (docs/decisions/conventions.md). All of them have
// "Development" stability.
const (
	GenAIOperationName      = "gen_ai.operation.name"
	GenAIProviderName       = "gen_ai.provider.name"
	GenAISystem             = "gen_ai.system" // deprecated in v1.37 for gen_ai.provider.name; still emitted
	GenAIAgentID            = "gen_ai.agent.id"
	GenAIAgentName          = "gen_ai.agent.name"
	GenAIAgentDescription   = "gen_ai.agent.description"
	GenAIAgentVersion       = "gen_ai.agent.version"
	GenAIConversationID     = "gen_ai.conversation.id"
	GenAIDataSourceID       = "gen_ai.data_source.id"
	GenAIWorkflowName       = "gen_ai.workflow.name"
	GenAIToolName           = "gen_ai.tool.name"
	GenAIToolCallID         = "gen_ai.tool.call.id"
	GenAIToolType           = "gen_ai.tool.type"
	GenAIToolDescription    = "gen_ai.tool.description"
	GenAIToolCallArguments  = "gen_ai.tool.call.arguments" // any; often a JSON string on spans
	GenAIToolCallResult     = "gen_ai.tool.call.result"
	GenAIToolDefinitions    = "gen_ai.tool.definitions" // array; often a JSON string on spans
	GenAIInputMessages      = "gen_ai.input.messages"   // JSON string on spans, structured on events
	GenAIOutputMessages     = "gen_ai.output.messages"
	GenAISystemInstructions = "gen_ai.system_instructions"
	GenAIOutputType         = "gen_ai.output.type"
	GenAIPromptName         = "gen_ai.prompt.name"

	GenAIRequestModel           = "gen_ai.request.model"
	GenAIResponseModel          = "gen_ai.response.model"
	GenAIResponseID             = "gen_ai.response.id"
	GenAIResponseFinishReasons  = "gen_ai.response.finish_reasons" // string[]
	GenAIUsageInputTokens       = "gen_ai.usage.input_tokens"
	GenAIUsageOutputTokens      = "gen_ai.usage.output_tokens"
	GenAIUsageCacheReadTokens   = "gen_ai.usage.cache_read.input_tokens"     // v1.40
	GenAIUsageCacheCreateTokens = "gen_ai.usage.cache_creation.input_tokens" // v1.40
	GenAIUsageReasoningTokens   = "gen_ai.usage.reasoning.output_tokens"     // v1.41

	GenAIEvaluationName        = "gen_ai.evaluation.name"
	GenAIEvaluationScoreValue  = "gen_ai.evaluation.score.value" // double
	GenAIEvaluationScoreLabel  = "gen_ai.evaluation.score.label"
	GenAIEvaluationExplanation = "gen_ai.evaluation.explanation"

	// ErrorType is the stable error.type attribute ("_OTHER" as fallback value).
	ErrorType = "error.type"

	// ServerAddress and ServerPort are the stable server.* attributes of client spans
	// (the judge's chat and embeddings calls).
	ServerAddress = "server.address"
	ServerPort    = "server.port" // int
)

// Older or alternative spellings of the GenAI usage keys, still emitted (docs/decisions/conventions.md
// §1.3: Strands, OpenLLMetry, python-contrib).
const (
	GenAIUsagePromptTokens          = "gen_ai.usage.prompt_tokens"     // pre-1.27 name of input_tokens
	GenAIUsageCompletionTokens      = "gen_ai.usage.completion_tokens" // pre-1.27 name of output_tokens
	GenAIUsageTotalTokens           = "gen_ai.usage.total_tokens"
	GenAIUsageCacheReadInputTokens  = "gen_ai.usage.cache_read_input_tokens"  // Strands, OpenLLMetry
	GenAIUsageCacheWriteInputTokens = "gen_ai.usage.cache_write_input_tokens" // Strands
	GenAIUsageReasoningTokensAlt    = "gen_ai.usage.reasoning_tokens"         // OpenLLMetry
)

// Unreleased keys of the semantic-conventions-genai main branch (docs/decisions/conventions.md).
// Supported when present, never required.
const (
	GenAIInvocationIsNested = "gen_ai.invocation.is_nested" // bool; false for exactly one invocation per turn
	GenAITransferMode       = "gen_ai.transfer.mode"        // on execute_tool; TransferMode* values
	GenAITransferTargetName = "gen_ai.transfer.target.name"
	GenAITransferTargetID   = "gen_ai.transfer.target.id"
	GenAITransferTargetType = "gen_ai.transfer.target.type" // agent | human | workflow
	GenAICallerType         = "gen_ai.caller.type"          // on a remote invoke_agent CLIENT span: agent | workflow
	GenAICallerName         = "gen_ai.caller.name"          // the immediate logical caller of that agent
	GenAIAgentTurnCount     = "gen_ai.agent.turn.count"
	CallerTypeAgent         = "agent"
	// EventToolCallDecision is the pre-execution decision about a tool call
	// (semantic-conventions-genai PR #535): gen_ai.tool.call.decision.outcome, with
	// gen_ai.tool.name and gen_ai.tool.call.id.
	EventToolCallDecision          = "gen_ai.tool.call.decision"
	GenAIToolCallDecisionOutcome   = "gen_ai.tool.call.decision.outcome"
	ToolCallDecisionAllow          = "allow"
	ToolCallDecisionDeny           = "deny"
	ToolCallDecisionRequireApprove = "require_approval"
	GenAIEvaluationCaseName        = "gen_ai.evaluation.case.name" // strands-evals, non-standard
	GenAIEvaluationTestPass        = "gen_ai.evaluation.test_pass"
	GenAIEvaluationTaskType        = "gen_ai.evaluation.task.type"
	TransferModeReturn             = "return_to_caller"
	TransferModePassControl        = "pass_control"
	TransferTargetTypeAgent        = "agent"
	TransferTargetTypeHuman        = "human"
	TransferTargetTypeWorkflow     = "workflow"
)

// Non-standard but common gen_ai.* and framework keys (docs/decisions/conventions.md, §4, §9).
const (
	GenAIHandoffFromAgent   = "gen_ai.handoff.from_agent"   // python-contrib openai-agents-v2, OpenLLMetry
	GenAIHandoffToAgent     = "gen_ai.handoff.to_agent"     // idem
	GenAIAgentHandoffParent = "gen_ai.agent.handoff_parent" // OpenLLMetry, on the next agent span
	GenAIAgentTools         = "gen_ai.agent.tools"          // Strands: JSON list of tool names
	GenAIAgentSystemPrompt  = "gen_ai.agent.system_prompt"  // Strands
	GenAIToolStatus         = "gen_ai.tool.status"          // Strands: success | error
	GenAIAgentCallID        = "gen_ai.agent.call.id"        // Pydantic AI run id
	GenAIAggregatedUsageIn  = "gen_ai.aggregated_usage.input_tokens"
	GenAIAggregatedUsageOut = "gen_ai.aggregated_usage.output_tokens"
	OpenAIAgentHandoffs     = "openai.agent.handoffs" // OpenLLMetry: JSON [{name, instructions?}]
	EventLoopCycleID        = "event_loop.cycle_id"   // Strands
	EventLoopParentCycleID  = "event_loop.parent_cycle_id"
	AWSGenAISpanKind        = "aws.genai.span_kind" // ADOT: AGENT | LLM | TOOL
	PydanticAIAllMessages   = "pydantic_ai.all_messages"
	PydanticAIFinalResult   = "final_result"
	PydanticAIAgentNameAlt  = "agent_name"
	PydanticAIOperationCost = "operation.cost"
	LangfuseSessionID       = "langfuse.session.id"
	LangfuseUserID          = "langfuse.user.id"
	MCPMethodName           = "mcp.method.name"
	MCPSessionID            = "mcp.session.id"
	UserID                  = "user.id"
	EndUserID               = "enduser.id"
	ServiceName             = "service.name"
	ExceptionType           = "exception.type"
	ExceptionMessage        = "exception.message"
)

// gen_ai.operation.name values (docs/decisions/conventions.md, §1.3, §1.8). The enum is open:
// unknown values must not break classification.
const (
	OpChat                   = "chat"
	OpGenerateContent        = "generate_content"
	OpTextCompletion         = "text_completion"
	OpEmbeddings             = "embeddings"
	OpRetrieval              = "retrieval"
	OpCreateAgent            = "create_agent"
	OpInvokeAgent            = "invoke_agent"
	OpExecuteTool            = "execute_tool"
	OpInvokeWorkflow         = "invoke_workflow"          // v1.41
	OpHandleConversationTurn = "handle_conversation_turn" // main branch: the turn marker
	OpPlan                   = "plan"                     // main branch
	OpFetchResponse          = "fetch_response"           // main branch
	OpAgentHandoff           = "agent_handoff"            // python-contrib openai-agents-v2
	OpHandoff                = "handoff"                  // OpenLLMetry openai-agents
	OpInvokeSwarm            = "invoke_swarm"             // Strands
	OpInvokeGraph            = "invoke_graph"             // Strands
	OpExecuteEventLoopCycle  = "execute_event_loop_cycle" // Strands
	OpAgentStep              = "agent_step"               // @ai-sdk/otel
	OpUnknown                = "unknown"                  // OpenAI Agents SDK task/turn/custom spans
	OpGuardrailCheck         = "guardrail_check"
)

// GenAI event names (docs/decisions/conventions.md, §1.6, §6.1).
const (
	EventInferenceDetails  = "gen_ai.client.inference.operation.details" // v1.37+
	EventEvaluationResult  = "gen_ai.evaluation.result"                  // v1.38+
	EventOperationExcept   = "gen_ai.client.operation.exception"         // v1.41
	EventSystemMessage     = "gen_ai.system.message"                     // deprecated 1.37
	EventUserMessage       = "gen_ai.user.message"                       // deprecated 1.37
	EventAssistantMessage  = "gen_ai.assistant.message"                  // deprecated 1.37
	EventToolMessage       = "gen_ai.tool.message"                       // deprecated 1.37
	EventChoice            = "gen_ai.choice"                             // deprecated 1.37
	EventExecutionState    = "gen_ai.execution.state.changed"            // main branch
	EventThreatDetection   = "agent.threat.detection"                    // main branch
	EventException         = "exception"
	EventAttrContent       = "content"       // deprecated per-message events
	EventAttrRole          = "role"          //
	EventAttrID            = "id"            //
	EventAttrMessage       = "message"       // gen_ai.choice
	EventAttrFinishReason  = "finish_reason" // gen_ai.choice
	EventAttrIndex         = "index"         // gen_ai.choice
	EventAttrToolCalls     = "tool_calls"    // gen_ai.assistant.message (v1.36)
	EventAttrStrandsResult = "tool.result"   // Strands cycle-span gen_ai.choice
)

// Message and part vocabulary of gen_ai.input.messages / output.messages (docs/decisions/conventions.md).
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"

	PartText                   = "text"
	PartToolCall               = "tool_call"
	PartToolCallResponse       = "tool_call_response"
	PartServerToolCall         = "server_tool_call"
	PartServerToolCallResponse = "server_tool_call_response"
	PartReasoning              = "reasoning"
	PartBlob                   = "blob"
	PartFile                   = "file"
	PartURI                    = "uri"
	PartGeneric                = "generic"

	FinishStop          = "stop"
	FinishLength        = "length"
	FinishContentFilter = "content_filter"
	FinishToolCall      = "tool_call"
	FinishToolCalls     = "tool_calls" // OpenAI spelling, seen in practice
	FinishError         = "error"
)
