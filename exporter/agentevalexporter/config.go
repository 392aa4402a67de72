// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// StoreDriver names a result store backend (internal/store.Open's driver argument).
type StoreDriver string

// Store drivers.
const (
	// StoreDriverSQLite is the embedded pure-Go SQLite store; the DSN is a database file path.
	StoreDriverSQLite StoreDriver = store.DriverSQLite
	// StoreDriverPostgres is PostgreSQL through pgx; the DSN is a postgres:// URL or a
	// key=value connection string.
	StoreDriverPostgres StoreDriver = store.DriverPostgres
)

// Config is the configuration of the agenteval exporter (docs/architecture.md §7, §11).
type Config struct {
	// TimeoutConfig bounds one export (decode, metrics and store writes of one batch).
	// Default 5s (exporterhelper's default).
	TimeoutConfig exporterhelper.TimeoutConfig `mapstructure:",squash"`
	// QueueConfig is exporterhelper's sending queue. It holds only the authenticated
	// session evaluation spans of each batch (authenticate.go): turn results are
	// recorded before it, the application's spans never enter it.
	// Default: enabled, in memory, 1000 requests. Set `sending_queue.storage` to a
	// storage extension id (e.g. file_storage) for a persistent queue that survives
	// restarts, crashes and outages (config.yaml does; docs/decisions/result-durability.md).
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	// RetryConfig retries batches whose analyses could not be stored. Default: enabled,
	// 5s initial, 30s max interval and no give-up (max_elapsed_time 0): the queue's
	// size bounds what waits for the store.
	RetryConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// Store is the result store. Default: SQLite at ./data/agenteval.db, 720h retention.
	Store StoreConfig `mapstructure:"store"`
	// Prometheus is the metrics endpoint. Default: localhost:8889, path /metrics.
	Prometheus PrometheusConfig `mapstructure:"prometheus"`
	// API is the query API server (confighttp: TLS, CORS and the collector's authenticator
	// extensions via `auth`). Default endpoint: localhost:8890.
	API confighttp.ServerConfig `mapstructure:"api"`
	// UI is the web UI at / on the API server. Default: enabled, no trace links.
	UI UIConfig `mapstructure:"ui"`
	// Console is what the exporter logs (info level, the collector's logger) per
	// evaluation: "none" (default) or "summary", one line per turn result and per stored
	// session analysis, without the analysis payload (console.go).
	Console ConsoleMode `mapstructure:"console"`
	// SigningKey verifies the agent_eval.signature of each turn and session evaluation
	// span; spans without a valid one are ignored and counted
	// (otelcol_exporter_agenteval_unauthenticated_spans), so an OTLP client cannot
	// create or overwrite stored analyses (docs/decisions/evaluation-authenticity.md).
	// It must equal the agentsession processor's signing_key. Empty (default): the
	// random key of this process, which the processor of the same collector also uses.
	SigningKey configopaque.String `mapstructure:"signing_key"`
	// Handoff names an agenteval_handoff extension (in service::extensions) through
	// which the agentsession processor of this collector, naming the same extension,
	// passes its turn and session results in process: a span whose result is found
	// there is recorded from it, with no signature check and no decode; with a
	// persistent queue (QueueConfig's storage set) session spans are still checked
	// before the queue, only their decode is skipped. Any other span is checked and
	// decoded as without it (docs/decisions/performance.md §8.41).
	// Default: none (off).
	Handoff *component.ID `mapstructure:"handoff"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// StoreConfig selects and tunes the result store.
type StoreConfig struct {
	// Driver is "sqlite" or "postgres". Default "sqlite".
	Driver StoreDriver `mapstructure:"driver"`
	// DSN is the SQLite database file path or the PostgreSQL connection string (kept
	// opaque: it may hold a password). Default "./data/agenteval.db".
	DSN configopaque.String `mapstructure:"dsn"`
	// Retention deletes sessions stored longer ago than this (by this collector's clock,
	// not the span times), checked at start and then every hour. 0 keeps everything. Default 720h (30 days).
	Retention time.Duration `mapstructure:"retention"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// PrometheusConfig is the Prometheus scrape endpoint: its own HTTP server (confighttp)
// serving the exporter's own registry at /metrics.
type PrometheusConfig struct {
	confighttp.ServerConfig `mapstructure:",squash"`
	// MaxLabelValues caps the distinct values kept per label (agent, tool, issue...);
	// further values are reported as "other". Default 100.
	MaxLabelValues int `mapstructure:"max_label_values"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ confmap.Validator = (*Config)(nil)

// Validate checks the exporter configuration. Errors name the YAML key and, for enums,
// list the valid values. Nested configs (sending_queue, retry_on_failure, TLS...) are
// validated by the collector through their own Validate methods.
func (cfg *Config) Validate() error {
	var errs []error
	if !store.ValidDriver(string(cfg.Store.Driver)) {
		errs = append(errs, fmt.Errorf("store.driver: invalid value %q, valid values are %q", cfg.Store.Driver, store.Drivers()))
	}
	if cfg.Store.DSN == "" {
		errs = append(errs, errors.New("store.dsn: must not be empty"))
	} else if cfg.Store.Driver == StoreDriverPostgres && cfg.Store.DSN == defaultSQLiteDSN {
		errs = append(errs, fmt.Errorf("store.dsn: %q is the SQLite default; set a PostgreSQL DSN (postgres://user:pass@host:5432/db) when store.driver is %q", defaultSQLiteDSN, StoreDriverPostgres))
	} else if err := store.ValidateDSN(string(cfg.Store.Driver), string(cfg.Store.DSN)); err != nil {
		errs = append(errs, fmt.Errorf("store.dsn: %w", err))
	}
	if cfg.Store.Retention < 0 {
		errs = append(errs, fmt.Errorf("store.retention: must be >= 0 (0 keeps everything), got %s", cfg.Store.Retention))
	}
	if cfg.Prometheus.MaxLabelValues < 1 {
		errs = append(errs, fmt.Errorf("prometheus.max_label_values: must be >= 1, got %d", cfg.Prometheus.MaxLabelValues))
	}
	if cfg.Prometheus.NetAddr.Endpoint == "" {
		errs = append(errs, errors.New("prometheus.endpoint: must not be empty"))
	}
	if cfg.API.NetAddr.Endpoint == "" {
		errs = append(errs, errors.New("api.endpoint: must not be empty"))
	}
	if sameFixedEndpoint(cfg.Prometheus.NetAddr.Endpoint, cfg.API.NetAddr.Endpoint) {
		errs = append(errs, fmt.Errorf("prometheus.endpoint and api.endpoint: both are %q; each server needs its own port", cfg.API.NetAddr.Endpoint))
	}
	if !slices.Contains(validConsoleModes, cfg.Console) {
		errs = append(errs, fmt.Errorf("console: invalid value %q, valid values are %q", cfg.Console, validConsoleModes))
	}
	if n := len(cfg.SigningKey); n > 0 && n < evalspan.MinSigningKeyBytes {
		errs = append(errs, fmt.Errorf("signing_key: must be at least %d bytes (or empty for a random key per process), got %d", evalspan.MinSigningKeyBytes, n))
	}
	errs = append(errs, cfg.UI.validate()...)
	return errors.Join(errs...)
}

// sameFixedEndpoint reports whether a and b are the same host:port with a fixed port
// (port 0 asks the OS for a free port, so two ":0" endpoints never collide).
func sameFixedEndpoint(a, b string) bool {
	if a == "" || a != b {
		return false
	}
	_, port, err := net.SplitHostPort(a)
	return err != nil || port != "0"
}

var _ component.Config = (*Config)(nil)
