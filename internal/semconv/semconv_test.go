// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv

import (
	"strings"
	"testing"

	otelsemconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// TestGenAIKeysMatchOTelSemconv cross-checks our GenAI constants against the last Go
// semconv package that carries them (docs/decisions/conventions.md).
func TestGenAIKeysMatchOTelSemconv(t *testing.T) {
	cases := []struct{ ours, theirs string }{
		{GenAIOperationName, string(otelsemconv.GenAIOperationNameKey)},
		{GenAIProviderName, string(otelsemconv.GenAIProviderNameKey)},
		{GenAIAgentID, string(otelsemconv.GenAIAgentIDKey)},
		{GenAIAgentName, string(otelsemconv.GenAIAgentNameKey)},
		{GenAIAgentDescription, string(otelsemconv.GenAIAgentDescriptionKey)},
		{GenAIAgentVersion, string(otelsemconv.GenAIAgentVersionKey)},
		{GenAIConversationID, string(otelsemconv.GenAIConversationIDKey)},
		{GenAIDataSourceID, string(otelsemconv.GenAIDataSourceIDKey)},
		{GenAIWorkflowName, string(otelsemconv.GenAIWorkflowNameKey)},
		{GenAIToolName, string(otelsemconv.GenAIToolNameKey)},
		{GenAIToolCallID, string(otelsemconv.GenAIToolCallIDKey)},
		{GenAIToolType, string(otelsemconv.GenAIToolTypeKey)},
		{GenAIToolDescription, string(otelsemconv.GenAIToolDescriptionKey)},
		{GenAIToolCallArguments, string(otelsemconv.GenAIToolCallArgumentsKey)},
		{GenAIToolCallResult, string(otelsemconv.GenAIToolCallResultKey)},
		{GenAIToolDefinitions, string(otelsemconv.GenAIToolDefinitionsKey)},
		{GenAIInputMessages, string(otelsemconv.GenAIInputMessagesKey)},
		{GenAIOutputMessages, string(otelsemconv.GenAIOutputMessagesKey)},
		{GenAISystemInstructions, string(otelsemconv.GenAISystemInstructionsKey)},
		{GenAIOutputType, string(otelsemconv.GenAIOutputTypeKey)},
		{GenAIPromptName, string(otelsemconv.GenAIPromptNameKey)},
		{GenAIRequestModel, string(otelsemconv.GenAIRequestModelKey)},
		{GenAIResponseModel, string(otelsemconv.GenAIResponseModelKey)},
		{GenAIResponseID, string(otelsemconv.GenAIResponseIDKey)},
		{GenAIResponseFinishReasons, string(otelsemconv.GenAIResponseFinishReasonsKey)},
		{GenAIUsageInputTokens, string(otelsemconv.GenAIUsageInputTokensKey)},
		{GenAIUsageOutputTokens, string(otelsemconv.GenAIUsageOutputTokensKey)},
		{GenAIUsageCacheReadTokens, string(otelsemconv.GenAIUsageCacheReadInputTokensKey)},
		{GenAIUsageCacheCreateTokens, string(otelsemconv.GenAIUsageCacheCreationInputTokensKey)},
		{GenAIUsageReasoningTokens, string(otelsemconv.GenAIUsageReasoningOutputTokensKey)},
		{GenAIEvaluationName, string(otelsemconv.GenAIEvaluationNameKey)},
		{GenAIEvaluationScoreValue, string(otelsemconv.GenAIEvaluationScoreValueKey)},
		{GenAIEvaluationScoreLabel, string(otelsemconv.GenAIEvaluationScoreLabelKey)},
		{GenAIEvaluationExplanation, string(otelsemconv.GenAIEvaluationExplanationKey)},
		{ErrorType, string(otelsemconv.ErrorTypeKey)},
		{ServerAddress, string(otelsemconv.ServerAddressKey)},
		{ServerPort, string(otelsemconv.ServerPortKey)},
		{SessionID, string(otelsemconv.SessionIDKey)},
		{UserID, string(otelsemconv.UserIDKey)},
		{ServiceName, string(otelsemconv.ServiceNameKey)},
		{OpChat, otelsemconv.GenAIOperationNameChat.Value.AsString()},
		{OpGenerateContent, otelsemconv.GenAIOperationNameGenerateContent.Value.AsString()},
		{OpTextCompletion, otelsemconv.GenAIOperationNameTextCompletion.Value.AsString()},
		{OpEmbeddings, otelsemconv.GenAIOperationNameEmbeddings.Value.AsString()},
		{OpRetrieval, otelsemconv.GenAIOperationNameRetrieval.Value.AsString()},
		{OpCreateAgent, otelsemconv.GenAIOperationNameCreateAgent.Value.AsString()},
		{OpInvokeAgent, otelsemconv.GenAIOperationNameInvokeAgent.Value.AsString()},
		{OpExecuteTool, otelsemconv.GenAIOperationNameExecuteTool.Value.AsString()},
		{OpInvokeWorkflow, otelsemconv.GenAIOperationNameInvokeWorkflow.Value.AsString()},
	}
	for _, c := range cases {
		if c.ours != c.theirs {
			t.Errorf("constant %q differs from otel semconv v1.41.0 %q", c.ours, c.theirs)
		}
	}
}

// TestOwnKeysAreNamespaced keeps our own keys under agent_eval.* (docs/architecture.md §6).
func TestOwnKeysAreNamespaced(t *testing.T) {
	for _, k := range []string{AgentEvalKind, AgentEvalSessionID, AgentEvalToolIssues, AgentEvalPartial,
		AgentEvalTurnPrefix, AgentEvalSessionPrefix, AgentEvalAnalysis, AgentEvalJudge, AgentEvalSessionEnd, AgentEvalTaskCompleted,
		AgentEvalChannelEvaluationID, AgentEvalChannelSessionKind, AgentEvalChannelMessageID, AgentEvalChannelMessageRole,
		AgentEvalChannelMessageSequence, AgentEvalChannelMessageContent, AgentEvalChannelSenderID,
		AgentEvalChannelRegistrationID, AgentEvalChannelResultID, AgentEvalChannelProctorID, AgentEvalChannelFeedback,
		AgentEvalChannelTranscript} {
		if !strings.HasPrefix(k, AgentEvalPrefix) {
			t.Errorf("%q is not under %q", k, AgentEvalPrefix)
		}
	}
	if EvalSpanTurn != "evaluate turn" || EvalSpanAgentSession != "evaluate agent_session" {
		t.Errorf("evaluation span names drifted from docs/architecture.md §6: %q %q", EvalSpanTurn, EvalSpanAgentSession)
	}
}
