// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

const (
	defaultTurnSettle         = 2 * time.Second
	defaultTurnTimeout        = 60 * time.Second
	defaultSessionTimeout     = 5 * time.Minute
	defaultMaxSessionDuration = time.Hour
	defaultMaxSessions        = 10_000
	defaultMaxSpansPerSession = 10_000
	defaultMaxTextBytes       = 4096
	defaultEndAttribute       = "agent_eval.session.end"
)

// NewFactory returns the factory of the agentsession processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTracesProcessor, metadata.TracesStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		SessionKeys:        session.DefaultSessionKeys(),
		TurnSettle:         defaultTurnSettle,
		TurnTimeout:        defaultTurnTimeout,
		SessionTimeout:     defaultSessionTimeout,
		MaxSessionDuration: defaultMaxSessionDuration,
		MaxSessions:        defaultMaxSessions,
		MaxSpansPerSession: defaultMaxSpansPerSession,
		MaxTextBytes:       defaultMaxTextBytes,
		EndAttribute:       defaultEndAttribute,
		Scoring:            evaluation.DefaultConfig(),
		Emit:               EmitConfig{ToolCalls: EmitToolCallsIssues},
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
