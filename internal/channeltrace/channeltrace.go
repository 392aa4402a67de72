// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package channeltrace turns the evaluation channel's messages into spans in the
// OpenTelemetry GenAI conventions, so that the agentsession processor evaluates a
// channel session like any agent conversation (docs/channel.md):
//
//	invoke_workflow {evaluation_id}   turn root, sent with the turn's answer:
//	│                                 gen_ai.input.messages = the turn's user-side messages,
//	│                                 gen_ai.output.messages = the answer
//	├─ message {proctor|host}         one per user-side message, sent when it is posted
//	└─ invoke_agent {agent_id}        the answer (candidate, participant), sent when it is
//	                                  posted: input = the user-side messages, output = it
//
// A turn opens with the first user-side message after an answer and closes with the
// next answer; an answer without a new user-side message before it is a turn of its own
// (no user message). Every span carries gen_ai.conversation.id = the channel session id
// and the agent_eval.channel.* attributes (sequence, role, sender). Trace and span ids
// derive from the session id and the sequences (SHA-256), so the spans of one turn meet
// in one trace even when they are sent by different requests or collectors. The end of a
// session (proctor submit, host end) is one more span carrying agent_eval.session.end and,
// for a submit, agent_eval.task.completed = passed: the root of the unanswered last turn
// when there is one, else a span of its own.
package channeltrace // import "github.com/agenteval/agenteval-collector/internal/channeltrace"

import (
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/channel"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/agenteval/agenteval-collector/internal/channeltrace"

// Span names (besides "invoke_workflow {evaluation_id}" and "invoke_agent {agent_id}").
const (
	// SpanMessage + role names a user-side message span ("message proctor").
	SpanMessage = "message "
	// SpanSubmit + evaluation id names the span of a proctor's submit without open turn.
	SpanSubmit = "submit "
	// SpanEnd + evaluation id names the span of a host's end without open turn.
	SpanEnd = "end_session "
)

// TranscriptPath is the URL path of a result's transcript.
func TranscriptPath(evaluationID, resultID string) string {
	return "/api/v1/evaluations/" + evaluationID + "/results/" + resultID + "/transcript"
}

// Message returns the spans of one posted message: its own span, and for an answer the
// root of its turn.
func Message(p channel.Posted, serviceName string) ptrace.Traces {
	td, spans := newTraces(serviceName)
	m, sess, turn := p.Message, p.Session, p.Turn
	traceID, rootID := turnIDs(sess.ID, turn.Start)
	if m.Role.UserSide() {
		sp := newSpan(spans, sess, traceID, messageSpanID(sess.ID, m.Sequence), rootID, SpanMessage+string(m.Role), m.CreatedAt, m.CreatedAt)
		messageAttrs(sp.Attributes(), m)
		sp.Attributes().PutStr(semconv.AgentEvalChannelMessageContent, m.Content)
		return td
	}
	start := m.CreatedAt
	if len(turn.UserMessages) > 0 {
		start = turn.UserMessages[0].CreatedAt
	} else if turn.Previous != nil {
		start = turn.Previous.CreatedAt
	}
	input := userMessages(turn)
	output := messagesJSON(genaiMessage{Role: semconv.RoleAssistant, Parts: []part{textPart(m.Content)}, FinishReason: semconv.FinishStop})

	root := newSpan(spans, sess, traceID, rootID, pcommon.SpanID{}, semconv.OpInvokeWorkflow+" "+sess.EvaluationID, start, m.CreatedAt)
	ra := root.Attributes()
	ra.PutStr(semconv.GenAIOperationName, semconv.OpInvokeWorkflow)
	ra.PutStr(semconv.GenAIWorkflowName, sess.EvaluationID)
	if input != "" {
		ra.PutStr(semconv.GenAIInputMessages, input)
	}
	ra.PutStr(semconv.GenAIOutputMessages, output)

	agentStart := start
	if turn.Previous != nil {
		agentStart = turn.Previous.CreatedAt
	}
	agent := newSpan(spans, sess, traceID, messageSpanID(sess.ID, m.Sequence), rootID, semconv.OpInvokeAgent+" "+m.SenderAgentID, agentStart, m.CreatedAt)
	aa := agent.Attributes()
	aa.PutStr(semconv.GenAIOperationName, semconv.OpInvokeAgent)
	aa.PutStr(semconv.GenAIAgentName, m.SenderAgentID)
	aa.PutStr(semconv.GenAIAgentID, m.SenderAgentID)
	switch {
	case input != "":
		aa.PutStr(semconv.GenAIInputMessages, input)
	case turn.Previous != nil:
		prev := turn.Previous
		aa.PutStr(semconv.GenAIInputMessages, messagesJSON(genaiMessage{Role: semconv.RoleAssistant, Name: prev.SenderAgentID, Parts: []part{textPart(prev.Content)}}))
	}
	aa.PutStr(semconv.GenAIOutputMessages, output)
	messageAttrs(aa, m)
	return td
}

// Ending describes the end of a session for End.
type Ending struct {
	Session channel.Session
	// Open is the unanswered last turn (channel.Submitted.Open, channel.Ended.Open).
	Open channel.Turn
	// Result is the proctor's verdict (nil when a host ended a live class work session).
	Result *channel.Result
	// At is when the session ended.
	At time.Time
}

// End returns the span that ends a session: agent_eval.session.end=true, and for a
// proctor's submit agent_eval.task.completed = passed with the result id, proctor,
// feedback and transcript path.
func End(e Ending, serviceName string) ptrace.Traces {
	td, spans := newTraces(serviceName)
	sess := e.Session
	var sp ptrace.Span
	if len(e.Open.UserMessages) > 0 {
		traceID, rootID := turnIDs(sess.ID, e.Open.Start)
		sp = newSpan(spans, sess, traceID, rootID, pcommon.SpanID{}, semconv.OpInvokeWorkflow+" "+sess.EvaluationID,
			e.Open.UserMessages[0].CreatedAt, maxTime(e.At, e.Open.UserMessages[0].CreatedAt))
		sp.Attributes().PutStr(semconv.GenAIOperationName, semconv.OpInvokeWorkflow)
		sp.Attributes().PutStr(semconv.GenAIWorkflowName, sess.EvaluationID)
		sp.Attributes().PutStr(semconv.GenAIInputMessages, userMessages(e.Open))
	} else {
		name := SpanEnd + sess.EvaluationID
		if e.Result != nil {
			name = SpanSubmit + sess.EvaluationID
		}
		traceID, spanID := endIDs(sess.ID)
		sp = newSpan(spans, sess, traceID, spanID, pcommon.SpanID{}, name, e.At, e.At)
	}
	a := sp.Attributes()
	a.PutBool(semconv.AgentEvalSessionEnd, true)
	if r := e.Result; r != nil {
		a.PutBool(semconv.AgentEvalTaskCompleted, r.Passed)
		a.PutStr(semconv.AgentEvalChannelResultID, r.ID)
		a.PutStr(semconv.AgentEvalChannelProctorID, r.ProctorAgentID)
		if r.ProctorFeedback != "" {
			a.PutStr(semconv.AgentEvalChannelFeedback, r.ProctorFeedback)
		}
		a.PutStr(semconv.AgentEvalChannelTranscript, TranscriptPath(sess.EvaluationID, r.ID))
	}
	return td
}

func newTraces(serviceName string) (ptrace.Traces, ptrace.SpanSlice) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.ServiceName, serviceName)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(ScopeName)
	return td, ss.Spans()
}

func newSpan(spans ptrace.SpanSlice, sess channel.Session, traceID pcommon.TraceID, id, parent pcommon.SpanID, name string, start, end time.Time) ptrace.Span {
	sp := spans.AppendEmpty()
	sp.SetTraceID(traceID)
	sp.SetSpanID(id)
	sp.SetParentSpanID(parent)
	sp.SetName(name)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(maxTime(end, start)))
	a := sp.Attributes()
	a.PutStr(semconv.GenAIConversationID, sess.ID)
	a.PutStr(semconv.AgentEvalChannelEvaluationID, sess.EvaluationID)
	a.PutStr(semconv.AgentEvalChannelSessionKind, string(sess.Kind))
	if sess.RegistrationID != "" {
		a.PutStr(semconv.AgentEvalChannelRegistrationID, sess.RegistrationID)
	}
	return sp
}

func messageAttrs(a pcommon.Map, m channel.Message) {
	a.PutStr(semconv.AgentEvalChannelMessageID, m.ID)
	a.PutStr(semconv.AgentEvalChannelMessageRole, string(m.Role))
	a.PutInt(semconv.AgentEvalChannelMessageSequence, m.Sequence)
	a.PutStr(semconv.AgentEvalChannelSenderID, m.SenderAgentID)
}

// userMessages is the turn's user-side messages as gen_ai.input.messages ("" for none).
func userMessages(t channel.Turn) string {
	if len(t.UserMessages) == 0 {
		return ""
	}
	msgs := make([]genaiMessage, len(t.UserMessages))
	for i, m := range t.UserMessages {
		msgs[i] = genaiMessage{Role: semconv.RoleUser, Name: m.SenderAgentID, Parts: []part{textPart(m.Content)}}
	}
	return messagesJSON(msgs...)
}

// turnIDs derives a turn's trace id and root span id from the session id and the
// sequence of the turn's first message.
func turnIDs(sessionID string, start int64) (pcommon.TraceID, pcommon.SpanID) {
	return traceID(sessionID, "turn/"+strconv.FormatInt(start, 10)), spanID(sessionID, "root/"+strconv.FormatInt(start, 10))
}

func endIDs(sessionID string) (pcommon.TraceID, pcommon.SpanID) {
	return traceID(sessionID, "end"), spanID(sessionID, "end")
}

func messageSpanID(sessionID string, seq int64) pcommon.SpanID {
	return spanID(sessionID, "message/"+strconv.FormatInt(seq, 10))
}

func traceID(sessionID, what string) pcommon.TraceID {
	sum := sha256.Sum256([]byte("agenteval/channel/trace/" + sessionID + "/" + what))
	var id pcommon.TraceID
	copy(id[:], sum[:])
	return id
}

func spanID(sessionID, what string) pcommon.SpanID {
	sum := sha256.Sum256([]byte("agenteval/channel/span/" + sessionID + "/" + what))
	var id pcommon.SpanID
	copy(id[:], sum[:])
	return id
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// genaiMessage and part are the GenAI input/output message JSON (as the receiver's
// AgentSession conversion writes them).
type genaiMessage struct {
	Role         string `json:"role"`
	Name         string `json:"name,omitempty"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

func textPart(s string) part { return part{Type: semconv.PartText, Content: s} }

func messagesJSON(msgs ...genaiMessage) string {
	b, _ := json.Marshal(msgs) // strings only: cannot fail
	return string(b)
}
