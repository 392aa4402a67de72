// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestCoordinationComponents builds duplicate work and ping-pong by hand.
func TestCoordinationComponents(t *testing.T) {
	e := newEval(t)
	agents := []session.AgentDefinition{
		{ID: "a", ToolsSource: "config", Tools: []session.ToolDefinition{{Name: "lookup_order", Parameters: []byte(lookupOrderSchema)}}},
		{ID: "b", ToolsSource: "config", Tools: []session.ToolDefinition{{Name: "lookup_order", Parameters: []byte(lookupOrderSchema)}}},
	}
	u := "Where is order 1?"
	// a and b both look up order 1 with the same arguments (key order differs), and b
	// looks up order 2: 3 calls of a shared tool, 1 duplicated → 1 − 1/3.
	s := newSession("dup", agents, turn(0, u, "Order 1 is here.", 10,
		interaction("a", u, "", 5, toolStep("lookup_order", `{"order_id":"1"}`, "order 1 here", 1)),
		interaction("b", u, "Order 1 is here.", 5, toolStep("lookup_order", ` { "order_id" : "1" } `, "order 1 here", 1),
			toolStep("lookup_order", `{"order_id":"2"}`, "order 2 there", 1))))
	a := e.AnalyzeSession(s)
	score(t, "no_duplicate_work", 2.0/3, a.Coordination.NoDuplicateWork)
	score(t, "role_adherence", 1, a.Coordination.RoleAdherence)
	score(t, "no_ping_pong", null, a.Coordination.NoPingPong)
	score(t, "context_preserved", null, a.Coordination.ContextPreserved)
	score(t, "coordination", (2.0/3+1)/2, a.CoordinationScore)

	// a, b, a make the same call: b repeats a's call, and a's second call repeats b's
	// → 2 duplicated of 3 shared.
	aba := newSession("aba", agents, turn(0, u, "ok", 10,
		interaction("a", u, "", 1, toolStep("lookup_order", `{"order_id":"1"}`, "x", 1)),
		interaction("b", u, "", 1, toolStep("lookup_order", `{"order_id":"1"}`, "x", 1)),
		interaction("a", u, "ok", 1, toolStep("lookup_order", `{"order_id":"1"}`, "x", 1))))
	score(t, "no_duplicate_work", 1.0/3, e.AnalyzeSession(aba).Coordination.NoDuplicateWork)
	// The same agent repeating its own call is not duplicated work between agents, and
	// a tool only one agent calls is not shared.
	self := newSession("self", agents, turn(0, u, "ok", 10,
		interaction("a", u, "", 1, toolStep("lookup_order", `{"order_id":"1"}`, "x", 1), toolStep("lookup_order", `{"order_id":"1"}`, "x", 1),
			handoffStep("a", "b", "order 1")),
		interaction("b", u, "ok", 1)))
	score(t, "no_duplicate_work", null, e.AnalyzeSession(self).Coordination.NoDuplicateWork)

	// a→b, b→a, a→b, b→a: two overlapping A→B→A→B windows → 1 − 0.5·2 = 0.
	pp := newSession("pp", agents, turn(0, u, "Order 1 is here.", 10,
		interaction("a", u, "", 1, handoffStep("a", "b", "order 1")),
		interaction("b", "", "", 1, handoffStep("b", "a", "order 1")),
		interaction("a", "", "", 1, handoffStep("a", "b", "order 1")),
		interaction("b", "", "Order 1 is here.", 1, handoffStep("b", "a", "order 1"))))
	a = e.AnalyzeSession(pp)
	score(t, "no_ping_pong", 0, a.Coordination.NoPingPong)
	assert.Contains(t, a.Explanations[keyNoPingPong], "2 loop(s)")
	score(t, "context_preserved", 1, a.Coordination.ContextPreserved)
	score(t, "coordination", 0.5, a.CoordinationScore)

	// An unauthorised call by a coordinating agent lowers role adherence.
	ra := newSession("ra", agents, turn(0, u, "ok", 10,
		interaction("a", u, "", 1, toolStep("delete_order", `{}`, "", 1), handoffStep("a", "b", "order 1")),
		interaction("b", "", "ok", 1, toolStep("lookup_order", `{"order_id":"1"}`, "", 1))))
	a = e.AnalyzeSession(ra)
	score(t, "role_adherence", 0.5, a.Coordination.RoleAdherence)
}

// TestCoordinationAbsent: with fewer than two coordinating agents every component and
// the score are absent, with the same reason.
func TestCoordinationAbsent(t *testing.T) {
	recs := []TurnRecord{{Summary: TurnSummary{Participants: []string{"a"}, SharedCalls: 2, Handoffs: 1}}}
	a := Analysis{Explanations: map[string]string{}}
	sessionCoordination{}.evaluate(newEval(t), sessionInput{recs: recs}, &a)
	assert.Nil(t, a.CoordinationScore)
	assert.Equal(t, CoordinationComponents{}, a.Coordination)
	for _, k := range []string{keyCoordinationScore, keyNoDuplicateWork, keyContextPreserved, keyRoleAdherence, keyNoPingPong, keyDependencyCompl} {
		assert.True(t, strings.HasPrefix(a.Explanations[k], "null: fewer than two agents coordinate"), k)
	}
}

// runComponent runs one coordination component over recs and the turn results trs.
func runComponent(t *testing.T, comp coordinationComponent, recs []TurnRecord, trs []TurnResult, participants ...string) (*float64, string) {
	t.Helper()
	x := coordinationInput{recs: recs, participants: map[string]bool{}}
	for _, p := range participants {
		x.participants[p] = true
	}
	return comp.evaluate(newEval(t), x, &Analysis{TurnResults: trs, Explanations: map[string]string{}})
}
