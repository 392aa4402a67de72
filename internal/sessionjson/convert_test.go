// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package sessionjson

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// seqIDs makes deterministic ids: trace/span ids count up, session ids are "gen-N".
type seqIDs struct{ trace, span, session uint64 }

func (g *seqIDs) NewTraceID() pcommon.TraceID {
	g.trace++
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[8:], g.trace)
	id[0] = 0xab
	return id
}

func (g *seqIDs) NewSpanID() pcommon.SpanID {
	g.span++
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], g.span)
	return id
}

func (g *seqIDs) NewSessionID() string {
	g.session++
	return fmt.Sprintf("gen-%d", g.session)
}

var fixedNow = time.Date(2026, 4, 2, 12, 0, 0, 0, time.UTC)

func testOptions() Options {
	return Options{EndSession: true, IDs: &seqIDs{}, Now: func() time.Time { return fixedNow }}
}

func parseOne(t *testing.T, body string) Session {
	t.Helper()
	ss, _, err := Parse([]byte(body))
	require.NoError(t, err)
	require.Len(t, ss, 1)
	return ss[0]
}

// spansOf returns the converted spans in emission order.
func spansOf(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				out = append(out, ss.At(k))
			}
		}
	}
	return out
}

func str(t *testing.T, sp ptrace.Span, key string) string {
	t.Helper()
	v, ok := sp.Attributes().Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

func hasAttr(sp ptrace.Span, key string) bool {
	_, ok := sp.Attributes().Get(key)
	return ok
}

func dur(sp ptrace.Span) time.Duration {
	return time.Duration(sp.EndTimestamp() - sp.StartTimestamp())
}

func TestConvertMultiAgentSession(t *testing.T) {
	s := parseOne(t, readFile(t, "multi_agent_session.json"))
	got := Convert(s, testOptions())

	assert.Equal(t, "sess-refund-001", got.SessionID)
	require.Len(t, got.TraceIDs, 2)
	assert.NotEqual(t, got.TraceIDs[0], got.TraceIDs[1])
	spans := spansOf(got.Traces)
	require.Equal(t, got.SpanCount, len(spans))

	names := make([]string, len(spans))
	for i, sp := range spans {
		names[i] = sp.Name()
		assert.Equal(t, "sess-refund-001", str(t, sp, semconv.GenAIConversationID), "span %s", sp.Name())
	}
	assert.Equal(t, []string{
		"invoke_workflow agent_session",
		"invoke_agent planner", "chat", "chat", "execute_tool delegate_task",
		"invoke_agent executor", "chat", "execute_tool lookup_order",
		"invoke_workflow agent_session",
		"invoke_agent executor", "chat", "execute_tool refund_order",
	}, names)
	root0, planner, thought, delegateReq, delegate := spans[0], spans[1], spans[2], spans[3], spans[4]
	executor0, lookup := spans[5], spans[7]
	root1, executor1, refundReq, refund := spans[8], spans[9], spans[10], spans[11]

	t.Run("trace structure", func(t *testing.T) {
		assert.True(t, root0.ParentSpanID().IsEmpty())
		assert.True(t, root1.ParentSpanID().IsEmpty())
		for _, sp := range spans[1:8] {
			assert.Equal(t, got.TraceIDs[0], sp.TraceID().String())
		}
		for _, sp := range []ptrace.Span{planner, executor0} {
			assert.Equal(t, root0.SpanID(), sp.ParentSpanID())
		}
		for _, sp := range []ptrace.Span{thought, delegateReq, delegate} {
			assert.Equal(t, planner.SpanID(), sp.ParentSpanID())
		}
		assert.Equal(t, executor0.SpanID(), lookup.ParentSpanID())
		assert.Equal(t, got.TraceIDs[1], refund.TraceID().String())
		assert.Equal(t, executor1.SpanID(), refund.ParentSpanID())
	})

	t.Run("turn roots", func(t *testing.T) {
		assert.Equal(t, semconv.OpInvokeWorkflow, str(t, root0, semconv.GenAIOperationName))
		assert.Equal(t, DefaultWorkflowName, str(t, root0, semconv.GenAIWorkflowName))
		assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"Please refund order 4417, the mug arrived broken."}]}]`,
			str(t, root0, semconv.GenAIInputMessages))
		// The executor gave no response in turn 0: the planner's is the final answer.
		assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"Looking up order 4417."}],"finish_reason":"stop"}]`,
			str(t, root0, semconv.GenAIOutputMessages))
		assert.False(t, hasAttr(root0, semconv.AgentEvalSessionEnd), "only the last turn ends the session")
		assert.False(t, hasAttr(root0, semconv.AgentEvalTaskCompleted))
		end, ok := root1.Attributes().Get(semconv.AgentEvalSessionEnd)
		require.True(t, ok)
		assert.True(t, end.Bool())
		done, ok := root1.Attributes().Get(semconv.AgentEvalTaskCompleted)
		require.True(t, ok)
		assert.True(t, done.Bool())
	})

	t.Run("agent spans", func(t *testing.T) {
		assert.Equal(t, semconv.OpInvokeAgent, str(t, planner, semconv.GenAIOperationName))
		assert.Equal(t, "planner", str(t, planner, semconv.GenAIAgentName))
		assert.Equal(t, "planner", str(t, planner, semconv.GenAIAgentID))
		assert.Equal(t, "Plans the work and delegates it", str(t, planner, semconv.GenAIAgentDescription))
		assert.JSONEq(t, `[{"type":"function","name":"delegate_task","description":"Delegate a task to another agent",
			"parameters":{"type":"object","properties":{"agent_id":{"type":"string"},"task":{"type":"string"}},
			"required":["agent_id","task"],"additionalProperties":false}}]`, str(t, planner, semconv.GenAIToolDefinitions))
		// A JSON Schema parameters_schema is kept as is.
		var defs []map[string]any
		require.NoError(t, json.Unmarshal([]byte(str(t, executor0, semconv.GenAIToolDefinitions)), &defs))
		require.Len(t, defs, 2)
		assert.Equal(t, []any{"order_id"}, defs[1]["parameters"].(map[string]any)["required"])
		// The receiving agent's input is what the previous agent handed on.
		assert.JSONEq(t, `[{"role":"assistant","name":"planner","parts":[{"type":"text","content":"Looking up order 4417."}]}]`,
			str(t, executor0, semconv.GenAIInputMessages))
		assert.False(t, hasAttr(executor0, semconv.GenAIOutputMessages), "no agent_response, no output")
		assert.Equal(t, 400*time.Millisecond, dur(planner))
		assert.Equal(t, 120*time.Millisecond, dur(executor0))
		// latency_ms 300 exceeds the 250ms tool call plus gaps.
		assert.Equal(t, 300*time.Millisecond, dur(executor1))
	})

	t.Run("steps", func(t *testing.T) {
		assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"reasoning","content":"The executor can look the order up; I delegate."}],"finish_reason":"stop"}]`,
			str(t, thought, semconv.GenAIOutputMessages))
		assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_0_0_1","name":"delegate_task","arguments":{"agent_id":"executor","task":"Look up order 4417"}}],"finish_reason":"tool_call"}]`,
			str(t, delegateReq, semconv.GenAIOutputMessages))
		assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"reasoning","content":"Refund the full amount."},{"type":"tool_call","id":"call_1_0_0","name":"refund_order","arguments":{"order_id":"4417","amount":12.5,"reason":"broken"}}],"finish_reason":"tool_call"}]`,
			str(t, refundReq, semconv.GenAIOutputMessages))
	})

	t.Run("tool calls", func(t *testing.T) {
		assert.Equal(t, semconv.OpExecuteTool, str(t, lookup, semconv.GenAIOperationName))
		assert.Equal(t, "lookup_order", str(t, lookup, semconv.GenAIToolName))
		assert.Equal(t, "call_0_1_0", str(t, lookup, semconv.GenAIToolCallID))
		assert.Equal(t, "Fetch an order", str(t, lookup, semconv.GenAIToolDescription))
		assert.JSONEq(t, `{"order_id":"4417"}`, str(t, lookup, semconv.GenAIToolCallArguments))
		assert.JSONEq(t, `{"order_id":"4417","total":12.5,"status":"delivered"}`, str(t, lookup, semconv.GenAIToolCallResult))
		assert.Equal(t, 80*time.Millisecond, dur(lookup))
		assert.Equal(t, ptrace.StatusCodeUnset, lookup.Status().Code())
		assert.False(t, hasAttr(lookup, semconv.GenAITransferMode), "a plain tool call is no transfer")

		assert.Equal(t, ptrace.StatusCodeError, refund.Status().Code())
		assert.Equal(t, "payment gateway timeout", refund.Status().Message())
		assert.Equal(t, ErrorTypeTool, str(t, refund, semconv.ErrorType))
		assert.Equal(t, 250*time.Millisecond, dur(refund))
		assert.Equal(t, "call_1_0_0", str(t, refund, semconv.GenAIToolCallID), "request and execution share the call id")

		// delegate_task{agent_id: executor} hands over to another agent of the session.
		assert.Equal(t, semconv.TransferModePassControl, str(t, delegate, semconv.GenAITransferMode))
		assert.Equal(t, "executor", str(t, delegate, semconv.GenAITransferTargetName))
		assert.Equal(t, semconv.TransferTargetTypeAgent, str(t, delegate, semconv.GenAITransferTargetType))
	})

	t.Run("timing", func(t *testing.T) {
		start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		assert.Equal(t, start, root0.StartTimestamp().AsTime(), "session_metadata.timestamp is the start")
		for i := 1; i < len(spans); i++ {
			assert.Greater(t, spans[i].StartTimestamp(), spans[i-1].StartTimestamp(), "span %d (%s) starts after span %d", i, names[i], i-1)
		}
		for _, sp := range spans {
			assert.GreaterOrEqual(t, sp.EndTimestamp(), sp.StartTimestamp())
		}
		assert.Greater(t, root1.StartTimestamp(), root0.EndTimestamp(), "turns do not overlap")
		assert.GreaterOrEqual(t, root0.EndTimestamp(), executor0.EndTimestamp(), "a root covers its agents")
		assert.GreaterOrEqual(t, planner.EndTimestamp(), delegate.EndTimestamp(), "an agent covers its tool calls")
	})
}

func TestConvertGolden(t *testing.T) {
	for _, name := range []string{"multi_agent_session", "single_agent_trace"} {
		t.Run(name, func(t *testing.T) {
			s := parseOne(t, readFile(t, name+".json"))
			got := Convert(s, testOptions())
			path := filepath.Join("testdata", name+"-expected.yaml")
			if *update {
				require.NoError(t, golden.WriteTracesToFile(path, got.Traces))
			}
			want, err := golden.ReadTraces(path)
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(want, got.Traces))
		})
	}
}

func TestConvertSingleAgentForm(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantAgent string
		wantDefs  string // gen_ai.tool.definitions of the agent span ("" = absent)
	}{
		{
			name:      "no agents declared: ReAsk's default agent",
			body:      `{"turns": [{"user_message": "hi", "agent_response": "hello"}]}`,
			wantAgent: DefaultAgentID,
		},
		{
			name:      "first declared agent answers",
			body:      `{"agents": [{"id": "coder", "tools_available": [{"name": "read_file", "parameters_schema": {"path": "str"}}]}, {"id": "other"}], "turns": [{"user_message": "hi", "agent_response": "hello"}]}`,
			wantAgent: "coder",
			wantDefs:  `[{"type":"function","name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Convert(parseOne(t, tt.body), testOptions())
			spans := spansOf(got.Traces)
			require.Len(t, spans, 2)
			assert.Equal(t, "invoke_agent "+tt.wantAgent, spans[1].Name())
			assert.Equal(t, tt.wantAgent, str(t, spans[1], semconv.GenAIAgentName))
			assert.Equal(t, tt.wantDefs != "", hasAttr(spans[1], semconv.GenAIToolDefinitions))
			if tt.wantDefs != "" {
				assert.JSONEq(t, tt.wantDefs, str(t, spans[1], semconv.GenAIToolDefinitions))
			}
			assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`, str(t, spans[1], semconv.GenAIInputMessages))
			assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"hello"}],"finish_reason":"stop"}]`, str(t, spans[1], semconv.GenAIOutputMessages))
		})
	}

	t.Run("steps, action and observation", func(t *testing.T) {
		got := Convert(parseOne(t, readFile(t, "single_agent_trace.json")), testOptions())
		spans := spansOf(got.Traces)
		names := make([]string, len(spans))
		for i, sp := range spans {
			names[i] = sp.Name()
		}
		assert.Equal(t, []string{
			"invoke_workflow agent_session", "invoke_agent agent", "chat", "chat", "execute_tool read_file",
			"invoke_workflow agent_session", "invoke_agent agent",
		}, names)
		assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"reasoning","content":"Read the login code first"},{"type":"text","content":"inspect auth/login.py"}],"finish_reason":"stop"}]`,
			str(t, spans[2], semconv.GenAIOutputMessages))
		assert.Equal(t, "passwords are compared case-sensitively after lower()", str(t, spans[2], AttrStepObservation))
		assert.Equal(t, 45*time.Millisecond, dur(spans[4]))
		// No timestamp in the body: the session ends at Now.
		assert.Equal(t, fixedNow, spans[5].EndTimestamp().AsTime())
		assert.Less(t, spans[0].StartTimestamp().AsTime(), fixedNow)
		assert.Equal(t, "gen-1", got.SessionID, "a session without session_id gets a generated one")
		for _, sp := range spans {
			assert.Equal(t, "gen-1", str(t, sp, semconv.GenAIConversationID))
		}
	})
}

func TestConvertDataset(t *testing.T) {
	sessions, _, err := Parse([]byte(readFile(t, "dataset.json")))
	require.NoError(t, err)
	require.Len(t, sessions, 2)
	ids := &seqIDs{}
	opts := Options{EndSession: true, IDs: ids, Now: func() time.Time { return fixedNow }}
	first := Convert(sessions[0], opts)
	second := Convert(sessions[1], opts)
	assert.Equal(t, "ticket-1", first.SessionID)
	assert.Equal(t, "ticket-2", second.SessionID)
	assert.NotEqual(t, first.TraceIDs[0], second.TraceIDs[0])

	spans := spansOf(first.Traces)
	// root, triage, chat (tool_call request), execute_tool transfer_to_billing, billing
	require.Len(t, spans, 5)
	transfer := spans[3]
	assert.Equal(t, "execute_tool transfer_to_billing", transfer.Name())
	assert.Equal(t, "billing", str(t, transfer, semconv.GenAITransferTargetName), "target from the transfer_to_<agent> name")
	assert.JSONEq(t, `{}`, str(t, transfer, semconv.GenAIToolCallArguments))
	// An empty parameters_schema is an unknown schema: the definition has no parameters.
	assert.JSONEq(t, `[{"type":"function","name":"transfer_to_billing"}]`, str(t, spans[1], semconv.GenAIToolDefinitions))
	// A declared empty tool list is known: the agent may call nothing.
	assert.Equal(t, "[]", str(t, spans[4], semconv.GenAIToolDefinitions))
	// billing's input is triage's last tool result, else nothing: here the transfer had no result.
	assert.False(t, hasAttr(spans[4], semconv.GenAIInputMessages))
}

func TestConvertOptionsAndEdgeCases(t *testing.T) {
	t.Run("end_session off", func(t *testing.T) {
		opts := testOptions()
		opts.EndSession = false
		got := Convert(parseOne(t, `{"turns": [{"agent_response": "a"}, {"agent_response": "b"}]}`), opts)
		for _, sp := range spansOf(got.Traces) {
			assert.False(t, hasAttr(sp, semconv.AgentEvalSessionEnd))
		}
	})
	t.Run("service and workflow names", func(t *testing.T) {
		opts := testOptions()
		opts.ServiceName, opts.WorkflowName = "replay", "support"
		got := Convert(parseOne(t, `{"turns": [{"agent_response": "a"}]}`), opts)
		svc, _ := got.Traces.ResourceSpans().At(0).Resource().Attributes().Get(semconv.ServiceName)
		assert.Equal(t, "replay", svc.Str())
		assert.Equal(t, ScopeName, got.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Scope().Name())
		root := spansOf(got.Traces)[0]
		assert.Equal(t, "invoke_workflow support", root.Name())
		assert.Equal(t, "support", str(t, root, semconv.GenAIWorkflowName))
	})
	t.Run("default service name", func(t *testing.T) {
		got := Convert(parseOne(t, `{"turns": [{"agent_response": "a"}]}`), Options{})
		svc, _ := got.Traces.ResourceSpans().At(0).Resource().Attributes().Get(semconv.ServiceName)
		assert.Equal(t, DefaultServiceName, svc.Str())
		assert.Len(t, got.SessionID, 32, "random session ids are 128-bit hex")
	})
	t.Run("malformed arguments are passed on as raw text", func(t *testing.T) {
		got := Convert(parseOne(t, `{"turns": [{"agent_steps": [{"tool_call": {"tool_name": "t", "parameters": "{not json"}}]}]}`), testOptions())
		spans := spansOf(got.Traces)
		require.Len(t, spans, 4)
		assert.Equal(t, "{not json", str(t, spans[3], semconv.GenAIToolCallArguments))
		assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_0_0_0","name":"t","arguments":"{not json"}],"finish_reason":"tool_call"}]`,
			str(t, spans[2], semconv.GenAIOutputMessages))
	})
	t.Run("missing arguments are not captured", func(t *testing.T) {
		got := Convert(parseOne(t, `{"turns": [{"agent_steps": [{"tool_call": {"tool_name": "t", "call_id": "c9"}}]}]}`), testOptions())
		spans := spansOf(got.Traces)
		require.Len(t, spans, 4)
		assert.False(t, hasAttr(spans[3], semconv.GenAIToolCallArguments))
		assert.Equal(t, "c9", str(t, spans[3], semconv.GenAIToolCallID), "a given call_id is kept")
	})
	t.Run("tool_execution_result", func(t *testing.T) {
		body := `{"turns": [{"agent_interactions": [
			{"agent_id": "x", "agent_steps": [{"tool_call": {"tool_name": "q", "parameters": {"a": 1}}}], "tool_execution_result": {"tool_name": "q", "parameters": {"a":1}, "output": "dup"}},
			{"agent_id": "y", "tool_execution_result": {"tool_name": "w", "parameters": {"b": 2}, "output": "ok", "error": "boom"}}]}]}`
		spans := spansOf(Convert(parseOne(t, body), testOptions()).Traces)
		var names []string
		for _, sp := range spans {
			names = append(names, sp.Name())
		}
		assert.Equal(t, []string{"invoke_workflow agent_session", "invoke_agent x", "chat", "execute_tool q", "invoke_agent y", "execute_tool w"}, names,
			"a tool_execution_result equal to a step's call is not duplicated")
		w := spans[5]
		assert.Equal(t, "call_0_1_exec", str(t, w, semconv.GenAIToolCallID))
		assert.Equal(t, "ok", str(t, w, semconv.GenAIToolCallResult))
		assert.Equal(t, ptrace.StatusCodeError, w.Status().Code())
		// y's input is x's last tool result (x gave no response).
		assert.JSONEq(t, `[{"role":"assistant","name":"x","parts":[{"type":"text","content":"dup"}]}]`, str(t, spans[4], semconv.GenAIInputMessages))
	})
	t.Run("agent latency shorter than its tool calls", func(t *testing.T) {
		body := `{"turns": [{"agent_interactions": [{"agent_id": "x", "latency_ms": 10, "agent_steps": [{"tool_call": {"tool_name": "q", "latency_ms": 50}}]}]}]}`
		spans := spansOf(Convert(parseOne(t, body), testOptions()).Traces)
		assert.Greater(t, dur(spans[1]), 50*time.Millisecond, "the agent span covers its children")
	})
	t.Run("agent-to-agent turn without user message", func(t *testing.T) {
		body := `{"turns": [{"user_message": null, "agent_interactions": [{"agent_id": "x", "agent_response": "r"}]}]}`
		spans := spansOf(Convert(parseOne(t, body), testOptions()).Traces)
		assert.False(t, hasAttr(spans[0], semconv.GenAIInputMessages))
		assert.False(t, hasAttr(spans[1], semconv.GenAIInputMessages))
	})
	t.Run("transfer to itself or to an unknown agent is no transfer", func(t *testing.T) {
		body := `{"turns": [{"agent_interactions": [{"agent_id": "x", "agent_steps": [
			{"tool_call": {"tool_name": "transfer_to_x", "parameters": {}}},
			{"tool_call": {"tool_name": "delegate", "parameters": {"agent_id": "nobody"}}},
			{"tool_call": {"tool_name": "delegate", "parameters": {"agent_name": "Y"}}}]},
			{"agent_id": "y"}]}]}`
		spans := spansOf(Convert(parseOne(t, body), testOptions()).Traces)
		var targets []string
		for _, sp := range spans {
			if str(t, sp, semconv.GenAIOperationName) == semconv.OpExecuteTool {
				targets = append(targets, str(t, sp, semconv.GenAITransferTargetName))
			}
		}
		assert.Equal(t, []string{"", "", "y"}, targets, "agent names match case-insensitively")
	})
	t.Run("final_response overrides", func(t *testing.T) {
		body := `{"turns": [{"final_response": "F", "agent_interactions": [{"agent_id": "x", "agent_response": "r"}]}]}`
		root := spansOf(Convert(parseOne(t, body), testOptions()).Traces)[0]
		assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"F"}],"finish_reason":"stop"}]`, str(t, root, semconv.GenAIOutputMessages))
	})
	t.Run("huge latencies and out-of-range timestamps stay in range", func(t *testing.T) {
		body := `{"session_metadata": {"timestamp": "1900-01-01T00:00:00Z"}, "turns": [{"agent_interactions": [{"agent_id": "x", "latency_ms": 1e300,
			"agent_steps": [{"tool_call": {"tool_name": "q", "latency_ms": 1e20}}]}]}]}`
		spans := spansOf(Convert(parseOne(t, body), testOptions()).Traces)
		require.Len(t, spans, 4)
		assert.Equal(t, maxLatency, dur(spans[3]), "tool latency clamped")
		assert.Equal(t, fixedNow, spans[0].EndTimestamp().AsTime(), "a pre-1970 timestamp is ignored: the session ends at Now")
		for _, sp := range spans {
			assert.GreaterOrEqual(t, sp.EndTimestamp(), sp.StartTimestamp())
			assert.Less(t, sp.EndTimestamp().AsTime(), fixedNow.Add(time.Second))
		}
	})
	t.Run("empty interactions list gives a bare turn", func(t *testing.T) {
		got := Convert(parseOne(t, `{"turns": [{"user_message": "u", "agent_interactions": []}]}`), testOptions())
		assert.Equal(t, 1, got.SpanCount)
	})
}

// FuzzParseConvert checks that any body either fails validation with a field error or
// converts into well-formed traces: one trace per turn, every span in the session.
func FuzzParseConvert(f *testing.F) {
	for _, name := range []string{"multi_agent_session.json", "single_agent_trace.json", "dataset.json"} {
		b, err := readTestdata(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"trace": {"turns": [{"agent_steps": [{"tool_call": {"tool_name": "t", "parameters": [1]}}]}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sessions, _, err := Parse(body)
		if err != nil {
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			return
		}
		for _, s := range sessions {
			got := Convert(s, testOptions())
			require.Len(t, got.TraceIDs, len(s.Turns))
			spans := spansOf(got.Traces)
			require.Len(t, spans, got.SpanCount)
			byID := map[pcommon.SpanID]ptrace.Span{}
			for _, sp := range spans {
				require.NotContains(t, byID, sp.SpanID(), "span id used twice")
				byID[sp.SpanID()] = sp
			}
			roots := map[string]int{}
			for _, sp := range spans {
				require.Equal(t, got.SessionID, str(t, sp, semconv.GenAIConversationID))
				require.GreaterOrEqual(t, sp.EndTimestamp(), sp.StartTimestamp())
				require.Contains(t, got.TraceIDs, sp.TraceID().String())
				if sp.ParentSpanID().IsEmpty() {
					roots[sp.TraceID().String()]++
					continue
				}
				// A child is in its parent's trace and within its parent's time.
				parent, ok := byID[sp.ParentSpanID()]
				require.True(t, ok, "span %q has no parent in the body", sp.Name())
				require.Equal(t, parent.TraceID(), sp.TraceID())
				require.GreaterOrEqual(t, sp.StartTimestamp(), parent.StartTimestamp(), "%q starts before its parent", sp.Name())
				require.LessOrEqual(t, sp.EndTimestamp(), parent.EndTimestamp(), "%q ends after its parent", sp.Name())
			}
			for _, id := range got.TraceIDs {
				require.Equal(t, 1, roots[id], "trace %s has %d roots", id, roots[id])
			}
		}
	})
}
