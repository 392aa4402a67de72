// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

// streamSpan is a span of the stream with its position.
type streamSpan struct {
	pos   int
	batch int
	span  ptrace.Span
}

// generate returns n batches of size spans and the drain, flattened in stream order.
func generate(t *testing.T, cfg workloadConfig, n, size int) (*workload, []batch, []streamSpan) {
	t.Helper()
	w := newWorkload(cfg)
	var bs []batch
	for range n {
		bs = append(bs, w.NextBatch(size))
	}
	bs = append(bs, w.Drain(size)...)
	var all []streamSpan
	for bi, b := range bs {
		spans := b.traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		require.Equal(t, b.spans, spans.Len())
		for i := 0; i < spans.Len(); i++ {
			all = append(all, streamSpan{pos: len(all), batch: bi, span: spans.At(i)})
		}
	}
	return w, bs, all
}

func strAttr(sp ptrace.Span, key string) string {
	if v, ok := sp.Attributes().Get(key); ok {
		return v.AsString()
	}
	return ""
}

func TestWorkloadStream(t *testing.T) {
	cfg := workloadConfig{Seed: 7, ActiveTurns: 100, TurnsPerSession: 3, ChunkSpans: 4, ThinkSpans: 3000}
	w, bs, all := generate(t, cfg, 100, 256)
	st := w.Stats()
	require.EqualValues(t, len(all), st.Spans)

	byTrace := map[pcommon.TraceID][]streamSpan{}
	var order []pcommon.TraceID
	for _, s := range all {
		id := s.span.TraceID()
		if _, ok := byTrace[id]; !ok {
			order = append(order, id)
		}
		byTrace[id] = append(byTrace[id], s)
	}
	assert.EqualValues(t, len(byTrace), st.Turns, "every turn started is sent whole")

	var interactions, handoffs, ends int64
	sessionTurns := map[string][]pcommon.TraceID{}
	for _, id := range order {
		spans := byTrace[id]
		ids := map[pcommon.SpanID]bool{}
		for _, s := range spans {
			assert.False(t, ids[s.span.SpanID()], "span ids are unique in a trace")
			ids[s.span.SpanID()] = true
		}
		// Spans come in the order they end: the root (no parent) last, every parent
		// present in the trace, a parent after its children.
		root := spans[len(spans)-1].span
		assert.True(t, root.ParentSpanID().IsEmpty(), "the root is the turn's last span")
		assert.Equal(t, semconv.OpInvokeWorkflow, strAttr(root, semconv.GenAIOperationName))
		seen := map[pcommon.SpanID]bool{}
		var agents []string
		var transfers []string
		for _, s := range spans {
			sp := s.span
			assert.Falsef(t, seen[sp.SpanID()], "a span precedes its children")
			if !sp.ParentSpanID().IsEmpty() {
				assert.True(t, ids[sp.ParentSpanID()], "the parent is in the trace")
				assert.False(t, seen[sp.ParentSpanID()], "a parent ends after its children")
			}
			seen[sp.SpanID()] = true
			sid := strAttr(sp, semconv.GenAIConversationID)
			assert.Equal(t, strAttr(root, semconv.GenAIConversationID), sid, "one session per trace")
			assert.True(t, sp.EndTimestamp() >= sp.StartTimestamp())
			switch strAttr(sp, semconv.GenAIOperationName) {
			case semconv.OpInvokeAgent:
				interactions++
				agents = append(agents, strAttr(sp, semconv.GenAIAgentName))
			case semconv.OpExecuteTool:
				if target := strAttr(sp, semconv.GenAITransferTargetName); target != "" {
					handoffs++
					transfers = append(transfers, target)
					assert.Equal(t, semconv.HandoffToolTransferToPrefix+target, strAttr(sp, semconv.GenAIToolName))
				}
			}
		}
		// Triage first, then one agent per handoff, each the previous one's target.
		require.NotEmpty(t, agents)
		assert.Equal(t, "triage", agents[0])
		assert.Equal(t, agents[1:], transfers)
		assert.GreaterOrEqual(t, len(agents), 2)
		assert.LessOrEqual(t, len(agents), 4)
		if v, ok := root.Attributes().Get(semconv.AgentEvalSessionEnd); ok && v.Bool() {
			ends++
		}
		sid := strAttr(root, semconv.GenAIConversationID)
		sessionTurns[sid] = append(sessionTurns[sid], id)
	}
	assert.Equal(t, st.Interactions, interactions)
	assert.Equal(t, st.Handoffs, handoffs)
	assert.Equal(t, st.EndedByFlag, ends)
	assert.EqualValues(t, len(sessionTurns), st.Sessions)
	assert.Positive(t, st.BadToolCalls)

	multi := 0
	for sid, turns := range sessionTurns {
		require.LessOrEqual(t, len(turns), cfg.TurnsPerSession, sid)
		if len(turns) > 1 {
			multi++
		}
		for i, id := range turns {
			root := byTrace[id][len(byTrace[id])-1].span
			v, ok := root.Attributes().Get(semconv.AgentEvalSessionEnd)
			assert.Equal(t, i == cfg.TurnsPerSession-1, ok && v.Bool(), "only the last turn ends the session")
			if i == 0 {
				continue
			}
			// The user thinks between turns: the next turn starts ThinkSpans after the
			// previous one's root.
			prev := byTrace[turns[i-1]]
			assert.GreaterOrEqual(t, byTrace[id][0].pos, prev[len(prev)-1].pos+cfg.ThinkSpans)
			// And in its spans' time: every span of the next turn starts after the
			// previous turn's root ended (the processor orders a session's turns by
			// their start, docs/decisions/sessions.md §4.5).
			prevEnd := prev[len(prev)-1].span.EndTimestamp()
			for _, s := range byTrace[id] {
				require.Greater(t, s.span.StartTimestamp(), prevEnd, "%s: turn %d starts after turn %d ended", sid, i, i-1)
			}
		}
	}
	assert.Greater(t, multi, len(sessionTurns)/4, "sessions have several turns")

	// Batches interleave turns of many sessions.
	first := map[pcommon.TraceID]bool{}
	sessions := map[string]bool{}
	for _, s := range all {
		if s.batch == 0 {
			first[s.span.TraceID()] = true
			sessions[strAttr(s.span, semconv.GenAIConversationID)] = true
		}
	}
	assert.Len(t, first, 256/cfg.ChunkSpans)
	assert.Len(t, sessions, 256/cfg.ChunkSpans)

	// Each batch names the roots it carries.
	var roots int
	for _, b := range bs {
		roots += len(b.roots)
	}
	assert.EqualValues(t, st.Turns, roots)

	// Spans per turn are agent-sized (the load: 26 on average).
	avg := float64(st.Spans) / float64(st.Turns)
	assert.InDelta(t, 26, avg, 6)
}

func TestWorkloadDeterministic(t *testing.T) {
	cfg := workloadConfig{Seed: 3, ActiveTurns: 20}
	a, _, sa := generate(t, cfg, 10, 128)
	b, _, sb := generate(t, cfg, 10, 128)
	assert.Equal(t, a.Stats(), b.Stats())
	require.Len(t, sb, len(sa))
	for i := range sa {
		assert.Equal(t, sa[i].span.SpanID(), sb[i].span.SpanID())
		assert.Equal(t, sa[i].span.Name(), sb[i].span.Name())
	}
}

// TestWorkloadIsEvaluated feeds the stream to the real agentsession processor: every turn,
// agent interaction and session of the load is recognised and evaluated, and every span
// passes through.
func TestWorkloadIsEvaluated(t *testing.T) {
	w, bs, all := generate(t, workloadConfig{Seed: 11, ActiveTurns: 40}, 30, 256)
	st := w.Stats()

	f := agentsessionprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*agentsessionprocessor.Config)
	// Every interaction gets its own span, so that each one recognised is counted (by
	// default only those with a tool issue do).
	cfg.Emit.Interactions = agentsessionprocessor.EmitToolCallsAll
	next := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, next)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	for _, b := range bs {
		require.NoError(t, p.ConsumeTraces(context.Background(), b.traces))
	}
	require.NoError(t, p.Shutdown(context.Background()))

	var plain int
	evalTurns := map[pcommon.TraceID]bool{}
	kinds := map[string]int64{}
	for _, td := range next.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					sp := spans.At(k)
					if !strings.HasPrefix(sp.Name(), semconv.EvalSpanPrefix) {
						plain++
						continue
					}
					kind := strAttr(sp, semconv.AgentEvalKind)
					kinds[kind]++
					if kind == semconv.EvalKindTurn {
						evalTurns[sp.TraceID()] = true
					}
				}
			}
		}
	}
	assert.Len(t, all, plain, "spans in == spans out")
	assert.EqualValues(t, st.Turns, len(evalTurns), "every turn is evaluated")
	assert.Equal(t, st.Interactions, kinds[semconv.EvalKindAgentInteract], "every agent span is an interaction")
	assert.Equal(t, st.Sessions, kinds[semconv.EvalKindAgentSession], "every session is evaluated once")
	assert.Positive(t, kinds[semconv.EvalKindToolCall], "calls outside their tool's schema are flagged")
}

func TestPlaceTurn(t *testing.T) {
	base := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	// A turn of 10 s built from base: a child from 2 s to 6 s, the root from 0 to 10 s.
	turn := func() []spanSpec {
		return []spanSpec{{start: at(2000), end: at(6000)}, {start: at(0), end: at(10000)}}
	}
	for _, tc := range []struct {
		name           string
		notBefore, now time.Time
		wantRoot       [2]time.Time
		wantChild      [2]time.Time
	}{
		{"no previous turn: ends now, durations kept", time.Time{}, at(60000),
			[2]time.Time{at(50000), at(60000)}, [2]time.Time{at(52000), at(56000)}},
		{"previous turn long ago: ends now, durations kept", at(40000), at(60000),
			[2]time.Time{at(50000), at(60000)}, [2]time.Time{at(52000), at(56000)}},
		{"previous turn ended 1.001 s ago: compressed into the last second", at(58999), at(60000),
			[2]time.Time{at(59000), at(60000)}, [2]time.Time{at(59200), at(59600)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := turn()
			end := placeTurn(out, at(0), at(10000), tc.notBefore, tc.now)
			assert.Equal(t, tc.now, end)
			assert.Equal(t, tc.wantRoot, [2]time.Time{out[1].start, out[1].end})
			assert.Equal(t, tc.wantChild, [2]time.Time{out[0].start, out[0].end})
		})
	}
	t.Run("a clock that did not move: after the previous turn all the same", func(t *testing.T) {
		out := turn()
		end := placeTurn(out, at(0), at(10000), at(60000), at(60000))
		assert.True(t, out[1].start.After(at(60000)))
		assert.Equal(t, end, out[1].end)
		assert.True(t, out[0].start.After(out[1].start) && out[0].end.Before(out[1].end))
	})
}
