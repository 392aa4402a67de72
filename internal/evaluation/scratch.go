// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"sync"

	"github.com/agenteval/agenteval-collector/internal/reuse"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/toolschema"
)

// closedScratch is the working memory of one EvaluateClosedTurn: the two-turn view, the
// evaluation context with its memos (texts, decoded arguments, call renderings, the
// session's agents), and the sets and lists of the carries to the next turn. None of it
// is part of the returned record: the record's slices and maps are allocated for it, and
// the memos only hand out values (strings, and slices made by the text package that the
// memo entry does not own). So the scratch goes back to a pool once the record is made,
// cleared, and the next closed turn reuses its maps and slabs instead of allocating
// them again (docs/decisions/performance.md §8.27).
type closedScratch struct {
	view  session.AgentSession
	turns [2]session.Turn
	ctx   evalCtx
	args  argCache
	// seen is the set of the grounding facts carried (EvaluateClosedTurn).
	seen map[string]bool
	// fresh is the new facts or tokens of the turn before they are carried, texts the
	// texts whose tokens were carried.
	fresh, texts []string
	// convRoom is how many entries ctx.priorConversation holds without growing (at
	// least): the size it was made for, or the most it held.
	convRoom int
}

var closedScratchPool = sync.Pool{New: func() any { return new(closedScratch) }}

// poolScratch is false only in a test that compares records made with and without the
// pool: a new scratch each time, never cleared.
var poolScratch = true

// maxPooledEntries bounds the entries of a memo map or slab that goes back to the pool:
// a larger one (a turn of very many tool calls or texts) is dropped, so that the pool
// holds no more than the common turn needs.
const maxPooledEntries = 1024

// maxPooledConversation bounds the set of conversation tokens (evalCtx.priorConversation)
// that goes back to the pool. It holds the previous turn's carry, up to maxConversation
// tokens, and the turn's new ones: in a long session it is full at every turn, and a
// set dropped at 1,024 entries was made again from 64 each turn, growing six times
// (docs/decisions/performance.md §8.37).
const maxPooledConversation = 2 * maxConversation

// getClosedScratch returns a scratch whose context evaluates the view of the turns prior
// (when not nil) and t, with its memos empty.
func (e *Evaluator) getClosedScratch(sessionID string, agents []session.AgentDefinition, prior, t *session.Turn) *closedScratch {
	var sc *closedScratch
	if poolScratch {
		sc = closedScratchPool.Get().(*closedScratch)
	} else {
		sc = new(closedScratch)
	}
	sc.view = session.AgentSession{ID: sessionID, Agents: agents, Turns: sc.turns[:0]}
	if prior != nil {
		sc.view.Turns = append(sc.view.Turns, *prior)
	}
	sc.view.Turns = append(sc.view.Turns, *t)
	c := &sc.ctx
	calls := toolCalls(&sc.view)
	// The rest of c is as put left it: empty, with the memory it keeps.
	c.e, c.s, c.calls, c.args = e, &sc.view, calls, &sc.args
	if c.sessionAgents == nil {
		c.sessionAgents = make(map[string]bool, 2*len(agents))
	}
	if n := 16 + 2*calls; cap(c.memoSlab) < n && n <= maxPooledEntries {
		// A turn reads a few texts, then each call's rendering and result: a slab of
		// that size is kept with the scratch instead of a new one per 16 texts.
		c.memoSlab = make([]textMemo, 0, n)
	}
	if c.priorConversation == nil {
		c.priorConversation, sc.convRoom = make(map[string]bool, 64), 64
	}
	addSessionAgents(c.sessionAgents, &sc.view)
	if sc.args.args == nil {
		sc.args.args = make(map[*session.ToolCall]*decodedArgs, calls)
		sc.args.schemas = map[string]*toolschema.Schema{}
	}
	return sc
}

// put clears the scratch (it references no turn, text or result once back in the pool)
// and returns it to the pool.
func (sc *closedScratch) put() {
	if !poolScratch {
		return
	}
	c := &sc.ctx
	sc.convRoom = max(sc.convRoom, len(c.priorConversation))
	clear(sc.turns[:])
	sc.view = session.AgentSession{}
	*c = evalCtx{
		sessionAgents:     reuse.Map(c.sessionAgents, maxPooledEntries),
		textMemo:          reuse.Map(c.textMemo, maxPooledEntries),
		memoSlab:          reuse.Slice(c.memoSlab, maxPooledEntries),
		callTextMemo:      reuse.Map(c.callTextMemo, maxPooledEntries),
		priorConversation: reuse.Map(c.priorConversation, maxPooledConversation),
	}
	ac := &sc.args
	*ac = argCache{
		args:    reuse.Map(ac.args, maxPooledEntries),
		schemas: reuse.Map(ac.schemas, maxPooledEntries),
		slab:    reuse.Slice(ac.slab, maxPooledEntries),
	}
	if c.priorConversation == nil {
		sc.convRoom = 0
	}
	sc.seen = reuse.Map(sc.seen, maxPooledEntries)
	sc.fresh = reuse.Slice(sc.fresh, maxPooledEntries)
	sc.texts = reuse.Slice(sc.texts, maxPooledEntries)
	closedScratchPool.Put(sc)
}
