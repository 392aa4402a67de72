// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"net/url"
	"testing"
)

// FuzzParseListForm: any query either fails with a message or gives a filter within the
// store's bounds.
func FuzzParseListForm(f *testing.F) {
	for _, seed := range []string{
		"", "agent=planner&min_score=0.2&max_score=0.9", "since=2026-01-02T15:04&partial=yes&task=no&limit=1000",
		"min_score=NaN", "limit=-1", "after=2026-01-02T15:04:05.123456789Z&after_id=s1", "after_id=x", "since=%ZZ",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		_, filter, err := parseListForm(q)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if filter.Limit < 1 || filter.Limit > 1000 {
			t.Fatalf("limit %d out of bounds", filter.Limit)
		}
		for _, v := range []*float64{filter.MinScore, filter.MaxScore} {
			if v != nil && !(*v >= 0 && *v <= 1) {
				t.Fatalf("score bound %v out of [0,1]", *v)
			}
		}
		if filter.MinScore != nil && filter.MaxScore != nil && *filter.MinScore > *filter.MaxScore {
			t.Fatal("min above max accepted")
		}
		if filter.After != nil && filter.After.SessionID == "" {
			t.Fatal("a cursor without a session id")
		}
	})
}

// FuzzTraceURLTemplate: a template that parses builds absolute http(s) URLs, whatever
// the ids hold.
func FuzzTraceURLTemplate(f *testing.F) {
	f.Add("http://localhost:16686/trace/{trace_id}", "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "s")
	f.Add("https://g.example/explore?q={trace_id}&s={span_id}#{session_id}", "x/../y", "?a=b", "#frag")
	f.Fuzz(func(t *testing.T, tmpl, traceID, spanID, sessionID string) {
		tt, err := ParseTraceURLTemplate(tmpl)
		if err != nil || traceID == "" {
			return
		}
		link := tt.URL(traceID, spanID, sessionID)
		u, err := url.Parse(link)
		if err != nil {
			t.Fatalf("%q from %q: %v", link, tmpl, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("%q from %q is not an absolute http(s) URL", link, tmpl)
		}
	})
}
