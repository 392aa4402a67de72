// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// pipeline is one collector configuration under test.
type pipeline struct {
	Name string
	// Processors and Exporters are the traces pipeline's, besides the OTLP exporter to the
	// sink that every pipeline ends with.
	Processors []string
	Exporters  []string
	// Evaluates marks the pipelines that emit evaluation spans.
	Evaluates bool
	// ContinuationDriver, when set, is the agentsession processor's continuation.driver in
	// this pipeline whatever -continuation-driver says (collectorParams.ContinuationDriver).
	ContinuationDriver string
}

// pipelines are the configurations compared, the first being the reference. shipped is
// agentsession+agenteval as config.yaml ships it: the processor's continuation state in
// the exporter's SQLite file (docs/decisions/sessions.md §4, performance.md §8.44).
var pipelines = []pipeline{
	{Name: "passthrough", Processors: []string{"batch"}},
	{Name: "groupbytrace", Processors: []string{"groupbytrace", "batch"}},
	{Name: "agentsession", Processors: []string{"agentsession", "batch"}, Evaluates: true},
	{Name: "agentsession+agenteval", Processors: []string{"agentsession", "batch"}, Exporters: []string{"agenteval"}, Evaluates: true},
	{Name: "shipped", Processors: []string{"agentsession", "batch"}, Exporters: []string{"agenteval"}, Evaluates: true, ContinuationDriver: "sqlite"},
}

func pipelineByName(name string) (pipeline, bool) {
	for _, p := range pipelines {
		if p.Name == name {
			return p, true
		}
	}
	return pipeline{}, false
}

// ports are the loopback ports one collector run uses.
type ports struct {
	OTLP, Sink, Health, Pprof, Prometheus, API int
}

func portsFrom(base int) ports {
	return ports{OTLP: base, Sink: base + 1, Health: base + 2, Pprof: base + 3, Prometheus: base + 4, API: base + 5}
}

// collectorParams are the settings shared by every pipeline.
type collectorParams struct {
	// TurnSettle is the agentsession processor's turn_settle: a turn closes this long
	// after its root span arrived with no new span.
	TurnSettle time.Duration
	// GroupWait is groupbytrace's wait_duration, counted from a trace's first span: it
	// must cover the time a turn's spans take to arrive, or the trace is released in
	// pieces.
	GroupWait time.Duration
	// SessionTimeout is the agentsession processor's session_timeout.
	SessionTimeout time.Duration
	// MaxSessions is the agentsession processor's max_sessions (0: 1,000,000): the open
	// sessions it keeps.
	MaxSessions int
	// ContinuationRecords is the agentsession processor's continuation.max_records, the
	// turn records its in-memory continuation state keeps (0: the processor's default).
	ContinuationRecords int
	// ContinuationDriver is the agentsession processor's continuation.driver: "" (in
	// memory) or "sqlite", the SQLite file in DataDir that the agenteval exporter stores
	// into (config.yaml's default: docs/decisions/sessions.md §4).
	ContinuationDriver string
	// DataDir holds the SQLite store of the agenteval exporter.
	DataDir string
	// Batching says where every pipeline batches its output, alike in each pipeline so
	// that the CPU ratio to pass-through stays fair: batchingProcessor (the default) is
	// the `batch` processor of the pipeline's Processors; batchingExporter leaves it out
	// and batches in the OTLP exporter's sending queue instead (exporterhelper's
	// `sending_queue::batch`).
	Batching string
	// BatchTimeout is the batch processor's `timeout`, or the sending queue batch's
	// `flush_timeout` (0: the component's default, 200ms for both).
	BatchTimeout time.Duration
	// Handoff names the agenteval_handoff extension in the agentsession processor's and
	// the agenteval exporter's handoff setting, in a pipeline that has both
	// (docs/decisions/performance.md §8.41).
	Handoff bool
}

// storePath is the SQLite file of the agenteval exporter's store (and of the
// continuation store with ContinuationDriver sqlite).
func (cp collectorParams) storePath() string { return filepath.Join(cp.DataDir, "agenteval.db") }

// continuationDriver is the agentsession processor's continuation.driver in p.
func (cp collectorParams) continuationDriver(p pipeline) string {
	return cmp.Or(p.ContinuationDriver, cp.ContinuationDriver)
}

// handoff reports whether p runs with the agenteval_handoff extension.
func (cp collectorParams) handoff(p pipeline) bool {
	return cp.Handoff && slices.Contains(p.Processors, "agentsession") && slices.Contains(p.Exporters, "agenteval")
}

// Where the pipelines batch their output (collectorParams.Batching).
const (
	batchingProcessor = "processor"
	batchingExporter  = "exporter"
)

// processors are p's processors as run with cp: without the batch processor when the
// exporter batches.
func (cp collectorParams) processors(p pipeline) []string {
	if cp.Batching != batchingExporter {
		return p.Processors
	}
	var out []string
	for _, proc := range p.Processors {
		if proc != "batch" {
			out = append(out, proc)
		}
	}
	return out
}

// renderConfig returns the collector configuration of p: OTLP/gRPC in, p's processors,
// OTLP/gRPC out to the sink (and p's other exporters), health_check and pprof extensions,
// the collector's own metrics off. cp.Batching and cp.BatchTimeout say where and how long
// the output is batched.
func renderConfig(p pipeline, pt ports, cp collectorParams) string {
	var b strings.Builder
	fmt.Fprintf(&b, `receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
        max_recv_msg_size_mib: 64
`, pt.OTLP)
	procs := cp.processors(p)
	if len(procs) > 0 {
		b.WriteString("processors:\n")
	}
	for _, proc := range procs {
		switch proc {
		case "batch":
			b.WriteString("  batch:\n")
			if cp.BatchTimeout > 0 {
				fmt.Fprintf(&b, "    timeout: %s\n", cp.BatchTimeout)
			}
		case "groupbytrace":
			fmt.Fprintf(&b, "  groupbytrace:\n    wait_duration: %s\n", cp.GroupWait)
		case "agentsession":
			fmt.Fprintf(&b, "  agentsession:\n    turn_settle: %s\n    session_timeout: %s\n    max_sessions: %d\n", cp.TurnSettle, cp.SessionTimeout, cmp.Or(cp.MaxSessions, 1000000))
			driver := cp.continuationDriver(p)
			if cp.ContinuationRecords > 0 || driver != "" {
				b.WriteString("    continuation:\n")
			}
			if cp.ContinuationRecords > 0 {
				fmt.Fprintf(&b, "      max_records: %d\n", cp.ContinuationRecords)
			}
			if driver != "" {
				fmt.Fprintf(&b, "      driver: %s\n      dsn: %s\n", driver, cp.storePath())
			}
			if cp.handoff(p) {
				b.WriteString("    handoff: agenteval_handoff\n")
			}
		}
	}
	fmt.Fprintf(&b, `exporters:
  otlp_grpc:
    endpoint: 127.0.0.1:%d
    tls:
      insecure: true
`, pt.Sink)
	if cp.Batching == batchingExporter {
		b.WriteString("    sending_queue:\n      batch:\n")
		if cp.BatchTimeout > 0 {
			fmt.Fprintf(&b, "        flush_timeout: %s\n", cp.BatchTimeout)
		}
	}
	exporters := []string{"otlp_grpc"}
	for _, exp := range p.Exporters {
		if exp == "agenteval" {
			fmt.Fprintf(&b, `  agenteval:
    prometheus:
      endpoint: 127.0.0.1:%d
    api:
      endpoint: 127.0.0.1:%d
    store:
      driver: sqlite
      dsn: %s
`, pt.Prometheus, pt.API, cp.storePath())
			if cp.handoff(p) {
				b.WriteString("    handoff: agenteval_handoff\n")
			}
		}
		exporters = append(exporters, exp)
	}
	extensions := "health_check, pprof"
	b.WriteString("extensions:\n")
	if cp.handoff(p) {
		b.WriteString("  agenteval_handoff:\n")
		extensions += ", agenteval_handoff"
	}
	fmt.Fprintf(&b, `  health_check:
    endpoint: 127.0.0.1:%d
  pprof:
    endpoint: 127.0.0.1:%d
service:
  extensions: [%s]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [%s]
      exporters: [%s]
`, pt.Health, pt.Pprof, extensions, strings.Join(procs, ", "), strings.Join(exporters, ", "))
	return b.String()
}

// collectorProcess is a collector run as a child process (the testbed's child process
// collector).
type collectorProcess struct {
	cmd    *exec.Cmd
	log    *os.File
	health string
	done   chan error
}

// startCollector runs bin with config (a file in dir) and waits until its health check
// answers.
func startCollector(ctx context.Context, bin, dir, config string, pt ports) (*collectorProcess, error) {
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	c := &collectorProcess{cmd: cmd, log: logf, health: fmt.Sprintf("http://127.0.0.1:%d/", pt.Health), done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	if err := c.waitHealthy(ctx, 60*time.Second); err != nil {
		_ = c.Stop(5 * time.Second)
		return nil, fmt.Errorf("%w (log: %s)", err, logf.Name())
	}
	return c, nil
}

func (c *collectorProcess) Pid() int { return c.cmd.Process.Pid }

func (c *collectorProcess) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-c.done:
			c.done <- err
			return fmt.Errorf("collector exited before it was ready: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(c.health)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
	return fmt.Errorf("collector not healthy at %s after %s", c.health, timeout)
}

// Exited reports whether the process has ended.
func (c *collectorProcess) Exited() bool {
	select {
	case err := <-c.done:
		c.done <- err
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM and waits for the collector to shut down, killing it after timeout.
func (c *collectorProcess) Stop(timeout time.Duration) error {
	defer c.log.Close()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.done:
		return err
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("collector did not stop within %s: killed", timeout)
	}
}
