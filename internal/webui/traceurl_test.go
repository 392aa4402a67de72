// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTraceURLTemplate(t *testing.T) {
	tests := []struct {
		tmpl                     string
		traceID, spanID, session string
		want                     string
	}{
		{"http://localhost:16686/trace/{trace_id}", "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "s", "http://localhost:16686/trace/0af7651916cd43dd8448eb211c80319c"},
		{"https://tempo.example/t/{trace_id}?span={span_id}&s={session_id}", "ab", "cd", "a b/c?", "https://tempo.example/t/ab?span=cd&s=a%20b%2Fc%3F"},
		{"http://x/{trace_id}", "", "cd", "s", ""}, // no trace id: no link
		{"", "ab", "cd", "s", ""},                  // no template: no link
	}
	for _, tt := range tests {
		tmpl, err := ParseTraceURLTemplate(tt.tmpl)
		require.NoError(t, err, tt.tmpl)
		assert.Equal(t, tt.tmpl != "", tmpl.Enabled())
		assert.Equal(t, tt.want, tmpl.URL(tt.traceID, tt.spanID, tt.session), tt.tmpl)
	}
	var nilTmpl *TraceURLTemplate
	assert.Empty(t, nilTmpl.URL("ab", "cd", "s"))
}

func TestParseTraceURLTemplateErrors(t *testing.T) {
	for tmpl, want := range map[string]string{
		"http://jaeger/search":                  "has no {trace_id} placeholder",
		"http://jaeger/{trace_id}/{spanid}":     "unknown placeholder {spanid}",
		"ftp://jaeger/{trace_id}":               "scheme must be http or https",
		"jaeger:16686/trace/{trace_id}":         "scheme must be http or https",
		"http:///trace/{trace_id}":              "must be an absolute URL with a host",
		"http://jae ger:bad/trace/{trace_id}":   "is not a valid URL",
		"http://{trace_id}/":                    "placeholders must come after the host",
		"http://jaeger.{session_id}/{trace_id}": "placeholders must come after the host",
		"http://jaeger:{span_id}/t/{trace_id}":  "is not a valid URL",
	} {
		_, err := ParseTraceURLTemplate(tmpl)
		assert.ErrorContains(t, err, want, tmpl)
	}
}
