// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// identWords splits s into lower-case, accent-folded identifier words: breaks at every character that is not
// a letter or digit (spaces, '_', '-', '.', ...), at a lower-case→upper-case change ("refundOrder" -> refund,
// order), before the last capital of a capital run followed by a lower-case letter ("HTTPServer" -> http,
// server) and between letters and digits ("gpt4" -> gpt, 4). It returns the words joined by single spaces
// and padded with one space at each end (" refund order ").
func identWords(s string) string {
	s = capInput(s)
	b := make([]byte, 1, len(s)+2)
	b[0] = ' '
	const (
		none = iota
		lower
		upper
		digit
	)
	prev := none
	for i, r := range s {
		if isMark(r) {
			continue
		}
		cls := none
		switch {
		case unicode.IsDigit(r):
			cls = digit
		case unicode.IsUpper(r):
			cls = upper
		case unicode.IsLetter(r):
			cls = lower
		}
		if cls == none {
			prev = none
			if b[len(b)-1] != ' ' {
				b = append(b, ' ')
			}
			continue
		}
		brk := prev != none && (prev == lower && cls == upper || (prev == digit) != (cls == digit))
		if !brk && prev == upper && cls == upper {
			// "HTTPServer": break before 'S' when a lower-case letter follows it.
			if nr, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):]); unicode.IsLower(nr) {
				brk = true
			}
		}
		if brk && b[len(b)-1] != ' ' {
			b = append(b, ' ')
		}
		b = appendFold(b, r)
		prev = cls
	}
	if b[len(b)-1] != ' ' {
		b = append(b, ' ')
	}
	return string(b)
}

// Mentions reports which of names occur in s as whole words/identifiers, tolerant to snake_case/camelCase/spaces
// ("refund_order" matches "refund order" and "refundOrder"). Order follows names; no duplicates.
//
// Both s and each name are split into identifier words (identWords: case, accents, '_', '-', '.', spaces and
// camelCase boundaries do not matter); a name is mentioned when its words occur consecutively in s's words, or
// when its words concatenated ("refundorder") are one word of s. Names with no letter or digit never match;
// a name listed twice is reported once. Nil when none is mentioned.
func Mentions(s string, names []string) []string {
	if len(names) == 0 {
		return nil
	}
	ws := identWords(s)
	var out []string
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if seen[name] {
			continue
		}
		nf := nameFormsOf(name)
		if nf.words == "" {
			continue
		}
		if strings.Contains(ws, nf.words) || strings.Contains(ws, nf.joined) {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// nameForms are the two padded forms Mentions looks for: the name's identWords
// (" refund order ") and the words joined (" refundorder "); words is "" when the name has
// no letter or digit.
type nameForms struct {
	name, words, joined string
}

// nameMemoSize is the number of entries of nameMemo (a power of 2).
const nameMemoSize = 1024

// nameMemo is a process-wide direct-mapped memo of the name forms (keyed by the name, FNV-1a
// 64 picks the entry, a hit compares the name): the same tool and agent names are looked
// for in every reasoning text of a session and across sessions. Entries are immutable
// and replaced whole (atomic pointers); the memo caches a pure function of the name.
var nameMemo [nameMemoSize]atomic.Pointer[nameForms]

func nameFormsOf(name string) *nameForms {
	if len(name) > maxMemoName {
		return computeNameForms(name)
	}
	slot := &nameMemo[fnv(name)&(nameMemoSize-1)]
	if nf := slot.Load(); nf != nil && nf.name == name {
		return nf
	}
	nf := computeNameForms(name)
	slot.Store(nf)
	return nf
}

// maxMemoName is the longest name (in bytes) nameMemo keeps.
const maxMemoName = 256

func computeNameForms(name string) *nameForms {
	nf := &nameForms{name: name}
	if nw := identWords(name); len(nw) > 2 {
		nf.words = nw
		nf.joined = " " + strings.ReplaceAll(strings.TrimSpace(nw), " ", "") + " "
	}
	return nf
}
