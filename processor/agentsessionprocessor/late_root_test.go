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
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// TestLateRootOfAFinalTurnNotEvaluatedAgain: a kept session's final turn closed without
// its root span (partial, its root the LLM call); the root span (invoke_agent, the
// trace's root) comes after the tracker forgot the trace. That fragment holds its root:
// it closes not partial, with another root span id, and is late (it started before the
// final turn of its trace ended). With turns identified by root span it was evaluated
// as a second turn of the session (found by review; before that change, analysed by
// trace, it was late).
func TestLateRootOfAFinalTurnNotEvaluatedAgain(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig()
	cfg.SessionTimeout = 30 * time.Second
	p, sink, clk := newTestProcessor(t, cfg, nil)
	require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
	td := chatTurn("late-root", 1, clk.now(), "Weather in Paris tomorrow?", "Sunny.", true)
	first, late := ptrace.NewTraces(), ptrace.NewTraces()
	td.CopyTo(first)
	td.CopyTo(late)
	first.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.Name() != "chat gpt" })
	late.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.Name() == "chat gpt" })
	_, err := p.processTraces(ctx, first)
	require.NoError(t, err)
	clk.advance(cfg.SessionTimeout + time.Second)
	p.step(ctx) // the session ends: its open turn closes partial, final
	sendAfterForgotten(t, p, clk, cfg, late)
	require.NoError(t, p.shutdown(ctx))
	var idx []int
	for _, sp := range evalSpans(sink)[semconv.EvalKindTurn] {
		tr, err := evalspan.DecodeTurn(sp.Attributes())
		require.NoError(t, err)
		idx = append(idx, tr.TurnIndex)
	}
	assert.Equal(t, []int{0, 0}, idx, "turn 0's provisional and final verdicts; the late root is no turn of its own")
}
