// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

const (
	scopeName = "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
	// evaluatorService is the service.name of the evaluation spans' resource.
	evaluatorService = "agenteval-collector"
)

// Names of the gen_ai.evaluation.result events (gen_ai.evaluation.name), one per metric.
const (
	evalNameToolCall        = "tool_call"
	evalNameAgentScore      = "agent_score"
	evalNameToolUse         = "tool_use"
	evalNameReasoning       = "reasoning"
	evalNameHandoff         = "handoff"
	evalNameResponseQuality = "response_quality"
	evalNameTurn            = "turn"
	evalNameIntentDrift     = "intent_drift"
	evalNameOverall         = "overall_score"
	evalNameCoordination    = "coordination_score"
	evalNameIntentDriftS    = "intent_drift_score"
	evalNameConversation    = "conversation_score"
	evalNameTaskCompletion  = "task_completion"
)

// emitter builds evaluation spans (docs/architecture.md §6): one span per evaluated entity, named
// "evaluate {kind}", in the evaluated span's trace and parented to it, carrying one
// gen_ai.evaluation.result event per metric and agent_eval.* attributes for filtering.
type emitter struct {
	toolCalls    EmitPolicy
	interactions EmitPolicy
	analysis     bool
	// maxSessionSpanBytes is emit.max_session_span_bytes (0: no bound).
	maxSessionSpanBytes int
	signer              *evalspan.Signer // signs the turn and session spans' typed results
	// handoff, when set (the handoff setting), receives the result of every turn and
	// session span encoded, keyed by the span (encodeTurnSpan, addSession), while the
	// exporter is attached to it.
	handoff *handoff.Handoff
}

// wireDefaultsGate turns the wire defaults of the turn and session evaluation spans off
// (--feature-gates=-processor.agentsession.evaluationSpanWireDefaults): the spans then
// carry every value, as before v0.1.0's wire defaults, for an agenteval exporter in
// another collector that is older than this processor (it would read a left-out value
// as empty). Exporters read both forms.
var wireDefaultsGate = featuregate.GlobalRegistry().MustRegister(
	"processor.agentsession.evaluationSpanWireDefaults",
	featuregate.StageBeta,
	featuregate.WithRegisterFromVersion("v0.1.0"),
	featuregate.WithRegisterDescription("Turn and session evaluation spans leave out the values most results share (agent_eval.{turn,session}.wire_defaults); disable while an agenteval exporter in another collector is older than this processor."),
	featuregate.WithRegisterReferenceURL("https://github.com/agenteval/agenteval-collector/blob/main/docs/decisions/performance.md"),
)

func newEmitter(cfg EmitConfig, signingKey string) *emitter {
	var opts []evalspan.SignerOption
	if !wireDefaultsGate.IsEnabled() {
		opts = append(opts, evalspan.WithoutWireDefaults())
	}
	return &emitter{toolCalls: cfg.ToolCalls, interactions: cfg.Interactions, analysis: cfg.Analysis,
		maxSessionSpanBytes: cfg.MaxSessionSpanBytes, signer: evalspan.NewSigner(signingKey, opts...)}
}

// evalBatch accumulates evaluation spans (of any sessions) into one ptrace.Traces.
type evalBatch struct {
	e     *emitter
	td    ptrace.Traces
	spans ptrace.SpanSlice
	ts    pcommon.Timestamp
	// skipped counts the evaluation spans and session links left out because an id did
	// not decode; skipErr is the first such error. The processor counts and logs them
	// (reportSkipped).
	skipped int
	skipErr error
	// withdrawn are the indexes in spans of turn spans (turnSpan) whose verdict was not
	// encoded: its save failed and it waits for the next one (shard.unsaved). They leave
	// spans in traces, so that the other spans' indexes hold until then.
	withdrawn []int
	// refused are the judge jobs the judge's pool refused for the event being evaluated
	// into the batch (submitJob): run into it, after the event's spans, by runRefused.
	refused []refusedJob
}

// skip records an evaluation span or link left out because of err.
func (b *evalBatch) skip(sessionID, kind string, err error) {
	b.skipped++
	if b.skipErr == nil {
		b.skipErr = fmt.Errorf("session %s: evaluate %s: %w", sessionID, kind, err)
	}
}

func (e *emitter) newBatch(now time.Time) *evalBatch {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.ServiceName, evaluatorService)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(scopeName)
	return &evalBatch{e: e, td: td, spans: ss.Spans(), ts: pcommon.NewTimestampFromTime(now)}
}

// traces returns the batch's spans, without the withdrawn ones.
func (b *evalBatch) traces() ptrace.Traces {
	if len(b.withdrawn) > 0 {
		slices.Sort(b.withdrawn)
		i, w := 0, b.withdrawn
		b.spans.RemoveIf(func(ptrace.Span) bool {
			out := len(w) > 0 && w[0] == i
			if out {
				w = w[1:]
			}
			i++
			return out
		})
		b.withdrawn = nil
	}
	return b.td
}

// newSpan appends an evaluation span of the given kind in traceID, parented to
// parentSpanID (both hex). It returns an error, and records the skip, when the ids are
// not valid hex ids.
func (b *evalBatch) newSpan(sessionID, kind, traceID, parentSpanID string) (ptrace.Span, error) {
	tid, err := decodeTraceID(traceID)
	if err == nil {
		var pid pcommon.SpanID
		if pid, err = decodeSpanID(parentSpanID); err == nil {
			return b.appendSpan(sessionID, kind, tid, pid), nil
		}
	}
	b.skip(sessionID, kind, err)
	return ptrace.Span{}, err
}

func (b *evalBatch) appendSpan(sessionID, kind string, tid pcommon.TraceID, pid pcommon.SpanID) ptrace.Span {
	sp := b.spans.AppendEmpty()
	sp.SetName(semconv.EvalSpanPrefix + kind)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetTraceID(tid)
	sp.SetParentSpanID(pid)
	sp.SetSpanID(newSpanID())
	sp.SetStartTimestamp(b.ts)
	sp.SetEndTimestamp(b.ts)
	attrs := sp.Attributes()
	if n, events := spanRoom(kind); n > 0 {
		attrs.EnsureCapacity(n)
		sp.Events().EnsureCapacity(events)
	}
	attrs.PutStr(semconv.AgentEvalKind, kind)
	attrs.PutStr(semconv.AgentEvalSessionID, sessionID)
	return sp
}

// spanRoom is how many attributes an evaluation span of kind holds before its typed
// attributes are encoded (the encoder reserves room for those and what follows them),
// and how many gen_ai.evaluation.result events it gets: reserved once, not grown one
// put at a time (0 for kinds built elsewhere).
func spanRoom(kind string) (attrs, events int) {
	switch kind {
	case semconv.EvalKindTurn:
		return 2, 2 // kind, session id; turn, intent_drift
	case semconv.EvalKindAgentSession:
		return 9, 5 // kind, session and conversation ids, partial, five score mirrors
	case semconv.EvalKindAgentInteract:
		return 11, 5 // kind, session id, agent, partial, five score mirrors, latency, issues
	case semconv.EvalKindToolCall:
		return 8, 1 // kind, session id, agent, tool, call id, verdict, issues, score mirror
	}
	return 0, 0
}

// addTurn emits the spans of a turn that just closed: its tool calls and agent
// interactions (per emit policy) and the turn itself (non-final result).
func (b *evalBatch) addTurn(sessionID string, tr *evaluation.TurnResult) {
	for i := range tr.Interactions {
		ir := &tr.Interactions[i]
		if b.e.wantInteraction(ir) { // else its scores ride on the turn span only
			b.addInteraction(sessionID, tr, ir)
		}
		for k := range ir.ToolCalls {
			tc := &ir.ToolCalls[k]
			if !b.e.wantToolCall(tc) {
				continue
			}
			sp, err := b.newChildSpan(sessionID, semconv.EvalKindToolCall, tr, tc.SpanID)
			if err != nil {
				continue
			}
			a := sp.Attributes()
			a.PutStr(semconv.GenAIAgentName, tc.AgentID)
			a.PutStr(semconv.GenAIToolName, tc.ToolName)
			if tc.CallID != "" {
				a.PutStr(semconv.GenAIToolCallID, tc.CallID)
			}
			a.PutStr(semconv.AgentEvalPrefix+"tool.verdict", tc.Verdict)
			putCallIssues(a, ir.ToolCalls[k:k+1])
			ev := putScore(sp, evalNameToolCall, tc.Score, tc.Explanation)
			ev.Attributes().PutStr(semconv.GenAIEvaluationScoreLabel, verdictLabel(tc.Verdict))
		}
	}
	b.addTurnSpan(sessionID, tr)
}

// newChildSpan starts an evaluation span of kind in turn tr's trace, parented to
// spanID (the evaluated span), or to the turn's root span when spanID is empty.
func (b *evalBatch) newChildSpan(sessionID, kind string, tr *evaluation.TurnResult, spanID string) (ptrace.Span, error) {
	if spanID == "" {
		spanID = tr.RootSpanID
	}
	return b.newSpan(sessionID, kind, tr.TraceID, spanID)
}

// addInteraction emits the agent_interaction span of ir, a part of turn tr.
func (b *evalBatch) addInteraction(sessionID string, tr *evaluation.TurnResult, ir *evaluation.InteractionResult) {
	sp, err := b.newChildSpan(sessionID, semconv.EvalKindAgentInteract, tr, ir.SpanID)
	if err != nil {
		return
	}
	a := sp.Attributes()
	a.PutStr(semconv.GenAIAgentName, ir.AgentID)
	a.PutBool(semconv.AgentEvalPartial, tr.Partial)
	putScore(sp, evalNameAgentScore, ir.Score, ir.Explanations["score"])
	putScore(sp, evalNameToolUse, ir.ToolUse, ir.Explanations["tool_use"])
	putScore(sp, evalNameReasoning, ir.Reasoning, ir.Explanations["reasoning"])
	putScore(sp, evalNameHandoff, ir.Handoff, ir.Explanations["handoff"])
	putScore(sp, evalNameResponseQuality, ir.ResponseQuality, ir.Explanations["response_quality"])
	a.PutDouble(semconv.AgentEvalPrefix+"latency_ms", ir.LatencyMs)
	putCallIssues(a, ir.ToolCalls)
}

// addTurnSpan emits a turn's verdict: provisional when the turn closes, final when the
// follow-up user message is known or the session went idle (tr.Final). It carries the
// turn's summary (evalspan.TurnSummary: ids, scores, labels; the texts and
// explanations travel once, in the session span's analysis).
//
// It returns the span's index in b.spans, or -1 when it was left out (b.skipped).
func (b *evalBatch) addTurnSpan(sessionID string, tr *evaluation.TurnResult) int {
	i := b.turnSpan(sessionID, tr)
	if i >= 0 {
		b.encodeTurnSpan(i, tr)
	}
	return i
}

// turnSpan adds the span of turn tr's verdict to b, in its place among b's spans, without
// the verdict: encodeTurnSpan writes and signs it once it is known whether the verdict
// is the turn's first final one (the continuation store's save says so after the
// events of a chunk were evaluated, docs/decisions/sessions.md §4.5). It returns the
// span's index in b.spans, or -1 when it was left out (b.skipped).
func (b *evalBatch) turnSpan(sessionID string, tr *evaluation.TurnResult) int {
	if _, err := b.newSpan(sessionID, semconv.EvalKindTurn, tr.TraceID, tr.RootSpanID); err != nil {
		return -1
	}
	return b.spans.Len() - 1
}

// withdraw takes the turn span at index i (turnSpan, not encoded) out of the batch.
func (b *evalBatch) withdraw(i int) { b.withdrawn = append(b.withdrawn, i) }

// encodeTurnSpan writes turn tr's verdict (addTurnSpan) into the span at index i of
// b.spans that turnSpan added, and signs it.
func (b *evalBatch) encodeTurnSpan(i int, tr *evaluation.TurnResult) {
	sp := b.spans.At(i)
	a := sp.Attributes()
	// Its summary (evalspan.TurnSummary), signed as it is encoded; what follows is not
	// signed (docs/decisions/evaluation-authenticity.md).
	var sig evalspan.Signature
	if h := b.e.handoff; h != nil && h.Attached() {
		// The summary the exporter would decode from the span, built once, in memory
		// of its own: the handoff keeps it (EncodeTurnSummary's is pooled).
		sum := evalspan.TurnSummary(tr)
		sig = b.e.signer.EncodeTurn(a, &sum)
		h.PutTurn(handoff.KeyOf(sp), &sum)
	} else {
		sig = b.e.signer.EncodeTurnSummary(a, tr)
	}
	a.PutBool(semconv.AgentEvalPartial, tr.Partial)
	putIssues(a, tr.Interactions...)
	score := 1.0
	if tr.IsBad {
		score = 0
	}
	ev := putScore(sp, evalNameTurn, &score, tr.Reason)
	ev.Attributes().PutStr(semconv.GenAIEvaluationScoreLabel, tr.DetectionType)
	putScore(sp, evalNameIntentDrift, tr.IntentDrift, tr.Explanations["intent_drift"])
	sig.Put(a)
}

// addSession emits the session span: a child of the last turn's root, linked to every
// turn root it carries, with the analysis as typed attributes (and as JSON with
// emit.analysis). A span over emit.max_session_span_bytes is written again with the
// newest turns that fit (fitSession) and agent_eval.turns_omitted; the handoff gets the
// whole analysis either way.
func (b *evalBatch) addSession(an *evaluation.Analysis) error {
	if len(an.TurnResults) == 0 {
		return nil
	}
	last := an.TurnResults[len(an.TurnResults)-1]
	sp, err := b.newSpan(an.SessionID, semconv.EvalKindAgentSession, last.TraceID, last.RootSpanID)
	if err != nil {
		return fmt.Errorf("session %s: %w", an.SessionID, err)
	}
	w := b.sessionWriter(an)
	if err := w.fillSession(sp, 0, len(an.TurnResults)); err != nil {
		return err
	}
	if limit := b.e.maxSessionSpanBytes; limit > 0 && mayExceed(an, limit) {
		if err := w.fitSession(sp, limit); err != nil {
			return err
		}
	}
	if h := b.e.handoff; h != nil {
		h.PutAnalysis(handoff.KeyOf(sp), an)
	}
	return nil
}

// sessionWriter writes the session span of an and, over the bound, its turns parts. The
// root span ids of an's turns are decoded once, into links; a turn whose ids do not
// decode is counted once (evalBatch.skip) and linked by no span.
type sessionWriter struct {
	b     *evalBatch
	an    *evaluation.Analysis
	links []turnLink // one a turn of an
}

// turnLink is the decoded root span of a turn; ok is false when its ids do not decode.
type turnLink struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
	ok    bool
}

func (b *evalBatch) sessionWriter(an *evaluation.Analysis) *sessionWriter {
	w := &sessionWriter{b: b, an: an, links: make([]turnLink, len(an.TurnResults))}
	for i, t := range an.TurnResults {
		tid, err1 := decodeTraceID(t.TraceID)
		sid, err2 := decodeSpanID(t.RootSpanID)
		if err := cmp.Or(err1, err2); err != nil {
			b.skip(an.SessionID, "agent_session link", err)
			continue
		}
		w.links[i] = turnLink{trace: tid, span: sid, ok: true}
	}
	return w
}

// mayExceed: an's session span may be larger than limit bytes, so it is measured. A short
// session (at most unboundedTurns turns, unboundedParts interactions and tool calls, and
// texts under a quarter of the limit) is far below the least bound of 64 KiB and is not
// measured (spanBytes marshals the span's size, a walk of all its attributes).
func mayExceed(an *evaluation.Analysis, limit int) bool {
	const unboundedTurns, unboundedParts = 8, 64
	if len(an.TurnResults) > unboundedTurns {
		return true
	}
	parts, texts := 0, 0
	for i := range an.TurnResults {
		tr := &an.TurnResults[i]
		texts += len(tr.UserMessage) + len(tr.FinalResponse)
		for j := range tr.Interactions {
			parts += 1 + len(tr.Interactions[j].ToolCalls)
		}
	}
	return parts > unboundedParts || texts > limit/4
}

// fitSession measures sp and, when it is larger than limit bytes, writes it again with the
// newest turns of the analysis that fit (fitTurns) and agent_eval.turns_omitted = the
// turns left out. Those go out in turns parts (addTurnsParts), so that an exporter that
// decodes the spans (a second tier, or its own after a restart) stores every turn
// (docs/decisions/sessions.md §4.10).
func (w *sessionWriter) fitSession(sp ptrace.Span, limit int) error {
	first, _, err := w.fitTurns(sp, 0, len(w.an.TurnResults), limit, w.fillSession)
	if err != nil || first == 0 {
		return err
	}
	sp.Attributes().PutInt(semconv.AgentEvalTurnsOmitted, int64(first))
	return w.addTurnsParts(sp, first, limit)
}

// addTurnsParts emits the turns [0, end) of the analysis, which its session span sp
// leaves out, as turns parts: session evaluation spans beside sp (the same parent), each
// with a contiguous range of those turns that fits in limit bytes (at least one turn),
// links to their roots, the session's fields and agent_eval.session.turns_part, and no
// gen_ai.evaluation.result events (sp has them once). The newest range first.
func (w *sessionWriter) addTurnsParts(sp ptrace.Span, end, limit int) error {
	perPart := len(w.an.TurnResults) - end // sp's turns fit: about as many again fit a part
	for end > 0 {
		part := w.b.appendSpan(w.an.SessionID, semconv.EvalKindAgentSession, sp.TraceID(), sp.ParentSpanID())
		lo := max(0, end-perPart)
		if err := w.fillTurnsPart(part, lo, end); err != nil {
			return err
		}
		first, size, err := w.fitTurns(part, lo, end, limit, w.fillTurnsPart)
		if err != nil {
			return err
		}
		// The next part's first guess, from this one's size a turn: a run of small turns
		// after a large one goes in a few parts, not one a turn.
		perPart = max(1, int(float64(end-first)*float64(limit)/float64(max(size, 1))*0.9))
		end = first
	}
	return nil
}

// fitTurns measures sp, written by fill with the turns [lo, hi) of the analysis, and
// while it is larger than limit bytes and carries more than one turn writes it again with
// fewer of the newest of them, fewer each round in proportion to the excess. It returns
// the first turn sp carries and sp's size in bytes.
func (w *sessionWriter) fitTurns(sp ptrace.Span, lo, hi, limit int, fill func(ptrace.Span, int, int) error) (first, size int, err error) {
	for size = spanBytes(sp); size > limit && hi-lo > 1; size = spanBytes(sp) {
		keep := hi - lo
		lo = hi - min(keep-1, max(1, int(float64(keep)*float64(limit)/float64(size)*0.95)))
		sp.Attributes().RemoveIf(func(k string, _ pcommon.Value) bool {
			return k != semconv.AgentEvalKind && k != semconv.AgentEvalSessionID // appendSpan's
		})
		sp.Events().RemoveIf(func(ptrace.SpanEvent) bool { return true })
		sp.Links().RemoveIf(func(ptrace.SpanLink) bool { return true })
		if err := fill(sp, lo, hi); err != nil {
			return 0, 0, err
		}
	}
	return lo, size, nil
}

// spanBytes is sp's size in an OTLP request, in bytes. sp is moved into a request of its
// own to be measured and back, not copied.
func spanBytes(sp ptrace.Span) int {
	td := ptrace.NewTraces()
	tmp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.MoveTo(tmp)
	n := (&ptrace.ProtoMarshaler{}).TracesSize(td)
	tmp.MoveTo(sp)
	return n
}

// fillSession writes the analysis, with its turns [lo, hi), onto the empty session span
// sp: links to those turns' roots, the filtering attributes, the result events and the
// signed typed attributes.
func (w *sessionWriter) fillSession(sp ptrace.Span, lo, hi int) error {
	an := w.turns(lo, hi)
	w.link(sp, lo, hi)
	a := sp.Attributes()
	a.PutStr(semconv.GenAIConversationID, an.SessionID)
	a.PutBool(semconv.AgentEvalPartial, an.Partial)
	putScore(sp, evalNameOverall, an.OverallScore, an.Explanations["overall_score"])
	putScore(sp, evalNameCoordination, an.CoordinationScore, an.Explanations["coordination_score"])
	putScore(sp, evalNameIntentDriftS, an.IntentDriftScore, an.Explanations["intent_drift_score"])
	putScore(sp, evalNameConversation, an.Conversation.Score, an.Explanations["conversation_score"])
	if an.TaskCompletion != nil {
		v := 0.0
		label := semconv.EvalLabelFail
		if *an.TaskCompletion {
			v, label = 1, semconv.EvalLabelPass
		}
		ev := putScore(sp, evalNameTaskCompletion, &v, an.Explanations["task_completion"])
		ev.Attributes().PutStr(semconv.GenAIEvaluationScoreLabel, label)
	}
	sig := w.b.e.signer.EncodeAnalysis(a, an) // signed as it is encoded; agent_eval.analysis is not signed
	if w.b.e.analysis {
		js, err := json.Marshal(an)
		if err != nil {
			return fmt.Errorf("session %s: encoding the analysis: %w", an.SessionID, err)
		}
		a.PutStr(semconv.AgentEvalAnalysis, string(js))
	}
	sig.Put(a)
	return nil
}

// fillTurnsPart writes the turns [lo, hi) of the analysis onto the empty session span sp
// as a turns part (addTurnsParts): links to their roots, the conversation id and the
// signed typed attributes of the analysis with only those turns, only their tool issues,
// and TurnsPart (agent_eval.session.turns_part). The other session-level fields are
// repeated: a part that reaches a store before its session span is saved whole
// (sessions.md §4.10).
func (w *sessionWriter) fillTurnsPart(sp ptrace.Span, lo, hi int) error {
	part := *w.turns(lo, hi)
	first, last := part.TurnResults[0].TurnIndex, part.TurnResults[len(part.TurnResults)-1].TurnIndex
	part.ToolIssues = nil
	for _, is := range w.an.ToolIssues {
		if is.TurnIndex >= first && is.TurnIndex <= last {
			part.ToolIssues = append(part.ToolIssues, is)
		}
	}
	part.TurnsPart = true // agent_eval.session.turns_part, signed with the rest
	w.link(sp, lo, hi)
	a := sp.Attributes()
	a.PutStr(semconv.GenAIConversationID, part.SessionID)
	w.b.e.signer.EncodeAnalysis(a, &part).Put(a)
	return nil
}

// turns returns the analysis with its turns [lo, hi) only: the analysis itself when that
// is all of them, else a shallow copy.
func (w *sessionWriter) turns(lo, hi int) *evaluation.Analysis {
	if lo == 0 && hi == len(w.an.TurnResults) {
		return w.an
	}
	part := *w.an
	part.TurnResults = w.an.TurnResults[lo:hi]
	return &part
}

// link links sp to the root spans of the turns [lo, hi) whose ids decoded.
func (w *sessionWriter) link(sp ptrace.Span, lo, hi int) {
	for _, l := range w.links[lo:hi] {
		if l.ok {
			sl := sp.Links().AppendEmpty()
			sl.SetTraceID(l.trace)
			sl.SetSpanID(l.span)
		}
	}
}

// wantInteraction reports whether ir gets its own agent_interaction span: with
// emit.interactions issues, when one of its tool calls would get a tool_call span under
// emit.tool_calls issues (an issue, or not evaluable).
func (e *emitter) wantInteraction(ir *evaluation.InteractionResult) bool {
	switch e.interactions {
	case EmitToolCallsAll:
		return true
	case EmitToolCallsNone:
		return false
	default:
		for i := range ir.ToolCalls {
			if ir.ToolCalls[i].Verdict != evaluation.VerdictValid {
				return true
			}
		}
		return false
	}
}

func (e *emitter) wantToolCall(tc *evaluation.ToolCallResult) bool {
	switch e.toolCalls {
	case EmitToolCallsAll:
		return true
	case EmitToolCallsNone:
		return false
	default:
		return tc.Verdict != evaluation.VerdictValid
	}
}

// putScore adds a gen_ai.evaluation.result event for a present score and mirrors it as
// the agent_eval.<name> attribute. For an absent score it adds the event with no value
// and the not_evaluable label, so the reason is visible. It returns the event.
func putScore(sp ptrace.Span, name string, v *float64, explanation string) ptrace.SpanEvent {
	ev := sp.Events().AppendEmpty()
	ev.SetName(semconv.EventEvaluationResult)
	ev.SetTimestamp(sp.EndTimestamp())
	ea := ev.Attributes()
	ea.EnsureCapacity(4) // name, value or label, explanation, and a label some callers add
	ea.PutStr(semconv.GenAIEvaluationName, name)
	if v != nil {
		ea.PutDouble(semconv.GenAIEvaluationScoreValue, *v)
		sp.Attributes().PutDouble(semconv.AgentEvalPrefix+name, *v)
	} else {
		ea.PutStr(semconv.GenAIEvaluationScoreLabel, semconv.EvalLabelNotEvaluable)
	}
	if explanation != "" {
		ea.PutStr(semconv.GenAIEvaluationExplanation, explanation)
	}
	return ev
}

// putCallIssues sets agent_eval.tool.issues to the issue codes of the calls, in order.
func putCallIssues(a pcommon.Map, calls []evaluation.ToolCallResult) {
	putIssues(a, evaluation.InteractionResult{ToolCalls: calls})
}

// putIssues sets agent_eval.tool.issues to the issue codes of the interactions' tool
// calls, in order (read in place: a turn's calls are not copied together first).
func putIssues(a pcommon.Map, irs ...evaluation.InteractionResult) {
	var n int
	for i := range irs {
		for j := range irs[i].ToolCalls {
			n += len(irs[i].ToolCalls[j].Issues)
		}
	}
	if n == 0 {
		return
	}
	s := a.PutEmptySlice(semconv.AgentEvalToolIssues)
	s.EnsureCapacity(n)
	for i := range irs {
		for j := range irs[i].ToolCalls {
			for _, is := range irs[i].ToolCalls[j].Issues {
				s.AppendEmpty().SetStr(string(is.Issue))
			}
		}
	}
}

func verdictLabel(verdict string) string {
	switch verdict {
	case evaluation.VerdictValid:
		return semconv.EvalLabelPass
	case evaluation.VerdictInvalid:
		return semconv.EvalLabelFail
	default:
		return semconv.EvalLabelNotEvaluable
	}
}

func decodeTraceID(s string) (pcommon.TraceID, error) {
	var id pcommon.TraceID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("invalid trace id %q", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("invalid trace id %q: %w", s, err)
	}
	return id, nil
}

func decodeSpanID(s string) (pcommon.SpanID, error) {
	var id pcommon.SpanID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("invalid span id %q", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("invalid span id %q: %w", s, err)
	}
	return id, nil
}

func newSpanID() pcommon.SpanID {
	var id pcommon.SpanID
	for {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
		if !id.IsEmpty() {
			return id
		}
	}
}
