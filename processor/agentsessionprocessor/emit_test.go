// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadatatest"
)

// TestEmitSkipsUndecodableIDsCounted: an evaluated entity whose trace or span id is not a
// valid hex id gets no evaluation span, and each one left out is counted and logged,
// never dropped silently.
func TestEmitSkipsUndecodableIDsCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, _, _ := newTestProcessor(t, testConfig(), tel)
	core, logs := observer.New(zapcore.WarnLevel)
	p.logger = zap.New(core)

	const goodTrace, goodSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	score := 1.0
	tr := &evaluation.TurnResult{
		TraceID:    goodTrace,
		RootSpanID: goodSpan,
		Interactions: []evaluation.InteractionResult{
			{AgentID: "triage_agent", SpanID: "not-hex", Score: &score},        // skipped
			{AgentID: "refund_agent", SpanID: goodSpan, Score: &score},         // emitted
			{AgentID: "refund_agent", SpanID: "b7ad6b71692033", Score: &score}, // wrong length: skipped
		},
	}
	b := p.emitter.newBatch(time.Unix(0, 0))
	b.addTurn("conv-1", tr)
	bad := &evaluation.TurnResult{TraceID: "zz", RootSpanID: goodSpan}
	b.addTurn("conv-2", bad) // the turn span itself: skipped

	assert.Equal(t, 2, b.spans.Len(), "one interaction span and one turn span")
	assert.Equal(t, 3, b.skipped)
	p.reportSkipped(context.Background(), b)

	metadatatest.AssertEqualProcessorAgentsessionEvaluationSpansSkipped(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 3}}, metricdatatest.IgnoreTimestamp())
	entries := logs.FilterMessageSnippet("evaluation spans left out").All()
	require.Len(t, entries, 1)
	assert.Equal(t, int64(3), entries[0].ContextMap()["skipped"])
	assert.Contains(t, entries[0].ContextMap()["error"], "session conv-1: evaluate agent_interaction")
}
