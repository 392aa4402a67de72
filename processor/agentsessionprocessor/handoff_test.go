// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// withHandoff gives p a handoff, as start does for the handoff setting.
func withHandoff(p *agentSessionProcessor) *handoff.Handoff {
	h := handoff.New(1 << 16)
	p.emitter.handoff = h
	return h
}

// handedOff is one turn or session span with the result h held for it.
type handedOff struct {
	span ptrace.Span
	turn *evaluation.TurnResult
	an   *evaluation.Analysis
}

// takeHandedOff takes, for every turn and session span the sink received, the result h
// holds for it; it fails when one is missing, and when h holds anything more (a span
// withdrawn or never emitted left an entry).
func takeHandedOff(t *testing.T, h *handoff.Handoff, sink *consumertest.TracesSink) []handedOff {
	t.Helper()
	var out []handedOff
	spans := evalSpans(sink)
	for _, sp := range spans[semconv.EvalKindTurn] {
		tr, ok := h.TakeTurn(spanKey(sp))
		require.True(t, ok, "turn span %s handed off", sp.SpanID())
		out = append(out, handedOff{span: sp, turn: tr})
	}
	for _, sp := range spans[semconv.EvalKindAgentSession] {
		a, ok := h.TakeAnalysis(spanKey(sp))
		require.True(t, ok, "session span %s handed off", sp.SpanID())
		out = append(out, handedOff{span: sp, an: a})
	}
	assert.Zero(t, h.Len(), "only emitted spans are handed off")
	assert.Zero(t, h.Evicted())
	return out
}

// assertDecodedEqual checks that every handed-off result equals what the exporter
// decodes from its span (the analysis' times compared as instants: the wire carries
// Unix nanoseconds, without location or monotonic reading). Run once the processor is
// done, it also shows that nothing modified a result after it was handed off.
func assertDecodedEqual(t *testing.T, hs []handedOff) {
	t.Helper()
	require.NotEmpty(t, hs)
	for _, x := range hs {
		if x.turn != nil {
			got, err := evalspan.DecodeTurn(x.span.Attributes())
			require.NoError(t, err)
			assert.Equal(t, got, *x.turn, "turn span %s", x.span.SpanID())
			continue
		}
		got, err := evalspan.DecodeAnalysis(x.span.Attributes())
		require.NoError(t, err)
		want := *x.an
		assert.True(t, want.StartedAt.Equal(got.StartedAt) && want.EndedAt.Equal(got.EndedAt), "session span %s times", x.span.SpanID())
		want.StartedAt, want.EndedAt = got.StartedAt, got.EndedAt
		assert.Equal(t, got, want, "session span %s", x.span.SpanID())
	}
}

// handoffHost offers one extension under agenteval_handoff.
type handoffHost map[component.ID]component.Component

func (h handoffHost) GetExtensions() map[component.ID]component.Component { return h }

type handoffExtension struct {
	component.StartFunc
	component.ShutdownFunc
	h *handoff.Handoff
}

func (x handoffExtension) Handoff() *handoff.Handoff { return x.h }

// TestHandoffSetting: start finds the handoff the setting names, or fails naming the
// setting and the id; without the setting the processor hands nothing off.
func TestHandoffSetting(t *testing.T) {
	id := component.MustNewID("agenteval_handoff")
	notProvider := struct {
		component.StartFunc
		component.ShutdownFunc
	}{}
	for want, host := range map[string]handoffHost{
		`agentsession: handoff: extension "agenteval_handoff" is not configured in service::extensions`:        {},
		`agentsession: handoff: extension "agenteval_handoff" is not an agenteval handoff (agenteval_handoff)`: {id: notProvider},
	} {
		cfg := testConfig()
		cfg.Handoff = &id
		p, _, _ := newTestProcessor(t, cfg, nil)
		assert.EqualError(t, p.start(context.Background(), host), want)
	}

	h := handoff.New(8)
	cfg := testConfig()
	cfg.Handoff = &id
	p, _, _ := newTestProcessor(t, cfg, nil)
	require.NoError(t, p.start(context.Background(), handoffHost{id: handoffExtension{h: h}}))
	assert.Same(t, h, p.emitter.handoff)
	require.NoError(t, p.shutdown(context.Background()))

	p, _, _ = newTestProcessor(t, testConfig(), nil)
	require.NoError(t, p.start(context.Background(), handoffHost{}))
	assert.Nil(t, p.emitter.handoff)
	require.NoError(t, p.shutdown(context.Background()))
}
