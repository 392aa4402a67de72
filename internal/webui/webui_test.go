// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// newServer serves the UI over st on a loopback httptest server.
func newServer(t testing.TB, opts Options) *httptest.Server {
	t.Helper()
	ui, err := New(opts)
	require.NoError(t, err)
	mux := http.NewServeMux()
	ui.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t testing.TB, srv *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), resp.Header
}

// textOf returns the page's visible text (tags removed, whitespace collapsed).
func textOf(t testing.TB, page string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	require.NoError(t, err)
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style" || n.Data == "head") {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteString(" ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return strings.Join(strings.Fields(b.String()), " ")
}

// hrefs returns the href and src attributes of the page, in document order.
func hrefs(t testing.TB, page string) []string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	require.NoError(t, err)
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "href" || a.Key == "src" {
					out = append(out, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// sessionIDsOf returns the session ids of the list page, in order.
func sessionIDsOf(t testing.TB, page string) []string {
	t.Helper()
	var ids []string
	for _, h := range hrefs(t, page) {
		if rest, ok := strings.CutPrefix(h, "/sessions/"); ok {
			id, err := url.PathUnescape(rest)
			require.NoError(t, err)
			ids = append(ids, id)
		}
	}
	return ids
}

func TestSessionsListFilters(t *testing.T) {
	st, _ := goldenStore(t)
	// Stored last, so listed first (the list is newest stored first), although its
	// spans ended before every other session's.
	partial := goldenAnalyses(t)[0]
	partial.SessionID, partial.Partial = "clean-partial", true
	partial.EndedAt = partial.EndedAt.Add(-time1h)
	require.NoError(t, st.SaveAnalysis(context.Background(), partial))
	srv := newServer(t, Options{Store: st})

	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"clean-partial", "refund-12345", "clean", "reask", "correction", "no-content", "errors"}},
		{"?agent=planner", []string{"refund-12345", "no-content", "errors"}},
		{"?agent=&min_score=&max_score=&since=&partial=&task=&limit=100", []string{"clean-partial", "refund-12345", "clean", "reask", "correction", "no-content", "errors"}},
		{"?min_score=0.8", []string{"clean-partial", "refund-12345", "clean", "no-content"}},
		{"?max_score=0.75", []string{"reask", "errors"}},
		{"?min_score=0.7&max_score=0.8", []string{"correction"}},
		{"?task=no", []string{"refund-12345", "errors"}},
		{"?task=yes&partial=yes", []string{"clean-partial"}},
		{"?partial=no&task=yes", []string{"clean", "reask", "correction"}},
		{"?since=2025-06-01T12:01:01", []string{"refund-12345", "clean", "reask"}},
		{"?since=2025-06-01T11:30", []string{"refund-12345", "clean", "reask", "correction", "no-content", "errors"}},
		{"?since=2025-06-01T12:01:00.5Z", []string{"refund-12345", "clean", "reask", "correction"}},
		{"?limit=50&agent=helpdesk", []string{"reask"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, page, hdr := get(t, srv, "/"+tt.query)
			require.Equal(t, http.StatusOK, code, page)
			assert.Equal(t, "text/html; charset=utf-8", hdr.Get("Content-Type"))
			assert.Contains(t, hdr.Get("Content-Security-Policy"), "script-src 'self'")
			assert.Equal(t, tt.want, sessionIDsOf(t, page))
		})
	}

	// Badges and marks are words, not only colours.
	_, page, _ := get(t, srv, "/")
	text := textOf(t, page)
	for _, want := range []string{
		"7 sessions, newest first",
		"refund-12345", "0.87 fair", "✗ not completed",
		"reask", "0.50 poor", "✓ completed",
		"no-content", "1.00 good", "unknown",
		"clean-partial", "◐ partial",
	} {
		assert.Contains(t, text, want)
	}
}

const time1h = 3600 * 1e9

func TestSessionsListBadFilters(t *testing.T) {
	st, _ := goldenStore(t)
	srv := newServer(t, Options{Store: st})
	for query, want := range map[string]string{
		"?min_score=2":                 "min score: must be a number between 0 and 1",
		"?max_score=x":                 "max score: must be a number between 0 and 1",
		"?min_score=0.9&max_score=0.1": "min score: must not be greater than max score",
		"?since=yesterday":             "since: must be a date",
		"?partial=maybe":               "partial: must be yes or no",
		"?task=1":                      "task: must be yes or no",
		"?limit=0":                     "limit: must be a number between 1 and 1000",
	} {
		t.Run(query, func(t *testing.T) {
			code, page, _ := get(t, srv, "/"+query)
			assert.Equal(t, http.StatusBadRequest, code)
			assert.Contains(t, textOf(t, page), want)
			assert.Empty(t, sessionIDsOf(t, page), "no list with a bad filter")
		})
	}
}

// olderLink returns the href of the page's "Older sessions" link, "" without one.
func olderLink(t testing.TB, page string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	require.NoError(t, err)
	var href string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			var id, h string
			for _, a := range n.Attr {
				switch a.Key {
				case "id":
					id = a.Val
				case "href":
					h = a.Val
				}
			}
			if id == "older" {
				href = h
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return href
}

// TestSessionsListPages follows the "Older sessions" links two sessions at a time, with
// a filter: every matching session is listed once, in order, and the filter is kept.
func TestSessionsListPages(t *testing.T) {
	st, _ := goldenStore(t)
	srv := newServer(t, Options{Store: st})
	for query, want := range map[string][]string{
		"/?limit=2":                {"refund-12345", "clean", "reask", "correction", "no-content", "errors"},
		"/?limit=2&min_score=0.75": {"refund-12345", "clean", "correction", "no-content"},
		"/?limit=3&agent=executor": {"refund-12345", "no-content", "errors"},
	} {
		t.Run(query, func(t *testing.T) {
			var got []string
			path := query
			for pages := 0; path != ""; pages++ {
				require.Less(t, pages, 10, "pagination does not end")
				code, page, _ := get(t, srv, path)
				require.Equal(t, http.StatusOK, code, path)
				got = append(got, sessionIDsOf(t, page)...)
				if pages > 0 {
					want, err := url.Parse(query)
					require.NoError(t, err)
					found := false
					for _, h := range hrefs(t, page) {
						u, err := url.Parse(h)
						require.NoError(t, err)
						found = found || (u.Path == "/" && u.RawQuery != "" && u.Query().Encode() == want.Query().Encode())
					}
					assert.True(t, found, "the newest-sessions link keeps the filters of %s", query)
				}
				path = olderLink(t, page)
			}
			assert.Equal(t, want, got)
		})
	}
	code, page, _ := get(t, srv, "/?after=yesterday&after_id=x")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, textOf(t, page), "after, after_id: a page link is an RFC 3339 time and a session id")
}

func TestSessionPage(t *testing.T) {
	st, _ := goldenStore(t)
	tmpl, err := ParseTraceURLTemplate("http://localhost:16686/trace/{trace_id}?uiFind={span_id}")
	require.NoError(t, err)
	srv := newServer(t, Options{Store: st, TraceURL: tmpl})

	code, page, _ := get(t, srv, "/sessions/refund-12345")
	require.Equal(t, http.StatusOK, code, page)
	text := textOf(t, page)
	for _, want := range []string{
		// Header, session scores with explanations.
		"Session refund-12345", "refund-bot", "session_timeout", "0.87 fair",
		"overall_score", "coordination_score", "intent_drift_score (lower is better)", "0.00 good",
		"↳ context_preserved",
		// Per-agent scores with explanations.
		"executor", "planner", "reviewer",
		"(0.35×tool_use(0.8333) + 0.25×reasoning(1) + 0.2×handoff(1) + 0.2×response_quality(1)) / 1 = 0.9417",
		// Ranked recommendations.
		"executor: 1 of 1 calls to send_email passed unknown parameter 'priority'",
		// Tool issue with its parameter.
		"PARAMETER_HALLUCINATION MEDIUM priority yes",
		// Turn verdicts and the transcript.
		"Turn 1", "✓ good", "confidence 0.80",
		"the follow-up neither corrects nor re-asks, and nothing is ungrounded",
		"Please process a refund for order #12345, amount $49.99.",
		"Refund R-778 of $49.99 for order #12345 has been issued.",
		"Turn 3", "✗ bad: hallucination",
		"planner → executor",
		"Agents in this turn: planner 1.00 good · executor",
		"called send_email : invalid; PARAMETER_HALLUCINATION priority",
		// Latency and usage.
		"Latency and usage", "2.8 s",
	} {
		assert.Contains(t, text, want)
	}
	// Recommendations are in rank order (impact): the errors session has seven.
	_, errPage, _ := get(t, srv, "/sessions/errors")
	errText := textOf(t, errPage)
	first := strings.Index(errText, "Agent planner should pass more context")
	second := strings.Index(errText, "executor: 1 of 1 calls to issue_refund")
	third := strings.Index(errText, "Agents are not coordinating well")
	assert.True(t, first >= 0 && second > first && third > second, "recommendations ranked")
	// Trace links through the template.
	assert.Contains(t, hrefs(t, page), "http://localhost:16686/trace/trace-0?uiFind=root-0")
}

// TestSessionPageMarksTurnsClosedLate: the transcript lists a session's turns in
// conversation order, as the store does, and marks a turn numbered after one that came
// later; its number stays its turn_index.
func TestSessionPageMarksTurnsClosedLate(t *testing.T) {
	srv := newServer(t, Options{Store: storeOf(t, []*evaluation.Analysis{lateTurnAnalysis(t)})})
	code, page, _ := get(t, srv, "/sessions/late-turn")
	require.Equal(t, http.StatusOK, code, page)
	text := textOf(t, page)
	t1, t3, t2 := strings.Index(text, "Turn 1 "), strings.Index(text, "Turn 3 "), strings.Index(text, "Turn 2 ")
	require.True(t, t1 >= 0 && t3 > t1 && t2 > t3, "turns in conversation order: %s", text)
	assert.Equal(t, 1, strings.Count(text, "◷ closed late"), text)
	late := strings.Index(text, "◷ closed late")
	assert.True(t, late > t3 && late < t2, "the mark is on turn 3's header: %s", text)
	assert.Contains(t, page, `id="turn-2"`, "anchored by turn_index, as tool issues and the live view link it")

	// Turns stored without their start keep the index order, unmarked.
	a := lateTurnAnalysis(t)
	for i := range a.TurnResults {
		a.TurnResults[i].StartedAt = time.Time{}
	}
	srv = newServer(t, Options{Store: storeOf(t, []*evaluation.Analysis{a})})
	_, page, _ = get(t, srv, "/sessions/late-turn")
	assert.NotContains(t, textOf(t, page), "closed late")
}

func TestMarkClosedLate(t *testing.T) {
	for _, tc := range []struct {
		indexes []int // in the order listed
		late    []bool
	}{
		{nil, nil},
		{[]int{0, 1, 2}, []bool{false, false, false}},
		{[]int{0, 2, 1}, []bool{false, true, false}},
		{[]int{1, 0}, []bool{true, false}},
		{[]int{2, 0, 1}, []bool{true, false, false}},
		{[]int{0, 3, 1, 2}, []bool{false, true, false, false}},
		{[]int{2, 3, 0, 1}, []bool{true, true, false, false}},
	} {
		turns := make([]turnView, len(tc.indexes))
		for i, idx := range tc.indexes {
			turns[i].TurnIndex = idx
		}
		markClosedLate(turns)
		var got []bool
		for _, tv := range turns {
			got = append(got, tv.ClosedLate)
		}
		assert.Equal(t, tc.late, got, "%v", tc.indexes)
	}
}

// TestSessionPageExplainsVerdicts: the session page spells out RDM and CCM: a legend
// of the bad-turn verdicts above the transcript, and a title on an rdm verdict and on an
// rdm recommendation.
func TestSessionPageExplainsVerdicts(t *testing.T) {
	st, _ := goldenStore(t)
	srv := newServer(t, Options{Store: st})
	code, page, _ := get(t, srv, "/sessions/correction")
	require.Equal(t, http.StatusOK, code, page)
	const rdm = "response dissatisfaction: the next user message corrects the answer or complains about it"
	text := textOf(t, page)
	assert.Contains(t, text, "Bad-turn verdicts: rdm , "+rdm+"; ccm , conversation continuity: the next user message asks the same thing again; no_answer ,")
	assert.Contains(t, page, `✗ bad: <abbr title="`+rdm+`">rdm</abbr>`)
	assert.Contains(t, page, `<span class="kind" title="`+rdm+`">rdm</span>`)
	assert.Contains(t, page, `<span class="kind">response_quality</span>`, "no title for a kind that is not a verdict")
}

// TestSessionPageShowsReferences: reference-based results (a dataset run) are shown as
// JSON; without them the section is absent.
func TestSessionPageShowsReferences(t *testing.T) {
	st, _ := goldenStore(t)
	a := goldenAnalyses(t)[0]
	a.SessionID = "with-references"
	a.References = map[string]any{"tool_selection": map[string]any{"score": 0.5, "expected": []any{"lookup_order"}}}
	require.NoError(t, st.SaveAnalysis(context.Background(), a))
	srv := newServer(t, Options{Store: st})
	_, page, _ := get(t, srv, "/sessions/with-references")
	assert.Contains(t, textOf(t, page), `Reference-based results { "tool_selection": { "expected": [ "lookup_order" ], "score": 0.5 } }`)
	_, page, _ = get(t, srv, "/sessions/clean")
	assert.NotContains(t, textOf(t, page), "Reference-based results")
}

func TestSessionPageWithoutTraceTemplateHasNoTraceLink(t *testing.T) {
	st, _ := goldenStore(t)
	srv := newServer(t, Options{Store: st})
	_, page, _ := get(t, srv, "/sessions/refund-12345")
	for _, h := range hrefs(t, page) {
		assert.NotContains(t, h, "trace-0")
	}
	assert.Contains(t, textOf(t, page), "trace trace-0")
}

// TestAllLinksResolve follows every same-origin link of the list, the session pages
// and the agent pages: each answers 200.
func TestAllLinksResolve(t *testing.T) {
	st, as := goldenStore(t)
	srv := newServer(t, Options{Store: st, Events: NewBroadcaster(1, 0)})
	seen := map[string]bool{}
	queue := []string{"/"}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		code, page, _ := get(t, srv, path)
		require.Equal(t, http.StatusOK, code, path)
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/static/") || strings.HasPrefix(path, "/api/") {
			continue
		}
		for _, h := range hrefs(t, page) {
			// The JSON API is the exporter's (its tests follow these links).
			if strings.HasPrefix(h, "#") || strings.HasPrefix(h, "http") || strings.HasPrefix(h, "/api/") {
				continue
			}
			h, _, _ = strings.Cut(h, "#")
			queue = append(queue, h)
		}
	}
	for _, a := range as {
		assert.True(t, seen[sessionURL(a.SessionID)], a.SessionID)
		for _, agent := range a.Agents() {
			assert.True(t, seen[agentURL(agent)], agent)
		}
	}
	assert.True(t, seen["/static/style.css"])
	assert.True(t, seen["/live"])
}

func TestAgentPage(t *testing.T) {
	st, _ := goldenStore(t)
	srv := newServer(t, Options{Store: st})
	code, page, _ := get(t, srv, "/agents/executor")
	require.Equal(t, http.StatusOK, code)
	text := textOf(t, page)
	assert.Contains(t, text, "Agent executor")
	assert.Contains(t, text, "3 sessions")
	// Newest first: refund-12345 (12:02:00.9) before no-content (12:00:00.8) before errors.
	assert.Equal(t, []string{"refund-12345", "no-content", "errors"}, sessionIDsOf(t, page))
	assert.Contains(t, page, "<polyline points=")

	_, page, _ = get(t, srv, "/agents/nobody")
	assert.Contains(t, textOf(t, page), "No stored session has scores for this agent.")
	code, _, _ = get(t, srv, "/agents/executor?limit=5000")
	assert.Equal(t, http.StatusBadRequest, code)
}

func TestUnknownSessionIs404(t *testing.T) {
	st, _ := goldenStore(t)
	srv := newServer(t, Options{Store: st})
	code, page, _ := get(t, srv, "/sessions/"+url.PathEscape("no/such session"))
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, textOf(t, page), `No stored analysis for session "no/such session"`)
	assert.NotContains(t, page, `http-equiv="refresh"`, "only the store-down 503 reloads itself")
}

// TestSessionIDsAreEscaped stores a session whose id needs escaping in a URL and in
// HTML: its links resolve and its text is not markup.
func TestSessionIDsAreEscaped(t *testing.T) {
	st, _ := goldenStore(t)
	a := goldenAnalyses(t)[0]
	a.SessionID = `<b>x</b>/y?z#1 é`
	a.TurnResults[0].UserMessage = `<script>alert(1)</script>`
	require.NoError(t, st.SaveAnalysis(context.Background(), a))
	srv := newServer(t, Options{Store: st})
	_, list, _ := get(t, srv, "/")
	assert.NotContains(t, list, "<b>x</b>")
	assert.Contains(t, sessionIDsOf(t, list), a.SessionID)
	code, page, _ := get(t, srv, sessionURL(a.SessionID))
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, page, "<script>alert")
	assert.Contains(t, textOf(t, page), "<script>alert(1)</script>")
}

type channelStub map[string][]ChannelMessage

func (c channelStub) ChannelMessages(_ context.Context, id string) ([]ChannelMessage, bool, error) {
	if id == "broken" {
		return nil, false, errors.New("channel store down")
	}
	return c[id], id == "reask", nil
}

// TestChannelTranscriptExtensionPoint shows a proctored session's channel messages
// under the transcript when a ChannelTranscripts is configured.
func TestChannelTranscriptExtensionPoint(t *testing.T) {
	st, _ := goldenStore(t)
	srv := newServer(t, Options{Store: st, Channel: channelStub{"reask": {
		{Sequence: 1, SenderAgentID: "proctor-1", Role: "proctor", Content: "What is 2+2?"},
		{Sequence: 2, SenderAgentID: "cand-1", Role: "candidate", Content: "4"},
	}}})
	_, page, _ := get(t, srv, "/sessions/reask")
	assert.Contains(t, textOf(t, page), "Evaluation channel #1 proctor-1 (proctor) What is 2+2? #2 cand-1 (candidate) 4 "+
		"Only the first 2 messages are shown")
	_, page, _ = get(t, srv, "/sessions/clean")
	assert.NotContains(t, textOf(t, page), "Evaluation channel")
}

type failingStore struct{ store.Store }

func (failingStore) ListSessions(context.Context, store.Filter) ([]store.SessionSummary, error) {
	return nil, errors.New("disk on fire at /secret/path")
}

func (failingStore) GetAnalysis(context.Context, string) (*evaluation.Analysis, error) {
	return nil, errors.New("disk on fire at /secret/path")
}

func TestStoreFailureIs500WithoutDetails(t *testing.T) {
	srv := newServer(t, Options{Store: failingStore{}})
	for _, path := range []string{"/", "/sessions/x"} {
		code, page, _ := get(t, srv, path)
		assert.Equal(t, http.StatusInternalServerError, code)
		assert.Contains(t, textOf(t, page), "The result store failed")
		assert.NotContains(t, page, "/secret/path")
	}
}

func TestNewRequiresStore(t *testing.T) {
	_, err := New(Options{})
	require.Error(t, err)
}

func TestLiveRoutesOnlyWithEvents(t *testing.T) {
	st, _ := goldenStore(t)
	srv := newServer(t, Options{Store: st})
	code, _, _ := get(t, srv, "/live")
	assert.Equal(t, http.StatusNotFound, code)
	code, _, _ = get(t, srv, PathEvents)
	assert.Equal(t, http.StatusNotFound, code)
	_, page, _ := get(t, srv, "/")
	assert.NotContains(t, hrefs(t, page), "/live")
}
