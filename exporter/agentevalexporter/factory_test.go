// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadata"
)

func TestNewFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, metadata.TracesStability, f.TracesStability())
	require.NoError(t, componenttest.CheckConfigStruct(f.CreateDefaultConfig()))

	// Traces only: the exporter reads evaluation spans.
	_, err := f.CreateMetrics(context.Background(), exportertest.NewNopSettings(metadata.Type), f.CreateDefaultConfig())
	assert.Error(t, err)
	_, err = f.CreateLogs(context.Background(), exportertest.NewNopSettings(metadata.Type), f.CreateDefaultConfig())
	assert.Error(t, err)
}

func TestCreateTraces(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NotNil(t, exp)
	assert.False(t, exp.Capabilities().MutatesData)
	// Never started: shutdown must still succeed and release nothing twice.
	require.NoError(t, exp.Shutdown(context.Background()))
}
