// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/webui/browsertest"
)

// layoutShots, when set, is the directory TestBrowserLayout writes its screenshots to
// (one per page and width), to look at: go test ./internal/webui -run TestBrowserLayout
// -layout-shots /tmp/shots. Without it they go to the test's temporary directory.
var layoutShots = flag.String("layout-shots", "", "directory for the layout test's screenshots")

// Ids and texts that broke the layout: an id as long as the real ones of the sample
// agents, one of 150 characters, and text without a place to break a line.
var (
	layoutMidID  = "sess-openai-agents-unknowntoolraise-0001"
	layoutLongID = "sess-" + strings.Repeat("verylongsessionidwithoutbreaks", 5)[:145]
	layoutAgent  = "refund-agent-" + strings.Repeat("withaverylongname", 4)
	// layoutBlob is unbreakable issue text, like a tool's JSON error.
	layoutBlob = `{"tool_name":"issue_refund","error":"Tool` + strings.Repeat("_raised_an_exception_while_processing", 6) + `"}`
	// layoutCut is a user message cut at max_text_bytes mid-word.
	layoutCut = "Please " + strings.Repeat("refund", 80) + "andthenconfirmbyem"
)

// layoutAnalyses are the golden analyses plus two built from refund-12345 that carry
// what broke the layout: long session ids, a long agent id, unbreakable tool issue and
// recommendation text, and a turn whose texts were cut (anomalies truncated_text and
// missing_parent).
func layoutAnalyses(t *testing.T) []*evaluation.Analysis {
	t.Helper()
	as := goldenAnalyses(t)
	var refund *evaluation.Analysis
	for _, a := range as {
		if a.SessionID == "refund-12345" {
			refund = a
		}
	}
	require.NotNil(t, refund)
	clone := func(id string) *evaluation.Analysis {
		data, err := json.Marshal(refund)
		require.NoError(t, err)
		var c evaluation.Analysis
		require.NoError(t, json.Unmarshal(data, &c))
		c.SessionID = id
		for i := range c.TurnResults {
			c.TurnResults[i].SessionID = id
		}
		return &c
	}
	mid := clone(layoutMidID)
	long := clone(layoutLongID)
	scores := long.PerAgentScores["executor"]
	scores.Issues = append(scores.Issues, layoutBlob)
	long.PerAgentScores[layoutAgent] = scores
	long.ToolIssues[0].AgentID = layoutAgent
	long.ToolIssues[0].Message = layoutBlob
	long.Recommendations[0].Message = layoutAgent + ": " + layoutBlob
	tr := &long.TurnResults[0]
	tr.UserMessage = layoutCut
	tr.FinalResponse = "Refund R-778 " + strings.Repeat("issuedandconfirmed", 30)
	tr.Anomalies = []string{session.AnomalyMissingParent, session.AnomalyTruncatedText}
	tr.Interactions[0].AgentID = layoutAgent
	return append(as, mid, long, lateTurnAnalysis(t))
}

// layoutProblems is a script that lists what is wrong with the layout of the page:
// the page scrolls sideways; a table cell's content overflows the cell (and so runs
// into its neighbour); in a sessions list row, the session id and the end time overlap
// or leave their cells; a nav link breaks over two lines. A table in a .scroll wrapper
// may scroll inside it.
const layoutProblems = `(() => {
  const out = [];
  const de = document.documentElement;
  if (de.scrollWidth > de.clientWidth) out.push("page scrolls sideways: scrollWidth " + de.scrollWidth + " > " + de.clientWidth);
  const name = e => (e.textContent || "").trim().replace(/\s+/g, " ").slice(0, 50);
  // A visually hidden table head (the narrow layouts label each cell) is not checked.
  const hidden = e => { for (; e; e = e.parentElement) if (getComputedStyle(e).clipPath !== "none") return true; return false; };
  for (const c of document.querySelectorAll("td, th")) {
    if (hidden(c)) continue;
    if (c.scrollWidth > c.clientWidth + 1) out.push("cell content overflows by " + (c.scrollWidth - c.clientWidth) + "px: " + name(c));
  }
  const inside = (r, box) => r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
  const meet = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  for (const tr of document.querySelectorAll("table.sessions tbody tr")) {
    const link = tr.querySelector("a.session-link"), time = tr.querySelector("time");
    if (!link || !time) { out.push("row without id or time"); continue; }
    const lr = Array.from(link.getClientRects()), tt = Array.from(time.getClientRects());
    const lc = link.closest("td").getBoundingClientRect(), tc = time.closest("td").getBoundingClientRect();
    if (meet(lc, tc)) out.push("id and ended cells overlap: " + name(link));
    for (const r of lr) {
      if (!inside(r, lc)) out.push("id leaves its cell: " + name(link));
      for (const s of tt) if (meet(r, s)) out.push("id overlaps the end time: " + name(link));
    }
    for (const s of tt) if (!inside(s, tc)) out.push("end time leaves its cell: " + name(link));
  }
  for (const a of document.querySelectorAll(".top nav a")) {
    if (a.getClientRects().length > 1) out.push("nav link breaks over lines: " + name(a));
  }
  return out;
})()`

// TestBrowserLayout loads the sessions list, a session page with a 150-character id,
// unbreakable text and cut text, and the page of an agent with unbreakable issue text
// at 1280 and 390 px wide: no page scrolls sideways, no cell's content runs out of it,
// the session id and end time of a list row keep apart, the transcript's text column
// keeps most of the width, and the turn's anomalies and the mark on cut text show.
func TestBrowserLayout(t *testing.T) {
	st := storeOf(t, layoutAnalyses(t))
	srv := newServer(t, Options{Store: st, Events: NewBroadcaster(2, 0)})
	ctx := browsertest.New(t, 2*browserTimeout)
	dir := *layoutShots
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))

	pages := []struct{ name, path, ready string }{
		{"list", "/", "table.sessions"},
		{"session-long", sessionURL(layoutLongID), "#transcript"},
		{"session-mid", sessionURL(layoutMidID), "#transcript"},
		{"session-late-turn", sessionURL("late-turn"), "#transcript"},
		{"agent-long", agentURL(layoutAgent), "table.history"},
		{"live", PathLive, "#live-table"},
	}
	for _, width := range []int64{1280, 390} {
		for _, p := range pages {
			t.Run(fmt.Sprintf("%s-%d", p.name, width), func(t *testing.T) {
				require.NoError(t, chromedp.Do(ctx,
					chromedp.EmulateViewport(width, 900),
					chromedp.Navigate(srv.URL+p.path),
					chromedp.WaitVisible(p.ready),
					// The closed <details> hold explanations and issues: open them, so
					// that their text is laid out too.
					chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("details").forEach(d => d.open = true)`),
				))
				shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				require.NoError(t, err)
				file := filepath.Join(dir, fmt.Sprintf("%s-%d.png", p.name, width))
				require.NoError(t, os.WriteFile(file, shot, 0o600))
				t.Logf("screenshot: %s", file)

				problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](layoutProblems))
				require.NoError(t, err)
				assert.Empty(t, problems)

				// The icon is linked and served (no favicon.ico 404 on every page).
				icon, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('link[rel="icon"]')?.href ?? ""`))
				require.NoError(t, err)
				require.NotEmpty(t, icon, "the page links an icon")
				resp, err := http.Get(icon)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				assert.Equal(t, http.StatusOK, resp.StatusCode, icon)
			})
		}
	}

	// The transcript's text column keeps most of the width (it had 75 px at 390 px
	// beside a fixed label column), and a turn's anomalies and cut text show.
	for _, width := range []int64{1280, 390} {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(srv.URL+sessionURL(layoutLongID)),
			chromedp.WaitVisible("#turn-0"),
		))
		ratio, err := chromedp.Run(ctx, chromedp.Evaluate[float64](
			`document.querySelector("#turn-0 .msg.user .text").clientWidth / document.documentElement.clientWidth`))
		require.NoError(t, err)
		assert.Greater(t, ratio, 0.6, "at %d px the transcript text has %.0f%% of the width", width, 100*ratio)

		anomalies, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("#turn-0 .anomaly"), e => e.offsetWidth > 0 ? e.dataset.anomaly + ": " + e.innerText : "hidden")`))
		require.NoError(t, err)
		assert.Equal(t, []string{"missing_parent: ⚠ missing parent span", "truncated_text: ✂ text cut at max_text_bytes"}, anomalies)
		cuts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("#transcript .cut"), e => e.closest(".msg").className + " | " + e.innerText + " | " + e.closest(".text").innerText.slice(-66))`))
		require.NoError(t, err)
		require.Len(t, cuts, 2, "the user message and the final response of turn 1 are marked, nothing else")
		assert.Equal(t, "msg user | … (may be cut at the collector's max_text_bytes) | andthenconfirmbyem… (may be cut at the collector's max_text_bytes)", cuts[0])
		assert.True(t, strings.HasPrefix(cuts[1], "msg assistant | … (may be cut"), cuts[1])
	}
}
