// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/text"
)

// conversation counts the turn verdicts (docs/scoring.md §6.2). score = good / total over
// the turns that carry a request and were judged: a good turn whose user message states no
// task (fewer than minIntentWords content words, e.g. "Thanks!", "ok") and whose agents
// took no action is a closing remark, not a response to score, and a good turn without
// captured text (ReasonContentNotCaptured: content capture off) or cut by the collector
// (ReasonCutByCollector) was never judged; both are left out of the score (they stay in
// the counters). A bad turn always counts. The
// score is null when no turn is left (DESIGN §5: never a silent 1.0).
func conversation(trs []TurnResult) (ConversationSummary, string) {
	var cs ConversationSummary
	closing, unjudged := 0, 0
	for i, tr := range trs {
		cs.TotalResponses++
		if !tr.IsBad {
			cs.GoodResponses++
			switch {
			case len(tr.NotEvaluable) > 0: // no text captured, or cut by the collector
				unjudged++
			case closingTurn(&trs[i]):
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
	if unjudged == cs.TotalResponses {
		return cs, fmt.Sprintf("null: none of the %d turn(s) was judged (%s)", unjudged, unjudgedWhy)
	}
	if closing+unjudged == cs.TotalResponses {
		cs.Score = ptr(1.0)
		if unjudged > 0 {
			return cs, fmt.Sprintf("1: the %d judged turn(s) are good closing remarks (%d unjudged turn(s) left out: %s)", closing, unjudged, unjudgedWhy)
		}
		return cs, fmt.Sprintf("1: all %d turn(s) are good closing remarks", closing)
	}
	good, total := cs.GoodResponses-closing-unjudged, cs.TotalResponses-closing-unjudged
	cs.Score = ptr(float64(good) / float64(total))
	var left []string
	if closing > 0 {
		left = append(left, fmt.Sprintf("%d good closing remark(s)", closing))
	}
	if unjudged > 0 {
		left = append(left, fmt.Sprintf("%d unjudged turn(s) (%s)", unjudged, unjudgedWhy))
	}
	if len(left) > 0 {
		return cs, fmt.Sprintf("%d good / %d turns with a request = %s (%s left out)", good, total, num(*cs.Score), strings.Join(left, " and "))
	}
	return cs, fmt.Sprintf("%d good / %d turns = %s", good, total, num(*cs.Score))
}

// closingTurn: the user message has fewer than minIntentWords distinct content words and
// no interaction called a tool or handed off.
func closingTurn(tr *TurnResult) bool {
	if statesRequest(tr.UserMessage) {
		return false
	}
	for ii := range tr.Interactions {
		if len(tr.Interactions[ii].ToolCalls) > 0 || len(tr.Interactions[ii].Handoffs) > 0 {
			return false
		}
	}
	return true
}

// statesRequest: msg has at least minIntentWords distinct content words (text.Tokens), so
// it asks for something; "Thanks!" and "ok" do not.
func statesRequest(msg string) bool {
	toks := make(map[string]struct{}, minIntentWords)
	for _, tok := range text.Tokens(msg) {
		toks[tok] = struct{}{}
		if len(toks) >= minIntentWords {
			return true
		}
	}
	return false
}

// unjudgedWhy says why a turn left out of conversation_score as unjudged was not judged.
const unjudgedWhy = "text not captured, or cut by the collector"

// sessionConversation sets the conversation summary and conversation_score.
type sessionConversation struct{}

var _ sessionEvaluator = sessionConversation{}

func (sessionConversation) evaluate(_ *Evaluator, _ sessionInput, a *Analysis) {
	a.Conversation, a.Explanations[keyConversationScore] = conversation(a.TurnResults)
}
