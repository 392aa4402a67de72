// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContradiction(t *testing.T) {
	tests := []struct {
		followUp, answer, request string
		want                      bool
		evidence                  string
	}{
		{"Lisbon, not Madrid!", "The capital of Portugal is Madrid.", "What is the capital of Portugal?", true, `the answer said "madrid"`},
		{"Canberra, pas Sydney !", "La capitale de l'Australie est Sydney.", "", true, `"pas sydney"`},
		{"¡Dije 200, no 2000!", "He transferido 2.000 euros.", "Transfiere 200 euros.", true, `"dije 200, no 2000": the request's "200" is missing`},
		{"Freitag, nicht Donnerstag!", "Meeting am Donnerstag um 10 Uhr eingetragen.", "", true, `"donnerstag"`},
		{"Ins Büro, nicht nach Hause.", "Ich liefere es an Ihre Privatadresse.", "Liefere es ins Büro.", true, `"ins buro, nicht nach hause": the request's "bur"`},
		// A leading negation answers; it does not contrast.
		{"No, al final del periodo.", "Lo cancelo al final del periodo.", "", false, ""},
		// The answer asked: the user chooses among its options.
		{"Standard, not express.", "Express or standard?", "", false, ""},
		// Y is not something the answer said, and X does not restate the request.
		{"I'm not sure the refund went through.", "Refund R-1 issued.", "Refund order 12.", false, ""},
		{"Is PayPal accepted or not?", "We accept many payment methods.", "", false, ""},
		{"", "x", "y", false, ""},
	}
	for _, tt := range tests {
		ok, conf, ev := Contradiction(tt.followUp, tt.answer, tt.request)
		assert.Equal(t, tt.want, ok, "%q: %s", tt.followUp, ev)
		assert.Equal(t, ok, conf > 0)
		assert.Contains(t, ev, tt.evidence)
	}
}

func TestAcceptance(t *testing.T) {
	for s, want := range map[string]string{
		"OK, then cancel #123 please.":          "ok",
		"Great, can you send me the link?":      "great",
		"D'accord, alors annule la commande.":   "daccord",
		"Vale, entonces cancela el pedido 123.": "vale",
		"Gut, dann storniere Bestellung 123.":   "gut",
		"OK but where is it?":                   "",
		"D'accord, mais la livraison coûte ?":   "",
		"Then refund order 4410.":               "",
		"":                                      "",
	} {
		cue, ok := Acceptance(s)
		assert.Equal(t, want, cue, s)
		assert.Equal(t, want != "", ok, s)
	}
}

func TestCompareFollowUp(t *testing.T) {
	r := CompareFollowUp("Where is order #123?", "Order #123 is in the warehouse.", "OK, then cancel #123 please.")
	assert.Equal(t, []string{"123"}, r.Served)
	assert.Equal(t, []string{"ord"}, r.SwappedOut)
	assert.Equal(t, []string{"cancel"}, r.SwappedIn)
	assert.Equal(t, 0.0, r.Similarity) // {ord} vs {cancel} once 123 is left out

	r = CompareFollowUp("What's the weather in Paris today?", "Paris: 18°C and sunny.", "What's the weather in Lyon today?")
	assert.Equal(t, []string{"pari"}, r.SwappedOut)
	assert.Equal(t, []string{"lyon"}, r.SwappedIn)

	r = CompareFollowUp("Where is my order 5521?", "I can help with orders.", "where is my order 5521")
	assert.True(t, r.Verbatim)
	assert.Equal(t, 1.0, r.Similarity)
	assert.InDelta(t, 1.0/3, r.Answered, 1e-9) // "ord" (1 of weight 1+2)

	r = CompareFollowUp("Is order 4410 eligible for a refund?", "Yes, order 4410 is within the 30-day window and eligible.", "Then refund order 4410.")
	assert.InDelta(t, 0.8, r.Answered, 1e-9)
	assert.Empty(t, r.SwappedOut)

	assert.True(t, CompareFollowUp("👍", "", "ok").Empty)
}

func TestFound(t *testing.T) {
	facts := SalientFacts("Refund order #12345 for $1,200.50 to jane@example.com")
	assert.Equal(t, []bool{true, true, false}, Found(facts, "order 12345, EUR 1200.5"))
	assert.Nil(t, Found(nil, "x"))
}

// TestCorrectionNotOnProblemStatements: the second-edition cues do not fire on a user's own
// problem or on a plain question (decisions/text.md §3.1).
func TestCorrectionNotOnProblemStatements(t *testing.T) {
	const answer = "Your order 5521 shipped yesterday."
	for _, s := range []string{
		"Impossible to log in, help", "Impossible de me connecter depuis hier.", "Imposible conectarme a la app",
		"How many times a day should I take it?", "Combien de fois par jour ?", "Vous n'avez rien en rouge ?",
		"Inutile de m'appeler, je passe demain.", "I swapped the battery, now it won't start.",
		"I ordered the wrong size, can I exchange it?", "Is it not possible to pay later?",
		"Ist es nicht möglich, später zu zahlen?", "¿No puede ser más barato?", "Compute the inverse of this matrix.",
		"Von Köln nach Berlin und umgekehrt, bitte.", "Habe ich schon eine Bestellung?",
	} {
		ok, _, cue := Correction(s, answer)
		assert.False(t, ok, "%q matched %q", s, cue)
	}
	for _, s := range []string{"Impossible, I had $3,000 yesterday.", "Imposible, ayer tenía 3.000 €.", "Unmöglich!"} {
		ok, _, _ := Correction(s, answer)
		assert.True(t, ok, s)
	}
}
