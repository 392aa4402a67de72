// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"payment gateway timeout", 7, "payment…"},
		{"café au lait", 4, "caf…"}, // é is 2 bytes: never split
		{"日本語", 4, "日…"},
		{"x", 0, "…"},
		{"", 0, ""},
		{"abcdefghijk", 10, "abcdefghij…"},
		{"ééééé", 3, "é…"},
	} {
		got := Truncate(tc.s, tc.n)
		assert.Equal(t, tc.want, got, "%q/%d", tc.s, tc.n)
		assert.True(t, utf8.ValidString(got))
		// Cut is the same prefix without the ellipsis.
		cut := Cut(tc.s, tc.n)
		assert.Equal(t, strings.TrimSuffix(tc.want, "…"), cut, "Cut %q/%d", tc.s, tc.n)
		assert.LessOrEqual(t, len(cut), max(tc.n, 0))
	}
}
