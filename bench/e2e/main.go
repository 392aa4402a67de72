// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Command e2e is the end-to-end benchmark of the collector (`make bench-e2e`): it runs each
// pipeline (pass-through, contrib's groupbytrace, agentsession, agentsession + agenteval)
// as a real collector process on loopback, sends it the same agent-shaped OTLP/gRPC load
// at a fixed rate and as fast as it accepts, counts what comes out at an OTLP sink and
// reports, per run, the collector's CPU seconds per span (/proc/<pid>/stat), its ratio to
// pass-through, the sender's throughput, spans in == spans out, turn-evaluation latency
// and peak RSS (VmHWM). It follows the shape of the OpenTelemetry Collector contrib
// testbed (data provider, load generator, child-process collector, mock backend,
// validator, resource monitor), whose modules the Go proxy does not serve.
// See bench/e2e/README.md and docs/decisions/performance.md.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// Load modes.
const (
	modeRate = "rate" // a fixed rate of spans per second
	modeMax  = "max"  // as fast as the collector accepts
)

type options struct {
	Collector      string
	Pipelines      []pipeline
	Modes          []string
	Rate           int
	Duration       time.Duration
	Repeat         int
	BatchSpans     int
	Workers        int
	TurnSettle     time.Duration
	GroupWait      time.Duration
	SessionTimeout time.Duration
	MaxSessions    int
	ContRecords    int
	ContDriver     string
	ActiveTurns    int
	TurnsPerSess   int
	PortBase       int
	Profile        string
	Out            string
	DrainTimeout   time.Duration
	Batching       string
	BatchTimeout   time.Duration
	Handoff        bool
	// HarnessProfile is a file for a CPU profile of this program (load generator and
	// sink) over all runs.
	HarnessProfile string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("e2e", flag.ContinueOnError)
	fs.StringVar(&o.Collector, "collector", "bin/otelcol-agenteval-bench", "collector binary (built from bench/e2e/builder-bench.yaml)")
	names := fs.String("pipelines", "passthrough,groupbytrace,agentsession,agentsession+agenteval,shipped", "pipelines to run, in order; passthrough is the reference of the CPU ratio")
	modes := fs.String("modes", "rate,max", "load modes: rate (fixed -rate spans/s), max (as fast as the collector accepts)")
	fs.IntVar(&o.Rate, "rate", 30000, "spans per second in rate mode")
	fs.DurationVar(&o.Duration, "duration", 20*time.Second, "how long each run starts new turns (the turns in flight are then finished)")
	fs.IntVar(&o.Repeat, "repeat", 1, "runs of each pipeline per mode")
	fs.IntVar(&o.BatchSpans, "batch", 512, "spans per OTLP request")
	fs.IntVar(&o.Workers, "workers", 4, "OTLP requests in flight at once")
	fs.DurationVar(&o.TurnSettle, "turn-settle", 500*time.Millisecond, "agentsession turn_settle (from the root span's arrival)")
	fs.DurationVar(&o.GroupWait, "group-wait", 2*time.Second, "groupbytrace wait_duration (from a trace's first span: covers a turn's arrival plus -turn-settle)")
	fs.DurationVar(&o.SessionTimeout, "session-timeout", 5*time.Second, "agentsession session_timeout (sessions cut by the end of a run end after it)")
	fs.IntVar(&o.MaxSessions, "max-sessions", 1000000, "agentsession max_sessions (open sessions)")
	fs.IntVar(&o.ContRecords, "continuation-records", 0, "agentsession continuation.max_records: turn records kept in memory for continuation (0: the processor's default)")
	fs.StringVar(&o.ContDriver, "continuation-driver", "", `agentsession continuation.driver in every pipeline but shipped (always sqlite): "" (in memory) or "sqlite" (the exporter's SQLite file, as config.yaml has it)`)
	fs.IntVar(&o.ActiveTurns, "active-turns", 500, "turns in flight at once, interleaved in every batch")
	fs.IntVar(&o.TurnsPerSess, "turns-per-session", 3, "turns per session; the last one ends the session (agent_eval.session.end)")
	fs.IntVar(&o.PortBase, "port-base", 21000, "first of the 6 loopback ports a run uses (OTLP in, sink, health, pprof, Prometheus, API)")
	fs.StringVar(&o.Profile, "profile", "agentsession+agenteval", "pipeline whose first rate run is profiled through the pprof extension: CPU over -duration, then heap and allocs (empty: none)")
	fs.StringVar(&o.Out, "out", "", "directory for results.md, results.json, profiles and collector logs (default: a new temporary directory)")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", 0, "how long to wait for the output after the load (default: session-timeout + 60s)")
	fs.StringVar(&o.Batching, "batching", batchingProcessor, "where every pipeline batches its output: processor (the batch processor) or exporter (the OTLP exporter's sending_queue batch, no batch processor)")
	fs.BoolVar(&o.Handoff, "handoff", true, "in the agentsession+agenteval and shipped pipelines, pass results from the processor to the exporter through the agenteval_handoff extension (false: the exporter verifies and decodes every evaluation span)")
	fs.DurationVar(&o.BatchTimeout, "batch-timeout", 0, "the batch processor's timeout or the sending queue batch's flush_timeout, in every pipeline (0: the component's default, 200ms)")
	fs.StringVar(&o.HarnessProfile, "harness-profile", "", "file for a CPU profile of this program (the load generator and the sink) over all runs (empty: none)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, n := range strings.Split(*names, ",") {
		p, ok := pipelineByName(strings.TrimSpace(n))
		if !ok {
			return o, fmt.Errorf("-pipelines: unknown pipeline %q", n)
		}
		o.Pipelines = append(o.Pipelines, p)
	}
	for _, m := range strings.Split(*modes, ",") {
		m = strings.TrimSpace(m)
		if m != modeRate && m != modeMax {
			return o, fmt.Errorf("-modes: unknown mode %q (rate, max)", m)
		}
		o.Modes = append(o.Modes, m)
	}
	if o.Rate <= 0 || o.Duration <= 0 || o.Repeat <= 0 || o.BatchSpans <= 0 || o.Workers <= 0 {
		return o, fmt.Errorf("-rate, -duration, -repeat, -batch and -workers must be positive")
	}
	if o.ContDriver != "" && o.ContDriver != "sqlite" {
		return o, fmt.Errorf(`-continuation-driver: %q is neither "" nor sqlite`, o.ContDriver)
	}
	if o.Batching != batchingProcessor && o.Batching != batchingExporter {
		return o, fmt.Errorf("-batching: %q is neither %s nor %s", o.Batching, batchingProcessor, batchingExporter)
	}
	if o.BatchTimeout < 0 {
		return o, fmt.Errorf("-batch-timeout must not be negative")
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = o.SessionTimeout + 60*time.Second
	}
	return o, nil
}

// runResult is one pipeline run.
type runResult struct {
	Pipeline string
	Mode     string
	Repeat   int
	Load     loadResult
	Out      sinkCounts
	Latency  latencySummary
	// CloseLatency and OutLatency split Latency at the evaluation span's timestamp:
	// from the root's send to the evaluation, and from there to the sink.
	CloseLatency, OutLatency latencySummary
	// RootLatency is the transit of the turns' root spans, from their send to the sink.
	RootLatency latencySummary
	// CPUSeconds is the collector's utime+stime from the first request until it was idle
	// again with every output received.
	CPUSeconds float64
	// HarnessCPUSeconds is this program's (load generator and sink) over the same time:
	// it shares the machine's cores with the collector.
	HarnessCPUSeconds float64
	PeakRSS           uint64
	// Complete says whether every span and every expected evaluation came out before
	// the drain timeout.
	Complete bool
	Profile  string `json:",omitempty"`
}

// CPUPerSpan is the collector's CPU seconds per span sent.
func (r runResult) CPUPerSpan() float64 {
	if r.Load.Stats.Spans == 0 {
		return 0
	}
	return r.CPUSeconds / float64(r.Load.Stats.Spans)
}

func main() {
	log.SetFlags(log.Ltime)
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	if _, err := os.Stat(o.Collector); err != nil {
		return fmt.Errorf("collector binary: %w (build it with `make bench-build`)", err)
	}
	if o.Out == "" {
		dir, err := os.MkdirTemp("", "agenteval-bench-e2e-")
		if err != nil {
			return err
		}
		o.Out = dir
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	log.Printf("results in %s", o.Out)
	if o.HarnessProfile != "" {
		f, err := os.Create(o.HarnessProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var results []runResult
	for _, mode := range o.Modes {
		for rep := range o.Repeat {
			for i, p := range o.Pipelines {
				name := fmt.Sprintf("%s-%s-%d", p.Name, mode, rep+1)
				log.Printf("run %s", name)
				r, err := runOne(ctx, o, p, mode, rep, i, filepath.Join(o.Out, name))
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				log.Printf("  %s", r.summaryLine())
				results = append(results, r)
			}
		}
	}
	table := resultsTable(o, results)
	fmt.Print(table)
	if err := os.WriteFile(filepath.Join(o.Out, "results.md"), []byte(table), 0o644); err != nil {
		return err
	}
	js, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.Out, "results.json"), js, 0o644)
}

func runOne(ctx context.Context, o options, p pipeline, mode string, rep, idx int, dir string) (runResult, error) {
	res := runResult{Pipeline: p.Name, Mode: mode, Repeat: rep + 1}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	pt := portsFrom(o.PortBase + 10*idx)
	clock := newRootClock()
	snk := newSink(clock)
	if err := snk.Start(fmt.Sprintf("127.0.0.1:%d", pt.Sink)); err != nil {
		return res, err
	}
	defer snk.Stop()
	cfg := renderConfig(p, pt, collectorParams{TurnSettle: o.TurnSettle, GroupWait: o.GroupWait, SessionTimeout: o.SessionTimeout, MaxSessions: o.MaxSessions, ContinuationRecords: o.ContRecords, ContinuationDriver: o.ContDriver, DataDir: dir, Batching: o.Batching, BatchTimeout: o.BatchTimeout, Handoff: o.Handoff})
	col, err := startCollector(ctx, o.Collector, dir, cfg, pt)
	if err != nil {
		return res, err
	}
	defer func() { _ = col.Stop(30 * time.Second) }()

	before, err := sampleProc(col.Pid())
	if err != nil {
		return res, err
	}
	self, err := sampleProc(os.Getpid())
	if err != nil {
		return res, err
	}
	var profDone chan error
	profiled := p.Name == o.Profile && mode == modeRate && rep == 0
	pprofURL := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", pt.Pprof)
	if profiled {
		res.Profile = filepath.Join(dir, "cpu.pprof")
		profDone = make(chan error, 1)
		go func() {
			err := fetchProfile(ctx, fmt.Sprintf("%sprofile?seconds=%d", pprofURL, int(o.Duration.Seconds())), res.Profile)
			// Beside the CPU profile, at the end of the load (turns in flight): the heap
			// in use and the runtime's memory statistics (heap?debug=1 ends with them).
			if err == nil {
				err = fetchProfiles(ctx, pprofURL, dir, "heap", "heap.pprof", "heap?debug=1", "memstats-load.txt")
			}
			profDone <- err
		}()
	}
	w := newWorkload(workloadConfig{
		Seed: uint64(1 + rep), ActiveTurns: o.ActiveTurns, TurnsPerSession: o.TurnsPerSess,
		RunID: fmt.Sprintf("%s-%s-%d", strings.ReplaceAll(p.Name, "+", "-"), mode, rep+1),
	})
	lc := loadConfig{Endpoint: fmt.Sprintf("127.0.0.1:%d", pt.OTLP), BatchSpans: o.BatchSpans, Workers: o.Workers, Duration: o.Duration}
	if mode == modeRate {
		lc.Rate = o.Rate
	}
	res.Load, err = runLoad(ctx, lc, w, clock)
	if err != nil {
		return res, fmt.Errorf("load: %w", err)
	}
	res.Complete = waitOutput(ctx, snk, res.Load.Stats, p.Evaluates, o.DrainTimeout)
	waitIdle(ctx, col.Pid(), 30*time.Second)
	after, err := sampleProc(col.Pid())
	if err != nil {
		return res, err
	}
	if profDone != nil {
		if err := <-profDone; err != nil {
			return res, fmt.Errorf("profile: %w", err)
		}
		// Once idle: what the whole run allocated (the load, then the evaluation and
		// storage of what was in flight).
		if err := fetchProfiles(ctx, pprofURL, dir, "allocs", "allocs.pprof", "heap?debug=1", "memstats-idle.txt"); err != nil {
			return res, fmt.Errorf("profile: %w", err)
		}
	}
	res.CPUSeconds = after.CPU - before.CPU
	if selfAfter, err := sampleProc(os.Getpid()); err == nil {
		res.HarnessCPUSeconds = selfAfter.CPU - self.CPU
	}
	res.PeakRSS = after.PeakRSS
	res.Out = snk.Counts()
	res.Latency = summarize(res.Out.TurnLatencies)
	res.CloseLatency, res.OutLatency = summarize(res.Out.TurnCloseLatencies), summarize(res.Out.TurnOutLatencies)
	res.RootLatency = summarize(res.Out.RootLatencies)
	if col.Exited() {
		return res, fmt.Errorf("the collector exited during the run (log: %s)", filepath.Join(dir, "collector.log"))
	}
	return res, nil
}

// waitOutput waits until the sink has every span sent and, for an evaluating pipeline,
// an evaluation of every turn and one session evaluation per session; it reports
// whether that happened within timeout.
func waitOutput(ctx context.Context, snk *sink, sent turnStats, evaluates bool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		c := snk.Counts()
		if outputComplete(c, sent, evaluates) {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// outputComplete says whether c holds all of sent: every span, and for an evaluating
// pipeline an evaluation of every turn and session.
func outputComplete(c sinkCounts, sent turnStats, evaluates bool) bool {
	if c.Spans < sent.Spans {
		return false
	}
	if !evaluates {
		return true
	}
	return c.TurnsEvaluated >= sent.Turns && c.Eval[semconv.EvalKindAgentSession] >= sent.Sessions
}

// waitIdle waits until the process uses less than 2% of a core over half a second
// (background work such as the result store's writes has finished), at most timeout.
func waitIdle(ctx context.Context, pid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	prev, err := sampleProc(pid)
	for err == nil && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(500 * time.Millisecond)
		var cur procSample
		if cur, err = sampleProc(pid); err != nil {
			return
		}
		if cur.CPU-prev.CPU <= 0.01 {
			return
		}
		prev = cur
	}
}

// fetchProfiles fetches pairs of pprof endpoint (relative to base) and file name in dir.
func fetchProfiles(ctx context.Context, base, dir string, endpointFile ...string) error {
	for i := 0; i+1 < len(endpointFile); i += 2 {
		if err := fetchProfile(ctx, base+endpointFile[i], filepath.Join(dir, endpointFile[i+1])); err != nil {
			return err
		}
	}
	return nil
}

func fetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (r runResult) summaryLine() string {
	return fmt.Sprintf("sent %d spans in %s (%.0f/s), out %d (+%d evaluation spans), CPU %.2fs (%.2f µs/span; harness %.2fs), root span sent → sink p50/p99 %s, turn eval p50/p99 %s (root sent → evaluated %s, evaluated → sink %s), peak RSS %d MiB, OTLP bytes out/in %.2f, complete=%v",
		r.Load.Stats.Spans, r.Load.Elapsed.Round(time.Millisecond), r.Load.SpansPerSecond(), r.Out.Spans, r.Out.EvalTotal(),
		r.CPUSeconds, r.CPUPerSpan()*1e6, r.HarnessCPUSeconds, r.RootLatency, r.Latency, r.CloseLatency, r.OutLatency, r.PeakRSS>>20, ratio(r.Out.Bytes, r.Load.Bytes), r.Complete)
}

// resultsTable is the Markdown report: one row per run, the CPU ratio against the mean
// pass-through CPU per span of the same mode.
func resultsTable(o options, rs []runResult) string {
	ref := map[string][]float64{}
	for _, r := range rs {
		if r.Pipeline == pipelines[0].Name {
			ref[r.Mode] = append(ref[r.Mode], r.CPUPerSpan())
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Load: %s; OTLP/gRPC requests of %d spans, %d in flight; rate mode %d spans/s; %s of new turns per run; agentsession turn_settle %s, session_timeout %s, continuation %s (shipped: sqlite); groupbytrace wait_duration %s; output batched by the %s%s; agenteval_handoff %s.\n\n",
		workloadConfig{ActiveTurns: o.ActiveTurns, TurnsPerSession: o.TurnsPerSess}.withDefaults(), o.BatchSpans, o.Workers, o.Rate, o.Duration, o.TurnSettle, o.SessionTimeout, cmp.Or(o.ContDriver, "in memory"), o.GroupWait, batchingText(o.Batching), batchTimeoutText(o.BatchTimeout), onOff(o.Handoff))
	b.WriteString("| pipeline | load | run | spans sent | sender spans/s | collector CPU s | CPU µs/span | × pass-through | spans out = in | OTLP bytes out / in | turns evaluated (turn spans) / interaction / tool_call / session spans | root span sent → sink p50 / p99 | turn eval p50 / p99 | peak RSS MiB |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---|---:|---|---|---|---:|\n")
	for _, r := range rs {
		rel := "–"
		if m := mean(ref[r.Mode]); m > 0 {
			rel = fmt.Sprintf("%.2f", r.CPUPerSpan()/m)
		}
		inOut := fmt.Sprintf("%d ✓", r.Out.Spans)
		if r.Out.Spans != r.Load.Stats.Spans {
			inOut = fmt.Sprintf("%d ✗ (%+d)", r.Out.Spans, r.Out.Spans-r.Load.Stats.Spans)
		}
		evals := "–"
		if len(r.Out.Eval) > 0 || pipelineEvaluates(r.Pipeline) {
			evals = fmt.Sprintf("%s (%d spans) / %s / %d / %s",
				expected(r.Out.TurnsEvaluated, r.Load.Stats.Turns), r.Out.Eval[semconv.EvalKindTurn],
				expected(r.Out.Eval[semconv.EvalKindAgentInteract], r.Load.Stats.Interactions),
				r.Out.Eval[semconv.EvalKindToolCall],
				expected(r.Out.Eval[semconv.EvalKindAgentSession], r.Load.Stats.Sessions))
		}
		load := fmt.Sprintf("%dk/s", o.Rate/1000)
		if r.Mode == modeMax {
			load = "max"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.0f | %.2f | %.2f | %s | %s | %.2f | %s | %s | %s | %d |\n",
			r.Pipeline, load, r.Repeat, r.Load.Stats.Spans, r.Load.SpansPerSecond(), r.CPUSeconds, r.CPUPerSpan()*1e6,
			rel, inOut, ratio(r.Out.Bytes, r.Load.Bytes), evals, r.RootLatency, r.Latency, r.PeakRSS>>20)
	}
	return b.String()
}

// batchingText names where the pipelines batch (options.Batching) for the report.
func batchingText(batching string) string {
	if batching == batchingExporter {
		return "OTLP exporter's sending queue (no batch processor)"
	}
	return "batch processor"
}

func batchTimeoutText(d time.Duration) string {
	if d == 0 {
		return ", default timeout"
	}
	return ", timeout " + d.String()
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func pipelineEvaluates(name string) bool {
	p, ok := pipelineByName(name)
	return ok && p.Evaluates
}

// expected prints got, flagged when it differs from want.
func expected(got, want int64) string {
	if got == want {
		return fmt.Sprint(got)
	}
	return fmt.Sprintf("%d (of %d)", got, want)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
