// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"math"
	"strconv"
	"strings"
)

// This file holds WithoutDerived: a number the response computes from numbers it states and
// that are grounded ("20% of $350 is $70", "20°C (68°F)", "4 tickets at $15 each: $60") is
// no hallucination (docs/decisions/text.md §6.1).

// maxOperands bounds the grounded numbers tried as operands of a percentage or a
// conversion, and maxPairOperands those tried in pairs (a sum, a product…): the more
// numbers a response states, the likelier a made-up one equals some sum of two of them,
// so pairs are tried only in short computations.
const (
	maxOperands     = 24
	maxPairOperands = 6
)

// arithmeticWords say that the response adds or multiplies ("in total", "each",
// "insgesamt"…), cueNorm'ed, matched as words; a sign of arithmeticMarks counts as well.
var arithmeticWords = []string{
	"total", "in total", "altogether", "sum", "combined", "each", "subtotal",
	"au total", "chacun", "chacune", "somme",
	"en total", "cada", "cada uno", "suma",
	"insgesamt", "gesamt", "zusammen", "je", "summe",
}

// arithmeticMarks are the signs of a computation written out ("15 × 4 = 60").
const arithmeticMarks = "+×*=÷"

// conversions are the unit conversions a response commonly adds after a grounded value:
// the factor and offset from one unit to the other (both ways are tried), and the words
// that must name the target unit in the response (cueNorm'ed).
var conversions = []struct {
	factor, offset float64
	units          []string
}{
	{9.0 / 5, 32, []string{"f", "fahrenheit", "c", "celsius"}}, // °C ↔ °F ("20°C" reads "20 c")
	{0.621371, 0, []string{"mile", "miles", "km", "kilometers", "kilometres"}},
	{2.20462, 0, []string{"lb", "lbs", "pound", "pounds", "kg", "kilograms", "kilos"}},
	{1 / 2.54, 0, []string{"inch", "inches", "cm", "centimeters", "centimetres"}},
}

// WithoutDerived returns the facts of ungrounded that response does not derive from the
// numbers it states (stated, its SalientFacts) and that are grounded (not in ungrounded;
// plain integers up to 10 included). A number or amount v is derived when, within the
// rounding of v (half a unit of its last decimal):
//
//   - v is p% of a grounded b, or b plus or minus p% of b, where the response writes p
//     with "%" ("20% of $350 is $70", "$280 after the 20% discount");
//   - v is a conversion of a grounded value between °C and °F, km and miles, kg and
//     pounds, or cm and inches, and the response names one of the two units;
//   - v is the sum, difference, product or quotient of two grounded values, the response
//     says it computes (arithmeticWords, or a sign of arithmeticMarks: "4 tickets at $15
//     each: $60", "$1,523.75 + $300 = $1,823.75"), and it states at most maxPairOperands
//     grounded values.
//
// At most maxOperands grounded values are tried. Facts of other kinds are kept. The result
// shares no memory with ungrounded; nil when every fact is derived.
func WithoutDerived(ungrounded, stated []Fact, response string) []Fact {
	if len(ungrounded) == 0 {
		return nil
	}
	var ops []float64
	for _, f := range stated {
		if len(ops) == maxOperands {
			break
		}
		if f.Kind != KindNumber && f.Kind != KindAmount || contains(ungrounded, f) {
			continue
		}
		if v, err := strconv.ParseFloat(f.Value, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			ops = append(ops, v)
		}
	}
	var out []Fact
	if len(ops) == 0 {
		return append(out, ungrounded...)
	}
	n := cueNorm(response)
	compact := strings.ReplaceAll(capInput(response), " ", "")
	d := derivation{ops: ops}
	for _, p := range ops {
		if percentOf(compact, p) {
			d.percents = append(d.percents, p)
		}
	}
	for _, c := range conversions {
		if hasWord(n, c.units) {
			d.conversions = append(d.conversions, c.factor, c.offset)
		}
	}
	d.pairs = len(ops) <= maxPairOperands &&
		(hasWord(n, arithmeticWords) || strings.ContainsAny(response, arithmeticMarks) || strings.Contains(n, " x "))
	for _, f := range ungrounded {
		v, err := strconv.ParseFloat(f.Value, 64)
		if (f.Kind == KindNumber || f.Kind == KindAmount) && err == nil && d.derives(v, decimals(f.Value)) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// derivation is what a response computes with: its grounded values (ops), those it writes
// as percentages, the conversions whose units it names (factor and offset pairs) and
// whether it says it adds or multiplies (pairs).
type derivation struct {
	ops, percents, conversions []float64
	pairs                      bool
}

func contains(fs []Fact, f Fact) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// decimals returns the number of digits after the decimal point of the normalised value.
func decimals(v string) int {
	if i := strings.IndexByte(v, '.'); i >= 0 {
		return len(v) - i - 1
	}
	return 0
}

// derives reports whether v (written with d decimals) is computed from the derivation's
// values, as WithoutDerived describes.
func (dv *derivation) derives(v float64, d int) bool {
	tol := 0.5*math.Pow(10, -float64(d)) + 1e-9
	near := func(r float64) bool { return math.Abs(r-v) <= tol }
	for _, p := range dv.percents {
		for _, b := range dv.ops {
			share := p / 100 * b
			if near(share) || near(b+share) || near(b-share) {
				return true
			}
		}
	}
	for i := 0; i+1 < len(dv.conversions); i += 2 {
		factor, offset := dv.conversions[i], dv.conversions[i+1]
		for _, a := range dv.ops {
			if near(a*factor+offset) || near((a-offset)/factor) {
				return true
			}
		}
	}
	if !dv.pairs {
		return false
	}
	for i, a := range dv.ops {
		for _, b := range dv.ops[i+1:] {
			if near(a+b) || near(a-b) || near(b-a) || near(a*b) || b != 0 && near(a/b) || a != 0 && near(b/a) {
				return true
			}
		}
	}
	return false
}

// percentOf reports whether the response (compact: without spaces) writes p as a
// percentage ("20%", "20 %", "12.5%").
func percentOf(compact string, p float64) bool {
	s := strconv.FormatFloat(p, 'f', -1, 64) + "%"
	for i := 0; ; {
		j := strings.Index(compact[i:], s)
		if j < 0 {
			return false
		}
		j += i
		if j == 0 || !isDigit(compact[j-1]) && compact[j-1] != '.' { // not the end of "120%"
			return true
		}
		i = j + 1
	}
}
