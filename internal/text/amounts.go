// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"strconv"
	"strings"
)

// This file holds what makes a number of a source an amount key (Index.addNumbers,
// keyAmount): money stands alone in its source, it is no part of a date, a time, an id, a
// phone number or a percentage (docs/decisions/text.md §6.3, §6.4).

// standsAlone reports whether the number-like run s[i:j] is a value of its own, which an
// amount may be, and not a part of something else (text.md §6.3):
//   - no digit is joined to it by "-", ":", "/" (or JSON's "\/") or "T": a date, a time, a
//     timestamp, a phone number ("2026-11-27T09:15:50Z", "010-0100"); except a range, two
//     runs joined by one "-" with nothing else joined, no leading zero and the first the
//     smaller ("10-20", "1,200-1,500"); and a ":" after a key ("item2:45.00");
//   - no id opens it: "#", or letters, alone or before "-" or "_" ("B45", "ORD-0150",
//     "TKT_45"), but a currency code or sign ("USD1250.40", "EUR-45", "Rs500"), a JSON
//     escape ("\n45.00", "\u20ac45.00") or the "x" of a count ("2x22.50");
//   - it is no percentage ("15%", "15 %"), no day of a month ("Nov 27", "27 March") and no
//     group of a number grouped with spaces ("234,50" in "1 234,50", "482" in "555 482":
//     spaceGroupedKey keys the whole).
func standsAlone(s string, i, j int) bool {
	if strings.HasPrefix(skipSpaces(s[j:]), "%") || dayOfMonth(s, i, j) || idBefore(s, i) {
		return false
	}
	if group3(s, i) && inGroupedNumber(s, i) {
		return false // a group of "1 234,50" or of "+34 910 555 482"
	}
	left, right := joinedLeft(s, i), joinedRight(s, j)
	if !left && !right {
		return true
	}
	// A range: one "-" to a run that is joined to nothing else.
	return !(left && right) && isRange(s, i, j, left)
}

// spaceGroupedKey returns the amount key of a number whose thousands are grouped with
// spaces ("1 234,50", "12 500"), which starts with the run s[i:j] of 1 to 3 digits: each
// group of 3 digits follows one space, no-break space or narrow no-break space, and the
// last may have a decimal part after "," or ".".
func spaceGroupedKey(s string, i, j int) (string, bool) {
	if j-i > 3 || s[i] == '0' || !allDigits(s[i:j]) {
		return "", false
	}
	if sp := groupSpaceBefore(s[:i]); sp > 0 && i-sp > 0 && isDigitByte(s[i-sp-1]) {
		return "", false // a group, not the start
	}
	b := []byte(s[i:j])
	k, groups := j, 0
	for {
		sp := groupSpaceAt(s[k:])
		if sp == 0 || !group3(s, k+sp) || groups == maxGroups {
			break
		}
		b = append(b, s[k+sp:k+sp+3]...)
		k += sp + 3
		groups++
		if k+1 < len(s) && (s[k] == ',' || s[k] == '.') && isDigitByte(s[k+1]) {
			end := numberRunEnd(s, k+1)
			b = append(b, '.')
			b = append(b, s[k+1:end]...)
			break
		}
	}
	if groups == 0 {
		return "", false
	}
	var buf [64]byte
	return string(appendNumberKey(buf[:0], b, true)), true
}

// inGroupedNumber reports whether the 3 digits at s[i:] continue a number grouped with
// spaces: before them, after one group space each, come at most maxGroups-1 groups of 3
// digits and a head of 1 to 3 digits that follows no digit, ":", "-", "." or "," (so
// "450.00" after "Order 58213 " or "14:30 " stands alone).
func inGroupedNumber(s string, i int) bool {
	k := i
	for range maxGroups {
		sp := groupSpaceBefore(s[:k])
		if sp == 0 {
			return false
		}
		end := k - sp
		start := end
		for start > 0 && end-start <= 3 && isDigitByte(s[start-1]) {
			start--
		}
		if n := end - start; n == 0 || n > 3 {
			return false
		}
		if end-start == 3 && groupSpaceBefore(s[:start]) > 0 {
			if p := start - groupSpaceBefore(s[:start]); p > 0 && isDigitByte(s[p-1]) {
				k = start // a group before this one: go on to the head
				continue
			}
		}
		return start == 0 || strings.IndexByte("0123456789:-.,", s[start-1]) < 0
	}
	return false
}

// group3 reports whether s[k:] opens with exactly 3 digits (a thousands group).
func group3(s string, k int) bool {
	return k+3 <= len(s) && allDigits(s[k:k+3]) && (k+3 == len(s) || !isDigitByte(s[k+3]))
}

// listRun reports whether the number-like run s[i:j] holds a "," and is a list of numbers
// rather than one: it follows "[" or "," (a JSON array, a CSV row), or it is no number.
func listRun(s string, i, j int) bool {
	if strings.IndexByte(s[i:j], ',') < 0 {
		return false
	}
	if i > 0 && (s[i-1] == '[' || s[i-1] == ',') {
		return true
	}
	var scratch [32]byte
	_, _, ok := numberParts(scratch[:0], []byte(s[i:j]))
	return !ok
}

// joins reports whether c joins two digit runs into one thing (a date, a time, an id).
func joins(c byte) bool { return c == '-' || c == ':' || c == '/' || c == 'T' }

// joinedRight reports whether a digit follows the run ending at j through a joining
// character ("-", ":", "/", "\/", "T").
func joinedRight(s string, j int) bool {
	if j+1 < len(s) && joins(s[j]) && isDigitByte(s[j+1]) {
		return true
	}
	return j+2 < len(s) && s[j] == '\\' && s[j+1] == '/' && isDigitByte(s[j+2])
}

// joinedLeft reports whether the run starting at i follows a digit through a joining
// character; a ":" after a digit that ends a key ("item2:") does not join.
func joinedLeft(s string, i int) bool {
	if i >= 3 && s[i-1] == '/' && s[i-2] == '\\' && isDigitByte(s[i-3]) {
		return true
	}
	if i < 2 || !joins(s[i-1]) || !isDigitByte(s[i-2]) {
		return false
	}
	if s[i-1] != ':' {
		return true
	}
	m := i - 2
	for m > 0 && isDigitByte(s[m-1]) {
		m--
	}
	return m == 0 || !isLetterByte(s[m-1])
}

// isRange reports whether the run s[i:j], joined on one side (left says which), is one end
// of a range: the other run is joined by a single "-" and to nothing else, neither has a
// leading zero, and the first is smaller.
func isRange(s string, i, j int, left bool) bool {
	var a, b [2]int // the two runs, first then second
	if left {
		if s[i-1] != '-' {
			return false
		}
		h := numberRunStart(s, i-1)
		a, b = [2]int{h, i - 1}, [2]int{i, j}
	} else {
		if s[j] != '-' {
			return false
		}
		k := numberRunEnd(s, j+1)
		a, b = [2]int{i, j}, [2]int{j + 1, k}
	}
	if joinedLeft(s, a[0]) || joinedRight(s, b[1]) || hasLeadingZero(s[a[0]:a[1]]) || hasLeadingZero(s[b[0]:b[1]]) {
		return false
	}
	x, okx := runValue(s[a[0]:a[1]])
	y, oky := runValue(s[b[0]:b[1]])
	return okx && oky && x < y
}

// numberRunStart returns the start of the number-like run that ends at end (digits, with
// "." or "," between two digits).
func numberRunStart(s string, end int) int {
	h := end
	for h > 0 && (isDigitByte(s[h-1]) || (s[h-1] == '.' || s[h-1] == ',') && h >= 2 && isDigitByte(s[h-2]) && h < end) {
		h--
	}
	return h
}

// numberRunEnd returns the end of the number-like run that starts at start.
func numberRunEnd(s string, start int) int {
	k := start
	for k < len(s) && (isDigitByte(s[k]) || (s[k] == '.' || s[k] == ',') && k+1 < len(s) && isDigitByte(s[k+1])) {
		k++
	}
	return k
}

func hasLeadingZero(run string) bool { return len(run) > 1 && run[0] == '0' && isDigitByte(run[1]) }

// runValue is the value of a number-like run.
func runValue(run string) (float64, bool) {
	var buf [64]byte
	v, err := strconv.ParseFloat(string(appendNumberKey(buf[:0], []byte(run), true)), 64)
	return v, err == nil
}

// currencySigns are letters that write a currency before an amount and are no ISO code
// (currencyWords has those).
var currencySigns = wordSet(`rs kr rm rp`)

// idBefore reports whether an id opens the run at i: "#", or letters directly or before "-"
// or "_", unless they are a currency code or sign, a JSON escape or the "x" of a count.
func idBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	k := i
	switch s[i-1] {
	case '#':
		return true
	case '-', '_':
		k = i - 1
	}
	e := k
	for k > 0 && isLetterByte(s[k-1]) {
		k--
	}
	switch {
	case k == e: // no letters: "-45", "_45"
		return false
	case e-k == 1 && k > 0 && s[k-1] == '\\' && strings.IndexByte("ntr", s[k]) >= 0: // "\n45.00"
		return false
	case e == i && i >= 6 && s[i-6] == '\\' && s[i-5] == 'u' && isHex(s[i-4:i]): // "\u20ac45.00"
		return false
	case e == i && e-k == 1 && (s[k] == 'x' || s[k] == 'X') && k > 0 && isDigitByte(s[k-1]): // "2x22.50"
		return false
	case e-k > 3:
		return true
	}
	var buf [3]byte
	w := buf[:0]
	for _, c := range []byte(s[k:e]) {
		w = append(w, c|0x20) // ASCII letters: lower case
	}
	_, code := currencyWords[string(w)]
	_, sign := currencySigns[string(w)]
	return !code && !sign
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; !isDigitByte(s[i]) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// dayOfMonth reports whether the run s[i:j] of one or two digits, 1 to 31, is the day of a
// date written with a month name before or after it ("Nov 27", "Nov. 27", "27 March").
func dayOfMonth(s string, i, j int) bool {
	if j-i > 2 || s[i] == '0' && j-i == 2 {
		return false
	}
	if d, _ := strconv.Atoi(s[i:j]); d < 1 || d > 31 {
		return false
	}
	after := skipSpaces(s[j:])
	if len(after) < len(s[j:]) && monthWord(after, true) {
		return true
	}
	before := strings.TrimRight(s[:i], " \u00a0")
	if len(before) == i {
		return false
	}
	before = strings.TrimSuffix(before, ".")
	return monthWord(before, false)
}

// monthWord reports whether s opens (first) or ends with an ASCII month name of months.
func monthWord(s string, first bool) bool {
	var buf [9]byte
	w := buf[:0]
	if first {
		for k := 0; k < len(s) && isLetterByte(s[k]); k++ {
			if len(w) == len(buf) {
				return false
			}
			w = append(w, s[k]|0x20)
		}
	} else {
		k := len(s)
		for k > 0 && isLetterByte(s[k-1]) {
			k--
		}
		if len(s)-k > len(buf) {
			return false
		}
		for _, c := range []byte(s[k:]) {
			w = append(w, c|0x20)
		}
	}
	_, ok := months[string(w)]
	return len(w) >= 3 && ok
}
