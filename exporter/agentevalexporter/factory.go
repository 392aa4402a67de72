// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadata"
)

// Defaults (docs/architecture.md §7, §11).
const (
	defaultSQLiteDSN          = "./data/agenteval.db"
	defaultRetention          = 720 * time.Hour
	defaultPrometheusEndpoint = "localhost:8889"
	defaultAPIEndpoint        = "localhost:8890"
	defaultMaxLabelValues     = 100
)

// NewFactory returns the factory of the `agenteval` exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createDefaultConfig() component.Config {
	prom := confighttp.NewDefaultServerConfig()
	prom.NetAddr.Endpoint = defaultPrometheusEndpoint
	api := confighttp.NewDefaultServerConfig()
	api.NetAddr.Endpoint = defaultAPIEndpoint
	return &Config{
		TimeoutConfig: exporterhelper.NewDefaultTimeoutConfig(),
		QueueConfig:   configoptional.Some(exporterhelper.NewDefaultQueueConfig()),
		RetryConfig:   configretry.NewDefaultBackOffConfig(),
		Store: StoreConfig{
			Driver:    StoreDriverSQLite,
			DSN:       defaultSQLiteDSN,
			Retention: defaultRetention,
		},
		Prometheus: PrometheusConfig{
			ServerConfig:   prom,
			MaxLabelValues: defaultMaxLabelValues,
		},
		API:     api,
		UI:      defaultUIConfig(),
		Console: ConsoleNone,
	}
}

func createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	c := cfg.(*Config)
	exp, err := newAgentEvalExporter(set, c)
	if err != nil {
		return nil, err
	}
	return newTracesExporter(ctx, set, c, exp)
}

// newTracesExporter wraps exp in exporterhelper with the configured timeout, queue and
// retry (tests use it to keep a handle on exp).
func newTracesExporter(ctx context.Context, set exporter.Settings, c *Config, exp *agentEvalExporter) (exporter.Traces, error) {
	return exporterhelper.NewTraces(ctx, set, c,
		exp.pushTraces,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithQueue(c.QueueConfig),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithStart(exp.start),
		exporterhelper.WithShutdown(exp.shutdown),
	)
}
