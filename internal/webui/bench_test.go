// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/webui/browsertest"
)

// benchSessions is the store size of the list benchmark: the UI must stay usable at
// 1,000 sessions (the list renders in under 300 ms).
const benchSessions = 1000

// benchStore opens a SQLite store holding benchSessions sessions: copies of the golden
// analyses, one minute apart.
func benchStore(b *testing.B) store.Store {
	b.Helper()
	st, err := store.Open(context.Background(), store.DriverSQLite, filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, st.Close()) })
	golden := goldenAnalyses(b)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range benchSessions {
		a := *golden[i%len(golden)]
		a.SessionID = fmt.Sprintf("%s-%04d", a.SessionID, i)
		a.StartedAt, a.EndedAt = base.Add(time.Duration(i)*time.Minute), base.Add(time.Duration(i)*time.Minute+90*time.Second)
		require.NoError(b, st.SaveAnalysis(context.Background(), &a))
	}
	return st
}

// BenchmarkSessionsList renders GET /?limit=N over a real SQLite store holding 1,000
// sessions: the store query, the agents of every session, and the template. ms/op is
// the time to the last byte of the page (the target is under 300 ms at 1,000 rows).
func BenchmarkSessionsList(b *testing.B) {
	ui, err := New(Options{Store: benchStore(b)})
	require.NoError(b, err)
	mux := http.NewServeMux()
	ui.Register(mux)
	for _, limit := range []int{100, benchSessions} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/?limit=%d", limit), http.NoBody)
			var page string
			for b.Loop() {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
				page = rec.Body.String()
			}
			if rows := strings.Count(page, `class="session-link"`); rows != limit {
				b.Fatalf("%d rows, want %d", rows, limit)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
			b.ReportMetric(float64(len(page))/1024, "KiB/page")
		})
	}
}

// BenchmarkBrowserSessionsList loads the list of a store holding 1,000 sessions in
// headless Chromium, at the default limit (100 rows) and at 1,000 rows, and reports the
// browser's own navigation timing: load-ms is from the request to the load event
// (server, transfer, parse, style and layout); server-ms to the response's last byte.
func BenchmarkBrowserSessionsList(b *testing.B) {
	srv := httptest.NewServer(func() http.Handler {
		ui, err := New(Options{Store: benchStore(b)})
		require.NoError(b, err)
		mux := http.NewServeMux()
		ui.Register(mux)
		return mux
	}())
	b.Cleanup(srv.Close)
	ctx := browsertest.New(b, 10*time.Minute)
	type timing struct {
		Load   float64 `json:"load"`
		Server float64 `json:"server"`
	}
	for _, limit := range []int{defaultListLimit, benchSessions} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			var sum timing
			for b.Loop() {
				require.NoError(b, chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/?limit=%d", srv.URL, limit))))
				t, err := chromedp.Run(ctx, chromedp.Evaluate[timing](`(() => {
					const n = performance.getEntriesByType("navigation")[0];
					return {load: n.loadEventEnd - n.startTime, server: n.responseEnd - n.startTime};
				})()`))
				require.NoError(b, err)
				sum.Load += t.Load
				sum.Server += t.Server
			}
			rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("a.session-link").length`))
			require.NoError(b, err)
			require.Equal(b, limit, rows)
			b.ReportMetric(sum.Load/float64(b.N), "load-ms")
			b.ReportMetric(sum.Server/float64(b.N), "server-ms")
		})
	}
}
