// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// Explanation keys of an Analysis.
const (
	keyOverallScore      = "overall_score"
	keyCoordinationScore = "coordination_score"
	keyIntentDriftScore  = "intent_drift_score"
	keyTaskCompletion    = "task_completion"
	keyConversationScore = "conversation_score"
	keyToolUseScore      = "tool_use_score"
	keyReasoningScore    = "reasoning_score"
	keyNoDuplicateWork   = "coordination.no_duplicate_work"
	keyContextPreserved  = "coordination.context_preserved"
	keyRoleAdherence     = "coordination.role_adherence"
	keyNoPingPong        = "coordination.no_ping_pong"
	keyDependencyCompl   = "coordination.dependency_compliance"
)

// AnalyzeSession evaluates the whole session (DESIGN.md §5.1–§5.4): every turn as
// final (the last one judged without follow-up), per-agent scores, conversation
// summary, coordination, intent drift, task completion, overall score, tool issues,
// recommendations and the latency summary. A nil session gives an empty analysis.
func (e *Evaluator) AnalyzeSession(s *session.AgentSession) Analysis {
	return e.analyze(s, nil)
}

func (e *Evaluator) analyze(s *session.AgentSession, refs *ReferenceScores) Analysis {
	a := Analysis{
		PerAgentScores:  map[string]AgentScores{},
		TurnResults:     []TurnResult{},
		ToolIssues:      []ToolIssue{},
		Recommendations: []Recommendation{},
		Explanations:    map[string]string{},
	}
	if s == nil {
		s = &session.AgentSession{}
	}
	a.SessionID, a.Service, a.StartedAt, a.EndedAt = s.ID, s.Service, s.StartedAt, s.EndedAt
	a.Partial, a.EndReason, a.Usage = s.Partial, s.EndReason, s.Usage

	c := e.newCtx(s)
	for ti := range s.Turns {
		a.TurnResults = append(a.TurnResults, c.turn(ti, true))
	}
	for _, tr := range a.TurnResults {
		for _, ir := range tr.Interactions {
			for _, tc := range ir.ToolCalls {
				a.ToolIssues = append(a.ToolIssues, tc.Issues...)
			}
		}
	}
	a.Conversation, a.Explanations[keyConversationScore] = conversation(a.TurnResults)
	a.ToolUseScore, a.Explanations[keyToolUseScore] = sessionToolUse(a.TurnResults)
	a.ReasoningScore, a.Explanations[keyReasoningScore] = sessionReasoning(a.TurnResults)
	refs.apply(&a)
	c.coordination(&a)
	a.IntentDriftScore, a.Explanations[keyIntentDriftScore] = sessionIntentDrift(a.TurnResults)
	a.TaskCompletion, a.Explanations[keyTaskCompletion] = taskCompletion(s, a.TurnResults)

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

	c.perAgent(&a)
	a.Recommendations = e.recommendations(&a)
	for id, as := range a.PerAgentScores {
		for _, r := range a.Recommendations {
			if r.AgentID == id {
				as.Recommendations = append(as.Recommendations, r.Message)
			}
		}
		a.PerAgentScores[id] = as
	}
	a.Latency = latency(s, a.TurnResults)
	return a
}

// conversation counts the turn verdicts; score = good / total (DESIGN.md §5.3).
func conversation(trs []TurnResult) (ConversationSummary, string) {
	var cs ConversationSummary
	for _, tr := range trs {
		cs.TotalResponses++
		if !tr.IsBad {
			cs.GoodResponses++
			continue
		}
		cs.BadResponses++
		switch tr.DetectionType {
		case DetectionCCM:
			cs.CCMDetections++
		case DetectionRDM:
			cs.RDMDetections++
		case DetectionHallucination:
			cs.HallucinationDetections++
		case DetectionLLMJudge:
			cs.LLMJudgeDetections++
		}
	}
	if cs.TotalResponses == 0 {
		return cs, "null: no turns"
	}
	cs.Score = ptr(float64(cs.GoodResponses) / float64(cs.TotalResponses))
	return cs, fmt.Sprintf("%d good / %d turns = %s", cs.GoodResponses, cs.TotalResponses, num(*cs.Score))
}

func sessionToolUse(trs []TurnResult) (*float64, string) {
	var vals []*float64
	total := 0
	for _, tr := range trs {
		for _, ir := range tr.Interactions {
			for _, tc := range ir.ToolCalls {
				total++
				vals = append(vals, tc.Score)
			}
		}
	}
	m, n := meanOf(vals)
	if m == nil {
		if total == 0 {
			return nil, "null: no tool calls"
		}
		return nil, fmt.Sprintf("null: none of the %d tool call(s) is evaluable", total)
	}
	return m, fmt.Sprintf("mean of %d evaluable call score(s) = %s; %d not evaluable", n, num(*m), total-n)
}

func sessionReasoning(trs []TurnResult) (*float64, string) {
	var vals []*float64
	for _, tr := range trs {
		for _, ir := range tr.Interactions {
			vals = append(vals, ir.Reasoning)
		}
	}
	m, n := meanOf(vals)
	if m == nil {
		return nil, "null: no interaction has reasoning content"
	}
	return m, fmt.Sprintf("mean reasoning_score of %d interaction(s) = %s", n, num(*m))
}

func sessionIntentDrift(trs []TurnResult) (*float64, string) {
	var best *float64
	at := -1
	n := 0
	for _, tr := range trs {
		if tr.IntentDrift == nil {
			continue
		}
		n++
		if best == nil || *tr.IntentDrift > *best {
			best, at = ptr(*tr.IntentDrift), tr.TurnIndex
		}
	}
	if best == nil {
		return nil, "null: no turn has an intent drift (user messages or actions not captured)"
	}
	return best, fmt.Sprintf("max over %d turn(s) = %s (turn %d)", n, num(*best), at)
}

// taskCompletion: the explicit outcome first; else the last turn is not bad, has a
// non-empty final response, no HIGH tool issue and no error status (turn root or
// final responder). Nil without turns, when the last turn is partial, or when it has
// no captured content (DESIGN.md §5.4).
func taskCompletion(s *session.AgentSession, trs []TurnResult) (*bool, string) {
	if s.Outcome != nil {
		v := *s.Outcome
		return &v, fmt.Sprintf("%t: explicit outcome signal", v)
	}
	if len(s.Turns) == 0 {
		return nil, "null: no turns and no explicit outcome"
	}
	last := &s.Turns[len(s.Turns)-1]
	tr := trs[len(trs)-1]
	if last.Partial {
		return nil, "null: the last turn is partial (cut short) and no explicit outcome was seen"
	}
	if !turnHasContent(last) {
		return nil, "null: the last turn has no captured content and no explicit outcome was seen"
	}
	var fails []string
	if tr.IsBad {
		fails = append(fails, "the last turn is bad ("+tr.DetectionType+")")
	}
	if strings.TrimSpace(last.FinalResponse) == "" {
		fails = append(fails, "the final response is empty")
	}
	for _, ir := range tr.Interactions {
		for _, tc := range ir.ToolCalls {
			for _, is := range tc.Issues {
				if is.Severity == SeverityHigh {
					fails = append(fails, "HIGH issue "+string(is.Issue)+" ("+is.AgentID+" → "+is.ToolName+")")
				}
			}
		}
	}
	if last.Status == "error" {
		fails = append(fails, "the turn ended with error status")
	}
	if fr := finalResponder(last); fr >= 0 && last.Interactions[fr].Status == "error" {
		fails = append(fails, "the final responder "+last.Interactions[fr].AgentID+" ended with error status")
	}
	if len(fails) > 0 {
		f := false
		return &f, "false: " + strings.Join(fails, "; ")
	}
	t := true
	return &t, "true: no explicit outcome; the last turn is not bad, has a final response, no HIGH issue and no error"
}

// perAgent aggregates each agent's interactions (seed reask per_agent_scores).
func (c *evalCtx) perAgent(a *Analysis) {
	type acc struct {
		toolUse, reasoning, handoff, rq []*float64
		n, calls, notEval               int
		latency                         float64
		issues                          []string
	}
	accs := map[string]*acc{}
	get := func(id string) *acc {
		if accs[id] == nil {
			accs[id] = &acc{}
		}
		return accs[id]
	}
	for _, ag := range c.s.Agents {
		get(ag.ID)
	}
	for ti, tr := range a.TurnResults {
		for ii, ir := range tr.Interactions {
			x := get(ir.AgentID)
			x.n++
			x.latency += ir.LatencyMs
			x.toolUse = append(x.toolUse, ir.ToolUse)
			x.reasoning = append(x.reasoning, ir.Reasoning)
			x.handoff = append(x.handoff, ir.Handoff)
			x.rq = append(x.rq, ir.ResponseQuality)
			for _, tc := range ir.ToolCalls {
				x.calls++
				if tc.Score == nil {
					x.notEval++
				}
				for _, is := range tc.Issues {
					x.issues = append(x.issues, fmt.Sprintf("%s: %s (turn %d)", is.Issue, issueDetail(is), is.TurnIndex))
				}
			}
			if in := &c.s.Turns[ti].Interactions[ii]; in.Status == "error" {
				what := "agent span ended with error status"
				if in.ErrorType != "" {
					what += " (" + in.ErrorType + ")"
				}
				x.issues = append(x.issues, fmt.Sprintf("AGENT_ERROR: %s (turn %d)", what, ti))
			}
		}
	}
	w := c.e.cfg.AgentWeights
	for id, x := range accs {
		as := AgentScores{
			InteractionsCount: x.n, ToolCalls: x.calls, NotEvaluableCalls: x.notEval,
			Issues: x.issues, Recommendations: []string{}, Explanations: map[string]string{},
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
		as.ToolUse = agg(keyToolUse, x.toolUse)
		as.Reasoning = agg(keyReasoning, x.reasoning)
		as.Handoff = agg(keyHandoff, x.handoff)
		as.ResponseQuality = agg(keyResponseQuality, x.rq)
		var expl string
		as.Overall, expl = weightedMean([]weighted{
			{keyToolUse, as.ToolUse, w.ToolUse},
			{keyReasoning, as.Reasoning, w.Reasoning},
			{keyHandoff, as.Handoff, w.Handoff},
			{keyResponseQuality, as.ResponseQuality, w.ResponseQuality},
		})
		if x.n == 0 {
			expl = "null: no interactions"
		}
		as.Explanations["overall"] = expl
		a.PerAgentScores[id] = as
	}
}

// issueDetail is the issue message without its "agent: " prefix.
func issueDetail(is ToolIssue) string {
	return strings.TrimPrefix(is.Message, agentLabel(is.AgentID)+": ")
}

// coordination computes coordination_score and its components (DESIGN.md §5.4).
func (c *evalCtx) coordination(a *Analysis) {
	cfg := c.e.cfg
	// Participants: agents party to a handoff, or calling a tool another agent calls in
	// the same turn.
	participants := map[string]bool{}
	handoffs := 0
	for ti := range c.s.Turns {
		t := &c.s.Turns[ti]
		callers := map[string]map[string]bool{} // tool → agents
		for ii := range t.Interactions {
			in := &t.Interactions[ii]
			for si := range in.Steps {
				st := &in.Steps[si]
				if st.Handoff != nil {
					handoffs++
					from := st.Handoff.FromAgent
					if from == "" {
						from = in.AgentID
					}
					participants[from] = true
					if st.Handoff.ToAgent != "" {
						participants[st.Handoff.ToAgent] = true
					}
				}
				if st.ToolCall != nil {
					if callers[st.ToolCall.ToolName] == nil {
						callers[st.ToolCall.ToolName] = map[string]bool{}
					}
					callers[st.ToolCall.ToolName][in.AgentID] = true
				}
			}
		}
		for _, ags := range callers {
			if len(ags) >= 2 {
				for ag := range ags {
					participants[ag] = true
				}
			}
		}
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

	// No duplicate work.
	shared, dups := 0, 0
	for ti := range c.s.Turns {
		t := &c.s.Turns[ti]
		agentsPerTool := map[string]map[string]bool{}
		for ii := range t.Interactions {
			in := &t.Interactions[ii]
			for si := range in.Steps {
				if tc := in.Steps[si].ToolCall; tc != nil && c.args.get(tc).args != nil {
					if agentsPerTool[tc.ToolName] == nil {
						agentsPerTool[tc.ToolName] = map[string]bool{}
					}
					agentsPerTool[tc.ToolName][in.AgentID] = true
				}
			}
		}
		callers := map[string]map[string]bool{} // tool + canonical arguments → agents so far
		for ii := range t.Interactions {
			in := &t.Interactions[ii]
			for si := range in.Steps {
				tc := in.Steps[si].ToolCall
				if tc == nil || len(agentsPerTool[tc.ToolName]) < 2 {
					continue
				}
				args, ok := c.args.canonical(tc)
				if !ok {
					continue
				}
				shared++
				key := tc.ToolName + "\x00" + args
				prev := callers[key]
				if len(prev) > 1 || len(prev) == 1 && !prev[in.AgentID] {
					dups++ // another agent already made this exact call in the turn
				}
				if prev == nil {
					prev = map[string]bool{}
					callers[key] = prev
				}
				prev[in.AgentID] = true
			}
		}
	}
	if shared == 0 {
		a.Explanations[keyNoDuplicateWork] = "null: no tool is called by two agents within a turn (with captured arguments)"
	} else {
		cc.NoDuplicateWork = ptr(1 - float64(dups)/float64(shared))
		a.Explanations[keyNoDuplicateWork] = fmt.Sprintf("1 − %d duplicated / %d calls of shared tools = %s", dups, shared, num(*cc.NoDuplicateWork))
	}

	// Context preserved.
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

	// Role adherence.
	checked, authorised := 0, 0
	for _, tr := range a.TurnResults {
		for _, ir := range tr.Interactions {
			if !participants[ir.AgentID] {
				continue
			}
			for _, tc := range ir.ToolCalls {
				if contains(tc.NotEvaluable, ReasonToolsUnknown) {
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

	// No ping-pong.
	if handoffs == 0 {
		a.Explanations[keyNoPingPong] = "null: no handoff"
	} else {
		loops := 0
		var where []string
		for ti := range c.s.Turns {
			if n := pingPongLoops(&c.s.Turns[ti]); n > 0 {
				loops += n
				where = append(where, fmt.Sprintf("turn %d: %d", ti, n))
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
		a.Explanations[keyDependencyCompl] = "null: no expected interactions (reference-based evaluation, DESIGN.md §5.5)"
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

// pingPongLoops counts, over the turn's handoffs in order, the windows of three
// consecutive handoffs A→B, B→A, A→B (overlapping windows count separately).
func pingPongLoops(t *session.Turn) int {
	type hop struct{ from, to string }
	var hops []hop
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		for si := range in.Steps {
			if h := in.Steps[si].Handoff; h != nil {
				from := h.FromAgent
				if from == "" {
					from = in.AgentID
				}
				hops = append(hops, hop{session.AgentKey(from), session.AgentKey(h.ToAgent)})
			}
		}
	}
	n := 0
	for i := 0; i+2 < len(hops); i++ {
		a, b, c := hops[i], hops[i+1], hops[i+2]
		if a.from != a.to && b.from == a.to && b.to == a.from && c == a {
			n++
		}
	}
	return n
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// latency summarises the session's latencies in milliseconds.
func latency(s *session.AgentSession, trs []TurnResult) LatencySummary {
	var l LatencySummary
	var turnSum, toolSum, inSum float64
	ins := 0
	for _, t := range s.Turns {
		turnSum += t.LatencyMs
		if t.LatencyMs > l.MaxTurnMs {
			l.MaxTurnMs = t.LatencyMs
		}
	}
	for _, tr := range trs {
		for _, ir := range tr.Interactions {
			ins++
			inSum += ir.LatencyMs
			for _, tc := range ir.ToolCalls {
				if tc.LatencyMs == nil {
					continue
				}
				l.ToolCalls++
				toolSum += *tc.LatencyMs
				if *tc.LatencyMs > l.MaxToolCallMs {
					l.MaxToolCallMs = *tc.LatencyMs
				}
			}
		}
	}
	l.TotalMs = s.TotalLatencyMs
	if l.TotalMs == 0 {
		l.TotalMs = turnSum
	}
	if n := len(s.Turns); n > 0 {
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

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
