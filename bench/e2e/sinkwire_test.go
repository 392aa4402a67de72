// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/pdatautil"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// fromPdata is what readExport must find, read with pdata.
func fromPdata(td ptrace.Traces) exportSummary {
	sum := exportSummary{Bytes: int64((&ptrace.ProtoMarshaler{}).TracesSize(td))}
	for ref := range pdatautil.Spans(td) {
		sp := ref.Span
		if !strings.HasPrefix(sp.Name(), semconv.EvalSpanPrefix) {
			sum.Plain++
			if sp.ParentSpanID().IsEmpty() {
				sum.Roots = append(sum.Roots, sp.TraceID())
			}
			continue
		}
		kind := strings.TrimPrefix(sp.Name(), semconv.EvalSpanPrefix)
		if v, ok := sp.Attributes().Get(semconv.AgentEvalKind); ok {
			kind = v.AsString()
		}
		sum.Evals = append(sum.Evals, evalSpan{Kind: kind, Trace: sp.TraceID(), Start: sp.StartTimestamp().AsTime()})
	}
	return sum
}

// benchRequest is a batch of n of the workload's spans with evaluation spans among them,
// over two resources.
func benchRequest(t testing.TB, n int) ptrace.Traces {
	w := newWorkload(workloadConfig{Seed: 9, ActiveTurns: 20})
	td := w.NextBatch(n).traces
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	at := time.Date(2026, 11, 27, 9, 0, 0, 123456789, time.UTC)
	addSpan(spans, semconv.EvalSpanTurn, traceID(1), semconv.EvalKindTurn)
	spans.At(0).SetStartTimestamp(pcommon.NewTimestampFromTime(at))
	spans.At(0).SetParentSpanID(pcommon.SpanID{7})
	addSpan(spans, semconv.EvalSpanAgentSession, traceID(2), "") // the kind from the name
	sp := spans.AppendEmpty()
	sp.SetName(semconv.EvalSpanToolCall)
	sp.Attributes().PutInt("agent_eval.score", 1)
	sp.Attributes().PutStr(semconv.AgentEvalKind, semconv.EvalKindToolCall)
	require.Positive(t, td.SpanCount())
	return td
}

// TestReadExport: the sink's protobuf reading finds what a pdata decode finds, on the
// workload's own spans and evaluation spans of each form.
func TestReadExport(t *testing.T) {
	td := benchRequest(t, 300)
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	got, err := readExport(b)
	require.NoError(t, err)
	want := fromPdata(td)
	assert.Equal(t, want, got)
	assert.Len(t, got.Evals, 3)
	assert.Positive(t, got.Plain)
	assert.NotEmpty(t, got.Roots)

	for _, cut := range []int{1, len(b) / 3, len(b) - 1} {
		_, err := readExport(b[:cut])
		assert.Error(t, err, "a request cut at %d bytes", cut)
	}
}

// FuzzReadExport: any bytes give a summary or an error, never a panic; a request pdata can
// read gives what pdata gives.
func FuzzReadExport(f *testing.F) {
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(benchRequest(f, 2))
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x05, 0x12, 0x03, 0x12, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := readExport(b)
		td, perr := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil || perr != nil {
			return // pdata and protowire differ on what they refuse (unknown fields, bad UTF-8)
		}
		want := fromPdata(td)
		want.Bytes = int64(len(b))
		assert.Equal(t, want, got)
	})
}
