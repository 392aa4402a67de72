// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// loadConfig is how the load generator sends (the testbed's LoadOptions).
type loadConfig struct {
	// Endpoint is the collector's OTLP/gRPC receiver, host:port.
	Endpoint string
	// Rate is the target in spans per second; 0 sends as fast as the collector accepts.
	Rate int
	// BatchSpans is the size of one OTLP request, in spans (an SDK batch span processor
	// exports 512 by default).
	BatchSpans int
	// Workers is how many requests may be in flight at once.
	Workers int
	// Duration is how long new turns are started; the turns in flight are then finished.
	Duration time.Duration
}

// loadResult is what the load generator sent.
type loadResult struct {
	Stats turnStats
	// Requests and Retries count OTLP requests; a request failing with a retryable error
	// is sent again until it succeeds.
	Requests, Retries int64
	// Bytes is the size of the requests sent as uncompressed OTLP protobuf.
	Bytes int64
	// Elapsed runs from the first request to the last one's response.
	Elapsed time.Duration
}

// SpansPerSecond is the sender's throughput.
func (r loadResult) SpansPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Stats.Spans) / r.Elapsed.Seconds()
}

// maxLag is how far behind schedule the rate-mode sender may fall and still catch up (a
// scheduling hiccup on a busy machine, as an SDK's export queue absorbs one); beyond it
// (the collector pushes back), the schedule restarts from now.
const maxLag = time.Second

// runLoad sends w's stream to cfg.Endpoint over OTLP/gRPC for cfg.Duration, then the rest
// of the turns in flight, and records when each turn's root span was sent in clock.
func runLoad(ctx context.Context, cfg loadConfig, w *workload, clock *rootClock) (loadResult, error) {
	conn, err := grpc.NewClient(cfg.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return loadResult{}, err
	}
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)

	// The first failure stops the run.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var res loadResult
	var requests, retries, bytes atomic.Int64
	queue := make(chan batch, cfg.Workers)
	errc := make(chan error, cfg.Workers)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range queue {
				if runCtx.Err() != nil {
					continue // drain the queue: the producer stops
				}
				clock.Sent(time.Now(), b.roots)
				if err := sendBatch(runCtx, client, b, &retries); err != nil {
					errc <- err
					cancel()
					continue
				}
				requests.Add(1)
				bytes.Add(int64((&ptrace.ProtoMarshaler{}).TracesSize(b.traces)))
			}
		}()
	}

	start := time.Now()
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(cfg.BatchSpans) / float64(cfg.Rate))
	}
	next := start
	pace := func(interval time.Duration) {
		if interval == 0 {
			return
		}
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		} else if -d > maxLag {
			// Far behind schedule (the collector pushes back): do not burst to catch up.
			next = time.Now()
		}
		next = next.Add(interval)
	}
	deadline := start.Add(cfg.Duration)
	send := func(b batch) bool {
		select {
		case queue <- b:
			return true
		case <-runCtx.Done():
			return false
		}
	}
	ok := true
	var full int // turns in flight in the steady state
	for ok && time.Now().Before(deadline) {
		pace(interval)
		b := w.NextBatch(cfg.BatchSpans)
		full = b.inFlight
		ok = send(b)
	}
	// The turns in flight are finished at the pace each of them had (4 spans a round, a
	// round of every turn in flight taking the same time), so the rate falls with the
	// number of turns left. At the full rate, their remaining spans (half of them, on
	// average) would arrive in half a turn's duration and close the turns at twice the
	// steady rate: a burst the steady load does not have, of 500 turns, 3% of a 15 s run
	// at 30k spans/s, which would be the whole tail above p99.
	for _, b := range w.Drain(cfg.BatchSpans) {
		if !ok {
			break
		}
		pace(drainInterval(interval, cfg.BatchSpans, b, full))
		ok = send(b)
	}
	close(queue)
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Stats = w.Stats()
	res.Requests = requests.Load()
	res.Retries = retries.Load()
	res.Bytes = bytes.Load()
	close(errc)
	if err := <-errc; err != nil {
		return res, err
	}
	return res, ctx.Err()
}

// drainInterval is the time to leave after a drain batch b, when a steady batch of
// batchSpans spans cut from full turns takes interval: b's spans are b.spans/b.inFlight
// spans of each of its turns, which took b.spans·full/b.inFlight steady spans' time.
func drainInterval(interval time.Duration, batchSpans int, b batch, full int) time.Duration {
	if b.inFlight <= 0 || full <= b.inFlight {
		return time.Duration(float64(interval) * float64(b.spans) / float64(batchSpans))
	}
	return time.Duration(float64(interval) * float64(b.spans) / float64(batchSpans) * float64(full) / float64(b.inFlight))
}

// sendBatch exports b, retrying retryable errors (the collector's memory limiter or a full
// queue push back with Unavailable / ResourceExhausted) until ctx ends.
func sendBatch(ctx context.Context, client ptraceotlp.GRPCClient, b batch, retries *atomic.Int64) error {
	req := ptraceotlp.NewExportRequestFromTraces(b.traces)
	backoff := 10 * time.Millisecond
	for {
		_, err := client.Export(ctx, req)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !retryable(err) {
			return fmt.Errorf("export of %d spans: %w", b.spans, err)
		}
		retries.Add(1)
		time.Sleep(backoff)
		backoff = min(2*backoff, time.Second)
	}
}

func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded:
		return true
	}
	return false
}
