// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver // import "github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/sessionjson"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver/internal/metadata"
)

const (
	// defaultEndpoint is loopback only, next to the exporter's 8889 (metrics) and 8890 (API).
	defaultEndpoint = "localhost:8891"
	// defaultMaxRequestBodySize bounds one posted body: 10 MiB.
	defaultMaxRequestBodySize = 10 << 20
	// defaultAdminEndpoint is the channel's admin server (issues API keys), loopback.
	defaultAdminEndpoint = "localhost:8892"
	// defaultStoreDSN is the exporter's default SQLite store, shared by default.
	defaultStoreDSN = "./data/agenteval.db"
)

// NewFactory returns the factory of the agentsession receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithTraces(createTracesReceiver, metadata.TracesStability),
	)
}

func createDefaultConfig() component.Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = defaultEndpoint
	server.MaxRequestBodySize = defaultMaxRequestBodySize
	admin := confighttp.NewDefaultServerConfig()
	admin.NetAddr.Endpoint = defaultAdminEndpoint
	admin.MaxRequestBodySize = 1 << 20
	return &Config{
		ServerConfig: server,
		EndSession:   true,
		ServiceName:  sessionjson.DefaultServiceName,
		Channel: configoptional.Default(ChannelConfig{
			Store:              StoreConfig{Driver: store.DriverSQLite, DSN: defaultStoreDSN},
			Admin:              admin,
			MaxMessageBytes:    channel.DefaultMaxContentBytes,
			MaxSessionMessages: channel.DefaultMaxSessionMessages,
			MaxPageBytes:       channel.DefaultMaxPageBytes,
		}),
	}
}

func createTracesReceiver(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	return newReceiver(cfg.(*Config), set, next)
}
