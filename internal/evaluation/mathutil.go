// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"math"
	"strconv"
	"strings"
)

func ptr(v float64) *float64 { return &v }

// turnNumber is how texts for people (messages, explanations, reasons) name the turn of
// 0-based index i: "turn 1" is turn_index 0.
func turnNumber(i int) int { return i + 1 }

func clamp01(v float64) float64 {
	if v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

// num formats a score for explanations and messages: at most 4 decimals, trailing
// zeros trimmed (0.5, 0.6667, 1).
func num(v float64) string {
	switch v {
	case 0: // and -0
		return "0"
	case 1:
		return "1"
	}
	var buf [32]byte
	return string(appendNum(buf[:0], v))
}

// writeNum writes num(v) to b without making the string.
func writeNum(b *strings.Builder, v float64) {
	var buf [32]byte
	b.Write(appendNum(buf[:0], v))
}

// appendNum appends num(v) to b.
func appendNum(b []byte, v float64) []byte {
	switch {
	case v == 0: // and -0
		return append(b, '0')
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		// An integer prints as its digits ("3.0000" trimmed).
		return strconv.AppendInt(b, int64(v), 10)
	}
	if k, ok := units4(v); ok {
		// The 4-decimal form's digits are k's: the integer part, then the fraction's
		// 4 digits with trailing zeros trimmed ("-0" prints as 0).
		u := int64(math.Abs(k))
		if u == 0 {
			return append(b, '0')
		}
		if k < 0 {
			b = append(b, '-')
		}
		b = strconv.AppendInt(b, u/10000, 10)
		if f := u % 10000; f != 0 {
			d := [5]byte{'.', byte('0' + f/1000), byte('0' + f/100%10), byte('0' + f/10%10), byte('0' + f%10)}
			n := len(d)
			for d[n-1] == '0' {
				n--
			}
			b = append(b, d[:n]...)
		}
		return b
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', 4, 64)
	n := len(b)
	for n > start && b[n-1] == '0' {
		n--
	}
	if n > start && b[n-1] == '.' {
		n--
	}
	if n-start == 2 && b[start] == '-' && b[start+1] == '0' {
		return append(b[:start], '0')
	}
	return b[:n]
}

// meanOf returns the mean of the non-nil values and how many there were.
func meanOf(vals []*float64) (*float64, int) {
	sum, n := 0.0, 0
	for _, v := range vals {
		if v != nil {
			sum += *v
			n++
		}
	}
	if n == 0 {
		return nil, 0
	}
	return ptr(sum / float64(n)), n
}

// weighted is one term of a renormalised weighted mean.
type weighted struct {
	name   string
	value  *float64
	weight float64
}

// weightedMean is Σ wᵢ·xᵢ / Σ wᵢ over the terms whose value is present and whose weight
// is > 0 (docs/scoring.md: renormalised over what is present). It returns nil when no such
// term exists, never dividing by zero; the explanation states the terms used or why
// none could be.
func weightedMean(terms []weighted) (*float64, string) {
	var sum, wsum float64
	var absent, zero []string
	n := 0
	for _, t := range terms {
		switch {
		case t.value == nil:
			absent = append(absent, t.name)
		case t.weight <= 0:
			zero = append(zero, t.name)
		default:
			sum += t.weight * *t.value
			wsum += t.weight
			n += len(t.name) + 20 // " + 0.3×name(0.8333)"
		}
	}
	if wsum == 0 {
		why := "no component score is present"
		if len(zero) > 0 {
			why = "the present components (" + strings.Join(zero, ", ") + ") all have weight 0"
		}
		return nil, "null: " + why
	}
	v := clamp01(sum / wsum)
	// "(w×name(x) + …) / Σw = v; absent: …; weight 0: …", written once.
	var b strings.Builder
	b.Grow(n + 64)
	b.WriteString("(")
	first := true
	for _, t := range terms {
		if t.value == nil || t.weight <= 0 {
			continue
		}
		if !first {
			b.WriteString(" + ")
		}
		first = false
		writeNum(&b, t.weight)
		b.WriteString("×")
		b.WriteString(t.name)
		b.WriteString("(")
		writeNum(&b, *t.value)
		b.WriteString(")")
	}
	b.WriteString(") / ")
	writeNum(&b, wsum)
	b.WriteString(" = ")
	writeNum(&b, v)
	if len(absent) > 0 {
		b.WriteString("; absent: ")
		b.WriteString(strings.Join(absent, ", "))
	}
	if len(zero) > 0 {
		b.WriteString("; weight 0: ")
		b.WriteString(strings.Join(zero, ", "))
	}
	return &v, b.String()
}
