// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package text holds the deterministic text-analysis primitives the evaluators use
// (docs/scoring.md): CCM similarity, RDM correction detection, salient-fact coverage,
// ungrounded specifics, refusal/uncertainty cues and name mentions.
package text // import "github.com/agenteval/agenteval-collector/internal/text"

import "unicode/utf8"

// Truncate returns s cut to at most n bytes on a rune boundary, with "…" appended when it
// was cut (so the result may exceed n by the 3 bytes of "…"). s is returned as is when it
// fits; n <= 0 gives "…" for any non-empty s. It never splits a UTF-8 sequence, so valid
// input stays valid.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + "…"
}

// Cap returns s when it fits in n bytes, else s cut on a rune boundary and ended with
// "…", n bytes at most in all (for n >= 3, the ellipsis's bytes): the bound of a field
// whose size is its storage's or its line's, where Truncate may go 3 bytes over.
func Cap(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	return Cut(s, n-len(ellipsis)) + ellipsis
}

// Cut returns s cut to at most n bytes on a rune boundary, with no ellipsis: a prefix of
// s that stays valid UTF-8 when s is. s is returned as is when it fits; n <= 0 gives "".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
