// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	custom := confighttp.NewDefaultServerConfig()
	custom.NetAddr.Endpoint = "127.0.0.1:9911"
	custom.MaxRequestBodySize = 1 << 20

	tests := []struct {
		id          component.ID
		expected    *Config
		expectedErr []string
	}{
		{
			id:       component.NewID(metadata.Type),
			expected: createDefaultConfig().(*Config),
		},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			expected: &Config{
				ServerConfig: custom,
				EndSession:   false,
				ServiceName:  "replay",
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "bad"),
			expectedErr: []string{
				"endpoint: must not be empty",
				"max_request_body_size: must be >= 0 bytes",
				"service_name: must not be empty",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tt.expectedErr) > 0 {
				require.Error(t, err)
				for _, e := range tt.expectedErr {
					assert.ErrorContains(t, err, e)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.expected, cfg)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "localhost:8891", cfg.NetAddr.Endpoint, "loopback only by default (DESIGN.md §11)")
	assert.Equal(t, int64(10<<20), cfg.MaxRequestBodySize)
	assert.True(t, cfg.EndSession)
	assert.Equal(t, "agentsession", cfg.ServiceName)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*Config)
		expectedErr string
	}{
		{name: "default is valid", mutate: func(*Config) {}},
		{name: "zero body size means confighttp's default", mutate: func(c *Config) { c.MaxRequestBodySize = 0 }},
		{name: "empty endpoint", mutate: func(c *Config) { c.NetAddr.Endpoint = "" }, expectedErr: "endpoint: must not be empty (e.g. localhost:8891)"},
		{name: "negative body size", mutate: func(c *Config) { c.MaxRequestBodySize = -5 }, expectedErr: "max_request_body_size: must be >= 0 bytes (0 = confighttp's 20 MiB), got -5"},
		{name: "empty service name", mutate: func(c *Config) { c.ServiceName = "" }, expectedErr: "service_name: must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tt.mutate(cfg)
			err := cfg.Validate()
			if tt.expectedErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.expectedErr)
		})
	}
}
