// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/store"
)

// The records a shard could not save to the continuation store, the turns it numbered
// itself, and the revisions and claims that go with them, are lost with the process at
// shutdown when the store is still down then (saveUnsaved). A continued session's next turn could then take the index of a turn
// whose analysis still waits in the exporter's queue (docs/decisions/sessions.md §4.8).
// With continuation.storage they are written to a storage extension at shutdown and taken
// back at start, as if the process had not stopped.

// keptKey is the storage key of what a shutdown kept.
const keptKey = "unsaved"

// keptVersion is the version of keptState's encoding; another is not restored. Fields
// added later are optional (a collector before them ignores them), so they keep it.
const keptVersion = 1

// keptState is what saveUnsaved could not save, as written to the storage extension: the
// records (their verdicts were emitted at shutdown), the turns numbered here whose index
// the store has not allocated, in the order numbered, the last analysis revision of
// their sessions (shard.revisions), the claims of final verdicts counted without
// their records (shard.claims), and the holds of sessions whose end waited at shutdown
// that could not be written (shard.keptHolds).
type keptState struct {
	Version   int             `json:"version"`
	Records   []keptRecord    `json:"records,omitempty"`
	Local     []store.TurnKey `json:"local,omitempty"`
	Revisions map[string]int  `json:"revisions,omitempty"`
	Claims    []store.Claim   `json:"claims,omitempty"`
	// Holds are written by the next collector as they are, the stopped one's instance
	// their owner: its sweep then recovers them (docs/decisions/sessions.md §4.2.2).
	Holds []store.OpenSession `json:"holds,omitempty"`
}

// keptRecord is one store.TurnState.
type keptRecord struct {
	SessionID string          `json:"session_id"`
	Record    json.RawMessage `json:"record"`
	// Held: a record of a session whose end waited at shutdown, of which the bound had
	// dropped records (keepHeld): the only copy of some of its turns, which the next
	// collector keeps past the bound (shard.restored).
	Held bool `json:"held,omitempty"`
}

// startKept opens the storage client of continuation.storage, when set, and gives the
// shards back what the last shutdown kept there. It runs before the shards start. An
// error opening the client fails the start (the configuration names an extension that
// is missing or is not a storage, or, with the processor in two pipelines, a second
// instance cannot open the first one's file: file_storage's timeout); what cannot be
// read is logged and left for the next start, what does not decode is logged and
// dropped.
func (p *agentSessionProcessor) startKept(ctx context.Context, host component.Host) error {
	id := p.cfg.Continuation.Storage
	if id == nil {
		return nil
	}
	ext, ok := host.GetExtensions()[*id]
	if !ok {
		return fmt.Errorf("continuation.storage: extension %q not found", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return fmt.Errorf("continuation.storage: extension %q is not a storage extension", id)
	}
	c, err := se.GetClient(ctx, component.KindProcessor, p.id, "continuation")
	if err != nil {
		return fmt.Errorf("continuation.storage: %w", err)
	}
	p.kept = c
	p.restoreKept(ctx)
	return nil
}

// restoreKept gives each shard the records, numbered turns and revisions of its sessions
// that the last shutdown kept. The key stays until this process's shutdown writes it again: were
// the process to die before, they are taken back again at the next start, which saving
// and allocating again make harmless (a stored record is never replaced by one behind
// it, and a trace keeps its allocated index).
func (p *agentSessionProcessor) restoreKept(ctx context.Context) {
	raw, err := p.kept.Get(ctx, keptKey)
	if err != nil {
		// What could not be read is left for the next start: this process keeps nothing
		// there, so that its shutdown does not write over it.
		p.logger.Error("reading the turn records kept at the last shutdown failed; they are left for the next start, and this process keeps none at its shutdown",
			zap.Error(err))
		if err := p.kept.Close(ctx); err != nil {
			p.logger.Warn("closing the continuation storage client failed", zap.Error(err))
		}
		p.kept = nil
		return
	}
	if raw == nil {
		return
	}
	var ks keptState
	if err := json.Unmarshal(raw, &ks); err != nil || ks.Version != keptVersion {
		if err == nil {
			err = fmt.Errorf("version %d, this collector reads %d", ks.Version, keptVersion)
		}
		p.logger.Error("the turn records kept at the last shutdown do not decode; they are not restored",
			zap.Int("bytes", len(raw)), zap.Error(err))
		return
	}
	n := len(p.shards)
	restored := 0
	// The held records first: the head of each shard's unsaved that the bound keeps.
	slices.SortStableFunc(ks.Records, func(a, b keptRecord) int {
		switch {
		case a.Held == b.Held:
			return 0
		case a.Held:
			return -1
		}
		return 1
	})
	for _, kr := range ks.Records {
		ts := store.TurnState{SessionID: kr.SessionID}
		if err := json.Unmarshal(kr.Record, &ts.Record); err != nil {
			p.logger.Error("a turn record kept at the last shutdown does not decode; it is not restored",
				zap.String("session_id", kr.SessionID), zap.Error(err))
			continue
		}
		sh := p.shards[shardOf(kr.SessionID, n)]
		// Its verdict was emitted at that shutdown: none waits.
		sh.unsaved, sh.waiting = append(sh.unsaved, ts), append(sh.waiting, false)
		if kr.Held {
			sh.restored++
		}
		restored++
	}
	for _, k := range ks.Local {
		sh := p.shards[shardOf(k.SessionID, n)]
		sh.local = append(sh.local, sh.withRootSpan(k))
	}
	for _, c := range ks.Claims {
		sh := p.shards[shardOf(c.SessionID, n)]
		c.TurnKey = sh.withRootSpan(c.TurnKey)
		sh.claims = append(sh.claims, c)
	}
	for _, h := range ks.Holds {
		sh := p.shards[shardOf(h.ID, n)]
		sh.keptHolds = append(sh.keptHolds, h)
	}
	for id, rev := range ks.Revisions {
		sh := p.shards[shardOf(id, n)]
		if sh.revisions == nil {
			sh.revisions = map[string]int{}
		}
		sh.revisions[id] = max(sh.revisions[id], rev)
	}
	now := p.now().UnixNano()
	for _, sh := range p.shards {
		if sh.pending() {
			sh.retryAt.Store(now) // saved with the first dispatch
		}
	}
	p.logger.Info("restored the turn records, turn numbers, revisions and claims not saved to the continuation store before the last shutdown",
		zap.Int("records", restored), zap.Int("numbered_turns", len(ks.Local)), zap.Int("revisions", len(ks.Revisions)), zap.Int("claims", len(ks.Claims)), zap.Int("holds", len(ks.Holds)))
}

// withRootSpan returns k with the root span of the shard's record waiting to be saved of
// its session and trace when k has none: a turn kept by a collector before turns were
// keyed by their root span too (store.TurnKey) names its trace only, and its record
// names the turn (docs/decisions/sessions.md §4.2). A key with a root span, or without a
// record of its trace, is returned as it is.
func (sh *shard) withRootSpan(k store.TurnKey) store.TurnKey {
	if k.RootSpanID != "" {
		return k
	}
	for i := range sh.unsaved {
		r := &sh.unsaved[i]
		if r.SessionID == k.SessionID && r.Record.Result.TraceID == k.TraceID {
			return r.Key()
		}
	}
	return k
}

// keep writes to continuation.storage what saveUnsaved could not save (records and
// numbered turns left in the shards), or deletes the key when nothing is left, then
// closes the client. Errors are logged: at shutdown nothing else can be done with them.
func (p *agentSessionProcessor) keep(ctx context.Context, records []store.TurnState) {
	if p.kept == nil {
		return
	}
	defer func() {
		if err := p.kept.Close(ctx); err != nil {
			p.logger.Warn("closing the continuation storage client failed", zap.Error(err))
		}
		p.kept = nil
	}()
	ks := keptState{Version: keptVersion}
	held := map[string]bool{} // the sessions of keepHeld
	kept := map[string]bool{} // the sessions of records
	for i := range records {
		kept[records[i].SessionID] = true
	}
	for _, sh := range p.shards {
		ks.Local = append(ks.Local, sh.local...)
		ks.Claims = append(ks.Claims, sh.claims...)
		ks.Holds = append(ks.Holds, sh.keptHolds...)
		for _, ev := range sh.waitingEnds {
			// Its end waits and its hold could not be written: the next collector
			// writes it, or its sweep would never find the session. Nor when it was
			// written but records of the session are kept here: another collector's
			// end of the session may release that hold (a dead instance's) before the
			// next collector saves them, with an analysis without their turns; written
			// again with them, the hold has the sweep analyse the session once they are
			// stored (TestWaitingEndHoldKeptWithItsRecords).
			st := sh.sessions[ev.Session.ID]
			if st != nil && st.continuable && (!st.held || kept[ev.Session.ID]) {
				ks.Holds = append(ks.Holds, openSession(p.instance, ev.Session))
			}
			if st != nil && st.unstored {
				held[ev.Session.ID] = true
			}
		}
		for _, id := range sh.heldLeft {
			held[id] = true
		}
		for id, rev := range sh.revisions {
			if ks.Revisions == nil {
				ks.Revisions = map[string]int{}
			}
			ks.Revisions[id] = rev
		}
	}
	for i := range records {
		rec, err := json.Marshal(&records[i].Record)
		if err != nil {
			p.logger.Error("a turn record not saved to the continuation store does not encode; it is lost",
				zap.String("session_id", records[i].SessionID), zap.Error(err))
			continue
		}
		ks.Records = append(ks.Records, keptRecord{SessionID: records[i].SessionID, Record: rec, Held: held[records[i].SessionID]})
	}
	if len(ks.Records)+len(ks.Local)+len(ks.Revisions)+len(ks.Claims)+len(ks.Holds) == 0 {
		if err := p.kept.Delete(ctx, keptKey); err != nil {
			p.logger.Warn("deleting the turn records kept at the last shutdown failed; they are taken back at the next start, which is harmless",
				zap.Error(err))
		}
		return
	}
	raw, err := json.Marshal(&ks)
	if err == nil {
		err = p.kept.Set(ctx, keptKey, raw)
	}
	if err != nil {
		p.logger.Error("keeping the turn records not saved to the continuation store failed; a continuation of their sessions may miss them",
			zap.Int("records", len(ks.Records)), zap.Error(err))
		return
	}
	p.logger.Warn("turn records not saved to the continuation store are kept in continuation.storage until the next start",
		zap.Int("records", len(ks.Records)), zap.Int("numbered_turns", len(ks.Local)), zap.Int("revisions", len(ks.Revisions)), zap.Int("claims", len(ks.Claims)), zap.Int("holds", len(ks.Holds)))
}
