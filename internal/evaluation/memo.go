// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// The text analysis of one evaluation (evalCtx) is memoised per distinct text: the same
// user message, final response, tool call and tool result are read (and indexed) by the grounding of
// the final response, the grounding facts carried to the next turn, the handoff coverage,
// the intent drift and the conversation carried to the next turn. The primitives are pure
// functions of the text, so a memo changes no result; the memos live as long as the
// evalCtx (one turn, or one EvaluateTurn call). The slices returned are shared: callers
// only read them.

// salient returns text.SalientFacts(s), computed once per evaluation.
func (c *evalCtx) salient(s string) []text.Fact {
	if fs, ok := c.factMemo[s]; ok {
		return fs
	}
	fs := text.SalientFacts(s)
	c.factMemo[s] = fs
	return fs
}

// tokens returns text.Tokens(s), computed once per evaluation.
func (c *evalCtx) tokens(s string) []string {
	if c.tokenMemo == nil {
		c.tokenMemo = map[string][]string{}
	}
	if ts, ok := c.tokenMemo[s]; ok {
		return ts
	}
	ts := text.Tokens(s)
	c.tokenMemo[s] = ts
	return ts
}

// callText returns toolCallText of the call with its decoded arguments, rendered once
// per evaluation.
func (c *evalCtx) callText(tc *session.ToolCall) string {
	if c.callTextMemo == nil {
		c.callTextMemo = map[*session.ToolCall]string{}
	}
	if s, ok := c.callTextMemo[tc]; ok {
		return s
	}
	s := toolCallText(tc, c.args.get(tc).args)
	c.callTextMemo[tc] = s
	return s
}

// index returns text.NewIndex(s), built once per evaluation: the sources of a final
// response are grounded in up to three widening sets (detect_hallucination.go ungrounded)
// and a handoff payload is also a source.
func (c *evalCtx) index(s string) *text.Index {
	if c.indexMemo == nil {
		c.indexMemo = map[string]*text.Index{}
	}
	if ix, ok := c.indexMemo[s]; ok {
		return ix
	}
	ix := text.NewIndex(s)
	c.indexMemo[s] = ix
	return ix
}

// indexes returns the index of each text (index).
func (c *evalCtx) indexes(texts []string) []*text.Index {
	out := make([]*text.Index, len(texts))
	for i, s := range texts {
		out[i] = c.index(s)
	}
	return out
}
