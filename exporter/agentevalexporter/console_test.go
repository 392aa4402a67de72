// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/handoff/handofftest"
	"github.com/agenteval/agenteval-collector/internal/sessionjson"
)

func TestTurnConsoleLine(t *testing.T) {
	manyIssues := turn1(true)
	tc := &manyIssues.Interactions[0].ToolCalls[0]
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		tc.Issues = append(tc.Issues, evaluation.ToolIssue{
			ToolName: "refund_order", Issue: evaluation.IssueParameterHallucination, Parameter: p,
		})
	}
	hostile := turn1(true)
	hostile.SessionID = "evil\nsession id=1 " + strings.Repeat("x", 200)
	hostile.IsBad, hostile.DetectionType, hostile.Confidence = true, "hallucination", 0.456
	hostile.Interactions[0].ToolCalls[0].Issues = []evaluation.ToolIssue{{
		ToolName: "tool(with),parens\x00" + strings.Repeat("é", 100), Issue: evaluation.IssueInvalidParamValue,
		Parameter: strings.Repeat("p", 100),
	}}
	// Three issues of hostile length: the line reaches its cap.
	overLine := hostile
	overLine.Interactions = []evaluation.InteractionResult{hostile.Interactions[0]}
	overLine.Interactions[0].ToolCalls = []evaluation.ToolCallResult{hostile.Interactions[0].ToolCalls[0]}
	overLine.Interactions[0].ToolCalls[0].Issues = slices.Repeat(hostile.Interactions[0].ToolCalls[0].Issues, 3)
	hostileIssue := "INVALID_PARAM_VALUE(tool_with__parens_" + strings.Repeat("é", 14) + "….pppppppppppppppppppppppppppppppp…)"
	uncapped := "evaluate turn session=evil_session_id_1_" + strings.Repeat("x", 64-18) + "… turn=2 verdict=hallucination confidence=0.46 " +
		"issues=" + strings.Join([]string{hostileIssue, hostileIssue, hostileIssue}, ",")
	require.Greater(t, len(uncapped), consoleMaxLineBytes)
	revised := turn0(true)
	revised.Revised, revised.ReplacedDetectionType = true, "hallucination"
	revised.Partial = true
	// A turn span's summary: its issues do not name their tool (the call does).
	provisional := turn0(false)
	summary := evalspan.TurnSummary(&provisional)
	require.Empty(t, summary.Interactions[1].ToolCalls[1].Issues[0].ToolName)
	noParameter := turn1(true)
	noParameter.Interactions[0].ToolCalls[0].Issues = []evaluation.ToolIssue{{Issue: evaluation.IssueToolError}}

	tests := []struct {
		name string
		tr   evaluation.TurnResult
		want string
	}{
		{
			name: "bad turn with a tool issue and a call not evaluable (final verdict)",
			tr:   turn0(true),
			want: "evaluate turn session=sess-checkout turn=1 verdict=rdm confidence=0.90 issues=PARAMETER_HALLUCINATION(refund_order.reason) not_evaluable=1",
		},
		{
			name: "provisional result when the turn closes",
			tr:   turn0(false),
			want: "evaluate turn session=sess-checkout turn=1 verdict=ok confidence=0.00 final=false issues=PARAMETER_HALLUCINATION(refund_order.reason) not_evaluable=1",
		},
		{
			name: "turn span summary: the tool from the call",
			tr:   summary,
			want: "evaluate turn session=sess-checkout turn=1 verdict=ok confidence=0.00 final=false issues=PARAMETER_HALLUCINATION(refund_order.reason) not_evaluable=1",
		},
		{
			name: "issue without a parameter",
			tr:   noParameter,
			want: "evaluate turn session=sess-checkout turn=2 verdict=ok confidence=0.00 issues=TOOL_ERROR(" + noParameter.Interactions[0].ToolCalls[0].ToolName + ")",
		},
		{
			name: "good turn",
			tr:   turn1(true),
			want: "evaluate turn session=sess-checkout turn=2 verdict=ok confidence=0.00",
		},
		{
			name: "revised verdict of a partial session",
			tr:   revised,
			want: "evaluate turn session=sess-checkout turn=1 verdict=rdm confidence=0.90 revised=true replaces=hallucination partial=true issues=PARAMETER_HALLUCINATION(refund_order.reason) not_evaluable=1",
		},
		{
			name: "three issues named, the rest counted",
			tr:   manyIssues,
			want: "evaluate turn session=sess-checkout turn=2 verdict=ok confidence=0.00 issues=PARAMETER_HALLUCINATION(refund_order.a),PARAMETER_HALLUCINATION(refund_order.b),PARAMETER_HALLUCINATION(refund_order.c),+2",
		},
		{
			name: "hostile ids are cut and cannot break the line",
			tr:   hostile,
			want: "evaluate turn session=evil_session_id_1_" + strings.Repeat("x", 64-18) + "… turn=2 verdict=hallucination confidence=0.46 " +
				"issues=" + hostileIssue,
		},
		{
			name: "a line over its cap is cut to it, ending in …",
			tr:   overLine,
			want: uncapped[:consoleMaxLineBytes-len("…")] + "…", // 297 bytes end on a whole é
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := turnConsoleLine(&tt.tr)
			assert.Equal(t, tt.want, got)
			assertConsoleLine(t, got)
		})
	}
}

func TestSessionConsoleLine(t *testing.T) {
	unknown := analysisSupport()
	unknown.OverallScore, unknown.TaskCompletion = nil, nil
	checkout := analysisCheckout()
	checkout.AnalysisRevision = 2

	tests := []struct {
		name string
		a    evaluation.Analysis
		want string
	}{
		{
			name: "scored session, second revision",
			a:    checkout,
			want: "evaluate agent_session session=sess-checkout revision=2 overall=0.82 task_completion=true partial=false turns=2 bad_turns=1 tool_issues=1",
		},
		{
			name: "partial failed session",
			a:    analysisSupport(),
			want: "evaluate agent_session session=sess-support revision=0 overall=0.40 task_completion=false partial=true turns=1 bad_turns=0 tool_issues=0",
		},
		{
			name: "scores not computable",
			a:    unknown,
			want: "evaluate agent_session session=sess-support revision=0 overall=n/a task_completion=unknown partial=true turns=1 bad_turns=0 tool_issues=0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sessionConsoleLine(&tt.a)
			assert.Equal(t, tt.want, got)
			assertConsoleLine(t, got)
		})
	}
}

func TestConsoleToken(t *testing.T) {
	assert.Equal(t, "-", consoleToken("", 8))
	assert.Equal(t, "\uFFFD", consoleToken("\xff", 8))
}

func assertConsoleLine(t *testing.T, line string) {
	t.Helper()
	assert.LessOrEqual(t, len(line), consoleMaxLineBytes)
	assert.True(t, utf8.ValidString(line))
	assert.NotContains(t, line, "\n")
}

// TestConsoleSummaryLogs checks that console: summary logs exactly one info line per
// turn result and per stored analysis, and console: none nothing.
func TestConsoleSummaryLogs(t *testing.T) {
	for _, mode := range []ConsoleMode{ConsoleSummary, ConsoleNone} {
		t.Run(string(mode), func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			cfg := testConfig()
			cfg.Console = mode
			x := newTestExporter(t, cfg, func(e *agentEvalExporter) { e.logger = zap.New(core) })
			logs.TakeAll() // start-up lines

			require.NoError(t, x.consume(newSpanBuilder(t).appSpan().turn(turn0(false)).toolCall().appSpan().traces()))
			require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(true)).turn(turn1(false)).traces()))
			require.NoError(t, x.consume(newSpanBuilder(t).turn(turn1(true)).session(analysisCheckout()).session(analysisSupport()).traces()))

			evaluateLines := logs.FilterMessageSnippet("evaluate ").All()
			if mode == ConsoleNone {
				assert.Empty(t, evaluateLines)
				return
			}
			var msgs []string
			for _, e := range evaluateLines {
				assert.Equal(t, zapcore.InfoLevel, e.Level)
				msgs = append(msgs, e.Message)
			}
			assert.Equal(t, []string{
				"evaluate turn session=sess-checkout turn=1 verdict=ok confidence=0.00 final=false issues=PARAMETER_HALLUCINATION(refund_order.reason) not_evaluable=1",
				"evaluate turn session=sess-checkout turn=1 verdict=rdm confidence=0.90 issues=PARAMETER_HALLUCINATION(refund_order.reason) not_evaluable=1",
				"evaluate turn session=sess-checkout turn=2 verdict=ok confidence=0.00 final=false",
				"evaluate turn session=sess-checkout turn=2 verdict=ok confidence=0.00",
				"evaluate agent_session session=sess-checkout revision=0 overall=0.82 task_completion=true partial=false turns=2 bad_turns=1 tool_issues=1",
				"evaluate agent_session session=sess-support revision=0 overall=0.40 task_completion=false partial=true turns=1 bad_turns=0 tool_issues=0",
			}, msgs)
		})
	}
}

// readmeConsoleLines returns the console lines the README's §Console shows: the lines of
// the first code block after its heading.
func readmeConsoleLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "\n### Console\n")
	require.True(t, ok, "README.md has a Console section")
	_, rest, ok = strings.Cut(rest, "```\n")
	require.True(t, ok, "README.md §Console has a code block")
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	lines := strings.Split(strings.TrimSpace(block), "\n")
	require.NotEmpty(t, lines)
	return lines
}

// TestConsoleSummaryFromProcessorSpans: the console lines of the session the
// agentsession receiver's README posts (multi_agent_session.json, converted as the
// receiver does), evaluated by the agentsession processor and exported from its
// evaluation spans (the turn spans carry evalspan.TurnSummary), are the lines the
// README's §Console documents: an issue is named TYPE(tool.parameter), its tool that of
// the call and its parameter the argument at fault, as the query API has them. So are
// they with the in-process handoff (the results handed off, not decoded from the spans).
func TestConsoleSummaryFromProcessorSpans(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "internal", "sessionjson", "testdata", "multi_agent_session.json"))
	require.NoError(t, err)
	sessions, _, err := sessionjson.Parse(body)
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	convert := func() ptrace.Traces {
		// The receiver's defaults (end_session: true: the session is evaluated at once).
		return sessionjson.Convert(sessions[0], sessionjson.Options{EndSession: true}).Traces
	}

	consoleLines := func(t *testing.T, h *handoff.Handoff) []string {
		batches := runProcessorTraces(t, []ptrace.Traces{convert()}, h, 1)
		core, logs := observer.New(zapcore.InfoLevel)
		cfg := testConfig()
		cfg.Console = ConsoleSummary
		var x *testExporter
		if h == nil {
			x = newTestExporter(t, cfg, func(e *agentEvalExporter) { e.logger = zap.New(core) })
		} else {
			cfg.Handoff = &handofftest.ID
			x = newTestExporterWithExtensions(t, cfg, func(e *agentEvalExporter) { e.logger = zap.New(core) }, handofftest.NewHost(h))
		}
		logs.TakeAll() // start-up lines
		for _, td := range batches {
			require.NoError(t, x.consume(td))
		}
		if h != nil {
			assert.Zero(t, h.Len(), "every result taken from the handoff")
		}
		var lines []string
		for _, e := range logs.FilterMessageSnippet("evaluate ").All() {
			assertConsoleLine(t, e.Message)
			lines = append(lines, e.Message)
		}
		return lines
	}

	documented := readmeConsoleLines(t)
	require.Contains(t, documented, "evaluate turn session=sess-refund-001 turn=2 verdict=hallucination confidence=1.00 final=false "+
		"issues=PARAMETER_HALLUCINATION(refund_order.reason),TOOL_ERROR(refund_order)")

	plain := consoleLines(t, nil)
	assert.Equal(t, documented, plain, "the console lines are the README's")

	handed := consoleLines(t, handoff.New(64))
	assert.Equal(t, plain, handed, "with the handoff, the same console lines")
}
