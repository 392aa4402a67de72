// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/webui/browsertest"
)

// updateScreenshot rewrites docs/ui-session.png (the README's screenshot) from the
// browser test: go test ./internal/webui -run TestBrowser -update-screenshot.
var updateScreenshot = flag.Bool("update-screenshot", false, "write the session page screenshot to docs/ui-session.png")

const browserTimeout = 60 * time.Second

// bodyText returns document.body.innerText (what a reader sees, as laid out).
func bodyText(t *testing.T, ctx context.Context) string {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	require.NoError(t, err)
	return text
}

// links returns the absolute href of every link of the page.
func links(t *testing.T, ctx context.Context) []string {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a[href]"), a => a.href)`))
	require.NoError(t, err)
	return out
}

// TestBrowserSessionsAndSessionPage drives headless Chromium over the UI of a real
// SQLite store holding the golden analyses: the list shows them with their badges, a
// click opens the session page with its scores, recommendations and transcript, every
// link of these pages resolves, the filter form filters, and the agent page shows the
// history. It writes a screenshot of the session page.
func TestBrowserSessionsAndSessionPage(t *testing.T) {
	st, as := goldenStore(t)
	tmpl, err := ParseTraceURLTemplate("http://localhost:16686/trace/{trace_id}")
	require.NoError(t, err)
	srv := newServer(t, Options{Store: st, TraceURL: tmpl, Events: NewBroadcaster(2, 0)})
	ctx := browsertest.New(t, browserTimeout)

	// The list.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("table.sessions")))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.sessions tbody tr").length`))
	require.NoError(t, err)
	assert.Equal(t, len(as), rows)
	text := bodyText(t, ctx)
	for _, want := range []string{"6 sessions, newest first", "refund-12345", "0.87 fair", "reask", "0.50 poor", "✓ completed", "✗ not completed"} {
		assert.Contains(t, text, want)
	}
	checkLinks(t, srv.URL, links(t, ctx))

	// A click opens the session page.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`a.session-link[href="/sessions/refund-12345"]`),
		chromedp.WaitVisible("#transcript"),
	))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/sessions/refund-12345", loc)
	text = bodyText(t, ctx)
	for _, want := range []string{
		"Session refund-12345", "Session scores", "overall_score", "0.87 fair",
		"executor", "planner", "reviewer",
		"Recommendations", "executor: 1 of 1 calls to send_email passed unknown parameter 'priority'",
		"Tool issues", "PARAMETER_HALLUCINATION", "priority",
		"Turns and transcript", "Please process a refund for order #12345, amount $49.99.",
		"Refund R-778 of $49.99 for order #12345 has been issued.", "✗ bad: hallucination",
		"Latency and usage",
	} {
		assert.Contains(t, text, want)
	}
	pageLinks := links(t, ctx)
	assert.Contains(t, pageLinks, "http://localhost:16686/trace/trace-0", "trace link from the template")
	checkLinks(t, srv.URL, pageLinks)

	// The screenshot of the session page (the README's), at a reading width.
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.Greater(t, len(png), 10_000)
	shot := filepath.Join(t.TempDir(), "ui-session.png")
	require.NoError(t, os.WriteFile(shot, png, 0o600))
	t.Logf("session page screenshot: %s", shot)
	if *updateScreenshot {
		require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "ui-session.png"), png, 0o644))
	}

	// An agent link opens its score history.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#agents a[href="/agents/planner"]`), chromedp.WaitVisible("table.history")))
	text = bodyText(t, ctx)
	assert.Contains(t, text, "Agent planner")
	assert.Contains(t, text, "3 sessions")
	checkLinks(t, srv.URL, links(t, ctx))

	// The filter form (plain GET, no script).
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible("form.filters"),
		chromedp.SetValue(`input[name="agent"]`, "planner"),
		chromedp.SetValue(`select[name="task"]`, "no"),
		chromedp.Click(`form.filters button[type="submit"]`),
	))
	require.Eventually(t, func() bool {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		return err == nil && strings.Contains(loc, "agent=planner")
	}, 10*time.Second, 20*time.Millisecond, "the form navigates to the filtered list")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible("#count")))
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a.session-link"), a => a.textContent)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"refund-12345", "errors"}, ids)
}

// TestBrowserTurnClosedLate: in Chromium, a turn that closed late is shown where it
// came in the conversation, anchored by its turn_index, with its mark and the mark's
// explanation, and the page's links resolve.
func TestBrowserTurnClosedLate(t *testing.T) {
	srv := newServer(t, Options{Store: storeOf(t, []*evaluation.Analysis{lateTurnAnalysis(t)})})
	ctx := browsertest.New(t, browserTimeout)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/sessions/late-turn"), chromedp.WaitVisible("#transcript")))
	order, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("article.turn"), a => a.id)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"turn-0", "turn-2", "turn-1"}, order)
	marked, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("article.turn .mark.late"), m => m.closest("article").id + ": " + m.textContent + " | " + m.title)`))
	require.NoError(t, err)
	require.Len(t, marked, 1)
	assert.Contains(t, marked[0], "turn-2: ◷ closed late | This turn closed after a turn that came later in the conversation")
	visible, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const r = document.querySelector("#turn-2 .mark.late").getBoundingClientRect(); return r.width > 0 && r.height > 0; })()`))
	require.NoError(t, err)
	assert.True(t, visible, "the mark is rendered")
	checkLinks(t, srv.URL, links(t, ctx))

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	shot := filepath.Join(t.TempDir(), "ui-late-turn.png")
	require.NoError(t, os.WriteFile(shot, png, 0o600))
	t.Logf("late-turn session page screenshot: %s", shot)
}

// TestBrowserLiveView opens the live view, then publishes a turn and a session: both
// appear without a reload.
func TestBrowserLiveView(t *testing.T) {
	st, as := goldenStore(t)
	events := NewBroadcaster(2, 0)
	srv := newServer(t, Options{Store: st, Events: events})
	t.Cleanup(events.Close) // ends the stream before srv.Close waits for it
	ctx := browsertest.New(t, browserTimeout)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/live"), chromedp.WaitVisible("#live-table")))
	require.Eventually(t, func() bool { return events.Subscribers() == 1 }, 10*time.Second, 20*time.Millisecond, "the page opened the stream")

	tr := as[len(as)-1].TurnResults[2] // refund-12345, turn 2: hallucination
	events.PublishTurn(&tr)
	events.PublishSession(as[len(as)-1])
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`#live-events tr[data-kind="turn"]`),
		chromedp.WaitVisible(`#live-events tr[data-kind="session"]`),
	))
	turnRow, err := chromedp.Run(ctx, chromedp.Text(`#live-events tr[data-kind="turn"]`))
	require.NoError(t, err)
	assert.Contains(t, turnRow, "turn 3 (final verdict)", "turn_index 2 is shown as turn 3")
	assert.Contains(t, turnRow, "refund-12345")
	assert.Contains(t, turnRow, "✗ bad: hallucination")
	sessionRow, err := chromedp.Run(ctx, chromedp.Text(`#live-events tr[data-kind="session"]`))
	require.NoError(t, err)
	assert.Contains(t, sessionRow, "0.87 fair")
	assert.Contains(t, sessionRow, "✗ task not completed")
	// Newest on top: the session row precedes the turn row.
	first, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#live-events tr").dataset.kind`))
	require.NoError(t, err)
	assert.Equal(t, "session", first)
}

// checkLinks GETs every link of origin (fragments removed) and expects 200; the JSON API
// is not mounted on this test server (the exporter's tests follow those links).
func checkLinks(t *testing.T, origin string, hrefs []string) {
	t.Helper()
	for _, h := range hrefs {
		if !strings.HasPrefix(h, origin+"/") || strings.HasPrefix(h, origin+"/api/") {
			continue
		}
		h, _, _ = strings.Cut(h, "#")
		resp, err := http.Get(h)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusOK, resp.StatusCode, h)
	}
}

// openLiveView serves a UI without sessions fed by events, opens its live view in
// Chromium and waits until the page holds a stream.
func openLiveView(t *testing.T, events *Broadcaster) context.Context {
	t.Helper()
	srv := newServer(t, Options{Store: failingStore{}, Events: events})
	t.Cleanup(events.Close) // ends the stream before srv.Close waits for it
	ctx := browsertest.New(t, browserTimeout)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/live"), chromedp.WaitVisible("#live-table")))
	require.Eventually(t, func() bool { return events.Subscribers() == 1 }, 10*time.Second, 20*time.Millisecond, "the page opened the stream")
	return ctx
}

// TestBrowserLiveViewBurst: a long session's batch published at once (60 turns, a
// provisional and a final event each, then the session event) shows every row, the
// session's included, and the stream stays connected. Before, the stream was closed
// after 64 events and the page silently lost the rest.
func TestBrowserLiveViewBurst(t *testing.T) {
	events := NewBroadcaster(2, 0)
	ctx := openLiveView(t, events)

	const turns = 60
	for i := range turns {
		events.PublishTurn(&evaluation.TurnResult{SessionID: "long", TurnIndex: i})
		events.PublishTurn(&evaluation.TurnResult{SessionID: "long", TurnIndex: i, Final: true})
	}
	events.PublishSession(&evaluation.Analysis{SessionID: "long"})
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#live-events tr[data-kind="session"]`)))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#live-events tr").length`))
	require.NoError(t, err)
	assert.Equal(t, 2*turns+1, rows)
	status, err := chromedp.Run(ctx, chromedp.Text("#live-status"))
	require.NoError(t, err)
	assert.Equal(t, "Connected; waiting for evaluations.", status)
	assert.Equal(t, 1, events.Subscribers(), "the stream was not dropped")
}

// TestBrowserLiveViewGap: a "gap" event (events the server dropped for this page) makes
// the status say how many were missed and link to the sessions list.
func TestBrowserLiveViewGap(t *testing.T) {
	ui, err := New(Options{Store: failingStore{}, Events: NewBroadcaster(1, 0)})
	require.NoError(t, err)
	mux := http.NewServeMux()
	ui.Register(mux)
	release := make(chan struct{})
	// A stream that sends a turn and two gaps, as a page whose queue filled twice sees.
	streamMux := http.NewServeMux()
	streamMux.Handle("/", mux)
	streamMux.HandleFunc("GET "+PathEvents, func(w http.ResponseWriter, _ *http.Request) {
		setStreamHeaders(w.Header())
		_, _ = io.WriteString(w, "retry: 3000\n\n"+
			`event: turn`+"\n"+`data: {"session_id":"s","turn_index":0,"final":true,"is_bad":false,"detection_type":"","confidence":0.9,"reason":"","latency_ms":1}`+"\n\n"+
			"event: gap\ndata: {\"missed\":12}\n\nevent: gap\ndata: {\"missed\":1}\n\n")
		w.(http.Flusher).Flush()
		<-release
	})
	srv := httptest.NewServer(streamMux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: srv.Close waits for the stream
	ctx := browsertest.New(t, browserTimeout)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/live"), chromedp.WaitVisible(`#live-events tr[data-kind="turn"]`)))
	require.Eventually(t, func() bool {
		status, err := chromedp.Run(ctx, chromedp.Text("#live-status"))
		return err == nil && status == "13 events missed (this page fell behind); reload the page or the sessions list."
	}, 10*time.Second, 20*time.Millisecond)
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#live-status a").href`))
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/", href)
}

// TestBrowserLiveViewRetriesAfter503: a page that gets 503 for its stream (every slot of
// ui.max_event_clients taken) says so and opens a new stream after the server's
// Retry-After (10 s), once a slot is free. Before, EventSource gave up on the 503 and the
// page said "reconnecting…" forever.
func TestBrowserLiveViewRetriesAfter503(t *testing.T) {
	events := NewBroadcaster(1, 0)
	srv := newServer(t, Options{Store: failingStore{}, Events: events})
	t.Cleanup(events.Close) // ends the stream before srv.Close waits for it
	other, err := events.Subscribe()
	require.NoError(t, err)
	ctx := browsertest.New(t, browserTimeout)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/live"), chromedp.WaitVisible("#live-table")))
	statusIs := func(want string) func() bool {
		return func() bool {
			status, err := chromedp.Run(ctx, chromedp.Text("#live-status"))
			return err == nil && status == want
		}
	}
	require.Eventually(t, statusIs("Disconnected: the server refused the event stream (it may have too many viewers); retrying in 10 s."),
		10*time.Second, 20*time.Millisecond)

	events.Unsubscribe(other) // the slot is free
	require.Eventually(t, func() bool { return events.Subscribers() == 1 }, 15*time.Second, 50*time.Millisecond, "the page opened a new stream")
	require.Eventually(t, statusIs("Connected; waiting for evaluations."), 5*time.Second, 20*time.Millisecond)
	events.PublishSession(&evaluation.Analysis{SessionID: "after-503"})
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#live-events tr[data-session="after-503"]`)))
}

// TestBrowserLiveBadgesMatchPages: the live view's badge prints the same number and band
// as the pages' (funcs.go) at every band edge: the band of the printed number.
func TestBrowserLiveBadgesMatchPages(t *testing.T) {
	events := NewBroadcaster(1, 0)
	ctx := openLiveView(t, events)

	edges := []float64{1, 0.9, 0.8999, 0.8996, 0.895, 0.8949, 0.7, 0.6999, 0.6995, 0.695, 0.6949, 0}
	for i, v := range edges {
		events.PublishSession(&evaluation.Analysis{SessionID: fmt.Sprintf("s%d", i), OverallScore: &v})
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(fmt.Sprintf(`#live-events tr[data-session="s%d"]`, len(edges)-1))))
	for i, v := range edges {
		badge, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(
			`(b => [b.textContent, b.className])(document.querySelector('#live-events tr[data-session="s%d"] .badge'))`, i)))
		require.NoError(t, err)
		assert.Equal(t, []string{score(&v) + " " + band(&v), "badge " + band(&v)}, badge, "overall score %v", v)
	}
}

// TestBrowserLiveViewProvisional: a turn closed without its final verdict (final false)
// and found bad by nothing reads "provisional", not "✓ good, confidence 0.00"; a bad
// non-final turn says it is provisional; a final rdm verdict carries the meaning of rdm
// from the page's legend as its title.
func TestBrowserLiveViewProvisional(t *testing.T) {
	events := NewBroadcaster(1, 0)
	ctx := openLiveView(t, events)
	legend, err := chromedp.Run(ctx, chromedp.Text("#detection-legend"))
	require.NoError(t, err)
	assert.Contains(t, legend, "rdm, response dissatisfaction")
	assert.Contains(t, legend, "ccm, conversation continuity")

	events.PublishTurn(&evaluation.TurnResult{SessionID: "s", TurnIndex: 0})
	events.PublishTurn(&evaluation.TurnResult{SessionID: "s", TurnIndex: 1, IsBad: true,
		DetectionType: evaluation.DetectionHallucination, Confidence: 0.8})
	events.PublishTurn(&evaluation.TurnResult{SessionID: "s", TurnIndex: 0, Final: true, IsBad: true,
		DetectionType: evaluation.DetectionRDM, Confidence: 0.9})
	// A type this page does not know (a newer collector's), even one that is no CSS
	// selector, is shown as it is.
	events.PublishTurn(&evaluation.TurnResult{SessionID: "s", TurnIndex: 1, Final: true, IsBad: true,
		DetectionType: `new"]type`, Confidence: 0.5})
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#live-events tr:nth-child(4)`)))
	verdicts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#live-events td.verdict"), td => td.textContent).reverse()`))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"provisional: final verdict at the next user message",
		"✗ bad: hallucination (provisional), confidence 0.80",
		"✗ bad: rdm, confidence 0.90",
		`✗ bad: new"]type, confidence 0.50`,
	}, verdicts)
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#live-events tr:nth-child(2) td.verdict abbr").title`))
	require.NoError(t, err)
	assert.Equal(t, detectionMeaning(evaluation.DetectionRDM), title)
}
