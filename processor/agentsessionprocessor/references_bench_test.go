// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

// BenchmarkIngestReferences measures the ingest path (processTraces) with and without
// `references` configured, on the agent-shaped workload of BenchmarkProcessor: the cost of
// remembering case and run ids per trace is two attribute lookups per span. Reports ns/span.
func BenchmarkIngestReferences(b *testing.B) {
	for _, tc := range []struct {
		name string
		refs bool
	}{{"without", false}, {"with", true}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := testConfig()
			if tc.refs {
				cfg.References.Datasets = []string{"testdata/dataset.json"}
			}
			spans := 0
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				p, err := newProcessorCore(processortest.NewNopSettings(metadata.Type).TelemetrySettings, consumertest.NewNop(), cfg)
				require.NoError(b, err)
				w := newBenchWorkload(50, 3, 7)
				spans += w.spans
				b.StartTimer()
				for _, td := range w.batches {
					if _, err := p.processTraces(context.Background(), td); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
		})
	}
}

// BenchmarkObserve is the per-span cost refRunner adds to the ingest path, on spans
// without (the common case) and with a case id. Reports ns/span.
func BenchmarkObserve(b *testing.B) {
	cfg := testConfig()
	cfg.References.Datasets = []string{"testdata/dataset.json"}
	r, err := newRefRunner(cfg.References, nil, zap.NewNop())
	require.NoError(b, err)
	w := newBenchWorkload(20, 3, 9)
	td := w.batches[0]
	rs := td.ResourceSpans().At(0)
	spans := rs.ScopeSpans().At(0).Spans()
	for _, tagged := range []bool{false, true} {
		name := "untagged"
		if tagged {
			name = "tagged"
			for i := 0; i < spans.Len(); i++ {
				spans.At(i).Attributes().PutStr(semconv.GenAIEvaluationCaseName, "papers")
			}
		}
		b.Run(name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				for i := 0; i < spans.Len(); i++ {
					r.observe(rs.Resource(), spans.At(i))
				}
				n += spans.Len()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/span")
		})
	}
}
