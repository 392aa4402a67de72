// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker // import "github.com/agenteval/agenteval-collector/internal/tracker"

import (
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/pdatautil"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// Replay reconstructs the sessions of recorded traces deterministically: every span with
// a trace and span id is extracted and fed to a Tracker one at a time in order of its end
// time (spans arrive when they end), with the clock set to that time; the clock is then
// moved past every timeout so that each session ends as it would have live (not as
// partial). The sessions are returned in the order they ended. The golden and end-to-end
// tests use it; the processor does the same thing on the wall clock.
func Replay(td ptrace.Traces, ex *conventions.Extractor, cfg Config) []*session.AgentSession {
	type rec struct {
		r   session.SpanRecord
		end int64
	}
	var recs []rec
	var ids conventions.IDBuffer
	ids.Grow(td.SpanCount())
	for ref := range pdatautil.Spans(td) {
		sp := ref.Span
		if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
			continue
		}
		// As the processor's ingest does: the message lists are decoded when the turn
		// is assembled.
		recs = append(recs, rec{end: int64(sp.EndTimestamp())})
		ex.ExtractDeferred(&ids, &recs[len(recs)-1].r, ref.Resource, ref.Scope, sp)
	}
	cfg.Extractor = ex
	// Spans arrive when they end.
	sort.SliceStable(recs, func(a, b int) bool { return recs[a].end < recs[b].end })

	tr := New(cfg)
	cfg = cfg.withDefaults()
	var out []*session.AgentSession
	collect := func(evs []Event) {
		for _, e := range evs {
			if e.Kind == EventSessionEnded {
				out = append(out, e.Session)
			}
		}
	}
	var last time.Time
	for _, r := range recs {
		now := time.Unix(0, r.end).UTC()
		if now.Before(last) {
			now = last
		}
		last = now
		collect(tr.Advance(now))
		collect(tr.Observe([]session.SpanRecord{r.r}, now))
	}
	// Past every timeout: turns settle or time out, then sessions time out.
	far := last.Add(cfg.TurnTimeout + cfg.SessionTimeout + cfg.TurnSettle + time.Second)
	collect(tr.Advance(last.Add(cfg.TurnTimeout + cfg.TurnSettle + time.Second)))
	collect(tr.Advance(far))
	collect(tr.Advance(far.Add(cfg.SessionTimeout)))
	return out
}
