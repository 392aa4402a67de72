// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/tracker"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

// defaultMaxTextBytes is max_text_bytes's default (README). The extractor's fallback for
// callers that set no cap, conventions.DefaultMaxTextBytes, is still 32 KiB: see
// docs/decisions/maintenance.md.
const defaultMaxTextBytes = 4096

// NewFactory returns the factory of the agentsession processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTracesProcessor, metadata.TracesStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		SessionKeys:        conventions.DefaultSessionKeys(),
		TurnSettle:         tracker.DefaultTurnSettle,
		TurnTimeout:        tracker.DefaultTurnTimeout,
		SessionTimeout:     tracker.DefaultSessionTimeout,
		MaxSessionDuration: tracker.DefaultMaxSessionDuration,
		MaxSessions:        tracker.DefaultMaxSessions,
		MaxSpansPerSession: tracker.DefaultMaxSpansPerSession,
		MaxTextBytes:       defaultMaxTextBytes,
		EndAttribute:       semconv.AgentEvalSessionEnd,
		Scoring:            evaluation.DefaultConfig(),
		Emit:               EmitConfig{ToolCalls: EmitToolCallsIssues, Interactions: EmitToolCallsIssues, MaxSessionSpanBytes: defaultMaxSessionSpanBytes},
		Continuation:       ContinuationConfig{MaxRecords: defaultContinuationMaxRecords},
		References:         defaultReferencesConfig(),
	}
}

func createTracesProcessor(
	_ context.Context,
	set processor.Settings,
	cfg component.Config,
	next consumer.Traces,
) (processor.Traces, error) {
	return newAgentSessionProcessor(set, next, cfg.(*Config))
}
