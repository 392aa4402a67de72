// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker // import "github.com/agenteval/agenteval-collector/internal/tracker"

import (
	"container/list"
	"time"
)

// timeNode is a value's place in a timeList: its time, the list it is in and its element
// there (nil, nil when in none). It is embedded in the value (an open trace, an open
// session).
type timeNode[T any] struct {
	in *timeList[T]
	e  *list.Element // Value: the *timeNode
	at time.Time
	v  T
}

// timeList orders values by a time that only moves forward in practice (the arrival
// time of a trace's or a session's last record, a session's creation), earliest first,
// so that a timer check reads only the front of the list, the values that may be due,
// instead of every open trace and session (docs/decisions/performance.md §8.34). A time
// set earlier than the last one's (a clock that went back, two batches taking the lock
// out of their order) is placed by walking back from the end: the order is exact
// whatever the times. The zero value is an empty list.
type timeList[T any] struct {
	l list.List
}

func nodeOf[T any](e *list.Element) *timeNode[T] { return e.Value.(*timeNode[T]) }

// set moves n (in this list, in another or in none) to its place in this list for time
// at: after every value whose time is before at, before every value whose time is after
// it (when it moves, after those of its time too). Values of equal times keep no order
// among themselves (a check takes all of them or none, and sorts what it takes), so a
// node whose time does not change, or that stays between its neighbours' times, stays
// where it is: the records of one batch share their time, and only a trace's or a
// session's first record of the batch moves it (docs/decisions/performance.md §8.39).
func (l *timeList[T]) set(n *timeNode[T], at time.Time) {
	if n.in == l && n.at.Equal(at) {
		n.at = at
		return
	}
	n.at = at
	if n.in != l {
		n.in.remove(n)
	} else {
		prev, next := n.e.Prev(), n.e.Next()
		if (prev == nil || !nodeOf[T](prev).at.After(at)) && (next == nil || !nodeOf[T](next).at.Before(at)) {
			// Staying where a reinsertion would put it (most often last; also a batch
			// that took the lock after a later one, whose first record moved the node
			// back).
			return
		}
	}
	mark := l.l.Back()
	for mark != nil && (mark == n.e || nodeOf[T](mark).at.After(at)) {
		mark = mark.Prev()
	}
	switch {
	case n.e == nil && mark == nil:
		n.e, n.in = l.l.PushFront(n), l
	case n.e == nil:
		n.e, n.in = l.l.InsertAfter(n, mark), l
	case mark == nil:
		l.l.MoveToFront(n.e)
	default:
		l.l.MoveAfter(n.e, mark)
	}
}

// remove takes n out of the list; it does nothing when n is not in it (in no list, or
// in another). l may be nil (n.in of a node in no list).
func (l *timeList[T]) remove(n *timeNode[T]) {
	if l != nil && n.in == l {
		l.l.Remove(n.e)
		n.in, n.e = nil, nil
	}
}

// until returns the values whose time is at least d before now, earliest first,
// appended to out.
func (l *timeList[T]) until(now time.Time, d time.Duration, out []T) []T {
	for e := l.l.Front(); e != nil && now.Sub(nodeOf[T](e).at) >= d; e = e.Next() {
		out = append(out, nodeOf[T](e).v)
	}
	return out
}
