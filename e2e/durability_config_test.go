// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter"
)

// TestConfigKeepsAnalysesThroughOutages: the repository's config.yaml gives the agenteval
// exporter a persistent queue on a file_storage extension the service starts, and retries
// that never give up (docs/decisions/result-durability.md): with the in-memory queue a
// SIGTERM or kill -9 while the store was down lost 100/100 analyses. The agentsession
// processor keeps what it could not save at shutdown in the same extension
// (docs/decisions/sessions.md §4.8).
func TestConfigKeepsAnalysesThroughOutages(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("..", "config.yaml"))
	require.NoError(t, err)
	exp, err := cm.Sub("exporters::agenteval")
	require.NoError(t, err)
	cfg := agentevalexporter.NewFactory().CreateDefaultConfig().(*agentevalexporter.Config)
	require.NoError(t, exp.Unmarshal(cfg))

	q := cfg.QueueConfig.Get()
	require.NotNil(t, q, "sending_queue enabled")
	require.NotNil(t, q.StorageID, "sending_queue.storage set")
	assert.Equal(t, component.MustNewIDWithName("file_storage", "agenteval"), *q.StorageID)
	assert.Positive(t, q.QueueSize)
	assert.True(t, cfg.RetryConfig.Enabled)
	assert.Zero(t, cfg.RetryConfig.MaxElapsedTime, "retry_on_failure.max_elapsed_time: 0 (never give up)")

	assert.Equal(t, q.StorageID.String(), cm.Get("processors::agentsession::continuation::storage"),
		"the processor keeps the records it could not save at shutdown in the same extension")
	assert.True(t, cm.IsSet("extensions::file_storage/agenteval::directory"))
	assert.Contains(t, cm.Get("service::extensions"), "file_storage/agenteval")
}
