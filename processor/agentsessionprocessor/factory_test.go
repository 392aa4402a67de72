// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

func TestNewFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, metadata.TracesStability, f.TracesStability())
	assert.Equal(t, component.StabilityLevelAlpha, f.TracesStability())

	cfg := f.CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, cfg.(*Config).Validate())

	// Traces only: sessions are built from spans.
	set := processortest.NewNopSettings(metadata.Type)
	_, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	assert.Error(t, err)
	_, err = f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	assert.Error(t, err)
}

func TestCreateTracesWithDefaultConfig(t *testing.T) {
	f := NewFactory()
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NotNil(t, p)
	// The input batch is passed on untouched; evaluation spans go downstream in batches of
	// their own.
	assert.False(t, p.Capabilities().MutatesData)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.Shutdown(context.Background()))
}
