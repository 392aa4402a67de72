// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

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

// TestLifecycle is the lifecycle test mdatagen would generate (metadata.yaml
// tests.skip_lifecycle), with the SQLite store in t.TempDir() instead of the package
// directory: create, start, consume a span, shut down.
func TestLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Prometheus.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.API.NetAddr.Endpoint = "127.0.0.1:0"
	dsn := filepath.Join(t.TempDir(), "agenteval.db")
	cfg.Store.DSN = configopaque.String(dsn)

	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("test_span")
	td.MarkReadOnly()
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.FileExists(t, dsn)
}
