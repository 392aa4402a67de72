// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSessionIDBytes is the longest session id accepted (docs/decisions/ids-and-times.md).
// A longer value is rejected, not cut: two long ids sharing a prefix must not merge.
const MaxSessionIDBytes = 1024

// sessionIDProblem says why raw cannot be a session id, or "" when it can: longer than
// max (the smaller of MaxSessionIDBytes and the extractor's MaxTextBytes), not valid UTF-8, or holding a control character (NUL included),
// which the stores would have to strip or escape and so could merge two ids. A span
// whose session key is rejected is keyed by its trace, like a span without one, and
// the reason is recorded as a problem on the span.
func sessionIDProblem(raw string, max int) string {
	switch {
	case len(raw) > max:
		return fmt.Sprintf("session id of %d bytes is longer than %d; ignored", len(raw), max)
	case !utf8.ValidString(raw):
		return "session id is not valid UTF-8; ignored"
	case strings.IndexFunc(raw, unicode.IsControl) >= 0:
		return "session id holds a control character (NUL, newline...); ignored"
	}
	return ""
}
