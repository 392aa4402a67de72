// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadatatest"
)

// TestEmitSkipsUndecodableIDsCounted: an evaluated entity whose trace or span id is not a
// valid hex id gets no evaluation span, and each one left out is counted and logged,
// never dropped silently.
func TestEmitSkipsUndecodableIDsCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig()
	cfg.Emit.Interactions = EmitToolCallsAll
	p, _, _ := newTestProcessor(t, cfg, tel)
	core, logs := observer.New(zapcore.WarnLevel)
	p.logger = zap.New(core)

	const goodTrace, goodSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	score := 1.0
	tr := &evaluation.TurnResult{
		TraceID:    goodTrace,
		RootSpanID: goodSpan,
		Interactions: []evaluation.InteractionResult{
			{AgentID: "triage_agent", SpanID: "not-hex", Score: &score},        // skipped
			{AgentID: "refund_agent", SpanID: goodSpan, Score: &score},         // emitted
			{AgentID: "refund_agent", SpanID: "b7ad6b71692033", Score: &score}, // wrong length: skipped
		},
	}
	b := p.emitter.newBatch(time.Unix(0, 0))
	b.addTurn("conv-1", tr)
	bad := &evaluation.TurnResult{TraceID: "zz", RootSpanID: goodSpan}
	b.addTurn("conv-2", bad) // the turn span itself: skipped

	assert.Equal(t, 2, b.spans.Len(), "one interaction span and one turn span")
	assert.Equal(t, 3, b.skipped)
	p.reportSkipped(context.Background(), b)

	metadatatest.AssertEqualProcessorAgentsessionEvaluationSpansSkipped(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 3}}, metricdatatest.IgnoreTimestamp())
	entries := logs.FilterMessageSnippet("evaluation spans left out").All()
	require.Len(t, entries, 1)
	assert.Equal(t, int64(3), entries[0].ContextMap()["skipped"])
	assert.Contains(t, entries[0].ContextMap()["error"], "session conv-1: evaluate agent_interaction")
}

// TestEmitInteractionsPolicy: with emit.interactions issues (the default) only an
// interaction with a tool call that has an issue or is not evaluable gets its own span;
// every interaction's scores ride on the turn span, whose summary leaves the texts and
// explanations to the session span.
func TestEmitInteractionsPolicy(t *testing.T) {
	const trace, root = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	score := 0.5
	tr := &evaluation.TurnResult{
		TraceID: trace, RootSpanID: root, UserMessage: "refund order 42", FinalResponse: "done",
		Explanations: map[string]string{"intent_drift": "same intent"},
		Interactions: []evaluation.InteractionResult{
			{AgentID: "triage", SpanID: "b7ad6b7169203332", Score: &score, Explanations: map[string]string{"score": "why"},
				ToolCalls: []evaluation.ToolCallResult{{ToolName: "lookup", Verdict: evaluation.VerdictValid, Explanation: "ok"}}},
			{AgentID: "refund", SpanID: "b7ad6b7169203333", Score: &score,
				ToolCalls: []evaluation.ToolCallResult{{ToolName: "refund", Verdict: evaluation.VerdictInvalid,
					Issues: []evaluation.ToolIssue{{Issue: evaluation.IssueMissingRequiredParam, Severity: evaluation.SeverityHigh, Message: "order_id missing"}}}}},
		},
	}
	for policy, want := range map[EmitPolicy][]string{
		EmitToolCallsIssues: {"refund"},
		EmitToolCallsAll:    {"triage", "refund"},
		EmitToolCallsNone:   nil,
	} {
		t.Run(string(policy), func(t *testing.T) {
			cfg := testConfig()
			cfg.Emit.Interactions = policy
			e := newEmitter(cfg.Emit, "")
			b := e.newBatch(time.Unix(0, 0))
			b.addTurn("conv-1", tr)
			var agents []string
			var turn evaluation.TurnResult
			for i := range b.spans.Len() {
				sp := b.spans.At(i)
				kind, _ := sp.Attributes().Get(semconv.AgentEvalKind)
				switch kind.Str() {
				case semconv.EvalKindAgentInteract:
					name, _ := sp.Attributes().Get(semconv.GenAIAgentName)
					agents = append(agents, name.Str())
				case semconv.EvalKindTurn:
					var err error
					turn, err = evalspan.DecodeTurn(sp.Attributes())
					require.NoError(t, err)
					require.NoError(t, e.signer.Verify(sp.Attributes()))
				}
			}
			assert.Equal(t, want, agents)
			require.Len(t, turn.Interactions, 2, "every interaction's scores are on the turn span")
			assert.Equal(t, &score, turn.Interactions[0].Score)
			assert.Empty(t, turn.Interactions[0].Explanations)
			assert.Equal(t, evaluation.IssueMissingRequiredParam, turn.Interactions[1].ToolCalls[0].Issues[0].Issue)
			assert.Empty(t, turn.Interactions[1].ToolCalls[0].Issues[0].Message)
			assert.Empty(t, turn.FinalResponse)
			assert.Equal(t, "refund order 42", turn.UserMessage)
		})
	}
	assert.Equal(t, "order_id missing", tr.Interactions[1].ToolCalls[0].Issues[0].Message, "the result itself is not modified")
}

// TestWireDefaultsGate: with processor.agentsession.evaluationSpanWireDefaults disabled
// the turn and session spans carry every value and no wire-defaults attribute (the form
// an older exporter reads); enabled (the default) they leave the defaults out. Both
// verify and decode to the same results.
func TestWireDefaultsGate(t *testing.T) {
	require.True(t, wireDefaultsGate.IsEnabled(), "beta: enabled by default")
	t.Cleanup(func() { require.NoError(t, featuregate.GlobalRegistry().Set(wireDefaultsGate.ID(), true)) })
	score := 1.0
	tr := &evaluation.TurnResult{
		TraceID: "0af7651916cd43dd8448eb211c80319c", RootSpanID: "b7ad6b7169203331", UserMessage: "refund order 42",
		Interactions: []evaluation.InteractionResult{{AgentID: "triage", SpanID: "b7ad6b7169203332", Status: "ok", Score: &score,
			ToolCalls: []evaluation.ToolCallResult{{AgentID: "triage", ToolName: "lookup", Verdict: evaluation.VerdictValid,
				Score: &score, Executed: true, Status: "ok", Issues: []evaluation.ToolIssue{}, Explanation: evaluation.ExplanationAllChecksPassed}}}},
	}
	an := &evaluation.Analysis{SessionID: "conv-1", TurnResults: []evaluation.TurnResult{*tr}}
	decoded := map[bool][2]any{}
	for _, enabled := range []bool{false, true} {
		require.NoError(t, featuregate.GlobalRegistry().Set(wireDefaultsGate.ID(), enabled))
		e := newEmitter(testConfig().Emit, "")
		b := e.newBatch(time.Unix(0, 0))
		b.addTurn("conv-1", tr)
		require.NoError(t, b.addSession(an))
		var got [2]any
		for i := range b.spans.Len() {
			attrs := b.spans.At(i).Attributes()
			kind, _ := attrs.Get(semconv.AgentEvalKind)
			var key string
			var err error
			switch kind.Str() {
			case semconv.EvalKindTurn:
				key = semconv.AgentEvalTurnWireDefaults
				got[0], err = evalspan.DecodeTurn(attrs)
			case semconv.EvalKindAgentSession:
				key = semconv.AgentEvalSessionWireDefaults
				got[1], err = evalspan.DecodeAnalysis(attrs)
			default:
				continue
			}
			require.NoError(t, err)
			require.NoError(t, e.signer.Verify(attrs))
			_, has := attrs.Get(key)
			assert.Equal(t, enabled, has, "%s with the gate enabled=%v", key, enabled)
		}
		require.NotNil(t, got[0])
		require.NotNil(t, got[1])
		decoded[enabled] = got
	}
	assert.Equal(t, decoded[false], decoded[true])
	session := decoded[true][1].(evaluation.Analysis)
	require.Len(t, session.TurnResults, 1)
	assert.Equal(t, tr.Interactions, session.TurnResults[0].Interactions, "the defaults left out are restored")
}

// TestLimitWarned: a limit that closes sessions early (here max_sessions evicting the
// least recently active) is logged at warning level, naming a session, the reason and the
// limit, at most once a minute with the count since the last warning; before, only the
// sessions_evicted metric showed it.
func TestLimitWarned(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSessions = 2
	p, _, clk := newTestProcessor(t, cfg, nil)
	core, logs := observer.New(zapcore.WarnLevel)
	p.logger = zap.New(core)
	ctx := context.Background()
	open := func(from, to int) {
		for i := from; i < to; i++ {
			_, err := p.processTraces(ctx, chatTurn(fmt.Sprintf("limit-%d", i), i, clk.now(), "What is the weather in Paris?", "Sunny.", false))
			require.NoError(t, err)
			p.step(ctx)
		}
	}
	open(0, 5) // three sessions evicted
	warned := logs.FilterMessageSnippet("a limit closed sessions early").All()
	require.Len(t, warned, 1, "once a minute")
	fields := warned[0].ContextMap()
	assert.Equal(t, "max_sessions", fields["reason"])
	assert.Equal(t, int64(2), fields["limit"])
	assert.Equal(t, "limit-0", fields["session_id"])
	clk.advance(2 * time.Minute)
	open(5, 6)
	warned = logs.FilterMessageSnippet("a limit closed sessions early").All()
	require.Len(t, warned, 2)
	assert.Equal(t, int64(3), warned[1].ContextMap()["sessions_closed_by_limits"], "the two suppressed and this one")
}
