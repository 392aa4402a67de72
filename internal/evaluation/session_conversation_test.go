// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestConversation: conversation_score = good / total over the turns with a request; a
// good closing remark ("Thanks!", no action) and a turn without captured text (content
// capture off: nothing was judged) are counted but left out of the score, a bad one is not
// (docs/scoring.md §6.2); with nothing judged the score is null, not 1 (DESIGN §5).
func TestConversation(t *testing.T) {
	good := TurnResult{UserMessage: "Refund order 12345 please"}
	closing := TurnResult{UserMessage: "Thanks!"}
	badClosing := TurnResult{UserMessage: "Thanks!", IsBad: true, DetectionType: DetectionHallucination}
	ccm := TurnResult{UserMessage: "Where is my parcel?", IsBad: true, DetectionType: DetectionCCM}
	uncaptured := TurnResult{NotEvaluable: []string{ReasonContentNotCaptured}}
	tests := []struct {
		name        string
		turns       []TurnResult
		want        float64
		total, good int
		expl        string
	}{
		{"no turns", nil, null, 0, 0, "null: no turns"},
		{"one good", []TurnResult{good}, 1, 1, 1, "1 good / 1 turns = 1"},
		{"good and re-asked", []TurnResult{good, ccm}, 0.5, 2, 1, "1 good / 2 turns = 0.5"},
		{"closing remark left out", []TurnResult{good, ccm, closing}, 0.5, 3, 2,
			"1 good / 2 turns with a request = 0.5 (1 good closing remark(s) left out)"},
		{"only closing remarks", []TurnResult{closing, closing}, 1, 2, 2, "1: all 2 turn(s) are good closing remarks"},
		{"a bad closing remark counts", []TurnResult{good, badClosing}, 0.5, 2, 1, "1 good / 2 turns = 0.5"},
		{"nothing captured", []TurnResult{uncaptured, uncaptured}, null, 2, 2, "null: none of the 2 turn(s) was judged (text not captured, or cut by the collector)"},
		{"uncaptured turn left out", []TurnResult{good, ccm, uncaptured}, 0.5, 3, 2,
			"1 good / 2 turns with a request = 0.5 (1 unjudged turn(s) (text not captured, or cut by the collector) left out)"},
		{"closing remark and uncaptured turn", []TurnResult{closing, uncaptured}, 1, 2, 2,
			"1: the 1 judged turn(s) are good closing remarks (1 unjudged turn(s) left out: text not captured, or cut by the collector)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, expl := conversation(tt.turns)
			score(t, "conversation", tt.want, cs.Score)
			assert.Equal(t, tt.total, cs.TotalResponses)
			assert.Equal(t, tt.good, cs.GoodResponses)
			assert.Equal(t, tt.total-tt.good, cs.BadResponses)
			assert.Equal(t, tt.expl, expl)
		})
	}
	cs, _ := conversation([]TurnResult{ccm, badClosing})
	assert.Equal(t, 1, cs.CCMDetections)
	assert.Equal(t, 1, cs.HallucinationDetections)
}
