// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalhandoffextension // import "github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/metric"

	"github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension/internal/metadata"
	"github.com/agenteval/agenteval-collector/internal/handoff"
)

// handoffExtension owns one handoff.Handoff for the collector's lifetime; the processor
// and the exporter that name it in their `handoff` setting find it through the host
// (handoff.Provider).
type handoffExtension struct {
	h         *handoff.Handoff
	telemetry *metadata.TelemetryBuilder
}

var (
	_ extension.Extension = (*handoffExtension)(nil)
	_ handoff.Provider    = (*handoffExtension)(nil)
)

func newHandoffExtension(set extension.Settings, cfg *Config) (*handoffExtension, error) {
	x := &handoffExtension{h: handoff.New(cfg.MaxResults)}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	x.telemetry = tb
	if err := tb.RegisterAgentevalHandoffEvictedCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(x.h.Evicted())
		return nil
	}); err != nil {
		tb.Shutdown()
		return nil, err
	}
	if err := tb.RegisterAgentevalHandoffResultsCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(int64(x.h.Len()))
		return nil
	}); err != nil {
		tb.Shutdown()
		return nil, err
	}
	return x, nil
}

// Handoff returns the extension's handoff (handoff.Provider).
func (x *handoffExtension) Handoff() *handoff.Handoff { return x.h }

// Start does nothing: the handoff exists from creation, so the processor and the
// exporter may find it in their own Start whatever the order.
func (*handoffExtension) Start(context.Context, component.Host) error { return nil }

// Shutdown stops the telemetry callbacks. The results still held are dropped with the
// process: their spans carry them.
func (x *handoffExtension) Shutdown(context.Context) error {
	x.telemetry.Shutdown()
	return nil
}
