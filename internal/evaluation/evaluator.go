// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"sort"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/toolschema"
)

// Evaluator computes the deterministic scores of docs/scoring.md §3–§6. It is safe for
// concurrent use: its only mutable state is the bounded cache of compiled tool
// schemas.
type Evaluator struct {
	cfg     Config
	schemas *toolschema.Cache
}

// New returns an Evaluator for cfg, or the error of cfg.Validate.
func New(cfg Config) (*Evaluator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sc, err := toolschema.NewCache(cfg.SchemaCacheSize)
	if err != nil {
		return nil, fmt.Errorf("scoring.schema_cache_size: %w", err)
	}
	return &Evaluator{cfg: cfg, schemas: sc}, nil
}

// Config returns the evaluator's configuration.
func (e *Evaluator) Config() Config { return e.cfg }

// evalCtx holds what several evaluators of one session share: the session's agents
// and the names the reasoning evaluator looks for.
type evalCtx struct {
	e             *Evaluator
	s             *session.AgentSession
	sessionAgents map[string]bool
	// names and canon: every known tool and agent name, and the entity each stands
	// for ("tool:<name>" or "agent:<id>"); handoff tools stand for their target agent.
	// Built on first use (nameIndex): only the reasoning evaluator reads them.
	names []string
	canon map[string]string
	// agentNames maps an agent id to its own names (excluded from its reasoning).
	agentNames map[string][]string
	// sources are the grounding texts of each turn (built lazily).
	sources [][]string
	// args memoises decoded tool arguments.
	args *argCache
	// convFirst maps each token of turns 0..convTurns−1 to the first turn it occurs in
	// (intent drift context), built lazily.
	convFirst map[string]int
	convTurns int
	// priorConversation holds the conversation tokens of the turns before this view
	// (TurnRecord.Conversation of the previous turn, when a turn is evaluated alone).
	priorConversation map[string]bool
	// prev is the previous turn's result when a turn is evaluated alone
	// (EvaluateClosedTurn's prev): intent drift reads what it answered and called.
	prev *TurnResult
	// candidateMemo memoises candidates per agent.
	candidateMemo map[string][]string
	// result and detecting are the turn being evaluated and its detection's state: the
	// turn evaluators and detectors get pointers into them, which then cost no
	// allocation (a pointer to a local passed through an interface escapes).
	result    TurnResult
	detecting detectInput
	// textMemo memoises text.SalientFacts, text.NewIndex and text.Tokens per text, and
	// callTextMemo toolCallText per call (memo.go), made on first use.
	textMemo     map[string]*textMemo
	calls        int // the view's tool calls (toolCalls): the memos are sized by them
	memoSlab     []textMemo
	callTextMemo map[*session.ToolCall]string
	// handoffCtx is the handoff context reached in the turn being scored (handoffContext).
	handoffCtx handoffCtx
	// runs is receiverRuns' buffer, reused handoff by handoff (neededFacts).
	runs []int
}

func (e *Evaluator) newCtx(s *session.AgentSession) *evalCtx {
	calls := toolCalls(s)
	return &evalCtx{e: e, s: s, sessionAgents: sessionAgentSet(s), args: newArgCache(calls), calls: calls}
}

// toolCalls counts the tool calls of the view, so that the argument memo is made at its
// size instead of growing.
func toolCalls(s *session.AgentSession) int {
	n := 0
	if s == nil {
		return n
	}
	for ti := range s.Turns {
		for ii := range s.Turns[ti].Interactions {
			for si := range s.Turns[ti].Interactions[ii].Steps {
				if s.Turns[ti].Interactions[ii].Steps[si].ToolCall != nil {
					n++
				}
			}
		}
	}
	return n
}

// nameIndex builds names, canon and agentNames once.
func (c *evalCtx) nameIndex() {
	if c.canon != nil {
		return
	}
	s := c.s
	c.canon, c.agentNames, c.candidateMemo = map[string]string{}, map[string][]string{}, map[string][]string{}
	addName := func(name, entity string) {
		if name == "" {
			return
		}
		if _, ok := c.canon[name]; !ok {
			c.canon[name] = entity
			c.names = append(c.names, name)
		}
	}
	agentEntity := func(id string) string { return "agent:" + session.AgentKey(id) }
	for _, a := range s.Agents {
		addName(a.ID, agentEntity(a.ID))
		addName(a.Name, agentEntity(a.ID))
		c.agentNames[a.ID] = append(c.agentNames[a.ID], a.ID)
		if a.Name != "" {
			c.agentNames[a.ID] = append(c.agentNames[a.ID], a.Name)
		}
	}
	toolEntity := func(call *session.ToolCall) string {
		if t, ok := c.args.handoffTarget(call); ok {
			return agentEntity(t)
		}
		return "tool:" + call.ToolName
	}
	for _, a := range s.Agents {
		for _, t := range a.Tools {
			if _, ok := c.canon[t.Name]; !ok {
				addName(t.Name, toolEntity(&session.ToolCall{ToolName: t.Name}))
			}
		}
	}
	for ti := range s.Turns {
		for ii := range s.Turns[ti].Interactions {
			in := &s.Turns[ti].Interactions[ii]
			addName(in.AgentID, agentEntity(in.AgentID))
			if len(c.agentNames[in.AgentID]) == 0 {
				c.agentNames[in.AgentID] = []string{in.AgentID}
			}
			for si := range in.Steps {
				if tc := in.Steps[si].ToolCall; tc != nil {
					if _, ok := c.canon[tc.ToolName]; !ok {
						addName(tc.ToolName, toolEntity(tc))
					}
				}
			}
		}
	}
	sort.Strings(c.names)
}

// EvaluateTurn evaluates turn turnIndex (docs/scoring.md §4, §5.3). final is true when the
// turn's follow-up is known: the next turn exists (CCM and RDM are then checked) or the
// session has ended (the last turn is judged without follow-up: hallucination only).
// With final=false only hallucination can be detected and TurnResult.Final is false.
func (e *Evaluator) EvaluateTurn(s *session.AgentSession, turnIndex int, final bool) TurnResult {
	if s == nil || turnIndex < 0 || turnIndex >= len(s.Turns) {
		return TurnResult{TurnIndex: turnIndex, DetectionType: DetectionNone, Interactions: []InteractionResult{},
			Explanations: map[string]string{"detection": "no such turn"}}
	}
	tr := e.newCtx(s).turn(turnIndex, final)
	tr.roundScores()
	return tr
}
