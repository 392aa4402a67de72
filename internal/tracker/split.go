// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker // import "github.com/agenteval/agenteval-collector/internal/tracker"

import (
	"cmp"
	"slices"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// traceSplit is how the records of a closing trace divide into turns
// (docs/decisions/sessions.md §2.4.1). A trace usually is one turn. It holds several when
// the application runs a conversation inside it: OpenAI Agents' withTrace around several
// runs, an application span around a chat loop, one handle_conversation_turn per request.
type traceSplit struct {
	// turns are the records of each turn, in start order. A trace that holds no
	// conversation is one turn of all its records.
	turns [][]session.SpanRecord
	// around are the records whose time span holds several turns (the application's
	// conversation span, the trace root around it): part of no turn.
	around []session.SpanRecord
	// rest are the records that started after the last turn ended, when one of them is
	// a GenAI span: a request still running. Without a GenAI span they stay with the
	// last turn.
	rest []session.SpanRecord
	// end is the latest end (ns since the Unix epoch) of the records in turns and
	// around: a record of the trace that starts after it belongs to a later turn.
	end int64
	// complete is true when the trace's own root (a record without a parent) is among
	// the records: nothing of the trace starts after it.
	complete bool
}

// splitTrace divides recs, the records of one trace, into turns. The returned slices
// hold copies of recs' elements.
//
// The requests of a conversation are the branches of the trace's first branching span
// (going down from the top while a single child holds GenAI spans): children of the same
// name, one after the other, each a new request, that is, a turn marker
// (handle_conversation_turn, invoke_workflow...), or a branch whose first user message
// differs from the previous request's. The branching span must be the application's (not
// a GenAI span: a workflow or agent that calls one agent twice is one turn) or its
// branches framework run spans that are not GenAI spans (the OpenAI Agents task span of
// each run under the withTrace span). A branch that does not start a request (no user
// message, the same one, another name) continues the one before it. The other records
// go with the turn whose time span holds their start (else the one before), are around
// the turns when they hold several, or are the rest when they start after them.
func splitTrace(recs []session.SpanRecord) traceSplit {
	sp := traceSplit{turns: [][]session.SpanRecord{recs}}
	t := newTraceTree(recs)
	for i := range recs {
		if isTraceRoot(&recs[i]) {
			sp.complete = true
		}
		sp.end = max(sp.end, recs[i].EndUnixNano)
	}
	branches := t.requests()
	if branches == nil {
		return sp
	}
	turnOf := make([]int, len(recs)) // turn index + 1, 0 for none
	windows := make([]window, len(branches))
	for k, b := range branches {
		windows[k] = window{start: recs[b[0]].StartUnixNano}
		for _, root := range b {
			t.walk(root, func(i int) {
				turnOf[i] = k + 1
				windows[k].end = max(windows[k].end, recs[i].EndUnixNano)
				windows[k].start = min(windows[k].start, recs[i].StartUnixNano)
			})
		}
	}
	// Where each record goes: turn k (k >= 0), around or rest. A span that arrived twice
	// goes where its first copy goes.
	const around, rest = -1, -2
	place := make([]int, len(recs))
	last := windows[len(windows)-1].end
	for i := range recs {
		r := &recs[i]
		switch j := t.byID[r.SpanID]; {
		case j < i:
			place[i] = place[j]
		case turnOf[i] > 0:
			place[i] = turnOf[i] - 1
		case windowsHeld(r, windows) > 1:
			place[i] = around
		case r.StartUnixNano > last:
			place[i] = rest
		default:
			// The last turn that started at or before it, else the first.
			place[i] = max(0, startedBy(windows, r.StartUnixNano)-1)
		}
	}
	sp = traceSplit{turns: make([][]session.SpanRecord, len(branches)), complete: sp.complete}
	restGenAI := false
	for i := range recs {
		r := &recs[i]
		switch k := place[i]; k {
		case around:
			sp.around = append(sp.around, *r)
		case rest:
			sp.rest = append(sp.rest, *r)
			restGenAI = restGenAI || r.Class.GenAI()
			continue
		default:
			sp.turns[k] = append(sp.turns[k], *r)
		}
		sp.end = max(sp.end, r.EndUnixNano)
	}
	if !restGenAI {
		// What follows the last request is not one (an HTTP call of the application's
		// after it answered): it stays with the last turn.
		n := len(sp.turns) - 1
		sp.turns[n] = append(sp.turns[n], sp.rest...)
		for i := range sp.rest {
			sp.end = max(sp.end, sp.rest[i].EndUnixNano)
		}
		sp.rest = nil
	}
	return sp
}

// startedBy returns the number of windows that start at or before start.
func startedBy(ws []window, start int64) int {
	n, _ := slices.BinarySearchFunc(ws, start, func(w window, s int64) int {
		if w.start <= s {
			return -1
		}
		return 1
	})
	return n
}

// window is a turn's time span (ns since the Unix epoch).
type window struct{ start, end int64 }

// windowsHeld counts the windows that r's time span holds.
func windowsHeld(r *session.SpanRecord, ws []window) int {
	n := 0
	for _, w := range ws {
		if r.StartUnixNano <= w.start && r.EndUnixNano >= w.end {
			n++
		}
	}
	return n
}

// isTraceRoot reports whether r has no parent: the trace's own root span.
func isTraceRoot(r *session.SpanRecord) bool {
	return r.ParentSpanID == "" || r.ParentSpanID == r.SpanID
}

// traceTree is the parent/child structure of one trace's records (indexes into recs).
type traceTree struct {
	recs []session.SpanRecord
	// kids are the children of each record, and tops the records whose parent is not
	// among them (by parent id: "" for the trace root), in start order.
	kids  [][]int
	tops  map[string][]int
	genAI []bool // the record's subtree holds a GenAI span
	user  []string
	// byID is the first record of each span id.
	byID map[string]int
}

func newTraceTree(recs []session.SpanRecord) *traceTree {
	t := &traceTree{recs: recs, kids: make([][]int, len(recs)), tops: map[string][]int{},
		genAI: make([]bool, len(recs)), user: make([]string, len(recs))}
	byID := make(map[string]int, len(recs))
	t.byID = byID
	for i := range recs {
		if _, dup := byID[recs[i].SpanID]; !dup {
			byID[recs[i].SpanID] = i
		}
	}
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(recs[a].StartUnixNano, recs[b].StartUnixNano) })
	for _, i := range order {
		r := &recs[i]
		if byID[r.SpanID] != i {
			continue // a duplicate span id: not a node of its own
		}
		if p, ok := byID[r.ParentSpanID]; ok && !isTraceRoot(r) && p != i {
			t.kids[p] = append(t.kids[p], i)
		} else {
			parent := r.ParentSpanID
			if isTraceRoot(r) {
				parent = ""
			}
			t.tops[parent] = append(t.tops[parent], i)
		}
	}
	// Subtree facts, children before parents (a cycle of parents is in no top and is
	// left out, as assembly does with it).
	var visit func(i int)
	visit = func(i int) {
		t.genAI[i] = recs[i].Class.GenAI()
		if recs[i].UserMessage != "" {
			t.user[i] = recs[i].UserMessage
		}
		for _, k := range t.kids[i] {
			visit(k)
			t.genAI[i] = t.genAI[i] || t.genAI[k]
			if t.user[i] == "" {
				t.user[i] = t.user[k] // the first user message in start order
			}
		}
	}
	for _, ts := range t.tops {
		for _, i := range ts {
			visit(i)
		}
	}
	return t
}

// walk calls f on i and every record below it.
func (t *traceTree) walk(i int, f func(int)) {
	f(i)
	for _, k := range t.kids[i] {
		t.walk(k, f)
	}
}

// requests returns the branches of each request (each a list of subtree roots; see
// splitTrace): one request of the top group that holds the first GenAI span when the
// trace holds no conversation; nil when it holds no GenAI span.
func (t *traceTree) requests() [][]int {
	// The top group that holds the first GenAI span: below the trace root, or below a
	// parent that has not arrived (the application's span, still running).
	var nodes []int
	first := int64(0)
	for _, ts := range t.tops {
		for _, i := range ts {
			if t.genAI[i] && (nodes == nil || t.recs[i].StartUnixNano < first) {
				nodes, first = ts, t.recs[i].StartUnixNano
			}
		}
	}
	// Whether the node whose children nodes are is a GenAI span: the parent of a top
	// group (the trace root's none, or one that has not arrived) is the application's.
	if nodes == nil {
		return nil // its GenAI spans are in a cycle of parents, or duplicates
	}
	whole := [][]int{nodes}
	nodeGenAI := false
	for {
		var withGenAI []int
		for _, i := range nodes {
			if t.genAI[i] {
				withGenAI = append(withGenAI, i)
			}
		}
		switch {
		case len(withGenAI) == 0:
			return whole
		case len(withGenAI) > 1:
			if reqs := t.cut(withGenAI, nodeGenAI); len(reqs) > 1 {
				return reqs
			}
			return whole
		}
		n := withGenAI[0]
		nodes, nodeGenAI = t.kids[n], t.recs[n].Class.GenAI()
	}
}

// cut groups branches (the children of one node that hold GenAI spans, in start order)
// into requests; genAINode is true when that node is a GenAI span.
func (t *traceTree) cut(branches []int, genAINode bool) [][]int {
	first := &t.recs[branches[0]]
	if genAINode && first.Class.GenAI() {
		return nil // an agent or workflow calling agents: one turn
	}
	reqs := [][]int{{branches[0]}}
	user, end := t.user[branches[0]], t.recs[branches[0]].EndUnixNano
	for _, b := range branches[1:] {
		r := &t.recs[b]
		sameKind := r.Name == first.Name && r.Class == first.Class
		newRequest := sameKind && r.StartUnixNano >= end &&
			(r.Class == session.ClassTurn || t.user[b] != "" && t.user[b] != user)
		if newRequest {
			reqs = append(reqs, []int{b})
			user = t.user[b]
		} else {
			n := len(reqs) - 1
			reqs[n] = append(reqs[n], b)
			user = cmp.Or(user, t.user[b])
		}
		end = max(end, r.EndUnixNano)
	}
	return reqs
}
