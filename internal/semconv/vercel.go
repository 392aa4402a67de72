// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// Vercel AI SDK legacy telemetry (ai ≤ 6 and the legacy mode of @ai-sdk/otel;
// docs/decisions/conventions.md). v4 names and their v5 renames are both listed.
const (
	AIOperationID        = "ai.operationId"
	AIOperationName      = "operation.name" // "ai.generateText <functionId>"
	AIResourceName       = "resource.name"
	AITelemetryFunction  = "ai.telemetry.functionId" // the agent-ish name
	AITelemetryMetaPref  = "ai.telemetry.metadata."  // + user key
	AITelemetrySessionID = "ai.telemetry.metadata.sessionId"
	AITelemetryConvID    = "ai.telemetry.metadata.conversationId"
	AITelemetryUserID    = "ai.telemetry.metadata.userId"
	// AI SDK 7 has no telemetry metadata: @ai-sdk/otel writes the runtime context values
	// the call includes (telemetry.includeRuntimeContext) as ai.settings.context.<key>.
	AISettingsContextPref      = "ai.settings.context."
	AISettingsContextSessionID = "ai.settings.context.sessionId"

	AIModelID        = "ai.model.id"
	AIModelProvider  = "ai.model.provider"
	AIPrompt         = "ai.prompt"          // JSON {system?, prompt?, messages?}
	AIPromptMessages = "ai.prompt.messages" // JSON [{role, content: string | parts[]}]
	AIPromptTools    = "ai.prompt.tools"    // string[]: each a JSON tool definition
	AIPromptToolChoi = "ai.prompt.toolChoice"

	AIResponseText         = "ai.response.text"
	AIResponseToolCalls    = "ai.response.toolCalls" // JSON [{toolCallId, toolName, args|input}]
	AIResponseFinishReason = "ai.response.finishReason"
	AIResponseObject       = "ai.response.object"
	AIResponseModel        = "ai.response.model"

	AIUsagePromptTokens     = "ai.usage.promptTokens"     // v4
	AIUsageCompletionTokens = "ai.usage.completionTokens" // v4
	AIUsageInputTokens      = "ai.usage.inputTokens"      // v5
	AIUsageOutputTokens     = "ai.usage.outputTokens"     // v5
	AIUsageReasoningTokens  = "ai.usage.reasoningTokens"
	AIUsageCachedTokens     = "ai.usage.cachedInputTokens"
	AIUsageTotalTokens      = "ai.usage.totalTokens"

	AIToolCallName   = "ai.toolCall.name"
	AIToolCallID     = "ai.toolCall.id"
	AIToolCallArgs   = "ai.toolCall.args"   // v4
	AIToolCallInput  = "ai.toolCall.input"  // v5
	AIToolCallResult = "ai.toolCall.result" // v4
	AIToolCallOutput = "ai.toolCall.output" // v5
)

// Vercel AI SDK span names.
const (
	AISpanGenerateText   = "ai.generateText"
	AISpanStreamText     = "ai.streamText"
	AISpanGenerateObject = "ai.generateObject"
	AISpanStreamObject   = "ai.streamObject"
	AISpanDoGenerate     = ".doGenerate" // suffix: "ai.generateText.doGenerate"
	AISpanDoStream       = ".doStream"   // suffix: "ai.streamText.doStream"
	AISpanToolCall       = "ai.toolCall"
	AISpanPrefix         = "ai."
)
