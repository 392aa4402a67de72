// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package reuse empties working memory before it goes back to a sync.Pool: the one
// rule the processor's pooled scratches (tracker decode, assembly, closed-turn
// evaluation, a shard's saves) share, so that a pooled value pins nothing of the turn
// that used it and a rare huge turn does not keep its arrays in the pool
// (docs/decisions/performance.md §8.27).
package reuse // import "github.com/agenteval/agenteval-collector/internal/reuse"

// Slice returns s with length 0 and every element of its capacity set to the zero value
// (so a later s[:n] reads zeros and no pointer of the old elements stays reachable), or
// nil when cap(s) > limit: the caller allocates again, at the size it needs.
func Slice[T any](s []T, limit int) []T {
	if cap(s) > limit {
		return nil
	}
	clear(s[:cap(s)])
	return s[:0]
}

// Map returns m emptied, or nil when it holds more than limit entries (a map keeps the
// buckets of its largest size once cleared).
func Map[K comparable, V any](m map[K]V, limit int) map[K]V {
	if len(m) > limit {
		return nil
	}
	clear(m)
	return m
}
