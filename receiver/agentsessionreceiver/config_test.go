// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agenteval/agenteval-collector/internal/channel"
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
			expected: func() *Config {
				c := createDefaultConfig().(*Config)
				c.ServerConfig, c.EndSession, c.ServiceName = custom, false, "replay"
				return c
			}(),
		},
		{
			id: component.NewIDWithName(metadata.Type, "channel"),
			expected: func() *Config {
				c := createDefaultConfig().(*Config)
				admin := confighttp.NewDefaultServerConfig()
				admin.NetAddr.Endpoint = "0.0.0.0:9912"
				admin.MaxRequestBodySize = 1 << 20
				admin.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: component.MustNewIDWithName("basicauth", "admin")}})
				c.Channel = configoptional.Some(ChannelConfig{
					Evaluations: []channel.Definition{{ID: "pair-programming", Name: "Pair programming class",
						Type: channel.KindLiveClassWork, Description: "Several agents solve one task together."}},
					EvaluationFiles:    []string{"testdata/evaluations/*.md"},
					Store:              StoreConfig{Driver: "postgres", DSN: "postgres://agenteval:secret@db.internal:5432/agenteval"},
					Admin:              admin,
					MaxMessageBytes:    1024,
					MaxSessionMessages: 500,
					MaxPageBytes:       1 << 20,
				})
				return c
			}(),
		},
		{
			id: component.NewIDWithName(metadata.Type, "channel_defaults"),
			expected: func() *Config {
				c := createDefaultConfig().(*Config)
				ch := c.Channel.GetOrInsertDefault()
				ch.EvaluationFiles = []string{"testdata/evaluations/SIP-5.md"}
				c.Channel = configoptional.Some(*ch)
				return c
			}(),
		},
		{
			id: component.NewIDWithName(metadata.Type, "channel_bad"),
			expectedErr: []string{
				`channel.evaluations[0]: id: "bad id!" must be 1-128 letters`,
				`channel.store.driver: invalid value "mysql"`,
				"channel.store.dsn: must not be empty",
				`channel.admin.auth: required when the admin endpoint "0.0.0.0:9914" is not loopback-only`,
				"channel.max_message_bytes: must be >= 0",
				"channel.max_session_messages: must be >= 0",
				"channel.max_page_bytes: must be >= 0",
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "channel_bad_files"),
			expectedErr: []string{
				`channel.evaluation_files: testdata/evaluations/bad-type.md.txt: type: "simple_pass_fail" is not served by the channel`,
				`channel.admin.endpoint: "localhost:8891" is the receiver's endpoint`,
				"channel.store.dsn: not a PostgreSQL DSN",
			},
		},
		{
			id:          component.NewIDWithName(metadata.Type, "channel_admin_noport"),
			expectedErr: []string{`channel.admin.endpoint: "localhost" has no port: want host:port (e.g. localhost:8892)`},
		},
		{
			// Typically relative paths read from another working directory.
			id: component.NewIDWithName(metadata.Type, "channel_files_match_nothing"),
			expectedErr: []string{`channel.evaluation_files: no file matches ["testdata/evaluations/no-such-*.md"] (relative paths are read from the working directory "`,
				`define at least one evaluation there or in channel.evaluations`},
		},
		{
			id:          component.NewIDWithName(metadata.Type, "channel_empty"),
			expectedErr: []string{"channel.evaluations: define at least one evaluation"},
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
	assert.Equal(t, "localhost:8891", cfg.NetAddr.Endpoint, "loopback only by default (docs/architecture.md §11)")
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
