// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan // import "github.com/agenteval/agenteval-collector/internal/evalspan"

import (
	"unicode/utf8"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// SummaryUserMessageBytes caps the user message a turn summary carries, in bytes: the
// live UI's turn event shows 280 bytes of it (internal/webui), and four more bytes
// (one rune) keep its "…" where the whole message would put it.
const SummaryUserMessageBytes = 284

// TurnSummary returns the part of tr that a turn span carries (docs/architecture.md §6):
// what the exporter's per-turn metrics, console line and live events read, and the
// ids and scores of the turn, its interactions and tool calls. The texts and
// explanations (the final response, the user message past SummaryUserMessageBytes, the
// score explanations, the issue messages, the handoff payloads) are left out: the
// session span's analysis carries the complete TurnResult once, and the store keeps it
// from there. A final verdict (tr.Final) carries no interactions: they were sent with
// the turn's first (provisional) span and do not change. tr is not modified.
func TurnSummary(tr *evaluation.TurnResult) evaluation.TurnResult {
	s := *tr
	s.FinalResponse = ""
	s.Explanations = nil
	s.UserMessage = cutRunes(s.UserMessage, SummaryUserMessageBytes)
	if s.Final {
		s.Interactions = nil
		return s
	}
	if tr.Interactions == nil {
		return s
	}
	s.Interactions = make([]evaluation.InteractionResult, len(tr.Interactions))
	for i := range tr.Interactions {
		ir := tr.Interactions[i]
		ir.Explanations = nil
		if ir.Handoffs != nil {
			hs := make([]session.Handoff, len(ir.Handoffs))
			copy(hs, ir.Handoffs)
			for j := range hs {
				hs[j].Payload = ""
			}
			ir.Handoffs = hs
		}
		if ir.ToolCalls != nil {
			tcs := make([]evaluation.ToolCallResult, len(ir.ToolCalls))
			for j, tc := range ir.ToolCalls {
				tc.Explanation = ""
				if tc.Issues != nil {
					is := make([]evaluation.ToolIssue, len(tc.Issues))
					copy(is, tc.Issues)
					for k := range is {
						is[k].Message = ""
					}
					tc.Issues = is
				}
				tcs[j] = tc
			}
			ir.ToolCalls = tcs
		}
		s.Interactions[i] = ir
	}
	return s
}

// cutRunes returns s cut to at most n bytes on a rune boundary, with no ellipsis.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
