// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"fmt"
	"strings"
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

// TestTurnsPartsCoverEveryTurn: past emit.max_session_span_bytes the session span and
// its turns parts carry every turn exactly once, each span within the bound (a span of
// one turn excepted: a turn larger than the bound is kept whole), the session span the
// newest turns with agent_eval.turns_omitted, the parts no result events, and an
// undecodable turn id is counted once, however the turn sizes run (docs/decisions/
// sessions.md §4.10).
func TestTurnsPartsCoverEveryTurn(t *testing.T) {
	const limit = 64 << 10
	sizes := map[string]func(i int) int{
		"even":                     func(int) int { return 3000 },
		"one huge newest turn":     func(i int) int { return map[bool]int{true: 200 << 10, false: 500}[i == 199] },
		"one huge turn in between": func(i int) int { return map[bool]int{true: 100 << 10, false: 1500}[i == 80] },
		"growing":                  func(i int) int { return 50 * i },
		"tiny":                     func(int) int { return 10 },
	}
	for name, size := range sizes {
		t.Run(name, func(t *testing.T) {
			const n = 200
			an := &evaluation.Analysis{SessionID: "long-1", AnalysisRevision: 1}
			for i := range n {
				an.TurnResults = append(an.TurnResults, evaluation.TurnResult{
					SessionID: "long-1", TurnIndex: i, Final: true,
					TraceID: fmt.Sprintf("%032x", i+1), RootSpanID: fmt.Sprintf("%016x", i+1),
					UserMessage: strings.Repeat("u", size(i)), FinalResponse: "ok",
				})
				an.ToolIssues = append(an.ToolIssues, evaluation.ToolIssue{TurnIndex: i, ToolName: "t", Issue: evaluation.IssueToolError})
			}
			an.TurnResults[5].TraceID = "not-hex" // linked by no span, counted once
			b := newEmitter(EmitConfig{MaxSessionSpanBytes: limit}, "a-key-of-sixteen-bytes").newBatch(time.Unix(0, 0))
			require.NoError(t, b.addSession(an))
			assert.Equal(t, 1, b.skipped, "the undecodable link, counted once")

			carried := map[int]int{}
			sessions := 0
			for i := range b.spans.Len() {
				sp := b.spans.At(i)
				got, err := evalspan.DecodeAnalysis(sp.Attributes())
				require.NoError(t, err)
				require.NotEmpty(t, got.TurnResults)
				if len(got.TurnResults) > 1 {
					assert.LessOrEqual(t, spanBytes(sp), limit, "span %d", i)
				}
				for _, tr := range got.TurnResults {
					carried[tr.TurnIndex]++
				}
				for _, is := range got.ToolIssues {
					if got.TurnsPart {
						assert.True(t, is.TurnIndex >= got.TurnResults[0].TurnIndex && is.TurnIndex <= got.TurnResults[len(got.TurnResults)-1].TurnIndex,
							"a part carries its own turns' tool issues only")
					}
				}
				if got.TurnsPart {
					assert.Zero(t, sp.Events().Len())
					continue
				}
				sessions++
				assert.Equal(t, n-1, got.TurnResults[len(got.TurnResults)-1].TurnIndex, "the session span carries the newest turns")
				assert.Len(t, got.ToolIssues, n, "the session span carries every tool issue")
				v, ok := sp.Attributes().Get(semconv.AgentEvalTurnsOmitted)
				if first := got.TurnResults[0].TurnIndex; first > 0 {
					require.True(t, ok)
					assert.Equal(t, int64(first), v.Int())
				} else {
					assert.False(t, ok, "every turn fits: none omitted")
				}
			}
			assert.Equal(t, 1, sessions)
			for i := range n {
				assert.Equal(t, 1, carried[i], "turn %d", i)
			}
			t.Logf("%d spans", b.spans.Len())
		})
	}
}
