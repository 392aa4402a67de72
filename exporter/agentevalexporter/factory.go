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
	// Retries never give up (max_elapsed_time 0): an analysis waits in the sending queue
	// for the store as long as the queue has room (queue_size bounds it; past it new
	// batches are refused and counted in otelcol_exporter_enqueue_failed_spans).
	// docs/decisions/result-durability.md
	retry := configretry.NewDefaultBackOffConfig()
	retry.MaxElapsedTime = 0
	return &Config{
		TimeoutConfig: exporterhelper.NewDefaultTimeoutConfig(),
		QueueConfig:   configoptional.Some(exporterhelper.NewDefaultQueueConfig()),
		RetryConfig:   retry,
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
// retry, behind the signature check (authenticate.go); tests use it to keep a handle
// on exp.
func newTracesExporter(ctx context.Context, set exporter.Settings, c *Config, exp *agentEvalExporter) (exporter.Traces, error) {
	te, err := exporterhelper.NewTraces(ctx, set, c,
		exp.pushTraces,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithQueue(c.QueueConfig),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithStart(exp.start),
		exporterhelper.WithShutdown(exp.shutdown),
	)
	if err != nil {
		return nil, err
	}
	return authenticatingExporter{Traces: te, e: exp}, nil
}
