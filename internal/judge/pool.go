// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"context"
	"sync"
	"sync/atomic"
)

// Pool runs jobs on a fixed number of workers from a bounded queue. Submit never blocks:
// a job that finds the queue full is dropped and counted, so a slow or hanging judge never
// holds back the caller (the trace pipeline).
type Pool struct {
	jobs   chan func(context.Context)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	drops  atomic.Int64
	mu     sync.RWMutex
	closed bool
}

// NewPool starts workers goroutines reading a queue of queueSize jobs.
func NewPool(workers, queueSize int) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{jobs: make(chan func(context.Context), queueSize), ctx: ctx, cancel: cancel}
	for range max(1, workers) {
		p.wg.Go(func() {
			for job := range p.jobs {
				if ctx.Err() != nil {
					continue
				}
				job(ctx)
			}
		})
	}
	return p
}

// Submit queues job and returns true, or returns false (and counts a drop) when the queue
// is full or the pool is shut down. job receives a context cancelled at Shutdown.
func (p *Pool) Submit(job func(context.Context)) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		p.drops.Add(1)
		return false
	}
	select {
	case p.jobs <- job:
		return true
	default:
		p.drops.Add(1)
		return false
	}
}

// Depth is the number of queued jobs.
func (p *Pool) Depth() int { return len(p.jobs) }

// Drops is the number of jobs refused since NewPool.
func (p *Pool) Drops() int64 { return p.drops.Load() }

// Shutdown cancels running jobs' context, skips queued ones and waits for the workers or
// ctx.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.cancel()
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
