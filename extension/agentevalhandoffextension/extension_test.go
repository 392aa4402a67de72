// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalhandoffextension

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension/internal/metadatatest"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
)

// The extension is what the processor and the exporter find through the host: a
// handoff.Provider whose handoff is bounded by max_results and whose evictions and
// held results are reported as the collector's own metrics.
func TestProvidesOneBoundedHandoffAndReportsIt(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	ext, err := NewFactory().Create(context.Background(), metadatatest.NewSettings(tel), &Config{MaxResults: 2})
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))

	p, ok := ext.(handoff.Provider)
	require.True(t, ok, "the extension is a handoff.Provider")
	h := p.Handoff()
	require.Same(t, h, p.Handoff(), "one handoff for the extension's lifetime")

	h.Attach() // as the exporter does at its start
	for i := range 3 {
		h.PutAnalysis(handoff.Key{TraceID: pcommon.TraceID{1}, SpanID: pcommon.SpanID{byte(i + 1)}}, &evaluation.Analysis{SessionID: "s"})
	}
	assert.Equal(t, 2, h.Len(), "max_results bounds what is held")

	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	metadatatest.AssertEqualAgentevalHandoffEvicted(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, opts...)
	metadatatest.AssertEqualAgentevalHandoffResults(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, opts...)

	require.NoError(t, ext.Shutdown(context.Background()))
}
