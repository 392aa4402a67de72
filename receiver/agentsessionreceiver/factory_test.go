// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver/internal/metadata"
)

func TestNewFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	assert.Equal(t, metadata.TracesStability, f.TracesStability())
	assert.Equal(t, component.StabilityLevelAlpha, f.TracesStability())

	cfg := f.CreateDefaultConfig()
	require.NoError(t, componenttest.CheckConfigStruct(cfg))
	require.NoError(t, cfg.(*Config).Validate())

	// Traces only: an AgentSession becomes spans.
	set := receivertest.NewNopSettings(metadata.Type)
	_, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	assert.Error(t, err)
	_, err = f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	assert.Error(t, err)
}

func TestCreateTracesWithDefaultConfig(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NotNil(t, r)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.Shutdown(context.Background()))
}

// TestLifecycle is the lifecycle test mdatagen would generate (metadata.yaml
// tests.skip_lifecycle), with the channel on and its SQLite store in t.TempDir() instead
// of the package directory.
func TestLifecycle(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "agenteval.db")
	cfg := channelConfig(StoreConfig{Driver: store.DriverSQLite, DSN: configopaque.String(dsn)})
	r, err := NewFactory().CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.Shutdown(context.Background()))
	assert.FileExists(t, dsn)
}
