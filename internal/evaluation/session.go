// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
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

// conversation counts the turn verdicts (docs/scoring.md §5). score = good / total over the
// turns that carry a request: a good turn whose user message states no task (fewer than
// minIntentWords content words, e.g. "Thanks!", "ok") and whose agents took no action
// is a closing remark, not a response to score, and is left out of the score (it stays
// in the counters). A bad closing turn still counts.
func conversation(trs []TurnResult) (ConversationSummary, string) {
	var cs ConversationSummary
	closing := 0
	for i, tr := range trs {
		cs.TotalResponses++
		if !tr.IsBad {
			cs.GoodResponses++
			if closingTurn(&trs[i]) {
				closing++
			}
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
		case DetectionNoAnswer:
			cs.NoAnswerDetections++
		}
	}
	if cs.TotalResponses == 0 {
		return cs, "null: no turns"
	}
	if closing == cs.TotalResponses {
		cs.Score = ptr(1.0)
		return cs, fmt.Sprintf("1: all %d turn(s) are good closing remarks", closing)
	}
	good, total := cs.GoodResponses-closing, cs.TotalResponses-closing
	cs.Score = ptr(float64(good) / float64(total))
	if closing > 0 {
		return cs, fmt.Sprintf("%d good / %d turns with a request = %s (%d good closing remark(s) left out)", good, total, num(*cs.Score), closing)
	}
	return cs, fmt.Sprintf("%d good / %d turns = %s", good, total, num(*cs.Score))
}

// closingTurn: the user message has fewer than minIntentWords distinct content words and
// no interaction called a tool or handed off.
func closingTurn(tr *TurnResult) bool {
	toks := map[string]bool{}
	for _, tok := range text.Tokens(tr.UserMessage) {
		toks[tok] = true
	}
	if len(toks) >= minIntentWords {
		return false
	}
	for ii := range tr.Interactions {
		if len(tr.Interactions[ii].ToolCalls) > 0 || len(tr.Interactions[ii].Handoffs) > 0 {
			return false
		}
	}
	return true
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
	return best, fmt.Sprintf("max over %d turn(s) = %s (turn %d)", n, num(*best), turnNumber(at))
}

// issueDetail is the issue message without its "agent: " prefix.
func issueDetail(is ToolIssue) string {
	return strings.TrimPrefix(is.Message, agentLabel(is.AgentID)+": ")
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
