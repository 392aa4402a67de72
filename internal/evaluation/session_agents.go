// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strconv"
	"strings"
)

// issueDetail is the issue message without its "agent: " prefix.
func issueDetail(is ToolIssue) string {
	label := agentLabel(is.AgentID)
	if rest, ok := strings.CutPrefix(is.Message, label); ok && strings.HasPrefix(rest, ": ") {
		return rest[2:] // strings.TrimPrefix(is.Message, label+": ") without making the prefix
	}
	return is.Message
}

// perAgent aggregates each agent's interactions (the ReAsk evaluation plan's per_agent_scores); agents
// lists the session's agents, which get an entry even without interactions.
func (e *Evaluator) perAgent(a *Analysis, agents []string, recs []TurnRecord) {
	type acc struct {
		comps             [][]*float64 // per interactionEvaluators entry
		n, calls, notEval int
		latency           float64
		issues            []string
		scores            AgentScores // built here: the evaluators get a pointer into it
	}
	// Each agent's component values are sized once, from its number of interactions.
	interactions := map[string]int{}
	for ri := range recs {
		for ii := range recs[ri].Result.Interactions {
			interactions[recs[ri].Result.Interactions[ii].AgentID]++
		}
	}
	accs := make(map[string]*acc, len(interactions)+len(agents))
	get := func(id string) *acc {
		if accs[id] == nil {
			k, n := len(interactionEvaluators), interactions[id]
			x := &acc{comps: make([][]*float64, k)}
			if n > 0 {
				all := make([]*float64, k*n)
				for i := range x.comps {
					x.comps[i] = all[i*n : i*n : (i+1)*n]
				}
			}
			accs[id] = x
		}
		return accs[id]
	}
	for _, id := range agents {
		get(id)
	}
	for ri := range recs {
		tr := &recs[ri].Result
		var errs map[int]AgentError // made only for a turn with agent errors
		if len(recs[ri].Summary.AgentErrors) > 0 {
			errs = make(map[int]AgentError, len(recs[ri].Summary.AgentErrors))
		}
		for _, ae := range recs[ri].Summary.AgentErrors {
			errs[ae.Interaction] = ae
		}
		for ii := range tr.Interactions {
			ir := &tr.Interactions[ii]
			x := get(ir.AgentID)
			x.n++
			x.latency += ir.LatencyMs
			for k, ev := range interactionEvaluators {
				x.comps[k] = append(x.comps[k], *ev.field(ir))
			}
			for ci := range ir.ToolCalls {
				tc := &ir.ToolCalls[ci]
				x.calls++
				if tc.Score == nil {
					x.notEval++
				}
				for _, is := range tc.Issues {
					x.issues = append(x.issues, string(is.Issue)+": "+issueDetail(is)+" (turn "+strconv.Itoa(turnNumber(is.TurnIndex))+")")
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
		as := &x.scores
		*as = AgentScores{
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
				as.Explanations[key] = "null: absent in all " + strconv.Itoa(x.n) + " interaction(s)"
			default:
				as.Explanations[key] = "mean over " + strconv.Itoa(k) + " of " + strconv.Itoa(x.n) + " interaction(s) = " + num(*m)
			}
			return m
		}
		var buf [8]weighted
		terms := buf[:0]
		for k, ev := range interactionEvaluators {
			v := agg(ev.name, x.comps[k])
			*ev.agentField(as) = v
			terms = append(terms, weighted{ev.name, v, ev.weight(w)})
		}
		var expl string
		as.Overall, expl = weightedMean(terms)
		if x.n == 0 {
			expl = "null: no interactions"
		}
		as.Explanations["overall"] = expl
		a.PerAgentScores[id] = *as
	}
}

// sessionAgentScores sets per_agent_scores (without their recommendations).
type sessionAgentScores struct{}

var _ sessionEvaluator = sessionAgentScores{}

func (sessionAgentScores) evaluate(e *Evaluator, x sessionInput, a *Analysis) {
	e.perAgent(a, x.meta.Agents, x.recs)
}
