// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/webui/browsertest"
)

// TestBrowserLiveViewThroughTheExporter opens the live view of a running exporter in
// headless Chromium, then exports evaluation spans: the turn evaluated after the page
// was opened appears, then its stored session, whose link opens the session page with
// its transcript; every link of that page (the JSON API included) resolves.
func TestBrowserLiveViewThroughTheExporter(t *testing.T) {
	cfg := testConfig()
	cfg.UI.TraceURLTemplate = "http://localhost:16686/trace/{trace_id}"
	x := newTestExporter(t, cfg, nil)
	ctx := browsertest.New(t, 60*time.Second)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(x.apiURL("/live")), chromedp.WaitVisible("#live-table")))
	require.Eventually(t, func() bool { return x.exp.events.Subscribers() == 1 }, 10*time.Second, 20*time.Millisecond, "the page opened the stream")

	tr := turn0(true)
	tr.IsBad, tr.DetectionType, tr.Confidence, tr.Reason = true, "rdm", 0.9, `the next user message corrects the answer ("no, I meant")`
	tr.UserMessage = "Refund order 1234 please"
	require.NoError(t, x.consume(newSpanBuilder(t).appSpan().turn(tr).traces()))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#live-events tr[data-kind="turn"]`)))
	row, err := chromedp.Run(ctx, chromedp.Text(`#live-events tr[data-kind="turn"]`))
	require.NoError(t, err)
	for _, want := range []string{"turn 1 (final verdict)", "sess-checkout", "✗ bad: rdm, confidence 0.90", "Refund order 1234 please", "no, I meant"} {
		assert.Contains(t, row, want)
	}

	a := analysisCheckout()
	a.TurnResults[0].UserMessage, a.TurnResults[0].FinalResponse = "Refund order 1234 please", "Refund issued for order 1234."
	require.NoError(t, x.consume(newSpanBuilder(t).session(a).traces()))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`#live-events tr[data-kind="session"]`),
		chromedp.Click(`#live-events tr[data-kind="session"] a`),
		chromedp.WaitVisible("#transcript"),
	))
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	require.NoError(t, err)
	for _, want := range []string{"Session sess-checkout", "Refund order 1234 please", "Refund issued for order 1234.", "reason"} {
		assert.Contains(t, text, want)
	}
	hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a[href]"), a => a.href)`))
	require.NoError(t, err)
	origin := x.apiURL("")
	assert.Contains(t, hrefs, origin+"/api/v1/agent_sessions/sess-checkout")
	assert.Contains(t, hrefs, "http://localhost:16686/trace/"+traceTurn0.String())
	for _, h := range hrefs {
		if !strings.HasPrefix(h, origin+"/") || strings.HasPrefix(h, origin+"/api/v1/events") {
			continue
		}
		h, _, _ = strings.Cut(h, "#")
		code, _ := httpGet(t, h, "")
		assert.Equal(t, http.StatusOK, code, h)
	}
}

// TestBrowserLiveViewStartsWhenTheStoreComesUp: a user opens the live view while the
// result store cannot be opened (the collector started during a database outage) and
// sees the 503 page; once the store opens, the same tab shows the live view without
// anyone reloading it, its stream is open, and an evaluation exported then appears.
func TestBrowserLiveViewStartsWhenTheStoreComesUp(t *testing.T) {
	var up atomic.Bool
	x := newTestExporter(t, testConfig(), func(e *agentEvalExporter) {
		e.connectBackoff = 50 * time.Millisecond
		e.openStore = func(ctx context.Context, driver, dsn string) (store.Store, error) {
			if !up.Load() {
				return nil, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
			}
			return store.Open(ctx, driver, dsn)
		}
	})
	ctx := browsertest.New(t, 60*time.Second)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(x.apiURL("/live")), chromedp.WaitVisible(".error")))
	text, err := chromedp.Run(ctx, chromedp.Text(".error"))
	require.NoError(t, err)
	assert.Contains(t, text, "The result store is not reachable yet")
	screenshot(ctx, t, "live-store-down.png")

	up.Store(true)
	require.Eventually(t, x.exp.isReady, 10*time.Second, 10*time.Millisecond, "the store opened")
	waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(waitCtx, chromedp.WaitVisible("#live-table")), "the tab opened during the outage shows the live view once the store is up")
	require.Eventually(t, func() bool { return x.exp.events.Subscribers() == 1 }, 10*time.Second, 20*time.Millisecond, "the page opened the stream")

	require.NoError(t, x.consume(newSpanBuilder(t).appSpan().turn(turn0(true)).traces()))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#live-events tr[data-kind="turn"]`)))
	screenshot(ctx, t, "live-store-up.png")
}

// screenshot saves the page as name under $AGENTEVAL_SCREENSHOTS, when set.
func screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("AGENTEVAL_SCREENSHOTS")
	if dir == "" {
		return
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), shot, 0o600))
}
