// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channeltrace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

var t0 = time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)

func spans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < ss.Len(); i++ {
		out = append(out, ss.At(i))
	}
	return out
}

func msg(seq int64, role channel.Role, sender, content string) channel.Message {
	return channel.Message{ID: "m" + sender, SessionID: "sess-1", SenderAgentID: sender, Role: role, Content: content,
		CreatedAt: t0.Add(time.Duration(seq) * time.Second), Sequence: seq}
}

// TestMessageSpansOfATurn: the question's span and the answer's spans meet in one trace
// whose root is sent with the answer, with ids that do not depend on who sends them.
func TestMessageSpansOfATurn(t *testing.T) {
	sess := channel.Session{ID: "sess-1", EvaluationID: "sip-5", Kind: channel.KindProctored, RegistrationID: "reg-1"}
	q := msg(1, channel.RoleProctor, "proc", "Any links to share?")
	a := msg(2, channel.RoleCandidate, "cand", "No links.")
	question := spans(Message(channel.Posted{Message: q, Session: sess, Turn: channel.TurnOf(nil, q)}, "svc"))
	answer := spans(Message(channel.Posted{Message: a, Session: sess, Turn: channel.TurnOf([]channel.Message{q}, a)}, "svc"))
	require.Len(t, question, 1)
	require.Len(t, answer, 2)
	root, agent := answer[0], answer[1]
	assert.Equal(t, root.TraceID(), question[0].TraceID())
	assert.Equal(t, root.TraceID(), agent.TraceID())
	assert.Equal(t, root.SpanID(), question[0].ParentSpanID())
	assert.Equal(t, root.SpanID(), agent.ParentSpanID())
	assert.True(t, root.ParentSpanID().IsEmpty())
	assert.Equal(t, "invoke_workflow sip-5", root.Name())
	assert.Equal(t, "invoke_agent cand", agent.Name())
	assert.Equal(t, "message proctor", question[0].Name())
	assert.Equal(t, t0.Add(time.Second), root.StartTimestamp().AsTime(), "the turn starts with the question")
	assert.Equal(t, t0.Add(2*time.Second), root.EndTimestamp().AsTime())
	in, _ := agent.Attributes().Get(semconv.GenAIInputMessages)
	assert.JSONEq(t, `[{"role":"user","name":"proc","parts":[{"type":"text","content":"Any links to share?"}]}]`, in.Str())
	out, _ := agent.Attributes().Get(semconv.GenAIOutputMessages)
	assert.JSONEq(t, `[{"role":"assistant","parts":[{"type":"text","content":"No links."}],"finish_reason":"stop"}]`, out.Str())
	for _, sp := range append(question, answer...) {
		v, _ := sp.Attributes().Get(semconv.GenAIConversationID)
		assert.Equal(t, "sess-1", v.Str())
		v, _ = sp.Attributes().Get(semconv.AgentEvalChannelRegistrationID)
		assert.Equal(t, "reg-1", v.Str())
	}

	// The same message gives the same ids (another collector, a restart); another
	// session gives others.
	again := spans(Message(channel.Posted{Message: a, Session: sess, Turn: channel.TurnOf([]channel.Message{q}, a)}, "svc"))
	assert.Equal(t, root.TraceID(), again[0].TraceID())
	assert.Equal(t, agent.SpanID(), again[1].SpanID())
	other := sess
	other.ID = "sess-2"
	diff := spans(Message(channel.Posted{Message: a, Session: other, Turn: channel.TurnOf([]channel.Message{q}, a)}, "svc"))
	assert.NotEqual(t, root.TraceID(), diff[0].TraceID())
}

func TestEndSpan(t *testing.T) {
	sess := channel.Session{ID: "sess-1", EvaluationID: "sip-5", Kind: channel.KindProctored}
	res := &channel.Result{ID: "res-1", Passed: false, ProctorAgentID: "proc", ProctorFeedback: "Pumps $MOON."}

	alone := spans(End(Ending{Session: sess, Result: res, At: t0}, "svc"))
	require.Len(t, alone, 1)
	assert.Equal(t, "submit sip-5", alone[0].Name())
	a := alone[0].Attributes()
	v, _ := a.Get(semconv.AgentEvalSessionEnd)
	assert.True(t, v.Bool())
	v, _ = a.Get(semconv.AgentEvalTaskCompleted)
	assert.False(t, v.Bool())
	v, _ = a.Get(semconv.AgentEvalChannelTranscript)
	assert.Equal(t, "/api/v1/evaluations/sip-5/results/res-1/transcript", v.Str())
	_, isGenAI := a.Get(semconv.GenAIOperationName)
	assert.False(t, isGenAI, "no turn of its own")

	last := msg(5, channel.RoleProctor, "proc", "Thanks.")
	open := channel.TurnOf(nil, channel.Message{Sequence: 6, Role: channel.RoleCandidate})
	open.UserMessages, open.Start = []channel.Message{last}, 5
	closing := spans(End(Ending{Session: sess, Open: open, Result: res, At: t0.Add(10 * time.Second)}, "svc"))
	require.Len(t, closing, 1)
	question := spans(Message(channel.Posted{Message: last, Session: sess, Turn: channel.TurnOf(nil, last)}, "svc"))
	assert.Equal(t, question[0].TraceID(), closing[0].TraceID(), "the end is the root of the unanswered turn")
	assert.Equal(t, question[0].ParentSpanID(), closing[0].SpanID())

	live := spans(End(Ending{Session: channel.Session{ID: "s", EvaluationID: "class", Kind: channel.KindLiveClassWork}, At: t0}, "svc"))
	assert.Equal(t, "end_session class", live[0].Name())
	_, has := live[0].Attributes().Get(semconv.AgentEvalTaskCompleted)
	assert.False(t, has)
}
