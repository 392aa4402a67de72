// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agenteval/agenteval-collector/internal/session"
)

func fp(v float64) *float64 { return &v }

func TestBands(t *testing.T) {
	tests := []struct {
		v          *float64
		band, text string
		drift      string
	}{
		{nil, "n/a", "n/a", "n/a"},
		{fp(math.NaN()), "n/a", "NaN", "n/a"},
		{fp(1), "good", "1.00", "poor"},
		{fp(0.9), "good", "0.90", "poor"},
		// The band is that of the printed number, at each band edge.
		{fp(0.8999), "good", "0.90", "poor"},
		{fp(0.8996), "good", "0.90", "poor"},
		{fp(0.895), "good", "0.90", "poor"}, // 0.895 is 0.89500000000000001776
		{fp(0.8949), "fair", "0.89", "poor"},
		{fp(0.7), "fair", "0.70", "poor"},
		{fp(0.6999), "fair", "0.70", "poor"},
		{fp(0.6995), "fair", "0.70", "poor"},
		{fp(0.695), "poor", "0.69", "poor"}, // 0.695 is 0.69499999999999995115
		{fp(0.6949), "poor", "0.69", "poor"},
		{fp(0.3049), "poor", "0.30", "fair"},
		{fp(0.3051), "poor", "0.31", "poor"},
		{fp(0.25), "poor", "0.25", "fair"},
		{fp(0.1049), "poor", "0.10", "good"},
		{fp(0.1051), "poor", "0.11", "fair"},
		{fp(0.1), "poor", "0.10", "good"},
		{fp(0.0999), "poor", "0.10", "good"},
		{fp(0), "poor", "0.00", "good"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.band, band(tt.v), "band(%v)", tt.text)
		assert.Equal(t, tt.text, score(tt.v))
		assert.Equal(t, tt.drift, driftBand(tt.v), "driftBand(%v)", tt.text)
	}
}

func TestFormats(t *testing.T) {
	for in, want := range map[float64]string{0: "0 ms", 850.4: "850 ms", 999: "999 ms", 1000: "1.0 s", 2400: "2.4 s", 59_999: "60.0 s", 60_000: "1m 00s", 185_000: "3m 05s"} {
		assert.Equal(t, want, ms(in), "%v ms", in)
	}
	assert.Equal(t, "2026-01-02 03:04:05 UTC", when(time.Date(2026, 1, 2, 4, 4, 5, 9, time.FixedZone("CET", 3600))))
	assert.Equal(t, "–", when(time.Time{}))
	yes, no := true, false
	assert.Equal(t, "Y", yesNo(&yes, "Y", "N"))
	assert.Equal(t, "N", yesNo(&no, "Y", "N"))
	assert.Equal(t, "unknown", yesNo(nil, "Y", "N"))
	assert.Equal(t, "/sessions/a%2Fb%20c", sessionURL("a/b c"))
	assert.Equal(t, "/agents/x%3Fy", agentURL("x?y"))
}

// TestAnomalyLabel: every anomaly the collector records has words of its own; a code
// this UI does not know (a newer collector's) is shown as it is.
func TestAnomalyLabel(t *testing.T) {
	for _, a := range []string{session.AnomalyCycle, session.AnomalyDuplicateSpan, session.AnomalyMissingParent,
		session.AnomalySelfParent, session.AnomalyLateSpan, session.AnomalyTruncatedText, session.AnomalyUnreadableValue} {
		assert.NotEqual(t, "⚠ "+a, anomalyLabel(a), "anomaly %s has words", a)
	}
	assert.Equal(t, "✂ text cut at max_text_bytes", anomalyLabel(session.AnomalyTruncatedText))
	assert.Equal(t, "⚠ new_anomaly", anomalyLabel("new_anomaly"))
}
