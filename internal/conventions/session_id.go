// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"fmt"
	"unicode/utf8"
)

// MaxSessionIDBytes is the longest session id accepted (docs/decisions/ids-and-times.md).
// A longer value is rejected, not cut: two long ids sharing a prefix must not merge.
const MaxSessionIDBytes = 1024

// SessionIDProblem says why raw cannot be a session id, or "" when it can: longer than
// max bytes (the extractor passes the smaller of MaxSessionIDBytes and its MaxTextBytes),
// not valid UTF-8, or holding a control character (NUL included), which the stores would
// have to strip or escape and so could merge two ids; or "." or "..", which browsers,
// curl and the web UI's links resolve as path segments, so that
// /api/v1/agent_sessions/.. reaches another path (only a client that percent-encodes the
// dots reaches the session). The extractor keys a span whose session key is rejected by
// its trace, like a span without one, and records the reason (with "; ignored") as a
// problem on the span; the agentsession receiver refuses such a session_id with 400.
// A blank id is no problem here: the extractor treats it as absent.
func SessionIDProblem(raw string, max int) string {
	switch {
	case len(raw) > max:
		return fmt.Sprintf("session id of %d bytes is longer than %d", len(raw), max)
	case !utf8.ValidString(raw):
		return "session id is not valid UTF-8"
	case hasControl(raw):
		return "session id holds a control character (NUL, newline...)"
	case raw == "." || raw == "..":
		return fmt.Sprintf("session id %q names no session in a URL path", raw)
	}
	return ""
}

// hasControl reports whether s, valid UTF-8, holds a character unicode.IsControl
// reports: U+0000–U+001F, U+007F–U+009F. It reads bytes, not runes: every span with a
// session id is checked, and strings.IndexFunc(s, unicode.IsControl) decoded each rune
// and made a call for it (docs/decisions/performance.md §8.30). In valid UTF-8, U+0080–U+009F
// are the two bytes 0xC2 0x80–0x9F, and 0xC2 is always a leading byte.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20 || b == 0x7f:
			return true
		case b == 0xc2 && i+1 < len(s) && s[i+1] <= 0x9f:
			return true
		}
	}
	return false
}
