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

// ledgerSessions bounds the sessions whose spending a Ledger remembers (the least
// recently charged are forgotten first).
const ledgerSessions = 4096

// spent is what one session's evaluation has cost so far (reserved included).
type spent struct{ calls, tokens int }

// Ledger counts the calls and estimated tokens spent on each session's evaluation, keyed
// by session id, and refuses the call (or reservation) that would pass a limit (0 = no
// limit). It is safe for concurrent use and never blocks on I/O. It remembers the 4096
// most recently charged sessions: a session forgotten under that load starts afresh.
type Ledger struct {
	maxCalls, maxTokens int
	mu                  sync.Mutex
	sessions            *lru.Cache[string, spent]
}

// NewLedger returns a Ledger holding each session to maxCalls calls and maxTokens
// estimated tokens (0 = no limit; with neither, it charges nothing and refuses nothing).
func NewLedger(maxCalls, maxTokens int) *Ledger {
	l := &Ledger{maxCalls: maxCalls, maxTokens: maxTokens}
	if maxCalls > 0 || maxTokens > 0 {
		l.sessions, _ = lru.New[string, spent](ledgerSessions) // size > 0: no error
	}
	return l
}

// Spend charges one call of tokens (estimated) to session, or returns an error wrapping
// ErrCostLimit that names the limit, charging nothing. An empty session is not limited.
func (l *Ledger) Spend(session string, tokens int) error {
	if l.sessions == nil || session == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.chargeLocked(session, 1, tokens)
}

// chargeLocked adds calls and tokens to session's spending, or returns the error
// (wrapping ErrCostLimit) naming the limit they would pass, charging nothing.
func (l *Ledger) chargeLocked(session string, calls, tokens int) error {
	s, _ := l.sessions.Get(session)
	switch {
	case l.maxCalls > 0 && calls > 0 && s.calls+calls > l.maxCalls:
		return fmt.Errorf("%w: max_calls_per_session %d (spent %d, this needs %d)", ErrCostLimit, l.maxCalls, s.calls, calls)
	case l.maxTokens > 0 && tokens > 0 && s.tokens+tokens > l.maxTokens:
		return fmt.Errorf("%w: max_tokens_per_session %d (spent ~%d, this needs ~%d)", ErrCostLimit, l.maxTokens, s.tokens, tokens)
	}
	l.sessions.Add(session, spent{calls: s.calls + calls, tokens: s.tokens + tokens})
	return nil
}

// Reservation is spending set aside on a Ledger for one session's planned calls: all of
// it or none (Reserve). Its calls are charged by Spend; Release gives back what was
// reserved and not used. Not for concurrent use.
type Reservation struct {
	l             *Ledger
	session       string
	calls, tokens int // reserved and not yet used
}

// Reserve sets aside calls calls and tokens estimated tokens for session, all at once,
// or returns an error wrapping ErrCostLimit that names the limit, reserving nothing.
// The reservation counts as spent for every other charge of the session until released.
func (l *Ledger) Reserve(session string, calls, tokens int) (*Reservation, error) {
	r := &Reservation{l: l, session: session}
	if l.sessions == nil || session == "" {
		return r, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.chargeLocked(session, calls, tokens); err != nil {
		return r, err
	}
	r.calls, r.tokens = calls, tokens
	return r, nil
}

// Spend charges one call of tokens (estimated) against the reservation. A call beyond
// the reserved calls, or tokens beyond those left, draws the excess from the ledger,
// and fails (an error wrapping ErrCostLimit, charging nothing) when that would pass a
// limit.
func (r *Reservation) Spend(tokens int) error {
	l := r.l
	if l.sessions == nil || r.session == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	extraCalls, extraTokens := 0, max(0, tokens-r.tokens)
	if r.calls == 0 {
		extraCalls = 1
	}
	if extraCalls > 0 || extraTokens > 0 {
		if err := l.chargeLocked(r.session, extraCalls, extraTokens); err != nil {
			return err
		}
	}
	r.calls, r.tokens = max(0, r.calls-1), max(0, r.tokens-tokens)
	return nil
}

// Release gives the reserved calls and tokens not used back to the ledger; the
// reservation is empty afterwards. Releasing twice is harmless.
func (r *Reservation) Release() {
	l := r.l
	if l.sessions == nil || r.session == "" || (r.calls == 0 && r.tokens == 0) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.sessions.Get(r.session); ok { // forgotten meanwhile: nothing to give back
		l.sessions.Add(r.session, spent{calls: max(0, s.calls-r.calls), tokens: max(0, s.tokens-r.tokens)})
	}
	r.calls, r.tokens = 0, 0
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
