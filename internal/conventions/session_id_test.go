// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestSessionIDs: ids users can rely on. Span keys win over resource keys (an int
// session.id on the resource does not override the span's gen_ai.conversation.id);
// an id longer than the limit, or with a NUL or other control byte, is rejected (the
// span is keyed by its trace), never cut or stripped into another session's id.
func TestSessionIDs(t *testing.T) {
	long := strings.Repeat("x", MaxSessionIDBytes)
	tests := []struct {
		name     string
		span     map[string]any
		resource map[string]any
		want     string
		wantKey  string
		problem  string
	}{
		{"span before resource", map[string]any{"gen_ai.conversation.id": "conv-1"}, map[string]any{"session.id": int64(42)}, "conv-1", "gen_ai.conversation.id", ""},
		{"int resource key alone", nil, map[string]any{"session.id": int64(42)}, "42", "resource:session.id", ""},
		{"at the limit", map[string]any{"session.id": long}, nil, long, "session.id", ""},
		{"one byte over the limit", map[string]any{"session.id": long + "a"}, nil, "", "",
			"session.id: session id of 1025 bytes is longer than 1024; ignored"},
		{"over the limit on the resource", nil, map[string]any{"session.id": long + "b"}, "", "",
			"resource:session.id: session id of 1025 bytes is longer than 1024; ignored"},
		{"long span id falls back to a valid resource id", map[string]any{"gen_ai.conversation.id": long + "a"}, map[string]any{"session.id": "r-1"}, "r-1", "resource:session.id",
			"gen_ai.conversation.id: session id of 1025 bytes is longer than 1024; ignored"},
		{"NUL byte", map[string]any{"session.id": "a\x00b"}, nil, "", "",
			"session.id: session id holds a control character (NUL, newline...); ignored"},
		{"newline", map[string]any{"session.id": "a\nb"}, nil, "", "",
			"session.id: session id holds a control character (NUL, newline...); ignored"},
		{"unicode is fine", map[string]any{"session.id": "会话-é"}, nil, "会话-é", "session.id", ""},
		{"dot", map[string]any{"session.id": "."}, nil, "", "",
			`session.id: session id "." names no session in a URL path; ignored`},
		{"dot dot", map[string]any{"session.id": ".."}, nil, "", "",
			`session.id: session id ".." names no session in a URL path; ignored`},
		{"dots in an id are fine", map[string]any{"session.id": "a..b"}, nil, "a..b", "session.id", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := pcommon.NewResource()
			require.NoError(t, res.Attributes().FromRaw(tt.resource))
			r := NewExtractor(Config{}).Extract(res, pcommon.NewInstrumentationScope(), newSpan(t, "chat x", tt.span))
			checkInvariants(t, r, DefaultMaxTextBytes)
			assert.Equal(t, tt.want, r.SessionID)
			assert.Equal(t, tt.wantKey, r.SessionKey)
			if tt.problem != "" {
				assert.Contains(t, r.Problems, tt.problem)
			}
		})
	}
}

// TestHasControl checks hasControl against strings.IndexFunc(s, unicode.IsControl) for
// every rune, alone and between other text.
func TestHasControl(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, s := range []string{string(r), "ab" + string(r) + "é", string(r) + "\u00a0"} {
			if want := strings.IndexFunc(s, unicode.IsControl) >= 0; hasControl(s) != want {
				t.Fatalf("hasControl(%q) = %v, want %v", s, !want, want)
			}
		}
	}
	assert.False(t, hasControl(""))
	assert.False(t, hasControl("\u00a0\u00c2\u00bf"))
}
