// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker // import "github.com/agenteval/agenteval-collector/internal/tracker"

import "time"

// timeNode is an element of a timeList: a time and the value it belongs to. It is
// embedded in the value (an open trace, an open session), so that moving it costs no
// allocation.
type timeNode[T any] struct {
	prev, next *timeNode[T]
	at         time.Time
	v          T
}

// timeList orders values by a time that only moves forward in practice (the arrival
// time of a trace's or a session's last record, a session's creation), earliest first,
// so that a timer check reads only the front of the list, the values that may be due,
// instead of every open trace and session (docs/decisions/performance.md §8.34). A time
// set earlier than the last one's (a clock that went back, two batches taking the lock
// out of their order) is placed by walking back from the end: the order is exact
// whatever the times.
type timeList[T any] struct {
	front, back *timeNode[T]
}

// set moves n (in the list or not) to its place for time at.
func (l *timeList[T]) set(n *timeNode[T], at time.Time) {
	if (n.prev != nil || l.front == n) && (n.prev == nil || !n.prev.at.After(at)) &&
		(n.next == nil || n.next.at.After(at)) {
		// In the list and staying where a reinsertion would put it (most often last: the
		// trace or session of the previous record; also a batch that took the lock after
		// a later one, whose first record moved the node back): no link moves.
		n.at = at
		return
	}
	l.remove(n)
	n.at = at
	p := l.back
	for p != nil && p.at.After(at) {
		p = p.prev
	}
	// Insert after p (at the front when p is nil).
	n.prev = p
	if p == nil {
		n.next = l.front
		l.front = n
	} else {
		n.next = p.next
		p.next = n
	}
	if n.next == nil {
		l.back = n
	} else {
		n.next.prev = n
	}
}

// remove takes n out of the list; it does nothing when n is not in it.
func (l *timeList[T]) remove(n *timeNode[T]) {
	if n.prev == nil && l.front != n {
		return
	}
	if n.prev == nil {
		l.front = n.next
	} else {
		n.prev.next = n.next
	}
	if n.next == nil {
		l.back = n.prev
	} else {
		n.next.prev = n.prev
	}
	n.prev, n.next = nil, nil
}

// until returns the values whose time is at least d before now, earliest first,
// appended to out.
func (l *timeList[T]) until(now time.Time, d time.Duration, out []T) []T {
	for n := l.front; n != nil && now.Sub(n.at) >= d; n = n.next {
		out = append(out, n.v)
	}
	return out
}
