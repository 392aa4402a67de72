// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package lograte lets a repeated log line through at most once per interval: for
// warnings about conditions that can recur for every span or session (a limit closing
// sessions, evaluation spans decoded without some of their turns).
package lograte // import "github.com/agenteval/agenteval-collector/internal/lograte"

import (
	"sync"
	"time"
)

// Every lets one line through per interval and counts the lines it held back in between.
// It is safe for concurrent use; the zero value is not usable (New).
type Every struct {
	interval time.Duration
	mu       sync.Mutex
	last     time.Time // when a line was last let through; zero before the first
	held     int
}

// New returns an Every that lets a line through at most once per interval.
func New(interval time.Duration) *Every { return &Every{interval: interval} }

// Allow reports whether a line at now is let through (the first one always is, then one
// at least interval after the last let through), and, when it is, how many lines were
// held back since the last one let through.
func (e *Every) Allow(now time.Time) (ok bool, held int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.last.IsZero() && now.Sub(e.last) < e.interval {
		e.held++
		return false, 0
	}
	held, e.held, e.last = e.held, 0, now
	return true, held
}
