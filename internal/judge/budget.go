// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"sync"
	"time"
)

// budget is a token bucket of perMinute calls, refilled continuously; never blocks.
// perMinute 0 = unlimited.
type budget struct {
	mu        sync.Mutex
	perMinute int
	tokens    float64
	last      time.Time
	now       func() time.Time
}

func newBudget(perMinute int, now func() time.Time) *budget {
	return &budget{perMinute: perMinute, tokens: float64(perMinute), now: now}
}

// refund gives back a call allowed and then not sent.
func (b *budget) refund() {
	if b.perMinute <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = min(float64(b.perMinute), b.tokens+1)
}

func (b *budget) allow() bool {
	if b.perMinute <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.now()
	if !b.last.IsZero() {
		b.tokens = min(float64(b.perMinute), b.tokens+t.Sub(b.last).Minutes()*float64(b.perMinute))
	}
	b.last = t
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
