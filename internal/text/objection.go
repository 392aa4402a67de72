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
//  1. Disbelief: the follow-up opens with a short echo (at most maxEchoWords words) of
//     what the answer produced, written with doubled or mixed marks ("atorvastatin??",
//     "¿¿Inmediato??", "Gate B7?!", "90 days!?"): every content token of the echo is in
//     the answer and one at least is not in the request. A single "?" is a clarifying question
//     ("Atorvastatin?") and is not read.
//  2. The answer's language named: the follow-up names (in any of the four languages) the
//     language the answer is in, which is not the request's and which the request does
//     not name ("Pourquoi vous me répondez en anglais ?", "why is this in spanish"),
//     question or not.
//
// Never when the follow-up opens by accepting the answer (Acceptance, read after leading
// fillers), and form 1 not when an acceptance follows the echo ("Tomorrow?! Great,
// thanks"). evidence names the echo or the languages; confidence is 0.8. Inputs are
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
	return answerLanguageNamed(f.bare, answer, request)
}

// disbelief is Objection's form 1: it returns the echo.
func disbelief(followUp, answer, request string) (string, bool) {
	s := strings.TrimLeft(followUp, " \t\r\n\"'«“(")
	doubled := strings.HasPrefix(s, "¿¿") || strings.HasPrefix(s, "¡¿") || strings.HasPrefix(s, "¿¡")
	s = strings.TrimLeft(s, "¿¡")
	end := strings.IndexAny(s, ".!?…\n")
	if end <= 0 {
		return "", false
	}
	echo, marks := strings.TrimSpace(s[:end]), s[end:]
	n := 0
	for n < len(marks) && (marks[n] == '?' || marks[n] == '!') {
		n++
	}
	if n < 2 && !doubled {
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
	if _, accepted := acceptance(rest); accepted {
		return "", false
	}
	for _, w := range strings.Fields(rest) {
		if _, thanks := thanksWords[w]; thanks {
			return "", false
		}
	}
	return echo, true
}

// answerLanguageNamed is Objection's form 2 on the cueNorm'ed follow-up n.
func answerLanguageNamed(n, answer, request string) (bool, float64, string) {
	named := false
	for _, w := range strings.Fields(n) {
		if _, named = languageCodes[w]; named {
			break
		}
	}
	if !named { // most follow-ups: the answer and the request need not be read
		return false, 0, ""
	}
	// One exclusive stop word is enough here: a short answer or request ("La mairie ferme
	// à midi.") names its language by few, and the follow-up must name the answer's.
	a, r := languageOf(answer, 1), languageOf(request, 1)
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
