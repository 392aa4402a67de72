// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker // import "github.com/agenteval/agenteval-collector/internal/tracker"

import (
	"cmp"
	"slices"

	"github.com/agenteval/agenteval-collector/internal/semconv"
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
	// rest are the records that started after the last turn ended, in a trace whose
	// root has not arrived: a request still running, when one of them is a GenAI span;
	// else only those whose parent has not arrived (the others stay with the last
	// turn).
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
// (going down from the top while a single child holds GenAI spans): children of the first
// one's name and class, one after the other, each starting a new request when it is a
// turn marker, or when the current request has a user message and the branch's first one
// (not below a tool span: an agent as a tool's task) differs. The branching span must be
// the application's (not a GenAI span: a workflow or agent that calls one agent twice is
// one turn) or its branches framework run spans that are not GenAI spans (the OpenAI
// Agents task span of each run under the withTrace span); below a turn marker or
// workflow, only conversation turn markers (handle_conversation_turn) are requests. A
// branch that does not start a request (no user message, the same one, another name)
// continues the one before it. The other records go with the turn whose time span holds
// their start (else the one before), are around the turns when they hold several, or are
// the rest when they start after them.
func splitTrace(recs []session.SpanRecord) traceSplit {
	sp := traceSplit{turns: [][]session.SpanRecord{recs}}
	turnMarkers, users := 0, 0
	var user string
	for i := range recs {
		r := &recs[i]
		if isTraceRoot(r) {
			sp.complete = true
		}
		sp.end = max(sp.end, r.EndUnixNano)
		if r.Class == session.ClassTurn {
			turnMarkers++
		}
		if r.UserMessage != "" && (users == 0 || r.UserMessage != user) {
			user = r.UserMessage
			users++
		}
	}
	if turnMarkers < 2 && users < 2 && sp.complete {
		// No second request, and nothing can follow the root: one turn (the common
		// case, without a tree).
		return sp
	}
	t := newTraceTree(recs)
	branches := t.requests()
	if branches == nil {
		return sp
	}
	turnOf := make([]int, len(recs)) // turn index + 1, 0 for none
	windows := make([]window, len(branches))
	for k, b := range branches {
		// A window starts with its first branch (branches are in start order, so the
		// windows are too) and ends with the last end below its branches.
		windows[k] = window{start: recs[b[0]].StartUnixNano}
		for _, root := range b {
			t.walk(root, func(i int32) {
				turnOf[i] = k + 1
				windows[k].end = max(windows[k].end, recs[i].EndUnixNano)
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
	if !slices.ContainsFunc(place, func(k int) bool { return k != 0 }) {
		return sp // one turn of every record, recs itself
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
	if sp.complete || !restGenAI {
		// What follows the last request is not one (an HTTP call of the application's
		// after it answered), or nothing can follow (the trace's root arrived): it stays
		// with the last turn. Not a span whose parent has not arrived, in a trace that
		// may go on: it belongs to something still running (a guardrail of the next
		// request).
		var closing, open []session.SpanRecord
		for _, r := range sp.rest {
			if _, parent := t.byID[r.ParentSpanID]; !sp.complete && !parent {
				open = append(open, r)
			} else {
				closing = append(closing, r)
			}
		}
		sp.rest = closing
		sp.closeRest(false)
		sp.rest = open
	}
	return sp
}

// closeRest closes the rest with the turns: as a turn of its own (asTurn: a request cut
// short) or with the last turn.
func (sp *traceSplit) closeRest(asTurn bool) {
	if len(sp.rest) == 0 {
		return
	}
	if asTurn {
		sp.turns = append(sp.turns, sp.rest)
	} else {
		n := len(sp.turns) - 1
		sp.turns[n] = append(sp.turns[n], sp.rest...)
	}
	for i := range sp.rest {
		sp.end = max(sp.end, sp.rest[i].EndUnixNano)
	}
	sp.rest = nil
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

// traceTree is the parent/child structure of one trace's records (indexes into recs;
// children as linked lists, in start order).
type traceTree struct {
	recs []session.SpanRecord
	// first and next link each record's children: first[i] is i's first child, next[c]
	// the child after c (-1: none). tops are the records whose parent is not among them
	// (the trace root, or the children of a parent that has not arrived), in start order.
	first, next []int32
	tops        []int32
	genAI       []bool // the record's subtree holds a GenAI span
	// user is the first user message of the record's subtree, in start order, that is
	// not below a tool span (an agent as a tool's task).
	user []string
	// byID is the first record of each span id.
	byID map[string]int
}

func newTraceTree(recs []session.SpanRecord) *traceTree {
	n := len(recs)
	t := &traceTree{recs: recs, first: make([]int32, 2*n), genAI: make([]bool, n), user: make([]string, n),
		byID: make(map[string]int, n)}
	t.first, t.next = t.first[:n:n], t.first[n:]
	for i := range recs {
		t.first[i], t.next[i] = -1, -1
		if _, dup := t.byID[recs[i].SpanID]; !dup {
			t.byID[recs[i].SpanID] = i
		}
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(recs[a].StartUnixNano, recs[b].StartUnixNano) })
	last := make([]int32, n) // the last child linked so far
	for _, i := range order {
		r := &recs[i]
		if t.byID[r.SpanID] != int(i) {
			continue // a duplicate span id: not a node of its own
		}
		p, ok := t.byID[r.ParentSpanID]
		if !ok || isTraceRoot(r) || p == int(i) {
			t.tops = append(t.tops, i)
			continue
		}
		if t.first[p] < 0 {
			t.first[p] = i
		} else {
			t.next[last[p]] = i
		}
		last[p] = i
	}
	// Subtree facts, children before parents (a cycle of parents is in no top and is
	// left out, as assembly does with it).
	var visit func(i int32)
	visit = func(i int32) {
		t.genAI[i] = recs[i].Class.GenAI()
		t.user[i] = recs[i].UserMessage
		for k := t.first[i]; k >= 0; k = t.next[k] {
			visit(k)
			t.genAI[i] = t.genAI[i] || t.genAI[k]
			if t.user[i] == "" && recs[k].Class != session.ClassTool {
				// The first user message in start order; not a task delegated
				// through a tool call (an agent as a tool).
				t.user[i] = t.user[k]
			}
		}
	}
	for _, i := range t.tops {
		visit(i)
	}
	return t
}

// kids returns i's children, in start order.
func (t *traceTree) kids(i int32) []int32 {
	var out []int32
	for k := t.first[i]; k >= 0; k = t.next[k] {
		out = append(out, k)
	}
	return out
}

// walk calls f on i and every record below it.
func (t *traceTree) walk(i int32, f func(int32)) {
	f(i)
	for k := t.first[i]; k >= 0; k = t.next[k] {
		t.walk(k, f)
	}
}

// conversationTurn reports whether r is an explicit conversation turn marker
// (handle_conversation_turn).
func conversationTurn(r *session.SpanRecord) bool {
	return r.Class == session.ClassTurn && r.Operation == semconv.OpHandleConversationTurn
}

// topParent is the parent id that groups a top record: "" for the trace root.
func topParent(r *session.SpanRecord) string {
	if isTraceRoot(r) {
		return ""
	}
	return r.ParentSpanID
}

// requests returns the branches of each request (each a list of subtree roots; see
// splitTrace): one request of the top group that holds the first GenAI span when the
// trace holds no conversation; nil when it holds no GenAI span.
func (t *traceTree) requests() [][]int32 {
	// The top group that holds the first GenAI span: below the trace root, or below a
	// parent that has not arrived (the application's span, still running).
	group := -1
	for k, i := range t.tops {
		if t.genAI[i] {
			group = k
			break
		}
	}
	if group < 0 {
		return nil // its GenAI spans are in a cycle of parents, or duplicates
	}
	var nodes []int32
	for _, i := range t.tops {
		if topParent(&t.recs[i]) == topParent(&t.recs[t.tops[group]]) {
			nodes = append(nodes, i)
		}
	}
	whole := [][]int32{nodes}
	// Whether the node whose children nodes are is a GenAI span: the parent of a top
	// group (the trace root's none, or one that has not arrived) is the application's.
	nodeGenAI, nodeTurn := false, false
	for {
		var withGenAI []int32
		for _, i := range nodes {
			if t.genAI[i] {
				withGenAI = append(withGenAI, i)
			}
		}
		switch {
		case len(withGenAI) == 0:
			return whole
		case len(withGenAI) > 1:
			if nodeTurn && !conversationTurn(&t.recs[withGenAI[0]]) {
				// Below a turn (a workflow, a graph's root): one request, whatever
				// prompts its steps send, unless its children are conversation turns.
				return whole
			}
			if reqs := t.cut(withGenAI, nodeGenAI); len(reqs) > 1 {
				return reqs
			}
			return whole
		}
		n := withGenAI[0]
		nodes, nodeGenAI, nodeTurn = t.kids(n), t.recs[n].Class.GenAI(), t.recs[n].Class == session.ClassTurn
	}
}

// cut groups branches (the children of one node that hold GenAI spans, in start order)
// into requests; genAINode is true when that node is a GenAI span.
func (t *traceTree) cut(branches []int32, genAINode bool) [][]int32 {
	first := &t.recs[branches[0]]
	if genAINode && first.Class.GenAI() {
		return nil // an agent or workflow calling agents: one turn
	}
	reqs := [][]int32{{branches[0]}}
	user, end := t.user[branches[0]], t.recs[branches[0]].EndUnixNano
	for _, b := range branches[1:] {
		r := &t.recs[b]
		sameKind := r.Name == first.Name && r.Class == first.Class
		newRequest := sameKind && r.StartUnixNano >= end &&
			(r.Class == session.ClassTurn || user != "" && t.user[b] != "" && t.user[b] != user)
		if newRequest {
			reqs = append(reqs, []int32{b})
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
