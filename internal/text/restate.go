// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"slices"
	"strings"
)

// This file holds Restatement: a correction that states the right value without a cue
// word or a contrast ("12% of 450 is 54." after "… is 48."; "The portal shows $6,180.";
// "We're 6 people." after a request for 6 answered with 4; "AM!" after "6:30 PM";
// "english please" after an English request answered in French)
// (docs/decisions/text.md §3.5).

// restateKinds are the fact kinds a restatement compares: a value of one kind stands in
// for the answer's value of the same kind only (an amount for an amount: "$25 for adults"
// is not a correction of "open from 10 to 5").
var restateKinds = map[string]bool{KindNumber: true, KindAmount: true, KindDate: true, KindID: true}

// citationWords report what a source the user looked at says ("the app shows…", "mon relevé
// indique…", "en la web pone…", "auf der Website steht…"), cueNorm'ed, matched as words.
var citationWords = []string{
	"says", "said", "shows", "showed", "states", "lists", "listed", "reads", "displays", "according to", "indicates",
	"indique", "affiche", "dit", "est ecrit", "cest ecrit", "marque", "selon",
	"dice", "pone", "indica", "muestra", "aparece", "segun",
	"steht", "zeigt", "sagt", "laut", "angezeigt",
}

// assertionWords state the user's own knowledge of the value ("pretty sure that's 36",
// "it should be 42", "je suis sûr que c'est 42", "debería ser 42", "es sollte 42 sein"),
// cueNorm'ed, matched as words: they stand in for a citation.
var assertionWords = []string{
	"pretty sure", "fairly sure", "im sure", "i am sure", "should be", "supposed to be", "must be", "its actually",
	"je suis sur", "je suis sure", "ca devrait etre", "ce devrait etre", "ca doit etre", "normalement cest",
	"estoy seguro", "estoy segura", "deberia ser", "tendria que ser", "tiene que ser", "seguro que es",
	"ich bin sicher", "ich bin mir sicher", "sollte", "musste", "muss doch",
}

// questionLeads open a question typed without a question mark ("what is 72F in C", "is
// the café open on Mondays or not", "quand est-ce que…", "cuánto es…", "wie viel…"): it
// asks, it does not restate. ("was" is German "what" and English "was" alike.)
var questionLeads = newLeadSet([]string{
	"what", "whats", "when", "whens", "where", "wheres", "who", "whos", "why", "how", "hows", "which", "is",
	"are", "does", "do", "did", "isnt", "has", "have", "can", "could", "should", "may",
	"quel", "quelle", "quels", "quelles", "quand", "ou", "pourquoi", "comment", "combien", "est ce", "cest quoi",
	"que", "cual", "cuales", "cuando", "donde", "por que", "como", "cuanto", "cuanta", "cuantos", "cuantas",
	"was", "wann", "wo", "warum", "wie", "welche", "welcher", "welches", "wieviel",
})

// newRequestLeads open a follow-up that asks for something new or changes the user's own
// request ("Now 80 USD.", "Also book…", "Can you…", "Sorry, it's 88214": an apology,
// apologyLeads): a value in it is not a restatement of the right one. cueNorm'ed, matched
// as the first words.
var newRequestLeads = newLeadSet(apologies, []string{
	"now", "also", "and", "then", "next", "another", "can you", "could you",
	"would you", "will you", "please", "pls", "id like", "i would like", "i want", "i need", "lets", "let us",
	"btw", "by the way", "if",
	"maintenant", "et", "aussi", "ensuite", "puis", "peux tu", "pouvez vous", "pourrais tu", "pourriez vous",
	"je voudrais", "je veux", "jaimerais", "si",
	"ahora", "y", "tambien", "luego", "puedes", "podrias", "puede", "quiero", "quisiera", "me gustaria",
	"necesito",
	"jetzt", "und", "auch", "dann", "kannst du", "konnen sie", "konntest du", "ich mochte", "ich will",
	"ich brauche", "bitte", "wenn",
})

// imperativeLeads open an instruction ("Make it 8 PM", "Transfer $500 to checking"): a
// value in it is what the user now wants, not a correction of the answer's. A value of
// the request that the answer lacks is still a correction after one (rule 2 below).
var imperativeLeads = newLeadSet([]string{
	"book", "make", "change", "set", "add", "switch", "move", "cancel", "transfer", "send", "order", "buy",
	"reserve", "schedule", "convert", "calculate", "compute", "try", "use", "give", "show", "find", "get",
	"put", "pay", "split", "round",
	"mets", "ajoute", "passe", "annule", "envoie", "commande", "fais", "calcule",
	"convertis", "donne", "montre", "trouve", "paie", "vire",
	"reserva", "pon", "cambia", "anade", "pasa", "cancela", "envia", "pide", "haz", "calcula", "convierte",
	"dame", "muestra", "busca", "paga", "transfiere",
	"buche", "mach", "mache", "andere", "setze", "fuge", "verschiebe", "storniere", "sende", "schick",
	"bestelle", "rechne", "berechne", "gib", "zeig", "finde", "uberweise", "zahle",
})

// changeWords anywhere in a follow-up mark the user's own new decision ("Book it for 3
// then.", "Alors pour 3."), cueNorm'ed, matched as words.
var changeWords = []string{"then", "alors", "entonces", "dann"}

// Restatement reports whether followUp corrects answer by stating the right value
// (docs/decisions/text.md §3.5), in one of four forms:
//
//  1. A new value in place of one the answer produced: followUp holds a number, amount,
//     date or id (SalientFacts) that is in neither the answer nor the request, of the
//     kind of a value the answer holds and the request does not, and either keeps every
//     value the answer served (in both the request and the answer) or none of them ("12%
//     of 450 is 54." after "12% of 450 is 48." keeps both; "18% of 600" keeps one of two
//     and is the same question about another value). It must cite a source ("the portal
//     shows $6,180"), state the user's own knowledge ("pretty sure it's 155", "should
//     be"), share a content word with the answer ("It's about 85 grams." after "about 58
//     grams"), or hold nothing but values.
//  2. A value of the request that the answer lacks, while the answer holds another value
//     of that kind ("We're 6 people." after a request for 6 answered with a table for 4).
//  3. The other half of the day (English): "AM"/"in the morning" after an answer with a
//     "PM" time, or "PM"/"in the evening" after an "AM" one, with no value other than
//     the request's and the answer's.
//  4. The request's language, named in a follow-up of at most four words, when the
//     answer is in another (languageAskedAgain).
//
// Never when the answer ends with a question, when followUp is a question (a question
// mark in its last sentence, or a question word first: questionLeads), opens by
// accepting the answer (Acceptance) or by asking for something new (newRequestLeads),
// read after leading fillers ("actually", "hmm"…); forms 1 and 3 also not after an
// instruction (imperativeLeads) or with "then" (changeWords).
// evidence names the values. Inputs are capped (MaxInputBytes); invalid UTF-8 is read as
// U+FFFD. Confidence is 0.85 for form 2 and 0.8 for the others.
func Restatement(followUp, answer, request string) (ok bool, confidence float64, evidence string) {
	return restatement(newFollowUpText(followUp), answer, request)
}

// restatement is Restatement on the follow-up read once (followUpText).
func restatement(f followUpText, answer, request string) (ok bool, confidence float64, evidence string) {
	followUp, norm := f.raw, f.bare
	answer, request = capInput(answer), capInput(request)
	if strings.TrimSpace(answer) == "" || askedQuestion(answer) || askedQuestion(lastSentence(followUp)) {
		return false, 0, ""
	}
	if _, accepted := acceptance(norm); accepted || hasLead(norm, newRequestLeads) || hasLead(norm, questionLeads) {
		return false, 0, ""
	}
	up := valueSet(followUp)
	m := meridiem(norm)
	if len(up.list) == 0 && m == "" {
		// 4. The request's language. Else, most follow-ups: nothing to compare.
		return languageAskedAgain(norm, answer, request)
	}
	ans, req := valueSet(answer), valueSet(request)

	// 2. A value of the request the answer lacks.
	for _, f := range up.list {
		if req.has(f) && !ans.has(f) && ans.hasKind(f.Kind) {
			return true, 0.85, `"` + f.Value + `": the request's value, which the answer lacks (it has ` + ans.quotedIf(f.Kind, values{}) + ")"
		}
	}
	if hasLead(norm, imperativeLeads) || hasWord(norm, changeWords) {
		return false, 0, ""
	}

	// 1. A new value in place of one the answer produced.
	kept, served := 0, 0
	for _, f := range ans.list {
		if req.has(f) {
			served++
			if up.has(f) {
				kept++
			}
		}
	}
	if kept == 0 || kept == served {
		produced := ans.produced(req)
		for _, f := range up.list {
			if ans.has(f) || req.has(f) || !produced[f.Kind] {
				continue
			}
			if framesValue(norm, followUp, answer, up, f, ans, req) {
				return true, 0.8, `"` + f.Value + `" in place of the answer's ` + ans.quotedIf(f.Kind, req)
			}
			break // the frame is the follow-up's, whichever value
		}
	}

	// 3. The other half of the day.
	if m != "" {
		if a := meridiem(cueNorm(answer)); a != "" && a != m {
			for _, f := range up.list {
				if !ans.has(f) && !req.has(f) {
					return false, 0, ""
				}
			}
			return true, 0.8, `"` + m + `": the answer said "` + a + `"`
		}
	}
	return false, 0, ""
}

// values is a text's facts of restateKinds, as a set, with the kinds it holds.
type values struct {
	set   map[Fact]struct{}
	list  []Fact // in order, each once
	kinds map[string]bool
}

func valueSet(s string) values {
	vs := values{set: map[Fact]struct{}{}, kinds: map[string]bool{}}
	for _, f := range SalientFacts(s) {
		f = withoutMarker(f)
		if _, dup := vs.set[f]; restateKinds[f.Kind] && !dup {
			vs.set[f] = struct{}{}
			vs.list = append(vs.list, f)
			vs.kinds[f.Kind] = true
		}
	}
	return vs
}

func (vs values) has(f Fact) bool {
	_, ok := vs.set[f]
	return ok
}

func (vs values) hasKind(kind string) bool { return vs.kinds[kind] }

// produced returns the kinds of which vs (the answer's values) holds a value that req
// (the request's) does not: the values the answer produced.
func (vs values) produced(req values) map[string]bool {
	out := map[string]bool{}
	for _, f := range vs.list {
		if !req.has(f) {
			out[f.Kind] = true
		}
	}
	return out
}

// quotedIf quotes the values of kind in vs that are not in except (at most four).
func (vs values) quotedIf(kind string, except values) string {
	var q []string
	for _, f := range vs.list {
		if f.Kind == kind && !except.has(f) && len(q) < 4 {
			q = append(q, `"`+f.Value+`"`)
		}
	}
	return strings.Join(q, ", ")
}

// followUpText is a follow-up read once for the checks of FollowUpEvidence: raw (capped),
// cueNorm'ed (norm) and without its leading fillers (bare).
type followUpText struct{ raw, norm, bare string }

func newFollowUpText(followUp string) followUpText {
	raw := capInput(followUp)
	norm := cueNorm(raw)
	return followUpText{raw: raw, norm: norm, bare: withoutFillers(norm)}
}

// fillers open a follow-up without saying what it does ("Actually, let's…", "Hmm, 4
// nights", "En fait, mettons…", "Bueno, mejor…", "Eigentlich lieber…"): the leads are read
// after them. cueNorm'ed.
var fillers = []string{
	"actually", "well", "hmm", "hm", "um", "uh", "oh", "ah", "so", "ok so", "okay so", "yes", "yeah", "yep",
	"but", "oui", "mais", "pero", "aber", "ja",
	"en fait", "bon", "euh", "ben", "bueno", "pues", "eh", "mmm", "eigentlich", "naja", "na ja",
}

// fillerFirsts are the first words of fillers: a text that opens with none of them has no
// filler to strip (most follow-ups; withoutFillers runs on every one, several times).
var fillerFirsts = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range fillers {
		w, _, _ := strings.Cut(f, " ")
		m[w] = true
	}
	return m
}()

// withoutFillers returns the cueNorm'ed text n without its leading fillers.
func withoutFillers(n string) string {
	if first, _, _ := strings.Cut(strings.TrimPrefix(n, " "), " "); !fillerFirsts[first] {
		return n
	}
	for again := true; again; {
		again = false
		for _, f := range fillers {
			if strings.HasPrefix(n, " "+f+" ") && len(n) > len(f)+2 {
				n, again = n[len(f)+1:], true
			}
		}
	}
	return n
}

// personalLeads open a statement about the user ("My budget is $600.", "We are 5.", "Ich
// habe 3 Kinder."): new information, not a restatement of the answer's value, unless the
// user cites a source for it or says they know it ("My statement says 19.9%.").
var personalLeads = newLeadSet([]string{
	"my", "our", "i", "im", "ive", "ill", "we", "were", "weve",
	"mon", "ma", "mes", "notre", "nos", "je", "jai", "nous",
	"mi", "mis", "nuestro", "nuestra", "yo", "tengo", "somos", "tenemos",
	"mein", "meine", "meinen", "unser", "unsere", "ich", "wir",
})

// othersLeads open a statement about another person ("Her card has 1,520 points", "She
// has…", "Son compte…", "Su saldo…", "Ihr Konto…"), as a possessive name does ("Sarah's
// card…", possessiveName): new information, like personalLeads. Pronouns that also stand
// for a thing ("il", "elle", "er": "Il coûte 46 €") are not among them.
var othersLeads = newLeadSet([]string{
	"his", "her", "their", "he", "she", "they", "hes", "shes", "theyre",
	"son", "sa", "ses", "leur", "leurs",
	"su", "sus", "ella", "ellos", "ellas",
	"sein", "seine", "seinen", "ihr", "ihre", "ihren",
})

// possessiveName reports whether s opens with a word in the possessive ("Sarah's",
// "tom’s"), not a contraction (notNames: "It's", "that's").
func possessiveName(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n\"'«“(")
	end := strings.IndexFunc(s, func(r rune) bool { return !isAlnum(r) })
	return end > 0 && (strings.HasPrefix(s[end:], "'s ") || strings.HasPrefix(s[end:], "’s ")) &&
		!notNames[strings.ToLower(s[:end])]
}

// notNames are the capitalised words that take "'s" without naming anyone ("It's",
// "That's", "Here's").
var notNames = map[string]bool{"it": true, "that": true, "this": true, "there": true, "here": true, "what": true,
	"who": true, "where": true, "when": true, "how": true, "he": true, "she": true, "let": true, "everyone": true,
	"everything": true, "nothing": true, "today": true, "tomorrow": true, "one": true, "why": true, "which": true,
	"somebody": true, "someone": true, "nobody": true, "everybody": true}

// framesValue reports whether the follow-up (original s, cueNorm'ed and filler-free
// norm) frames its new value f as the right one for the answer's: it cites a source or
// asserts it; or, unless it opens as a statement about the user or another person
// (personalLeads, othersLeads, possessiveName), it shares a content word with the answer
// or holds nothing but values (a lone number not the pick of an option the answer
// numbered: "2" after "1. … 2. …"), or it states f first, near a value the answer
// produced (valueFirst, nearValue: "It was $78.50." after "$87.50").
func framesValue(norm, s, answer string, up values, f Fact, ans, req values) bool {
	if hasWord(norm, citationWords) || hasWord(norm, assertionWords) {
		return true
	}
	if hasLead(norm, personalLeads) || hasLead(norm, othersLeads) || possessiveName(s) {
		return false
	}
	if onlyValues(s) {
		return !(len(up.list) == 1 && up.list[0].Kind == KindNumber && numberedOption(answer, up.list[0].Value))
	}
	return sharesWord(s, answer) || valueFirst(norm, f) && nearValue(f, ans, req)
}

// backLeads open a statement about the thing the answer gave ("It was…", "That's…",
// "C'est…", "Fueron…", "Es waren…"), cueNorm'ed.
var backLeads = newLeadSet([]string{
	"it", "its", "it was", "it is", "that", "thats", "that was", "this", "this is",
	"cest", "cetait", "ce", "ca", "ca fait",
	"es", "era", "eran", "fue", "fueron", "son", "eso",
	"es war", "es waren", "es ist", "es sind", "das", "das war", "das waren", "das ist", "das sind",
})

// sourceTokens name where the user read a value or how sure they are ("…, the card
// statement doesn't lie", "on my watch", "sur le devis", "lo tengo aquí delante", "ganz
// bestimmt"), as Tokens.
var sourceTokens = newHashSet(`statement receipt watch app bill invoice screen portal website card quote
devis releve facture ticket recu appli site recibo factura extracto aqui delante web
beleg rechnung quittung kontoauszug bestimmt sicher here`)

// valueFirst reports whether the cueNorm'ed follow-up n states the value f first, after
// the longest of backLeads at most ("It was $78.50", "9,142 on my watch", "C'est 46 €…"),
// and says nothing after it but a source, an assertion (sourceTokens) or other values: a
// statement that goes on about something else ("It's for 42 kids at the school fair", "It
// was 164 in the draft") brings new information (review 10).
func valueFirst(n string, f Fact) bool {
	rest := n
	first, _, _ := strings.Cut(strings.TrimPrefix(n, " "), " ")
	for _, p := range backLeads[first] {
		if strings.HasPrefix(n, p) && len(n)-len(p)+1 < len(rest) {
			rest = n[len(p)-1:]
		}
	}
	d := digitsOf(f.Value)
	words := strings.Fields(rest)
	acc, i := "", 0
	for i < len(words) && len(acc) < len(d) && allDigits(words[i]) {
		acc += words[i]
		i++
	}
	if d == "" || acc != d {
		return false
	}
	source, other := false, false
	for _, t := range Tokens(strings.Join(words[i:], " ")) {
		switch {
		case sourceTokens.has(t):
			source = true
		case !isNumeric(t):
			other = true
		}
	}
	return source || !other
}

// nearValue reports whether f, a value of the follow-up, is near a value of its kind that
// the answer produced (ans, not in req): the same digits in another order ("$78.50" for
// "$87.50", "9,142" for "9,412"), or, from three digits on, the same digits but one
// ("€164.20" for "€154.20"). A user who reads the right figure from a statement writes
// it so; a new request names another.
func nearValue(f Fact, ans, req values) bool {
	d := digitsOf(f.Value)
	if len(d) < 2 {
		return false
	}
	for _, a := range ans.list {
		if a.Kind != f.Kind || req.has(a) {
			continue
		}
		e := digitsOf(a.Value)
		if len(e) != len(d) || e == d {
			continue
		}
		if sameDigits(d, e) || len(d) >= 3 && oneDigitApart(d, e) {
			return true
		}
	}
	return false
}

// digitsOf returns the ASCII digits of v, in order.
func digitsOf(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if isDigitByte(v[i]) {
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// sameDigits reports whether the digit strings a and b (of one length) hold the same
// digits, each as often.
func sameDigits(a, b string) bool {
	var n [10]int
	for i := 0; i < len(a); i++ {
		n[a[i]-'0']++
		n[b[i]-'0']--
	}
	return n == [10]int{}
}

// oneDigitApart reports whether the digit strings a and b (of one length) differ at one
// position only.
func oneDigitApart(a, b string) bool {
	diff := 0
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] {
			diff++
		}
	}
	return diff == 1
}

// numberedOption reports whether a line of answer starts with the list marker "v." or
// "v)" (an option the user may pick by its number).
func numberedOption(answer, v string) bool {
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimLeft(line, " \t*-")
		if strings.HasPrefix(line, v+".") || strings.HasPrefix(line, v+")") {
			return true
		}
	}
	return false
}

// leadSet holds phrases (cueNorm'ed) matched at the start of a cueNorm'ed text, padded
// and indexed by their first word: a text is compared with the few phrases that share
// its first word, not with the whole list.
type leadSet map[string][]string

func newLeadSet(lists ...[]string) leadSet {
	ls := leadSet{}
	for _, l := range lists {
		for _, p := range l {
			w, _, _ := strings.Cut(p, " ")
			ls[w] = append(ls[w], " "+p+" ")
		}
	}
	return ls
}

// lead returns the phrase of ls (unpadded) that opens the padded cueNorm'ed text n, the
// first listed when several do; "" when none does.
func (ls leadSet) lead(n string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(n, " "), " ")
	for _, p := range ls[first] {
		if strings.HasPrefix(n, p) {
			return p[1 : len(p)-1]
		}
	}
	return ""
}

// hasLead reports whether the cueNorm'ed text n opens with one of leads.
func hasLead(n string, leads leadSet) bool { return leads.lead(n) != "" }

// hasWord reports whether the cueNorm'ed text n holds one of words as whole words.
func hasWord(n string, words []string) bool {
	for _, w := range words {
		if strings.Contains(n, " "+w+" ") {
			return true
		}
	}
	return false
}

// onlyValues reports whether s has no content token but numbers and ids ("12% of 450 is
// 54.", "$6,180!").
func onlyValues(s string) bool {
	for _, t := range Tokens(s) {
		if !isNumeric(t) {
			return false
		}
	}
	return true
}

// sharesWord reports whether a and b share a content token that is not a number.
func sharesWord(a, b string) bool {
	bs := newHashSet(b)
	for _, t := range Tokens(a) {
		if !isNumeric(t) && bs.has(t) {
			return true
		}
	}
	return false
}

// lastSentence returns the text after the last sentence end (. ! ?) that is followed by
// more text: whether a follow-up asks a question is read from its end ("Which is it?").
func lastSentence(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexAny(strings.TrimRight(s, ".!?？ "), ".!?？"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// meridiem returns "am" or "pm" when the cueNorm'ed text n names that half of the day
// ("7:45 AM", "7 a.m.", "in the morning", "the morning one", or "AM" alone; "PM", "in the
// evening", "at night", "in the afternoon"), "" when it names neither or both. "am" and
// "pm" count after a number or as the whole text only: "I am at work" names no time.
func meridiem(n string) string {
	am := halfDay(n, "am", "a m") || strings.Contains(n, " in the morning ") || strings.Contains(n, " morning one ")
	pm := halfDay(n, "pm", "p m") || strings.Contains(n, " in the evening ") ||
		strings.Contains(n, " at night ") || strings.Contains(n, " in the afternoon ") || strings.Contains(n, " evening one ")
	switch {
	case am && !pm:
		return "am"
	case pm && !am:
		return "pm"
	}
	return ""
}

// halfDay reports whether the cueNorm'ed text n holds one of the forms ("am", "a m") right
// after a number ("7 am", "7 45 am"), or is nothing but it.
func halfDay(n string, forms ...string) bool {
	for _, f := range forms {
		if strings.TrimSpace(n) == f {
			return true
		}
		for i := 0; ; {
			j := strings.Index(n[i:], " "+f+" ")
			if j < 0 {
				break
			}
			j += i
			if j > 0 && n[j-1] >= '0' && n[j-1] <= '9' {
				return true
			}
			i = j + 1
		}
	}
	return false
}

// languageAskedAgain is Restatement's form 4 on the cueNorm'ed follow-up n: a short
// follow-up (at most four words) that names the language of the request, which the
// answer is not in ("english please" after an English request answered in Spanish; "en
// français svp"; "auf Deutsch bitte"). Naming another language than the request's is a
// new request (a translation), not a correction.
func languageAskedAgain(n, answer, request string) (bool, float64, string) {
	words := strings.Fields(n)
	if len(words) == 0 || len(words) > 4 {
		return false, 0, ""
	}
	named := ""
	for _, w := range words {
		if l, ok := languageCodes[w]; ok {
			if named != "" && named != l {
				return false, 0, ""
			}
			named = l
		}
	}
	// One exclusive stop word tells a short text's language here: the follow-up names the
	// request's language in at most four words, which is evidence enough.
	if named == "" || languageOf(request, 1) != named {
		return false, 0, ""
	}
	if a := languageOf(answer, 1); a != "" && a != named {
		return true, 0.8, `"` + strings.TrimSpace(n) + `": the request is in ` + languageLabel[named] + `, the answer in ` + languageLabel[a]
	}
	return false, 0, ""
}

// languageCodes maps the cueNorm'ed names of the four languages whose stop words the
// package knows, in each of them, to their codes.
var languageCodes = func() map[string]string {
	m := map[string]string{}
	codes := []string{"en", "fr", "es", "de"}
	for _, names := range [][]string{languageNames.en, languageNames.fr, languageNames.es, languageNames.de} {
		for i, code := range codes { // the first four names of each list are en, fr, es, de
			m[strings.TrimSpace(cueNorm(names[i]))] = code
		}
	}
	return m
}()

// languageLabel names the four languages in English, for the evidence.
var languageLabel = map[string]string{
	"en": languageNames.en[0], "fr": languageNames.en[1], "es": languageNames.en[2], "de": languageNames.en[3],
}

// exclusiveStops maps each stop word that is a stop word of one of the four languages
// only to that language's code: what tells the languages apart.
var exclusiveStops = func() map[string]string {
	lists := map[string]string{"en": stopEN, "fr": stopFR, "es": stopES, "de": stopDE}
	count := map[string]int{} // languages whose list holds the word (a list may repeat one)
	for _, l := range lists {
		seen := map[string]bool{}
		for _, w := range strings.Fields(l) {
			if !seen[w] {
				seen[w] = true
				count[w]++
			}
		}
	}
	out := map[string]string{}
	for code, l := range lists {
		for _, w := range strings.Fields(l) {
			if count[w] == 1 {
				out[w] = code
			}
		}
	}
	return out
}()

// dominantLanguage returns the code of the language (en, fr, es, de) of which s holds at
// least two exclusive stop words and more than of any other, else "".
func dominantLanguage(s string) string { return languageOf(s, 2) }

// languageOf returns the code of the language (en, fr, es, de) of which s holds at least
// the given number of exclusive stop words and more than of any other, else "".
func languageOf(s string, least int) string {
	var c languageCounts
	for _, w := range strings.Fields(cueNorm(s)) {
		c.add(w)
	}
	return c.pick(least)
}

// languageCounts counts the exclusive stop words (exclusiveStops) of each language, in the
// order of countedLanguages.
type languageCounts [4]int

var countedLanguages = [4]string{"en", "fr", "es", "de"}

// add counts the normalised word w when it is an exclusive stop word.
func (c *languageCounts) add(w string) {
	if code, ok := exclusiveStops[w]; ok {
		c[slices.Index(countedLanguages[:], code)]++
	}
}

// pick returns the code of the language with at least least words and more than any
// other, else "".
func (c *languageCounts) pick(least int) string {
	best, second := 0, 0
	for i := 1; i < len(c); i++ {
		switch {
		case c[i] > c[best]:
			best, second = i, best
		case c[i] > c[second] || second == best:
			second = i
		}
	}
	if c[best] < least || c[best] == c[second] {
		return ""
	}
	return countedLanguages[best]
}
