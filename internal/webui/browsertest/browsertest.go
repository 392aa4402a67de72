// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package browsertest starts headless Chromium for the web UI's browser tests, driven
// through the DevTools protocol by chromedp.
package browsertest // import "github.com/agenteval/agenteval-collector/internal/webui/browsertest"

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumEnv names the environment variable that overrides the browser binary.
const ChromiumEnv = "AGENTEVAL_CHROMIUM"

// candidates are the browser binaries looked up in PATH, Debian's package first.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Chromium returns the browser binary: $AGENTEVAL_CHROMIUM, else the first candidate in
// PATH; "" when none is found.
func Chromium() string {
	if p := os.Getenv(ChromiumEnv); p != "" {
		return p
	}
	for _, name := range candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts a headless browser for t (closed at cleanup) and returns its context,
// bounded by timeout. Without a browser the test fails when CI=true (the CI installs
// Debian's chromium) and is skipped otherwise, saying how to install one.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	bin := Chromium()
	switch verdict, msg := missing(bin, os.Getenv("CI")); verdict {
	case verdictFail:
		t.Fatal(msg)
	case verdictSkip:
		t.Skip(msg)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// Start the browser now, on a context without deadline (chromedp ties the browser's
	// life to the context of the first Run), so that a launch failure is reported as such.
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	ctx, cancelTimeout := context.WithTimeout(browserCtx, timeout)
	t.Cleanup(cancelTimeout)
	return ctx
}

type verdict int

const (
	verdictRun verdict = iota
	verdictSkip
	verdictFail
)

// missing decides what a browser test does with the binary bin ("" when none was
// found) and the CI environment variable: run; fail when CI is "true" (the CI installs
// Debian's chromium, so a missing browser is a broken CI, never a silent skip); skip
// otherwise, saying how to install one.
func missing(bin, ci string) (verdict, string) {
	if bin != "" {
		return verdictRun, ""
	}
	const how = "no Chromium found (install Debian's package: apt-get install chromium, or set " + ChromiumEnv + ")"
	if ci == "true" {
		return verdictFail, "the web UI browser tests must run in CI: " + how
	}
	return verdictSkip, "skipping the browser test: " + how
}
