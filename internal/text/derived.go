// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds WithoutDerived: a number the response computes, in writing, from numbers
// of the sources ("20% of $350 is $70", "It's 20°C (68°F)") is no hallucination
// (docs/decisions/text.md §6.1).

// Bounds of the work on one response: the percentages and the values with a unit that
// are read, and the grounded bases tried. Beyond them the rest is not read (so not
// derived): the work is linear in the response.
const (
	maxPercents  = 16
	maxUnitTerms = 64
	maxBases     = 32
)

// WithoutDerived returns the facts of ungrounded (numbers and amounts of the response that
// none of the indexed sources holds) less those the response derives, in writing, from
// values of the sources. stated are the response's SalientFacts; each operand among them
// is looked up in the sources, a plain integer up to 10 included (which Ungrounded never
// looks up). Two forms, within the rounding of the derived value v (half a unit of its
// last decimal):
//
//   - a percentage of a grounded value: v is p % of b, where the response writes p as a
//     percentage ("20%", "20 %", "5,5 %", "12.50%") and both p and b are grounded: "20% of
//     $350 is $70". A share of an invented base or at an invented rate stays, and so does a
//     total after the share (a discount or a tax), which needs the direction the response
//     meant.
//   - a unit conversion written out: the response writes a grounded value a with one unit
//     and v with the other of a pair, °C/°F, km/miles or kg/lb ("20°C (68°F)", "-5 °C (23
//     °F)", "10 km, about 6.2 miles"), and v is a converted in that direction, within the
//     rounding of v or 1% of it ("roughly 1,600 km").
//   - an equation written out: "x₁ op x₂ … = v" with op one of + - − × * (a chain of
//     additions and subtractions, or one product), every operand grounded, the currency
//     symbols $ € £ allowed before or after each number ("$1,523.75 + $300 = $1,823.75").
//     An operand with a sign ("-$50 + $100 = $50") or a chain longer than that is not read.
//
// Nothing else is derived: not sums, products, averages or totals after a tax or a
// discount that the response does not write as an equation, which a made-up number
// matches too easily. Facts of other kinds are kept. The result shares no memory with
// ungrounded; nil when nothing is left. The work is linear in the (capped) response.
func WithoutDerived(ungrounded, stated []Fact, response string, sources ...*Index) []Fact {
	if len(ungrounded) == 0 {
		return nil
	}
	response = capInput(response)
	terms := scanTerms(response)
	equations := scanEquations(response)
	if len(terms.percents) == 0 && len(terms.units) == 0 && len(equations) == 0 {
		return append([]Fact(nil), ungrounded...)
	}
	// The grounded values the response states: bases of a percentage, operands of a conversion.
	var bases []float64
	ground := map[float64]bool{}
	for _, f := range stated {
		if f.Kind != KindNumber && f.Kind != KindAmount {
			continue
		}
		v, err := strconv.ParseFloat(f.Value, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || ground[v] || !indexes(sources).found(f) {
			continue
		}
		ground[v] = true
		if len(bases) < maxBases {
			bases = append(bases, v)
		}
	}
	results := equationResults(equations, ground)
	var out []Fact
	for _, f := range ungrounded {
		v, err := strconv.ParseFloat(f.Value, 64)
		if (f.Kind == KindNumber || f.Kind == KindAmount) && err == nil {
			d := decimals(f.Value)
			if terms.percentOf(v, d, bases, ground) || terms.converted(v, ground) || results[v] {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// decimals returns the number of digits after the decimal point of the normalised value.
func decimals(v string) int {
	if i := strings.IndexByte(v, '.'); i >= 0 {
		return len(v) - i - 1
	}
	return 0
}

// halfUnit is half a unit of the last of d decimals, with a margin for floating point
// relative to r.
func halfUnit(d int, r float64) float64 {
	return 0.5*math.Pow(10, -float64(d)) + 1e-9*math.Max(1, math.Abs(r))
}

// unitTerm is a value the response writes with a unit: its signed value, its unit (one
// of conversionUnits' keys) and its decimals.
type unitTerm struct {
	value    float64
	unit     string
	decimals int
}

// responseTerms are the percentages and the values with a unit a response writes.
type responseTerms struct {
	percents []float64
	units    []unitTerm
}

// conversionUnits name the units of the conversions read (cueNorm-like, lower-cased), with
// the unit of their pair ("c" for °C, "f" for °F).
var conversionUnits = map[string]string{
	"c": "f", "f": "c", "celsius": "f", "fahrenheit": "c", "km": "mi", "kilometers": "mi", "kilometres": "mi", "mi": "km", "mile": "km", "miles": "km",
	"kg": "lb", "kilos": "lb", "kilograms": "lb", "lb": "kg", "lbs": "kg",
}

// canonicalUnit maps each unit word to one name per unit.
var canonicalUnit = map[string]string{
	"c": "c", "f": "f", "celsius": "c", "fahrenheit": "f", "km": "km", "kilometers": "km", "kilometres": "km", "mi": "mi", "mile": "mi", "miles": "mi",
	"kg": "kg", "kilos": "kg", "kilograms": "kg", "lb": "lb", "lbs": "lb",
}

// convert converts a from unit to its pair ("c" → "f"…).
func convert(a float64, from string) float64 {
	switch from {
	case "c":
		return a*9/5 + 32
	case "f":
		return (a - 32) * 5 / 9
	case "km":
		return a * 0.621371
	case "mi":
		return a / 0.621371
	case "kg":
		return a * 2.20462
	case "lb":
		return a / 2.20462
	}
	return math.NaN()
}

// scanTerms reads the numbers of s followed by "%" or by a unit of conversionUnits, with
// their sign ("-5 °C", "−5°C"), decimal comma ("5,5 %") and thousands separators ("1,600
// km"), and spaces, no-break spaces or none between number and sign.
func scanTerms(s string) responseTerms {
	var t responseTerms
	for i := 0; i < len(s) && len(t.percents) < maxPercents && len(t.units) < maxUnitTerms; {
		if !isDigitByte(s[i]) || i > 0 && (isDigitByte(s[i-1]) || isLetterByte(s[i-1])) {
			i++
			continue
		}
		neg := i > 0 && s[i-1] == '-' || strings.HasSuffix(s[:i], "−")
		v, d, end, ok := scanNumber(s, i)
		i = end
		if !ok {
			continue
		}
		if neg {
			v = -v
		}
		rest := skipSpaces(s[end:])
		switch {
		case strings.HasPrefix(rest, "%") || hasPrefixFoldAny(rest, percentWords):
			t.percents = append(t.percents, math.Abs(v))
		case hasPrefixFoldAny(rest, degreeWords):
			if u := unitWord(skipSpaces(rest[strings.IndexByte(rest, ' ')+1:])); u == "celsius" || u == "fahrenheit" {
				t.units = append(t.units, unitTerm{value: v, unit: canonicalUnit[u], decimals: d})
			}
		case strings.HasPrefix(rest, "°") || strings.HasPrefix(rest, "º"):
			_, size := utf8.DecodeRuneInString(rest)
			if u := unitWord(skipSpaces(rest[size:])); u == "c" || u == "f" {
				t.units = append(t.units, unitTerm{value: v, unit: u, decimals: d})
			}
		default:
			if u := canonicalUnit[unitWord(rest)]; u != "" && u != "c" && u != "f" {
				t.units = append(t.units, unitTerm{value: v, unit: u, decimals: d})
			}
		}
	}
	return t
}

// percentWords and degreeWords follow a number as a percentage ("12 percent", "70 por
// ciento") or before a temperature scale ("30 degrees Celsius", "86 Grad Fahrenheit"),
// lower-case, each with its trailing space.
var (
	percentWords = []string{"percent", "per cent", "pour cent", "por ciento", "prozent"}
	degreeWords  = []string{"degrees ", "degree ", "degres ", "degrés ", "grados ", "grad "}
)

// hasPrefixFoldAny reports whether s opens with one of the words, whatever its case.
func hasPrefixFoldAny(s string, words []string) bool {
	for _, w := range words {
		if hasPrefixFold(s, w) {
			return true
		}
	}
	return false
}

// scanNumber reads the number at s[i:]: digits, "," or "." followed by exactly three digits
// as a thousands separator when more digits of a group could follow ("1,600"), else as the
// decimal mark ("5,5", "12.50", "2.5"). It returns the value, its decimals and the end of
// the run; ok is false when the run is no finite number (thousands of digit groups), and
// the caller goes on after it, so a long run is read once, not again from each group.
func scanNumber(s string, i int) (value float64, decimals, end int, ok bool) {
	var b strings.Builder
	j := i
	for j < len(s) && isDigitByte(s[j]) {
		b.WriteByte(s[j])
		j++
	}
	for j+1 < len(s) && (s[j] == ',' || s[j] == '.') && isDigitByte(s[j+1]) {
		k := j + 1
		for k < len(s) && isDigitByte(s[k]) {
			k++
		}
		if s[j] == ',' && k-j-1 == 3 { // "1,600": a thousands group
			b.WriteString(s[j+1 : k])
			j = k
			continue
		}
		b.WriteByte('.')
		b.WriteString(s[j+1 : k])
		decimals = k - j - 1
		j = k
		break
	}
	v, err := strconv.ParseFloat(b.String(), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, 0, j, false
	}
	return v, decimals, j, true
}

// skipSpaces returns s without its leading spaces, no-break spaces and narrow no-break
// spaces.
func skipSpaces(s string) string {
	for {
		switch {
		case strings.HasPrefix(s, " "):
			s = s[1:]
		case strings.HasPrefix(s, "\u00a0"), strings.HasPrefix(s, "\u202f"):
			_, size := utf8.DecodeRuneInString(s)
			s = s[size:]
		default:
			return s
		}
	}
}

// unitWord returns the unit word (lower-cased) that opens s when a letter does not follow
// it ("km", "miles", "F)"), else "".
func unitWord(s string) string {
	j := 0
	for j < len(s) && isLetterByte(s[j]) {
		j++
	}
	w := strings.ToLower(s[:j])
	if _, ok := conversionUnits[w]; ok {
		return w
	}
	return ""
}

func isLetterByte(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// percentOf reports whether v (with d decimals) is p % of b for a percentage p the
// response writes and a base b, both grounded (ground; bases are the grounded values).
func (t responseTerms) percentOf(v float64, d int, bases []float64, ground map[float64]bool) bool {
	for _, p := range t.percents {
		if !ground[p] {
			continue
		}
		for _, b := range bases {
			if r := p / 100 * b; math.Abs(r-v) <= halfUnit(d, r) {
				return true
			}
		}
	}
	return false
}

// converted reports whether v is written with a unit and is the conversion of a grounded
// value (ground) the response writes with the paired unit.
func (t responseTerms) converted(v float64, ground map[float64]bool) bool {
	for _, target := range t.units {
		if math.Abs(target.value) != v {
			continue
		}
		for _, src := range t.units {
			if conversionUnits[src.unit] != target.unit || !ground[math.Abs(src.value)] {
				continue
			}
			r := convert(src.value, src.unit)
			if math.Abs(r-target.value) <= math.Max(halfUnit(target.decimals, r), 0.01*math.Abs(r)) {
				return true
			}
		}
	}
	return false
}

// maxEquations bounds the equations read in one response, maxOperands the operands of
// one (a longer chain is not read).
const (
	maxEquations = 16
	maxOperands  = 8
)

// equation is "operands[0] ops[0] operands[1] … = result" as the response writes it; ops
// are '+', '-' or '*'.
type equation struct {
	operands []float64
	ops      []byte
	result   float64
	decimals int // the result's
}

// value computes e's left side: a chain of additions and subtractions, or one product;
// ok is false for any other shape.
func (e equation) value() (float64, bool) {
	if len(e.ops) == 1 && e.ops[0] == '*' {
		return e.operands[0] * e.operands[1], true
	}
	v := e.operands[0]
	for i, op := range e.ops {
		switch op {
		case '+':
			v += e.operands[i+1]
		case '-':
			v -= e.operands[i+1]
		default:
			return 0, false
		}
	}
	return v, true
}

// equationResults returns the results of the written equations whose operands are all
// grounded and whose arithmetic holds within the rounding of the result.
func equationResults(equations []equation, ground map[float64]bool) map[float64]bool {
	var out map[float64]bool
	for _, e := range equations {
		all := true
		for _, x := range e.operands {
			all = all && ground[x]
		}
		if r, ok := e.value(); all && ok && math.Abs(r-e.result) <= halfUnit(e.decimals, r) {
			if out == nil {
				out = map[float64]bool{}
			}
			out[e.result] = true
		}
	}
	return out
}

// eqToken is a token of an equation: a number (op 0), an operator or '='.
type eqToken struct {
	op       byte
	value    float64
	decimals int
}

// scanEquations reads the equations s writes: numbers (scanNumber) joined by + - − × *
// (or an "x" between spaces), then "=" and the result, with spaces and the currency
// symbols $ € £ around each number. Anything else between two tokens ends a chain.
func scanEquations(s string) []equation {
	if !strings.Contains(s, "=") {
		return nil
	}
	var tokens []eqToken
	brk := eqToken{op: ' '} // anything else
	for i := 0; i < len(s); {
		i += skipCurrency(s[i:])
		if i >= len(s) {
			break
		}
		if isDigitByte(s[i]) && (i == 0 || !isDigitByte(s[i-1]) && !isLetterByte(s[i-1])) {
			v, d, end, ok := scanNumber(s, i)
			if ok {
				tokens = append(tokens, eqToken{value: v, decimals: d})
			} else if len(tokens) > 0 && tokens[len(tokens)-1] != brk {
				tokens = append(tokens, brk)
			}
			i = end
			continue
		}
		if op, size := operatorAt(s[i:]); op != 0 && (s[i] != 'x' || i > 0 && s[i-1] == ' ') {
			tokens = append(tokens, eqToken{op: op})
			i += size
			continue
		}
		if len(tokens) > 0 && tokens[len(tokens)-1] != brk {
			tokens = append(tokens, brk)
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	isOp := func(t eqToken) bool { return t.op != 0 && t.op != '=' && t != brk }
	var out []equation
	for k := 1; k+1 < len(tokens) && len(out) < maxEquations; k++ {
		if tokens[k].op != '=' || tokens[k+1].op != 0 || tokens[k-1].op != 0 {
			continue
		}
		// Walk back over "number (op number)*" from the number before '='.
		first := k - 1
		for first >= 2 && isOp(tokens[first-1]) && tokens[first-2].op == 0 && (k-first+1)/2 < maxOperands {
			first -= 2
		}
		if first == k-1 || first >= 1 && isOp(tokens[first-1]) {
			// No operator ("x = 5"); a chain too long to read; or its first operand has a
			// sign ("-$50 + $100"), which the facts do not keep.
			continue
		}
		e := equation{result: tokens[k+1].value, decimals: tokens[k+1].decimals}
		for j := first; j < k; j++ {
			if t := tokens[j]; t.op == 0 {
				e.operands = append(e.operands, t.value)
			} else {
				e.ops = append(e.ops, t.op)
			}
		}
		out = append(out, e)
	}
	return out
}

// skipCurrency returns the length of the spaces and currency symbols that open s.
func skipCurrency(s string) int {
	n := 0
	for {
		t := skipSpaces(s[n:])
		n = len(s) - len(t)
		switch {
		case strings.HasPrefix(t, "$"):
			n++
		case strings.HasPrefix(t, "€"):
			n += len("€")
		case strings.HasPrefix(t, "£"):
			n += len("£")
		default:
			return n
		}
	}
}

// operatorAt returns the operator that opens s ('+', '-', '*' for × * and an "x" followed
// by a space, '=') and its length, or 0.
func operatorAt(s string) (op byte, size int) {
	switch {
	case s == "":
		return 0, 0
	case s[0] == '+', s[0] == '=':
		return s[0], 1
	case s[0] == '-':
		return '-', 1
	case s[0] == '*':
		return '*', 1
	case strings.HasPrefix(s, "−"):
		return '-', len("−")
	case strings.HasPrefix(s, "×"):
		return '*', len("×")
	case strings.HasPrefix(s, "x "):
		return '*', 1
	}
	return 0, 0
}
