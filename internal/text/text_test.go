// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// TestTruncate covers Truncate, Cut (its prefix without the ellipsis) and Cap (the
// ellipsis counted in the bound).
func TestTruncate(t *testing.T) {
	long := "evaluate " + strings.Repeat("é", 400)
	for _, tc := range []struct {
		s         string
		n         int
		want, cap string
	}{
		{"short", 10, "short", "short"},
		{"exactly", 7, "exactly", "exactly"},
		{"payment gateway timeout", 7, "payment…", "paym…"},
		{"café au lait", 4, "caf…", "c…"}, // é is 2 bytes: never split
		{"café au lait", 7, "café a…", "caf…"},
		{"日本語", 4, "日…", "…"},
		{"x", 0, "…", "…"},
		{"", 0, "", ""},
		{"abcdefghijk", 10, "abcdefghij…", "abcdefg…"},
		{"ééééé", 3, "é…", "…"},
		{long, 300, long[:299] + "…", long[:297] + "…"}, // byte 300 falls inside an é
	} {
		got := Truncate(tc.s, tc.n)
		assert.Equal(t, tc.want, got, "%q/%d", tc.s, tc.n)
		assert.True(t, utf8.ValidString(got))
		// Cut is the same prefix without the ellipsis.
		cut := Cut(tc.s, tc.n)
		assert.Equal(t, strings.TrimSuffix(tc.want, "…"), cut, "Cut %q/%d", tc.s, tc.n)
		assert.LessOrEqual(t, len(cut), max(tc.n, 0))
		capped := Cap(tc.s, tc.n)
		assert.Equal(t, tc.cap, capped, "Cap %q/%d", tc.s, tc.n)
		assert.LessOrEqual(t, len(capped), max(tc.n, len("…")))
		assert.True(t, utf8.ValidString(capped))
	}
}
