// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// formatted is what num must print for v: the 4-decimal format, trailing zeros and
// point trimmed, "-0" as "0".
func formatted(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// TestNumIntegersAsFormatted: num's integer shortcut prints what the 4-decimal format,
// trimmed, prints.
func TestNumIntegersAsFormatted(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, -1, 2, 10, 100, 1e14, -1e14, 999999999999999, 1e15, 1e16, 0.5, 0.99999, 1.00004, -0.00001, 49.99, math.MaxInt32}
	r := rand.New(rand.NewPCG(25, 26))
	for range 10000 {
		values = append(values, float64(r.IntN(2000)-1000), r.Float64()*100, math.Round(r.NormFloat64()*1e6))
	}
	for _, v := range values {
		require.Equal(t, formatted(v), num(v), "%v", v)
		var b strings.Builder
		b.WriteString("x")
		writeNum(&b, v) // what the explanation builders write: num(v), after what is there
		require.Equal(t, "x"+formatted(v), b.String(), "%v", v)
	}
}

// TestNumShortcutsAsFormatted: num's arithmetic shortcut (units4) prints what the
// 4-decimal format, trimmed, prints, on random values of every scale, values rounded
// already and values next to ties.
func TestNumShortcutsAsFormatted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(v float64) {
		if got, want := num(v), formatted(v); got != want {
			t.Fatalf("num(%v) = %q, formatted %q", v, got, want)
		}
	}
	for range 300_000 {
		v := (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(13)-6))
		check(v)
		check(round4(v))
		tie := (math.Round(v*1e4) + 0.5) / 1e4
		check(tie)
		check(math.Nextafter(tie, 0))
		check(math.Nextafter(tie, math.Inf(1)))
		check(float64(rng.IntN(1_000_000)) / float64(1+rng.IntN(1000)))
	}
	for _, v := range []float64{0.00001, -0.00001, 0.00005, -0.00005, 0.0001, -0.0001, 0.1, -0.1, 0.01, 0.001, 1.0001, 999999.99994, -999999.99996, 1e6 - 1e-5, 123.45, 0.8687499999999999} {
		check(v)
	}
}
