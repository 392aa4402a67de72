// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// evidenceCase is a row of the tests of the answer-aware RDM checks (Contradiction,
// Restatement, Objection): want is the verdict, evidence a part of its evidence.
type evidenceCase struct {
	followUp, answer, request string
	want                      bool
	evidence                  string
}

// checkEvidence runs check over the cases: the verdict, a positive confidence exactly
// when it holds, and the evidence.
func checkEvidence(t *testing.T, check func(followUp, answer, request string) (bool, float64, string), cases []evidenceCase) {
	t.Helper()
	for _, tt := range cases {
		ok, conf, ev := check(tt.followUp, tt.answer, tt.request)
		assert.Equal(t, tt.want, ok, "%q after %q: %s", tt.followUp, tt.answer, ev)
		assert.Equal(t, ok, conf > 0, "%q", tt.followUp)
		assert.Contains(t, ev, tt.evidence, "%q", tt.followUp)
	}
}

func TestContradiction(t *testing.T) {
	tests := []evidenceCase{
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
		// The user rejects what they asked for and names something new: their own slip
		// (fifth round). Rejecting what the answer brought stays a correction, and so does
		// rejecting an echo of the request when X restates the request too (a swap).
		{"Ah sorry, the Leeds office, not the York one.", "The York office opens at 9.", "When does the York office open?", false, ""},
		{"The Ibis was cheaper at 80, not the Novotel.", "Booked the Novotel: 95 euros.", "Compare the Ibis and the Novotel and book the cheaper one.", true, `the answer said "novotel"`},
		{"To Anna Schmidt, not Marc!", "Report sent to Marc.", "Send the report to Anna, not to Marc.", true, `the answer said "marc"`},
		{"Alcalá 210, no 120.", "El piso de Alcalá 120 tiene 85 m².", "¿Cuántos metros tiene Alcalá 120?", false, ""},
		{"Leeds, not York!", "The York office opens at 9.", "When does the Leeds office open?", true, `the answer said "york"`},
		{"From Paris, not from Rome!", "Booked: Rome to Paris on May 3.", "Book a flight from Paris to Rome on May 3.", true, `the answer said "rom"`},
		// Sixth round: "instead of" in a question asks about a substitute; stated, it
		// stays a contrast.
		{"Could I use a book instead of a beanbag?", "Rest the camera on a beanbag or a wall.", "What can I use instead of a tripod?", false, ""},
		{"It takes USB-B, instead of USB-C.", "You need a USB-C to USB-C cable.", "Which cable do I need for the printer?", true, `"instead of usb c": the answer said "usb"`},
		// A denial of what the answer named (denial); not of what it denied itself, of
		// what it never named, nor in a question or with praise.
		{"There's no Resolution Boost in the export dialog.", "Go to File > Export and set the value under 'Resolution Boost'.", "Where do I change the export resolution?", true, `"theres no resolution boost export": the answer named`},
		{"there is no Batch Resize in the File menu. GIMP 2.10.", "Go to File > Batch Resize and pick the folder.", "How do I batch-resize photos in GIMP?", true, `"there is no batch resiz fil"`},
		{"Il n'y a pas d'onglet Espaces dans mon compte.", "Utilisez l'onglet « Espaces » de votre compte lecteur.", "Comment je réserve une salle ?", true, `"il ny a pas d onglet espac compt"`},
		{"No hay ninguna estación Prado Central.", "Toma la línea 12 hasta la estación Prado Central.", "¿Qué metro va al Prado?", true, `"no hay ninguna est prad central"`},
		{"Es gibt kein Menü Belege.", "Die Quittung findest du in der App im Menü 'Belege'.", "Wo finde ich die Quittung?", true, `"es gibt kein menu beleg"`},
		{"There's no parking on site, got it. Tram it is.", "Take tram 4; there is no parking on site.", "How do I get to the Museum of Glass?", false, ""},
		{"There's no hurry, I'll come by for the Ricoh tomorrow.", "The Ricoh in room 2 prints A3.", "Which printer does A3?", false, ""},
		{"There's no Resolution Boost?", "Set the value under 'Resolution Boost'.", "Where do I change the export resolution?", false, ""},
		{"There's no GIMP menu I like more, great answer.", "Open the GIMP menu.", "How do I resize in GIMP?", false, ""},
		{"There's no export resolution setting I can find.", "Set it under Export.", "Where do I change the export resolution?", false, ""},
		// Review 10: a denial after a question; an acknowledgement, politeness, or what the
		// answer itself negated; a tag question keeps a contrast; the user's own choice.
		{"Is that in the export dialog? There's no Resolution Boost.", "Go to File > Export and set the value under 'Resolution Boost'.", "Where do I change the export resolution?", true, `"theres no resolution boost"`},
		{"there isn't any Night Theme under Display", "Open Settings > Display and switch on 'Night Theme'.", "How do I turn on dark mode?", true, `"there isnt any night them display"`},
		{"There's no wifi on the regional lines, okay. I'll download the films beforehand.", "The regional trains have a café car, but no wifi on the regional lines.", "Is there wifi on the train to Bath?", false, ""},
		{"Il n'y a pas de vestiaire, d'accord, je prendrai juste un petit sac.", "Le vestiaire est fermé pendant les travaux.", "Quels sont les horaires du musée ?", false, ""},
		{"Y a pas de souci, je serai là demain.", "Désolé pour le souci : votre colis sera livré demain.", "Ma commande est en retard ?", false, ""},
		{"Es gibt keinen Aufzug im Hostel. Wir schaffen das schon.", "Das Hostel hat leider keinen Aufzug; die Zimmer liegen im dritten Stock.", "Wie komme ich mit Koffern ins Hostel?", false, ""},
		{"No hay aparcamiento propio, iré a la Plaza de Armas.", "El hotel no tiene aparcamiento propio; usa el parking de la Plaza de Armas.", "¿Dónde aparco cerca del hotel?", false, ""},
		{"Why USB-C? It takes USB-B instead of USB-C, doesn't it?", "You need a USB-C to USB-C cable.", "Which cable do I need for the printer?", true, `"instead of usb c"`},
		{"I'll make rice instead of potato salad, the kids prefer it.", "Roasted asparagus or a simple potato salad both go well with salmon.", "What's a good side dish for salmon?", false, ""},
		{"Haré la sopa fría, no el gratinado, que hace calor.", "Puedes hacer un gratinado de calabacín o una sopa fría.", "¿Qué cocino con calabacines?", false, ""},
		// The denial after the thing, and "I don't see any…"; not asked, acknowledged,
		// praised, of the user's own thing or of what the answer negated.
		{"L'onglet Espaces n'existe pas.", "Utilisez l'onglet « Espaces » de votre compte lecteur.", "Comment je réserve une salle ?", true, `"onglet espac nexiste": the answer named`},
		{"Esa estación no existe.", "Toma la línea 12 hasta la estación Prado Central.", "¿Qué metro va al Prado?", true, `"est no existe"`},
		{"Ein Menü Belege gibt es in der App nicht.", "Die Quittung findest du in der App im Menü 'Belege'.", "Wo finde ich die Quittung?", true, `"menu beleg gibt es in der app nicht"`},
		{"I don't see any Resolution Boost in the export dialog.", "Go to File > Export and set the value under 'Resolution Boost'.", "Where do I change the export resolution?", true, `"i dont see any resolution boost export"`},
		{"Je ne trouve aucun onglet Espaces dans mon compte.", "Utilisez l'onglet « Espaces » de votre compte lecteur.", "Comment je réserve une salle ?", true, `"je ne trouve aucun onglet espac compt"`},
		{"The student discount doesn't exist anymore? Oh well.", "Students get a 20% discount with a valid card.", "Any discounts?", false, ""},
		{"The old menu doesn't exist in version 3, okay, I found the new one.", "Open the old menu and pick Export.", "How do I export?", false, ""},
		{"I don't see any issues either, book it.", "Your booking has no issues; the room is free.", "Can you check my booking?", false, ""},
		{"Mine doesn't exist yet, I'll create the account now.", "Log in to your account and open Settings.", "How do I change my email?", false, ""},
	}
	checkEvidence(t, Contradiction, tests)
}

// TestObjection: the disbelieving echo and the answer's language named, with the cases
// that must stay none (docs/decisions/text.md §3.6).
func TestObjection(t *testing.T) {
	tests := []evidenceCase{
		{"Decaf?? I ordered a double espresso.", "Your decaf latte is ready at the counter.", "Is my double espresso ready?", true, `"Decaf": an incredulous echo`},
		{"¿¿Mañana?? Lo necesito hoy.", "Tu pedido llegará mañana por la tarde.", "¿Mi pedido llega hoy?", true, `"Mañana"`},
		{"Gate B7?! The app says A2", "Your flight boards at gate B7.", "Which gate for LH 400?", true, `"Gate B7"`},
		{"Pourquoi tu réponds en espagnol ?", "El museo abre a las 10.", "À quelle heure ouvre le musée ?", true, "names Spanish, the answer's language; the request is in French"},
		{"why is this in german", "Das Museum öffnet um 10 Uhr.", "What time does the museum open?", true, "names German"},
		// A single question mark asks; a thanked echo is delight; an echo of the request's
		// own words is no objection to the answer; a long first sentence is a question.
		{"Decaf?", "Your decaf latte is ready.", "Is my coffee ready?", false, ""},
		{"Tomorrow?! Wonderful, thank you", "Your glasses are ready tomorrow.", "When are my glasses ready?", false, ""},
		{"Espresso?? yes that one", "Your double espresso is ready.", "Is my double espresso ready?", false, ""},
		{"Why would the latte be cold after ten minutes??", "Your decaf latte is ready.", "Is my coffee ready?", false, ""},
		// The request asked for the language, or names another one, or accepts.
		{"Tu peux continuer en anglais ?", "Tomorrow will be sunny in Lyon.", "Réponds en anglais : quel temps demain à Lyon ?", false, ""},
		{"Et en allemand ?", "Good morning is said like this in English.", "Comment dit-on bonjour en anglais ?", false, ""},
		{"Parfait, l'anglais me va.", "The museum opens at 10.", "À quelle heure ouvre le musée ?", false, ""},
		// The review of the fifth round: excitement and praise, a foreign title, a statement.
		{"Wait, atorvastatin?? I take lisinopril.", "Your atorvastatin refill is ready.", "Is my lisinopril refill ready?", true, `"atorvastatin"`},
		{"22.50?! It was 12.50 last week.", "Entry is 22.50 euros for adults.", "How much is entry?", true, `"22.50"`},
		{"Free?! Wow, my kids will love that.", "Entry is free for visitors under 18.", "How much is entry to the Rijksmuseum?", false, ""},
		{"¡¡Gratis!! Qué maravilla, iremos con los niños.", "El domingo la entrada es gratis.", "¿Cuánto cuesta la entrada?", false, ""},
		{"Business class!? No way, that's incredible.", "You're upgraded to business class, seat 2A.", "Upgrade my seat if possible.", false, ""},
		{"Ah, c'est le titre anglais ? Et en italien ?", "The Godfather.", "Quel est le titre original du film « Le Parrain » ?", false, ""},
		{"Sehr gut, dass du auf Französisch schreibst. Füge noch meine Telefonnummer hinzu.", "Bonjour Monsieur Martin, merci pour votre message et à bientôt.", "Schreib mir eine kurze Antwort an den Kunden aus Lyon.", false, ""},
		{"", "x", "y", false, ""},
	}
	checkEvidence(t, Objection, tests)
}

// TestReaskFrame: the three frames of a re-ask that similarity misses, with the new
// questions on the same subject that must stay none (docs/decisions/text.md §3.6).
func TestReaskFrame(t *testing.T) {
	tests := []struct {
		request, answer, followUp string
		want                      string // a part of the frame; "" for none
	}{
		{"Is the 8:05 bus to Malaga cancelled?", "Buses to Malaga leave from bay 4 of the central station.", "ok but is the 8:05 cancelled?", `"but" and a question`},
		{"Quand ouvre la médiathèque ?", "La médiathèque est gérée par la ville.", "oui mais elle ouvre quand ?", `"but" and a question`},
		{"Quand ouvre la médiathèque ?", "La médiathèque est gérée par la ville.", "c'est quand alors ?", "asks when again"},
		{"Wann wird die Heizung repariert?", "Ein Techniker ist informiert.", "Ja, aber wann genau?", "asks when again"},
		{"¿Cuánto cuesta la matrícula?", "La matrícula se paga en secretaría.", "Vale, pero ¿cuánto es?", "asks how much again"},
		{"Can I pay the fine online?", "Fines are issued by the city council.", "so can I pay it online or not", "insists on a yes or a no"},
		// New questions on the same subject, a timed or priced answer, a settled or
		// different yes/no question.
		{"Is the 8:05 bus to Malaga cancelled?", "Buses to Malaga leave from bay 4.", "ok but does it have wifi?", ""},
		{"When does the library open?", "The library opens at 9:30.", "ok but when does it close?", ""},
		{"When does the library open?", "The library opens on Mondays only.", "great, and when do I return books?", ""},
		{"How much is the ticket?", "The ticket is 12 euros.", "ok but how much for a child?", ""},
		{"Is it going to rain in Oslo?", "Oslo tomorrow: 9°C, cloudy.", "so should I cycle or not", ""},
		{"Can I pay the fine online?", "Yes, on the council's website.", "so can I pay it by card or not", ""},
		{"", "x", "but when?", ""},
		// Sixth round: the when-question read in the last sentence, after one that grants
		// the answer's point; "or not" in the last clause, after a condition.
		{"How long does a library card replacement take?", "You can request a replacement card at any branch desk.", "Yes I know. How long does it take?", "asks when again"},
		{"How long does a library card replacement take?", "You can request a replacement card at any branch desk.", "Yes I know. How long does shipping take?", ""},
		{"How long does a library card replacement take?", "Replacement cards take 3 working days.", "Yes I know. How long does it take?", ""},
		{"Can I return opened headphones?", "Our return window is 30 days from delivery.", "Right, but if the box is already opened, can I return them or not?", "insists on a yes or a no"},
		{"Darf ich meinen Hund in den Bus mitnehmen?", "Im Stadtbus gelten die Beförderungsbedingungen.", "Verstehe. Wenn er angeleint ist, darf ich ihn mitnehmen oder nicht?", "insists on a yes or a no"},
		{"Can I return opened headphones?", "Our return window is 30 days from delivery.", "If I lose the receipt, can I return my new wireless speakers or not?", ""},
		{"Can I return opened headphones?", "Our return window is 30 days from delivery.", "Fine, and can I return them in another store too, or not?", ""},
		// Seventh round (decisions/text.md §3.8, not kept): follow-ups near its re-asks that
		// ask something new, which no frame may read as a re-ask.
		{"Can you book a table at Nonna's for 8pm?", "Booked: Nonna's, table for two at 8:00 PM.", "Sure, but what should I wear there?", ""},
		{"Is the hotel pool open in winter?", "The indoor pool is heated.", "Right. But is the sauna open?", ""},
		{"When does the farmers market open on Saturday?", "It opens at 8 AM on Saturdays.", "I see, but which month does it stop for the winter?", ""},
		// Review 10: the last question asks about a thing the answer named; the last clause
		// brings a new word or follows a new name; "…, or not?" stays with its clause.
		{"When does the pharmacy on Main Street open?", "The pharmacy is on Main Street next to the bank.", "Found it on the map. When does the bank open?", ""},
		{"Can I bring my dog to the Lakeside Hotel?", "The Lakeside Hotel has a large garden and a terrace.", "Good to know. Can I bring my cat or not?", ""},
		{"Can I take the rental car to France?", "Our rental terms cover travel within the EU.", "Good to know. And if I go to Switzerland, can I take the car or not?", ""},
		{"Can I return opened headphones?", "Our return window is 30 days from delivery.", "Right, but if the box is already opened, can I return them, or not?", "insists on a yes or a no"},
		// The review of the fifth round.
		{"Can I bring my dog to the hotel?", "The hotel has a garden and a terrace.", "Yes or no?", "insists on a yes or a no"},
		{"Can I return the car at the airport?", "Our airport office is in Terminal 2.", "so can I or can't I?", "insists on a yes or a no"},
		{"What's the baggage allowance on my Iberia flight to Madrid?", "Iberia allows one cabin bag of 10 kg.", "Great, but what about the flight back from Madrid?", ""},
		{"Comment aller à la gare de Lyon depuis Orly ?", "Prenez l'Orlyval puis le RER B.", "D'accord, mais la gare de Lyon a-t-elle une consigne ?", ""},
		{"When does the pool open?", "The pool opens at seven.", "And when does it close?", ""},
		{"How much is a ticket to the Louvre?", "Adult tickets are twenty-two euros.", "How much for children?", ""},
		{"How much does parking cost at the hotel?", "Parking is free for guests.", "How much is it for visitors?", ""},
		{"Can I bring my dog to the hotel?", "Dogs under 10 kg are welcome.", "Can I bring my cat too or not", ""},
		{"¿Puedo llevar líquidos en el equipaje de mano?", "Los líquidos deben ir en envases de 100 ml.", "¿Puedo llevar comida para el bebé o no?", ""},
	}
	for _, tt := range tests {
		got := ReaskFrame(tt.request, tt.answer, tt.followUp)
		if tt.want == "" {
			assert.Empty(t, got, "%q", tt.followUp)
			continue
		}
		assert.Contains(t, got, tt.want, "%q", tt.followUp)
	}
}

// TestRestatement: the three forms of a correction that states the right value, each
// with the cases that must stay none (docs/decisions/text.md §3.5).
func TestRestatement(t *testing.T) {
	tests := []evidenceCase{
		// 1. A new value in place of one the answer produced.
		{"12% of 450 is 54.", "12% of 450 is 48.", "What's 12% of 450?", true, `"54" in place of the answer's "48"`},
		{"The lender's portal shows $6,180.", "Your remaining car loan balance is $8,420.", "How much is left on my car loan?", true, `"6180"`},
		{"It's about 85 grams.", "3 ounces is about 58 grams.", "How many grams are in 3 ounces?", true, `"85" in place of the answer's "58"`},
		{"Auf eurer Website steht 9,90 €.", "Der Versand nach Österreich kostet 4,90 €.", "Wie viel kostet der Versand?", true, `"9.90"`},
		{"Actually it's $15, it's printed on the bill.", "The late fee on your bill is $35.", "What's the late fee?", true, `"15"`},
		// The same question about another value: one of the two served values kept.
		{"12% of 600", "12% of 450 is 54.", "What's 12% of 450?", false, ""},
		// No source, no shared word, not only values: a new constraint.
		{"My budget is $600.", "The Acer Swift 3 at $749 is a strong pick.", "Find me a laptop under $1,000.", false, ""},
		// An instruction, a new request, "then", a question, an acceptance.
		{"Transfer $500 of it to checking.", "Your savings balance is $3,200.", "What's my savings balance?", false, ""},
		{"Now 80 USD.", "50 USD is about 46 EUR.", "Convert 50 USD to EUR.", false, ""},
		{"Book it for 3 then.", "Booked: a table for 2 at 7 PM.", "A table at 7pm please.", false, ""},
		{"Actually, let's look at March 5 instead.", "UA 512 leaves at 9:10 AM on March 3.", "A flight on March 3.", false, ""},
		{"Is it 54?", "12% of 450 is 48.", "What's 12% of 450?", false, ""},
		{"Great, 54 it is.", "12% of 450 is 48.", "What's 12% of 450?", false, ""},
		// The answer asked a question: the value answers it.
		{"3 nights.", "Sure! For how many nights?", "Book me a hotel in Austin.", false, ""},
		// Another kind than the answer's values: an amount is no correction of a time.
		{"The website says tickets are $25.", "The museum is open from 10 to 5 on Mondays.", "Is the museum open on Mondays?", false, ""},
		// The user's own new value, of a value the answer only served.
		{"4pm works better for me.", "Reminder set for 3 PM: call mom.", "Set a reminder for 3pm to call mom.", false, ""},

		// 2. A value of the request that the answer lacks.
		{"We're 6 people.", "Done! Table for 4 on Saturday at 8 PM.", "Reserve a table for 6 on Saturday at 8pm.", true, `"6": the request's value`},
		{"Make it 6 as I asked.", "Done! Table for 4 on Saturday at 8 PM.", "Reserve a table for 6 on Saturday at 8pm.", true, `"6"`},
		{"Also a taxi for 6.", "Done! Table for 4 on Saturday at 8 PM.", "Reserve a table for 6 on Saturday at 8pm.", false, ""},
		{"this ignores 2023", "SELECT * FROM orders LIMIT 5;", "Top 5 orders of 2023.", true, `"2023"`},

		// 3. The other half of the day.
		{"5:15 in the morning", "Alarm set for 5:15 PM tomorrow.", "Wake me up at 5:15 tomorrow.", true, `"am": the answer said "pm"`},
		{"PM!", "Meeting booked for 4 AM.", "Book the meeting at 4.", true, `"pm"`},
		{"Set another one for 7 AM.", "Alarm set for 5:15 PM tomorrow.", "Wake me up at 5:15 tomorrow.", false, ""},
		{"And one at 9 AM", "Alarm set for 5:15 PM tomorrow.", "Wake me up at 5:15 tomorrow.", false, ""},

		// A hedged statement of the value stands in for a citation; a question typed
		// without a question mark does not restate.
		{"pretty sure it's closer to 155", "Two boiled eggs have about 310 calories.", "How many calories in 2 boiled eggs?", true, `"155"`},
		{"yes but what is 72F in C", "Water freezes at 32°F, which is 0°C.", "convert 72 fahrenheit to celsius", false, ""},
		{"what is 40C in F", "30°C is 86°F.", "Convert 30 Celsius to Fahrenheit", false, ""},

		// 4. The request's language.
		{"english please", "Le dimanche, nous sommes ouverts de 10 h à 16 h.", "What are your opening hours on Sunday?", true, `the request is in English, the answer in French`},
		{"en français svp", "On Saturdays we are open from 9 to 6.", "Quels sont vos horaires le samedi ?", true, `the request is in French`},
		{"French please", "On Sundays we're open from 10 AM to 4 PM.", "What are your opening hours on Sunday?", false, ""},
		{"can you say it in English please", "Le dimanche, nous sommes ouverts.", "What are your opening hours on Sunday?", false, ""},

		// Review of the first version: "I am" names no time; a statement about the user
		// is new information; a lone number picks a numbered option; an acceptance after
		// a filler.
		{"I am at work all day.", "The technician will come at 2 PM.", "When is the technician coming?", false, ""},
		{"AM", "The technician will come at 2 PM.", "When is the technician coming?", true, `"am"`},
		{"My budget for a laptop is $600.", "The Acer Swift 3 laptop at $749 is a strong pick.", "Find me a laptop under $1,000.", false, ""},
		{"My budget is 150 euros a night.", "Hotel Roma: 180 euros a night.", "A hotel in Rome.", false, ""},
		{"My bank statement says $600.", "Your balance is $749.", "What's my balance?", true, `"600"`},
		{"2", "Here are three hotels:\n1. Roma, 4.5 stars\n2. Artemide, 4 stars\n3. Nord, 3.5 stars\nLet me know which one you'd like.", "Hotels in Rome", false, ""},
		{"Hmm, great, 54 it is", "12% of 450 is 48.", "What's 12% of 450?", false, ""},

		// Sixth round: a value near one the answer produced (its digits in another order,
		// or all but one), referring back to it or short; not about another person.
		{"It was $78.50, the card statement doesn't lie.", "Your tune-up on 12 May cost $87.50.", "What did I pay for the tune-up?", true, `"78.50" in place of the answer's "87.50"`},
		{"9,142 on my watch.", "You logged 9,412 steps yesterday.", "How many steps did I log yesterday?", true, `"9142"`},
		{"C'est 46 € sur le devis que j'ai reçu.", "La réparation est facturée 64 €.", "Combien coûte ma réparation ?", true, `"46"`},
		{"It was $164.20 on the paper statement I have right here.", "Your May bill was $154.20.", "What was my bill for May?", true, `"164.20"`},
		{"It was $99.00 on the paper statement I have right here.", "Your May bill was $154.20.", "What was my bill for May?", false, ""},
		{"It was 46 for the two of us on the trip to the coast last summer.", "It's 64 km to the coast.", "How far is the coast?", true, `"46"`},
		{"Sarah's card has 1,520 points, she's ahead of me haha.", "You have 1,250 loyalty points on your card.", "How many points do I have?", false, ""},
		{"Her card has 1,520 points.", "You have 1,250 loyalty points on your card.", "How many points do I have?", false, ""},
		{"My sister has 1,520 points, can we merge them?", "You have 1,250 loyalty points.", "How many points do I have?", false, ""},
		// Review 10: a near value that goes on about something else, or about someone else.
		{"It's for 42 kids at the school fair.", "For one batch of 24 cookies you need 250 g of flour.", "How much flour do I need?", false, ""},
		{"There will be 52 of us.", "A group ticket covers up to 25 people.", "How much is a group ticket?", false, ""},
		{"That other shop had them for $78.50 last week.", "The headphones are $87.50 at Bestmart.", "How much are the headphones at Bestmart?", false, ""},
		{"It was 81 in Miami today, lol.", "Tomorrow in Oslo: cloudy, high of 18°C.", "What's the weather in Oslo tomorrow?", false, ""},
		{"She has 1,520 points, she's ahead of me haha.", "You have 1,250 loyalty points on your card.", "How many points do I have?", false, ""},
		{"sarah's card has 1,520 points", "You have 1,250 loyalty points on your card.", "How many points do I have?", false, ""},

		{"", "x", "y", false, ""},
		{"54", "", "What's 12% of 450?", false, ""},
	}
	checkEvidence(t, Restatement, tests)
}

// TestSettledYesNo: a closed question settled by the answer's first word; requests phrased
// as "can you…" are not closed questions.
func TestSettledYesNo(t *testing.T) {
	for _, tt := range []struct {
		request, answer string
		want            bool
	}{
		{"Is the museum open on Mondays?", "Yes, from 10 to 5.", true},
		{"Does the hotel have parking?", "Yes, there is a garage under the hotel.", true},
		{"Est-ce que le musée ouvre le lundi ?", "Non, il est fermé le lundi.", true},
		{"Hat das Museum montags geöffnet?", "Ja, von 10 bis 17 Uhr.", true},
		{"Can you tell me the IBAN?", "Yes, your account ends in 4471.", false},
		{"Is the museum open on Mondays?", "The museum is open from 10 to 5.", false},
		{"Where is my order?", "Yes, it ships soon.", false},
		{"Is the museum open on Mondays", "Yes.", false}, // no question mark: not read as a question
		{"", "Yes.", false},
	} {
		assert.Equal(t, tt.want, SettledYesNo(tt.request, tt.answer), "%q → %q", tt.request, tt.answer)
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
