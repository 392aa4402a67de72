// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// MaxInputBytes caps the work done per input string: every function reads at most the first
// MaxInputBytes bytes of each argument and ignores the rest (see capInput).
const MaxInputBytes = 64 << 10

// capInput returns s when it fits in MaxInputBytes, else its first MaxInputBytes bytes cut back to the last
// ASCII white space among the last 256 of them, so that no word or number is split ("#12345" must not become
// "#1234"), or, when there is none, to the start of a rune.
func capInput(s string) string {
	if len(s) <= MaxInputBytes {
		return s
	}
	i := MaxInputBytes
	if sp := strings.LastIndexAny(s[MaxInputBytes-256:MaxInputBytes+1], " \t\r\n"); sp >= 0 {
		return s[:MaxInputBytes-256+sp]
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// foldLatin maps U+00C0..U+017F to lower-case ASCII (accents removed, ß -> ss, æ -> ae, œ -> oe, þ -> th).
// Empty entries are not letters (× and ÷). It is a variable initialiser, not an init function, so that the
// package-level cue lists normalised with appendFold are initialised after it.
var foldLatin = buildFoldLatin()

func buildFoldLatin() (foldLatin [0x180 - 0xC0]string) {
	set := func(from, to rune, v string) {
		for r := from; r <= to; r++ {
			foldLatin[r-0xC0] = v
		}
	}
	const latin1 = "a a a a a a ae c e e e e i i i i d n o o o o o _ o u u u u y th ss " +
		"a a a a a a ae c e e e e i i i i d n o o o o o _ o u u u u y th y"
	for i, v := range strings.Fields(latin1) {
		if v != "_" {
			foldLatin[i] = v
		}
	}
	set(0x100, 0x105, "a")
	set(0x106, 0x10D, "c")
	set(0x10E, 0x111, "d")
	set(0x112, 0x11B, "e")
	set(0x11C, 0x123, "g")
	set(0x124, 0x127, "h")
	set(0x128, 0x131, "i")
	set(0x132, 0x133, "ij")
	set(0x134, 0x135, "j")
	set(0x136, 0x138, "k")
	set(0x139, 0x142, "l")
	set(0x143, 0x14B, "n")
	set(0x14C, 0x151, "o")
	set(0x152, 0x153, "oe")
	set(0x154, 0x159, "r")
	set(0x15A, 0x161, "s")
	set(0x162, 0x167, "t")
	set(0x168, 0x173, "u")
	set(0x174, 0x175, "w")
	set(0x176, 0x178, "y")
	set(0x179, 0x17E, "z")
	set(0x17F, 0x17F, "s")
	return foldLatin
}

// smallText is the size of the stack buffers in which short normalised strings are built
// (cueNorm, idKey, normPhrase) before the string is made: one allocation instead of a
// growing byte slice and its copy. Longer ones get a buffer of their size.
const smallText = 256

// appendFold appends the lower-case, accent-folded form of the letter or digit r to b.
func appendFold(b []byte, r rune) []byte {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	case r >= 0xC0 && r < 0x180:
		if f := foldLatin[r-0xC0]; f != "" {
			return append(b, f...)
		}
	case r == 0x218 || r == 0x219: // Ș ș
		return append(b, 's')
	case r == 0x21A || r == 0x21B: // Ț ț
		return append(b, 't')
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}

// isCJK reports whether r is written without spaces between words (Han, Hiragana, Katakana, Hangul);
// such runs are tokenised as character bigrams.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// isMark reports whether r is a combining mark (dropped: "e"+U+0301 folds like "é").
func isMark(r rune) bool { return r >= 0x300 && unicode.Is(unicode.Mn, r) }

// ASCII character classes for the fast paths.
const (
	clAlnum = 1 << iota
	clSoft  // stays inside a facts chunk (isSoft)
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			t[c] |= clAlnum | clSoft
		}
	}
	for _, c := range ".,:/-_@#%+&'$" {
		t[c] |= clSoft
	}
	return t
}()

func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clAlnum != 0
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

// token is one normalised token of a scan: buf[start:end], num when it contains a digit.
type token struct {
	start, end int32
	num        bool
}

// scanner tokenises a string into normalised content tokens (see Tokens). It is reused through a pool.
type scanner struct {
	buf  []byte
	toks []token
	keys [2][]key // Similarity's per-message key sets
}

var scannerPool = sync.Pool{New: func() any { return &scanner{buf: make([]byte, 0, 512), toks: make([]token, 0, 64)} }}

// scan fills sc.buf and sc.toks with the normalised content tokens of s:
//   - words are maximal runs of letters and digits (combining marks are skipped inside a word; '.' or ','
//     between two digits stays inside a number); everything else separates words, apostrophes included
//     ("don't" -> "don", "t"; "l'ordre" -> "l", "ordre");
//   - each word is lower-cased and accent-folded;
//   - a word with a digit is a number/id token: its number form is canonicalised (numberKey) and it is
//     kept whatever its length;
//   - a word without digits is dropped when it has fewer than 2 runes or is a stop word, else stemmed,
//     and dropped when its stem is the stem of a framing word;
//   - runs of CJK characters become overlapping character bigrams (a run of one character, a unigram).
func (sc *scanner) scan(s string) {
	s = capInput(s)
	sc.buf, sc.toks = sc.buf[:0], sc.toks[:0]
	start, hasDigit, lastDigit := -1, false, false
	var prevCJK rune
	cjkRun := 0
	endCJK := func() {
		if cjkRun == 1 {
			st := len(sc.buf)
			sc.buf = utf8.AppendRune(sc.buf, prevCJK)
			sc.toks = append(sc.toks, token{start: int32(st), end: int32(len(sc.buf))})
		}
		cjkRun = 0
	}
	// breakRun ends the word or CJK run in progress at a separator.
	breakRun := func() {
		if start >= 0 {
			sc.endWord(start, hasDigit)
			start = -1
		}
		if cjkRun > 0 {
			endCJK()
		}
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// ASCII fast path: the same cases as below for a one-byte rune, which is never a
			// combining mark or CJK.
			i++
			switch {
			case asciiClass[c]&clAlnum != 0:
				if cjkRun > 0 {
					endCJK()
				}
				if start < 0 {
					start, hasDigit = len(sc.buf), false
				}
				// the whole run of ASCII letters and digits at once
				j := i
				for j < len(s) && s[j] < utf8.RuneSelf && asciiClass[s[j]]&clAlnum != 0 {
					j++
				}
				n0 := len(sc.buf)
				sc.buf = append(sc.buf, s[i-1:j]...)
				for k, c := range sc.buf[n0:] {
					if c <= '9' {
						hasDigit = true
					} else if c <= 'Z' {
						sc.buf[n0+k] = c + 'a' - 'A'
					}
				}
				lastDigit = s[j-1] <= '9'
				i = j
			case (c == '.' || c == ',') && start >= 0 && lastDigit && i < len(s) && isDigitByte(s[i]):
				sc.buf = append(sc.buf, c)
			default:
				breakRun()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		next := i + size
		switch {
		case isAlnum(r) && !isCJK(r):
			if cjkRun > 0 {
				endCJK()
			}
			if start < 0 {
				start, hasDigit = len(sc.buf), false
			}
			lastDigit = '0' <= r && r <= '9' || r >= utf8.RuneSelf && unicode.IsDigit(r)
			hasDigit = hasDigit || lastDigit
			sc.buf = appendFold(sc.buf, r)
		case (r == '.' || r == ',') && start >= 0 && lastDigit && next < len(s) && isDigitByte(s[next]):
			sc.buf = append(sc.buf, byte(r))
		case start >= 0 && isMark(r):
			// combining mark inside a word: dropped
		case isCJK(r):
			if start >= 0 {
				sc.endWord(start, hasDigit)
				start = -1
			}
			if cjkRun > 0 {
				st := len(sc.buf)
				sc.buf = utf8.AppendRune(sc.buf, prevCJK)
				sc.buf = utf8.AppendRune(sc.buf, r)
				sc.toks = append(sc.toks, token{start: int32(st), end: int32(len(sc.buf))})
			}
			prevCJK = r
			cjkRun++
		default:
			breakRun()
		}
		i = next
	}
	if start >= 0 {
		sc.endWord(start, hasDigit)
	}
	if cjkRun > 0 {
		endCJK()
	}
}

// endWord finishes the word buf[start:], keeping it as a token or dropping it.
func (sc *scanner) endWord(start int, hasDigit bool) {
	w := sc.buf[start:]
	if hasDigit {
		n0 := len(sc.buf)
		sc.buf = appendNumberKey(sc.buf, w, true) // reads w, writes after it
		sc.buf = append(sc.buf[:start], sc.buf[n0:]...)
		sc.toks = append(sc.toks, token{start: int32(start), end: int32(len(sc.buf)), num: true})
		return
	}
	if len(w) > maxMemoWord {
		// Long runs (hashes, base64, glued text) are rare and not worth keeping.
		st := wordStem(w)
		if st == nil {
			sc.buf = sc.buf[:start]
			return
		}
		sc.buf = sc.buf[:start+len(st)] // st is a prefix of w's storage
		sc.toks = append(sc.toks, token{start: int32(start), end: int32(len(sc.buf))})
		return
	}
	h := fnv(w)
	slot := &wordMemo[h&(wordMemoSize-1)]
	e := slot.Load()
	if e == nil || e.h != h || e.word != string(w) {
		e = &wordEntry{h: h, word: string(w)}
		if st := wordStem(w); st != nil {
			if e.word[:len(st)] == string(st) {
				e.stem = e.word[:len(st)]
			} else {
				e.stem = string(st)
			}
		}
		slot.Store(e)
	}
	if e.stem == "" {
		sc.buf = sc.buf[:start]
		return
	}
	sc.buf = append(sc.buf[:start], e.stem...)
	sc.toks = append(sc.toks, token{start: int32(start), end: int32(len(sc.buf))})
}

// wordStem returns the token of the folded word w without a digit, stemmed in place (a
// prefix of w's storage), or nil when the word is dropped: fewer than 2 runes, a stop
// word, or the stem of a framing word.
func wordStem(w []byte) []byte {
	if utf8.RuneCount(w) < 2 || isStop(w) {
		return nil
	}
	st := stem(w)
	if isFramingStem(st) {
		return nil
	}
	return st
}

// wordMemoSize is the number of entries of wordMemo (a power of 2), and maxMemoWord the
// longest folded word (in bytes) it keeps: the memo holds at most 16,384 words of at most
// 64 bytes (about 2 MiB with the entries).
const (
	wordMemoSize = 16384
	maxMemoWord  = 64
)

// wordMemo is a process-wide direct-mapped memo of wordStem, keyed by the folded word
// (its FNV-1a 64 hash picks the entry; a hit compares the word). Natural text repeats
// its words, so most words skip the stop list, the stemmer and the framing list. Entries
// are immutable and replaced whole (atomic pointers: safe for concurrent scans); the memo
// only caches a pure function, so results never depend on what it holds.
var wordMemo [wordMemoSize]atomic.Pointer[wordEntry]

type wordEntry struct {
	h    uint64
	word string
	stem string // "" when the word is dropped
}

// appendNumberKey appends to dst the canonical form of the word w that contains a digit. Words that are not
// made only of ASCII digits and '.'/',' separators, and plain digit runs, are appended unchanged (ids keep
// their leading zeros). Otherwise the separators are interpreted (numberParts) and the number is written
// with '.' as the decimal mark, no thousands separator and no leading zeros; when key is set, trailing zeros
// of the decimals are removed too ("1,200.50" -> "1200.5", "1200.00" -> "1200"), which makes "a number match
// whatever formatting". Separators that do not form a valid number ("1.2.3") become '.'.
func appendNumberKey(dst, w []byte, key bool) []byte {
	seps := 0
	for _, c := range w {
		switch {
		case isDigitByte(c):
		case c == '.' || c == ',':
			seps++
		default:
			return append(dst, w...)
		}
	}
	if seps == 0 {
		return append(dst, w...)
	}
	var scratch [32]byte
	intPart, frac, ok := numberParts(scratch[:0], w)
	if !ok {
		for _, c := range w {
			if c == ',' {
				c = '.'
			}
			dst = append(dst, c)
		}
		return dst
	}
	return appendCanonical(dst, intPart, frac, key)
}

// appendCanonical writes intPart (digits, possibly with leading zeros) and frac (digits) as a canonical
// number: no leading zeros (one "0" kept), '.' decimal mark, and when key is set no trailing zeros in frac.
func appendCanonical(dst, intPart, frac []byte, key bool) []byte {
	for len(intPart) > 1 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if len(intPart) == 0 {
		dst = append(dst, '0')
	}
	dst = append(dst, intPart...)
	if key {
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
	}
	if len(frac) > 0 {
		dst = append(dst, '.')
		dst = append(dst, frac...)
	}
	return dst
}

// numberParts interprets w, made of ASCII digits and at least one '.' or ',' (each between two digits),
// as a number and returns its integer digits (thousands separators removed; appended to buf) and decimal
// digits (a sub-slice of w). Rules:
//   - both '.' and ',' present: the last separator is the decimal mark and occurs once; the other one is the
//     thousands separator and must group the integer part in threes ("1,234.5", "1.234,5");
//   - only ',' once: thousands when the integer part has 1-3 digits not starting with 0 and exactly 3
//     digits follow ("1,200" = 1200), else decimal ("3,5" = 3.5, "0,500" = 0.5);
//   - only '.' once: decimal ("1.200" = 1.2);
//   - one kind several times: thousands when the groups are 1-3 digits then exactly 3 digits each
//     ("1,234,567", "1.234.567"), else not a number (ok=false, e.g. versions "1.2.3").
func numberParts(buf, w []byte) (intPart, frac []byte, ok bool) {
	// separator positions and kinds
	nsep, lastSep, firstSep := 0, -1, -1
	var dec byte
	mixed := false
	for i, c := range w {
		if c == '.' || c == ',' {
			if firstSep < 0 {
				firstSep = i
			} else if c != w[lastSep] {
				mixed = true
			}
			nsep++
			lastSep = i
			dec = c
		}
	}
	// thousands reports whether w[:end] is grouped as 1-3 digits (no leading 0) then groups of exactly 3
	// digits separated by sep.
	thousands := func(end int, sep byte) bool {
		if firstSep < 1 || firstSep > 3 || w[0] == '0' {
			return false
		}
		run := 0
		for i := firstSep + 1; i < end; i++ {
			switch c := w[i]; {
			case c == sep:
				if run != 3 {
					return false
				}
				run = 0
			case isDigitByte(c):
				run++
			default:
				return false
			}
		}
		return run == 3
	}
	digits := func(end int) []byte {
		for _, c := range w[:end] {
			if isDigitByte(c) {
				buf = append(buf, c)
			}
		}
		return buf
	}
	switch {
	case mixed:
		th := byte('.')
		if dec == '.' {
			th = ','
		}
		for _, c := range w[:lastSep] {
			if c == dec {
				return nil, nil, false
			}
		}
		if !thousands(lastSep, th) {
			return nil, nil, false
		}
		return digits(lastSep), w[lastSep+1:], true
	case nsep == 1 && dec == ',' && thousands(len(w), ','):
		return digits(len(w)), nil, true
	case nsep == 1:
		return w[:lastSep], w[lastSep+1:], true
	case thousands(len(w), dec):
		return digits(len(w)), nil, true
	}
	return nil, nil, false
}
