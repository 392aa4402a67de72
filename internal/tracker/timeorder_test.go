// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimeList moves nodes to random times, earlier and later than the others (a
// clock that goes back), and removes some: the list stays ordered by time and holds
// exactly the nodes set and not removed, and until reads its front.
func TestTimeList(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nodes := make([]timeNode[int], 40)
	in := make([]bool, len(nodes))
	for i := range nodes {
		nodes[i].v = i
	}
	var l timeList[int]
	t0 := time.Unix(1_800_000_000, 0)
	for step := range 5000 {
		i := rng.IntN(len(nodes))
		if rng.IntN(4) == 0 {
			l.remove(&nodes[i])
			in[i] = false
		} else {
			l.set(&nodes[i], t0.Add(time.Duration(rng.IntN(100))*time.Second))
			in[i] = true
		}
		var got []int
		var prev *timeNode[int]
		for e := l.l.Front(); e != nil; e = e.Next() {
			n := nodeOf[int](e)
			require.Same(t, e, n.e, "step %d: the node's element", step)
			require.Same(t, &l, n.in, "step %d: the node's list", step)
			if prev != nil {
				require.False(t, prev.at.After(n.at), "step %d: order", step)
			}
			got = append(got, n.v)
			prev = n
		}
		var want []int
		for j := range nodes {
			if in[j] {
				want = append(want, j)
			} else {
				require.Nil(t, nodes[j].in, "step %d: node %d in no list", step, j)
			}
		}
		slices.Sort(got)
		require.Equal(t, want, got, "step %d: members", step)

		now, d := t0.Add(time.Duration(rng.IntN(120))*time.Second), time.Duration(rng.IntN(60))*time.Second
		var wantDue []int
		for j := range nodes {
			if in[j] && now.Sub(nodes[j].at) >= d {
				wantDue = append(wantDue, j)
			}
		}
		gotDue := l.until(now, d, nil)
		slices.Sort(gotDue)
		require.Equal(t, wantDue, gotDue, "step %d: until", step)
	}
}

// checkTimers checks the Tracker's timer lists against a scan of every open trace and
// session (what AdvanceClosing did before §8.34 of docs/decisions/performance.md): at
// the Tracker's clock and at later probes around each configured wait, the same traces
// are due and the same sessions end, in the same order, and PendingTraces counts the
// open traces without a session. An open trace is not dead, nor closed unless it is the
// next turn of a trace that holds a conversation.
func checkTimers(t *testing.T, tk *Tracker) {
	t.Helper()
	pending := 0
	for id, tr := range tk.traces {
		if tr.sess == nil {
			pending++
		}
		// observe looks an open trace up first and skips these two maps.
		assert.NotContains(t, tk.deadTraces, id, "an open trace is not dead")
		if !tr.next {
			// Only a trace's next turn is open while its earlier ones are closed.
			assert.NotContains(t, tk.closed, id, "an open trace is not closed")
		}
	}
	assert.Equal(t, pending, tk.Stats().PendingTraces, "pending traces")
	c := tk.cfg
	for _, d := range []time.Duration{0, c.TurnSettle, c.TurnTimeout, c.SessionTimeout, c.MaxSessionDuration} {
		for _, e := range []time.Duration{-time.Millisecond, 0, time.Millisecond} {
			now := tk.now.Add(d + e)
			assert.Equal(t, traceIDs(scanDueTraces(tk, now)), traceIDs(tk.dueTraces(now)), "traces due at +%v", d+e)
			assert.Equal(t, sessionIDs(scanEndingSessions(tk, now)), sessionIDs(tk.endingSessions(now)),
				"sessions ending at +%v", d+e)
		}
	}
}

func scanDueTraces(tk *Tracker, now time.Time) []*traceState {
	var due []*traceState
	for _, tr := range tk.traces {
		silent := now.Sub(tr.seen.at)
		if silent >= tk.cfg.TurnTimeout || (tr.hasRoot() && silent >= tk.cfg.TurnSettle) {
			due = append(due, tr)
		}
	}
	slices.SortFunc(due, turnOrder)
	return due
}

func scanEndingSessions(tk *Tracker, now time.Time) []*sessionState {
	var ending []*sessionState
	for _, s := range tk.sessions {
		if now.Sub(s.created.at) >= tk.cfg.MaxSessionDuration || (len(s.open) == 0 && s.endSignal) ||
			now.Sub(s.active.at) >= tk.cfg.SessionTimeout {
			ending = append(ending, s)
		}
	}
	slices.SortFunc(ending, func(x, y *sessionState) int { return cmp.Compare(x.id, y.id) })
	return ending
}

func traceIDs(trs []*traceState) []string {
	ids := []string{}
	for _, tr := range trs {
		ids = append(ids, tr.id)
	}
	return ids
}

func sessionIDs(ss []*sessionState) []string {
	ids := []string{}
	for _, s := range ss {
		ids = append(ids, s.id)
	}
	return ids
}

// TestTimeListInPlace: a node whose new time keeps it between its neighbours stays where
// it is (a late batch's records of one trace cost no walk each), also when it now shares
// a neighbour's time (the records of one batch share theirs); one set past a neighbour
// moves after it.
func TestTimeListInPlace(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	nodes := make([]timeNode[string], 3)
	var l timeList[string]
	for i, v := range []string{"a", "b", "c"} {
		nodes[i].v = v
		l.set(&nodes[i], t0.Add(time.Duration(1+4*i)*time.Second)) // 1s, 5s, 9s
	}
	order := func() (vs []string) {
		for e := l.l.Front(); e != nil; e = e.Next() {
			vs = append(vs, nodeOf[string](e).v)
		}
		return vs
	}
	a, b, c := &nodes[0], &nodes[1], &nodes[2]
	l.set(b, t0.Add(3*time.Second))
	assert.Equal(t, []string{"a", "b", "c"}, order())
	assert.Same(t, a.e, b.e.Prev())
	assert.Same(t, c.e, b.e.Next())
	l.set(b, t0.Add(9*time.Second))
	assert.Equal(t, []string{"a", "b", "c"}, order(), "in place: c's time is not before b's")
	l.set(a, t0.Add(9*time.Second))
	assert.Equal(t, []string{"a", "b", "c"}, order(), "in place: the three share a time")
	l.set(b, t0.Add(10*time.Second))
	assert.Equal(t, []string{"a", "c", "b"}, order(), "after c, whose time is before b's")
	assert.Same(t, b.e, l.l.Back())
	l.set(a, t0.Add(10*time.Second))
	assert.Equal(t, []string{"c", "b", "a"}, order(), "moved: a reinsertion goes after the values of its time")
	assert.Equal(t, []string{"c", "b", "a"}, l.until(t0.Add(10*time.Second), 0, nil))
	assert.Equal(t, []string{"c"}, l.until(t0.Add(10*time.Second), time.Second/2, nil))
}

// TestTimeListMovesBetweenLists: a node set into a list while it is in another leaves
// the other (a trace moves from unrooted to rooted when its root arrives); removing it
// from a list it is not in changes nothing.
func TestTimeListMovesBetweenLists(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	var one, other timeList[string]
	x, y := &timeNode[string]{v: "x"}, &timeNode[string]{v: "y"}
	one.set(x, t0)
	one.set(y, t0.Add(time.Second))
	other.set(x, t0.Add(2*time.Second))
	assert.Equal(t, 1, one.l.Len())
	assert.Equal(t, []string{"y"}, one.until(t0.Add(time.Hour), 0, nil))
	assert.Equal(t, []string{"x"}, other.until(t0.Add(time.Hour), 0, nil))
	one.remove(x) // x is in other
	assert.Equal(t, 1, other.l.Len())
	assert.Same(t, &other, x.in)
	other.remove(x)
	assert.Nil(t, x.in)
	assert.Zero(t, other.l.Len())
}
