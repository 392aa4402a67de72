// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds ReaskFrame: a re-ask that shares too few words with the request for
// CompareFollowUp's similarity, told by its frame ("great, but is the amoxicillin ready
// yet?"; "ok but what day?" after an answer with no date; "so can I or not") (docs/
// decisions/text.md §3.6).

// whenAsks and amountAsks are the question words of two kinds of request whose answer is
// easy to check for: a time and an amount (cueNorm'ed, padded).
var (
	whenAsks = padAll([]string{
		"when", "what time", "what day", "what date", "which day", "how soon", "how long",
		"quand", "quelle heure", "quel jour", "quelle date", "combien de temps", "combien de jours", "delai",
		"cuando", "que hora", "que dia", "que fecha", "cuanto tiempo", "cuantos dias", "plazo",
		"wann", "um wie viel uhr", "welche uhrzeit", "welchem tag", "welcher tag", "wie lange", "wie viele tage",
	})
	amountAsks = padAll([]string{
		"how much", "how many", "what price", "whats the price", "what is the price", "combien", "quel prix",
		"quel est le prix", "cuanto", "cuanta", "cuantos", "cuantas", "que precio", "cual es el precio", "wie viel",
		"wieviel", "wie viele", "was kostet", "welchen preis", "wie teuer",
	})
)

// timeWords say when in an answer ("tomorrow", "in 3 days", "demain", "el lunes", "nächste
// Woche"), next to dates, weekdays, months, clock times and numberWords; and the tokens
// of the when-questions themselves ("day", "heure", "dia", "tag"). As Tokens (stemmed).
var timeWords = newHashSet(timeWordList)

const timeWordList = `today tonight tomorrow yesterday morning afternoon evening noon midnight week weeks
month months day days hour hours minute minutes year
aujourdhui demain hier soir matin midi minuit semaine semaines mois jour jours heure heures
hoy manana ayer tarde noche mediodia semana semanas meses dia dias hora horas minutos
heute morgen gestern abend mittag mitternacht woche wochen monat monate tag tage tagen stunde stunden minuten jahr uhr`

// numberWords are numbers written in words, and amountWords amounts without a number
// ("free", "gratuit"): an answer with one says how many, how much or when ("The pool
// opens at seven", "Parking is free"), cueNorm'ed.
var (
	numberWords = wordSet(`one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty
fifty hundred half quarter dozen un une deux trois quatre cinq six sept huit neuf dix onze douze quinze vingt trente
cent demi demie quart uno dos tres cuatro cinco seis siete ocho nueve diez once doce quince veinte treinta cien
media cuarto eins zwei drei vier funf sechs sieben acht neun zehn elf zwolf zwanzig dreissig hundert halb viertel`)
	amountWords = wordSet(`free gratuit gratuite gratis gratuito gratuita kostenlos umsonst`)
)

// whenVerbs ask about the coming or lasting of what the request named ("when will it
// arrive", "combien de jours ça prend", "wann kommt es an"); a when-question's other
// words must be the request's or the answer's (noNewTokens), these aside. As Tokens.
var whenVerbs = newHashSet(`arrive arrives come comes take takes ready happen arrivera vient prend prendra
faut llega llegara tarda viene kommt ankommen dauert`)

// orNot end a follow-up that insists on a yes or a no ("so can I bring him on board or
// not", "puis-je le rendre ailleurs ou pas", "¿puedo devolverlo en otra tienda o no?",
// "kann ich es woanders abgeben oder nicht"), cueNorm'ed.
var orNot = []string{"or not", "or cant i", "or can i not", "yes or no", "ou pas", "ou non", "oui ou non", "o no", "si o no", "oder nicht", "ja oder nein"}

// FrameYesNo names ReaskFrame's third frame: a follow-up that insists on a yes or a no
// asks again even after "OK." (the caller's acceptance guard does not hold for it: "Okay.
// So if I don't fly at all this year, do my miles expire or not?").
const FrameYesNo = `insists on a yes or a no ("or not") to the request's closed question`

// ReaskFrame reports whether followUp asks the request again in a frame that
// CompareFollowUp's similarity misses, and names it; "" when it does not. Three frames
// (docs/decisions/text.md §3.6, §3.7):
//
//  1. "but" and a question, right after an acceptance or a filler ("great, but is the
//     amoxicillin ready yet?"): of the question's content tokens that the answer lacks
//     (emphasisTokens aside: "yet", "actually"…), at least one is the request's and none
//     is new. A new question on the same subject brings its own words ("ok but what
//     should I wear there?", "mais la gare a-t-elle une consigne ?") and is not one, nor is
//     one about another thing ("but what about the flight back?": otherThingLeads).
//  2. The same kind of question, unanswered: the request and the follow-up both ask when
//     (whenAsks) and the answer says no time (saysWhen: no date, weekday, month, clock
//     time, number in words or time word), or both ask how much or how many (amountAsks)
//     and the answer holds no number, in digits or words, and no "free" (saysAmount); the
//     follow-up brings no content word of its own (noNewTokens: "and when does it close?"
//     after "when does it open?" asks something new). The question may be the follow-up's
//     last sentence (lastQuestion: "Yes, already done. How long until I get it?"); read
//     there, a word that only the answer holds is new too.
//  3. A yes or no insisted on: the request is a closed question ("Can I…?", "Is…?"), the
//     answer does not open with yes or no (yesNoAnswers), and the follow-up ends with
//     "or not" (orNot), opens, after fillers, with the request's first two words, adds
//     no other thing ("too", "aussi": alsoWords) and at most one word that is in neither
//     the request nor the answer; or its last clause does so (lastClause: "Right, but if
//     the box is opened, can I return them or not?") with no such word and no new name
//     before it (newName); or it is only "yes or no?" (bareYesOrNo). FrameYesNo names it.
//
// The caller keeps its other guards (acceptance, a settled yes/no question, a swapped
// entity). Inputs are capped (MaxInputBytes); invalid UTF-8 is read as U+FFFD.
func ReaskFrame(request, answer, followUp string) string {
	return reaskFrame(request, answer, newFollowUpText(followUp))
}

// reaskFrame is ReaskFrame on the follow-up read once (followUpText).
func reaskFrame(request, answer string, f followUpText) string {
	request, answer = capInput(request), capInput(answer)
	if strings.TrimSpace(request) == "" || strings.TrimSpace(answer) == "" {
		return ""
	}
	followUp, n := f.raw, f.norm
	q, but := butQuestion(n, followUp)
	if but && !hasLead(q, otherThingLeads) {
		if fromRequest, other := wordsBeyond(q, followUp, request, answer, emphasisTokens); fromRequest > 0 && other == 0 {
			return `"but" and a question on the request's words the answer lacks`
		}
	}
	last := false // q is the last sentence only: its words must all be the request's
	if !but {
		q = lastQuestion(f)
		last = q != f.bare
	}
	if when, amount := hasAny(q, whenAsks), hasAny(q, amountAsks); (when || amount) &&
		(strings.ContainsAny(followUp, "?？¿") || hasLead(q, questionLeads)) {
		rn := cueNorm(request)
		// After a first sentence, a word the answer named is no word of the request's
		// question ("Found it on the map. When does the bank open?" after "…next to the bank").
		words := answer
		if last {
			words = ""
		}
		switch {
		case when && hasAny(rn, whenAsks) && !saysWhen(answer, cueNorm(answer)) && noNewTokens(q, followUp, request, words, whenAsks):
			return "asks when again; the answer says no time"
		case amount && hasAny(rn, amountAsks) && !saysAmount(answer, cueNorm(answer)) &&
			noNewTokens(q, followUp, request, words, amountAsks):
			return "asks how much again; the answer holds no number"
		}
	}
	if insistsOnYesNo(n, f.bare, followUp, request, answer) {
		return FrameYesNo
	}
	return ""
}

// lastQuestion returns the question of the follow-up f that the when and how-much frame
// reads: its last sentence, cueNorm'ed and without fillers, when that sentence ends with a
// question mark and comes after another ("Yes, already done. How long until I get the
// replacement?": the first sentence grants the answer's point and asks nothing); else the
// whole follow-up without its leading fillers (f.bare).
func lastQuestion(f followUpText) string {
	last := lastSentence(f.raw)
	if len(last) == len(strings.TrimRight(f.raw, " \t\r\n")) || !strings.ContainsAny(last, "?？") {
		return f.bare
	}
	return withoutFillers(cueNorm(strings.TrimLeft(last, " ¿")))
}

// butQuestion returns the part of the cueNorm'ed follow-up n after a "but" (butWords)
// that comes first or right after one to three words of acceptance or filler, when the
// raw follow-up s is a question (a question mark, or a question word after the "but").
func butQuestion(n, s string) (string, bool) {
	_, rest, ok := butLead(n)
	if !ok || !strings.ContainsAny(s, "?？¿") && !hasLead(rest, questionLeads) {
		return "", false
	}
	return rest, true
}

// butLead splits the cueNorm'ed follow-up n at a "but" that comes first or right after
// one to three words of acceptance or filler ("fine, but …", "oui mais …"): the words
// before it and the rest, each padded.
func butLead(n string) (head, rest string, ok bool) {
	words := strings.Fields(n)
	for i := 0; i < len(words) && i < 4; i++ {
		if w := words[i]; w == "but" || w == "mais" || w == "pero" || w == "aber" {
			head = " " + strings.Join(words[:i], " ") + " "
			if i > 0 && !acceptsOrFills(head) {
				return "", "", false
			}
			return head, " " + strings.Join(words[i+1:], " ") + " ", true
		}
	}
	return "", "", false
}

// acceptsOrFills reports whether the cueNorm'ed words head are an acceptance ("great",
// "sounds good") or fillers only ("yes", "oh", "bueno").
func acceptsOrFills(head string) bool {
	if _, ok := acceptance(head); ok {
		return true
	}
	// withoutFillers keeps a filler that is the whole text: read it before a stand-in word.
	return withoutFillers(head+"x ") == " x "
}

// otherThingLeads open a question about another thing ("…but what about the flight
// back?", "mais et pour…", "pero y…"), cueNorm'ed.
var otherThingLeads = newLeadSet([]string{"what about", "how about", "and", "et", "et pour", "y", "und", "was ist mit",
	"quid de", "que tal"})

// emphasisTokens are words a re-ask adds without asking anything new ("is it ready yet?",
// "how do I actually…", "when exactly?"), as Tokens.
var emphasisTokens = newHashSet(`yet already actually exactly really now still please just deja vraiment exactement
maintenant encore alors donc ya realmente exactamente ahora todavia entonces pues schon wirklich eigentlich genau
jetzt noch dann`)

// hasAny reports whether the cueNorm'ed text n holds one of the padded phrases.
func hasAny(n string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// weekdayNames maps the full weekday names of the four languages (cueNorm'ed, singular
// or plural) to the English name: an answer that names one says when (saysWhen).
var weekdayNames = func() map[string]string {
	m := map[string]string{}
	en := strings.Fields("monday tuesday wednesday thursday friday saturday sunday")
	for _, l := range []string{
		"monday tuesday wednesday thursday friday saturday sunday",
		"lundi mardi mercredi jeudi vendredi samedi dimanche",
		"lunes martes miercoles jueves viernes sabado domingo",
		"montag dienstag mittwoch donnerstag freitag samstag sonntag",
	} {
		for i, w := range strings.Fields(l) {
			m[w] = en[i]
			if !strings.HasSuffix(w, "s") {
				m[w+"s"] = en[i] // "Tuesdays", "samedis"
			}
		}
	}
	return m
}()

// saysWhen reports whether the answer (raw s, cueNorm'ed n) says a time: a date, a
// weekday or month name, a clock time ("14:05", "7am", "7 pm"), a number in words, or one
// of timeWords.
func saysWhen(s, n string) bool {
	words := strings.Fields(n)
	for i, w := range words {
		if _, ok := weekdayNames[w]; ok {
			return true
		}
		if _, ok := months[w]; ok && len(w) > 3 {
			return true
		}
		if _, ok := numberWords[w]; ok {
			return true
		}
		if t := strings.TrimSuffix(strings.TrimSuffix(w, "am"), "pm"); len(t) < len(w) && t != "" && allDigits(t) {
			return true // "7am", "10pm"
		}
		if (w == "am" || w == "pm") && i > 0 && allDigits(words[i-1]) {
			return true // "7 am"
		}
	}
	for _, t := range Tokens(s) {
		if timeWords.has(t) {
			return true
		}
	}
	for i := 1; i+1 < len(s); i++ { // a clock time: "14:05", "9:30"
		if s[i] == ':' && isDigitByte(s[i-1]) && isDigitByte(s[i+1]) {
			return true
		}
	}
	if !strings.ContainsAny(s, "0123456789") {
		return false // every date SalientFacts reads has a digit
	}
	for _, f := range SalientFacts(s) {
		if f.Kind == KindDate {
			return true
		}
	}
	return false
}

// saysAmount reports whether the answer (raw s, cueNorm'ed n) says how many or how much: a
// digit, a number in words or an amount word ("free").
func saysAmount(s, n string) bool {
	if strings.ContainsAny(s, "0123456789") {
		return true
	}
	for _, w := range strings.Fields(n) {
		if _, ok := numberWords[w]; ok {
			return true
		}
		if _, ok := amountWords[w]; ok {
			return true
		}
	}
	return false
}

// noNewTokens reports whether the question q of followUp (cueNorm'ed, after its "but" or
// fillers) has no content token, the question words asks, time words, when-verbs and
// emphasis aside, that is in neither the request nor the answer: it asks the request's
// question again, not a new one ("and when does it close?" after "when does it open?").
// Tokens that cueNorm glued ("c'est" → "cest") and followUp lacks are not words of it.
func noNewTokens(q, followUp, request, answer string, asks []string) bool {
	for _, a := range asks {
		q = strings.ReplaceAll(q, a, " ")
	}
	_, other := wordsBeyond(q, followUp, request, answer, timeWords, whenVerbs, emphasisTokens)
	return other == 0
}

// wordsBeyond counts the content tokens of the cueNorm'ed question q (of the raw followUp)
// that the answer lacks: those of the request (fromRequest) and the others (other). Tokens
// of the ignored sets are not counted, nor tokens that cueNorm glued ("c'est" → "cest")
// and followUp lacks as a word.
func wordsBeyond(q, followUp, request, answer string, ignore ...hashSet) (fromRequest, other int) {
	req, ans, raw := newHashSet(request), newHashSet(answer), newHashSet(followUp)
tokens:
	for _, t := range Tokens(q) {
		if ans.has(t) || !raw.has(t) {
			continue
		}
		for _, set := range ignore {
			if set.has(t) {
				continue tokens
			}
		}
		if req.has(t) {
			fromRequest++
		} else {
			other++
		}
	}
	return fromRequest, other
}

// insistsOnYesNo is ReaskFrame's frame 3 on the cueNorm'ed follow-up n (bare: without
// its leading fillers).
func insistsOnYesNo(n, bare, raw, request, answer string) bool {
	ends := false
	for _, o := range orNot {
		if strings.HasSuffix(n, " "+o+" ") {
			ends = true
			break
		}
	}
	if !ends || yesNoAnswers[firstWord(answer)] {
		return false
	}
	r := strings.Fields(cueNorm(request))
	if len(r) > 0 && (yesNoAuxiliaries[r[0]] || yesNoModals[r[0]]) && bareYesOrNo[strings.TrimSpace(n)] {
		return true // "Yes or no?" alone
	}
	if len(r) < 2 || !yesNoAuxiliaries[r[0]] && !yesNoModals[r[0]] || hasWord(n, alsoWords) {
		return false // not a closed question; "Can I bring my cat too, or not?": another thing
	}
	// The question opens the follow-up, or its last clause after a condition or a grant
	// ("Right, but if the box is already opened, can I return them or not?").
	q, allowed := bare, 1
	if f := strings.Fields(q); len(f) < 2 || r[0] != f[0] || r[1] != f[1] {
		lc := lastClause(raw)
		q = withoutFillers(cueNorm(lc))
		if f := strings.Fields(q); len(f) < 2 || r[0] != f[0] || r[1] != f[1] {
			return false
		}
		// Read in the last clause: no new word at all, and no new name before it ("Good to
		// know. Can I bring my cat or not?", "…if I go to Switzerland, can I take the car or
		// not?"). German capitalises every noun: there, the words are enough.
		allowed = 0
		if languageOf(raw, 1) != "de" && newName(raw[:strings.LastIndex(raw, lc)], request, answer) {
			return false
		}
	}
	// At most one word of the question that is in neither the request nor the answer: "so
	// can I bring him on board or not" re-asks; "¿Puedo llevar comida para el bebé o no?"
	// asks anew.
	_, other := wordsBeyond(q, raw, request, answer, emphasisTokens)
	return other <= allowed
}

// lastClause returns the text of s after its last clause or sentence mark that is followed
// by more text (lastSentence, and commas); a clause that is only "or not" (orNot: "…, can I
// return them, or not?") stays with the one before it.
func lastClause(s string) string {
	s = lastSentence(s)
	t := strings.TrimRight(s, ",.!?？ ")
	i := strings.LastIndexAny(t, ",;")
	if i >= 0 {
		if tail := cueNorm(t[i+1:]); slices.ContainsFunc(orNot, func(o string) bool { return tail == " "+o+" " }) {
			i = strings.LastIndexAny(t[:i], ",;")
		}
	}
	if i >= 0 {
		return s[i+1:]
	}
	return s
}

// newName reports whether s holds a capitalised word, not the first of a sentence nor
// "I", whose token is in neither the request nor the answer: another place or thing
// named ("if I go to Switzerland").
func newName(s, request, answer string) bool {
	words := strings.Fields(s)
	var req, ans hashSet
	for i, w := range words {
		if i == 0 || w == "I" || strings.ContainsAny(words[i-1][len(words[i-1])-1:], ".!?") {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) {
			continue
		}
		t := Tokens(w)
		if len(t) != 1 {
			continue
		}
		if req == nil {
			req, ans = newHashSet(request), newHashSet(answer)
		}
		if !req.has(t[0]) && !ans.has(t[0]) {
			return true
		}
	}
	return false
}

// bareYesOrNo are follow-ups that only ask for the yes or no (cueNorm'ed, trimmed).
var bareYesOrNo = map[string]bool{"yes or no": true, "oui ou non": true, "si o no": true, "ja oder nein": true}

// alsoWords add another thing to a question ("…too", "aussi", "también", "auch"),
// cueNorm'ed.
var alsoWords = []string{"too", "also", "as well", "aussi", "egalement", "tambien", "auch", "ebenfalls"}

// yesNoModals open a closed question that asks what the user may or can do ("Can I
// return the car elsewhere?", "Puis-je…", "Kann ich…"); yesNoAuxiliaries leave them out
// because "can you" asks for something.
var yesNoModals = map[string]bool{"can": true, "could": true, "may": true, "will": true, "would": true,
	"puis": true, "peux": true, "puede": true, "puedo": true, "kann": true, "darf": true, "konnen": true}
