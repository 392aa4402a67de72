// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

func TestNoAnswerDetector(t *testing.T) {
	tests := []struct {
		name   string
		mod    func(*session.Turn)
		reason string // "" when no verdict
	}{
		{"answered", func(tu *session.Turn) { tu.FinalResponse = "Done."; tu.Status = session.StatusError }, ""},
		{"empty without error", func(*session.Turn) {}, ""},
		{"nothing captured", func(tu *session.Turn) {
			tu.UserMessage, tu.Interactions[0].Input, tu.Status = "", "", session.StatusError
		}, ""},
		{"turn error", func(tu *session.Turn) { tu.Status = session.StatusError }, "no final response: the turn ended with error status"},
		{"interaction error", func(tu *session.Turn) { tu.Interactions[0].Status = session.StatusError },
			"no final response: executor ended with error status"},
		{"cut short", func(tu *session.Turn) { tu.Partial = true }, "no final response: the turn was cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := turn(0, "Refund order #777", "", 10, interaction("executor", "Refund order #777", "", 10))
			tt.mod(&tu)
			c := newEval(t).newCtx(newSession("n", refundAgents(), tu))
			x := detectInput{followUpConf: -1}
			d := noAnswerDetector{}.detect(c, &x)
			if tt.reason == "" {
				assert.False(t, d.bad)
				assert.Empty(t, x.expl)
				return
			}
			assert.True(t, d.bad)
			assert.Equal(t, DetectionNoAnswer, d.typ)
			assert.Equal(t, tt.reason, d.reason)
			assert.InDelta(t, 1, d.conf, 0)
			assert.Len(t, x.expl, 1)
		})
	}
}
