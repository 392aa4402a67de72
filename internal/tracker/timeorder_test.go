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
		for n := l.front; n != nil; n = n.next {
			require.Same(t, prev, n.prev, "step %d: back link", step)
			if prev != nil {
				require.False(t, prev.at.After(n.at), "step %d: order", step)
			}
			got = append(got, n.v)
			prev = n
		}
		require.Same(t, prev, l.back, "step %d: back", step)
		var want []int
		for j := range nodes {
			if in[j] {
				want = append(want, j)
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
// open traces without a session. An open trace is neither dead nor closed.
func checkTimers(t *testing.T, tk *Tracker) {
	t.Helper()
	pending := 0
	for id, tr := range tk.traces {
		if tr.sess == nil {
			pending++
		}
		// observe looks an open trace up first and skips these two maps.
		assert.NotContains(t, tk.deadTraces, id, "an open trace is not dead")
		assert.NotContains(t, tk.closed, id, "an open trace is not closed")
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
// it is (a late batch's records of one trace cost no walk each); one that would follow a
// neighbour of the same time moves after it, as a reinsertion puts it.
func TestTimeListInPlace(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	nodes := make([]timeNode[string], 3)
	var l timeList[string]
	for i, v := range []string{"a", "b", "c"} {
		nodes[i].v = v
		l.set(&nodes[i], t0.Add(time.Duration(1+4*i)*time.Second)) // 1s, 5s, 9s
	}
	order := func() (vs []string) {
		for n := l.front; n != nil; n = n.next {
			vs = append(vs, n.v)
		}
		return vs
	}
	a, b, c := &nodes[0], &nodes[1], &nodes[2]
	l.set(b, t0.Add(3*time.Second))
	assert.Equal(t, []string{"a", "b", "c"}, order())
	assert.Same(t, a, b.prev)
	assert.Same(t, c, b.next)
	l.set(b, t0.Add(9*time.Second))
	assert.Equal(t, []string{"a", "c", "b"}, order(), "after c, whose time it now shares")
	assert.Same(t, b, l.back)
}
