// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"errors"
	"fmt"
	"os"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// ErrCostLimit is the error of a call skipped because its session's evaluation reached
// a cost limit (max_calls_per_session or max_tokens_per_session); the deterministic
// score stays, like any judge_error.
var ErrCostLimit = errors.New("judge: cost limit per session reached")

// ledgerSessions bounds the sessions whose spending a ledger remembers (the least
// recently charged are forgotten first).
const ledgerSessions = 4096

// spent is what one session's evaluation has cost so far.
type spent struct{ calls, tokens int }

// ledger counts the calls and estimated tokens spent on each session's evaluation and
// refuses the call that would pass a limit (0 = no limit). Never blocks.
type ledger struct {
	maxCalls, maxTokens int
	mu                  sync.Mutex
	sessions            *lru.Cache[string, spent]
}

func newLedger(maxCalls, maxTokens int) *ledger {
	l := &ledger{maxCalls: maxCalls, maxTokens: maxTokens}
	if maxCalls > 0 || maxTokens > 0 {
		l.sessions, _ = lru.New[string, spent](ledgerSessions) // size > 0: no error
	}
	return l
}

// spend charges one call of tokens (estimated) to session, or returns an error wrapping
// ErrCostLimit that names the limit, charging nothing. An empty session is not limited.
func (l *ledger) spend(session string, tokens int) error {
	if l.sessions == nil || session == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, _ := l.sessions.Get(session)
	switch {
	case l.maxCalls > 0 && s.calls+1 > l.maxCalls:
		return fmt.Errorf("%w: max_calls_per_session %d", ErrCostLimit, l.maxCalls)
	case l.maxTokens > 0 && s.tokens+tokens > l.maxTokens:
		return fmt.Errorf("%w: max_tokens_per_session %d (spent %d, this call ~%d)", ErrCostLimit, l.maxTokens, s.tokens, tokens)
	}
	l.sessions.Add(session, spent{calls: s.calls + 1, tokens: s.tokens + tokens})
	return nil
}

// estimateTokens estimates the tokens of texts as one per 4 bytes, rounded up (the
// usual rule of thumb for English with OpenAI tokenizers; a limit, not a bill).
func estimateTokens(texts ...string) int {
	n := 0
	for _, t := range texts {
		n += (len(t) + 3) / 4
	}
	return n
}

// EstimateTokens is estimateTokens for the judge's callers: the estimated prompt
// tokens of a chat call carrying texts.
func EstimateTokens(texts ...string) int { return estimateTokens(texts...) }

// lookupKey reads the API key from the environment variable env ("" when unset).
func lookupKey(env string) string { return os.Getenv(env) }
