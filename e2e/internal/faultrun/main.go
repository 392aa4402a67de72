// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Command faultrun is `make fault`'s run against the built collector
// (bin/otelcol-agenteval, docs/decisions/result-durability.md): it replays the hostile
// OTLP corpus (e2e/internal/hostile) over OTLP/HTTP JSON, OTLP/HTTP protobuf and gRPC,
// then sends a SIGTERM under load and restarts the collector, then cuts its PostgreSQL
// result store across a SIGTERM and starts it with the store cut (outage.go), and prints
// per scenario the spans in (accepted) and out (counted by an OTLP sink behind the
// collector) and the analyses sent (seen by the sink) and stored (in the SQLite or
// PostgreSQL result store). It exits 1 when a span accepted did not come out, the
// collector exited on an input or did not start, or an analysis sent is not stored after
// the restart or stored twice.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	_ "modernc.org/sqlite" // the result store's SQLite driver

	"github.com/agenteval/agenteval-collector/e2e/internal/hostile"
	"github.com/agenteval/agenteval-collector/e2e/internal/ports"
	"github.com/agenteval/agenteval-collector/internal/semconv"
)

func main() {
	bin := flag.String("collector", "bin/otelcol-agenteval", "the collector binary (make build)")
	short := flag.Bool("short", false, "the short form (CI): 200 turns in the many-turns input, 1s of load before the SIGTERM, a 3s store outage")
	only := flag.String("only", "", "run only this scenario: corpus, sigterm or outage (all when empty)")
	flag.Parse()
	if err := run(*bin, *short, *only); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

// settings of the collector under test: sessions end 1s after their last span.
const (
	sessionTimeout = time.Second
	configTemplate = `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: %q, max_recv_msg_size_mib: 8}
      http: {endpoint: %q, max_request_body_size: 8388608}
processors:
  agentsession:
    turn_settle: 200ms
    turn_timeout: 5s
    session_timeout: 1s
exporters:
  otlp_grpc/sink:
    endpoint: %q
    tls: {insecure: true}
    compression: none
    # The corpus's 800,000-deep value takes seconds to marshal and unmarshal on a loaded
    # host: past the default 5s the exporter retries a request the sink already counted.
    timeout: 60s
  agenteval:
    store: {driver: %s, dsn: %q}
    prometheus: {endpoint: %q}
    api: {endpoint: %q}
    sending_queue: {storage: file_storage/agenteval}
    retry_on_failure: %s
extensions:
  file_storage/agenteval: {directory: %q, create_directory: true}
service:
  extensions: [file_storage/agenteval]
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces: {receivers: [otlp], processors: [agentsession], exporters: [otlp_grpc/sink, agenteval]}
`
)

type harness struct {
	bin, dir, cfg, db string
	grpcEP, httpEP    string
	sink              *sink
	col               *collector
	failures          []string
	loadN             atomic.Uint32 // the load's trace numbers, unique across its runs
	pace              time.Duration // each load sender's pause after an accepted request
}

// writeConfig picks h's ports and writes h.dir/config.yaml for the store (driver, dsn)
// and the agenteval exporter's retry_on_failure (a YAML flow map).
func (h *harness) writeConfig(driver, dsn, retry string) error {
	h.grpcEP, h.httpEP, h.cfg = freePort(), freePort(), filepath.Join(h.dir, "config.yaml")
	cfg := fmt.Sprintf(configTemplate, h.grpcEP, h.httpEP, h.sink.addr, driver, dsn, freePort(), freePort(), retry, filepath.Join(h.dir, "queue"))
	return os.WriteFile(h.cfg, []byte(cfg), 0o600)
}

func (h *harness) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.failures = append(h.failures, msg)
	fmt.Println("  FAIL:", msg)
}

func run(bin string, short bool, only string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: %w (run make build)", bin, err)
	}
	dir, err := os.MkdirTemp("", "agenteval-fault-")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(dir)
		}
	}()
	snk := newSink()
	if err := snk.start(); err != nil {
		return err
	}
	defer snk.srv.Stop()
	h := &harness{bin: bin, dir: dir, db: filepath.Join(dir, "agenteval.db"), sink: snk}
	if err := h.writeConfig("sqlite", h.db, "{max_elapsed_time: 0}"); err != nil {
		return err
	}
	want := func(scenario string) bool { return only == "" || only == scenario }
	if want("corpus") || want("sigterm") {
		if h.col, err = h.start(); err != nil {
			return err
		}
	}
	if want("corpus") {
		turns := 2000
		if short {
			turns = 200
		}
		t0 := time.Now()
		h.corpus(turns)
		fmt.Printf("corpus replayed in %.1fs\n\n", time.Since(t0).Seconds())
	}
	if want("sigterm") {
		load := 5 * time.Second
		if short {
			load = time.Second
		}
		h.sigtermUnderLoad(load)
		fmt.Println()
	} else if want("corpus") {
		_ = h.stop()
	}
	if want("outage") {
		t0 := time.Now()
		h.storeOutages(short)
		fmt.Printf("store-outage scenarios took %.1fs\n\n", time.Since(t0).Seconds())
	}
	if len(h.failures) > 0 {
		keep = true
		fmt.Println("collector log and store kept in", dir)
		return fmt.Errorf("%d failure(s): %s", len(h.failures), strings.Join(h.failures, "; "))
	}
	fmt.Println("PASS")
	return nil
}

// row is one input sent over one protocol.
type row struct {
	proto, name string
	status      string
	in, out     int64
	sessions    []string
}

// corpus sends every hostile input over each protocol, one at a time, waiting for its
// accepted spans to reach the sink; then waits for the sessions to end and prints the
// table.
func (h *harness) corpus(turns int) {
	var rows []row
	fmt.Printf("hostile OTLP corpus against %s (pid %d)\n", h.bin, h.col.cmd.Process.Pid)
	for _, proto := range []string{"http-json", "http-proto", "grpc"} {
		for _, in := range hostile.Corpus(proto, turns) {
			before := h.sink.app.Load()
			r, sent := h.send(proto, in)
			if !sent {
				continue
			}
			r.out = waitFor(&h.sink.app, before, r.in, 10*time.Second) - before
			if r.out != r.in {
				h.fail("%s %s: spans in %d, out %d", proto, in.Name, r.in, r.out)
				if len(h.failures) > 3 {
					return
				}
			}
			if in.Refused && r.in != 0 {
				h.fail("%s %s: accepted (%s), should be refused", proto, in.Name, r.status)
			}
			if h.col.exited() {
				h.fail("%s %s: the collector exited", proto, in.Name)
				return
			}
			rows = append(rows, r)
		}
	}
	time.Sleep(sessionTimeout + 3*time.Second) // the sessions end; their analyses are stored
	stored, err := storedSessions(h.db)
	if err != nil {
		h.fail("reading the store: %v", err)
	}
	fmt.Printf("%-11s %-36s %-26s %9s %9s %9s %9s\n", "protocol", "input", "answer", "spans in", "spans out", "analyses", "stored")
	var in, out, sent, kept int64
	for _, r := range rows {
		var a, s int64
		for _, id := range r.sessions {
			a += h.sink.analysesOf(id)
			if stored[id] {
				s++
			}
		}
		if a != int64(len(r.sessions)) || s != a {
			h.fail("%s %s: analyses expected %d, sent %d, stored %d", r.proto, r.name, len(r.sessions), a, s)
		}
		in, out, sent, kept = in+r.in, out+r.out, sent+a, kept+s
		fmt.Printf("%-11s %-36s %-26s %9d %9d %9d %9d\n", r.proto, r.name, r.status, r.in, r.out, a, s)
	}
	fmt.Printf("%-11s %-36s %-26s %9d %9d %9d %9d\n", "total", fmt.Sprintf("%d requests", len(rows)), "", in, out, sent, kept)
	if h.col.exited() {
		h.fail("the collector exited during the corpus")
	}
}

// send sends one input over proto; sent is false when the input does not apply to it.
func (h *harness) send(proto string, in hostile.Input) (r row, sent bool) {
	r = row{proto: proto, name: in.Name, sessions: in.Sessions}
	var err error
	var ok bool
	spans := int64(1) // a raw input the collector accepts is the one-span nested request
	if in.Raw == nil {
		spans = int64(in.Traces.SpanCount())
	}
	switch {
	case in.Raw == nil && proto == "grpc":
		ok, r.status, err = exportGRPC(h.grpcEP, ptraceotlp.NewExportRequestFromTraces(in.Traces))
	case in.Raw == nil:
		var body []byte
		ct := "application/json"
		if proto == "http-json" {
			body, err = (&ptrace.JSONMarshaler{}).MarshalTraces(in.Traces)
		} else {
			ct = "application/x-protobuf"
			body, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(in.Traces)
		}
		if err == nil {
			ok, r.status, err = postOTLP(h.httpEP, body, ct, false)
		}
	case proto == "http-json":
		if in.ContentType == "" {
			return r, false
		}
		ok, r.status, err = postOTLP(h.httpEP, in.Raw, in.ContentType, in.Gzipped)
	case proto == "http-proto":
		if in.ContentType != "" {
			return r, false
		}
		ok, r.status, err = postOTLP(h.httpEP, in.Raw, "application/x-protobuf", in.Gzipped)
	default: // grpc
		if in.Gzipped || in.ContentType != "" {
			return r, false
		}
		ok, r.status, err = exportRawGRPC(h.grpcEP, in.Raw)
	}
	if err != nil {
		r.status = "error: " + err.Error()
		if len(r.status) > 26 {
			r.status = r.status[:26]
		}
	}
	if ok {
		r.in = spans
	} else {
		r.sessions = nil // refused: no analysis expected
	}
	return r, true
}

// sigtermUnderLoad sends one-turn sessions over gRPC from 4 goroutines, sends SIGTERM to
// the collector after load, keeps sending until the collector refuses, then restarts it
// and waits until every session accepted is stored.
func (h *harness) sigtermUnderLoad(load time.Duration) {
	fmt.Printf("SIGTERM under load (after %s of gRPC load, 4 senders)\n", load)
	r, took, exitErr := h.sigtermAfter("load", load)
	accepted, spans, out, ids := int64(len(r.ids)), r.in, r.out, r.ids
	if exitErr != nil {
		h.fail("after SIGTERM: %v", exitErr)
	}
	var sent int64
	for _, id := range ids {
		sent += h.sink.analysesOf(id)
	}
	fmt.Printf("  sessions accepted %d (spans in %d), spans out %d, analyses sent before exit %d; exit %.2fs after SIGTERM\n",
		accepted, spans, out, sent, took.Seconds())
	if out != spans {
		h.fail("SIGTERM under load: spans in %d, out %d", spans, out)
	}
	if stored, err := storedSessions(h.db); err == nil {
		before := 0
		for _, id := range ids {
			if stored[id] {
				before++
			}
		}
		fmt.Printf("  analyses stored at exit %d of %d (the rest stays in the persistent queue)\n", before, len(ids))
	}

	t1 := time.Now()
	if !h.launch("restart") {
		return
	}
	defer func() { _ = h.stop() }()
	var kept int
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		stored, err := storedSessions(h.db)
		if err == nil {
			kept = 0
			for _, id := range ids {
				if stored[id] {
					kept++
				}
			}
			if kept == len(ids) {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("  after restart: analyses stored %d of %d sessions accepted (%.1fs after the restart)\n", kept, len(ids), time.Since(t1).Seconds())
	if kept != len(ids) {
		h.fail("SIGTERM under load: %d sessions accepted, %d analyses stored after restart", len(ids), kept)
	}
}

// sigtermAfter runs the load (ids prefix-NNNNNN) for d, sends SIGTERM to the collector
// with the load still running, waits (60s) for its exit and stops the load once the
// collector refused it. r holds the spans accepted (in) and received by the sink (out)
// and the sessions accepted; took is the time from the SIGTERM to the exit.
func (h *harness) sigtermAfter(prefix string, d time.Duration) (r outageRow, took time.Duration, err error) {
	before := h.sink.load.Load()
	l, err := h.startLoad(prefix)
	if err != nil {
		return r, 0, fmt.Errorf("grpc client: %w", err)
	}
	time.Sleep(d)
	t0 := time.Now()
	_ = h.col.cmd.Process.Signal(syscall.SIGTERM)
	err = h.col.wait(60 * time.Second)
	took = time.Since(t0)
	l.stop()
	_, r.in, r.ids = l.counts()
	r.out, r.slowest = h.sink.load.Load()-before, l.slowest
	return r, took, err
}

// load sends one-turn sessions (ids prefix-NNNNNN) over gRPC from 4 goroutines as fast as
// the collector accepts them (each pausing harness.pace after an accepted request), until
// stop; a refused request is retried with the next id after 10ms. It counts what the
// collector accepted.
type load struct {
	conn     *grpc.ClientConn
	n        *atomic.Uint32
	prefix   string
	done     chan struct{}
	wg       sync.WaitGroup
	accepted atomic.Int64
	spans    atomic.Int64
	mu       sync.Mutex
	ids      []string
	slowest  time.Duration // the longest Export call accepted
}

// startLoad starts the 4 senders against h's gRPC endpoint.
func (h *harness) startLoad(prefix string) (*load, error) {
	conn, err := grpc.NewClient(h.grpcEP, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	l := &load{conn: conn, n: &h.loadN, prefix: prefix, done: make(chan struct{})}
	client := ptraceotlp.NewGRPCClient(conn)
	col, pace := h.col, h.pace
	for range 4 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.done:
					return
				default:
				}
				i := l.n.Add(1)
				id := fmt.Sprintf("%s-%06d", l.prefix, i)
				td := hostile.LoadTurn(i, id)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				t0 := time.Now()
				_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
				took := time.Since(t0)
				cancel()
				if err != nil {
					if col.exited() {
						return
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				l.accepted.Add(1)
				l.spans.Add(int64(td.SpanCount()))
				l.mu.Lock()
				l.ids = append(l.ids, id)
				l.slowest = max(l.slowest, took)
				l.mu.Unlock()
				time.Sleep(pace)
			}
		}()
	}
	return l, nil
}

// stop stops the senders and waits for them.
func (l *load) stop() {
	close(l.done)
	l.wg.Wait()
	_ = l.conn.Close()
}

// counts returns the sessions and spans accepted and the session ids accepted.
func (l *load) counts() (sessions, spans int64, ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted.Load(), l.spans.Load(), append([]string(nil), l.ids...)
}

// collector is a running collector process.
type collector struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func (c *collector) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *collector) wait(timeout time.Duration) error {
	select {
	case <-c.done:
		var ee *exec.ExitError
		if errors.As(c.err, &ee) {
			return fmt.Errorf("exit: %w", c.err)
		}
		return c.err
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("did not exit within %s", timeout)
	}
}

// launch starts the collector as h.col; false, with a failure "what: why", when it does
// not listen.
func (h *harness) launch(what string) bool {
	col, err := h.start()
	if err != nil {
		h.fail("%s: %v", what, err)
		return false
	}
	h.col = col
	return true
}

// stop sends SIGTERM to h.col and waits (30s) for its exit.
func (h *harness) stop() error {
	_ = h.col.cmd.Process.Signal(syscall.SIGTERM)
	return h.col.wait(30 * time.Second)
}

func (h *harness) start() (*collector, error) {
	logf, err := os.OpenFile(filepath.Join(h.dir, "collector.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(h.bin, "--config", h.cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &collector{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		_ = logf.Close()
		close(c.done)
	}()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c.exited() {
			log, _ := os.ReadFile(filepath.Join(h.dir, "collector.log"))
			return nil, fmt.Errorf("the collector exited at start: %v\n%s", c.err, log)
		}
		if conn, err := net.Dial("tcp", h.httpEP); err == nil {
			_ = conn.Close()
			return c, nil
		}
	}
	return nil, errors.New("the collector does not listen after 60s")
}

func postOTLP(ep string, body []byte, contentType string, gzipped bool) (bool, string, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+ep+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		return false, "", err
	}
	req.Header.Set("Content-Type", contentType)
	if gzipped {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, "", err
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK, fmt.Sprintf("HTTP %d", resp.StatusCode), nil
}

func exportGRPC(ep string, req ptraceotlp.ExportRequest) (bool, string, error) {
	conn, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return false, "", err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = ptraceotlp.NewGRPCClient(conn).Export(ctx, req)
	return grpcAnswer(err)
}

func exportRawGRPC(ep string, body []byte) (bool, string, error) {
	conn, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(hostile.RawCodec{}), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return false, "", err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reply []byte
	return grpcAnswer(conn.Invoke(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", body, &reply))
}

func grpcAnswer(err error) (bool, string, error) {
	if err == nil {
		return true, "gRPC OK", nil
	}
	if s, ok := status.FromError(err); ok {
		return false, "gRPC " + s.Code().String(), nil
	}
	return false, "", err
}

// storedSessions reads the session ids in the result store.
func storedSessions(path string) (map[string]bool, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query("SELECT session_id FROM sessions")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// freePort returns a loopback address for the collector to bind (ports.Free); it panics
// when there is none, as the runner cannot go on.
func freePort() string {
	addr, err := ports.Free()
	if err != nil {
		panic(err)
	}
	return addr
}

// sink is the OTLP/gRPC backend behind the collector: it counts the application spans
// (everything but the collector's own evaluation spans; a forged evaluation span sent by
// a client counts as an application span), among them the load's (hostile.LoadTurn's
// resource), and the analyses by session id. The load phases count the load's spans
// only, so that a span of an earlier phase that arrives late is not taken for one of
// theirs.
type sink struct {
	ptraceotlp.UnimplementedGRPCServer
	srv  *grpc.Server
	addr string
	app  atomic.Int64
	load atomic.Int64

	mu       sync.Mutex
	analyses map[string]int64
}

func newSink() *sink { return &sink{analyses: map[string]int64{}} }

func (s *sink) start() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.addr = l.Addr().String()
	s.srv = grpc.NewServer(grpc.MaxRecvMsgSize(256 << 20))
	ptraceotlp.RegisterGRPCServer(s.srv, s)
	go func() { _ = s.srv.Serve(l) }()
	return nil
}

// Export implements the OTLP trace service.
func (s *sink) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	td := req.Traces()
	var app, load int64
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		_, fromLoad := rs.Resource().Attributes().Get(hostile.LoadResourceKey)
		ss := rs.ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			spans := ss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				kind, ok := sp.Attributes().Get(semconv.AgentEvalKind)
				if !ok || strings.HasPrefix(sp.Name(), "forged") {
					app++
					if fromLoad {
						load++
					}
					continue
				}
				if kind.Str() == semconv.EvalKindAgentSession {
					if id, ok := sp.Attributes().Get(semconv.AgentEvalSessionID); ok {
						s.analyses[id.Str()]++
					}
				}
			}
		}
	}
	s.app.Add(app)
	s.load.Add(load)
	return ptraceotlp.NewExportResponse(), nil
}

// waitFor waits until counter (the sink's app or load) went past before by want (or
// timeout) and returns it then, after a short grace period that would show extra spans.
func waitFor(counter *atomic.Int64, before, want int64, timeout time.Duration) int64 {
	deadline := time.Now().Add(timeout)
	for counter.Load()-before < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	return counter.Load()
}

func (s *sink) analysesOf(id string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.analyses[id]
}
