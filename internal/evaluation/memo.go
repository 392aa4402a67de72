// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// The text analysis of one evaluation (evalCtx) is memoised per distinct text: the same
// user message, final response, tool call and tool result are read by the grounding of
// the final response, the grounding facts carried to the next turn, the handoff coverage,
// the intent drift and the conversation carried to the next turn. The primitives are pure
// functions of the text, so a memo changes no result; the memos live as long as the
// evalCtx (one turn, or one EvaluateTurn call). The slices returned are shared: callers
// only read them.

// textMemo is what one evaluation knows of a text: its salient facts, its fact index and
// its tokens, each made on first need.
type textMemo struct {
	facts     []text.Fact
	hasFacts  bool
	index     *text.Index
	tokens    []string
	hasTokens bool
}

func (c *evalCtx) memo(s string) *textMemo {
	if m, ok := c.textMemo[s]; ok {
		return m
	}
	if c.textMemo == nil {
		// About the distinct texts: a few per turn, and the tool results (many repeat).
		c.textMemo = make(map[string]*textMemo, 8+c.calls)
	}
	if len(c.memoSlab) == cap(c.memoSlab) {
		// The entries are allocated 16 at a time; a full slab is left to its entries.
		c.memoSlab = make([]textMemo, 0, 16)
	}
	c.memoSlab = append(c.memoSlab, textMemo{})
	m := &c.memoSlab[len(c.memoSlab)-1]
	c.textMemo[s] = m
	return m
}

// salient returns text.SalientFacts(s), computed once per evaluation.
func (c *evalCtx) salient(s string) []text.Fact {
	m := c.memo(s)
	if !m.hasFacts {
		m.facts, m.hasFacts = text.SalientFacts(s), true
	}
	return m.facts
}

// source returns the facts and the index of a text that is a source of facts and is
// looked up in (a user message, a tool result, a handoff payload: the handoff coverage
// reads its facts, the grounding looks facts up in it), both from one lexing
// (text.Analyze) unless one of them is known already.
func (c *evalCtx) source(s string) *textMemo {
	m := c.memo(s)
	switch {
	case m.hasFacts && m.index != nil:
	case m.hasFacts:
		m.index = text.NewIndex(s)
	case m.index != nil:
		m.facts, m.hasFacts = text.SalientFacts(s), true
	default:
		m.facts, m.index = text.Analyze(s)
		m.hasFacts = true
	}
	return m
}

// tokens returns text.Tokens(s), computed once per evaluation.
func (c *evalCtx) tokens(s string) []string {
	m := c.memo(s)
	if !m.hasTokens {
		m.tokens, m.hasTokens = text.Tokens(s), true
	}
	return m.tokens
}

// callText returns toolCallText of the call with its decoded arguments, rendered once
// per evaluation.
func (c *evalCtx) callText(tc *session.ToolCall) string {
	if c.callTextMemo == nil {
		c.callTextMemo = make(map[*session.ToolCall]string, c.calls)
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
	m := c.memo(s)
	if m.index == nil {
		m.index = text.NewIndex(s)
	}
	return m.index
}

// indexes returns the index of each text (index).
func (c *evalCtx) indexes(texts []string) []*text.Index {
	out := make([]*text.Index, len(texts))
	for i, s := range texts {
		out[i] = c.index(s)
	}
	return out
}

// sourceIndexes returns the index of each text, made with its facts (source).
func (c *evalCtx) sourceIndexes(texts []string) []*text.Index {
	out := make([]*text.Index, len(texts))
	for i, s := range texts {
		out[i] = c.source(s).index
	}
	return out
}
