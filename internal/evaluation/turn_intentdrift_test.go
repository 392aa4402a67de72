// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

func TestIntentDrift(t *testing.T) {
	tests := []struct {
		name        string
		user, final string
		steps       []session.AgentStep
		want        float64
		explains    string // in the explanation, when set
	}{
		// request tokens {compar, 111, 222}: the answer has 111 only → 1 − 1/3.
		{"answer covers a third", "Compare 111 and 222", "111 is larger", nil, 2.0 / 3, ""},
		{"answer covers all", "Compare 111 and 222", "Comparing 111 with 222: 222 is larger", nil, 0, ""},
		{"nothing relevant", "Compare 111 and 222", "The weather is sunny", nil, 1, ""},
		// the best item wins: the tool call names both numbers.
		{"best item is a tool call", "Compare 111 and 222", "done",
			[]session.AgentStep{toolStep("compare", `{"a":111,"b":222}`, "", 1)}, 0, ""},
		{"no user content → null", "", "anything", nil, null, ""},
		{"a closing thanks states no intent → null", "Thanks!", "You're welcome, have a nice day.", nil, null, ""},
		{"two content words are an intent", "Where is order 555?", "The weather is sunny", nil, 1, ""},
		{"no action or answer → null", "Compare 111 and 222", "", nil, null, ""},
		// Task words (docs/scoring.md §5.3): another task done on the user's object, by a
		// call's name, is drift 1; an answer's words are not an action.
		{"a summary when a translation was asked", "Translate my cover letter into German, please.",
			"Here is a summary of your cover letter: five years in logistics.",
			[]session.AgentStep{toolStep("summarize_document", `{"document":"cover_letter.docx"}`, "5y logistics", 1)}, 1, "another task"},
		{"a discount when a cancellation was asked", "Cancel my Premium streaming plan today.",
			"I applied 30% off your Premium plan instead.",
			[]session.AgentStep{toolStep("apply_discount", `{"plan":"premium","percent":30}`, "applied", 1)}, 1, "another task"},
		{"a cancellation served by a delete", "Cancel my dentist appointment on Friday.",
			"Your Friday appointment is removed.",
			[]session.AgentStep{toolStep("delete_appointment", `{"appointment_id":"AP-7781"}`, "deleted", 1)}, 0, ""},
		{"a refund served by a cancellation", "I want a refund for order 6620, it hasn't shipped yet.",
			"Order 6620 is cancelled.",
			[]session.AgentStep{toolStep("cancel_order", `{"order_id":"6620"}`, "cancelled", 1)}, 0, ""},
		// Only the calls' names say what the agents did: an answer's side effects do not.
		{"an answer naming another task is no other task", "Book two tickets for the Friday jazz concert.",
			"Your two tickets for Friday's jazz concert are confirmed; you can track the e-ticket delivery in the app.",
			[]session.AgentStep{toolStep("create_order", `{"event":"jazz-fri","qty":2}`, "order 8812", 1)}, 0, ""},
		{"a call that does the requested task keeps the veto off", "Translate my cover letter into German, please.",
			"Here is the German version, and a summary of your cover letter.",
			[]session.AgentStep{toolStep("translate_document", `{"document":"cover_letter.docx","to":"de"}`, "ok", 1),
				toolStep("summarize_document", `{"document":"cover_letter.docx"}`, "5y logistics", 1)}, 0, ""},
		// A handoff payload restates the request; it is no action of the other task's.
		{"a payload restating the task does not serve it", "Cancel my Premium streaming plan today.",
			"I applied 30% off your Premium plan instead.",
			[]session.AgentStep{handoffStep("a", "retention", "cancel the premium plan"),
				toolStep("apply_discount", `{"plan":"premium","percent":30}`, "applied", 1)}, 1, "another task"},
		{"no call: shared words decide", "What's the weather in Paris tomorrow?", "Tomorrow in Paris: 18°C and sunny.", nil, 0, ""},
		// The requested task on the request's object: the call's name does the task the
		// request names and its arguments hold the request's object (docs/scoring.md §5.3).
		{"a forecast for the asked city", "Will it rain in Lisbon on Saturday?",
			"Yes, there's an 80% chance of showers, take an umbrella.",
			[]session.AgentStep{toolStep("get_forecast", `{"city":"Lisbon","date":"2025-06-14"}`, "showers 80%", 1)}, 0,
			"does the requested weather on the request's lisbon"},
		{"a time is no object", "Will it rain in Oslo on Saturday?", "Bergen on Saturday: dry.",
			[]session.AgentStep{toolStep("get_forecast", `{"city":"Bergen","date":"Saturday"}`, "dry", 1)}, 2.0 / 3, "1 − coverage"},
		{"the requested task on another object", "Cancel my dentist appointment on Friday.",
			"Your gym plan is cancelled.",
			[]session.AgentStep{toolStep("cancel_subscription", `{"plan":"gym"}`, "cancelled", 1)}, 0.75, "1 − coverage"},
		{"a call that also does another task", "Delete the Lisbon photos.", "Your Lisbon booking is cancelled.",
			[]session.AgentStep{toolStep("cancel_booking", `{"city":"Lisbon"}`, "cancelled", 1)}, 2.0 / 3, "1 − coverage"},
		{"a hotel search for a weather question is another task", "Will it rain in Porto tomorrow?",
			"Here are three hotels in Porto with free cancellation.",
			[]session.AgentStep{toolStep("search_hotels", `{"city":"Porto"}`, "3 results", 1)}, 1, "another task"},
		// Beside an action a lookup word is its object or its reason, and a lookup on the
		// way to an action is no other task (review 13).
		{"a hotel named beside an action", "Summarize the reviews of Hotel Astoria.",
			"Your room at the Astoria is booked for Friday.",
			[]session.AgentStep{toolStep("book_room", `{"hotel":"Astoria"}`, "booked", 1)}, 1, "another task"},
		{"a delay as the reason of an action", "My train was delayed two hours, refund my ticket.",
			"Your ticket is refunded: 42 euros back on your card.",
			[]session.AgentStep{toolStep("issue_refund", `{"ticket":"TK-881"}`, "refunded 42 EUR", 1)}, 0, ""},
		{"a lookup on the way to an action", "Book the cheapest flight to Rome.",
			"The cheapest is 89 euros on Friday; shall I book it?",
			[]session.AgentStep{toolStep("get_fares", `{"to":"Rome"}`, "89 EUR Fri", 1)}, 0, ""},
		{"lookup words as the context of an action", "Prices went up again, just end my gym membership.",
			"Your gym membership ends on the 31st.",
			[]session.AgentStep{toolStep("end_membership", `{"member":"G-19"}`, "ends 2026-01-31", 1)}, 0, ""},
		{"a hotel booked for a booking", "Book me a room in Porto for Friday.",
			"Confirmed: Casa do Rio, Friday, 92 euros.",
			[]session.AgentStep{toolStep("hotel_checkout", `{"hotel":"Casa do Rio","city":"Porto"}`, "confirmed", 1)}, 0, ""},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession("d", nil, turn(0, tt.user, tt.final, 10, interaction("a", "", tt.final, 10, tt.steps...)))
			tr := e.EvaluateTurn(s, 0, true)
			score(t, "intent_drift", tt.want, tr.IntentDrift)
			assert.NotEmpty(t, tr.Explanations[keyIntentDrift])
			assert.Contains(t, tr.Explanations[keyIntentDrift], tt.explains)
		})
	}
	// Session drift is the max over turns.
	s := newSession("d", nil,
		turn(0, "Compare 111 and 222", "Comparing 111 with 222", 10, interaction("a", "", "Comparing 111 with 222", 10)),
		turn(1, "Compare 333 and 444", "333", 10, interaction("a", "", "333", 10)))
	a := e.AnalyzeSession(s)
	score(t, "intent_drift_score", 2.0/3, a.IntentDriftScore)
	assert.Contains(t, a.Explanations[keyIntentDriftScore], "(turn 2)", "turn_index 1 is the second turn")
}

// TestIntentDriftRepeats: a turn that repeats the previous one (its answer and calls, with
// nothing new) anchors a new subject only by the request's own words; a re-ask, a short
// follow-up and a lookup with new arguments are unaffected.
func TestIntentDriftRepeats(t *testing.T) {
	balance := "Your savings account balance is $4,210.55 as of today."
	first := turn(0, "What's the balance on my savings account?", balance, 10,
		interaction("bank", "", balance, 10, toolStep("get_balance", `{"account":"savings"}`, "4210.55 USD", 1)))
	tests := []struct {
		name        string
		user, final string
		call        session.AgentStep
		want        float64
	}{
		{"a new subject answered with the last answer", "And when is my next loan payment due?", balance,
			toolStep("get_balance", `{"account":"savings"}`, "4210.55 USD", 1), 1},
		{"a re-ask answered again", "Sorry, what was the savings balance again?", balance,
			toolStep("get_balance", `{"account":"savings"}`, "4210.55 USD", 1), 0},
		{"a short follow-up with the same tool", "And the checking one?", "Your checking account balance is $1,020.00 as of today.",
			toolStep("get_balance", `{"account":"checking"}`, "1020.00 USD", 1), 0},
		{"a new subject with a new tool", "And when is my next loan payment due?", "Your next loan payment of $310 is due on June 5.",
			toolStep("get_loan_schedule", `{"loan":"auto"}`, "next 2025-06-05 310", 1), 0},
		// The same answer for another account: the call's arguments are new (review 11).
		{"the same tool with new arguments is a new lookup", "And the joint one I share with my wife, at the downtown branch?",
			balance, toolStep("get_balance", `{"account":"JOINT-7731"}`, "4210.55 USD", 1), 0},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession("d", nil, first, turn(1, tt.user, tt.final, 10, interaction("bank", "", tt.final, 10, tt.call)))
			a := e.AnalyzeSession(s)
			score(t, "intent_drift", tt.want, a.TurnResults[1].IntentDrift)
			if tt.want == 1 {
				assert.Contains(t, a.TurnResults[1].Explanations[keyIntentDrift], "repeats the previous one")
			}
		})
	}
}

// FuzzIntentDrift runs intent drift on two-turn sessions built from arbitrary texts and
// tool names (invalid UTF-8, task words, repeated answers): no panic, a score in [0, 1]
// or null, always an explanation, on both entry points (a turn alone with the previous
// record, and a turn of a whole session).
func FuzzIntentDrift(f *testing.F) {
	f.Add("What's the balance on my savings account?", "Your savings balance is $4,210.55.", "get_balance",
		"And when is my next loan payment due?", "Your savings balance is $4,210.55.", "get_balance")
	f.Add("Translate my cover letter into German.", "Here is a summary.", "summarize_document",
		"Cancel my plan", "30% off instead", "apply_discount")
	f.Add("Kündige meinen Vertrag", "Vertrag endet", "vertrag_kuendigen", "\xff\xfe reset", "", "reset_password")
	e := newEval(f)
	f.Fuzz(func(t *testing.T, u1, f1, tool1, u2, f2, tool2 string) {
		s := newSession("fz", nil,
			turn(0, u1, f1, 10, interaction("a", "", f1, 10, toolStep(tool1, `{"q":"`+tool1+`"}`, f1, 1))),
			turn(1, u2, f2, 10, interaction("a", "", f2, 10, toolStep(tool2, `{"q":"`+tool2+`"}`, f2, 1))))
		check := func(where string, d *float64, why string) {
			if d != nil && (*d < 0 || *d > 1) {
				t.Fatalf("%s: intent_drift %v out of [0, 1]: %s", where, *d, why)
			}
			if why == "" {
				t.Fatalf("%s: no explanation", where)
			}
		}
		a := e.AnalyzeSession(s)
		for _, tr := range a.TurnResults {
			check("AnalyzeSession", tr.IntentDrift, tr.Explanations[keyIntentDrift])
		}
		tr := e.EvaluateTurn(s, 1, true)
		check("EvaluateTurn", tr.IntentDrift, tr.Explanations[keyIntentDrift])
	})
}
