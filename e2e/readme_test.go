// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeBlock is a shell block of README.md marked to be run: the line before its fence is
// `<!-- readme-test expect=TEXT -->`, and the block must exit 0 and print TEXT.
type readmeBlock struct {
	line   int
	expect string
	script string
}

var readmeMarker = regexp.MustCompile(`^\s*<!-- readme-test(?: expect=(.*?))? -->\s*$`)

func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	var out []readmeBlock
	for i := 0; i < len(lines); i++ {
		m := readmeMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		require.Less(t, i+1, len(lines), "marker at line %d has no block", i+1)
		fence := lines[i+1]
		require.Equal(t, "```sh", strings.TrimSpace(fence), "README.md:%d: a readme-test marker must precede a ```sh block", i+1)
		indent := fence[:len(fence)-len(strings.TrimLeft(fence, " "))]
		var script []string
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			script = append(script, strings.TrimPrefix(lines[j], indent))
		}
		require.Less(t, j, len(lines), "README.md:%d: unterminated block", i+2)
		out = append(out, readmeBlock{line: i + 2, expect: m[1], script: strings.Join(script, "\n")})
		i = j
	}
	return out
}

// collectorBinary returns the built distribution (make build), or skips the test without
// it; in CI (CI set) its absence fails the test.
func collectorBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTEVAL_COLLECTOR_BIN")
	if bin == "" {
		bin = "../bin/otelcol-agenteval"
	}
	abs, err := filepath.Abs(bin)
	require.NoError(t, err)
	if _, err := os.Stat(abs); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: %v (CI runs make build before make test)", abs, err)
		}
		t.Skipf("no built collector at %s: run make build first (or set AGENTEVAL_COLLECTOR_BIN); with CI set this fails instead (.ci/run builds before make test)", abs)
	}
	return abs
}

// The ports config.yaml listens on (README.md, "What you see").
var configPorts = []string{"4317", "4318", "8889", "8890", "8891", "8892", "13133"}

// TestREADMEBlocks runs the built collector as `make run` does (config.yaml, a fresh data
// directory) and every README.md shell block marked readme-test against it: each must exit 0
// and print what its marker expects.
func TestREADMEBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the built collector")
	}
	bin := collectorBinary(t)
	for _, port := range configPorts {
		l, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("port %s is taken: config.yaml needs it: %v", port, err)
			}
			t.Skipf("port %s is taken (a collector already running?): %v", port, err)
		}
		require.NoError(t, l.Close())
	}
	blocks := readmeBlocks(t, "../README.md")
	require.GreaterOrEqual(t, len(blocks), 2, "README.md marks its runnable blocks with readme-test")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", "config.yaml")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "AGENTEVAL_DATA_DIR="+t.TempDir())
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			assert.NoError(t, err, "the collector exits cleanly on SIGTERM")
		case <-time.After(30 * time.Second):
			t.Error("the collector did not exit within 30s of SIGTERM")
			cancel()
			<-exited
		}
		if t.Failed() {
			t.Logf("collector log (last 4 KB):\n%s", tail(logs.String(), 4096))
		}
	}()
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://localhost:13133/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 100*time.Millisecond, "health check on localhost:13133")

	for _, b := range blocks {
		t.Run(fmt.Sprintf("README.md:%d", b.line), func(t *testing.T) {
			bctx, bcancel := context.WithTimeout(ctx, 60*time.Second)
			defer bcancel()
			sh := exec.CommandContext(bctx, "bash", "-euo", "pipefail", "-c", b.script)
			sh.Dir = ".."
			out, err := sh.CombinedOutput()
			require.NoError(t, err, "block at README.md:%d:\n%s\noutput:\n%s", b.line, b.script, out)
			if b.expect != "" {
				assert.Contains(t, string(out), b.expect, "block at README.md:%d", b.line)
			}
		})
	}

	// "What you see": the console shows each evaluation as one short line (the README's
	// receiver example stored sess-refund-001 above) and no analysis payload.
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "evaluate agent_session session=sess-refund-001 revision=1 ")
	}, 10*time.Second, 100*time.Millisecond, "the console shows the stored session")
	// The lines "What you see" shows are the ones printed, messages and all: the turn with
	// the parameter hallucination names its tool and parameter.
	documented := readmeConsoleMessages(t, "../README.md")
	require.Contains(t, documented, "evaluate turn session=sess-refund-001 turn=2 verdict=hallucination confidence=1.00 final=false "+
		"issues=PARAMETER_HALLUCINATION(refund_order.reason),TOOL_ERROR(refund_order)")
	require.Eventually(t, func() bool {
		console := logs.String()
		for _, msg := range documented {
			if !strings.Contains(console, "\t"+msg+"\t") {
				return false
			}
		}
		return true
	}, 10*time.Second, 100*time.Millisecond, "the console shows the lines README.md documents: %q", documented)
	console := logs.String()
	evaluateLines := 0
	for line := range strings.Lines(console) {
		if strings.Contains(line, "\tevaluate ") {
			evaluateLines++
			assert.LessOrEqual(t, len(line), 400, "console line: %s", line)
		}
	}
	assert.Greater(t, evaluateLines, 2)
	assert.NotContains(t, console, "agent_eval.session.", "no analysis payload on the console")
}

// readmeConsoleMessages returns the messages of the agenteval exporter's console lines
// that README.md's "What you see" shows (`…  info  evaluate …  {…}`).
func readmeConsoleMessages(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "\n## What you see\n")
	require.True(t, ok, "README.md has a What you see section")
	section, _, _ := strings.Cut(rest, "\n## ")
	var out []string
	for line := range strings.Lines(section) {
		_, msg, ok := strings.Cut(line, "  info  evaluate ")
		if !ok {
			continue
		}
		msg, _, ok = strings.Cut(msg, "  {")
		require.True(t, ok, "README.md console line without its fields: %s", line)
		out = append(out, "evaluate "+msg)
	}
	require.NotEmpty(t, out, "README.md's What you see shows console lines")
	return out
}

// lockedBuffer is a bytes.Buffer the collector process writes to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	sc := bufio.NewScanner(strings.NewReader(s[len(s)-n:]))
	sc.Scan() // drop the partial first line
	var b strings.Builder
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return b.String()
}
