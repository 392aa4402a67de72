// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import "github.com/agenteval/agenteval-collector/internal/semconv"

// attrKey identifies one attribute the extractor reads; the scan stores values by attrKey.
type attrKey uint8

// The attributes read from spans (docs/decisions/sessions.md §1.5, §9).
const (
	attrOp attrKey = iota
	attrOIKind
	attrTLKind
	attrEvalKind
	attrEvalJudge
	attrIsNested
	attrAIFunctionID
	attrAIOperationID
	attrMCPMethod
	attrHandoffParent
	attrLLMRequestType

	attrGenAIAgentName
	attrOIAgentName
	attrGraphNodeID
	attrGraphParentID
	attrOIMetadata
	attrTLEntityName
	attrAgentDesc
	attrAgentTools
	attrOAHandoffs

	attrToolName
	attrOIToolName
	attrAIToolName
	attrToolCallID
	attrOIToolID
	attrAIToolID
	attrToolDesc
	attrOIToolDesc
	attrToolArgs
	attrInputValue
	attrInputMime
	attrOIToolParams
	attrOIToolSchema
	attrAIToolArgs
	attrAIToolInput
	attrADKArgs
	attrTLEntityInput
	attrToolResult
	attrOutputValue
	attrOutputMime
	attrAIToolResult
	attrAIToolOutput
	attrADKResponse
	attrTLEntityOutput
	attrToolStatus

	attrTransferMode
	attrTransferTargetName
	attrTransferTargetID
	attrHandoffFrom
	attrHandoffTo

	attrErrorType
	attrTaskCompleted

	attrInMsgs
	attrOutMsgs
	attrSysInstr
	attrToolDefs
	attrAIPrompt
	attrAIPromptMessages
	attrAIPromptTools
	attrAIResponseText
	attrAIResponseToolCalls
	attrAIResponseFinish
	attrPydAllMessages
	attrPydFinalResult
	attrADKLLMRequest
	attrADKLLMResponse
	attrMastraArgs
	attrMastraRunInput

	attrCallerType
	attrCallerName

	attrVoltEntityType
	attrVoltEntityName
	attrVoltSubagentName
	attrVoltSpanType
	attrVoltInput
	attrVoltOutput
	attrVoltToolCallID
	attrVoltLLMMessages
	attrVoltLLMTools
	attrVoltLLMModel
	attrVoltPromptTok
	attrVoltComplTok

	attrReqModel
	attrRespModel
	attrOIModel
	attrAIModelID
	attrAIRespModel
	attrFinishReasons

	attrInTok
	attrOutTok
	attrPromptTok
	attrComplTok
	attrOIPromptTok
	attrOIComplTok
	attrAIInTok
	attrAIOutTok
	attrAIPromptTok
	attrAIComplTok
	attrCacheRead
	attrCacheReadAlt
	attrOICacheRead
	attrAICached
	attrReasoning
	attrReasoningAlt
	attrOIReasoning
	attrAIReasoning
	attrOICost
	attrOpCost

	numKeys
	noKey attrKey = 255
)

// keyNames maps each attrKey to its attribute key.
var keyNames = [numKeys]string{
	attrOp:             semconv.GenAIOperationName,
	attrOIKind:         semconv.OpenInferenceSpanKind,
	attrTLKind:         semconv.TraceloopSpanKind,
	attrEvalKind:       semconv.AgentEvalKind,
	attrEvalJudge:      semconv.AgentEvalJudge,
	attrIsNested:       semconv.GenAIInvocationIsNested,
	attrAIFunctionID:   semconv.AITelemetryFunction,
	attrAIOperationID:  semconv.AIOperationID,
	attrMCPMethod:      semconv.MCPMethodName,
	attrHandoffParent:  semconv.GenAIAgentHandoffParent,
	attrLLMRequestType: semconv.LLMRequestType,

	attrGenAIAgentName: semconv.GenAIAgentName,
	attrOIAgentName:    semconv.AgentName,
	attrGraphNodeID:    semconv.GraphNodeID,
	attrGraphParentID:  semconv.GraphNodeParentID,
	attrOIMetadata:     semconv.Metadata,
	attrTLEntityName:   semconv.TraceloopEntityName,
	attrAgentDesc:      semconv.GenAIAgentDescription,
	attrAgentTools:     semconv.GenAIAgentTools,
	attrOAHandoffs:     semconv.OpenAIAgentHandoffs,

	attrToolName:       semconv.GenAIToolName,
	attrOIToolName:     semconv.ToolNameOI,
	attrAIToolName:     semconv.AIToolCallName,
	attrToolCallID:     semconv.GenAIToolCallID,
	attrOIToolID:       semconv.ToolIDOI,
	attrAIToolID:       semconv.AIToolCallID,
	attrToolDesc:       semconv.GenAIToolDescription,
	attrOIToolDesc:     semconv.ToolDescOI,
	attrToolArgs:       semconv.GenAIToolCallArguments,
	attrInputValue:     semconv.InputValue,
	attrInputMime:      semconv.InputMimeType,
	attrOIToolParams:   semconv.ToolParamsOI,
	attrOIToolSchema:   semconv.ToolSchemaOI,
	attrAIToolArgs:     semconv.AIToolCallArgs,
	attrAIToolInput:    semconv.AIToolCallInput,
	attrADKArgs:        semconv.ADKToolCallArgs,
	attrTLEntityInput:  semconv.TraceloopEntityInput,
	attrToolResult:     semconv.GenAIToolCallResult,
	attrOutputValue:    semconv.OutputValue,
	attrOutputMime:     semconv.OutputMimeType,
	attrAIToolResult:   semconv.AIToolCallResult,
	attrAIToolOutput:   semconv.AIToolCallOutput,
	attrADKResponse:    semconv.ADKToolResponse,
	attrTLEntityOutput: semconv.TraceloopEntityOutput,
	attrToolStatus:     semconv.GenAIToolStatus,

	attrTransferMode:       semconv.GenAITransferMode,
	attrTransferTargetName: semconv.GenAITransferTargetName,
	attrTransferTargetID:   semconv.GenAITransferTargetID,
	attrHandoffFrom:        semconv.GenAIHandoffFromAgent,
	attrHandoffTo:          semconv.GenAIHandoffToAgent,

	attrErrorType:     semconv.ErrorType,
	attrTaskCompleted: semconv.AgentEvalTaskCompleted,

	attrInMsgs:              semconv.GenAIInputMessages,
	attrOutMsgs:             semconv.GenAIOutputMessages,
	attrSysInstr:            semconv.GenAISystemInstructions,
	attrToolDefs:            semconv.GenAIToolDefinitions,
	attrAIPrompt:            semconv.AIPrompt,
	attrAIPromptMessages:    semconv.AIPromptMessages,
	attrAIPromptTools:       semconv.AIPromptTools,
	attrAIResponseText:      semconv.AIResponseText,
	attrAIResponseToolCalls: semconv.AIResponseToolCalls,
	attrAIResponseFinish:    semconv.AIResponseFinishReason,
	attrPydAllMessages:      semconv.PydanticAIAllMessages,
	attrPydFinalResult:      semconv.PydanticAIFinalResult,
	attrADKLLMRequest:       semconv.ADKLLMRequest,
	attrADKLLMResponse:      semconv.ADKLLMResponse,
	attrMastraArgs:          semconv.MastraMetadataArgs,
	attrMastraRunInput:      semconv.MastraAgentRunInput,

	attrCallerType: semconv.GenAICallerType,
	attrCallerName: semconv.GenAICallerName,

	attrVoltEntityType:   semconv.VoltEntityType,
	attrVoltEntityName:   semconv.VoltEntityName,
	attrVoltSubagentName: semconv.VoltSubagentName,
	attrVoltSpanType:     semconv.VoltSpanType,
	attrVoltInput:        semconv.VoltInput,
	attrVoltOutput:       semconv.VoltOutput,
	attrVoltToolCallID:   semconv.VoltToolCallID,
	attrVoltLLMMessages:  semconv.VoltLLMMessages,
	attrVoltLLMTools:     semconv.VoltLLMTools,
	attrVoltLLMModel:     semconv.VoltLLMModel,
	attrVoltPromptTok:    semconv.VoltLLMPromptTok,
	attrVoltComplTok:     semconv.VoltLLMComplTok,

	attrReqModel:      semconv.GenAIRequestModel,
	attrRespModel:     semconv.GenAIResponseModel,
	attrOIModel:       semconv.LLMModelName,
	attrAIModelID:     semconv.AIModelID,
	attrAIRespModel:   semconv.AIResponseModel,
	attrFinishReasons: semconv.GenAIResponseFinishReasons,

	attrInTok:        semconv.GenAIUsageInputTokens,
	attrOutTok:       semconv.GenAIUsageOutputTokens,
	attrPromptTok:    semconv.GenAIUsagePromptTokens,
	attrComplTok:     semconv.GenAIUsageCompletionTokens,
	attrOIPromptTok:  semconv.LLMTokenCountPrompt,
	attrOIComplTok:   semconv.LLMTokenCountCompletion,
	attrAIInTok:      semconv.AIUsageInputTokens,
	attrAIOutTok:     semconv.AIUsageOutputTokens,
	attrAIPromptTok:  semconv.AIUsagePromptTokens,
	attrAIComplTok:   semconv.AIUsageCompletionTokens,
	attrCacheRead:    semconv.GenAIUsageCacheReadTokens,
	attrCacheReadAlt: semconv.GenAIUsageCacheReadInputTokens,
	attrOICacheRead:  semconv.LLMTokenCacheRead,
	attrAICached:     semconv.AIUsageCachedTokens,
	attrReasoning:    semconv.GenAIUsageReasoningTokens,
	attrReasoningAlt: semconv.GenAIUsageReasoningTokensAlt,
	attrOIReasoning:  semconv.LLMTokenReasoning,
	attrAIReasoning:  semconv.AIUsageReasoningTokens,
	attrOICost:       semconv.LLMCostTotal,
	attrOpCost:       semconv.PydanticAIOperationCost,
}

// staticKeys maps attribute keys to their attrKey.
var staticKeys = func() map[string]attrKey {
	m := make(map[string]attrKey, numKeys)
	for id, k := range keyNames {
		if k != "" { // a gap is caught by TestExtractKeyTableComplete
			m[k] = attrKey(id)
		}
	}
	return m
}()
