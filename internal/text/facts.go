// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Fact kinds (Fact.Kind).
const (
	KindID     = "id"
	KindNumber = "number"
	KindAmount = "amount"
	KindDate   = "date"
	KindEmail  = "email"
	KindURL    = "url"
	KindQuoted = "quoted"
	KindName   = "name"
)

// Fact is a salient fact: Kind is one of "id", "number", "amount", "date", "email", "url", "quoted", "name"; Value is normalised
// (e.g. "#12345" and "12345" -> "12345"; "$1,200.50" -> "1200.50"; dates to YYYY-MM-DD when unambiguous; emails/urls lower-cased).
//
// Value forms (docs/decisions/text.md §5): id: lower-case, leading '#' removed, other characters kept
// ("ord-12345"); number and amount: canonical number, '.' decimal mark, no thousands separator, no leading
// zeros, decimals as written ("1200.50"; times "10:30" as written); date: "YYYY-MM-DD", "YYYY-MM" (month and
// year), "--MM-DD" (day and month, no year) or, for an ambiguous numeric date such as "03/04/2024", the text as
// written; email: lower-case; url: lower-case without a trailing '/'; quoted and name: lower-case, accent-folded,
// single spaces.
type Fact struct{ Kind, Value string }

// chunk is a run of text between hard separators (see lexChunks), with its trimmed core.
type chunk struct {
	core      string // raw text without leading non-(letter|digit|'#'|currency) and trailing non-(letter|digit|'%'|currency)
	pos       int    // byte offset of core in the text
	lineStart bool   // first chunk of its line
	sentStart bool   // first chunk of the text, of a line, or after . ! ? … (in the gap before it)
	heading   bool   // on a markdown heading line ("## Title")
	code      bool   // inside a backtick code span or fence
	fa, fb    int32  // the folded core (lower-case, accents removed) is extractor.fbuf[fa:fb]
	afterByte byte   // byte right after the core (0 at the end of the text)
	afterNext byte   // byte after that
	gapPunct  bool   // the gap before the chunk contains something other than spaces
}

// folded returns the folded core of chunk i.
func (e *extractor) folded(i int) []byte { return e.fbuf[e.chunks[i].fa:e.chunks[i].fb] }

// isSoft reports whether r stays inside a chunk: letters, digits, combining marks, currency symbols and
// . , : / - _ @ # % + & ' ’.
func isSoft(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clSoft != 0
	}
	return r == '’' || isAlnum(r) || isMark(r) || unicode.Is(unicode.Sc, r)
}

func isCurrencySym(r rune) bool { return r == '$' || r >= 0x80 && unicode.Is(unicode.Sc, r) }

// coreStart is strings.IndexFunc(raw, letter, digit, '#' or currency) with an ASCII fast
// path: the byte offset where a chunk's core starts, or -1.
func coreStart(raw string) int {
	for i := 0; i < len(raw); {
		if c := raw[i]; c < utf8.RuneSelf {
			if asciiClass[c]&clAlnum != 0 || c == '#' || c == '$' {
				return i
			}
			i++
			continue
		}
		r, sz := utf8.DecodeRuneInString(raw[i:])
		if isAlnum(r) || isCurrencySym(r) {
			return i
		}
		i += sz
	}
	return -1
}

// coreLast is strings.LastIndexFunc(raw, letter, digit, '%' or currency) with an ASCII
// fast path: the byte offset of the last rune of a chunk's core, or -1.
func coreLast(raw string) int {
	for i := len(raw); i > 0; {
		if c := raw[i-1]; c < utf8.RuneSelf {
			i--
			if asciiClass[c]&clAlnum != 0 || c == '%' || c == '$' {
				return i
			}
			continue
		}
		r, sz := utf8.DecodeLastRuneInString(raw[:i])
		i -= sz
		if isAlnum(r) || isCurrencySym(r) {
			return i
		}
	}
	return -1
}

// span is a byte range [start, end).
type span struct{ start, end int }

// spanAt returns the index of the span of sp (sorted, non-overlapping) that contains pos, or -1.
func spanAt(sp []span, pos int) int {
	if len(sp) == 0 {
		return -1
	}
	i, _ := slices.BinarySearchFunc(sp, pos, func(s span, p int) int {
		if s.end <= p {
			return -1
		}
		if s.start > p {
			return 1
		}
		return 0
	})
	if i < len(sp) && sp[i].start <= pos && pos < sp[i].end {
		return i
	}
	return -1
}

// extractor holds the intermediate results of one SalientFacts run.
type extractor struct {
	s      string
	fbuf   []byte // folded cores of all chunks
	facts  []posFact
	urls   []span
	code   []span
	chunks []chunk
	used   []bool
	// oneWordNames are the chunks of the names of one word, for dropGermanNouns.
	oneWordNames []int
}

type posFact struct {
	pos int
	f   Fact
}

func (e *extractor) add(pos int, kind, value string) {
	if value != "" {
		e.facts = append(e.facts, posFact{pos, Fact{kind, value}})
	}
}

// SalientFacts extracts the salient facts of s (docs/scoring.md §4 handoff_score): ids, numbers, amounts, dates, emails, URLs,
// quoted strings, proper names (capitalised words not at sentence start, not stop words). Deduplicated, in order of appearance.
//
// s is capped at MaxInputBytes. The exact recognition rules are in docs/decisions/text.md §5; in short:
// URLs start with http://, https:// or www.; quoted strings are 1-120 runes between "…", “…”, «…», „…“, ‘…’,
// `…` or '…' on one line; the rest of the text is cut into chunks at white space and punctuation other than
// . , : / - _ @ # % + & ' (so JSON is split into its values), and each chunk is an email, a numeric or
// month-name date, an amount (currency symbol, ISO code or word next to a number), a number, an id (a '#'
// number, a run of 5+ digits, or digits mixed with letters or - _ . / :) or part of a proper name. List markers
// ("1." or "2)" starting a line) are not facts. Nil when there is none.
func SalientFacts(s string) []Fact {
	e := extract(s)
	defer e.release()
	return e.result()
}

// extract returns the extractor of s with every step done; the caller releases it when
// done reading it (release).
func extract(s string) *extractor {
	e := newExtractor(capInput(s))
	e.scanQuotes()
	e.lexForIndex()
	e.classify()
	return e
}

// extractForIndex does the part of extract that an Index needs: URLs, chunks and month-name dates (no
// quoted strings, names or classification); s is already capped. The caller releases it.
func extractForIndex(s string) *extractor {
	e := newExtractor(s)
	e.lexForIndex()
	return e
}

// lexForIndex finds the URLs, cuts the chunks and reads the month-name dates: the steps
// that an Index needs, which a full extraction does after scanQuotes. What scanQuotes adds
// (quoted facts, and code spans that only classify reads) is no key of an Index.
func (e *extractor) lexForIndex() {
	e.scanURLs()
	e.lexChunks()
	e.resetUsed()
	e.monthDates()
}

// extractorPool recycles the extractors' buffers (chunks, folded cores, facts, spans).
// Nothing read out of an extractor aliases them: facts and chunk cores are strings (the
// input's substrings or copies), so an extractor is released once its reader is done.
var extractorPool = sync.Pool{New: func() any { return new(extractor) }}

func newExtractor(s string) *extractor {
	e := extractorPool.Get().(*extractor)
	e.s = s
	return e
}

// release clears the extractor (so that the pool holds no reference to the input) and
// returns it to the pool.
func (e *extractor) release() {
	clear(e.facts[:cap(e.facts)])
	clear(e.chunks[:cap(e.chunks)])
	*e = extractor{fbuf: e.fbuf[:0], facts: e.facts[:0], urls: e.urls[:0], code: e.code[:0],
		chunks: e.chunks[:0], used: e.used[:0], oneWordNames: e.oneWordNames[:0]}
	extractorPool.Put(e)
}

// resetUsed makes used one false per chunk.
func (e *extractor) resetUsed() {
	n := len(e.chunks)
	e.used = slices.Grow(e.used[:0], n)[:n]
	clear(e.used)
}

func (e *extractor) result() []Fact {
	if len(e.facts) == 0 {
		return nil
	}
	slices.SortStableFunc(e.facts, func(a, b posFact) int { return a.pos - b.pos })
	seen := make(map[Fact]bool, len(e.facts))
	out := make([]Fact, 0, len(e.facts))
	for _, pf := range e.facts {
		if !seen[pf.f] {
			seen[pf.f] = true
			out = append(out, pf.f)
		}
	}
	return out
}

// closingQuote returns the closing quote of the opening quote r: "…", “…”, «…», „…“, ‘…’, `…`, '…'.
func closingQuote(r rune) (rune, bool) {
	switch r {
	case '"', '`', '\'':
		return r, true
	case '“':
		return '”', true
	case '«':
		return '»', true
	case '„':
		return '“', true
	case '‘':
		return '’', true
	}
	return 0, false
}

const maxQuotedRunes = 120

// scanQuotes records quoted strings (KindQuoted) and backtick code spans. A straight single quote opens only
// at the start of the text or after white space or ( [ {, and closes only before the end, white space or
// punctuation, so apostrophes ("don't") are not quotes. Triple-backtick fences are code, not quoted. A quoted
// string followed by ':' is a key ("order_id": 1) and not a fact, nor is one without a letter or digit ("!").
func (e *extractor) scanQuotes() {
	s := e.s
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf && b != '"' && b != '\'' && b != '`' {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if strings.HasPrefix(s[i:], "```") {
			end := strings.Index(s[i+3:], "```")
			if end < 0 {
				e.code = append(e.code, span{i, len(s)})
				return
			}
			e.code = append(e.code, span{i, i + 3 + end + 3})
			i += 3 + end + 3
			continue
		}
		closeR, ok := closingQuote(r)
		if !ok || r == '\'' && i > 0 && !strings.ContainsRune(" \t\r\n([{", lastRune(s[:i])) {
			i += size
			continue
		}
		start := i + size
		j := start
		found := -1
		for n := 0; j < len(s) && n <= maxQuotedRunes; n++ { // bounded: longer quotes are not facts
			r2, sz2 := utf8.DecodeRuneInString(s[j:])
			if r2 == '\n' {
				break
			}
			if r2 == closeR && j > start {
				if r == '\'' && j+sz2 < len(s) {
					nr, _ := utf8.DecodeRuneInString(s[j+sz2:])
					if isAlnum(nr) {
						j += sz2
						continue
					}
				}
				found = j
				break
			}
			j += sz2
		}
		if found < 0 {
			i += size
			continue
		}
		if r == '`' {
			e.code = append(e.code, span{start, found})
		}
		if isKey := strings.HasPrefix(strings.TrimLeft(s[found+utf8.RuneLen(closeR):], " \t"), ":"); isKey {
			// a JSON/YAML key ("order_id": ...), not a quoted fact
		} else if v := normPhrase(s[start:found]); strings.ContainsFunc(v, isAlnum) {
			e.add(i, KindQuoted, v)
		}
		i = found + utf8.RuneLen(closeR)
	}
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// normPhrase lower-cases and accent-folds s and collapses white space (quoted and name values).
func normPhrase(s string) string {
	var stack [smallText]byte // most phrases are built here: one allocation, the string
	b := stack[:0]
	if len(s) > len(stack) {
		b = make([]byte, 0, len(s))
	}
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = len(b) > 0
		case isMark(r):
		default:
			if space {
				b = append(b, ' ')
				space = false
			}
			if isAlnum(r) {
				b = appendFold(b, r)
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
	}
	return string(b)
}

// scanURLs records URLs: "http://", "https://" or "www." (any case) not preceded by a letter or digit, up to
// white space or one of " ' < > ` | \ { } [ ] ( ), then trailing . , ; : ! ? * removed. Value: lower-case,
// trailing '/' removed.
func (e *extractor) scanURLs() {
	s := e.s
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c != 'h' && c != 'w' || i+1 >= len(s) || s[i+1]|0x20 != 't' && s[i+1]|0x20 != 'w' {
			continue
		}
		rest := s[i:]
		if !(hasPrefixFold(rest, "http://") || hasPrefixFold(rest, "https://") || hasPrefixFold(rest, "www.")) {
			continue
		}
		if i > 0 && isAlnum(lastRune(s[:i])) {
			continue
		}
		j := i
		for j < len(s) {
			r, sz := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) || strings.ContainsRune("\"'<>`|\\{}[]()", r) {
				break
			}
			j += sz
		}
		u := strings.TrimRight(s[i:j], ".,;:!?*")
		if len(u) <= len("www.") {
			continue
		}
		e.urls = append(e.urls, span{i, i + len(u)})
		e.add(i, KindURL, strings.TrimRight(strings.ToLower(u), "/"))
		i = j - 1
	}
}

func hasPrefixFold(s, p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }

// lexChunks cuts the text (outside URLs) into chunks at hard separators (every rune that is not isSoft).
func (e *extractor) lexChunks() {
	s := e.s
	e.chunks = slices.Grow(e.chunks[:0], len(s)/6+1)
	e.fbuf = slices.Grow(e.fbuf[:0], len(s))
	gapStart := 0
	heading, first, afterMarker := false, true, false
	flush := func(start, end int) {
		raw := s[start:end]
		cs := coreStart(raw)
		if cs < 0 {
			return
		}
		ce := coreLast(raw)
		if ce < cs {
			return
		}
		_, sz := utf8.DecodeRuneInString(raw[ce:])
		core := raw[cs : ce+sz]
		fa := len(e.fbuf)
		for k := 0; k < len(core); {
			if b := core[k]; b < utf8.RuneSelf {
				if 'A' <= b && b <= 'Z' {
					b += 'a' - 'A'
				}
				e.fbuf = append(e.fbuf, b)
				k++
				continue
			}
			r, sz := utf8.DecodeRuneInString(core[k:])
			if !isMark(r) {
				e.fbuf = appendFold(e.fbuf, r)
			}
			k += sz
		}
		gap := s[gapStart : start+cs]
		nl, term, punct := first, false, false
		lastNL := -1
		for k := 0; k < len(gap); k++ {
			switch b := gap[k]; b {
			case '\n', '\r':
				nl, lastNL = true, k
			case ' ', '\t', '\f', '\v':
			case '.', '!', '?':
				term, punct = true, true
			default:
				punct = true
				if b >= utf8.RuneSelf && !term {
					term = strings.ContainsAny(gap[k:], "…。！？")
				}
			}
		}
		if nl {
			line := strings.TrimSpace(gap[lastNL+1:])
			heading = line != "" && strings.Trim(line, "#") == ""
		}
		c := chunk{
			core: core, pos: start + cs, lineStart: nl, heading: heading, fa: int32(fa), fb: int32(len(e.fbuf)),
			sentStart: nl || term || afterMarker,
			code:      spanAt(e.code, start+cs) >= 0,
			gapPunct:  punct,
		}
		if p := start + cs + len(core); p < len(s) {
			c.afterByte = s[p]
			if p+1 < len(s) {
				c.afterNext = s[p+1]
			}
		}
		e.chunks = append(e.chunks, c)
		gapStart = start + cs + len(core)
		first = false
		afterMarker = isListMarker(c)
	}
	start, nextURL := -1, 0
	for i := 0; i < len(s); {
		if nextURL < len(e.urls) && i >= e.urls[nextURL].start { // URLs are sorted and do not overlap
			if start >= 0 {
				flush(start, i)
				start = -1
			}
			i = e.urls[nextURL].end
			nextURL++
			continue
		}
		var soft bool
		size := 1
		if c := s[i]; c < utf8.RuneSelf {
			soft = asciiClass[c]&clSoft != 0
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			soft = isSoft(r)
		}
		if soft {
			if start < 0 {
				start = i
			}
		} else {
			if start >= 0 {
				flush(start, i)
				start = -1
			}
		}
		i += size
	}
	if start >= 0 {
		flush(start, len(s))
	}
}

// Month names (folded; en/fr/es/de, full and common abbreviations) and weekday names.
var months = func() map[string]int {
	m := map[string]int{}
	lists := []string{
		"january february march april may june july august september october november december",
		"janvier fevrier mars avril mai juin juillet aout septembre octobre novembre decembre",
		"enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
		"januar februar marz april mai juni juli august september oktober november dezember",
		"jan feb mar apr may jun jul aug sep oct nov dec",
	}
	for _, l := range lists {
		for i, w := range strings.Fields(l) {
			m[w] = i + 1
		}
	}
	for w, n := range map[string]int{"sept": 9, "janv": 1, "fevr": 2, "avr": 4, "juil": 7, "setiembre": 9, "janner": 1} {
		m[w] = n
	}
	return m
}()

var weekdays = wordSet(weekdayList)

const weekdayList = `monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri
sat sun lundi mardi mercredi jeudi vendredi samedi dimanche lunes martes miercoles jueves viernes sabado domingo
montag dienstag mittwoch donnerstag freitag samstag sonntag`

// afterTitle reports whether chunk i follows a title and its dot on the same line ("Dr.
// Patel"): the dot ends no sentence there.
func (e *extractor) afterTitle(i int) bool {
	if i == 0 || e.chunks[i].lineStart {
		return false
	}
	if _, ok := titles[string(e.folded(i-1))]; !ok {
		return false
	}
	prev := e.chunks[i-1]
	return strings.TrimSpace(e.s[prev.pos+len(prev.core):e.chunks[i].pos]) == "."
}

// titles come before a name and are no name themselves ("Dr. Linda Nguyen", "Herr Weber").
var titles = wordSet(`dr dra mr mrs ms mx prof mme mlle madame monsieur herr herrn frau sr sra srta senor
senora senorita don dona dott ing`)

// currencyWords are the ISO codes and words that make an adjacent number an amount.
var currencyWords = wordSet(`usd eur gbp jpy chf cad aud nzd inr cny rmb rub brl mxn sek nok dkk pln czk huf try
zar krw sgd hkd dollar dollars euro euros pound pounds yen bucks`)

// dayNum parses a day of month: 1-31 digits with an optional ordinal suffix (st nd rd th er e o º °).
func dayNum(core string) (int, bool) {
	d := 0
	i := 0
	for i < len(core) && isDigitByte(core[i]) {
		d = d*10 + int(core[i]-'0')
		i++
	}
	if i == 0 || i > 2 || d < 1 || d > 31 {
		return 0, false
	}
	for _, suf := range []string{"", "st", "nd", "rd", "th", "er", "e", "o", "º", "°"} {
		if strings.EqualFold(core[i:], suf) {
			return d, true
		}
	}
	return 0, false
}

// yearNum parses a 4-digit year 1000-2999.
func yearNum(core string) (int, bool) {
	if len(core) != 4 || !allDigits(core) || core[0] != '1' && core[0] != '2' {
		return 0, false
	}
	y, _ := strconv.Atoi(core)
	return y, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigitByte(s[i]) {
			return false
		}
	}
	return s != ""
}

var daysIn = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func isoDate(y, m, d int) string {
	if m < 1 || m > 12 || d < 1 || d > daysIn[m] || m == 2 && d == 29 && y > 0 && !(y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
		return ""
	}
	if y == 0 {
		return "--" + pad2(m) + "-" + pad2(d)
	}
	return strconv.Itoa(y) + "-" + pad2(m) + "-" + pad2(d)
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// monthDates finds dates written with a month name: "15 January 2024", "15. Januar 2024", "le 1er janvier
// 2024", "15 de enero de 2024", "January 15, 2024", "Jan 15", "January 2024". The day, month, year and the
// Spanish "de" chunks are consumed.
func (e *extractor) monthDates() {
	cs := e.chunks
	word := func(i int) []byte {
		if i < 0 || i >= len(cs) || e.used[i] {
			return nil
		}
		return e.folded(i)
	}
	core := func(i int) string {
		if i < 0 || i >= len(cs) || e.used[i] {
			return ""
		}
		return cs[i].core
	}
	isDe := func(i int) bool { w := word(i); return string(w) == "de" || string(w) == "del" }
	for i := range cs {
		if w := word(i); len(w) < 3 || len(w) > 10 || w[0] < 'a' || w[0] > 'z' {
			continue
		}
		m, ok := months[string(word(i))]
		if !ok {
			continue
		}
		var day, year int
		use := []int{i}
		j := i - 1
		if string(word(j)) == "de" {
			j--
		}
		if d, ok := dayNum(core(j)); ok && j >= 0 {
			day = d
			for k := j; k < i; k++ {
				use = append(use, k)
			}
		}
		k := i + 1
		if day == 0 {
			if d, ok := dayNum(core(k)); ok {
				day = d
				use = append(use, k)
				k++
			}
		}
		yk := k
		if isDe(yk) {
			yk++
		}
		if y, ok := yearNum(core(yk)); ok {
			year = y
			for x := k; x <= yk; x++ {
				use = append(use, x)
			}
		}
		var v string
		switch {
		case day > 0:
			v = isoDate(year, m, day)
		case year > 0:
			v = strconv.Itoa(year) + "-" + pad2(m)
		}
		if v == "" {
			continue
		}
		pos := cs[i].pos
		for _, u := range use {
			e.used[u] = true
			pos = min(pos, cs[u].pos)
		}
		e.add(pos, KindDate, v)
	}
}

// numericDate recognises "2024-01-15", "2024/1/15", "2024.01.15" (and an ISO date-time "2024-01-15T10:30Z")
// and day/month/year with the same separator: "15/01/2024", "15.01.2024", "01-15-2024". d/m vs m/d is decided
// when one part is > 12 or both are equal; otherwise the date is ambiguous and its value is the text as written.
func numericDate(core string) (value string, ok bool) {
	if len(core) > 10 && (core[10] == 'T' || core[10] == 't') {
		if v, ok := numericDate(core[:10]); ok {
			return v, true
		}
	}
	var sep byte
	var parts []string
	last := 0
	for i := 0; i < len(core); i++ {
		c := core[i]
		if isDigitByte(c) {
			continue
		}
		if c != '-' && c != '/' && c != '.' || sep != 0 && c != sep {
			return "", false
		}
		sep = c
		parts = append(parts, core[last:i])
		last = i + 1
	}
	parts = append(parts, core[last:])
	if len(parts) != 3 {
		return "", false
	}
	n := [3]int{}
	for i, p := range parts {
		if p == "" || len(p) > 4 {
			return "", false
		}
		n[i], _ = strconv.Atoi(p)
	}
	switch {
	case len(parts[0]) == 4 && len(parts[1]) <= 2 && len(parts[2]) <= 2:
		v := isoDate(n[0], n[1], n[2])
		return v, v != "" && n[0] >= 1000
	case len(parts[2]) == 4 && len(parts[0]) <= 2 && len(parts[1]) <= 2 && n[2] >= 1000:
		a, b, y := n[0], n[1], n[2]
		switch {
		case a > 12 && b <= 12:
			v := isoDate(y, b, a)
			return v, v != ""
		case b > 12 && a <= 12:
			v := isoDate(y, a, b)
			return v, v != ""
		case a == b:
			v := isoDate(y, a, a)
			return v, v != ""
		case a >= 1 && b >= 1:
			return core, true
		}
	}
	return "", false
}

// ambiguousDates returns the two ISO readings (d/m/y, m/d/y) of an ambiguous date value, else nil.
func ambiguousDates(v string) []string {
	if len(v) < 8 || v[len(v)-5] != v[1] && v[len(v)-5] != v[2] {
		return nil
	}
	sep := v[len(v)-5]
	parts := strings.Split(v, string(sep))
	if len(parts) != 3 || len(parts[2]) != 4 {
		return nil
	}
	a, _ := strconv.Atoi(parts[0])
	b, _ := strconv.Atoi(parts[1])
	y, _ := strconv.Atoi(parts[2])
	var out []string
	for _, d := range []string{isoDate(y, b, a), isoDate(y, a, b)} {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// numberValue canonicalises a core made of digits and . , separators, each between two
// digits (see appendNumberKey), keeping the decimals as written; plain digit runs lose their
// leading zeros. ok is false for other cores ("1,,2" too: Index.addNumbers reads the digit
// runs on either side of a doubled separator as two numbers, so a fact "1..2" could never
// be found, not even in its own text).
func numberValue(core string) (string, bool) {
	if core == "" || !isDigitByte(core[0]) || !isDigitByte(core[len(core)-1]) {
		return "", false
	}
	for i := 0; i < len(core); i++ {
		if c := core[i]; !isDigitByte(c) && (c != '.' && c != ',' || !isDigitByte(core[i+1])) {
			return "", false
		}
	}
	if allDigits(core) {
		return strings.TrimLeft(core[:len(core)-1], "0") + core[len(core)-1:], true
	}
	var buf [64]byte
	return string(appendNumberKey(buf[:0], []byte(core), false)), true
}

// numKey is the matching key of a number value: trailing decimal zeros (and a bare '.') removed.
func numKey(v string) string {
	if i := strings.IndexByte(v, '.'); i >= 0 && strings.IndexByte(v[i+1:], '.') < 0 && allDigits(v[:i]) {
		v = strings.TrimRight(v, "0")
		v = strings.TrimSuffix(v, ".")
	}
	return v
}

// isTime recognises "10:30" and "10:30:15".
func isTime(core string) bool {
	h, rest, ok := strings.Cut(core, ":")
	if !ok || len(h) < 1 || len(h) > 2 || !allDigits(h) {
		return false
	}
	m, sec, hasSec := strings.Cut(rest, ":")
	return len(m) == 2 && allDigits(m) && (!hasSec || len(sec) == 2 && allDigits(sec))
}

// splitCurrency splits leading or trailing currency symbols off core: "$1,200.50" -> "1,200.50", true.
func splitCurrency(core string) (string, bool) {
	trimmed := strings.TrimLeftFunc(core, isCurrencySym)
	if trimmed != core {
		return trimmed, true
	}
	trimmed = strings.TrimRightFunc(core, isCurrencySym)
	return trimmed, trimmed != core
}

func (e *extractor) isCurrencyChunk(i int) bool {
	c := e.chunks[i]
	if b := c.core[0]; (b == '$' || b >= utf8.RuneSelf) && strings.TrimFunc(c.core, isCurrencySym) == "" {
		return true
	}
	f := e.folded(i)
	if len(f) < 3 || len(f) > 7 {
		return false
	}
	_, ok := currencyWords[string(f)]
	return ok
}

// classify turns the chunks not consumed by monthDates into facts.
func (e *extractor) classify() {
	cs := e.chunks
	var name []byte
	namePos, nameEnd := -1, -1
	nameStart := -1 // chunk of the name's first word
	flushName := func() {
		if len(name) > 0 {
			e.add(namePos, KindName, string(name))
			if nameStart == nameEnd && nameStart > 0 {
				e.oneWordNames = append(e.oneWordNames, nameStart)
			}
		}
		name, namePos, nameEnd, nameStart = name[:0], -1, -1, -1
	}
	for i := range cs {
		if e.used[i] {
			flushName()
			continue
		}
		c := cs[i]
		core := c.core
		if w, ok := e.nameWord(i); ok {
			if namePos >= 0 && (c.gapPunct || i != nameEnd+1) {
				flushName()
			}
			if namePos < 0 {
				namePos, nameStart = c.pos, i
			} else {
				name = append(name, ' ')
			}
			name = append(name, w...)
			nameEnd = i
			continue
		}
		flushName()
		switch {
		case strings.IndexByte(core, '@') > 0:
			if v, ok := email(core); ok {
				e.add(c.pos, KindEmail, v)
			}
			continue
		case !strings.ContainsFunc(core, unicode.IsDigit):
			// currency word followed by a number: "USD 50", "€ 20"
			if e.isCurrencyChunk(i) && i+1 < len(cs) && !e.used[i+1] && !cs[i+1].sentStart {
				if v, ok := numberValue(strings.TrimSuffix(cs[i+1].core, "%")); ok {
					e.used[i+1] = true
					e.add(c.pos, KindAmount, v)
				}
			}
			continue
		}
		if v, ok := numericDate(core); ok {
			e.add(c.pos, KindDate, v)
			continue
		}
		if v, ok := e.timeAt(i); ok {
			e.add(c.pos, KindNumber, v)
			continue
		}
		if from, to, ok := e.timeRange(i); ok { // "2:00-4:00 PM", "14:00-16:00"
			e.add(c.pos, KindNumber, from)
			e.add(c.pos+strings.IndexByte(core, '-')+1, KindNumber, to)
			continue
		}
		if num, ok := splitCurrency(core); ok {
			if v, ok := numberValue(num); ok {
				e.add(c.pos, KindAmount, v)
				continue
			}
		}
		if v, next, ok := e.spaceGrouped(i); ok { // "1 234,50 €"
			for k := i + 1; k <= next; k++ {
				e.used[k] = true
			}
			e.add(c.pos, KindAmount, v)
			continue
		}
		hash := strings.HasPrefix(core, "#")
		bare := strings.TrimLeft(core, "#")
		if v, ok := numberValue(strings.TrimSuffix(bare, "%")); ok {
			switch {
			case hash || allDigits(bare) && len(bare) >= 5:
				e.add(c.pos, KindID, strings.ToLower(bare))
			case isListMarker(c):
			case i+1 < len(cs) && !e.used[i+1] && !cs[i+1].sentStart && e.isCurrencyChunk(i+1):
				e.used[i+1] = true
				e.add(c.pos, KindAmount, v)
			default:
				e.add(c.pos, KindNumber, v)
			}
			continue
		}
		e.otherNumeric(c.pos, bare, hash)
	}
	flushName()
	e.dropGermanNouns()
}

// spaceGrouped reads an amount whose thousands are grouped with spaces, as French and
// others write it: chunk i of 1 to 3 digits, then groups of 3 digits (the last with a
// decimal part) each after one space, no-break space or narrow no-break space, then a
// currency chunk ("1 234,50 €", "12 500 EUR"). It returns the value and the index of the
// currency chunk.
func (e *extractor) spaceGrouped(i int) (value string, currency int, ok bool) {
	cs := e.chunks
	first := cs[i].core
	if len(first) > 3 || !allDigits(first) || first[0] == '0' {
		return "", 0, false
	}
	k := i + 1
	for ; k < len(cs) && k-i <= maxGroups && !e.used[k]; k++ {
		if !isGroupSpace(e.s[cs[k-1].pos+len(cs[k-1].core) : cs[k].pos]) {
			break
		}
		g := cs[k].core
		if len(g) < 3 || !allDigits(g[:3]) || len(g) > 3 && (len(g) < 5 || len(g) > 6 || g[3] != ',' && g[3] != '.' || !allDigits(g[4:])) {
			break
		}
		if len(g) > 3 {
			k++
			break
		}
	}
	if k == i+1 || k-i > maxGroups || k >= len(cs) || e.used[k] || cs[k].sentStart || !e.isCurrencyChunk(k) {
		return "", 0, false
	}
	var b strings.Builder
	for j := i; j < k; j++ {
		b.WriteString(cs[j].core)
	}
	v, ok := numberValue(strings.Replace(b.String(), ",", ".", 1))
	return v, k, ok
}

// maxGroups bounds the groups of a number grouped with spaces (6: up to 10^18), so that a
// long run of numbers ("101 102 103 …") is not scanned again from each of them.
const maxGroups = 6

// groupSpaceAt returns the length of the space, no-break space or narrow no-break space
// that opens s, 0 when none: what separates the groups of "1 234,50".
func groupSpaceAt(s string) int {
	for _, sp := range groupSpaces {
		if strings.HasPrefix(s, sp) {
			return len(sp)
		}
	}
	return 0
}

// groupSpaceBefore returns the length of the group space that ends s, 0 when none.
func groupSpaceBefore(s string) int {
	for _, sp := range groupSpaces {
		if strings.HasSuffix(s, sp) {
			return len(sp)
		}
	}
	return 0
}

var groupSpaces = [...]string{" ", "\u00a0", "\u202f"}

// isGroupSpace reports whether s is one group space.
func isGroupSpace(s string) bool { return s != "" && groupSpaceAt(s) == len(s) }

// dropGermanNouns removes the one-word names of a German text that follow an article, a
// possessive, a contraction of either or a number: German writes every noun with a capital
// ("die Rechnung", "Ihre Gebühr", "um 8:20 Uhr"), so there a capital alone does not make a
// name. Other one-word names stay ("von Hermes nach Hamburg", "Frau Keller"), and so do
// names of two words or more ("Jonas Weber").
func (e *extractor) dropGermanNouns() {
	if len(e.oneWordNames) == 0 || e.language() != "de" {
		return
	}
	nouns := map[int]bool{}
	for _, i := range e.oneWordNames {
		prev := e.folded(i - 1)
		if _, det := germanDeterminers[string(prev)]; det || len(prev) > 0 && isDigitByte(prev[0]) {
			nouns[e.chunks[i].pos] = true
		}
	}
	e.facts = slices.DeleteFunc(e.facts, func(pf posFact) bool {
		return pf.f.Kind == KindName && nouns[pf.pos] && !strings.Contains(pf.f.Value, " ")
	})
}

// germanDeterminers are the articles, possessives and their contractions (folded) that
// open a German noun phrase.
var germanDeterminers = wordSet(`der die das den dem des ein eine einen einem einer eines kein keine keinen keinem
keiner keines ihr ihre ihren ihrem ihrer ihres mein meine meinen meinem meiner meines unser unsere unseren
unserem unserer unseres dein deine deinen deinem deiner sein seine seinen seinem seiner am im zum zur vom beim
ins ans aufs ums jede jeder jedes jeden jedem diese dieser dieses diesen diesem`)

// language returns the code of the language (en, fr, es, de) of which the text holds at
// least two exclusive stop words and more than of any other, else "" (languageOf, read on
// the folded chunks).
func (e *extractor) language() string {
	var c languageCounts
	for i := range e.chunks {
		c.add(string(e.folded(i)))
	}
	return c.pick(2)
}

// timeAt reads chunk i as a time of day, with the marker that follows it or is glued to
// it, as the fact's value ("14:40", "2:40 pm"): "14:40", "2:40 PM", "2:40pm", "2.40pm",
// "11 PM", "11pm" (an hour alone only with its marker), "14h40" (French) and "14.40 Uhr"
// (German). The marker or "Uhr" chunk is consumed.
func (e *extractor) timeAt(i int) (string, bool) {
	core := e.chunks[i].core
	t, glued := gluedMarker(core)
	h, rest, sep := t, "", byte(0)
	if k := strings.IndexAny(t, ":.h"); k >= 0 {
		h, rest, sep = t[:k], t[k+1:], t[k]
	}
	if len(h) == 0 || len(h) > 2 || !allDigits(h) || rest != "" && (len(rest) != 2 || !allDigits(rest)) {
		if glued == "" && isTime(core) {
			t, glued, sep = core, "", ':' // "10:30:15"
			h = ""
		} else {
			return "", false
		}
	}
	if h != "" {
		if n, _ := strconv.Atoi(h); n > 23 || rest != "" && rest > "59" {
			return "", false
		}
		if rest == "" {
			rest = "00"
		}
		t = h + ":" + rest
	}
	marker := glued
	if marker == "" {
		marker = e.markerAfter(i)
	}
	switch {
	case marker != "":
		return t + " " + marker, true
	case sep == ':':
		return t, true
	case sep == 'h' && rest != "" && strings.ToLower(core) == core: // "14h40"
		return t, true
	case sep == '.' && string(e.nextWord(i)) == "uhr": // "14.40 Uhr"
		e.used[i+1] = true
		return t, true
	}
	return "", false
}

// timeRange reads chunk i as a range of two times joined by "-" ("14:00-16:00", "2:00-4:00
// PM", "2:00-4:00pm"): a marker after the second applies to both. It returns the two times
// as fact values and consumes the marker.
func (e *extractor) timeRange(i int) (from, to string, ok bool) {
	a, b, found := strings.Cut(e.chunks[i].core, "-")
	if !found || !isTime(a) {
		return "", "", false
	}
	b, marker := gluedMarker(b)
	if !isTime(b) {
		return "", "", false
	}
	if marker == "" {
		marker = e.markerAfter(i)
	}
	if marker != "" {
		return a + " " + marker, b + " " + marker, true
	}
	return a, b, true
}

// gluedMarker splits a marker glued to a time ("2:40pm" → "2:40", "pm"); marker is "" when
// there is none.
func gluedMarker(t string) (bare, marker string) {
	if n := len(t); n > 2 && isDigitByte(t[n-3]) {
		if m := strings.ToLower(t[n-2:]); m == "am" || m == "pm" {
			return t[:n-2], m
		}
	}
	return t, ""
}

// nextWord returns the folded chunk after chunk i when only spaces (a space, a no-break or
// a narrow no-break space) separate them and it is not used, else nil.
func (e *extractor) nextWord(i int) []byte {
	cs := e.chunks
	if i+1 < len(cs) && !e.used[i+1] && (!cs[i+1].gapPunct || isGroupSpace(e.s[cs[i].pos+len(cs[i].core):cs[i+1].pos])) {
		return e.folded(i + 1)
	}
	return nil
}

// markerAfter returns the AM/PM marker that follows chunk i ("am", "pm") and consumes it,
// "" when none does: the marker is part of the time, no name.
func (e *extractor) markerAfter(i int) string {
	m := timeMarker(e.nextWord(i))
	if m != "" {
		e.used[i+1] = true
	}
	return m
}

// timeMarker reads the folded chunk after a time: "am" for "am" or "a.m" (the trailing dot
// is not in a chunk), "pm" for "pm" or "p.m", else "". (meridiem reads the same in a
// cueNorm'ed text.)
func timeMarker(f []byte) string {
	switch string(f) {
	case "am", "a.m":
		return "am"
	case "pm", "p.m":
		return "pm"
	}
	return ""
}

// countUnit splits an id (kept in lower case) that is a count joined to its unit word
// ("3-night", "30-day", "5-nuits") into the count; ok is false for any other id. A code
// such as "7-QXT" reads the same: its count must be in a source too.
func countUnit(id string) (count string, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found || len(a) == 0 || len(a) > 3 || !allDigits(a) || len(b) < 2 {
		return "", false
	}
	for _, r := range b {
		if !unicode.IsLower(r) {
			return "", false
		}
	}
	return a, true
}

// withoutMarker returns f without the marker of a time ("5:15 pm" → "5:15"): the
// follow-up checks compare times as written and read the half of the day from the text
// (meridiem).
func withoutMarker(f Fact) Fact {
	if t, _, ok := splitTime(f.Value); ok && f.Kind == KindNumber {
		f.Value = t
	}
	return f
}

// splitTime splits a time fact into the time and its marker ("2:40 pm" → "2:40", "pm");
// ok is false for a value that is no time.
func splitTime(v string) (t, marker string, ok bool) {
	t, marker, _ = strings.Cut(v, " ")
	if marker != "" && marker != "am" && marker != "pm" || !isTime(t) {
		return "", "", false
	}
	return t, marker, true
}

// isListMarker reports whether c is a list marker: 1 or 2 digits starting a line, followed by '.' or ')'
// and white space or the end ("1. ", "2) ").
func isListMarker(c chunk) bool {
	return c.lineStart && allDigits(c.core) && len(c.core) <= 2 && (c.afterByte == '.' || c.afterByte == ')') &&
		(c.afterNext == 0 || c.afterNext == ' ' || c.afterNext == '\t' || c.afterNext == '\n' || c.afterNext == '\r')
}

// otherNumeric classifies a core with a digit that is not a plain number, date or time.
func (e *extractor) otherNumeric(pos int, core string, hash bool) {
	// digits followed by a short unit: "15th", "10ms", "5kg", "4GB", "50usd" (amount).
	i := strings.IndexFunc(core, func(r rune) bool { return !isDigitByte(byte(r)) && r != '.' && r != ',' || r > 0x7f })
	if !hash && i > 0 {
		unit := core[i:]
		if len(unit) <= 3 && strings.IndexFunc(unit, func(r rune) bool { return r > 0x7f || !unicode.IsLetter(r) }) < 0 {
			if v, ok := numberValue(core[:i]); ok {
				if _, cur := currencyWords[strings.ToLower(unit)]; cur {
					e.add(pos, KindAmount, v)
				} else {
					e.add(pos, KindNumber, v)
				}
				return
			}
		}
	}
	// two short digit groups with '-' or '/': a range or fraction ("1-2", "24/7", "2020-2024").
	if !hash {
		for _, sep := range []string{"-", "/"} {
			if a, b, ok := strings.Cut(core, sep); ok && allDigits(a) && allDigits(b) && len(a) <= 4 && len(b) <= 4 {
				va, _ := numberValue(a)
				vb, _ := numberValue(b)
				e.add(pos, KindNumber, va)
				e.add(pos+len(a)+1, KindNumber, vb)
				return
			}
		}
	}
	e.add(pos, KindID, strings.ToLower(core))
}

// email validates local@domain.tld (an optional "mailto:" removed) and returns it lower-cased.
func email(core string) (string, bool) {
	core = strings.TrimPrefix(strings.TrimPrefix(core, "mailto:"), "MAILTO:")
	at := strings.IndexByte(core, '@')
	if at <= 0 || strings.Count(core, "@") != 1 {
		return "", false
	}
	local, domain := core[:at], core[at+1:]
	for _, r := range local {
		if !(r < 0x80 && (isAlnum(r) || strings.ContainsRune("._%+-", r))) {
			return "", false
		}
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return "", false
	}
	for _, l := range labels {
		if l == "" {
			return "", false
		}
		for _, r := range l {
			if !(r < 0x80 && (isAlnum(r) || r == '-')) {
				return "", false
			}
		}
	}
	tld := labels[len(labels)-1]
	if len(tld) < 2 || strings.ContainsFunc(tld, unicode.IsDigit) {
		return "", false
	}
	return strings.ToLower(core), true
}

// nameWord reports whether chunk i is a word of a proper name and returns its value: letters only (with
// inner - ' ’ allowed, a possessive 's removed), at least 2 runes, an upper-case first letter, not at a
// sentence start, not on a heading line or in code, and, folded, not a stop word, framing word, month,
// weekday or currency word.
func (e *extractor) nameWord(i int) ([]byte, bool) {
	c := e.chunks[i]
	if c.sentStart && !e.afterTitle(i) || c.heading || c.code {
		return nil, false
	}
	first, _ := utf8.DecodeRuneInString(c.core)
	if !unicode.IsUpper(first) {
		return nil, false
	}
	w := strings.TrimSuffix(strings.TrimSuffix(c.core, "'s"), "’s")
	if utf8.RuneCountInString(w) < 2 {
		return nil, false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) && !isMark(r) && r != '-' && r != '\'' && r != '’' {
			return nil, false
		}
	}
	f := e.folded(i)
	f = bytes.TrimSuffix(bytes.TrimSuffix(f, []byte("'s")), []byte("’s"))
	for _, set := range []map[string]struct{}{stopSet, framingSet, weekdays, currencyWords, titles} {
		if _, ok := set[string(f)]; ok {
			return nil, false
		}
	}
	if _, ok := months[string(f)]; ok {
		return nil, false
	}
	return f, true
}
