// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import "strings"

// This file holds Objection: a follow-up that objects to the answer without a cue word
// or a value of its own ("atorvastatin?? I'm on lisinopril"; "Pourquoi vous me répondez
// en anglais ?") (docs/decisions/text.md §3.6).

// maxEchoWords bounds the disbelieving echo: "atorvastatin??", "¿¿Inmediato??", "Thursday
// the 9th?!". A longer first sentence is a question of its own.
const maxEchoWords = 3

// Objection reports whether followUp objects to answer without a cue word, in one of two
// forms:
//
//  1. Disbelief: the follow-up opens, after at most an interjection ("Wait, …"), with a
//     short echo (at most maxEchoWords words) of what the answer produced, written with
//     doubled or mixed marks that include a question mark ("atorvastatin??", "¿¿Inmediato??",
//     "Gate B7?!", "22.50!?"): every content token of the echo is in the answer and one at
//     least is not in the request. A single "?" is a clarifying question ("Atorvastatin?")
//     and "!!" excitement; neither is read.
//  2. The answer's language named: the follow-up asks about or denies (a question, or
//     "not", "pas", "nicht"…) the language the answer is in, named in any of the four
//     languages, which is not the request's and which the request does not name
//     ("Pourquoi vous me répondez en anglais ?", "why is this in spanish", "not in
//     German"); not with praise ("Sehr gut, dass du auf Französisch schreibst").
//
// Never when the follow-up opens by accepting the answer (Acceptance, read after leading
// fillers); form 1 not when an acceptance, thanks or praise follows the echo ("Tomorrow?!
// Great, thanks", "Free?! Wow, my kids will love that"). evidence names the echo or the
// languages; confidence is 0.8. Inputs are
// capped (MaxInputBytes); invalid UTF-8 is read as U+FFFD.
func Objection(followUp, answer, request string) (ok bool, confidence float64, evidence string) {
	return objection(newFollowUpText(followUp), answer, request)
}

// objection is Objection on the follow-up read once (followUpText).
func objection(f followUpText, answer, request string) (ok bool, confidence float64, evidence string) {
	answer, request = capInput(answer), capInput(request)
	if strings.TrimSpace(answer) == "" {
		return false, 0, ""
	}
	if _, accepted := acceptance(f.bare); accepted {
		return false, 0, ""
	}
	if echo, ok := disbelief(f.raw, answer, request); ok {
		return true, 0.8, `"` + echo + `": an incredulous echo of the answer`
	}
	return answerLanguageNamed(f, answer, request)
}

// echoInterjections may open a disbelieving echo ("Wait, atorvastatin??").
var echoInterjections = map[string]bool{"wait": true, "hmm": true, "hm": true, "huh": true, "um": true, "uh": true,
	"eh": true, "oh": true, "euh": true, "attends": true, "espera": true, "moment": true, "what": true}

// disbelief is Objection's form 1: it returns the echo.
func disbelief(followUp, answer, request string) (string, bool) {
	s := strings.TrimLeft(followUp, " \t\r\n\"'«“(")
	if w, rest, ok := strings.Cut(s, " "); ok && echoInterjections[strings.ToLower(strings.TrimRight(w, ",.!"))] {
		s = strings.TrimLeft(rest, " ")
	}
	doubled := strings.HasPrefix(s, "¿¿") || strings.HasPrefix(s, "¡¿") || strings.HasPrefix(s, "¿¡")
	s = strings.TrimLeft(s, "¿¡")
	end := echoEnd(s)
	if end <= 0 {
		return "", false
	}
	echo, marks := strings.TrimSpace(s[:end]), s[end:]
	n := 0
	for n < len(marks) && (marks[n] == '?' || marks[n] == '!') {
		n++
	}
	// Doubled or mixed marks with a question mark: "??", "?!", "!?"; "!!" is excitement.
	if !doubled && (n < 2 || !strings.Contains(marks[:n], "?")) {
		return "", false
	}
	if w := len(strings.Fields(echo)); w == 0 || w > maxEchoWords {
		return "", false
	}
	toks := Tokens(echo)
	if len(toks) == 0 {
		return "", false
	}
	ans, req := newHashSet(answer), newHashSet(request)
	produced := false
	for _, t := range toks {
		if !ans.has(t) {
			return "", false
		}
		produced = produced || !req.has(t)
	}
	if !produced {
		return "", false
	}
	rest := withoutFillers(cueNorm(marks[n:]))
	if _, accepted := acceptance(rest); accepted || praises(rest) { // delight: "Free?! Wow, my kids will love that."
		return "", false
	}
	return echo, true
}

// echoEnd returns the offset of the first sentence end of s: "?", "!", "…", a line break,
// or a "." that ends s or is followed by a space (not the one in "22.50"); -1 if none.
func echoEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '?', '!', '\n':
			return i
		case '.':
			if i+1 == len(s) || s[i+1] == ' ' {
				return i
			}
		case 0xE2: // "…" is E2 80 A6
			if strings.HasPrefix(s[i:], "…") {
				return i
			}
		}
	}
	return -1
}

// languageNegations deny a language ("not in English", "pas en anglais", "no en
// inglés", "nicht auf Englisch"), cueNorm'ed words.
var languageNegations = []string{"not", "pas", "no", "nicht", "kein", "keine", "ne"}

// answerLanguageNamed is Objection's form 2 on the follow-up f.
func answerLanguageNamed(f followUpText, answer, request string) (bool, float64, string) {
	n := f.bare
	named := false
	for _, w := range strings.Fields(n) {
		if _, named = languageCodes[w]; named {
			break
		}
	}
	if !named { // most follow-ups: the answer and the request need not be read
		return false, 0, ""
	}
	// It asks about the language or denies it; praise is no objection ("Sehr gut, dass du
	// auf Französisch schreibst").
	if !strings.ContainsAny(f.raw, "?？¿") && !hasLead(n, questionLeads) && !hasWord(n, languageNegations) {
		return false, 0, ""
	}
	if praises(n) {
		return false, 0, ""
	}
	// The answer's language needs two exclusive stop words ("The Godfather." is a title, not
	// an answer in English); the request's one: a short request ("À quelle heure ferme la
	// mairie ?") names its language by few.
	a, r := dominantLanguage(answer), languageOf(request, 1)
	if a == "" || r == "" || a == r || namesLanguage(cueNorm(request), a) || !namesLanguage(n, a) {
		return false, 0, ""
	}
	return true, 0.8, "the follow-up names " + languageLabel[a] + ", the answer's language; the request is in " + languageLabel[r]
}

// namesLanguage reports whether the cueNorm'ed text n names the language code in one of
// the four languages ("english", "anglais", "ingles", "englisch").
func namesLanguage(n, code string) bool {
	for _, w := range strings.Fields(n) {
		if languageCodes[w] == code {
			return true
		}
	}
	return false
}
