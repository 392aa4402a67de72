// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// benchSession has n turns of the refund flow: 3 agents, 5 tool calls and 2 handoffs
// per turn, one hallucinated parameter every third turn.
func benchSession(n int) *session.AgentSession {
	turns := make([]session.Turn, 0, n)
	for i := 0; i < n; i++ {
		order := fmt.Sprintf("%d", 10000+i)
		u := "Please process a refund for order #" + order + ", amount $49.99."
		final := "Refund R-" + order + " of $49.99 for order #" + order + " has been issued."
		email := `{"to":"jane@example.com","body":"Refund R-` + order + ` issued."}`
		if i%3 == 2 {
			email = `{"to":"jane@example.com","body":"Refund issued.","priority":"high"}`
		}
		turns = append(turns, turn(i, u, final, 1000,
			interaction("planner", u, "", 200,
				reasoningStep("The user wants a refund for order #"+order+". I will hand off to the executor."),
				handoffStep("planner", "executor", "Refund order #"+order+" for $49.99")),
			interaction("executor", "Refund order #"+order+" for $49.99", "Refund R-"+order+" created.", 600,
				reasoningStep("First lookup_order, then issue_refund, then send_email, then pass it to the reviewer."),
				toolStep("lookup_order", `{"order_id":"`+order+`"}`, "order "+order+" delivered, total $49.99", 80),
				toolStep("issue_refund", `{"order_id":"`+order+`","amount":49.99}`, "refund R-"+order+" created", 120),
				toolStep("check_refund_status", `{"refund_id":"R-`+order+`"}`, "R-"+order+" approved", 40),
				toolStep("send_email", email, "sent", 90),
				handoffStep("executor", "reviewer", "Refund R-"+order+" created for order #"+order+", $49.99")),
			interaction("reviewer", "Refund R-"+order+" created", final, 150,
				toolStep("lookup_order", `{"order_id":"`+order+`"}`, "order "+order+" refunded", 30))))
	}
	agents := refundAgents()
	agents[2].Tools = agents[1].Tools[:1]
	return newSession("bench", agents, turns...)
}

func BenchmarkEvaluateSession(b *testing.B) {
	e := newEval(b)
	for _, n := range []int{1, 10, 100} {
		s := benchSession(n)
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = e.AnalyzeSession(s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/session")
		})
	}
}

// e2eSessions are three 3-turn sessions of `make bench-e2e`'s workload (bench/e2e/workload.go,
// seed 1), as the processor assembles them: per turn an invoke_workflow root, two to four
// agents linked by transfer_to_* handoffs, each with two to four tool calls (one call in
// twenty has an argument outside the tool's schema), 26 spans on average. They were made
// by replaying the workload's traces through tracker.Replay (end attribute
// agent_eval.session.end) and encoding the sessions as JSON.
func e2eSessions(b testing.TB) []*session.AgentSession {
	data, err := os.ReadFile(filepath.Join("testdata", "bench", "e2e_sessions.json"))
	if err != nil {
		b.Fatal(err)
	}
	var ss []*session.AgentSession
	if err := json.Unmarshal(data, &ss); err != nil {
		b.Fatal(err)
	}
	return ss
}

// BenchmarkEvaluateE2ETurns evaluates the bench-e2e sessions on the processor's path
// (agentsessionprocessor's shard.evaluate): EvaluateClosedTurn per turn with the previous
// turn's record, FollowUp of the previous record, FinishLast of the last and Aggregate.
// closed evaluates only the turns (EvaluateClosedTurn, the profile's hot spot).
func BenchmarkEvaluateE2ETurns(b *testing.B) {
	e := newEval(b)
	ss := e2eSessions(b)
	turns := 0
	for _, s := range ss {
		turns += len(s.Turns)
	}
	run := func(b *testing.B, whole bool) {
		b.ReportAllocs()
		for b.Loop() {
			for _, s := range ss {
				recs := make([]TurnRecord, 0, len(s.Turns))
				for i := range s.Turns {
					var prev *TurnRecord
					if i > 0 {
						prev = &recs[i-1]
					}
					rec := e.EvaluateClosedTurn(s.ID, s.Agents, &s.Turns[i], i, prev)
					if whole && prev != nil {
						*prev = e.FollowUp(*prev, s.Turns[i].UserMessage)
					}
					recs = append(recs, rec)
				}
				if whole {
					recs[len(recs)-1] = e.FinishLast(recs[len(recs)-1])
					_ = e.Aggregate(SessionMeta{ID: s.ID, Service: s.Service, EndReason: string(s.EndReason)}, recs)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*turns), "µs/turn")
	}
	b.Run("closed", func(b *testing.B) { run(b, false) })
	b.Run("session", func(b *testing.B) { run(b, true) })
}
