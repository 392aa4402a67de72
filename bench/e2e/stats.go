// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/procfs"
	"gonum.org/v1/gonum/stat"
)

// latencySummary holds the percentiles of a set of latencies.
type latencySummary struct {
	N             int
	P50, P99, Max time.Duration
}

// summarize returns the p50, p99 (empirical quantiles: the smallest observation whose
// rank is at least p·N) and max of ds; zero for an empty set.
func summarize(ds []time.Duration) latencySummary {
	if len(ds) == 0 {
		return latencySummary{}
	}
	x := make([]float64, len(ds))
	for i, d := range ds {
		x[i] = float64(d)
	}
	slices.Sort(x)
	return latencySummary{
		N:   len(ds),
		P50: time.Duration(stat.Quantile(0.50, stat.Empirical, x, nil)),
		P99: time.Duration(stat.Quantile(0.99, stat.Empirical, x, nil)),
		Max: time.Duration(x[len(x)-1]),
	}
}

func (l latencySummary) String() string {
	if l.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%s / %s", roundDur(l.P50), roundDur(l.P99))
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}

// procSample is a process's resource use at one moment (the testbed's resource monitor,
// read from /proc/<pid>/stat and /proc/<pid>/status).
type procSample struct {
	// CPU is utime+stime in seconds (clock-tick resolution, 10 ms).
	CPU float64
	// PeakRSS is VmHWM, the resident set's high-water mark, in bytes.
	PeakRSS uint64
}

func sampleProc(pid int) (procSample, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procSample{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return procSample{}, err
	}
	status, err := p.NewStatus()
	if err != nil {
		return procSample{}, err
	}
	return procSample{CPU: st.CPUTime(), PeakRSS: status.VmHWM}, nil
}
