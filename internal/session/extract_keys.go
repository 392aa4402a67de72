// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session // import "github.com/agenteval/agenteval-collector/internal/session"

import "github.com/agenteval/agenteval-collector/internal/semconv"

// exKey identifies one attribute the extractor reads; the scan stores values by exKey.
type exKey uint8

// The attributes read from spans (docs/decisions/sessions.md §1.5, §9).
const (
	kOp exKey = iota
	kOIKind
	kTLKind
	kEvalKind
	kEvalJudge
	kIsNested
	kAIFunctionID
	kAIOperationID
	kMCPMethod
	kHandoffParent
	kLLMRequestType

	kGenAIAgentName
	kOIAgentName
	kGraphNodeID
	kGraphParentID
	kOIMetadata
	kTLEntityName
	kAgentDesc
	kAgentTools
	kOAHandoffs

	kToolName
	kOIToolName
	kAIToolName
	kToolCallID
	kOIToolID
	kAIToolID
	kToolDesc
	kOIToolDesc
	kToolArgs
	kInputValue
	kInputMime
	kOIToolParams
	kOIToolSchema
	kAIToolArgs
	kAIToolInput
	kADKArgs
	kTLEntityInput
	kToolResult
	kOutputValue
	kOutputMime
	kAIToolResult
	kAIToolOutput
	kADKResponse
	kTLEntityOutput
	kToolStatus

	kTransferMode
	kTransferTargetName
	kTransferTargetID
	kHandoffFrom
	kHandoffTo

	kErrorType
	kTaskCompleted

	kInMsgs
	kOutMsgs
	kSysInstr
	kToolDefs
	kAIPrompt
	kAIPromptMessages
	kAIPromptTools
	kAIResponseText
	kAIResponseToolCalls
	kAIResponseFinish
	kPydAllMessages
	kPydFinalResult
	kADKLLMRequest
	kADKLLMResponse
	kMastraArgs
	kMastraRunInput

	kCallerType
	kCallerName

	kVoltEntityType
	kVoltEntityName
	kVoltSubagentName
	kVoltSpanType
	kVoltInput
	kVoltOutput
	kVoltToolCallID
	kVoltLLMMessages
	kVoltLLMTools
	kVoltLLMModel
	kVoltPromptTok
	kVoltComplTok

	kReqModel
	kRespModel
	kOIModel
	kAIModelID
	kAIRespModel
	kFinishReasons

	kInTok
	kOutTok
	kPromptTok
	kComplTok
	kOIPromptTok
	kOIComplTok
	kAIInTok
	kAIOutTok
	kAIPromptTok
	kAIComplTok
	kCacheRead
	kCacheReadAlt
	kOICacheRead
	kAICached
	kReasoning
	kReasoningAlt
	kOIReasoning
	kAIReasoning
	kOICost
	kOpCost

	exNumKeys
	exNoKey exKey = 255
)

// exKeyNames maps each exKey to its attribute key.
var exKeyNames = [exNumKeys]string{
	kOp:             semconv.GenAIOperationName,
	kOIKind:         semconv.OpenInferenceSpanKind,
	kTLKind:         semconv.TraceloopSpanKind,
	kEvalKind:       semconv.AgentEvalKind,
	kEvalJudge:      semconv.AgentEvalJudge,
	kIsNested:       semconv.GenAIInvocationIsNested,
	kAIFunctionID:   semconv.AITelemetryFunction,
	kAIOperationID:  semconv.AIOperationID,
	kMCPMethod:      semconv.MCPMethodName,
	kHandoffParent:  semconv.GenAIAgentHandoffParent,
	kLLMRequestType: semconv.LLMRequestType,

	kGenAIAgentName: semconv.GenAIAgentName,
	kOIAgentName:    semconv.AgentName,
	kGraphNodeID:    semconv.GraphNodeID,
	kGraphParentID:  semconv.GraphNodeParentID,
	kOIMetadata:     semconv.Metadata,
	kTLEntityName:   semconv.TraceloopEntityName,
	kAgentDesc:      semconv.GenAIAgentDescription,
	kAgentTools:     semconv.GenAIAgentTools,
	kOAHandoffs:     semconv.OpenAIAgentHandoffs,

	kToolName:       semconv.GenAIToolName,
	kOIToolName:     semconv.ToolNameOI,
	kAIToolName:     semconv.AIToolCallName,
	kToolCallID:     semconv.GenAIToolCallID,
	kOIToolID:       semconv.ToolIDOI,
	kAIToolID:       semconv.AIToolCallID,
	kToolDesc:       semconv.GenAIToolDescription,
	kOIToolDesc:     semconv.ToolDescOI,
	kToolArgs:       semconv.GenAIToolCallArguments,
	kInputValue:     semconv.InputValue,
	kInputMime:      semconv.InputMimeType,
	kOIToolParams:   semconv.ToolParamsOI,
	kOIToolSchema:   semconv.ToolSchemaOI,
	kAIToolArgs:     semconv.AIToolCallArgs,
	kAIToolInput:    semconv.AIToolCallInput,
	kADKArgs:        semconv.ADKToolCallArgs,
	kTLEntityInput:  semconv.TraceloopEntityInput,
	kToolResult:     semconv.GenAIToolCallResult,
	kOutputValue:    semconv.OutputValue,
	kOutputMime:     semconv.OutputMimeType,
	kAIToolResult:   semconv.AIToolCallResult,
	kAIToolOutput:   semconv.AIToolCallOutput,
	kADKResponse:    semconv.ADKToolResponse,
	kTLEntityOutput: semconv.TraceloopEntityOutput,
	kToolStatus:     semconv.GenAIToolStatus,

	kTransferMode:       semconv.GenAITransferMode,
	kTransferTargetName: semconv.GenAITransferTargetName,
	kTransferTargetID:   semconv.GenAITransferTargetID,
	kHandoffFrom:        semconv.GenAIHandoffFromAgent,
	kHandoffTo:          semconv.GenAIHandoffToAgent,

	kErrorType:     semconv.ErrorType,
	kTaskCompleted: semconv.AgentEvalTaskCompleted,

	kInMsgs:              semconv.GenAIInputMessages,
	kOutMsgs:             semconv.GenAIOutputMessages,
	kSysInstr:            semconv.GenAISystemInstructions,
	kToolDefs:            semconv.GenAIToolDefinitions,
	kAIPrompt:            semconv.AIPrompt,
	kAIPromptMessages:    semconv.AIPromptMessages,
	kAIPromptTools:       semconv.AIPromptTools,
	kAIResponseText:      semconv.AIResponseText,
	kAIResponseToolCalls: semconv.AIResponseToolCalls,
	kAIResponseFinish:    semconv.AIResponseFinishReason,
	kPydAllMessages:      semconv.PydanticAIAllMessages,
	kPydFinalResult:      semconv.PydanticAIFinalResult,
	kADKLLMRequest:       semconv.ADKLLMRequest,
	kADKLLMResponse:      semconv.ADKLLMResponse,
	kMastraArgs:          semconv.MastraMetadataArgs,
	kMastraRunInput:      semconv.MastraAgentRunInput,

	kCallerType: semconv.GenAICallerType,
	kCallerName: semconv.GenAICallerName,

	kVoltEntityType:   semconv.VoltEntityType,
	kVoltEntityName:   semconv.VoltEntityName,
	kVoltSubagentName: semconv.VoltSubagentName,
	kVoltSpanType:     semconv.VoltSpanType,
	kVoltInput:        semconv.VoltInput,
	kVoltOutput:       semconv.VoltOutput,
	kVoltToolCallID:   semconv.VoltToolCallID,
	kVoltLLMMessages:  semconv.VoltLLMMessages,
	kVoltLLMTools:     semconv.VoltLLMTools,
	kVoltLLMModel:     semconv.VoltLLMModel,
	kVoltPromptTok:    semconv.VoltLLMPromptTok,
	kVoltComplTok:     semconv.VoltLLMComplTok,

	kReqModel:      semconv.GenAIRequestModel,
	kRespModel:     semconv.GenAIResponseModel,
	kOIModel:       semconv.LLMModelName,
	kAIModelID:     semconv.AIModelID,
	kAIRespModel:   semconv.AIResponseModel,
	kFinishReasons: semconv.GenAIResponseFinishReasons,

	kInTok:        semconv.GenAIUsageInputTokens,
	kOutTok:       semconv.GenAIUsageOutputTokens,
	kPromptTok:    semconv.GenAIUsagePromptTokens,
	kComplTok:     semconv.GenAIUsageCompletionTokens,
	kOIPromptTok:  semconv.LLMTokenCountPrompt,
	kOIComplTok:   semconv.LLMTokenCountCompletion,
	kAIInTok:      semconv.AIUsageInputTokens,
	kAIOutTok:     semconv.AIUsageOutputTokens,
	kAIPromptTok:  semconv.AIUsagePromptTokens,
	kAIComplTok:   semconv.AIUsageCompletionTokens,
	kCacheRead:    semconv.GenAIUsageCacheReadTokens,
	kCacheReadAlt: semconv.GenAIUsageCacheReadInputTokens,
	kOICacheRead:  semconv.LLMTokenCacheRead,
	kAICached:     semconv.AIUsageCachedTokens,
	kReasoning:    semconv.GenAIUsageReasoningTokens,
	kReasoningAlt: semconv.GenAIUsageReasoningTokensAlt,
	kOIReasoning:  semconv.LLMTokenReasoning,
	kAIReasoning:  semconv.AIUsageReasoningTokens,
	kOICost:       semconv.LLMCostTotal,
	kOpCost:       semconv.PydanticAIOperationCost,
}

// exStaticKeys maps attribute keys to their exKey.
var exStaticKeys = func() map[string]exKey {
	m := make(map[string]exKey, exNumKeys)
	for id, k := range exKeyNames {
		if k != "" { // a gap is caught by TestExtractKeyTableComplete
			m[k] = exKey(id)
		}
	}
	return m
}()
