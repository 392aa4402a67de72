// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnalysisNumbersHaveFourDecimals walks the JSON of every golden analysis: each
// number has at most 4 decimals, except token usage and cost (counts and currency,
// not scores).
func TestAnalysisNumbersHaveFourDecimals(t *testing.T) {
	e := newEval(t)
	for name, build := range goldenSessions {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(e.AnalyzeSession(build()))
			require.NoError(t, err)
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var v any
			require.NoError(t, dec.Decode(&v))
			checked := 0
			walkNumbers(v, "", func(path string, n json.Number) {
				if strings.Contains(path, ".usage.") {
					return
				}
				checked++
				s := n.String()
				if i := strings.IndexByte(s, '.'); i >= 0 {
					assert.LessOrEqual(t, len(s)-i-1, 4, "%s = %s", path, s)
				}
				assert.NotContains(t, s, "e", "%s = %s", path, s)
			})
			assert.Positive(t, checked)
		})
	}
}

func walkNumbers(v any, path string, f func(string, json.Number)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			walkNumbers(c, path+"."+k, f)
		}
	case []any:
		for i, c := range x {
			walkNumbers(c, path+"["+strconv.Itoa(i)+"]", f)
		}
	case json.Number:
		f(path, x)
	}
}

func TestRound4(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{
		{2.0 / 3, 0.6667},
		{0.8687499999999999, 0.8687}, // as num prints it in the explanations
		{1700.0 / 3, 566.6667},
		{0.00005, 0.0001},
		{1, 1},
		{0, 0},
	} {
		assert.Equal(t, tt.want, round4(tt.in), "round4(%v)", tt.in)
	}
	// A shared, already rounded score is not written again (no data race on results
	// shared by a turn record and an analysis).
	s := 0.5
	p := &s
	round4Ptr(&p)
	assert.Same(t, &s, p)
	q := ptr(2.0 / 3)
	round4Ptr(&q)
	assert.Equal(t, 0.6667, *q)
}

// TestRound4IntegersUnformatted: the integer shortcut of round4 answers like formatting
// and parsing back (docs/decisions/performance.md §8.7), -0 and large values included.
func TestRound4IntegersUnformatted(t *testing.T) {
	viaText := func(v float64) float64 {
		r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 4, 64), 64)
		require.NoError(t, err)
		return r
	}
	negZero := math.Copysign(0, -1)
	for _, v := range []float64{0, negZero, 1, -1, 2, 1000, 49, 1e15, -1e15, 1 << 52, 1<<53 - 1, 1 << 53, 1e300, 0.5, 0.25, 0.8687499999999999, 2.00005} {
		got, want := round4(v), viaText(v)
		assert.Equal(t, want, got, "%v", v)
		assert.Equal(t, math.Signbit(want), math.Signbit(got), "%v sign", v)
	}
}

// TestRound4ShortcutsAsFormatted: round4's arithmetic shortcut answers like formatting
// with 4 decimals and parsing back, on random values of every scale the evaluator
// rounds, on values rounded already, and next to ties (x.xxxx5).
func TestRound4ShortcutsAsFormatted(t *testing.T) {
	viaText := func(v float64) float64 {
		r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 4, 64), 64)
		require.NoError(t, err)
		return r
	}
	check := func(v float64) {
		got, want := round4(v), viaText(v)
		if got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("round4(%v) = %v, formatted and parsed %v", v, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300_000 {
		scale := math.Pow(10, float64(rng.IntN(13)-6)) // 1e-6 .. 1e6
		v := (rng.Float64()*2 - 1) * scale
		check(v)
		check(viaText(v))                      // rounded already
		tie := (math.Round(v*1e4) + 0.5) / 1e4 // next to a tie
		check(tie)
		check(math.Nextafter(tie, 0))
		check(math.Nextafter(tie, math.Inf(1)))
		check(float64(rng.IntN(1_000_000)) / float64(1+rng.IntN(1000))) // means and ratios
	}
	for _, v := range []float64{0.00005, -0.00005, 0.00004999, -0.00001, 999999.99995, -999999.99995, 1e6 - 1e-5, 0.8687499999999999, 2.00005} {
		check(v)
	}
}
