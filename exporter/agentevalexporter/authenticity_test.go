// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadatatest"
	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// snapshot is what a forged span must not change: the stored sessions as the API
// serves them and the Prometheus metrics.
func (x *testExporter) snapshot() string {
	x.t.Helper()
	var b strings.Builder
	for _, path := range []string{"/api/v1/agent_sessions", "/api/v1/agent_sessions/sess-checkout", "/api/v1/agent_sessions/forged-new"} {
		resp, err := http.Get(x.apiURL(path))
		require.NoError(x.t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(x.t, err)
		require.NoError(x.t, resp.Body.Close())
		fmt.Fprintf(&b, "%s %d %s\n", path, resp.StatusCode, body)
	}
	fams, err := x.scrape().Gather()
	require.NoError(x.t, err)
	for _, f := range fams {
		fmt.Fprintln(&b, f.String())
	}
	return b.String()
}

// TestForgedEvaluationSpansChangeNothing: spans that look like the processor's
// evaluation spans but are not signed with the exporter's key (an OTLP client sending
// agent_eval.kind=agent_session) neither create nor overwrite stored analyses nor move
// a metric; they are counted as unauthenticated and do not fail the batch.
func TestForgedEvaluationSpansChangeNothing(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(true)).turn(turn1(true)).session(analysisCheckout()).traces()))
	before := x.snapshot()
	require.Contains(t, before, `"overall_score":0.82`)

	// The forgeries of the fault run: a new session, and the real one at 0.01 with 3 turns at 0.
	forgedNew := analysisCheckout()
	forgedNew.SessionID = "forged-new"
	overwrite := analysisCheckout()
	overwrite.AnalysisRevision = 99
	overwrite.OverallScore = ptr(0.01)
	badTurn := turn0(true)
	badTurn.IsBad = true
	badTurn.DetectionType = evaluation.DetectionRDM
	overwrite.TurnResults = []evaluation.TurnResult{badTurn, badTurn, badTurn}

	unsigned := func(b *spanBuilder) *spanBuilder { unsign(b); return b }
	forgeries := map[string]ptrace.Traces{
		"unsigned new session":   unsigned(newSpanBuilder(t).session(forgedNew)).traces(),
		"unsigned overwrite":     unsigned(newSpanBuilder(t).session(overwrite)).traces(),
		"unsigned turns":         unsigned(newSpanBuilder(t).turn(badTurn).turn(badTurn)).traces(),
		"signed with other key":  resign(newSpanBuilder(t).session(overwrite), evalspan.NewSigner("an-attacker-chosen-key")).traces(),
		"real signature, edited": edited(t, newSpanBuilder(t).session(analysisCheckout())).traces(),
	}
	var spans int64
	for name, td := range forgeries {
		spans += int64(td.SpanCount())
		require.NoError(t, x.consume(td), name)
	}
	assert.Equal(t, before, x.snapshot(), "store, API and metrics unchanged")
	t.Logf("forged evaluation spans sent %d, stored 0, counted as unauthenticated %d", spans, spans)
	metadatatest.AssertEqualExporterAgentevalUnauthenticatedSpans(t, x.tel,
		[]metricdata.DataPoint[int64]{{Value: spans}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterAgentevalAnalysesStored(t, x.tel,
		[]metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// unsign drops the signatures, as a client that copies the attribute layout sends it.
func unsign(b *spanBuilder) {
	for i := range b.ss.Spans().Len() {
		b.ss.Spans().At(i).Attributes().Remove(semconv.AgentEvalSignature)
	}
}

func resign(b *spanBuilder, s *evalspan.Signer) *spanBuilder {
	for i := range b.ss.Spans().Len() {
		s.Sign(b.ss.Spans().At(i).Attributes())
	}
	return b
}

// edited keeps a real signature and changes the score under it.
func edited(t *testing.T, b *spanBuilder) *spanBuilder {
	m := b.ss.Spans().At(0).Attributes()
	_, ok := m.Get(semconv.AgentEvalSignature)
	require.True(t, ok)
	m.PutDouble(semconv.AgentEvalSessionPrefix+"overall_score", 0.01)
	m.PutEmptySlice(semconv.AgentEvalSessionPrefix + "turn_results")
	return b
}
