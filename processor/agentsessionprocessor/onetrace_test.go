// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// spansByEnd splits td into one Traces per span, in the order the spans end (as an SDK
// exports them), with each span's end time.
func spansByEnd(td ptrace.Traces) (out []ptrace.Traces, ends []time.Time) {
	type one struct {
		td  ptrace.Traces
		end time.Time
	}
	var all []one
	forEachSpan(td, func(res pcommon.Resource, sp ptrace.Span) {
		o := ptrace.NewTraces()
		rs := o.ResourceSpans().AppendEmpty()
		res.CopyTo(rs.Resource())
		sp.CopyTo(rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty())
		all = append(all, one{o, sp.EndTimestamp().AsTime()})
	})
	sort.SliceStable(all, func(i, j int) bool { return all[i].end.Before(all[j].end) })
	for _, o := range all {
		out, ends = append(out, o.td), append(ends, o.end)
	}
	return out, ends
}

// TestConversationInOneTrace: the OpenAI Agents sample that runs a three-turn
// conversation inside one withTrace (docs/decisions/sessions.md §2.4.1) is three turns,
// indexed 0, 1 and 2, each with its user message, turn 0 RDM by turn 1's correction, in
// the session's analysis and in the continuation store (memory, SQLite, PostgreSQL):
// whether the spans arrive together, or one by one as they end with a turn_timeout
// shorter than the user's think time, so that each request closes on its own, partial
// (a run span has no GenAI class: no root to settle on) and the next one opens the
// trace's next turn. Before, the trace was one turn; then, with the turn identity by
// root span, a later request that closed partial was taken for a late fragment of the
// earlier final turn of its trace, and counted as late spans.
func TestConversationInOneTrace(t *testing.T) {
	users := []string{
		"Hi, I'd like a refund for the USB-C cable I bought, order #123. It stopped working after a week.",
		"No, I meant order #123, not #12345. The cable, not the mugs.",
		"Great, thanks. That's all.",
	}
	run := func(t *testing.T, driver, dsn string, oneByOne bool) {
		ctx := context.Background()
		cfg := testConfig()
		cfg.Continuation.Driver, cfg.Continuation.DSN = driver, configopaque.String(dsn)
		if oneByOne {
			cfg.TurnSettle, cfg.TurnTimeout = 100*time.Millisecond, 250*time.Millisecond
		}
		p, sink, clk := newTestProcessor(t, cfg, nil)
		require.NoError(t, p.start(ctx, componenttest.NewNopHost()))
		td := loadTraces(t, "../../testdata/samples/openai_agents_one_trace.json")
		if oneByOne {
			batches, ends := spansByEnd(td)
			for i, b := range batches {
				if i > 0 {
					clk.advance(ends[i].Sub(ends[i-1]))
				}
				p.step(ctx)
				_, err := p.processTraces(ctx, b)
				require.NoError(t, err)
			}
		} else {
			_, err := p.processTraces(ctx, td)
			require.NoError(t, err)
		}
		clk.advance(cfg.TurnTimeout + cfg.TurnSettle)
		p.step(ctx)
		clk.advance(cfg.SessionTimeout + time.Minute)
		p.step(ctx)

		final, provisional := turnVerdicts(t, evalSpans(sink)[semconv.EvalKindTurn])
		for i, u := range users {
			require.Len(t, provisional[i], 1, "turn %d", i)
			assert.Equal(t, u, provisional[i][0].UserMessage, "turn %d", i)
		}
		assert.Len(t, provisional, len(users))
		assert.Equal(t, map[int]int{0: 1, 1: 1, 2: 1}, countedVerdicts(final), "one counted final verdict a turn")
		require.NotEmpty(t, final[0])
		assert.Equal(t, evaluation.DetectionRDM, final[0][0].DetectionType, "turn 1's correction follows turn 0")
		as := analyses(t, evalSpans(sink)[semconv.EvalKindAgentSession])
		require.Len(t, as, 1)
		require.Len(t, as[0].TurnResults, 3)
		for i, tr := range as[0].TurnResults {
			assert.Equal(t, i, tr.TurnIndex)
			assert.Equal(t, users[i], tr.UserMessage)
		}
		assert.Equal(t, 1, as[0].Conversation.RDMDetections)
		stored, err := p.cont.LoadContinuation(ctx, as[0].SessionID, nil)
		require.NoError(t, err)
		assert.Len(t, stored.Turns, 3, "the continuation store holds each turn of the trace")
		require.NoError(t, p.shutdown(ctx))
	}
	for _, oneByOne := range []bool{false, true} {
		name := "together"
		if oneByOne {
			name = "one by one"
		}
		t.Run(name, func(t *testing.T) {
			t.Run("memory", func(t *testing.T) { run(t, "", "", oneByOne) })
			onStores(t, func(t *testing.T, driver, dsn string) { run(t, driver, dsn, oneByOne) })
		})
	}
}
