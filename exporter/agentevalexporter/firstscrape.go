// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// maxPendingObservations bounds the observations held back while no scrape comes
// (nobody scrapes the endpoint): past it they are applied at once, so memory stays
// bounded and only the first-increment guarantee is given up.
const maxPendingObservations = 1 << 16

// firstScrape makes every series count from its first event. Prometheus takes the first
// sample of a series as the baseline of increase() and rate(), so a counter or histogram
// whose first scraped value is already 1 never shows that 1 (docs/metrics.md, "Counting
// from the first event"). A series is therefore served at zero first: it is created when
// its label set is first seen, and the observations made to it are held back until a
// scrape that began after its creation has been served; they are applied right after
// that scrape and the next one shows them. Once a series has been served, observations
// apply at once.
//
// With several Prometheus servers scraping one collector, the guarantee holds for the
// first scrape only; the others may see the first value without its zero.
type firstScrape struct {
	mu      sync.Mutex
	started uint64            // scrapes begun
	served  uint64            // the highest started value whose scrape was served
	born    map[string]uint64 // series key -> started when the series was created
	pending []pendingObservation
}

// pendingObservation is an observation held back: apply, or else one increment of
// counter, or else observer.Observe(v) (the last two need no closure allocated).
type pendingObservation struct {
	born     uint64
	apply    func()
	counter  prometheus.Counter
	observer prometheus.Observer
	v        float64
}

func (p *pendingObservation) run() {
	switch {
	case p.apply != nil:
		p.apply()
	case p.counter != nil:
		p.counter.Inc()
	default:
		p.observer.Observe(p.v)
	}
}

func newFirstScrape() *firstScrape {
	return &firstScrape{born: map[string]uint64{}}
}

// seriesKey identifies one series of a family: the family name and its label values.
func seriesKey(family string, lvs []string) string {
	return string(appendSeriesKey(nil, family, lvs))
}

// appendSeriesKey appends seriesKey(family, lvs) to b: a key built in a caller's stack
// buffer is looked up without allocating.
func appendSeriesKey(b []byte, family string, lvs []string) []byte {
	b = append(append(b, family...), 0xff)
	for i, v := range lvs {
		if i > 0 {
			b = append(b, 0xff)
		}
		b = append(b, v...)
	}
	return b
}

// keyBytes is the size of the stack buffer series keys are built in (a longer key is
// built on the heap).
const keyBytes = 192

// create registers the series key (if new) as created now.
func (f *firstScrape) create(key string) {
	f.mu.Lock()
	if _, ok := f.born[key]; !ok {
		f.born[key] = f.started
	}
	f.mu.Unlock()
}

// do runs apply now when the series key has been served, otherwise holds it back until
// it has. The series itself (at zero) must exist before do is called.
func (f *firstScrape) do(key string, apply func()) {
	f.observe([]byte(key), pendingObservation{apply: apply})
}

// observe is do for an observation p of the series key.
func (f *firstScrape) observe(key []byte, p pendingObservation) {
	f.mu.Lock()
	born, ok := f.born[string(key)]
	if !ok {
		born = f.started
		f.born[string(key)] = born
	}
	if born < f.served || len(f.pending) >= maxPendingObservations {
		f.mu.Unlock()
		p.run()
		return
	}
	p.born = born
	f.pending = append(f.pending, p)
	f.mu.Unlock()
}

// scrapeStarted is called before a scrape gathers; it returns the scrape's number for
// scrapeServed.
func (f *firstScrape) scrapeStarted() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started++
	return f.started
}

// scrapeServed is called once scrape n has been written: the series created before it
// began have now been seen at their current value, and what was held back for them is
// applied.
func (f *firstScrape) scrapeServed(n uint64) {
	f.mu.Lock()
	f.served = max(f.served, n)
	var ready []pendingObservation
	keep := f.pending[:0]
	for _, p := range f.pending {
		if p.born < f.served {
			ready = append(ready, p)
		} else {
			keep = append(keep, p)
		}
	}
	clear(f.pending[len(keep):])
	f.pending = keep
	f.mu.Unlock()
	for i := range ready {
		ready[i].run()
	}
}

// counterVec and histogramVec pair a client_golang vector with the firstScrape rule.
type counterVec struct {
	name  string
	vec   *prometheus.CounterVec
	first *firstScrape
}

// create makes the series exist at zero (for label sets known in advance).
func (c counterVec) create(lvs ...string) {
	c.vec.WithLabelValues(lvs...)
	c.first.create(seriesKey(c.name, lvs))
}

func (c counterVec) inc(lvs ...string) {
	counter := c.vec.WithLabelValues(lvs...)
	var buf [keyBytes]byte
	c.first.observe(appendSeriesKey(buf[:0], c.name, lvs), pendingObservation{counter: counter})
}

type histogramVec struct {
	name  string
	vec   *prometheus.HistogramVec
	first *firstScrape
}

func (h histogramVec) create(lvs ...string) {
	h.vec.WithLabelValues(lvs...)
	h.first.create(seriesKey(h.name, lvs))
}

func (h histogramVec) observe(v float64, lvs ...string) {
	obs := h.vec.WithLabelValues(lvs...)
	var buf [keyBytes]byte
	h.first.observe(appendSeriesKey(buf[:0], h.name, lvs), pendingObservation{observer: obs, v: v})
}
