// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalhandoffextension

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	tests := []struct {
		id      component.ID
		want    component.Config
		wantErr string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig()},
		{id: component.NewIDWithName(metadata.Type, "small"), want: &Config{MaxResults: 128}},
		{id: component.NewIDWithName(metadata.Type, "zero"), wantErr: "max_results must be positive, got 0"},
		{id: component.NewIDWithName(metadata.Type, "huge"), wantErr: "max_results must be at most 1048576 (allocated at start), got 4000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.(*Config).Validate()
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}
