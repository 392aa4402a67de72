// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan // import "github.com/agenteval/agenteval-collector/internal/evalspan"

import (
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// SummaryUserMessageBytes caps the user message a turn summary carries, in bytes: the
// live UI's turn event shows 280 bytes of it (internal/webui), and four more bytes
// (one rune) keep its "…" where the whole message would put it.
const SummaryUserMessageBytes = 284

// TurnSummary returns the part of tr that a turn span carries (docs/architecture.md §6):
// the turn's ids, verdict, scores, latency and usage, and per interaction its agent,
// scores, latency and handoffs (from, to), per tool call its tool, agent, score,
// verdict, latency, issues (kind, severity, parameter) and not-evaluable reasons: what
// the exporter's per-turn metrics, console line and live events read (the console
// names an issue TYPE(tool.parameter), its tool that of the enclosing call). The texts
// and explanations (the final response, the user message past SummaryUserMessageBytes,
// the score explanations, the issue messages, the handoff payloads), the turn's start
// (the API's conversation order) and the per-call and per-issue ids and statuses (an
// issue's tool, agent, turn and span are its call's) are left out: the session span's
// analysis carries the complete TurnResult once, and the store keeps it from there. A
// final verdict (tr.Final) carries no interactions: they were sent with the turn's first
// (provisional) span and do not change. tr is not modified.
func TurnSummary(tr *evaluation.TurnResult) evaluation.TurnResult {
	var b summaryBuffer
	return *b.summary(tr)
}

// EncodeTurnSummary writes TurnSummary(tr) as Signer.EncodeTurn does and returns its
// signature: the same attributes and the same signature, but the summary is built in
// pooled working memory (summaryBuffer) instead of a copy of tr's interactions and
// calls allocated for each turn span and dropped once it is encoded. tr is not
// modified, and m holds nothing of that memory (the encode copies every value into m;
// the strings it shares with tr are immutable).
func (s *Signer) EncodeTurnSummary(m pcommon.Map, tr *evaluation.TurnResult) Signature {
	b := summaryPool.Get().(*summaryBuffer)
	sig := s.EncodeTurn(m, b.summary(tr))
	b.release()
	return sig
}

// summaryBuffer is the memory of one turn summary at a time: the summary itself and
// one array each for its interactions, tool calls, handoffs and issues, each summary's
// lists cut from them (docs/decisions/performance.md §8.37).
type summaryBuffer struct {
	tr       evaluation.TurnResult
	irs      []evaluation.InteractionResult
	calls    []evaluation.ToolCallResult
	handoffs []session.Handoff
	issues   []evaluation.ToolIssue
}

var summaryPool = sync.Pool{New: func() any { return new(summaryBuffer) }}

// maxPooledSummary bounds the entries of a summaryBuffer array kept in the pool: a turn
// of more calls is summarised in arrays of its own, dropped after it.
const maxPooledSummary = 256

// summary writes tr's summary (TurnSummary) into b and returns it; it is valid until
// b's next summary or release. A list that tr holds empty but not nil is empty and not
// nil in the summary too (the encoding tells the two apart).
func (b *summaryBuffer) summary(tr *evaluation.TurnResult) *evaluation.TurnResult {
	b.tr = *tr
	s := &b.tr
	s.FinalResponse = ""
	s.Explanations = nil
	s.StartedAt = time.Time{}
	s.UserMessage = text.Cut(s.UserMessage, SummaryUserMessageBytes)
	if s.Final {
		s.Interactions = nil
		return s
	}
	if tr.Interactions == nil {
		return s
	}
	var calls, handoffs, issues int
	for i := range tr.Interactions {
		ir := &tr.Interactions[i]
		calls += len(ir.ToolCalls)
		handoffs += len(ir.Handoffs)
		for j := range ir.ToolCalls {
			issues += len(ir.ToolCalls[j].Issues)
		}
	}
	b.irs = slices.Grow(b.irs[:0], len(tr.Interactions))
	b.calls = slices.Grow(b.calls[:0], calls)
	b.handoffs = slices.Grow(b.handoffs[:0], handoffs)
	b.issues = slices.Grow(b.issues[:0], issues)
	s.Interactions = take(&b.irs, len(tr.Interactions))
	for i := range tr.Interactions {
		ir := &tr.Interactions[i]
		out := &s.Interactions[i]
		*out = evaluation.InteractionResult{
			AgentID: ir.AgentID, Score: ir.Score, ToolUse: ir.ToolUse, Reasoning: ir.Reasoning,
			Handoff: ir.Handoff, ResponseQuality: ir.ResponseQuality, LatencyMs: ir.LatencyMs,
		}
		if ir.Handoffs != nil {
			out.Handoffs = take(&b.handoffs, len(ir.Handoffs))
			for j, h := range ir.Handoffs {
				out.Handoffs[j] = session.Handoff{FromAgent: h.FromAgent, ToAgent: h.ToAgent}
			}
		}
		if ir.ToolCalls != nil {
			out.ToolCalls = take(&b.calls, len(ir.ToolCalls))
			for j := range ir.ToolCalls {
				tc := &ir.ToolCalls[j]
				c := &out.ToolCalls[j]
				*c = evaluation.ToolCallResult{
					ToolName: tc.ToolName, AgentID: tc.AgentID, Score: tc.Score, Verdict: tc.Verdict,
					NotEvaluable: tc.NotEvaluable, LatencyMs: tc.LatencyMs,
				}
				if tc.Issues != nil {
					c.Issues = take(&b.issues, len(tc.Issues))
					for k, is := range tc.Issues {
						c.Issues[k] = evaluation.ToolIssue{Issue: is.Issue, Severity: is.Severity, Parameter: is.Parameter}
					}
				}
			}
		}
	}
	return s
}

// take cuts the next n entries from *s (room made by slices.Grow) as a list of its own:
// full capacity n, so an append to it cannot reach the next list; empty and not nil for
// n 0.
func take[T any](s *[]T, n int) []T {
	if n == 0 {
		return []T{}
	}
	l := len(*s)
	*s = (*s)[:l+n]
	return (*s)[l : l+n : l+n]
}

// release clears what b's last summary used (so that the pool pins no turn's strings)
// and returns b to the pool, or drops it when an array grew past maxPooledSummary.
func (b *summaryBuffer) release() {
	b.tr = evaluation.TurnResult{}
	if cap(b.irs) > maxPooledSummary || cap(b.calls) > maxPooledSummary ||
		cap(b.handoffs) > maxPooledSummary || cap(b.issues) > maxPooledSummary {
		return
	}
	// Each array is cleared up to what the last summary used: what earlier summaries
	// wrote past it was cleared by their own release.
	clear(b.irs)
	clear(b.calls)
	clear(b.handoffs)
	clear(b.issues)
	b.irs, b.calls, b.handoffs, b.issues = b.irs[:0], b.calls[:0], b.handoffs[:0], b.issues[:0]
	summaryPool.Put(b)
}
