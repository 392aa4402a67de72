// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// TestLateTurnGroundedAsBefore: a turn that closes late (its spans come after the turn
// that followed it in the conversation closed) is evaluated after the turn before it,
// whose record already has its follow-up and so dropped its grounding facts and
// conversation (DropCarries). The late turn is grounded by the record of the turn that
// followed, which carried them on (evaluation.SessionTurns.Carrier): its verdict is the
// one it gets with every record kept whole (keepCarries). Found by review: it was judged
// a hallucination.
func TestLateTurnGroundedAsBefore(t *testing.T) {
	turns := []struct{ user, answer string }{
		{"My order 5521 was charged 120.50 EUR twice, ticket RX-4410.", "I see order 5521 and a double charge of 120.50 EUR."},
		{"Can you refund the extra charges?", "Refund of 120.50 EUR started for order 5521, ticket RX-4410."},
		{"When will it arrive?", "The refund arrives in 5 days."},
	}
	run := func(t *testing.T, keep bool) []string {
		ctx := context.Background()
		cfg := testConfig()
		cfg.SessionTimeout = 30 * time.Second
		p, sink, clk := newTestProcessor(t, cfg, nil)
		p.keepCarries = keep
		require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
		t0 := clk.now()
		send := func(i int, at time.Duration) {
			_, err := p.processTraces(ctx, chatTurn("late-carry", i+1, t0.Add(at), turns[i].user, turns[i].answer, true))
			require.NoError(t, err)
			clk.advance(3 * time.Second)
			p.step(ctx)
		}
		send(0, 0)
		clk.advance(7 * time.Second)
		send(2, 10*time.Second) // closes first: turn 0 gets its follow-up from it
		send(1, 5*time.Second)  // came before it in the conversation, closes late
		clk.advance(2 * time.Minute)
		p.step(ctx)
		require.NoError(t, p.shutdown(ctx))
		var out []string
		for _, sp := range evalSpans(sink)[semconv.EvalKindTurn] {
			tr, err := evalspan.DecodeTurn(sp.Attributes())
			require.NoError(t, err)
			if tr.UserMessage != turns[1].user || !tr.Final {
				continue
			}
			tr.Explanations = nil
			js, err := json.Marshal(tr)
			require.NoError(t, err)
			out = append(out, string(js))
		}
		return out
	}
	whole := run(t, true)
	compact := run(t, false)
	require.NotEmpty(t, whole)
	assert.Equal(t, whole, compact, "the late turn's final verdict does not depend on keepCarries")
}

// TestOpenTraceWithoutGenAIDelaysNoFollowUp: a session whose key is also on an open
// trace without GenAI spans (an HTTP/websocket child span whose parent is in another
// process, started before the conversation) has no late turn: each turn's final verdict
// comes when the next turn closes, as before EarlierOpen.
func TestOpenTraceWithoutGenAIDelaysNoFollowUp(t *testing.T) {
	cfg := testConfig()
	p, sink, clk := newTestProcessor(t, cfg, nil)
	ctx := context.Background()
	const id = "ws-open"
	t0 := clk.now()
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{0xee, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	sp.SetSpanID(pcommon.SpanID{0xee, 0, 0, 0, 0, 0, 0, 2})
	sp.SetParentSpanID(pcommon.SpanID{0xee, 0, 0, 0, 0, 0, 0, 1})
	sp.SetName("GET /ws")
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(-time.Second)))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(-time.Second + 5*time.Millisecond)))
	sp.Attributes().PutStr("gen_ai.conversation.id", id)
	sp.Attributes().PutStr("session.id", id)
	_, err := p.processTraces(ctx, td)
	require.NoError(t, err)
	for i := range 2 {
		_, err := p.processTraces(ctx, chatTurn(id, i+1, clk.now(), conversation[i].user, conversation[i].answer, true))
		require.NoError(t, err)
		clk.advance(3 * time.Second)
		p.step(ctx)
	}
	final, _ := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
	require.Len(t, final[0], 1, "turn 0 has its final verdict once turn 1 closed")
	assert.Equal(t, evaluation.DetectionRDM, final[0][0].DetectionType)
}
