// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		id       component.ID
		expected func() *Config
	}{
		{
			id:       component.NewID(metadata.Type),
			expected: func() *Config { return createDefaultConfig().(*Config) },
		},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			expected: func() *Config {
				cfg := createDefaultConfig().(*Config)
				cfg.TimeoutConfig.Timeout = 10 * time.Second
				q := exporterhelper.NewDefaultQueueConfig()
				q.NumConsumers = 2
				q.QueueSize = 500
				storage := component.MustNewIDWithName("file_storage", "agenteval")
				q.StorageID = &storage
				cfg.QueueConfig = configoptional.Some(q)
				cfg.RetryConfig.InitialInterval = time.Second
				cfg.RetryConfig.MaxInterval = 10 * time.Second
				cfg.RetryConfig.MaxElapsedTime = time.Hour
				cfg.Store = StoreConfig{
					Driver:    StoreDriverPostgres,
					DSN:       "postgres://agenteval:secret@db.example:5432/agenteval?sslmode=disable",
					Retention: 168 * time.Hour,
				}
				cfg.Prometheus.NetAddr.Endpoint = "0.0.0.0:9464"
				cfg.Prometheus.MaxLabelValues = 20
				cfg.API.NetAddr.Endpoint = "0.0.0.0:9080"
				cfg.API.Auth = configoptional.Some(confighttp.AuthConfig{
					Config: configauth.Config{AuthenticatorID: component.MustNewIDWithName("basicauth", "api")},
				})
				cfg.UI.TraceURLTemplate = "http://jaeger.example:16686/trace/{trace_id}?uiFind={span_id}"
				cfg.UI.MaxEventClients = 4
				cfg.UI.EventQueueSize = 500
				cfg.Console = ConsoleSummary
				return cfg
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "no_queue"),
			expected: func() *Config {
				cfg := createDefaultConfig().(*Config)
				cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
				cfg.Store.DSN = "/var/lib/agenteval/results.db"
				cfg.Store.Retention = 0
				return cfg
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "handoff"),
			expected: func() *Config {
				cfg := createDefaultConfig().(*Config)
				id := component.MustNewID("agenteval_handoff")
				cfg.Handoff = &id
				return cfg
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "no_ui"),
			expected: func() *Config {
				cfg := createDefaultConfig().(*Config)
				cfg.UI.Enabled = false
				return cfg
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			require.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, tt.expected(), cfg)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.Validate(cfg))
	// docs/architecture.md §11: loopback defaults, SQLite under ./data.
	assert.Equal(t, "localhost:8889", cfg.Prometheus.NetAddr.Endpoint)
	assert.Equal(t, "localhost:8890", cfg.API.NetAddr.Endpoint)
	assert.Equal(t, StoreDriverSQLite, cfg.Store.Driver)
	assert.Equal(t, "./data/agenteval.db", string(cfg.Store.DSN))
	assert.Equal(t, 720*time.Hour, cfg.Store.Retention)
	assert.Equal(t, 100, cfg.Prometheus.MaxLabelValues)
	assert.True(t, cfg.QueueConfig.HasValue(), "sending_queue is on by default")
	assert.True(t, cfg.RetryConfig.Enabled, "retry_on_failure is on by default")
	assert.True(t, cfg.UI.Enabled, "the web UI is on by default")
	assert.Empty(t, cfg.UI.TraceURLTemplate, "no trace links by default")
	assert.Equal(t, 32, cfg.UI.MaxEventClients)
	assert.Equal(t, 4096, cfg.UI.EventQueueSize)
	assert.Equal(t, ConsoleNone, cfg.Console, "no per-evaluation log lines by default")
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*Config)
		expectedErr string
	}{
		{
			name:   "default",
			mutate: func(*Config) {},
		},
		{
			name:        "unknown driver",
			mutate:      func(c *Config) { c.Store.Driver = "mysql" },
			expectedErr: `store.driver: invalid value "mysql", valid values are ["sqlite" "postgres"]`,
		},
		{
			name:        "empty driver",
			mutate:      func(c *Config) { c.Store.Driver = "" },
			expectedErr: `store.driver: invalid value "", valid values are ["sqlite" "postgres"]`,
		},
		{
			name:        "empty dsn",
			mutate:      func(c *Config) { c.Store.DSN = "" },
			expectedErr: "store.dsn: must not be empty",
		},
		{
			name:        "postgres with the sqlite default dsn",
			mutate:      func(c *Config) { c.Store.Driver = StoreDriverPostgres },
			expectedErr: `store.dsn: "./data/agenteval.db" is the SQLite default; set a PostgreSQL DSN (postgres://user:pass@host:5432/db) when store.driver is "postgres"`,
		},
		{
			name: "postgres with an unparseable dsn",
			mutate: func(c *Config) {
				c.Store.Driver = StoreDriverPostgres
				c.Store.DSN = "not a dsn"
			},
			expectedErr: "store.dsn: not a PostgreSQL DSN (a URL postgres://user:pass@host:5432/db, or key=value pairs): invalid keyword/value",
		},
		{
			name: "postgres with a dsn",
			mutate: func(c *Config) {
				c.Store.Driver = StoreDriverPostgres
				c.Store.DSN = "postgres://localhost/agenteval"
			},
		},
		{
			name:        "negative retention",
			mutate:      func(c *Config) { c.Store.Retention = -time.Hour },
			expectedErr: "store.retention: must be >= 0 (0 keeps everything), got -1h0m0s",
		},
		{
			name:   "zero retention keeps everything",
			mutate: func(c *Config) { c.Store.Retention = 0 },
		},
		{
			name:        "short signing_key",
			mutate:      func(c *Config) { c.SigningKey = "short" },
			expectedErr: "signing_key: must be at least 16 bytes (or empty for a random key per process), got 5",
		},
		{
			name:   "signing_key of 16 bytes",
			mutate: func(c *Config) { c.SigningKey = "0123456789abcdef" },
		},
		{
			name:        "zero max_label_values",
			mutate:      func(c *Config) { c.Prometheus.MaxLabelValues = 0 },
			expectedErr: "prometheus.max_label_values: must be >= 1, got 0",
		},
		{
			name:        "empty prometheus endpoint",
			mutate:      func(c *Config) { c.Prometheus.NetAddr.Endpoint = "" },
			expectedErr: "prometheus.endpoint: must not be empty",
		},
		{
			name:        "empty api endpoint",
			mutate:      func(c *Config) { c.API.NetAddr.Endpoint = "" },
			expectedErr: "api.endpoint: must not be empty",
		},
		{
			name: "same endpoint twice",
			mutate: func(c *Config) {
				c.Prometheus.NetAddr.Endpoint = "localhost:9000"
				c.API.NetAddr.Endpoint = "localhost:9000"
			},
			expectedErr: `prometheus.endpoint and api.endpoint: both are "localhost:9000"; each server needs its own port`,
		},
		{
			name: "port 0 twice is fine",
			mutate: func(c *Config) {
				c.Prometheus.NetAddr.Endpoint = "localhost:0"
				c.API.NetAddr.Endpoint = "localhost:0"
			},
		},
		{
			name: "trace url template (Tempo in Grafana Explore)",
			mutate: func(c *Config) {
				c.UI.TraceURLTemplate = "https://grafana.example/explore?left=%7B%22queries%22:%5B%7B%22query%22:%22{trace_id}%22%7D%5D%7D"
			},
		},
		{
			name:        "trace url template without trace_id",
			mutate:      func(c *Config) { c.UI.TraceURLTemplate = "http://jaeger:16686/search?service={session_id}" },
			expectedErr: `ui.trace_url_template: "http://jaeger:16686/search?service={session_id}" has no {trace_id} placeholder`,
		},
		{
			name:        "trace url template with an unknown placeholder",
			mutate:      func(c *Config) { c.UI.TraceURLTemplate = "http://jaeger:16686/trace/{trace_id}?x={traceid}" },
			expectedErr: `ui.trace_url_template: "http://jaeger:16686/trace/{trace_id}?x={traceid}": unknown placeholder {traceid}; valid placeholders are {trace_id}, {span_id} and {session_id}`,
		},
		{
			name:        "trace url template not http",
			mutate:      func(c *Config) { c.UI.TraceURLTemplate = "javascript:alert('{trace_id}')" },
			expectedErr: `ui.trace_url_template: "javascript:alert('{trace_id}')": scheme must be http or https`,
		},
		{
			name:        "trace url template relative",
			mutate:      func(c *Config) { c.UI.TraceURLTemplate = "/trace/{trace_id}" },
			expectedErr: `ui.trace_url_template: "/trace/{trace_id}": scheme must be http or https`,
		},
		{
			name:        "zero max_event_clients",
			mutate:      func(c *Config) { c.UI.MaxEventClients = 0 },
			expectedErr: "ui.max_event_clients: must be >= 1, got 0",
		},
		{
			name:        "zero event_queue_size",
			mutate:      func(c *Config) { c.UI.EventQueueSize = 0 },
			expectedErr: "ui.event_queue_size: must be >= 1, got 0",
		},
		{
			name: "ui disabled still validates its keys",
			mutate: func(c *Config) {
				c.UI.Enabled = false
				c.UI.MaxEventClients = -1
			},
			expectedErr: "ui.max_event_clients: must be >= 1, got -1",
		},
		{
			name:        "unknown console mode",
			mutate:      func(c *Config) { c.Console = "verbose" },
			expectedErr: "console: invalid value \"verbose\", valid values are [\"none\" \"summary\"]",
		},
		{
			name:        "empty console mode",
			mutate:      func(c *Config) { c.Console = "" },
			expectedErr: "console: invalid value \"\", valid values are [\"none\" \"summary\"]",
		},
		{
			name: "several errors are all reported",
			mutate: func(c *Config) {
				c.Store.Driver = "oracle"
				c.Prometheus.MaxLabelValues = -1
			},
			expectedErr: "store.driver: invalid value \"oracle\", valid values are [\"sqlite\" \"postgres\"]\n" +
				"prometheus.max_label_values: must be >= 1, got -1",
		},
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

func TestConfigValidateNested(t *testing.T) {
	// sending_queue is validated by exporterhelper's own Validate, reached through
	// confmap.Validate as the collector does.
	cfg := createDefaultConfig().(*Config)
	q := exporterhelper.NewDefaultQueueConfig()
	q.QueueSize = -1
	cfg.QueueConfig = configoptional.Some(q)
	assert.ErrorContains(t, confmap.Validate(cfg), "sending_queue")
}
