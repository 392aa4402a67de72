// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// sessionState is what the processor keeps of an open session: its turn records
// (evaluation.SessionTurns: in index order, the last one in the conversation provisional
// until the next turn's user message or the end of the session) and its last analysis
// revision. A session continued after it went idle starts from the continuation store's
// state.
type sessionState struct {
	evaluation.SessionTurns
	revision int
	// continuable is false for a session keyed by its trace id (its trace's turns, open
	// only while the tracker holds it, never continued): it is not kept in the
	// continuation store.
	continuable bool
	// held: this instance recorded that it holds the session open (store.Recovery.Hold).
	held bool
	// hold is the hold last queued for the session (shard.evaluate): written again
	// before its records waiting to be saved when its write failed (shard.holdsAgain).
	hold store.OpenSession
	// late and evaluated say whether, since the session was loaded here, a closed turn
	// was only late spans of a turn already analysed, and whether one was evaluated: a
	// session that got nothing but late spans ends without a new analysis.
	late, evaluated bool
	// claimed is the hold of a dead instance that the recovery sweep claimed while the
	// session was open here (agentSessionProcessor.claimedOpen), taken at its end; zero
	// when none.
	claimed store.OpenSession
	// unstored: a record of the session was dropped before it could be saved
	// (shard.keepUnsaved), so the shard releases none of its records (shard.release).
	unstored bool
	// releasedBelow is above the index of every saved record the shard let go
	// (shard.release), 0 when none: its end, and a turn that closes late, take them back
	// from the continuation store first (shard.takeBackReleased).
	releasedBelow int
	// loadGivenUp: the end being analysed gave up waiting for the store's records
	// (shard.goesOn); its later load in the same end does not wait again.
	loadGivenUp bool
}

// released reports whether the shard let some of st's saved records go (releasedBelow:
// a released record's index is below a held one's, so it is at least 1).
func (st *sessionState) released() bool { return st.releasedBelow > 0 }

// heldOrReleased is SessionTurns.Holds, and true for a turn st released
// (shard.release): the store.Held filter of a load that is not to take them back.
func (st *sessionState) heldOrReleased(traceID, rootSpanID string, turnIndex, stage int) bool {
	if turnIndex < st.releasedBelow && st.Find(evaluation.TurnID{TraceID: traceID, RootSpanID: rootSpanID}) == nil {
		return true
	}
	return st.Holds(traceID, rootSpanID, turnIndex, stage)
}

// idOfTurn returns the id of closed turn t.
func idOfTurn(t *session.Turn) evaluation.TurnID {
	return evaluation.TurnID{TraceID: t.TraceID, RootSpanID: t.RootSpanID}
}

// defaultHeldRecords is how many saved turn records of an open session a shard holds
// (shard.release): a turn that closes later than the 16 turns after it is rare (it needs
// turn_timeout while the conversation goes on), and 16 to 32 records are some 180 to 350
// KB on bench-e2e's turns (docs/decisions/sessions.md §4.2.2).
const defaultHeldRecords = 16
