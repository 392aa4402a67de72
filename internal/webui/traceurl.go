// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui // import "github.com/agenteval/agenteval-collector/internal/webui"

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Placeholders of a trace URL template. Each is replaced by the value, escaped for a URL
// path segment or query value (url.PathEscape).
const (
	PlaceholderTraceID   = "{trace_id}"
	PlaceholderSpanID    = "{span_id}"
	PlaceholderSessionID = "{session_id}"
)

var placeholderRE = regexp.MustCompile(`\{[^{}]*\}`)

// TraceURLTemplate builds links to a turn's trace in the user's trace backend, e.g.
// Jaeger "http://localhost:16686/trace/{trace_id}" or Grafana Tempo
// "https://grafana.example/explore?left=...{trace_id}...". The zero value (and a nil
// pointer) builds no link.
type TraceURLTemplate struct {
	tmpl string
}

// ParseTraceURLTemplate checks tmpl: an absolute http or https URL containing
// {trace_id} and no placeholder other than {trace_id}, {span_id} and {session_id}. The
// empty string gives the zero template (no links).
func ParseTraceURLTemplate(tmpl string) (TraceURLTemplate, error) {
	if tmpl == "" {
		return TraceURLTemplate{}, nil
	}
	if !strings.Contains(tmpl, PlaceholderTraceID) {
		return TraceURLTemplate{}, fmt.Errorf("%q has no %s placeholder", tmpl, PlaceholderTraceID)
	}
	for _, p := range placeholderRE.FindAllString(tmpl, -1) {
		switch p {
		case PlaceholderTraceID, PlaceholderSpanID, PlaceholderSessionID:
		default:
			return TraceURLTemplate{}, fmt.Errorf("%q: unknown placeholder %s; valid placeholders are %s, %s and %s",
				tmpl, p, PlaceholderTraceID, PlaceholderSpanID, PlaceholderSessionID)
		}
	}
	t := TraceURLTemplate{tmpl: tmpl}
	u, err := url.Parse(t.URL("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "session-1"))
	if err != nil {
		return TraceURLTemplate{}, fmt.Errorf("%q is not a valid URL: %w", tmpl, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return TraceURLTemplate{}, fmt.Errorf("%q: scheme must be http or https", tmpl)
	}
	if u.Host == "" {
		return TraceURLTemplate{}, fmt.Errorf("%q: must be an absolute URL with a host", tmpl)
	}
	// Placeholders go in the path, query or fragment: an id in the host would make
	// links to other hosts (or invalid ones).
	rest := strings.TrimPrefix(tmpl[:strings.IndexByte(tmpl, '{')], u.Scheme+"://")
	if !strings.ContainsAny(rest, "/?#") {
		return TraceURLTemplate{}, fmt.Errorf("%q: placeholders must come after the host (in the path, query or fragment)", tmpl)
	}
	return t, nil
}

// Enabled reports whether links are built.
func (t *TraceURLTemplate) Enabled() bool { return t != nil && t.tmpl != "" }

// URL returns the link for a trace (ids in hex, as stored), or "" when the template is
// empty or traceID is.
func (t *TraceURLTemplate) URL(traceID, spanID, sessionID string) string {
	if !t.Enabled() || traceID == "" {
		return ""
	}
	return strings.NewReplacer(
		PlaceholderTraceID, url.PathEscape(traceID),
		PlaceholderSpanID, url.PathEscape(spanID),
		PlaceholderSessionID, url.PathEscape(sessionID),
	).Replace(t.tmpl)
}
