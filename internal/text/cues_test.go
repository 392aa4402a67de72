// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCueNorm(t *testing.T) {
	assert.Equal(t, " no i meant order 123 ", cueNorm("No, I meant order #123!"))
	assert.Equal(t, " thats wrong ", cueNorm("That’s   WRONG."))
	assert.Equal(t, " cest faux ", cueNorm("C'est faux"))
	assert.Equal(t, " ", cueNorm("🙂"))
	// Package-level cue lists are normalised at initialisation: the fold table must be ready by then.
	for _, list := range [][]cue{correctionCues, refusalCues, uncertaintyCues, resolutionCues} {
		for _, c := range list {
			assert.Equal(t, cueNorm(c.phrase), c.norm, "cue %q", c.phrase)
		}
	}
}

func TestCorrection(t *testing.T) {
	tests := []struct {
		followUp, prev string
		ok             bool
		conf           float64
		cue            string
	}{
		// seed examples (ReAsk README, RDM)
		{"No, I meant order #123", "", true, 0.95, "no, I meant"},
		{"That's wrong", "", true, 0.95, "that's wrong"},
		{"I asked for Python, not JavaScript!", "", true, 0.95, "I asked for X, not Y"},
		{"Try again", "", true, 0.85, "try again"},
		// other English cues
		{"thats wrong", "", true, 0.95, "that's wrong"},
		{"Incorrect.", "", true, 0.85, "incorrect"},
		{"This is incorrect, the total is 40", "", true, 0.9, "this is incorrect"},
		{"You misunderstood me", "", true, 0.95, "you misunderstood"},
		{"That's not what I asked", "", true, 0.95, "not what I asked"},
		{"I wanted the CSV, not a chart", "", true, 0.95, "I asked for X, not Y"},
		{"I meant the other account", "", true, 0.9, "I meant"},
		{"It still doesn't work", "", true, 0.85, "still doesn't work"},
		{"Wrong, it's 42", "", true, 0.85, "wrong"},
		{"That didn't help at all", "", true, 0.75, "that didn't help"},
		{"Nope", "Here is the sorted list.", true, 0.7, "nope"},
		{"No.", "Here is the sorted list.", true, 0.6, "no"},
		// fr / es / de
		{"C'est faux, je voulais dire la commande 12", "", true, 0.95, "c'est faux"},
		{"Je voulais dire la commande 12", "", true, 0.9, "je voulais dire"},
		{"Eso está mal", "", true, 0.95, "eso está mal"},
		{"No, quise decir el pedido 7", "", true, 0.9, "quise decir"},
		{"Das ist falsch", "", true, 0.95, "das ist falsch"},
		{"Ich meinte die andere Bestellung", "", true, 0.9, "ich meinte"},
		// not corrections
		{"no", "Do you want me to proceed?", false, 0, ""},
		{"No, go ahead", "Shall I cancel it? Let me know.", false, 0, ""},
		{"Nein", "Soll ich fortfahren?", false, 0, ""},
		{"No thanks", "Anything else I can do?", false, 0, ""},
		{"No thanks", "Done.", false, 0, ""},
		{"What's wrong with my code?", "", false, 0, ""},
		{"Thanks, that works!", "Here you go.", false, 0, ""},
		{"Now do the same for order 555", "", false, 0, ""},
		{"Can you also sort descending?", "", false, 0, ""},
		{"", "", false, 0, ""},
		{"🙂", "", false, 0, ""},
		// a correction cue still counts after a question
		{"No, I meant order #123", "Is it order #12?", true, 0.95, "no, I meant"},
	}
	for _, tt := range tests {
		ok, conf, cue := Correction(tt.followUp, tt.prev)
		assert.Equal(t, tt.ok, ok, "Correction(%q, %q) ok", tt.followUp, tt.prev)
		assert.InDelta(t, tt.conf, conf, 1e-9, "Correction(%q, %q) confidence", tt.followUp, tt.prev)
		assert.Equal(t, tt.cue, cue, "Correction(%q, %q) cue", tt.followUp, tt.prev)
	}
}

func TestAskedQuestion(t *testing.T) {
	assert.True(t, askedQuestion("Do you want me to proceed?"))
	assert.True(t, askedQuestion("Shall I cancel it? Let me know.  \n"))
	assert.True(t, askedQuestion("¿Quieres continuar"))
	assert.False(t, askedQuestion("Here is the list."))
	assert.False(t, askedQuestion(""))
	// only the last 300 bytes count
	long := "Is it this? " + string(make([]byte, 400))
	assert.False(t, askedQuestion(long+"done."))
}

func TestRefusal(t *testing.T) {
	yes := []string{
		"I'm sorry, but I can't help with that.",
		"As an AI, I don't have personal opinions.",
		"I am unable to process refunds.",
		"I cannot assist with this request",
		"Je ne peux pas vous aider avec cela.",
		"Lo siento, no puedo ayudarte con eso.",
		"Ich kann Ihnen dabei nicht helfen.",
	}
	no := []string{
		"I can help with that!",
		"Here is your refund: 40 EUR.",
		"The API is unable to return more than 100 rows, so I paged through them.",
		"I can't wait to help you with the next step.",
		"",
	}
	for _, s := range yes {
		assert.True(t, Refusal(s), "Refusal(%q)", s)
	}
	for _, s := range no {
		assert.False(t, Refusal(s), "Refusal(%q)", s)
	}
}

func TestUncertainty(t *testing.T) {
	yes := []string{
		"I'm not sure which order you mean.",
		"Maybe the refund failed.",
		"It might be order 123.",
		"I don't know the answer.",
		"The status is unclear.",
		"Let me check. Maybe it is the billing agent.",
		"Je ne sais pas.",
		"Vielleicht ist es die Rechnung.",
		"No estoy seguro del pedido.",
	}
	no := []string{
		"The refund was processed.",
		"Not sure which tool fits; let me check the docs.",
		"Unclear request, so I will ask the user to clarify.",
		"I'm sure it is order 123.",
		"Maybelline is a brand.",
		"",
	}
	for _, s := range yes {
		assert.True(t, Uncertainty(s), "Uncertainty(%q)", s)
	}
	for _, s := range no {
		assert.False(t, Uncertainty(s), "Uncertainty(%q)", s)
	}
}

// TestCorrectionAcceptanceRetryAndStill holds the rules added after audit c (docs/decisions/text.md
// §3.4): a leading negation before an acceptance, a retry cue an app is reported to say after
// the answer worked, "I meant to ask", an unpunctuated negation before the right value, and
// "still failing"/"same error".
func TestCorrectionAcceptanceRetryAndStill(t *testing.T) {
	tests := []struct {
		followUp, prev string
		ok             bool
		conf           float64
		cue            string
	}{
		// a leading negation, then an acceptance
		{"No, that's perfect", "Done.", false, 0, ""},
		{"Nope, all good", "Done.", false, 0, ""},
		{"nah im good", "Done.", false, 0, ""},
		{"no its fine", "Done.", false, 0, ""},
		{"Non, ça ira, merci", "C'est fait.", false, 0, ""},
		{"No, todo bien", "Hecho.", false, 0, ""},
		{"Nein, alles klar", "Erledigt.", false, 0, ""},
		{"No, that's fine but the date is wrong", "Done.", true, 0.6, "no"},
		{"Nein, das passt nicht", "Erledigt.", true, 0.6, "nein"},
		{"No, that's the wrong file", "Done.", true, 0.8, "that's the wrong"},
		{"No, good grief.", "Done.", true, 0.6, "no"},
		{"No, that's exactly what I didn't want", "Done.", true, 0.6, "no"},
		// retry cues reported after a success
		{"It worked! The screen says try again later", "", false, 0, ""},
		{"Thanks, that fixed it. Now the login page displays 'incorrect password' for Ann, why?", "", false, 0, ""},
		{"It didn't work, the screen says try again", "", true, 0.85, "try again"},
		{"I don't think it worked, the screen says try again", "", true, 0.85, "try again"},
		{"It worked for a minute, then the log says retry. Try again please.", "", true, 0.85, "try again"},
		{"Ça marche pas, l'appli dit de réessayer. Réessaie.", "", true, 0.85, "réessaie"},
		// "I meant to ask" is the user's own question
		{"I meant to ask about Austin", "", false, 0, ""},
		{"I meant to ask about Austin, not Boston", "", false, 0, ""},
		{"I meant Austin, not Boston", "", true, 0.95, "I asked for X, not Y"},
		{"I meant Austin", "", true, 0.9, "I meant"},
		// a negation without punctuation before the right value
		{"nope its canberra", "Sydney.", true, 0.7, "nope"},
		{"nope not that one", "Here it is.", true, 0.7, "nope"},
		{"no its 16", "12.", true, 0.6, "no"},
		{"no its 16?", "12.", false, 0, ""},
		{"non c'est ottawa", "Toronto.", true, 0.6, "non"},
		{"nein es sind 16", "14.", true, 0.6, "nein"},
		{"no puede ser más barato", "Cuesta 20 €.", false, 0, ""},
		{"no its 16", "How many do you want?", false, 0, ""},
		// the fix did not work
		{"Still failing.", "", true, 0.85, "still failing"},
		{"Same error.", "", true, 0.85, "same error"},
		{"Same question for Lyon?", "", false, 0, ""},
		{"Will the same error happen on staging?", "", false, 0, ""},
		{"Sigue sin funcionar", "", true, 0.85, "sigue sin funcionar"},
		{"Funktioniert immer noch nicht", "", true, 0.85, "funktioniert immer noch nicht"},
		{"Ça ne marche toujours pas", "", true, 0.85, "ne marche toujours pas"},
		// sixth round (held-out 6), with review 10's guards: made up, only beside a denial
		// that the thing exists; a field put in another's place, not asked; still slow, at
		// the end or before a comparison. Another person's record and sarcasm are left to
		// the judge (the review's ordinary messages used them innocently).
		{"LASTVALUE doesn't exist. did you make that up?", "", true, 0.85, "did you make that up"},
		{"there is no Batch Resize in the File menu. you just made that up didn't you", "", true, 0.85, "you just made that up"},
		{"Ce raccourci n'existe pas, tu l'as inventé ?", "", true, 0.85, "tu las invente"},
		{"Das gibt es nicht, hast du dir das ausgedacht?", "", true, 0.85, "hast du dir das ausgedacht"},
		{"you just made that up didn't you", "", false, 0, ""},
		{"Haha no, I made that up to test you. Good job!", "", false, 0, ""},
		{"So you invented Ember just now? My son loved her!", "", false, 0, ""},
		{"Hast du dir das ausgedacht? Richtig süß!", "", false, 0, ""},
		{"Done, I made it up this morning. Can I also change my daily goal?", "", false, 0, ""},
		{"Who invented the bicycle?", "", false, 0, ""},
		{"that's someone else's appointment, I see Dr. Lindqvist", "", false, 0, ""},
		{"You put the month where the day should be.", "", true, 0.85, "you put the month where"},
		{"Has puesto el mes donde va el día.", "", true, 0.85, "has puesto el mes donde"},
		{"And you put the month where, second?", "", false, 0, ""},
		{"thanks for nothing, I could have googled that", "", false, 0, ""},
		{"restarted everything. still slow as ever", "", true, 0.85, "still"},
		{"Fait. Toujours aussi lent.", "", true, 0.85, "toujours"},
		{"Still a bit slow but way better, thanks!", "", false, 0, ""},
		{"Still slowly working through the course, but I'll add the lessons next week.", "", false, 0, ""},
		{"Still a slow week at work, so I'll try it tonight.", "", false, 0, ""},
		{"Sigo lento con la lectura, pero leo un poco cada día.", "", false, 0, ""},
		{"Is the shop still slow on Sundays?", "", false, 0, ""},
		// fourth round (held-out 4): an apology before "I meant" is the user's own slip
		{"oops, I meant Poland", "Portugal has 10.4 million people.", false, 0, ""},
		{"Sorry I meant 520 GBP", "250 GBP is 317 USD.", false, 0, ""},
		{"Désolé, je voulais dire l'Australie.", "Vienne.", false, 0, ""},
		{"Perdón, quise decir Suiza.", "Estocolmo.", false, 0, ""},
		{"Entschuldigung, ich meinte Toronto.", "18 Uhr.", false, 0, ""},
		{"No, I meant Poland", "Portugal has 10.4 million people.", true, 0.95, "no, I meant"},
		// the user said it already; the other way round; nothing changed; disbelief
		{"I just told you I'm vegetarian.", "Try the chicken.", true, 0.85, "I just told you"},
		{"Te acabo de decir que viajo con mi perro.", "", true, 0.85, "te acabo de decir"},
		{"wrong way round, euros to dollars", "", true, 0.85, "wrong way round"},
		{"dans l'autre sens", "", true, 0.85, "dans l'autre sens"},
		{"did both, nothing changed", "", true, 0.8, "nothing changed"},
		{"Gemacht, hat sich nichts geändert.", "", true, 0.8, "hat sich nichts geändert"},
		{"there's no way that's right, it's a one-bedroom flat", "", true, 0.8, "there's no way that's"},
		{"Sorry, I meant Poland, not Portugal.", "Portugal has 10.4 million people.", false, 0, ""},
		{"Oops, ich meinte Polen, nicht Portugal", "Portugal hat 10,4 Millionen.", false, 0, ""},
		{"Is the price still the same?", "", false, 0, ""},
		{"There's no way I can make Monday, can we do Tuesday", "", false, 0, ""},
		{"Keine Änderung bei der Adresse, bitte nur den Namen.", "", false, 0, ""},
		{"Wie gesagt, ich brauche es bis Freitag.", "", false, 0, ""},
		{"and how do I loop over a list backwards", "", false, 0, ""},
		// fifth round (held-out 5): a sentence that opens with "still" and says the
		// problem is there; an apology after a filler, and more apologies before "I meant"
		{"Rebooted it twice. Still getting a crash on boot.", "Reboot the PC.", true, 0.85, "still"},
		{"Did that. Still seeing a 503 on every call.", "Restart the service.", true, 0.85, "still"},
		{"still no refund in my account", "Your refund was issued.", true, 0.85, "still no"},
		{"Toujours rien reçu.", "Le colis est parti.", true, 0.85, "toujours"},
		{"Toujours « mot de passe incorrect ».", "Réinitialisez-le.", true, 0.85, "toujours"},
		{"Sigo recibiendo el mismo error.", "Desactiva las alertas.", true, 0.85, "sigo"},
		{"Immer noch kein Empfang.", "Starten Sie den Router neu.", true, 0.85, "immer noch kein"},
		{"Immer noch Fehler 500.", "Cache leeren.", true, 0.85, "immer noch"},
		// Not a problem named, an absence, or three words at most (review of the fifth round).
		{"Found it. Still getting used to the new layout, how do I turn on dark mode?", "", false, 0, ""},
		{"Great. Still the same phone number on the booking, right.", "", false, 0, ""},
		{"Still down for the team lunch tomorrow, add it to my calendar at noon.", "", false, 0, ""},
		{"Still nothing planned for the afternoon, so add a walk in the Tuileries.", "", false, 0, ""},
		{"Still no need for the weekend alarm, turn that one off.", "", false, 0, ""},
		{"Toujours partant pour le dîner de samedi soir, réserve aussi une table.", "", false, 0, ""},
		{"Toujours est-il que je préfère la mer.", "", false, 0, ""},
		{"Sigo con el mismo plan: reserva también el tren de vuelta.", "", false, 0, ""},
		{"Weiterhin die gleiche Kreditkarte verwenden, bitte.", "", false, 0, ""},
		{"Immer noch besser.", "", false, 0, ""},
		{"Still, thanks for trying.", "", false, 0, ""},
		{"Still need the invoice for March though.", "", false, 0, ""},
		{"Still not sure which plan to pick.", "", false, 0, ""},
		{"Is the branch still open at 6?", "", false, 0, ""},
		{"¿Sigue abierta la oficina?", "", false, 0, ""},
		{"Todavía no lo he probado.", "", false, 0, ""},
		{"Toujours aussi rapide, merci !", "", false, 0, ""},
		{"It worked. Still getting used to the new menu though.", "", false, 0, ""},
		{"Oh sorry, I meant the Leeds office, not the York one.", "The York office opens at 9.", false, 0, ""},
		{"Perdona, quería decir la oficina de Vigo, no la de León.", "La oficina de León abre a las 9.", false, 0, ""},
		{"Perdona, pero eso no es lo que pedí.", "Hecho.", true, 0.95, "no es lo que pedí"},
	}
	for _, tt := range tests {
		ok, conf, cue := Correction(tt.followUp, tt.prev)
		assert.Equal(t, tt.ok, ok, "Correction(%q, %q) ok", tt.followUp, tt.prev)
		assert.InDelta(t, tt.conf, conf, 1e-9, "Correction(%q, %q) confidence", tt.followUp, tt.prev)
		assert.Equal(t, tt.cue, cue, "Correction(%q, %q) cue", tt.followUp, tt.prev)
	}
}
