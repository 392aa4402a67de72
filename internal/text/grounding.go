// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"strconv"
	"strings"
	"unicode"
)

// haystack indexes texts (a handoff payload, or all the sources of a response) for fact matching.
type haystack struct {
	numbers map[string]struct{} // numKey of every number-like run, and every digit run with and without leading zeros
	ids     map[string]struct{} // idKey of every chunk that contains a digit
	dates   map[string]struct{} // date values (and both readings of ambiguous ones)
	derived map[string]struct{} // "--MM-DD" and "YYYY-MM" of full dates
	texts   []string            // the capped texts
	lower   []string            // lower-cased texts, made on first use
	words   []string            // cueNorm'ed texts, made on first use
}

func newHaystack(texts ...string) *haystack {
	h := &haystack{
		numbers: map[string]struct{}{}, ids: map[string]struct{}{},
		dates: map[string]struct{}{}, derived: map[string]struct{}{},
	}
	for _, t := range texts {
		h.add(capInput(t))
	}
	return h
}

func (h *haystack) add(s string) {
	if s == "" {
		return
	}
	h.texts = append(h.texts, s)
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
		if !allDigits(run) {
			var buf [64]byte
			h.numbers[string(appendNumberKey(buf[:0], []byte(run), true))] = struct{}{}
		}
		// every digit run, as written and without leading zeros
		for k := i; k < j; {
			l := k
			for l < j && isDigitByte(s[l]) {
				l++
			}
			d := s[k:l]
			h.numbers[d] = struct{}{}
			if t := strings.TrimLeft(d[:len(d)-1], "0") + d[len(d)-1:]; t != d {
				h.numbers[t] = struct{}{}
			}
			k = l + 1
		}
		i = j
	}
	e := extractForIndex(s)
	defer e.release()
	for _, pf := range e.facts { // month-name dates
		h.addDate(pf.f.Value)
	}
	for i, c := range e.chunks {
		if e.used[i] || !strings.ContainsFunc(c.core, unicode.IsDigit) {
			continue
		}
		h.ids[idKey(c.core)] = struct{}{}
		if v, ok := numericDate(c.core); ok {
			h.addDate(v)
		}
	}
}

func (h *haystack) addDate(v string) {
	h.dates[v] = struct{}{}
	for _, d := range ambiguousDates(v) {
		h.dates[d] = struct{}{}
		h.derive(d)
	}
	h.derive(v)
}

func (h *haystack) derive(v string) {
	if len(v) == 10 && v[4] == '-' && v[7] == '-' {
		h.derived["--"+v[5:]] = struct{}{}
		h.derived[v[:7]] = struct{}{}
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
	var b []byte
	for _, r := range v {
		if isAlnum(r) {
			b = appendFold(b, r)
		}
	}
	return string(b)
}

func (h *haystack) containsLower(v string) bool {
	if h.lower == nil {
		h.lower = make([]string, len(h.texts))
		for i, t := range h.texts {
			h.lower[i] = strings.ToLower(t)
		}
	}
	for _, l := range h.lower {
		if strings.Contains(l, v) {
			return true
		}
	}
	return false
}

func (h *haystack) containsWords(v string) bool {
	n := cueNorm(v)
	if len(n) <= 2 {
		return false
	}
	if h.words == nil {
		h.words = make([]string, len(h.texts))
		for i, t := range h.texts {
			h.words[i] = cueNorm(t)
		}
	}
	for _, w := range h.words {
		if strings.Contains(w, n) {
			return true
		}
	}
	return false
}

func has(m map[string]struct{}, k string) bool {
	_, ok := m[k]
	return ok
}

// digitRuns returns the runs of 3 or more ASCII digits in v.
func digitRuns(v string) []string {
	var out []string
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && isDigitByte(v[j]) {
			j++
		}
		if j-i >= 3 {
			out = append(out, v[i:j])
		}
		i = max(j, i+1)
	}
	return out
}

// found reports whether fact f occurs in the haystack (docs/decisions/text.md §6):
//   - number, amount: same numKey as a number-like run ("1200.50" = "1,200.5"); times as text;
//   - id: same idKey as an id or digit-bearing chunk, or (all digits) the same digit run, or every run of 3+
//     digits of the id is a digit run of the haystack ("ORD-12345" is found in "order 12345");
//   - date: same value; a full date is also found by a year-less "--MM-DD" of the haystack; "--MM-DD" and
//     "YYYY-MM" by a full date with that day or month; an ambiguous "03/04/2024" by either reading;
//   - email: as a substring of the lower-cased text; url: its part after the scheme and "www." likewise;
//   - quoted, name: its words (cueNorm) on word boundaries.
func (h *haystack) found(f Fact) bool {
	v := f.Value
	switch f.Kind {
	case KindNumber, KindAmount:
		if isTime(v) {
			return h.containsLower(v)
		}
		return has(h.numbers, numKey(v))
	case KindID:
		k := idKey(v)
		if has(h.ids, k) || allDigits(k) && has(h.numbers, k) {
			return true
		}
		runs := digitRuns(v)
		for _, r := range runs {
			if !has(h.numbers, r) {
				return false
			}
		}
		return len(runs) > 0
	case KindDate:
		if has(h.dates, v) {
			return true
		}
		if len(v) == 10 && v[4] == '-' {
			return has(h.dates, "--"+v[5:])
		}
		if strings.HasPrefix(v, "--") || len(v) == 7 {
			return has(h.derived, v)
		}
		for _, d := range ambiguousDates(v) {
			if has(h.dates, d) {
				return true
			}
		}
		return false
	case KindEmail:
		return h.containsLower(v)
	case KindURL:
		u := strings.TrimPrefix(strings.TrimPrefix(v, "https://"), "http://")
		return h.containsLower(strings.TrimPrefix(u, "www."))
	default:
		return h.containsWords(v)
	}
}

// Found reports, for each fact, whether it is found in haystack by the matching rules of
// Coverage (docs/decisions/text.md §6); the haystack is indexed once. Nil for no facts.
func Found(facts []Fact, haystack string) []bool {
	if len(facts) == 0 {
		return nil
	}
	h := newHaystack(haystack)
	out := make([]bool, len(facts))
	for i, f := range facts {
		out[i] = h.found(f)
	}
	return out
}

// Coverage is the fraction of facts found in payload (matching on normalised values; a number matches whatever formatting),
// in [0,1]; when facts is empty it falls back to content-word coverage of contextText's Tokens in payload; ok=false when there
// is nothing to cover (no facts and no content words).
//
// With facts: |{f ∈ facts : f found in payload}| / |facts| (duplicates in facts count each; matching rules in
// haystack.found). Without: |distinct Tokens(contextText) ∩ Tokens(payload)| / |distinct Tokens(contextText)|.
// An empty payload scores 0 when there is something to cover.
func Coverage(facts []Fact, contextText, payload string) (score float64, ok bool) {
	if len(facts) > 0 {
		h := newHaystack(payload)
		n := 0
		for _, f := range facts {
			if h.found(f) {
				n++
			}
		}
		return float64(n) / float64(len(facts)), true
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
	facts := stated
	var cand []Fact
	for _, f := range facts {
		if f.Kind == KindQuoted {
			continue
		}
		if f.Kind == KindNumber && allDigits(f.Value) {
			if n, err := strconv.Atoi(f.Value); err == nil && n <= smallCount {
				continue
			}
		}
		cand = append(cand, f)
	}
	if len(cand) == 0 {
		return nil
	}
	h := newHaystack(sources...)
	var out []Fact
	for _, f := range cand {
		if !h.found(f) {
			out = append(out, f)
		}
	}
	return out
}
