// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// A session is evaluated turn by turn (docs/decisions/sessions.md §4): each turn is
// evaluated once, when it closes, into a TurnRecord (EvaluateClosedTurn); its verdict
// becomes final when the next user message is known (FollowUp) or when the session goes
// idle (FinishLast); the session analysis aggregates the records (Aggregate). None of
// these steps reads another turn's model, so their cost does not grow with the session,
// and a record is all a continued session needs of a turn (it survives a restart in the
// continuation store).

// maxGrounding bounds the salient facts a record carries forward for the grounding of
// later turns (the most recent are kept).
const maxGrounding = 64

// maxConversation bounds the conversation tokens a record carries forward for the intent
// drift of later turns.
const maxConversation = 1024

// TurnRecord is one evaluated turn as the session analysis and a continued session need
// it. It is self-contained (no pointer into the session model) and JSON-encodable.
type TurnRecord struct {
	// Result is the turn's verdict: provisional (Result.Final false) until FollowUp or
	// FinishLast. Its UserMessage and FinalResponse are what the follow-up checks (RDM,
	// CCM) of this turn read.
	Result TurnResult `json:"result"`
	// FinalResponder is the index in Result.Interactions of the interaction that gave the
	// final response (its response_quality is 0 when the turn is bad); -1 without one.
	FinalResponder int `json:"final_responder"`
	// Grounding holds salient facts (values) of this and earlier turns' sources (user
	// messages, agent inputs, tool results, handoff payloads), at most 64, most recent
	// last: a later final response stating one of them is grounded.
	Grounding []string `json:"grounding,omitempty"`
	// Conversation holds the distinct text tokens (text.Tokens) of this and earlier
	// turns' user messages, final responses, tool calls and results, at most
	// maxConversation, most recent last: a later turn's intent drift is judged against
	// them (turn_intentdrift.go).
	Conversation []string `json:"conversation,omitempty"`
	// Summary is what the session-level scores need of the turn's model.
	Summary TurnSummary `json:"summary"`
	// Hallucination is the hallucination part of the provisional detection explanation,
	// kept for the final one.
	Hallucination string `json:"hallucination_explanation"`
	// NoFollowUp: the final verdict was given without the next turn's user message
	// (FinishLast). When that message becomes known, FollowUp gives the verdict again
	// (Result.Revised). False while provisional and after FollowUp.
	NoFollowUp bool `json:"no_follow_up,omitempty"`
	// FollowedBy names the turn whose user message gave the final verdict (FollowUpBy),
	// nil without one. A turn's successor is the next in conversation order (by start):
	// when a turn that closed later turns out to have come in between (it closed late,
	// on this or another collector, docs/decisions/sessions.md §4.5), the verdict is
	// given again with that turn's user message.
	FollowedBy *FollowedBy `json:"followed_by,omitempty"`
	// Replaced is the verdict the follow-up's RDM or CCM replaced, nil otherwise: a
	// verdict given again with another turn's user message (FollowedBy) is judged from
	// it, not from the RDM or CCM of the turn that turned out not to be next.
	Replaced *ReplacedVerdict `json:"replaced,omitempty"`
}

// FollowedBy names a turn (its trace and root span, as TurnResult does) and its start:
// the turn whose user message gave a record its final verdict (TurnRecord.FollowedBy).
type FollowedBy struct {
	// TraceID and RootSpanID are hex, as TurnResult.TraceID and RootSpanID ("" for a
	// turn without a root span).
	TraceID    string `json:"trace_id"`
	RootSpanID string `json:"root_span_id,omitempty"`
	// StartedAt is that turn's start (TurnSummary.StartedAt: its earliest span start);
	// zero when unknown, which never makes a verdict be given again.
	StartedAt time.Time `json:"started_at"`
}

// Of reports whether f names the turn of record r.
func (f *FollowedBy) Of(r *TurnRecord) bool {
	return f != nil && f.TraceID == r.Result.TraceID && f.RootSpanID == r.Result.RootSpanID
}

// ReplacedVerdict is a turn's verdict before a follow-up (RDM or CCM) replaced it
// (TurnRecord.Replaced): the result's detection fields as TurnResult has them
// (DetectionType one of the Detection* values, Confidence in [0, 1]), and the final
// responder's interaction before it got response_quality 0 (nil when it did not).
type ReplacedVerdict struct {
	IsBad          bool               `json:"is_bad"`
	DetectionType  string             `json:"detection_type"`
	Confidence     float64            `json:"confidence"`
	Reason         string             `json:"reason"`
	FinalResponder *InteractionResult `json:"final_responder,omitempty"`
}

// DropCarries empties what the record holds only for the evaluation of the session's
// next turn (Grounding and Conversation, read by EvaluateClosedTurn as its prev): once
// that turn is evaluated it carries them forward, and nothing else reads them (FollowUp,
// FinishLast and Aggregate do not). A record that has its follow-up (FollowUp) keeps
// the rest, which the session analysis reads: its result, summary, final responder and
// hallucination explanation. On bench-e2e's turns the carries are most of a record
// (docs/decisions/performance.md §8.14).
func (r *TurnRecord) DropCarries() { r.Grounding, r.Conversation = nil, nil }

// TurnSummary holds the per-turn facts the session-level scores (coordination, task
// completion, per-agent issues) read from the model, computed once when the turn closes.
type TurnSummary struct {
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	// Status is the turn root's status ("error" fails task completion).
	Status string `json:"status"`
	// HasContent: some text of the turn was captured.
	HasContent bool `json:"has_content"`
	// Outcome is the turn's explicit task outcome (agent_eval.task.completed), if any.
	Outcome *bool `json:"outcome,omitempty"`
	// AgentErrors are the interactions that ended with error status.
	AgentErrors []AgentError `json:"agent_errors,omitempty"`
	// Participants are the agents that coordinate in this turn: parties to a handoff,
	// or calling a tool another agent calls in the turn. Sorted.
	Participants []string `json:"participants,omitempty"`
	// Handoffs counts the turn's handoffs; PingPongLoops its A→B→A→B windows.
	Handoffs      int `json:"handoffs"`
	PingPongLoops int `json:"ping_pong_loops"`
	// SharedCalls counts calls (with captured arguments) of tools that two or more
	// agents call in the turn; DuplicateCalls those of them another agent already made
	// with the same arguments.
	SharedCalls    int `json:"shared_calls"`
	DuplicateCalls int `json:"duplicate_calls"`
}

// AgentError is one interaction that ended with error status.
type AgentError struct {
	Interaction int    `json:"interaction"`
	ErrorType   string `json:"error_type,omitempty"`
}

// SessionMeta is what the session analysis needs besides its turn records.
type SessionMeta struct {
	ID        string
	Service   string
	Partial   bool
	EndReason string
	// Agents are the session's agent ids (each gets a per_agent_scores entry, even
	// without interactions).
	Agents []string
	// Outcome, when set, overrides the turns' explicit outcomes.
	Outcome *bool
	// StartedAt, EndedAt, Usage and TotalLatencyMs, when zero, are derived from the
	// records (extremes and sums).
	StartedAt, EndedAt time.Time
	Usage              *session.Usage
	TotalLatencyMs     float64
	// References are the session's reference-based results (a dataset case matched), or
	// nil: folded into tool_use_score, coordination and Analysis.References.
	References *ReferenceScores
}

// pendingExplanation opens a provisional detection explanation (turn_detection.go detect).
const pendingExplanation = "rdm/ccm: pending (follow-up not known yet); "

// EvaluateClosedTurn evaluates turn t, whose stable session index is index, once: its
// interactions and tool calls, and the detection that needs no follow-up
// (hallucination). agents are the session's agents so far; prev is the record of the
// previous turn (nil for the first), whose grounding facts count as sources. The result
// is provisional (Final false) until FollowUp or FinishLast.
func (e *Evaluator) EvaluateClosedTurn(sessionID string, agents []session.AgentDefinition, t *session.Turn, index int, prev *TurnRecord) TurnRecord {
	var prior *session.Turn
	ti := 0
	if prev != nil && len(prev.Grounding) > 0 {
		// The earlier turns' salient facts stand as a turn of their own, so that the
		// grounding of this turn's final response finds them (detect_hallucination.go ungrounded).
		prior = &session.Turn{UserMessage: strings.Join(prev.Grounding, "\n")}
		ti = 1
	}
	sc := e.getClosedScratch(sessionID, agents, prior, t)
	defer sc.put()
	c := &sc.ctx
	if prev != nil {
		c.prev = &prev.Result
		if n := len(prev.Conversation) + 64; n > sc.convRoom {
			// Made for the carry and the turn's new tokens before they are put, not
			// grown under them (the set is kept with the scratch): at least twice the
			// room it had, as growing would, so that a session's growing carry makes
			// it again a few times only, and no more than a full carry needs (it is
			// cleared at every turn, at a cost that follows its size).
			room := max(n, min(2*sc.convRoom, maxConversation+64))
			c.priorConversation, sc.convRoom = make(map[string]bool, room), room
		}
		for _, tok := range prev.Conversation {
			c.priorConversation[tok] = true
		}
	}
	tr := c.turn(ti, false)
	tr.SetTurnIndex(index)
	tr.roundScores()
	rec := TurnRecord{
		Result:         tr,
		FinalResponder: finalResponder(t),
		Summary:        c.summarize(ti),
	}
	if d := tr.Explanations[keyDetection]; strings.HasPrefix(d, pendingExplanation) {
		if i := strings.LastIndex(d, "; → "); i >= len(pendingExplanation) {
			rec.Hallucination = d[len(pendingExplanation):i]
		}
	}
	var prevGrounding []string
	if prev != nil {
		prevGrounding = prev.Grounding
	}
	if sc.seen == nil {
		sc.seen = make(map[string]bool, maxGrounding)
	}
	seen, fresh := sc.seen, sc.fresh[:0]
	for _, g := range prevGrounding {
		seen[g] = true
	}
	for _, src := range c.turnSources(ti) {
		for _, f := range c.salient(src) {
			if !seen[f.Value] {
				seen[f.Value] = true
				fresh = append(fresh, f.Value)
			}
		}
	}
	rec.Grounding = carried(prevGrounding, fresh, maxGrounding)
	sc.fresh = fresh
	rec.Conversation = carryConversation(prev, sc, ti)
	return rec
}

// carryConversation returns prev's conversation tokens followed by the new ones of turn
// ti of the scratch's view, at most maxConversation (the oldest dropped). It runs after
// the turn's evaluation, and adds to c.priorConversation (the set of prev's tokens).
func carryConversation(prev *TurnRecord, sc *closedScratch, ti int) []string {
	var old []string
	if prev != nil {
		old = prev.Conversation
	}
	c := &sc.ctx
	seen := c.priorConversation
	fresh := sc.fresh[:0]
	texts := sc.texts[:0] // the texts read: a repeated one (tool results recur) adds no token
	c.conversationTexts(ti, func(s string) {
		if slices.Contains(texts, s) {
			return
		}
		texts = append(texts, s)
		for _, tok := range c.tokens(s) {
			if !seen[tok] {
				seen[tok] = true
				fresh = append(fresh, tok)
			}
		}
	})
	sc.fresh, sc.texts = fresh, texts
	return carried(old, fresh, maxConversation)
}

// carried returns the last limit strings of old followed by fresh, in one allocation of
// its size (a record keeps it until the next turn, so it holds no spare capacity). It is
// nil when old is nil and fresh is empty, as appending fresh to a clone of old was.
func carried(old, fresh []string, limit int) []string {
	if old == nil && len(fresh) == 0 {
		return nil
	}
	n := len(old) + len(fresh)
	skip := max(0, n-limit)
	out := make([]string, 0, n-skip)
	if skip < len(old) {
		out = append(out, old[skip:]...)
	} else {
		fresh = fresh[skip-len(old):]
	}
	return append(out, fresh...)
}

// RecordFromResult rebuilds the record of a turn from its TurnResult alone, for a turn
// the result store holds (turn_results.result) but the continuation store does not: its
// record never reached it (every save failed until the collector shut down, or the bound
// on records waiting to be saved dropped it) while the analysis holding the turn was
// stored (docs/decisions/sessions.md §4.7). What the result holds is kept as is; of the
// rest:
//   - FinalResponder is the last interaction (-1 without one): the result does not say
//     which one gave the final response;
//   - Summary is what the result shows: HasContent (a user message, a final response or a
//     tool call with captured arguments), AgentErrors (interactions with status error, without error type),
//     Handoffs and Participants (the interactions' handoffs), StartedAt (the result's;
//     zero on a result stored before it was recorded); no end, no root status, no
//     explicit outcome, no shared or duplicate calls, no ping-pong loops;
//   - Hallucination is the hallucination part of a provisional detection explanation;
//   - no Grounding or Conversation: the next turn is evaluated without the earlier turns'
//     facts and tokens (as a first turn is);
//   - NoFollowUp is set on a final result: the next turn's user message, when it comes,
//     gives its verdict again (FollowUp); the result's WithFollowUp is cleared with it, so
//     that the record and its result give one stage (VerdictStage 1), and the result
//     store keeps a stored verdict with follow-up over this one.
func RecordFromResult(tr TurnResult) TurnRecord {
	tr.WithFollowUp = false
	rec := TurnRecord{Result: tr, FinalResponder: len(tr.Interactions) - 1, NoFollowUp: tr.Final}
	sum := &rec.Summary
	sum.StartedAt = tr.StartedAt
	sum.HasContent = strings.TrimSpace(tr.UserMessage) != "" || strings.TrimSpace(tr.FinalResponse) != ""
	participants := map[string]bool{}
	for ii := range tr.Interactions {
		in := &tr.Interactions[ii]
		if in.Status == session.StatusError {
			sum.AgentErrors = append(sum.AgentErrors, AgentError{Interaction: ii})
		}
		for j := range in.ToolCalls {
			sum.HasContent = sum.HasContent || !slices.Contains(in.ToolCalls[j].NotEvaluable, ReasonArgumentsNotCaptured)
		}
		for _, h := range in.Handoffs {
			sum.Handoffs++
			participants[cmp.Or(h.FromAgent, in.AgentID)] = true
			if h.ToAgent != "" {
				participants[h.ToAgent] = true
			}
		}
	}
	if len(participants) > 0 {
		sum.Participants = slices.Sorted(maps.Keys(participants))
	}
	if d := tr.Explanations[keyDetection]; !tr.Final && strings.HasPrefix(d, pendingExplanation) {
		if i := strings.LastIndex(d, "; → "); i >= len(pendingExplanation) {
			rec.Hallucination = d[len(pendingExplanation):i]
		}
	}
	return rec
}

// SetTurnIndex moves the record to turn index (its result and its tool issues): a turn
// numbered by one collector while its continuation store was unreachable gets the index
// the store allocates once it is back (docs/decisions/sessions.md §4.5).
func (r *TurnRecord) SetTurnIndex(index int) { r.Result.SetTurnIndex(index) }

// SetTurnIndex gives the result and its tool issues (Interactions[].ToolCalls[].Issues)
// the turn's session index, 0-based: the index a collector's continuation store allocated
// (docs/decisions/sessions.md §4.5), or the one the result store moves a stored turn to
// (§4.6). The issue slices are changed in place: a caller that shares them copies first.
func (tr *TurnResult) SetTurnIndex(index int) {
	tr.TurnIndex = index
	for i := range tr.Interactions {
		for j := range tr.Interactions[i].ToolCalls {
			tc := &tr.Interactions[i].ToolCalls[j]
			for k := range tc.Issues {
				tc.Issues[k].TurnIndex = index
			}
		}
	}
}

// FollowUp makes rec's verdict final with the next turn's user message (docs/scoring.md §5):
// RDM (a correction or complaint) has priority over CCM (a re-ask), then the
// provisional hallucination verdict. A bad turn's final responder gets
// response_quality 0. rec is not modified; the final record is returned.
func (e *Evaluator) FollowUp(rec TurnRecord, nextUserMessage string) TurnRecord {
	return e.finalize(rec, &nextUserMessage)
}

// FollowUpBy is FollowUp with the user message of next, the turn that follows rec's in
// the conversation, which the final record names (FollowedBy).
func (e *Evaluator) FollowUpBy(rec TurnRecord, next *TurnRecord) TurnRecord {
	rec = e.finalize(rec, &next.Result.UserMessage)
	rec.FollowedBy = &FollowedBy{TraceID: next.Result.TraceID, RootSpanID: next.Result.RootSpanID, StartedAt: next.Summary.StartedAt}
	return rec
}

// FinishLast makes the verdict of a session's last turn final without follow-up (the
// session went idle): only the provisional hallucination verdict applies.
func (e *Evaluator) FinishLast(rec TurnRecord) TurnRecord {
	return e.finalize(rec, nil)
}

func (e *Evaluator) finalize(rec TurnRecord, next *string) TurnRecord {
	rec.FollowedBy = nil // FollowUpBy names the next turn
	// The verdict given before, which a Revised one replaces (before Replaced restores
	// the one the follow-up had replaced in turn).
	before := rec.Result.DetectionType
	if r := rec.Replaced; r != nil {
		// Judged again (another turn is next): from the verdict the follow-up replaced.
		rec.Result.IsBad, rec.Result.DetectionType, rec.Result.Confidence, rec.Result.Reason = r.IsBad, r.DetectionType, r.Confidence, r.Reason
		if fr := rec.FinalResponder; r.FinalResponder != nil && fr >= 0 && fr < len(rec.Result.Interactions) {
			rec.Result.Interactions = slices.Clone(rec.Result.Interactions)
			rec.Result.Interactions[fr] = *r.FinalResponder
		}
		rec.Replaced = nil
	}
	tr := rec.Result
	if slices.Contains(tr.NotEvaluable, ReasonCutByCollector) {
		// Its answer was not seen: no follow-up verdict either (the detection explains).
		tr.Revised, tr.ReplacedDetectionType = tr.Final, replacedType(tr.Final, before)
		tr.Final, tr.WithFollowUp = true, next != nil
		rec.Result = tr
		rec.NoFollowUp = next == nil
		return rec
	}
	v, followUpConf, expl := e.followUpVerdict(tr.SessionID, tr.UserMessage, tr.FinalResponse, next, make([]string, 0, 8))
	var followUp, hall *detection
	if v.bad {
		followUp = &v
	}
	if rec.Hallucination != "" {
		expl = append(expl, rec.Hallucination)
	}
	// The provisional verdict without follow-up (turn_detection.go detect) stands unless the
	// follow-up finds worse: RDM > CCM > no_answer > hallucination.
	var noAnswer *detection
	switch tr.DetectionType {
	case DetectionHallucination:
		hall = &detection{bad: true, typ: DetectionHallucination, conf: tr.Confidence, reason: tr.Reason,
			fromParams: unrecoveredParameterHallucination(tr.Interactions)}
	case DetectionNoAnswer:
		noAnswer = &detection{bad: true, typ: DetectionNoAnswer, conf: tr.Confidence, reason: tr.Reason}
	}
	d := chooseDetection(followUpConf, followUp, noAnswer, hall)
	expl = append(expl, "→ "+d.typ+", confidence "+num(d.conf))
	if followUp != nil && d.typ == followUp.typ {
		rec.Replaced = &ReplacedVerdict{IsBad: tr.IsBad, DetectionType: tr.DetectionType, Confidence: tr.Confidence, Reason: tr.Reason}
	}

	tr.Revised, tr.ReplacedDetectionType = tr.Final, replacedType(tr.Final, before)
	tr.Final, tr.WithFollowUp = true, next != nil
	tr.IsBad, tr.DetectionType, tr.Confidence, tr.Reason = d.bad, d.typ, d.conf, d.reason
	tr.Explanations = cloneMap(tr.Explanations)
	tr.Explanations[keyDetection] = strings.Join(expl, "; ")
	// The bad-turn rule judges the final response: a parameter hallucination of a tool
	// call is counted in tool_use and the conversation score, not again here.
	if fr := rec.FinalResponder; d.bad && !d.fromParams && fr >= 0 && fr < len(tr.Interactions) {
		tr.Interactions = slices.Clone(tr.Interactions)
		ir := &tr.Interactions[fr]
		if rec.Replaced != nil {
			before := *ir
			rec.Replaced.FinalResponder = &before
		}
		ir.Explanations = cloneMap(ir.Explanations)
		ir.ResponseQuality = ptr(0)
		ir.Explanations[keyResponseQuality] = "0: final responder of a bad turn (" + d.typ + ")"
		(&evalCtx{e: e}).score(ir)
	}
	tr.roundScores()
	rec.Result = tr
	rec.NoFollowUp = next == nil
	return rec
}

// replacedType is a verdict's ReplacedDetectionType: before (the detection type of the
// verdict given before) when that one was final, "" otherwise.
func replacedType(wasFinal bool, before string) string {
	if !wasFinal {
		return ""
	}
	return before
}

// unrecoveredParameterHallucination reports whether a tool call of the turn passed a
// hallucinated parameter and no later call recovered it: then a hallucination verdict of
// the turn comes from the parameters (detect_hallucination.go), not from the final response.
func unrecoveredParameterHallucination(irs []InteractionResult) bool {
	for i := range irs {
		for j := range irs[i].ToolCalls {
			tc := &irs[i].ToolCalls[j]
			for _, is := range tc.Issues {
				if is.Issue == IssueParameterHallucination && tc.RecoveredBy == "" {
					return true
				}
			}
		}
	}
	return false
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// summarize computes the TurnSummary of turn ti of c's session.
func (c *evalCtx) summarize(ti int) TurnSummary {
	t := &c.s.Turns[ti]
	sum := TurnSummary{StartedAt: t.StartedAt, EndedAt: t.EndedAt, Status: t.Status, HasContent: turnHasContent(t)}
	for ii := range t.Interactions {
		if in := &t.Interactions[ii]; in.Status == session.StatusError {
			sum.AgentErrors = append(sum.AgentErrors, AgentError{Interaction: ii, ErrorType: in.ErrorType})
		}
	}
	// Per (tool, agent): bit 1 a call, bit 2 a call with captured arguments.
	type toolAgent struct{ tool, agent string }
	pairs := map[toolAgent]uint8{}
	participants := map[string]bool{}
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		for si := range in.Steps {
			st := &in.Steps[si]
			if st.Handoff != nil {
				sum.Handoffs++
				participants[cmp.Or(st.Handoff.FromAgent, in.AgentID)] = true
				if st.Handoff.ToAgent != "" {
					participants[st.Handoff.ToAgent] = true
				}
			}
			if tc := st.ToolCall; tc != nil {
				k := toolAgent{tc.ToolName, in.AgentID}
				f := pairs[k] | 1
				if c.args.get(tc).args != nil {
					f |= 2
				}
				pairs[k] = f
			}
		}
	}
	// Per tool, how many agents call it, and how many with captured arguments.
	agentsPerTool := make(map[string][2]int, len(pairs))
	for k, f := range pairs {
		n := agentsPerTool[k.tool]
		n[0] += int(f & 1)
		n[1] += int(f >> 1)
		agentsPerTool[k.tool] = n
	}
	for k := range pairs {
		if agentsPerTool[k.tool][0] >= 2 {
			participants[k.agent] = true
		}
	}
	sum.Participants = slices.Sorted(maps.Keys(participants))
	sum.PingPongLoops = pingPongLoops(t)

	// Duplicate work: calls with captured arguments of tools two agents call.
	type seenCall struct {
		agent string // the first agent to make the call
		many  bool   // another agent made it too
	}
	type callKey struct{ tool, args string } // a tool and its canonical arguments
	seen := map[callKey]seenCall{}           // → agents so far
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		for si := range in.Steps {
			tc := in.Steps[si].ToolCall
			if tc == nil || agentsPerTool[tc.ToolName][1] < 2 {
				continue
			}
			args, ok := c.args.canonical(tc)
			if !ok {
				continue
			}
			sum.SharedCalls++
			key := callKey{tc.ToolName, args}
			prev, made := seen[key]
			if made && (prev.many || prev.agent != in.AgentID) {
				sum.DuplicateCalls++
			}
			switch {
			case !made:
				seen[key] = seenCall{agent: in.AgentID}
			case prev.agent != in.AgentID && !prev.many:
				prev.many = true
				seen[key] = prev
			}
		}
	}
	return sum
}
