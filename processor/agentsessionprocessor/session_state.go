// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
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
	// late and evaluated say whether, since the session was loaded here, a closed turn
	// was only late spans of a turn already analysed, and whether one was evaluated: a
	// session that got nothing but late spans ends without a new analysis.
	late, evaluated bool
}

// idOfTurn returns the id of closed turn t.
func idOfTurn(t *session.Turn) evaluation.TurnID {
	return evaluation.TurnID{TraceID: t.TraceID, RootSpanID: t.RootSpanID}
}
