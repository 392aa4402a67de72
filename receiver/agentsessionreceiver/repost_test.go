// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

// TestRepostedSessionEvaluatedOnce posts one recorded session three times to the
// receiver in front of the real agentsession processor: at once (a client's retry while
// the session is open) and once the processor has ended the session and forgotten its
// traces. The same body gives the same trace and span ids, so the repeats are late spans
// of the turns evaluated; before, each post drew new ids and the processor took the
// repeat for new turns of the session, doubling its turns and tool issues.
func TestRepostedSessionEvaluatedOnce(t *testing.T) {
	ctx := context.Background()
	sink := new(consumertest.TracesSink)
	pf := agentsessionprocessor.NewFactory()
	pcfg := pf.CreateDefaultConfig().(*agentsessionprocessor.Config)
	pcfg.TurnSettle, pcfg.TurnTimeout = 10*time.Millisecond, 100*time.Millisecond
	proc, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pcfg, sink)
	require.NoError(t, err)
	require.NoError(t, proc.Start(ctx, componenttest.NewNopHost()))
	url := startReceiver(t, createDefaultConfig().(*Config), proc, nil)

	body := readTestdata(t, "session.json")
	var traceIDs []any
	for i := range 3 {
		status, _, resp := post(t, url, body, nil)
		require.Equal(t, http.StatusAccepted, status, "post %d: %v", i, resp)
		ids := resp["sessions"].([]any)[0].(map[string]any)["trace_ids"].([]any)
		if i == 0 {
			traceIDs = ids
		}
		assert.Equal(t, traceIDs, ids, "post %d: the same body gives the same trace ids", i)
		if i == 1 {
			// The session ends (end_session), then the tracker forgets its traces
			// turn_timeout later.
			require.Eventually(t, func() bool { return len(evalSpans(sink, semconv.EvalKindAgentSession)) > 0 },
				10*time.Second, 10*time.Millisecond)
			time.Sleep(3 * pcfg.TurnTimeout)
		}
	}
	time.Sleep(3 * pcfg.TurnTimeout) // the last post's spans are handled, as late
	require.NoError(t, proc.Shutdown(ctx))
	assert.Len(t, evalSpans(sink, semconv.EvalKindAgentSession), 1, "one analysis: the reposts add no revision")

	turns := map[string]int{}
	for _, sp := range evalSpans(sink, semconv.EvalKindTurn) {
		turns[sp.TraceID().String()]++
	}
	require.Len(t, turns, len(traceIDs), "one evaluated turn per turn of the body")
	for id, n := range turns {
		assert.Equal(t, 2, n, "turn %s: its provisional and final verdicts only", id)
	}
}

// evalSpans returns the evaluation spans of kind the sink received.
func evalSpans(sink *consumertest.TracesSink, kind string) []ptrace.Span {
	var out []ptrace.Span
	for _, sp := range allSpans(sink) {
		if k, ok := sp.Attributes().Get(semconv.AgentEvalKind); ok && k.Str() == kind {
			out = append(out, sp)
		}
	}
	return out
}
