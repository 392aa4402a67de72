// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the follow-up primitives that use the agent's answer as evidence
// (docs/decisions/text.md §3.1–§3.3): Contradiction (an RDM without a cue word),
// Acceptance (a follow-up that accepts the answer) and CompareFollowUp (the CCM
// evidence: similarity, what the answer served, what the follow-up swapped).

// contrastNegations are the words that open the negated part of "X, not Y" per
// language (cueNorm'ed). French "pas" also closes "ne … pas"; Spanish "no" and
// German "nicht"/"kein" likewise serve both uses.
var contrastNegations = map[string]bool{
	"not": true, "pas": true, "no": true, "nicht": true, "kein": true, "keine": true, "keinen": true,
	"instead": true, "rather": true, "plutot": true, "statt": true, "anstatt": true,
}

// maxContrastTokens bounds the negated part Y of "X, not Y": a correction names one
// thing ("not Madrid", "pas à Claire", "nicht 30"), not a sentence.
const maxContrastTokens = 3

// Contradiction reports whether followUp contradicts answer without a cue word
// (docs/scoring.md §5 RDM): a contrast "X, not Y" / "X, pas Y" / "X, no Y" / "X, nicht Y"
// where the negated part Y is something the answer said ("Lisbon, not Madrid!" after
// "The capital is Madrid"), or where X restates the user's request and the answer
// lacks it ("Au bureau, pas à la maison !" after a request for the office and an
// answer naming the home address). There must be content before the negation (a
// leading "No, at the end of the period" answers a question; it is not a contrast),
// Y has 1 to 3 content tokens, and an answer that ends with a question is never
// contradicted this way (the user is choosing among the options it offered).
//
// evidence names what was contradicted, e.g. `"not Madrid": the answer said "madrid"`.
// Inputs are capped like every primitive (MaxInputBytes); invalid UTF-8 is read as
// U+FFFD. Confidence is 0.9 when ok.
func Contradiction(followUp, answer, request string) (ok bool, confidence float64, evidence string) {
	var ts tokenSets
	return contradiction(followUp, answer, request, &ts)
}

// tokenSets holds the distinct tokens of the answer and the request, computed once
// and shared by the follow-up primitives.
type tokenSets struct {
	done    bool
	ans     hashSet
	req     hashSet
	reqList []string
}

// hashSet is a set of distinct tokens held as sorted FNV-1a 64 hashes (the hashing of
// Similarity's keys): building it allocates one slice, where a map of strings costs an
// entry per token.
type hashSet []uint64

func newHashSet(s string) hashSet {
	sc := scannerPool.Get().(*scanner)
	defer scannerPool.Put(sc)
	sc.scan(s)
	out := make(hashSet, 0, len(sc.toks))
	for _, t := range sc.toks {
		out = append(out, fnv(sc.buf[t.start:t.end]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func fnv[T string | []byte](b T) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(b); i++ {
		h ^= uint64(b[i])
		h *= 1099511628211
	}
	return h
}

func (h hashSet) has(tok string) bool {
	_, ok := slices.BinarySearch(h, fnv(tok))
	return ok
}

func (h hashSet) hasAll(ts []string) bool {
	for _, t := range ts {
		if !h.has(t) {
			return false
		}
	}
	return true
}

func (ts *tokenSets) get(answer, request string) (ans, req hashSet) {
	if ts.req == nil {
		ts.reqList, ts.req = distinctTokens(request)
	}
	if !ts.done {
		ts.done = true
		ts.ans = newHashSet(answer)
	}
	return ts.ans, ts.req
}

func contradiction(followUp, answer, request string, ts *tokenSets) (ok bool, confidence float64, evidence string) {
	followUp = capInput(followUp)
	if strings.TrimSpace(answer) == "" || askedQuestion(answer) {
		return false, 0, ""
	}
	var ans, req hashSet
	seenContent := false
	checked := 0
	for _, clause := range splitClauses(followUp) {
		words := strings.Fields(cueNorm(clause))
		for i, w := range words {
			if !contrastNegations[w] {
				continue
			}
			if checked++; checked > maxContrasts {
				return denial(followUp, answer, request, ts)
			}
			if lead := strings.Join(words[:i+1], " "); slices.Contains(denialLeads, lead) || lead == "il ny a pas" || lead == "y a pas" {
				continue // a denial: denial reads it
			}
			if sentence := sentenceOf(followUp, clause); substitutions[w] && askedNotTagged(sentence) || ownChoice(sentence) {
				continue // a question about a substitute; the user's own choice ("I'll make rice instead of…")
			}
			before := strings.Join(words[max(0, i-maxContextWords):i], " ")
			if !seenContent && len(Tokens(before)) == 0 {
				continue
			}
			rest := strings.Join(words[i+1:], " ")
			y := Tokens(rest)
			if len(y) == 0 || len(y) > maxContrastTokens {
				continue
			}
			if ans == nil {
				ans, req = ts.get(answer, request)
			}
			xw := prevWords(followUp, clause, words[:i])
			x := Tokens(strings.Join(xw, " "))
			if ans.hasAll(y) {
				if ownSlip(req, ans, x, y) {
					// The user rejects what they asked for and names something new: they
					// correct their own request ("Sorry, I meant the downtown branch, not
					// the airport one" after an answer about the airport branch they asked
					// about).
					continue
				}
				return true, 0.9, `"` + w + " " + rest + `": the answer said ` + quoteJoin(y)
			}
			// X restates the request and the answer lacks it.
			for _, t := range x {
				if req.has(t) && !ans.has(t) && !slices.Contains(y, t) {
					return true, 0.9, `"` + strings.Join(xw[max(0, len(xw)-4):], " ") + ", " + w + " " + rest + `": the request's "` + t + `" is missing from the answer`
				}
			}
		}
		// Only whether some clause so far had content matters: once one had, the clauses
		// after it need not be tokenised for it.
		if !seenContent && len(Tokens(clause)) > 0 {
			seenContent = true
		}
	}
	return denial(followUp, answer, request, ts)
}

// substitutions are the contrastNegations that name a substitute ("X instead of Y"): in a
// question they ask about one ("Could I use a book instead of a beanbag?"), they do not
// contradict the answer.
var substitutions = map[string]bool{"instead": true, "rather": true, "plutot": true, "statt": true, "anstatt": true}

// sentenceOf returns the sentence of s that holds clause (its first occurrence), with its
// end mark; s when clause is not found.
func sentenceOf(s, clause string) string {
	i := strings.Index(s, clause)
	if i < 0 {
		return s
	}
	start := 0
	if b := strings.LastIndexAny(s[:i], ".!?？;\n"); b >= 0 {
		_, size := utf8.DecodeRuneInString(s[b:])
		start = b + size
	}
	end := len(s)
	if e := strings.IndexAny(s[i+len(clause):], ".!?？;\n"); e >= 0 {
		_, size := utf8.DecodeRuneInString(s[i+len(clause)+e:])
		end = i + len(clause) + e + size
	}
	return s[start:end]
}

// tagQuestions end a statement that asks for agreement ("It takes USB-B instead of USB-C,
// doesn't it?"), cueNorm'ed: the statement still contradicts.
var tagQuestions = []string{"doesnt it", "isnt it", "dont they", "arent they", "right", "no", "non", "nest ce pas",
	"verdad", "oder", "nicht wahr", "gell"}

// askedNotTagged reports whether the sentence ends with a question mark and is not a
// statement with a tag question.
func askedNotTagged(sentence string) bool {
	t := strings.TrimRight(sentence, " ")
	if !strings.HasSuffix(t, "?") && !strings.HasSuffix(t, "？") {
		return false
	}
	n := cueNorm(t)
	for _, q := range tagQuestions {
		if strings.HasSuffix(n, " "+q+" ") {
			return false
		}
	}
	return true
}

// ownChoiceLeads open a sentence in which the user states their own choice among what the
// answer offered ("I'll make rice instead of potato salad", "On fera la soupe froide plutôt
// que le gratin", "Haré la sopa fría, no el gratinado", "Wir machen lieber…"), cueNorm'ed:
// a contrast in it is a decision, not a correction.
var ownChoiceLeads = newLeadSet([]string{
	"ill", "i will", "im going to", "ill go with", "lets", "let us", "we will", "were going to",
	"on fera", "on va", "je vais", "je prends", "je prendrai", "je ferai", "nous allons",
	"voy a", "vamos a", "hare", "haremos", "me quedo con", "prefiero",
	"wir machen", "wir nehmen", "ich nehme", "ich mache", "ich werde",
})

// ownChoice reports whether sentence opens, after fillers, with ownChoiceLeads.
func ownChoice(sentence string) bool {
	return hasLead(withoutFillers(cueNorm(sentence)), ownChoiceLeads)
}

// denialLeads open a sentence that says a thing does not exist ("There's no Resolution
// Boost in the export dialog", "Il n'y a pas d'onglet Espaces", "No hay ninguna estación
// Prado Central", "Es gibt kein Menü Belege"), cueNorm'ed; longer leads first. "il ny a
// pas d" also reads the elided "d'onglet" that cueNorm glues ("donglet").
var denialLeads = []string{
	"there is no", "theres no", "there are no", "there isnt any", "there isnt a", "there isnt an", "there arent any",
	"il ny a pas de", "il ny a pas d", "il ny a aucun", "il ny a aucune", "y a pas de", "y a pas d",
	"no hay ningun", "no hay ninguna", "no hay", "no existe ningun", "no existe ninguna", "no existe",
	"es gibt keinen", "es gibt keine", "es gibt kein", "da ist kein", "da ist keine",
	"no such", "i dont see any", "i dont see a", "i dont see an", "i cant find any", "i cant find a", "i cant find an",
	"je ne vois aucun", "je ne vois aucune", "je ne trouve aucun", "je ne trouve aucune", "je ne vois pas de",
	"je ne trouve pas de", "je ne vois pas d", "je ne trouve pas d",
	"no veo ningun", "no veo ninguna", "no encuentro ningun", "no encuentro ninguna",
	"ich sehe keinen", "ich sehe keine", "ich sehe kein", "ich finde keinen", "ich finde keine", "ich finde kein",
}

// denial is Contradiction's second form: a sentence of followUp, not a question, without
// praise or an acknowledgement ("okay", "noted", "d'accord", "entendido"…), opens (after
// fillers) by saying that a thing does not exist (denialLeads), and the thing's first
// content tokens (at most maxContrastTokens) are all the answer's, not all the request's:
// the user denies what the answer brought ("There's no Resolution Boost in the export
// dialog." after "set it under 'Resolution Boost'"). Not when the answer says so itself
// ("there is no parking on site", "but no wifi on the regional lines", "hat leider keinen
// Aufzug": the user repeats it), of a thing the answer never named ("There's no hurry"), or
// of politeness ("Y a pas de souci", "No hay prisa"). Confidence 0.85.
func denial(followUp, answer, request string, ts *tokenSets) (ok bool, confidence float64, evidence string) {
	if !mayDeny(followUp) {
		return false, 0, "" // most follow-ups: no lead to read
	}
	var negated hashSet // what the answer negates, read once
	// denied reports whether y, the first content tokens of the thing said not to exist,
	// are the answer's, not all the request's, and not negated by the answer itself.
	denied := func(y []string) bool {
		if len(y) == 0 {
			return false
		}
		ans, req := ts.get(answer, request)
		if !ans.hasAll(y) || req.hasAll(y) {
			return false
		}
		if negated == nil {
			negated = answerNegated(answer)
		}
		return !negated.has(y[0])
	}
	for s := followUp; s != ""; {
		end := strings.IndexAny(s, ".!?？;\n")
		sentence, asked := s, false
		if end >= 0 {
			r, size := utf8.DecodeRuneInString(s[end:])
			sentence, asked = s[:end], r == '?' || r == '？'
			s = s[end+size:]
		} else {
			s = ""
		}
		if asked || strings.Contains(sentence, "¿") {
			continue
		}
		n := withoutFillers(cueNorm(sentence))
		if praises(n) || hasWord(n, acknowledgements) {
			continue
		}
		for _, l := range denialLeads {
			if !strings.HasPrefix(n, " "+l) {
				continue
			}
			rest := n[len(l)+1:]
			if !strings.HasSuffix(l, " d") && !strings.HasPrefix(rest, " ") {
				continue // "there is none", "no hayas"
			}
			first, _, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
			if _, polite := politeAfterNo[first]; polite {
				break
			}
			y := Tokens(rest)
			y = y[:min(len(y), maxContrastTokens)]
			if !denied(y) {
				break
			}
			return true, 0.85, `"` + strings.TrimSpace(l) + " " + strings.Join(y, " ") + `": the answer named ` + quoteJoin(y)
		}
		if x, phrase := deniedBefore(sentence); phrase != "" && denied(x) {
			return true, 0.85, `"` + strings.Join(x, " ") + " " + phrase + `": the answer named ` + quoteJoin(x)
		}
	}
	return false, 0, ""
}

// existenceDenials say, after the thing, that it does not exist ("That menu doesn't
// exist", "L'onglet Espaces n'existe pas", "Esa estación no existe", "Das Menü existiert
// nicht"), as cueNorm'ed words. German also puts it round the verb: "Ein Menü Belege gibt es
// in der App nicht" (deniedBefore).
var existenceDenials = [][]string{
	{"doesnt", "exist"}, {"does", "not", "exist"}, {"dont", "exist"}, {"do", "not", "exist"}, {"isnt", "real"}, {"is", "not", "real"},
	{"nexiste"}, {"nexistent"}, {"no", "existe"}, {"no", "existen"}, {"existiert", "nicht"}, {"existieren", "nicht"},
	{"gibt", "es", "nicht"}, {"gibts", "nicht"},
}

// existenceDenialPhrases are existenceDenials as padded phrases (saysAbsent).
var existenceDenialPhrases = func() []string {
	out := make([]string, len(existenceDenials))
	for i, d := range existenceDenials {
		out[i] = " " + strings.Join(d, " ") + " "
	}
	return out
}()

// mayDenyAfter reports whether sentence may hold one of existenceDenials, by a part of each
// that does not depend on case ("exist", "real", "gibt"): deniedBefore reads the words of
// the few that do.
func mayDenyAfter(sentence string) bool {
	for _, w := range []string{"xist", "XIST", "real", "REAL", "ibt", "IBT"} {
		if strings.Contains(sentence, w) {
			return true
		}
	}
	return false
}

// saysAbsent reports whether the cueNorm'ed text n says anywhere that a thing does not
// exist (denialLeads, existenceDenials).
func saysAbsent(n string) bool {
	for _, l := range denialLeads {
		if strings.Contains(n, " "+l+" ") || strings.HasSuffix(l, " d") && strings.Contains(n, " "+l) {
			return true
		}
	}
	for _, p := range existenceDenialPhrases {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// deniedBefore returns the last content tokens (at most maxContrastTokens) of sentence
// before one of existenceDenials, and the denial as cueNorm'ed words; "" when it holds none.
// The tokens are read from the raw words, so that an elided article stays apart ("L'onglet").
func deniedBefore(sentence string) (x []string, phrase string) {
	if !mayDenyAfter(sentence) {
		return nil, ""
	}
	raw := strings.Fields(sentence)
	norm := make([]string, len(raw))
	for i, w := range raw {
		norm[i] = strings.TrimSpace(cueNorm(w))
	}
	at, end := -1, 0
	for i := range norm {
		for _, d := range existenceDenials {
			if i+len(d) <= len(norm) && slices.Equal(norm[i:i+len(d)], d) {
				at, end = i, i+len(d)
				break
			}
		}
		if at >= 0 {
			break
		}
		// "Ein Menü Belege gibt es in der App nicht": "gibt es" and "nicht" at the end.
		if i+1 < len(norm) && norm[i] == "gibt" && norm[i+1] == "es" && norm[len(norm)-1] == "nicht" {
			at, end = i, len(norm)
			break
		}
	}
	if at <= 0 {
		return nil, ""
	}
	x = Tokens(strings.Join(raw[:at], " "))
	return x[max(0, len(x)-maxContrastTokens):], strings.Join(norm[at:end], " ")
}

// mayDeny reports whether followUp may hold one of denialLeads or existenceDenials, by a
// part of each that does not depend on case ("There", "no hay", "exist", "il n'y a", "es
// gibt", "I don't see", "je ne trouve"…): most follow-ups hold none, and are not read
// further.
func mayDeny(followUp string) bool {
	for _, w := range []string{"here", "HERE", "o hay", "O HAY", "xist", "XIST", "y a ", "Y A ", "ibt", "IBT", "ist k", "IST K",
		"real", "see", "find", "vois", "trouve", "veo", "encuentro", "sehe", "finde"} {
		if strings.Contains(followUp, w) {
			return true
		}
	}
	return false
}

// acknowledgements in a denial's sentence take note of what the answer said ("There's no
// wifi on the regional lines, okay."), cueNorm'ed.
var acknowledgements = []string{"ok", "okay", "fine", "understood", "noted", "got it", "i see", "daccord", "entendu",
	"compris", "vale", "entendido", "entiendo", "verstanden", "alles klar", "verstehe"}

// answerNegations open what an answer says is not there: the negations of "X, not Y"
// (contrastNegations) and these, cueNorm'ed.
var answerNegations = map[string]bool{"doesnt": true, "dont": true, "without": true, "sans": true, "aucun": true,
	"aucune": true, "ningun": true, "ninguna": true, "sin": true, "ohne": true, "keinen": true, "keine": true, "kein": true}

// answerNegated returns the tokens of the three words after each negation of the answer
// ("but no wifi on the regional lines", "hat leider keinen Aufzug", "no tiene
// aparcamiento propio"), and of the things it says do not exist (denialLeads).
func answerNegated(answer string) hashSet {
	words := strings.Fields(cueNorm(capInput(answer)))
	var b strings.Builder
	for i, w := range words {
		if contrastNegations[w] || answerNegations[w] {
			for _, v := range words[i+1 : min(len(words), i+4)] {
				b.WriteString(v)
				b.WriteByte(' ')
			}
		}
	}
	return newHashSet(b.String())
}

// ownSlip reports whether the contrast "X, not Y" (tokens x and y, Y said by the answer)
// rejects what the request asked for and names something the request did not: Y's
// tokens are the request's, "one" aside ("the airport one"); X has a token the request
// lacks; and no token of X is one of the request's that the answer lacks. With one, X
// restates the request against the answer, a correction: "Luigi's on Main Street, not
// Mario's!" after "Book Luigi's, not Mario's" answered with Mario's; "The Ibis was
// cheaper, not the Novotel" after "compare the Ibis and the Novotel" answered with the
// Novotel.
func ownSlip(req, ans hashSet, x, y []string) bool {
	in := 0
	for _, t := range y {
		switch {
		case req.has(t):
			in++
		case t != "one":
			return false
		}
	}
	if in == 0 || req.hasAll(x) {
		return false
	}
	for _, t := range x {
		if req.has(t) && !ans.has(t) {
			return false
		}
	}
	return true
}

// maxContrasts bounds the negations examined per follow-up, and maxContextWords the words
// read on each side of one, so that the work stays linear in the (capped) input.
const (
	maxContrasts    = 16
	maxContextWords = 8
)

// prevWords returns the last maxContextWords words of followUp before the negation (the
// clause's head and the clauses before it): the affirmed part X of "X, not Y".
func prevWords(followUp, clause string, head []string) []string {
	if len(head) >= maxContextWords {
		return head[len(head)-maxContextWords:]
	}
	var out []string
	if i := strings.Index(followUp, clause); i > 0 {
		out = strings.Fields(cueNorm(followUp[max(0, i-256):i]))
		out = out[max(0, len(out)-(maxContextWords-len(head))):]
	}
	return append(out, head...)
}

// splitClauses cuts s at sentence and clause punctuation (, . ; : ! ? ¡ ¿ … and line breaks).
func splitClauses(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		switch r {
		case ',', '.', ';', ':', '!', '?', '¡', '¿', '…', '\n', '\r', '(', ')':
			return true
		}
		return false
	})
}

func quoteJoin(ts []string) string {
	return `"` + strings.Join(ts, " ") + `"`
}

// acceptanceLeads open a follow-up that accepts the answer ("OK, then cancel #123",
// "Great, can you send…", "D'accord, alors…", "Vale, entonces…", "Gut, dann…"),
// cueNorm'ed. Words that also open a re-ask ("so", "then", "alors", "entonces",
// "dann", "yes", "oui", "sí", "ja") are deliberately absent.
var acceptanceLeads = newLeadSet([]string{
	"ok", "okay", "great", "fine", "perfect", "good", "cool", "nice", "awesome", "excellent", "alright",
	"all right", "got it", "sounds good", "thanks", "thank you",
	"daccord", "parfait", "super", "genial", "tres bien", "bien", "bon", "merci", "entendu", "nickel",
	"vale", "perfecto", "de acuerdo", "estupendo", "gracias", "bueno",
	"gut", "prima", "perfekt", "klasse", "danke", "alles klar", "schon", "toll",
})

// butWords cancel an acceptance when they follow it closely ("OK but…", "D'accord, mais…").
var butWords = map[string]bool{"but": true, "mais": true, "pero": true, "aber": true, "though": true,
	"however": true, "still": true, "toujours": true, "doch": true, "trotzdem": true, "sin": true}

// Acceptance reports whether followUp opens by accepting the answer: its first words are
// one of acceptanceLeads and none of the next three words is a "but" ("OK but…").
// cue is the lead that matched.
func Acceptance(followUp string) (cue string, ok bool) { return acceptance(cueNorm(followUp)) }

// acceptance is Acceptance on the cueNorm'ed follow-up n.
func acceptance(n string) (cue string, ok bool) {
	l := acceptanceLeads.lead(n)
	if l == "" {
		return "", false
	}
	rest := n[len(l)+1:]
	for range 3 { // the next three words
		w, after, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
		if w == "" {
			break
		}
		if butWords[w] {
			return "", false
		}
		rest = after
	}
	return l, true
}

// yesNoAuxiliaries open a closed question ("Is the museum open…?", "Does the hotel have…?",
// "Est-ce que…", "Hat das Museum…?"), cueNorm'ed. "can/could/will/would you" are left out:
// they ask for something ("Can you tell me the IBAN?"). Spanish asks yes/no without one.
var yesNoAuxiliaries = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "do": true, "does": true, "did": true, "has": true,
	"have": true, "had": true, "should": true, "may": true, "isnt": true, "arent": true, "doesnt": true,
	"est": true,
	"ist": true, "sind": true, "hat": true, "haben": true, "gibt": true, "war": true, "darf": true,
}

// yesNoAnswers open an answer that settles a closed question ("Yes, from 10 to 5.").
var yesNoAnswers = map[string]bool{
	"yes": true, "no": true, "yeah": true, "nope": true, "oui": true, "non": true, "si": true, "ja": true,
	"nein": true, "doch": true,
}

// SettledYesNo reports whether request is a closed question ("Is the museum open on
// Mondays?") and answer opens by settling it ("Yes, …", "Non, …", "Ja, …"): a follow-up
// that shares words with the request then asks something new ("ok but is the gift shop
// open too?"), it does not re-ask (docs/decisions/text.md §3.5).
func SettledYesNo(request, answer string) bool {
	return strings.ContainsAny(request, "?？") && yesNoAuxiliaries[firstWord(request)] && yesNoAnswers[firstWord(answer)]
}

// firstWord returns the first cueNorm'ed word of s, read from its first 64 bytes only.
func firstWord(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	w, _, _ := strings.Cut(strings.TrimPrefix(cueNorm(s), " "), " ")
	return w
}

// Reask is the CCM evidence CompareFollowUp gathers on a (request, answer, follow-up)
// triple, over distinct Tokens.
type Reask struct {
	// Similarity is the cosine of Similarity over the request's and the follow-up's
	// tokens after removing Served, with the same conflict factor; in [0,1].
	Similarity float64
	// Verbatim is true when both messages have the same non-empty token set.
	Verbatim bool
	// Served are the id and number tokens of the request that the follow-up repeats and
	// the answer already contains: the entity the answer served, which says nothing
	// about a re-ask ("OK, then cancel #123" after an answer about #123).
	Served []string
	// Answered is the share of the request's tokens (ids and numbers weigh 2) that the
	// answer contains; in [0,1]. A request the answer echoes was answered.
	Answered float64
	// SwappedOut and SwappedIn are set when the follow-up is the request with one
	// stretch of tokens replaced (they share a first or last token), every replaced token served by the answer and none of
	// the new ones in the request or the answer: the same question about another thing ("…in Lyon?"
	// after "…in Paris?" answered for Paris). The words of an acceptance before a "but" are not
	// read as swapped in ("fine, but has the application been approved?").
	SwappedOut, SwappedIn []string
	// Empty is true when the request or the follow-up has no content token.
	Empty bool
	// Frame names the frame of a re-ask that similarity may miss (ReaskFrame), "" when
	// there is none; FollowUpEvidence sets it, CompareFollowUp does not.
	Frame string
}

// CompareFollowUp gathers the CCM evidence of docs/decisions/text.md §3.3 for the
// follow-up of a turn whose user request and final answer are given.
func CompareFollowUp(request, answer, followUp string) Reask {
	var ts tokenSets
	return compareFollowUp(request, answer, followUp, &ts, 0)
}

// Evidence is the answer-aware evidence on a follow-up: Contradiction's result and
// CompareFollowUp's, computed with one tokenisation of the request and the answer.
type Evidence struct {
	Contradicts           bool
	ContradictionConf     float64
	ContradictionEvidence string
	Reask                 Reask
}

// FollowUpEvidence returns Contradiction(followUp, answer, request), or else
// Restatement(followUp, answer, request), or else Objection(followUp, answer, request),
// and CompareFollowUp(request, answer, followUp) with ReaskFrame(request, answer,
// followUp) in Reask.Frame (when nothing contradicts and the follow-up is not
// verbatim), together, reading the follow-up once and tokenising each text once
// for the first and CompareFollowUp. When
// the follow-up is not verbatim and its similarity to the request, served ids included,
// is below minSimilarity, the answer is not tokenised for the re-ask evidence and
// Reask.Served, Answered and Swapped* stay empty: leaving served ids out can only lower
// the similarity (docs/decisions/text.md §3.3), so it stays below minSimilarity.
func FollowUpEvidence(request, answer, followUp string, minSimilarity float64) Evidence {
	var ts tokenSets
	var ev Evidence
	f := newFollowUpText(followUp)
	ev.Contradicts, ev.ContradictionConf, ev.ContradictionEvidence = contradiction(f.raw, answer, request, &ts)
	if !ev.Contradicts {
		ev.Contradicts, ev.ContradictionConf, ev.ContradictionEvidence = restatement(f, answer, request)
	}
	if !ev.Contradicts {
		ev.Contradicts, ev.ContradictionConf, ev.ContradictionEvidence = objection(f, answer, request)
	}
	ev.Reask = compareFollowUp(request, answer, f.raw, &ts, minSimilarity)
	if !ev.Contradicts && !ev.Reask.Verbatim {
		ev.Reask.Frame = reaskFrame(request, answer, f) // "When?", "Yes or no?" have no content word
	}
	return ev
}

func compareFollowUp(request, answer, followUp string, ts *tokenSets, minSimilarity float64) Reask {
	if ts.req == nil {
		ts.reqList, ts.req = distinctTokens(request)
	}
	p, ps := ts.reqList, ts.req
	n, ns := distinctTokens(followUp)
	var r Reask
	if len(p) == 0 || len(n) == 0 {
		r.Empty = true
		return r
	}
	if len(ps) == len(ns) && ps.hasAll(n) {
		r.Verbatim, r.Similarity = true, 1
	} else if sim := cosineSets(p, n, ps, ns, nil); sim < minSimilarity {
		r.Similarity = sim
		return r
	}
	a, _ := ts.get(answer, request)
	var tot, got float64
	for _, t := range p {
		w := tokWeight(t)
		tot += w
		inA := a.has(t)
		if inA {
			got += w
		}
		if inA && isNumeric(t) && ns.has(t) {
			r.Served = append(r.Served, t)
		}
	}
	r.Answered = got / tot
	if !r.Verbatim {
		r.Similarity = cosineSets(p, n, ps, ns, r.Served)
	}
	// Swap: strip the common prefix and suffix of the two token sequences.
	i := 0
	for i < len(p) && i < len(n) && p[i] == n[i] {
		i++
	}
	j := 0
	for j < len(p)-i && j < len(n)-i && p[len(p)-1-j] == n[len(n)-1-j] {
		j++
	}
	out, in := p[i:len(p)-j], n[i:len(n)-j]
	if i == 0 && len(in) > 0 {
		// The acceptance before a "but" is not what the follow-up asks about: "fine, but
		// has the application been approved?" swaps nothing for "visa".
		if head, _, ok := butLead(cueNorm(followUp)); ok {
			hs := newHashSet(head)
			for len(in) > 0 && hs.has(in[0]) {
				in = in[1:]
			}
		}
	}
	if i+j > 0 && len(out) > 0 && len(in) > 0 && a.hasAll(out) {
		swap := true
		for _, t := range in {
			if ps.has(t) || a.has(t) {
				swap = false
				break
			}
		}
		if swap {
			r.SwappedOut, r.SwappedIn = out, in
		}
	}
	return r
}

// distinctTokens returns the distinct Tokens of s in order of first occurrence
// (sub-strings of one copy of the scan) and their set (sorted hashes; non-nil even when s
// has no token). Tokens are told apart by their FNV-1a 64 hash: a small open-addressing
// table of the hashes seen marks the first occurrence of each (a slot holds h+1, so 0 is
// empty; the one hash that would wrap is kept aside), and the distinct hashes are then
// sorted.
func distinctTokens(s string) ([]string, hashSet) {
	sc := scannerPool.Get().(*scanner)
	defer scannerPool.Put(sc)
	sc.scan(s)
	if len(sc.toks) == 0 {
		return nil, hashSet{}
	}
	str := string(sc.buf)
	n := 8
	for n < 2*len(sc.toks) {
		n <<= 1
	}
	var stack [128]uint64
	var table []uint64
	if n <= len(stack) {
		table = stack[:n]
	} else {
		table = make([]uint64, n)
	}
	mask := uint64(n - 1)
	seenMax := false
	set := make(hashSet, 0, len(sc.toks))
	out := make([]string, 0, len(sc.toks))
	for _, t := range sc.toks {
		tok := str[t.start:t.end]
		h := fnv(tok)
		if h == math.MaxUint64 {
			if !seenMax {
				seenMax = true
				set = append(set, h)
				out = append(out, tok)
			}
			continue
		}
		for i := h & mask; ; i = (i + 1) & mask {
			if table[i] == 0 {
				table[i] = h + 1
				set = append(set, h)
				out = append(out, tok)
				break
			}
			if table[i] == h+1 {
				break
			}
		}
	}
	slices.Sort(set)
	return out, set
}

func isNumeric(t string) bool {
	for i := 0; i < len(t); i++ {
		if c := t[i]; '0' <= c && c <= '9' {
			return true
		} else if c >= utf8.RuneSelf {
			return isNumericRunes(t[i:])
		}
	}
	return false
}

func isNumericRunes(t string) bool {
	for i := 0; i < len(t); {
		r, size := utf8.DecodeRuneInString(t[i:])
		if unicode.IsDigit(r) {
			return true
		}
		i += size
	}
	return false
}

func tokWeight(t string) float64 {
	if isNumeric(t) {
		return numWeight
	}
	return 1
}

// cosineSets is Similarity's weighted cosine with the conflict factor over two distinct
// token lists a and b (with their sets), leaving out the tokens of skip.
func cosineSets(a, b []string, as, bs hashSet, skip []string) float64 {
	var inter, na, nb float64
	onlyA, onlyB := false, false
	for _, t := range a {
		if slices.Contains(skip, t) {
			continue
		}
		w := tokWeight(t)
		na += w * w
		if bs.has(t) {
			inter += w * w
		} else if isNumeric(t) {
			onlyA = true
		}
	}
	for _, t := range b {
		if slices.Contains(skip, t) {
			continue
		}
		w := tokWeight(t)
		nb += w * w
		if isNumeric(t) && !as.has(t) {
			onlyB = true
		}
	}
	if na == 0 || nb == 0 {
		return 0
	}
	s := inter / math.Sqrt(na*nb)
	if onlyA && onlyB {
		s *= conflictFactor
	}
	return min(max(s, 0), 1)
}
