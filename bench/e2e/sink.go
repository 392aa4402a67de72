// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the collector's OTLP exporter compresses with gzip by default

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// rootClock remembers when the load generator sent each turn's root span, by trace id.
type rootClock struct {
	mu   sync.Mutex
	sent map[pcommon.TraceID]time.Time
}

func newRootClock() *rootClock { return &rootClock{sent: map[pcommon.TraceID]time.Time{}} }

// Sent records that the roots of traces were sent at t.
func (c *rootClock) Sent(t time.Time, traces []pcommon.TraceID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range traces {
		c.sent[id] = t
	}
}

// Since returns how long ago (at now) the root of trace was sent, and false when it was
// not sent.
func (c *rootClock) Since(trace pcommon.TraceID, now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.sent[trace]
	if !ok {
		return 0, false
	}
	return now.Sub(t), true
}

// sinkCounts is what the sink received.
type sinkCounts struct {
	Requests int64
	// Bytes is the size of the requests as uncompressed OTLP protobuf.
	Bytes int64
	// Spans are the pipeline's input coming out: every span not named "evaluate ...".
	Spans int64
	// Eval counts evaluation spans by agent_eval.kind (tool_call, agent_interaction,
	// turn, agent_session).
	Eval map[string]int64
	// TurnLatencies are, for each turn evaluated, the time from the moment its root span
	// was sent to the moment the sink received its first "evaluate turn" span.
	TurnLatencies []time.Duration `json:"-"`
	// TurnCloseLatencies and TurnOutLatencies split each of TurnLatencies at the
	// evaluation span's timestamp (the moment the processor began evaluating the turn's
	// batch; the load generator, the collector and the sink share the clock): from the
	// root's send to the evaluation (receiver, turn_settle, the worker's tick and queue)
	// and from the evaluation to the sink (evaluation, the batch processor, the exporter).
	TurnCloseLatencies, TurnOutLatencies []time.Duration `json:"-"`
	// RootLatencies are, for each turn's root span that reached the sink, the time from
	// its send to its arrival: the pipeline's own transit (receiver, processors, the batch
	// processor's timer, the exporter), measured the same way in every pipeline, so that
	// the pass-through's figure is the floor under TurnOutLatencies.
	RootLatencies []time.Duration `json:"-"`
	// UnmatchedTurns are "evaluate turn" spans whose trace's root was never sent.
	UnmatchedTurns int64
	// TurnsEvaluated is the number of distinct turns (traces) with an "evaluate turn"
	// span; a turn may get more than one (a provisional verdict when it closes, the final
	// CCM/RDM verdict when the next turn's user message arrives).
	TurnsEvaluated int64
	// RepeatTurnSpans are "evaluate turn" spans for a turn evaluated before.
	RepeatTurnSpans int64
}

// EvalTotal is the number of evaluation spans received.
func (c sinkCounts) EvalTotal() int64 {
	var n int64
	for _, v := range c.Eval {
		n += v
	}
	return n
}

// sink is a counting OTLP/gRPC trace server (the testbed's "mock backend"): it accepts
// every request, counts the pipeline's spans and its evaluation spans apart and measures
// turn-evaluation latency against the load generator's rootClock. It reads requests with
// summaryCodec (sinkwire.go), not into pdata.
type sink struct {
	clock *rootClock
	now   func() time.Time

	spans    atomic.Int64
	requests atomic.Int64
	bytes    atomic.Int64

	mu        sync.Mutex
	eval      map[string]int64
	latencies []time.Duration
	closeLat  []time.Duration
	outLat    []time.Duration
	rootLat   []time.Duration
	turnsSeen map[pcommon.TraceID]struct{}
	unmatched int64
	repeats   int64

	srv *grpc.Server
	lis net.Listener
}

func newSink(clock *rootClock) *sink {
	return &sink{clock: clock, now: time.Now, eval: map[string]int64{}, turnsSeen: map[pcommon.TraceID]struct{}{}}
}

// Start serves OTLP/gRPC on addr (host:port; port 0 picks a free one), with opts added
// to the server's.
func (s *sink) Start(addr string, opts ...grpc.ServerOption) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.lis = lis
	s.srv = grpc.NewServer(append([]grpc.ServerOption{grpc.MaxRecvMsgSize(256 << 20), grpc.ForceServerCodecV2(summaryCodec{})}, opts...)...)
	s.srv.RegisterService(&traceServiceDesc, s)
	go func() { _ = s.srv.Serve(lis) }()
	return nil
}

// Addr is the address the sink listens on.
func (s *sink) Addr() string { return s.lis.Addr().String() }

// Stop stops the server, waiting for requests in progress.
func (s *sink) Stop() {
	if s.srv != nil {
		s.srv.GracefulStop()
	}
}

// observe counts one request's summary, received now.
func (s *sink) observe(sum exportSummary) {
	now := s.now()
	s.requests.Add(1)
	s.bytes.Add(sum.Bytes)
	for _, e := range sum.Evals {
		s.observeEval(e.Kind, e.Trace, e.Start, now)
	}
	s.spans.Add(sum.Plain)
	s.observeRoots(sum.Roots, now)
}

// observeRoots records the transit of the root spans of traces received at now; a root
// the load generator did not send is not counted.
func (s *sink) observeRoots(traces []pcommon.TraceID, now time.Time) {
	if len(traces) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range traces {
		if d, ok := s.clock.Since(id, now); ok {
			s.rootLat = append(s.rootLat, d)
		}
	}
}

// observeEval counts an evaluation span of trace, stamped evaluated, received at now.
func (s *sink) observeEval(kind string, trace pcommon.TraceID, evaluated, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eval[kind]++
	if kind != semconv.EvalKindTurn {
		return
	}
	if _, seen := s.turnsSeen[trace]; seen {
		s.repeats++
		return
	}
	s.turnsSeen[trace] = struct{}{}
	if d, ok := s.clock.Since(trace, now); ok {
		s.latencies = append(s.latencies, d)
		out := now.Sub(evaluated)
		s.closeLat = append(s.closeLat, d-out)
		s.outLat = append(s.outLat, out)
	} else {
		s.unmatched++
	}
}

// Counts returns a copy of what was received so far.
func (s *sink) Counts() sinkCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := sinkCounts{
		Requests:           s.requests.Load(),
		Bytes:              s.bytes.Load(),
		Spans:              s.spans.Load(),
		Eval:               make(map[string]int64, len(s.eval)),
		TurnLatencies:      append([]time.Duration(nil), s.latencies...),
		TurnCloseLatencies: append([]time.Duration(nil), s.closeLat...),
		TurnOutLatencies:   append([]time.Duration(nil), s.outLat...),
		RootLatencies:      append([]time.Duration(nil), s.rootLat...),
		UnmatchedTurns:     s.unmatched,
		TurnsEvaluated:     int64(len(s.turnsSeen)),
		RepeatTurnSpans:    s.repeats,
	}
	for k, v := range s.eval {
		c.Eval[k] = v
	}
	return c
}
