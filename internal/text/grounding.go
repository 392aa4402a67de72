// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Index is the fact index of one text (a source of a response, a handoff payload): the
// keys its facts are matched by (docs/decisions/text.md §6). Every matching rule tests
// membership in one text's keys or containment in one text, so looking a fact up in several
// indexes (FoundIn, UngroundedIn) gives what one index of all their texts would: a caller
// that matches against overlapping sets of texts indexes each text once. An Index is not
// safe for concurrent use (it lower-cases and normalises its text on first need).
type Index struct {
	// The keys, with the kinds of key each is (keyNumber, …): the numKey of every
	// number-like run and every digit run with and without leading zeros (numbers), the
	// idKey of every chunk that contains a digit (ids), date values and both readings of
	// ambiguous ones (dates), and the "--MM-DD" and "YYYY-MM" of full dates (derived).
	// A text has few: they are kept in small, searched in order, until there are more
	// than smallIndex, then in keys.
	small []indexKey
	keys  map[string]keyKind
	text  string // the capped text; "" for an empty one
	lower string // lower-cased text, made on first use
	words string // cueNorm'ed text, made on first use
	alnum string // idKey of the whole text, made on the first id look-up before lexing

	lowerDone, wordsDone, alnumDone bool
	lexed                           bool // the lexer's keys are in (NewIndex makes them on first need)
}

// smallIndex is the most keys an Index keeps in a slice.
const smallIndex = 16

type indexKey struct {
	key  string
	kind keyKind
}

// keyKind says which key sets of an Index hold a key (bits).
type keyKind uint8

const (
	keyNumber keyKind = 1 << iota
	keyAmount         // a number-like run that stands alone (keyNumber too)
	keyID
	keyDate
	keyDerived
)

// NewIndex indexes s (capped at MaxInputBytes) for fact matching. Only the number keys
// (a scan of the digits) are made here; the keys that need the facts lexer (ids, dates,
// derived dates) are made on the first look-up that reads them (lex), so a text that is
// only asked for numbers, amounts, emails, URLs, names, or ids that its digit runs
// already answer, is never lexed. The answers are the same either way.
func NewIndex(s string) *Index {
	h := &Index{}
	h.text = capInput(s)
	h.addNumbers(h.text)
	h.lexed = h.text == ""
	return h
}

func (h *Index) put(k string, kind keyKind) {
	if h.keys != nil {
		h.keys[k] |= kind
		return
	}
	for i := range h.small {
		if h.small[i].key == k {
			h.small[i].kind |= kind
			return
		}
	}
	if len(h.small) < smallIndex {
		if h.small == nil {
			h.small = make([]indexKey, 0, 8)
		}
		h.small = append(h.small, indexKey{k, kind})
		return
	}
	h.keys = make(map[string]keyKind, 2*smallIndex)
	for _, e := range h.small {
		h.keys[e.key] = e.kind
	}
	h.small = nil
	h.keys[k] |= kind
}

// kind returns the kinds of key k is in the index (0 when it is none), among the kinds of
// want; it lexes the text first when want asks for a kind that only the lexer makes.
func (h *Index) kind(k string, want keyKind) keyKind {
	if want&^(keyNumber|keyAmount) != 0 && !h.lexed {
		h.lex()
	}
	if h.keys != nil {
		return h.keys[k] & want
	}
	for i := range h.small {
		if h.small[i].key == k {
			return h.small[i].kind & want
		}
	}
	return 0
}

// hasID reports whether k is the idKey of one of the text's chunks (an id key). An id key
// is idKey of a substring of the text, so it is a substring of idKey of the whole text:
// when k is not, the text is not lexed to know it.
func (h *Index) hasID(k string) bool {
	if !h.lexed {
		if !h.alnumDone {
			h.alnum, h.alnumDone = idKey(h.text), true
		}
		if !strings.Contains(h.alnum, k) {
			return false
		}
	}
	return h.kind(k, keyID) != 0
}

// lex adds the keys of the facts lexer (ids, dates, derived dates) to an index made by
// NewIndex, once.
func (h *Index) lex() {
	h.lexed = true
	e := extractForIndex(h.text)
	defer e.release()
	h.addLexedKeys(e)
}

// Analyze returns SalientFacts(s) and NewIndex(s) from one lexing of s: for a text that is
// both a source of facts and looked up in (a tool result, a user message, a handoff payload).
func Analyze(s string) ([]Fact, *Index) {
	h := &Index{lexed: true}
	s = capInput(s)
	if s == "" {
		return SalientFacts(s), h
	}
	e := newExtractor(s)
	defer e.release()
	e.scanQuotes()
	e.lexForIndex()
	h.addLexed(e)
	e.classify()
	return e.result(), h
}

// addLexed indexes the text of e (not empty, capped), lexed as far as extractForIndex goes.
// Its facts so far are URLs and month-name dates, and the quoted strings of a full
// extraction (Analyze), which are not keys.
func (h *Index) addLexed(e *extractor) {
	h.text = e.s
	h.addNumbers(e.s)
	h.addLexedKeys(e)
}

// addNumbers adds the number keys of s: the numKey of every number-like run, and every
// digit run as written and without leading zeros. A run that stands alone (standsAlone)
// is an amount key too. They need no lexing.
func (h *Index) addNumbers(s string) {
	// number-like runs: digits with . , separators
	for i := 0; i < len(s); {
		if !isDigitByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && (isDigitByte(s[j]) || (s[j] == '.' || s[j] == ',') && j+1 < len(s) && isDigitByte(s[j+1])) {
			j++
		}
		run := s[i:j]
		alone := standsAlone(s, i, j)
		switch {
		case !allDigits(run):
			var buf [64]byte
			kind := keyNumber
			if alone {
				kind |= keyAmount
			}
			h.put(string(appendNumberKey(buf[:0], []byte(run), true)), kind)
		case alone:
			h.put(run[len(run)-1-len(strings.TrimLeft(run[:len(run)-1], "0")):], keyAmount)
		}
		if g, ok := spaceGroupedKey(s, i, j); ok { // "1 234,50"
			h.put(g, keyAmount)
		}
		if listRun(s, i, j) {
			// A list written without spaces ("[10,20]", "Widget,2,45.00"): each item.
			for a := i; a < j; {
				b := j
				if c := strings.IndexByte(s[a:j], ','); c >= 0 {
					b = a + c
				}
				if b > a && standsAlone(s, a, b) {
					var buf [64]byte
					h.put(string(appendNumberKey(buf[:0], []byte(s[a:b]), true)), keyAmount)
				}
				a = b + 1
			}
		}
		// every digit run, as written and without leading zeros
		for k := i; k < j; {
			l := k
			for l < j && isDigitByte(s[l]) {
				l++
			}
			d := s[k:l]
			h.put(d, keyNumber)
			if z := strings.TrimLeft(d[:len(d)-1], "0"); len(z) != len(d)-1 {
				h.put(d[len(d)-1-len(z):], keyNumber)
			}
			k = l + 1
		}
		i = j
	}
}

// addLexedKeys adds the keys that come from the lexer: the dates of URLs and month-name
// dates, and the idKey and numeric date of every chunk that contains a digit.
func (h *Index) addLexedKeys(e *extractor) {
	for _, pf := range e.facts { // URLs and month-name dates
		if pf.f.Kind != KindQuoted {
			h.addDate(pf.f.Value)
		}
	}
	for i, c := range e.chunks {
		if e.used[i] || !strings.ContainsFunc(c.core, unicode.IsDigit) {
			continue
		}
		h.put(idKey(c.core), keyID)
		if v, ok := numericDate(c.core); ok {
			h.addDate(v)
		}
	}
}

func (h *Index) addDate(v string) {
	h.put(v, keyDate)
	for _, d := range ambiguousDates(v) {
		h.put(d, keyDate)
		h.derive(d)
	}
	h.derive(v)
}

func (h *Index) derive(v string) {
	if len(v) == 10 && v[4] == '-' && v[7] == '-' {
		h.put("--"+v[5:], keyDerived)
		h.put(v[:7], keyDerived)
	}
}

// idKey is the matching key of an id: lower-case letters and digits only ("ORD-12345" -> "ord12345").
func idKey(v string) string {
	simple := true
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isDigitByte(c) && (c < 'a' || c > 'z') {
			simple = false
			break
		}
	}
	if simple {
		return v
	}
	var stack [smallText]byte // most keys are built here: one allocation, the string
	b := stack[:0]
	if len(v) > len(stack) {
		b = make([]byte, 0, len(v))
	}
	for i := 0; i < len(v); {
		if c := v[i]; c < utf8.RuneSelf {
			// ASCII fast path: isAlnum and appendFold of a one-byte rune.
			if asciiClass[c]&clAlnum != 0 {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		if isAlnum(r) {
			b = appendFold(b, r)
		}
		i += size
	}
	return string(b)
}

// indexes is the texts a fact is looked up in: it is found when the rules hold over the
// union of their keys and in any one text (text.md §6).
type indexes []*Index

func (hs indexes) has(k string, kind keyKind) bool {
	for _, h := range hs {
		if h.kind(k, kind) != 0 {
			return true
		}
	}
	return false
}

func (hs indexes) containsLower(v string) bool {
	for _, h := range hs {
		if !h.lowerDone {
			h.lower, h.lowerDone = strings.ToLower(h.text), true
		}
		if h.text != "" && strings.Contains(h.lower, v) {
			return true
		}
	}
	return false
}

func (hs indexes) containsWords(v string) bool {
	n := cueNorm(v)
	if len(n) <= 2 {
		return false
	}
	for _, h := range hs {
		if !h.wordsDone {
			h.words, h.wordsDone = cueNorm(h.text), true
		}
		if h.text != "" && strings.Contains(h.words, n) {
			return true
		}
	}
	return false
}

// digitRuns calls yield with each run of 3 or more ASCII digits in v, in order, until it
// returns false; it reports whether every call returned true and how many runs it saw.
func digitRuns(v string, yield func(string) bool) (all bool, n int) {
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && isDigitByte(v[j]) {
			j++
		}
		if j-i >= 3 {
			n++
			if !yield(v[i:j]) {
				return false, n
			}
		}
		i = max(j, i+1)
	}
	return true, n
}

// found reports whether fact f occurs in the indexed texts (docs/decisions/text.md §6):
//   - number, amount: same numKey as a number-like run ("1200.50" = "1,200.5"); times as text;
//   - id: same idKey as an id or digit-bearing chunk, or (all digits) the same digit run, or every run of 3+
//     digits of the id is a digit run of the texts ("ORD-12345" is found in "order 12345");
//   - date: same value; a full date is also found by a year-less "--MM-DD" of the texts; "--MM-DD" and
//     "YYYY-MM" by a full date with that day or month; an ambiguous "03/04/2024" by either reading;
//   - email: as a substring of a lower-cased text; url: its part after the scheme and "www." likewise;
//   - quoted, name: its words (cueNorm) on word boundaries.
func (hs indexes) found(f Fact) bool {
	v := f.Value
	switch f.Kind {
	case KindNumber:
		if t, marker, ok := splitTime(v); ok {
			return hs.foundTime(t, marker)
		}
		return hs.has(numKey(v), keyNumber)
	case KindAmount:
		// Money stands alone in a source: a price is not grounded by the digits of an
		// order id, a phone number or a timestamp.
		return hs.has(numKey(v), keyAmount)
	case KindID:
		if n, ok := countUnit(v); ok {
			// "3-night": the count is the specific, a source states it as a number.
			return hs.has(numKey(n), keyNumber)
		}
		// The digit rules first: they need no lexing (NewIndex); the answer is their or.
		k := idKey(v)
		if allDigits(k) && hs.has(k, keyNumber) {
			return true
		}
		if all, n := digitRuns(v, func(r string) bool { return hs.has(r, keyNumber) }); all && n > 0 {
			return true
		}
		for _, h := range hs {
			if h.hasID(k) {
				return true
			}
		}
		return false
	case KindDate:
		if hs.has(v, keyDate) {
			return true
		}
		if len(v) == 10 && v[4] == '-' {
			return hs.has("--"+v[5:], keyDate)
		}
		if strings.HasPrefix(v, "--") || len(v) == 7 {
			return hs.has(v, keyDerived)
		}
		for _, d := range ambiguousDates(v) {
			if hs.has(d, keyDate) {
				return true
			}
		}
		return false
	case KindEmail:
		return hs.containsLower(v)
	case KindURL:
		u := strings.TrimPrefix(strings.TrimPrefix(v, "https://"), "http://")
		return hs.containsLower(strings.TrimPrefix(u, "www."))
	default:
		return hs.containsWords(v)
	}
}

// foundTime reports whether a source holds the time t ("2:40", "09:31:05") with the marker
// the response wrote after it ("am", "pm" or ""), with no digit around it: on the 24-hour
// clock with or without a leading zero ("2:40" pm in "14:40", "12:15" am in "00:15", "9:31"
// am in "09:31"), or as written with its marker ("2:40 pm", "2:40pm"). Without a marker the
// time is looked for as written, with or without a leading zero.
func (hs indexes) foundTime(t, marker string) bool {
	h, rest, _ := strings.Cut(t, ":")
	n, _ := strconv.Atoi(h)
	if n > 12 {
		marker = "" // "14:40 pm": a 24-hour time
	}
	hour := n
	switch {
	case marker == "pm" && n < 12:
		hour = n + 12
	case marker == "am" && n == 12:
		hour = 0
	}
	forms := []string{strconv.Itoa(hour) + ":" + rest, fmt.Sprintf("%02d:%s", hour, rest)}
	if marker != "" {
		forms = append(forms, strconv.Itoa(n)+":"+rest+" "+marker, strconv.Itoa(n)+":"+rest+marker)
		if rest == "00" { // "9am", "9 am"
			forms = append(forms, strconv.Itoa(n)+marker, strconv.Itoa(n)+" "+marker)
		}
	}
	for _, f := range forms {
		if hs.containsTime(f) {
			return true
		}
	}
	return false
}

// containsTime reports whether a source holds f (lower-case) with no digit right before or
// after it: "4:30" is not in "14:30".
func (hs indexes) containsTime(f string) bool {
	for _, h := range hs {
		if !h.lowerDone {
			h.lower, h.lowerDone = strings.ToLower(h.text), true
		}
		for off := 0; ; {
			k := strings.Index(h.lower[off:], f)
			if k < 0 {
				break
			}
			k += off
			end := k + len(f)
			if (k == 0 || !isDigitByte(h.lower[k-1])) && (end == len(h.lower) || !isDigitByte(h.lower[end])) {
				return true
			}
			off = k + 1
		}
	}
	return false
}

// Found reports, for each fact, whether it is found in haystack by the matching rules of
// Coverage (docs/decisions/text.md §6); the haystack is indexed once. Nil for no facts.
func Found(facts []Fact, haystack string) []bool {
	if len(facts) == 0 {
		return nil
	}
	return FoundIn(facts, NewIndex(haystack))
}

// FoundIn is Found over the texts of several indexes: a fact is found when the matching
// rules hold for the texts together (an id's digit runs may be in different texts).
func FoundIn(facts []Fact, idx ...*Index) []bool {
	if len(facts) == 0 {
		return nil
	}
	out := make([]bool, len(facts))
	for i, f := range facts {
		out[i] = indexes(idx).found(f)
	}
	return out
}

// Coverage is the fraction of facts found in payload (matching on normalised values; a number matches whatever formatting),
// in [0,1]; when facts is empty it falls back to content-word coverage of contextText's Tokens in payload; ok=false when there
// is nothing to cover (no facts and no content words).
//
// With facts: |{f ∈ facts : f found in payload}| / |facts| (duplicates in facts count each; matching rules in
// found). Without: |distinct Tokens(contextText) ∩ Tokens(payload)| / |distinct Tokens(contextText)|.
// An empty payload scores 0 when there is something to cover.
func Coverage(facts []Fact, contextText, payload string) (score float64, ok bool) {
	if len(facts) > 0 {
		return CoverageIn(facts, NewIndex(payload)), true
	}
	want := Tokens(contextText)
	if len(want) == 0 {
		return 0, false
	}
	have := make(map[string]struct{}, len(want))
	for _, t := range Tokens(payload) {
		have[t] = struct{}{}
	}
	distinct := make(map[string]bool, len(want))
	n := 0
	for _, t := range want {
		if distinct[t] {
			continue
		}
		distinct[t] = true
		if _, ok := have[t]; ok {
			n++
		}
	}
	return float64(n) / float64(len(distinct)), true
}

// CoverageIn is Coverage's fraction of facts (not empty) found in the indexed payload.
func CoverageIn(facts []Fact, payload *Index) float64 {
	n, hs := 0, indexes{payload}
	for _, f := range facts {
		if hs.found(f) {
			n++
		}
	}
	return float64(n) / float64(len(facts))
}

// smallCount is the largest plain integer that Ungrounded does not treat as a specific.
const smallCount = 10

// Ungrounded returns the facts stated in response (kinds id, number, amount, date, email, url,
// name) that appear in none of the sources (user messages, tool results, handoff payloads,
// instructions).
//
// Rule (docs/decisions/text.md §6): the response's SalientFacts minus quoted strings, minus list
// markers (never facts: "1." or "2)" starting a line), minus numbers (kind number, not amounts) that are plain
// integers 0..10 ("3 options", "step 2"); numbers written in words ("three", "twelve") are never extracted.
// Each remaining fact is looked up in all sources (each capped at MaxInputBytes) with the matching rules of
// Coverage. Nil when everything is grounded.
func Ungrounded(response string, sources ...string) []Fact {
	return UngroundedFacts(SalientFacts(response), sources...)
}

// UngroundedFacts is Ungrounded for a response whose SalientFacts are given (stated), so
// that a caller grounding the same response against several sets of sources extracts its
// facts once. stated is only read.
func UngroundedFacts(stated []Fact, sources ...string) []Fact {
	if !NeedGrounding(stated) {
		return nil
	}
	idx := make([]*Index, len(sources))
	for i, s := range sources {
		idx[i] = NewIndex(s)
	}
	return UngroundedIn(stated, idx...)
}

// UngroundedIn is UngroundedFacts over indexed sources (NewIndex of each source), so that
// a caller grounding against overlapping sets of sources indexes each source once.
func UngroundedIn(stated []Fact, sources ...*Index) []Fact {
	var out []Fact
	for _, f := range stated {
		if candidate(f) && !indexes(sources).found(f) {
			out = append(out, f)
		}
	}
	return out
}

// candidate reports whether a stated fact needs a source: quoted strings and plain
// integers 0..smallCount do not.
func candidate(f Fact) bool {
	if f.Kind == KindQuoted {
		return false
	}
	if f.Kind == KindNumber && allDigits(f.Value) {
		if n, err := strconv.Atoi(f.Value); err == nil && n <= smallCount {
			return false
		}
	}
	return true
}

// NeedGrounding reports whether any of the stated facts needs a source (quoted strings and
// plain integers 0..10 do not): when none does, UngroundedIn returns nil whatever the
// sources, and a caller can skip indexing them.
func NeedGrounding(stated []Fact) bool {
	for _, f := range stated {
		if candidate(f) {
			return true
		}
	}
	return false
}
