// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

// A light multilingual suffix-stripping stemmer for en/fr/es/de (docs/decisions/text.md explains why not
// Snowball). It is applied to every folded, lower-case, ASCII-only word whatever its language, so one
// word always gets the same stem; that is what a lexical similarity needs: "sort", "sorts", "sorted",
// "sorting", "sortiert", "sortieren" all stem to "sort", "order(s|ed|ing)" and "orden(ar)" to "ord".
//
// Algorithm: repeat { apply the longest rule of stemRules whose suffix ends the word, whose condition
// holds and which leaves at least minStem bytes } until no rule applies; then undouble a final double
// consonant other than s, l, f, z ("runn" -> "run", "stopp" -> "stop", but "process", "call" stay).

// minStem is the minimum length of what a rule may leave (after its replacement).
const minStem = 3

type stemRule struct {
	suffix, repl string
	// cond, when set, must hold for the part before the suffix.
	cond func(stem []byte) bool
}

// stemRules is ordered longest suffix first; for equal lengths the first listed wins.
var stemRules = []stemRule{
	// 5
	{suffix: "ement"}, // fr: remboursement -> rembours
	{suffix: "ation"}, // en/fr: information -> inform
	{suffix: "mente"}, // es adverbs
	{suffix: "ieren"}, // de: sortieren -> sort
	{suffix: "ierte"}, // de
	{suffix: "ierst"}, // de
	{suffix: "iendo"}, // es gerund
	// 4
	{suffix: "ando"}, // es gerund
	{suffix: "iere"}, // de
	{suffix: "iert"}, // de participle
	{suffix: "cion"}, // es: informacion -> informa -> inform
	// 3
	{suffix: "ing"}, // en
	{suffix: "ung"}, // de: bestellung -> bestell
	{suffix: "ado"}, // es participles
	{suffix: "ada"},
	{suffix: "ido"},
	{suffix: "ida"},
	{suffix: "ies", repl: "i"}, // en: queries -> queri (= query)
	{suffix: "ied", repl: "i"}, // en: tried -> tri (= try)
	// 2
	{suffix: "ed"}, // en
	{suffix: "er"}, // en/fr/es/de
	{suffix: "ar"}, // es
	{suffix: "ir"}, // fr/es
	{suffix: "ez"}, // fr
	{suffix: "en"}, // de
	{suffix: "ee"}, // fr feminine participle (reservee)
	// 1
	{suffix: "s", cond: func(st []byte) bool { // plural; not after s or u (class, status)
		c := st[len(st)-1]
		return c != 's' && c != 'u'
	}},
	{suffix: "e"},
	{suffix: "a"},
	{suffix: "o"},
	{suffix: "y", repl: "i", cond: func(st []byte) bool { return !isVowel(st[len(st)-1]) }}, // query -> queri
}

// rulesByLast indexes stemRules by the last byte of their suffix (keeping their order).
var rulesByLast = func() (idx [26][]*stemRule) {
	for i := range stemRules {
		r := &stemRules[i]
		c := r.suffix[len(r.suffix)-1] - 'a'
		idx[c] = append(idx[c], r)
	}
	return idx
}()

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// stem stems the folded lower-case word w in place and returns the stem (a prefix of w's storage, possibly
// with its last byte replaced). Words that are not all ASCII letters are returned unchanged.
func stem(w []byte) []byte {
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}
	for {
		applied := false
		if len(w) == 0 {
			break
		}
		for _, r := range rulesByLast[w[len(w)-1]-'a'] {
			n, ls := len(w), len(r.suffix)
			if n-ls+len(r.repl) < minStem || n <= ls || string(w[n-ls:]) != r.suffix {
				continue
			}
			if r.cond != nil && !r.cond(w[:n-ls]) {
				continue
			}
			w = append(w[:n-ls], r.repl...)
			applied = true
			break
		}
		if !applied {
			break
		}
	}
	if n := len(w); n >= 4 && w[n-1] == w[n-2] && !isVowel(w[n-1]) {
		switch w[n-1] {
		case 's', 'l', 'f', 'z':
		default:
			w = w[:n-1]
		}
	}
	return w
}
