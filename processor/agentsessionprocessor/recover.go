// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"

	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/tracker"
)

// maxRecoveredPerSweep bounds the orphaned sessions one sweep claims; the next sweep
// takes the rest.
const maxRecoveredPerSweep = 256

// startRecovery enables the recovery of sessions cut by a crash when the continuation
// store survives a restart (tracker.Recovery, store.Recovery): this instance gets a
// random id and its first lease.
func (p *agentSessionProcessor) startRecovery(ctx context.Context) {
	rec, ok := p.cont.(store.Recovery)
	if !ok {
		return
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	p.recovery, p.instance = rec, hex.EncodeToString(id[:])
	p.schedule = tracker.NewRecovery(p.cfg.SessionTimeout, p.now())
	p.heartbeat(ctx)
}

// heartbeat renews this instance's lease when due.
func (p *agentSessionProcessor) heartbeat(ctx context.Context) {
	until, due := p.schedule.Heartbeat(p.now())
	if !due {
		return
	}
	if err := p.recovery.Heartbeat(ctx, p.instance, until); err != nil {
		p.continuationError(ctx, "renewing this collector's lease in the continuation store failed; its open sessions may be recovered by another collector", err)
		return
	}
	p.storeUp.Store(p.now().UnixNano())
}

// recover renews the lease, and when a sweep is due takes over the sessions that a dead
// instance held open: each is claimed in the store (exactly one instance wins). One open
// here continues (its end is analysed as usual, over every stored turn); one that is not
// is handled as a session-ended event with EndReasonRestart, partial, analysed from its
// stored turn records.
func (p *agentSessionProcessor) recover(ctx context.Context) {
	if p.recovery == nil {
		return
	}
	p.heartbeat(ctx)
	if !p.schedule.SweepDue(p.now()) {
		return
	}
	orphans, err := p.recovery.Orphans(ctx, p.now(), maxRecoveredPerSweep)
	if err != nil {
		p.continuationError(ctx, "looking for sessions cut by a crash failed", err)
		return
	}
	var events []tracker.Event
	for _, o := range orphans {
		if o.Owner == p.instance {
			continue // our own lease lapsed (the store was unreachable): not dead
		}
		p.mu.Lock()
		open := p.tracker.IsOpen(o.ID)
		p.mu.Unlock()
		if _, waits := p.waitingEnds.Load(o.ID); waits {
			open = true // its end waits in a shard, which analyses it
		}
		won, err := p.recovery.Claim(ctx, o, p.instance)
		if err != nil {
			p.continuationError(ctx, "claiming a session cut by a crash failed", err)
			continue
		}
		if !won {
			continue // another instance recovered it
		}
		if open {
			// It continues here: this instance holds it now, and its analysis when the
			// session ends covers the stored turns, late spans alone or not.
			p.claimedOpen.Store(o.ID, o)
			continue
		}
		events = append(events, tracker.Event{Kind: tracker.EventSessionEnded, Session: recoveredSession(o)})
	}
	if len(events) == 0 {
		return
	}
	p.logger.Info("analysing sessions cut by a crash of the collector that held them", zap.Int("sessions", len(events)))
	p.telemetry.ProcessorAgentsessionSessionsRecovered.Add(ctx, int64(len(events)))
	p.handle(ctx, events)
}

// recoveredSession is the session of dead instance's hold o, cut by its crash: partial,
// ended by the restart, analysed from its stored turn records.
func recoveredSession(o store.OpenSession) *session.AgentSession {
	s := &session.AgentSession{ID: o.ID, Service: o.Service, Partial: true, EndReason: session.EndReasonRestart}
	for _, a := range o.Agents {
		s.Agents = append(s.Agents, session.AgentDefinition{ID: a})
	}
	return s
}

// openSession is the store's record that instance holds s open.
func openSession(instance string, s *session.AgentSession) store.OpenSession {
	o := store.OpenSession{ID: s.ID, Owner: instance, Service: s.Service}
	for _, a := range s.Agents {
		o.Agents = append(o.Agents, a.ID)
	}
	return o
}

// hold records the sessions this instance starts to hold open, before their turn records
// are saved, and returns the error of a write that failed (the caller holds them again
// with their next write).
func (p *agentSessionProcessor) hold(ctx context.Context, holds []store.OpenSession) error {
	if len(holds) == 0 || p.recovery == nil {
		return nil
	}
	if err := p.recovery.Hold(ctx, holds); err != nil {
		p.continuationError(ctx, "recording open sessions in the continuation store failed; they are recorded again with their next write", err)
		return err
	}
	return nil
}

// saveRevisions records the revisions of the analyses emitted that the continuation
// store did not allocate (its NextRevision failed), keeping in sh those whose save fails
// to be saved again (shard.keepRevision), then releases the sessions (they are no longer
// open here; the holds of dead instances end too). A session that goes on after its end
// does so in the next chunk (emitChunk), so this release deletes no continuation's hold.
func (p *agentSessionProcessor) saveRevisions(ctx context.Context, sh *shard, ended []endedSession) {
	if len(ended) == 0 {
		return
	}
	ids := make([]string, 0, len(ended))
	for _, e := range ended {
		ids = append(ids, e.id)
		if e.revision == 0 || e.recorded {
			continue // no revision, or NextRevision recorded it
		}
		if err := p.cont.SaveRevision(ctx, e.id, e.revision); err != nil {
			p.continuationError(ctx, "saving the analysis revision to the continuation store failed; it is saved again later", err, zap.String("session_id", e.id))
			sh.keepRevision(p, e.id, e.revision)
		}
	}
	if p.recovery == nil {
		return
	}
	if err := p.recovery.Release(ctx, p.instance, ids, p.now()); err != nil {
		p.continuationError(ctx, "releasing ended sessions in the continuation store failed; they may be analysed again after a crash", err)
		return
	}
	// The holds of dead instances that the shard still has to write (kept at the last
	// shutdown) end too: written after this release, they would be orphans of ended
	// sessions, analysed again by a sweep (TestKeptHoldOfEndedSessionDropped).
	sh.keptHolds = slices.DeleteFunc(sh.keptHolds, func(o store.OpenSession) bool { return slices.Contains(ids, o.ID) })
}

// leave deletes this instance's lease on shutdown (every session it held has ended).
func (p *agentSessionProcessor) leave(ctx context.Context) {
	if p.recovery == nil {
		return
	}
	if err := p.recovery.Leave(ctx, p.instance); err != nil {
		p.continuationError(ctx, "deleting this collector's lease failed", err)
	}
}

func (p *agentSessionProcessor) continuationError(ctx context.Context, msg string, err error, fields ...zap.Field) {
	p.telemetry.ProcessorAgentsessionContinuationErrors.Add(ctx, 1)
	p.logger.Warn(msg, append(fields, zap.Error(err))...)
}
