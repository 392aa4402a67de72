// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package handoff passes evaluation results from the agentsession processor to the
// agenteval exporter of the same collector, in process, keyed by the evaluation span
// that carries each result (DESIGN.md §6 allows "an in-process handoff to the store
// through a shared extension"; docs/decisions/performance.md §8.41).
//
// The evaluation spans stay complete and signed: the handoff only lets an exporter that
// runs in the emitting process skip what it would otherwise redo on each span, the
// signature check and the decode of the typed attributes back into the result the
// processor had in memory. A span whose key is not found (another collector emitted
// it, the entry was evicted, the collector restarted with spans in a persistent queue)
// is checked and decoded from its attributes as before. So the handoff may lose any
// entry at any time without losing a result, with one exception: a session span over the
// processor's emit.max_session_span_bytes carries only the session's newest turns, and
// decoded it stores only those (docs/decisions/processor.md). It is bounded by a number
// of entries and drops the oldest first; an entry taken and put back (the exporter, when
// a save fails) counts as the newest.
//
// It stores only while a taker is attached (Attach, Detach: the exporter, which the
// collector starts before the processors and shuts down after them): a processor
// whose handoff no exporter takes from would otherwise keep its last results pinned
// until the process ends. Its memory is bounded by the number of entries times the
// size of a result, and a session's analysis holds all its turns' results.
//
// A result put here is shared, not copied: the putter must not modify it afterwards,
// and the taker only reads it.
package handoff // import "github.com/agenteval/agenteval-collector/internal/handoff"

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// Key is the trace and span id of the evaluation span that carries a result.
type Key struct {
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
}

// KeyOf returns the key of evaluation span sp: its trace and span id.
func KeyOf(sp ptrace.Span) Key {
	return Key{TraceID: sp.TraceID(), SpanID: sp.SpanID()}
}

// entry is one handed-off result: the turn result a turn evaluation span carries, or
// the analysis of a session evaluation span.
type entry struct {
	turn     *evaluation.TurnResult
	analysis *evaluation.Analysis
	slot     int // its index in Handoff.ring
}

// Handoff holds at most a fixed number of results, keyed by their evaluation span; on
// overflow the oldest entry is dropped. It is safe for concurrent use.
type Handoff struct {
	mu      sync.Mutex
	entries map[Key]entry
	// ring holds the keys in the order they were put; next is the slot the next put
	// overwrites, evicting its key if that is still held. A take empties its key's
	// slot, so that a key taken and put again (a failed save gives its analysis back)
	// gets a new slot and is not evicted early through its old one.
	ring []Key
	next int
	// takers counts the attached takers (Attach, Detach); while it is 0 a put stores
	// nothing.
	takers  int
	evicted atomic.Int64
}

// New returns a Handoff that holds at most maxEntries results (at least 1).
func New(maxEntries int) *Handoff {
	maxEntries = max(maxEntries, 1)
	return &Handoff{
		entries: make(map[Key]entry, maxEntries),
		ring:    make([]Key, maxEntries),
	}
}

// Attach registers a taker (the exporter, at its start): from now on puts are stored.
// Each Attach is undone by one Detach.
func (h *Handoff) Attach() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.takers++
}

// Detach unregisters a taker (the exporter, at its shutdown). When the last one goes,
// the results held are dropped (their spans carry them) and puts store nothing until
// the next Attach. A Detach without a matching Attach does nothing.
func (h *Handoff) Detach() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.takers == 0 {
		return
	}
	h.takers--
	if h.takers == 0 {
		clear(h.entries)
		clear(h.ring)
	}
}

// PutTurn hands off the turn result that the turn evaluation span k carries (what
// evalspan.DecodeTurn returns for that span). tr must not be modified afterwards. It
// stores nothing while no taker is attached.
func (h *Handoff) PutTurn(k Key, tr *evaluation.TurnResult) { h.put(k, entry{turn: tr}) }

// PutAnalysis hands off the analysis that the session evaluation span k carries (what
// evalspan.DecodeAnalysis returns for that span). a must not be modified afterwards.
// It stores nothing while no taker is attached.
func (h *Handoff) PutAnalysis(k Key, a *evaluation.Analysis) { h.put(k, entry{analysis: a}) }

func (h *Handoff) put(k Key, e entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.takers == 0 || (e.turn == nil && e.analysis == nil) || k == (Key{}) {
		return // nothing would take it, nothing to take, or no span to key it by
	}
	if held, ok := h.entries[k]; ok {
		e.slot = held.slot // the same span again: keep its slot
		h.entries[k] = e
		return
	}
	if old := h.ring[h.next]; old != (Key{}) {
		if _, ok := h.entries[old]; ok {
			delete(h.entries, old)
			h.evicted.Add(1)
		}
	}
	h.ring[h.next] = k
	e.slot = h.next
	h.next = (h.next + 1) % len(h.ring)
	h.entries[k] = e
}

// Attached reports whether a taker is attached, that is, whether a put would be stored:
// the processor builds a result of its own to hand off only then.
func (h *Handoff) Attached() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.takers > 0
}

// TakeTurn returns and removes the turn result handed off for span k, if it is held.
func (h *Handoff) TakeTurn(k Key) (*evaluation.TurnResult, bool) {
	e, ok := h.take(k, true)
	return e.turn, ok
}

// HoldsAnalysis reports whether an analysis is held for span k, without removing it:
// the exporter's check before its sending queue, whose consumer later takes it.
func (h *Handoff) HoldsAnalysis(k Key) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[k]
	return ok && e.analysis != nil
}

// TakeAnalysis returns and removes the analysis handed off for span k, if it is held.
func (h *Handoff) TakeAnalysis(k Key) (*evaluation.Analysis, bool) {
	e, ok := h.take(k, false)
	return e.analysis, ok
}

// take removes and returns k's entry if it holds the kind asked for (a turn or an
// analysis); an entry of the other kind is left.
func (h *Handoff) take(k Key, turn bool) (entry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[k]
	if !ok || (e.turn != nil) != turn {
		return entry{}, false
	}
	delete(h.entries, k)
	h.ring[e.slot] = Key{}
	return e, true
}

// Len returns the number of results held.
func (h *Handoff) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// Evicted returns how many results were dropped, untaken, to make room for newer ones.
func (h *Handoff) Evicted() int64 { return h.evicted.Load() }

// Provider is what the agentsession processor and the agenteval exporter look for in
// the extension their `handoff` setting names (extension agenteval_handoff).
type Provider interface {
	Handoff() *Handoff
}
