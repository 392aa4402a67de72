// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// ErrQueueFull is Submit's error when the queue is full: the job is dropped.
var ErrQueueFull = errors.New("judge queue full")

// ErrShutdown is Submit's error after Shutdown, and the cause (context.Cause) of the
// context of a job that Shutdown cut off or found still queued.
var ErrShutdown = errors.New("judge shut down")

// Pool runs jobs on a fixed number of workers from a bounded queue. Submit never blocks:
// a job that finds the queue full is dropped and counted, so a slow or hanging judge never
// holds back the caller (the trace pipeline).
type Pool struct {
	jobs   chan func(context.Context)
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	drops  atomic.Int64
	mu     sync.RWMutex
	closed bool
}

// NewPool starts workers goroutines reading a queue of queueSize jobs.
func NewPool(workers, queueSize int) *Pool {
	ctx, cancel := context.WithCancelCause(context.Background())
	p := &Pool{jobs: make(chan func(context.Context), queueSize), ctx: ctx, cancel: cancel}
	for range max(1, workers) {
		p.wg.Go(func() {
			for job := range p.jobs {
				job(ctx)
			}
		})
	}
	return p
}

// Submit queues job and returns nil, or returns ErrQueueFull or ErrShutdown (and counts a
// drop) without running it. job receives a context cancelled at Shutdown with cause
// ErrShutdown; a job still queued then is run with that context already cancelled, so
// that it can record what it did not do, and must return promptly.
func (p *Pool) Submit(job func(context.Context)) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		p.drops.Add(1)
		return ErrShutdown
	}
	select {
	case p.jobs <- job:
		return nil
	default:
		p.drops.Add(1)
		return ErrQueueFull
	}
}

// Depth is the number of queued jobs.
func (p *Pool) Depth() int { return len(p.jobs) }

// Drops is the number of jobs refused since NewPool.
func (p *Pool) Drops() int64 { return p.drops.Load() }

// Shutdown cancels the jobs' context (cause ErrShutdown), runs the queued ones with it
// and waits for the workers or ctx.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.cancel(ErrShutdown)
		close(p.jobs)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
