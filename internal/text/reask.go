// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import "strings"

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
		"wann", "um wie viel uhr", "welchem tag", "welcher tag", "wie lange", "wie viele tage",
	})
	amountAsks = padAll([]string{
		"how much", "how many", "what price", "combien", "quel prix", "cuanto", "cuanta", "cuantos", "cuantas",
		"que precio", "wie viel", "wieviel", "wie viele", "was kostet", "welchen preis",
	})
)

// timeWords say when in an answer ("tomorrow", "in 3 days", "demain", "el lunes", "nächste
// Woche"), next to weekdays, months and dates; and the tokens of the when-questions
// themselves ("day", "heure", "dia", "tag").
var timeWords = wordSet(`today tonight tomorrow yesterday morning afternoon evening noon midnight week weeks
month months day days hour hours minute minutes year am pm
aujourdhui demain hier soir matin midi minuit semaine semaines mois jour jours heure heures an ans annee
hoy manana ayer tarde noche mediodia semana semanas mes meses dia dias hora horas minutos ano anos
heute morgen gestern abend mittag mitternacht woche wochen monat monate tag tage tagen stunde stunden minuten jahr uhr`)

// orNot end a follow-up that insists on a yes or a no ("so can I drop it off elsewhere or
// not", "ça marche ou pas", "¿sí o no?", "geht das oder nicht"), cueNorm'ed.
var orNot = []string{"or not", "yes or no", "ou pas", "ou non", "oui ou non", "o no", "si o no", "oder nicht", "ja oder nein"}

// ReaskFrame reports whether followUp asks the request again in a frame that
// CompareFollowUp's similarity misses, and names it; "" when it does not. Three frames
// (docs/decisions/text.md §3.6):
//
//  1. "but" and a question, right after an acceptance or a filler ("great, but is the
//     amoxicillin ready yet?", "oui mais c'est quand ?"): of the question's content tokens
//     that the answer lacks, at least one is the request's and more are the request's
//     than not. A new question on the same subject brings its own words ("ok but what
//     should I wear there?") and is not one.
//  2. The same kind of question, unanswered: the request and the follow-up both ask when
//     (whenAsks) and the answer says no time (no date, weekday, month, number with a time
//     word, or timeWords), or both ask how much or how many (amountAsks) and the answer
//     holds no number; the follow-up brings at most one content token that is in neither
//     the request nor the answer.
//  3. A yes or no insisted on: the request is a closed question ("Can I…?", "Is…?"), the
//     answer does not open with yes or no (yesNoAnswers), and the follow-up ends with
//     "or not" (orNot) and opens, after fillers, with the request's first two words.
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
	if but {
		ans, req := newHashSet(answer), newHashSet(request)
		inReq, other := 0, 0
		raw := newHashSet(followUp)
		for _, t := range Tokens(q) {
			switch {
			case !raw.has(t): // glued by cueNorm ("c'est" → "cest"), not a word of the follow-up
			case ans.has(t):
			case req.has(t):
				inReq++
			default:
				other++
			}
		}
		if inReq > 0 && inReq > other {
			return `"but" and a question on the request's words the answer lacks`
		}
	}
	if !but {
		q = f.bare
	}
	if when, amount := hasAny(q, whenAsks), hasAny(q, amountAsks); (when || amount) &&
		(strings.ContainsAny(followUp, "?？¿") || hasLead(q, questionLeads)) {
		rn := cueNorm(request)
		switch {
		case when && hasAny(rn, whenAsks) && !saysWhen(answer, cueNorm(answer)) && fewNewTokens(q, followUp, request, answer, whenAsks):
			return "asks when again; the answer says no time"
		case amount && hasAny(rn, amountAsks) && !strings.ContainsAny(answer, "0123456789") &&
			fewNewTokens(q, followUp, request, answer, amountAsks):
			return "asks how much again; the answer holds no number"
		}
	}
	if insistsOnYesNo(n, f.bare, request, answer) {
		return `insists on a yes or a no ("or not") to the request's closed question`
	}
	return ""
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

// hasAny reports whether the cueNorm'ed text n holds one of the padded phrases.
func hasAny(n string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// saysWhen reports whether the answer (raw s, cueNorm'ed n) says a time: a date, a
// weekday or month name, a clock time, or one of timeWords.
func saysWhen(s, n string) bool {
	for _, w := range strings.Fields(n) {
		if _, ok := timeWords[w]; ok {
			return true
		}
		if _, ok := weekdays[strings.TrimSuffix(w, "s")]; ok { // "Saturdays"
			return true
		}
		if _, ok := months[w]; ok && len(w) > 3 {
			return true
		}
		if t := strings.TrimRight(w, "apm"); len(t) < len(w) && t != "" && isDigit(t[len(t)-1]) && len(w)-len(t) == 2 {
			return true // "7am", "10pm"
		}
	}
	for i := 1; i+1 < len(s); i++ { // a clock time: "14:05", "9:30"
		if s[i] == ':' && isDigit(s[i-1]) && isDigit(s[i+1]) {
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

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// fewNewTokens reports whether the question q of followUp (cueNorm'ed, after its "but" or
// fillers) has at most one content token, the question words asks and time words aside,
// that is in neither the request nor the answer. Tokens that cueNorm glued ("c'est" →
// "cest") and followUp lacks are not words of it.
func fewNewTokens(q, followUp, request, answer string, asks []string) bool {
	for _, a := range asks {
		q = strings.ReplaceAll(q, a, " ")
	}
	req, ans, raw := newHashSet(request), newHashSet(answer), newHashSet(followUp)
	other := 0
	for _, t := range Tokens(q) {
		if _, ok := timeWords[t]; ok || req.has(t) || ans.has(t) || !raw.has(t) {
			continue
		}
		if other++; other > 1 {
			return false
		}
	}
	return true
}

// insistsOnYesNo is ReaskFrame's frame 3 on the cueNorm'ed follow-up n (bare: without
// its leading fillers).
func insistsOnYesNo(n, bare, request, answer string) bool {
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
	f := strings.Fields(bare)
	if len(r) < 2 || len(f) < 2 || r[0] != f[0] || r[1] != f[1] {
		return false
	}
	return yesNoAuxiliaries[r[0]] || yesNoModals[r[0]]
}

// yesNoModals open a closed question that asks what the user may or can do ("Can I
// return the car elsewhere?", "Puis-je…", "Kann ich…"); yesNoAuxiliaries leave them out
// because "can you" asks for something.
var yesNoModals = map[string]bool{"can": true, "could": true, "may": true, "will": true, "would": true,
	"puis": true, "peux": true, "puede": true, "puedo": true, "kann": true, "darf": true, "konnen": true}
