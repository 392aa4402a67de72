// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// AnalyzeSession evaluates the whole session (docs/scoring.md §3–§6) the way the
// processor does turn by turn: each turn once (EvaluateClosedTurn), its verdict made
// final by the next user message (FollowUp; the last turn by FinishLast), then the
// records aggregated (Aggregate). A nil session gives an empty analysis.
func (e *Evaluator) AnalyzeSession(s *session.AgentSession) Analysis {
	return e.AnalyzeSessionWithReferences(s, nil)
}

// AnalyzeSessionWithReferences is AnalyzeSession with reference-based results folded in
// (SessionMeta.References); refs nil is AnalyzeSession.
func (e *Evaluator) AnalyzeSessionWithReferences(s *session.AgentSession, refs *ReferenceScores) Analysis {
	if s == nil {
		s = &session.AgentSession{}
	}
	recs := make([]TurnRecord, len(s.Turns))
	for ti := range s.Turns {
		var prev *TurnRecord
		if ti > 0 {
			prev = &recs[ti-1]
		}
		recs[ti] = e.EvaluateClosedTurn(s.ID, s.Agents, &s.Turns[ti], ti, prev)
	}
	for ti := range recs {
		if ti+1 < len(recs) {
			recs[ti] = e.FollowUp(recs[ti], recs[ti+1].Result.UserMessage)
		} else {
			recs[ti] = e.FinishLast(recs[ti])
		}
	}
	meta := SessionMeta{
		ID: s.ID, Service: s.Service, Partial: s.Partial, EndReason: string(s.EndReason),
		Outcome: s.Outcome, StartedAt: s.StartedAt, EndedAt: s.EndedAt, Usage: &s.Usage,
		TotalLatencyMs: s.TotalLatencyMs, References: refs,
	}
	for _, a := range s.Agents {
		meta.Agents = append(meta.Agents, a.ID)
	}
	return e.Aggregate(meta, recs)
}

// Aggregate computes the session analysis (docs/scoring.md §6) from the final turn records,
// in turn order: conversation summary, tool use, reasoning, coordination, intent drift,
// task completion, overall score, per-agent scores, tool issues, recommendations and
// latency. It reads no turn model: its cost is linear in the records, and it gives the
// same analysis before and after a restart.
func (e *Evaluator) Aggregate(meta SessionMeta, recs []TurnRecord) Analysis {
	a := Analysis{
		SessionID: meta.ID, Service: meta.Service, Partial: meta.Partial, EndReason: meta.EndReason,
		StartedAt: meta.StartedAt, EndedAt: meta.EndedAt,
		PerAgentScores:  map[string]AgentScores{},
		TurnResults:     make([]TurnResult, 0, len(recs)),
		ToolIssues:      []ToolIssue{},
		Recommendations: []Recommendation{},
		Explanations:    map[string]string{},
	}
	var usage session.Usage
	for i := range recs {
		tr := recs[i].Result
		a.TurnResults = append(a.TurnResults, tr)
		// A session with a turn cut short is partial (docs/scoring.md §6).
		a.Partial = a.Partial || tr.Partial
		usage.Add(tr.Usage)
		if st := recs[i].Summary.StartedAt; meta.StartedAt.IsZero() && !st.IsZero() && (a.StartedAt.IsZero() || st.Before(a.StartedAt)) {
			a.StartedAt = st
		}
		if en := recs[i].Summary.EndedAt; meta.EndedAt.IsZero() && en.After(a.EndedAt) {
			a.EndedAt = en
		}
		for _, ir := range tr.Interactions {
			for _, tc := range ir.ToolCalls {
				a.ToolIssues = append(a.ToolIssues, tc.Issues...)
			}
		}
	}
	a.Usage = usage
	if meta.Usage != nil {
		a.Usage = *meta.Usage
	}
	a.Conversation, a.Explanations[keyConversationScore] = conversation(a.TurnResults)
	a.ToolUseScore, a.Explanations[keyToolUseScore] = sessionToolUse(a.TurnResults)
	a.ReasoningScore, a.Explanations[keyReasoningScore] = sessionReasoning(a.TurnResults)
	meta.References.apply(&a)
	e.coordination(&a, recs)
	a.IntentDriftScore, a.Explanations[keyIntentDriftScore] = sessionIntentDrift(a.TurnResults)
	a.TaskCompletion, a.Explanations[keyTaskCompletion] = taskCompletion(meta.Outcome, recs)

	var drift *float64
	if a.IntentDriftScore != nil {
		drift = ptr(1 - *a.IntentDriftScore)
	}
	w := e.cfg.SessionWeights
	a.OverallScore, a.Explanations[keyOverallScore] = weightedMean([]weighted{
		{"conversation", a.Conversation.Score, w.Conversation},
		{"tool_use", a.ToolUseScore, w.ToolUse},
		{"coordination", a.CoordinationScore, w.Coordination},
		{"reasoning", a.ReasoningScore, w.Reasoning},
		{"1−intent_drift", drift, w.IntentDrift},
	})

	e.perAgent(&a, meta.Agents, recs)
	a.Recommendations = e.recommendations(&a)
	for id, as := range a.PerAgentScores {
		for _, r := range a.Recommendations {
			if r.AgentID == id {
				as.Recommendations = append(as.Recommendations, r)
			}
		}
		a.PerAgentScores[id] = as
	}
	a.Latency = latency(meta.TotalLatencyMs, a.TurnResults)
	a.roundScores()
	return a
}

// taskCompletion: the explicit outcome first (the session's, else the last turn's that
// has one); else the last turn is not bad, has a non-empty final response, no HIGH
// tool issue that a later call did not recover and no error status (turn root or final
// responder). A last turn without answer (no_answer) is false. Nil without turns, when
// the last turn is partial, or when it has no captured content (docs/scoring.md §6).
func taskCompletion(outcome *bool, recs []TurnRecord) (*bool, string) {
	if outcome == nil {
		for i := range recs {
			if o := recs[i].Summary.Outcome; o != nil {
				outcome = o
			}
		}
	}
	if outcome != nil {
		v := *outcome
		return &v, fmt.Sprintf("%t: explicit outcome signal", v)
	}
	if len(recs) == 0 {
		return nil, "null: no turns and no explicit outcome"
	}
	last := &recs[len(recs)-1]
	tr := last.Result
	if tr.DetectionType == DetectionNoAnswer {
		f := false
		return &f, "false: the last turn gave no answer (" + tr.Reason + ")"
	}
	if tr.Partial {
		return nil, "null: the last turn is partial (cut short) and no explicit outcome was seen"
	}
	if !last.Summary.HasContent {
		return nil, "null: the last turn has no captured content and no explicit outcome was seen"
	}
	var fails []string
	if tr.IsBad {
		fails = append(fails, "the last turn is bad ("+tr.DetectionType+")")
	}
	if strings.TrimSpace(tr.FinalResponse) == "" {
		fails = append(fails, "the final response is empty")
	}
	for _, ir := range tr.Interactions {
		for _, tc := range ir.ToolCalls {
			for _, is := range tc.Issues {
				if is.Severity == SeverityHigh && tc.RecoveredBy == "" {
					fails = append(fails, "HIGH issue "+string(is.Issue)+" ("+is.AgentID+" → "+is.ToolName+")")
				}
			}
		}
	}
	if last.Summary.Status == session.StatusError {
		fails = append(fails, "the turn ended with error status")
	}
	if fr := last.FinalResponder; fr >= 0 && fr < len(tr.Interactions) && tr.Interactions[fr].Status == session.StatusError {
		fails = append(fails, "the final responder "+tr.Interactions[fr].AgentID+" ended with error status")
	}
	if len(fails) > 0 {
		f := false
		return &f, "false: " + strings.Join(fails, "; ")
	}
	t := true
	return &t, "true: no explicit outcome; the last turn is not bad, has a final response, no HIGH issue and no error"
}

// perAgent aggregates each agent's interactions (the ReAsk evaluation plan's per_agent_scores); agents
// lists the session's agents, which get an entry even without interactions.
func (e *Evaluator) perAgent(a *Analysis, agents []string, recs []TurnRecord) {
	type acc struct {
		comps             [][]*float64 // per interactionEvaluators entry
		n, calls, notEval int
		latency           float64
		issues            []string
	}
	accs := map[string]*acc{}
	get := func(id string) *acc {
		if accs[id] == nil {
			accs[id] = &acc{comps: make([][]*float64, len(interactionEvaluators))}
		}
		return accs[id]
	}
	for _, id := range agents {
		get(id)
	}
	for ri := range recs {
		tr := &recs[ri].Result
		errs := map[int]AgentError{}
		for _, ae := range recs[ri].Summary.AgentErrors {
			errs[ae.Interaction] = ae
		}
		for ii, ir := range tr.Interactions {
			x := get(ir.AgentID)
			x.n++
			x.latency += ir.LatencyMs
			for k, ev := range interactionEvaluators {
				x.comps[k] = append(x.comps[k], *ev.field(&ir))
			}
			for _, tc := range ir.ToolCalls {
				x.calls++
				if tc.Score == nil {
					x.notEval++
				}
				for _, is := range tc.Issues {
					x.issues = append(x.issues, fmt.Sprintf("%s: %s (turn %d)", is.Issue, issueDetail(is), turnNumber(is.TurnIndex)))
				}
			}
			if ae, ok := errs[ii]; ok {
				what := "agent span ended with error status"
				if ae.ErrorType != "" {
					what += " (" + ae.ErrorType + ")"
				}
				x.issues = append(x.issues, fmt.Sprintf("AGENT_ERROR: %s (turn %d)", what, turnNumber(tr.TurnIndex)))
			}
		}
	}
	w := e.cfg.AgentWeights
	for id, x := range accs {
		as := AgentScores{
			InteractionsCount: x.n, ToolCalls: x.calls, NotEvaluableCalls: x.notEval,
			Issues: x.issues, Recommendations: []Recommendation{}, Explanations: map[string]string{},
		}
		if as.Issues == nil {
			as.Issues = []string{}
		}
		if x.n > 0 {
			as.MeanLatencyMs = x.latency / float64(x.n)
		}
		agg := func(key string, vals []*float64) *float64 {
			m, k := meanOf(vals)
			switch {
			case x.n == 0:
				as.Explanations[key] = "null: no interactions"
			case m == nil:
				as.Explanations[key] = fmt.Sprintf("null: absent in all %d interaction(s)", x.n)
			default:
				as.Explanations[key] = fmt.Sprintf("mean over %d of %d interaction(s) = %s", k, x.n, num(*m))
			}
			return m
		}
		terms := make([]weighted, 0, len(interactionEvaluators))
		for k, ev := range interactionEvaluators {
			v := agg(ev.name(), x.comps[k])
			*ev.agentField(&as) = v
			terms = append(terms, weighted{ev.name(), v, ev.weight(w)})
		}
		var expl string
		as.Overall, expl = weightedMean(terms)
		if x.n == 0 {
			expl = "null: no interactions"
		}
		as.Explanations["overall"] = expl
		a.PerAgentScores[id] = as
	}
}

// coordination computes coordination_score and its components (docs/scoring.md §6) from
// the turns' summaries and results.
func (e *Evaluator) coordination(a *Analysis, recs []TurnRecord) {
	cfg := e.cfg
	participants := map[string]bool{}
	handoffs, shared, dups := 0, 0, 0
	for i := range recs {
		sum := &recs[i].Summary
		for _, p := range sum.Participants {
			participants[p] = true
		}
		handoffs += sum.Handoffs
		shared += sum.SharedCalls
		dups += sum.DuplicateCalls
	}
	cc := &a.Coordination
	absent := "null: fewer than two agents coordinate (no handoff and no tool shared by two agents within a turn)"
	if len(participants) < 2 {
		a.Explanations[keyCoordinationScore] = absent
		for _, k := range []string{keyNoDuplicateWork, keyContextPreserved, keyRoleAdherence, keyNoPingPong, keyDependencyCompl} {
			a.Explanations[k] = absent
		}
		return
	}

	if shared == 0 {
		a.Explanations[keyNoDuplicateWork] = "null: no tool is called by two agents within a turn (with captured arguments)"
	} else {
		cc.NoDuplicateWork = ptr(1 - float64(dups)/float64(shared))
		a.Explanations[keyNoDuplicateWork] = fmt.Sprintf("1 − %d duplicated / %d calls of shared tools = %s", dups, shared, num(*cc.NoDuplicateWork))
	}

	var hs []*float64
	for _, tr := range a.TurnResults {
		for _, ir := range tr.Interactions {
			hs = append(hs, ir.Handoff)
		}
	}
	if m, n := meanOf(hs); m != nil {
		cc.ContextPreserved = m
		a.Explanations[keyContextPreserved] = fmt.Sprintf("mean handoff_score of %d interaction(s) = %s", n, num(*m))
	} else {
		a.Explanations[keyContextPreserved] = "null: no interaction has a handoff_score"
	}

	checked, authorised := 0, 0
	for _, tr := range a.TurnResults {
		for _, ir := range tr.Interactions {
			if !participants[ir.AgentID] {
				continue
			}
			for _, tc := range ir.ToolCalls {
				if slices.Contains(tc.NotEvaluable, ReasonToolsUnknown) {
					continue
				}
				checked++
				ok := true
				for _, is := range tc.Issues {
					if is.Issue == IssueUnauthorizedTool {
						ok = false
					}
				}
				if ok {
					authorised++
				}
			}
		}
	}
	if checked == 0 {
		a.Explanations[keyRoleAdherence] = "null: no call of a coordinating agent could be checked for authorisation"
	} else {
		cc.RoleAdherence = ptr(float64(authorised) / float64(checked))
		a.Explanations[keyRoleAdherence] = fmt.Sprintf("%d authorised / %d checked calls = %s", authorised, checked, num(*cc.RoleAdherence))
	}

	if handoffs == 0 {
		a.Explanations[keyNoPingPong] = "null: no handoff"
	} else {
		loops := 0
		var where []string
		for i := range recs {
			if n := recs[i].Summary.PingPongLoops; n > 0 {
				loops += n
				where = append(where, fmt.Sprintf("turn %d: %d", turnNumber(recs[i].Result.TurnIndex), n))
			}
		}
		cc.NoPingPong = ptr(clamp01(1 - cfg.PingPongPenalty*float64(loops)))
		expl := fmt.Sprintf("max(0, 1 − %s × %d loop(s)) = %s", num(cfg.PingPongPenalty), loops, num(*cc.NoPingPong))
		if len(where) > 0 {
			expl += " (" + strings.Join(where, ", ") + ")"
		}
		a.Explanations[keyNoPingPong] = expl
	}
	if cc.DependencyCompliance == nil {
		a.Explanations[keyDependencyCompl] = "null: no expected interactions (reference-based evaluation, docs/scoring.md §11)"
	}

	m, n := meanOf([]*float64{cc.NoDuplicateWork, cc.ContextPreserved, cc.RoleAdherence, cc.NoPingPong, cc.DependencyCompliance})
	if m == nil {
		a.Explanations[keyCoordinationScore] = "null: no coordination component is present"
		return
	}
	a.CoordinationScore = m
	names := []string{}
	for _, p := range []struct {
		n string
		v *float64
	}{{"no_duplicate_work", cc.NoDuplicateWork}, {"context_preserved", cc.ContextPreserved},
		{"role_adherence", cc.RoleAdherence}, {"no_ping_pong", cc.NoPingPong}, {"dependency_compliance", cc.DependencyCompliance}} {
		if p.v != nil {
			names = append(names, p.n+"("+num(*p.v)+")")
		}
	}
	a.Explanations[keyCoordinationScore] = fmt.Sprintf("mean of %d component(s) %s = %s", n, strings.Join(names, ", "), num(*m))
}

// latency summarises the session's latencies in milliseconds; totalMs, when not zero,
// is the session's total (else the sum of the turns').
func latency(totalMs float64, trs []TurnResult) LatencySummary {
	var l LatencySummary
	var turnSum, toolSum, inSum float64
	ins := 0
	for _, tr := range trs {
		turnSum += tr.LatencyMs
		l.MaxTurnMs = max(l.MaxTurnMs, tr.LatencyMs)
		for _, ir := range tr.Interactions {
			ins++
			inSum += ir.LatencyMs
			for _, tc := range ir.ToolCalls {
				if tc.LatencyMs == nil {
					continue
				}
				l.ToolCalls++
				toolSum += *tc.LatencyMs
				l.MaxToolCallMs = max(l.MaxToolCallMs, *tc.LatencyMs)
			}
		}
	}
	l.TotalMs = totalMs
	if l.TotalMs == 0 {
		l.TotalMs = turnSum
	}
	if n := len(trs); n > 0 {
		l.MeanTurnMs = turnSum / float64(n)
	}
	if l.ToolCalls > 0 {
		l.MeanToolCallMs = toolSum / float64(l.ToolCalls)
	}
	if ins > 0 {
		l.MeanInteractionMs = inSum / float64(ins)
	}
	return l
}
