// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/handoff/handofftest"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// withHandoff gives p a handoff, as start does for the handoff setting, with a taker
// attached (as the exporter does at its start).
func withHandoff(p *agentSessionProcessor) *handoff.Handoff {
	h := handoff.New(1 << 16)
	h.Attach()
	p.emitter.handoff = h
	return h
}

// takeHandedOff takes, for every turn and session span the sink received, the result h
// holds for it; it fails when one is missing, and when h holds anything more (a span
// withdrawn or never emitted left an entry).
func takeHandedOff(t *testing.T, h *handoff.Handoff, sink *consumertest.TracesSink) []handofftest.Result {
	t.Helper()
	var out []handofftest.Result
	spans := evalSpans(sink)
	for _, sp := range spans[semconv.EvalKindTurn] {
		tr, ok := h.TakeTurn(handoff.KeyOf(sp))
		require.True(t, ok, "turn span %s handed off", sp.SpanID())
		out = append(out, handofftest.Result{Span: sp, Turn: tr})
	}
	for _, sp := range spans[semconv.EvalKindAgentSession] {
		a, ok := h.TakeAnalysis(handoff.KeyOf(sp))
		require.True(t, ok, "session span %s handed off", sp.SpanID())
		out = append(out, handofftest.Result{Span: sp, Analysis: a})
	}
	assert.Zero(t, h.Len(), "only emitted spans are handed off")
	assert.Zero(t, h.Evicted())
	return out
}

// TestHandoffSetting: start finds the handoff the setting names, or fails naming the
// setting and the id; without the setting the processor hands nothing off.
func TestHandoffSetting(t *testing.T) {
	id := handofftest.ID
	notProvider := struct {
		component.StartFunc
		component.ShutdownFunc
	}{}
	for want, host := range map[string]handofftest.Host{
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
	require.NoError(t, p.start(context.Background(), handofftest.NewHost(h)))
	assert.Same(t, h, p.emitter.handoff)
	require.NoError(t, p.shutdown(context.Background()))

	p, _, _ = newTestProcessor(t, testConfig(), nil)
	require.NoError(t, p.start(context.Background(), handofftest.Host{}))
	assert.Nil(t, p.emitter.handoff)
	require.NoError(t, p.shutdown(context.Background()))
}

// TestHandoffLeavesSpansUnchanged: with a handoff the processor emits the same
// evaluation spans, attribute for attribute, signatures included (only the span ids,
// drawn at random, differ), over every recorded run of testdata/fixtures.
func TestHandoffLeavesSpansUnchanged(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixturesDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	run := func(withH bool) []string {
		cfg := testConfig()
		cfg.SigningKey = "0123456789abcdef-handoff-test"
		p, sink, clk := newTestProcessor(t, cfg, nil)
		if withH {
			withHandoff(p)
		}
		replayFixtures(t, p, clk, files)
		var out []string
		for kind, spans := range evalSpans(sink) {
			for _, sp := range spans {
				js, err := json.Marshal(sp.Attributes().AsRaw())
				require.NoError(t, err)
				out = append(out, kind+" "+string(js))
			}
		}
		slices.Sort(out)
		return out
	}
	without := run(false)
	kinds := map[string]int{}
	for _, s := range without {
		kinds[s[:strings.IndexByte(s, ' ')]]++
	}
	require.Positive(t, kinds[semconv.EvalKindTurn], kinds)
	require.Positive(t, kinds[semconv.EvalKindAgentSession], kinds)
	assert.Equal(t, without, run(true))
}

// replayFixtures passes the files through p, then closes their turns and ends their
// sessions.
func replayFixtures(t *testing.T, p *agentSessionProcessor, clk *testClock, files []string) {
	t.Helper()
	ctx := context.Background()
	for _, f := range files {
		_, err := p.processTraces(ctx, loadTraces(t, f))
		require.NoError(t, err)
	}
	clk.advance(3 * time.Second) // turns close
	p.step(ctx)
	clk.advance(10 * time.Minute) // sessions end
	p.step(ctx)
}

// TestHandoffWithoutTakerStaysEmpty: a processor whose handoff no exporter takes from
// (no taker attached: only the processor names the extension) emits its spans as
// always and leaves nothing pinned in the handoff.
func TestHandoffWithoutTakerStaysEmpty(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixturesDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	p, sink, clk := newTestProcessor(t, testConfig(), nil)
	h := handoff.New(1 << 16)
	p.emitter.handoff = h
	replayFixtures(t, p, clk, files)
	spans := evalSpans(sink)
	require.NotEmpty(t, spans[semconv.EvalKindTurn])
	require.NotEmpty(t, spans[semconv.EvalKindAgentSession])
	assert.Zero(t, h.Len(), "no taker: nothing held")
	assert.Zero(t, h.Evicted())
}
