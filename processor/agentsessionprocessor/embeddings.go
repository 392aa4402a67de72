// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/metric"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

// sessionEmbeddings is the optional embeddings client (judge.embeddings.model set, with
// or without the judge). The evaluator asks it for similarities on the evaluation
// worker (CCM, intent drift; docs/scoring.md §5.5), never on the ingest path; each
// request is bounded by judge.embeddings.timeout and a failing endpoint is left alone
// for judge.EmbeddingsCooldown, so a hanging server slows evaluations, never spans.
type sessionEmbeddings struct {
	e         *judge.Embedder
	lastStats judge.Stats // recorded by record (worker only)

	// pending holds the requests made for each session since its last event was
	// emitted (the shards evaluate sessions in parallel, hence the lock).
	mu      sync.Mutex
	pending map[string][]judge.Call
}

func newSessionEmbeddings(cfg judge.Config) (*sessionEmbeddings, error) {
	s := &sessionEmbeddings{pending: map[string][]judge.Call{}}
	e, err := judge.NewEmbedder(cfg, s.collect)
	if err != nil || e == nil {
		return nil, err
	}
	s.e = e
	return s, nil
}

// collect is the embedder's call hook: it keeps a request made for a session's
// evaluation until that evaluation's spans are emitted (addCallSpans).
func (s *sessionEmbeddings) collect(_ context.Context, c judge.Call) {
	if c.SessionID == "" {
		return // not asked by an evaluation (Embedder.Embed): no span to hang it on
	}
	s.mu.Lock()
	s.pending[c.SessionID] = append(s.pending[c.SessionID], c)
	s.mu.Unlock()
}

// addCallSpans appends to b one GenAI embeddings span per request made for session id
// since the last call (cache hits made none), children of the evaluation span the
// session's event emitted last (its turn's or its session's: b's spans from index
// mark on); marked agent_eval.judge like the judge's chat spans, so that no processor
// evaluates them. Without such a span (its ids did not decode, already counted as
// skipped) the requests stay in the metrics only.
func (s *sessionEmbeddings) addCallSpans(b *evalBatch, id string, mark int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	calls := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if len(calls) == 0 || b.spans.Len() <= mark {
		return
	}
	parent := b.spans.At(b.spans.Len() - 1)
	for _, c := range calls {
		addJudgeCallSpan(b, parent, c)
	}
}

// scoring returns the scoring configuration with the embeddings as its Similarity.
func (s *sessionEmbeddings) scoring(c evaluation.Config) evaluation.Config {
	if s != nil {
		c.Similarity = s.e
	}
	return c
}

// shutdown cancels the requests in flight: the evaluations that follow (the sessions
// closed at shutdown) use the lexical similarity, so shutdown never waits for a server.
func (s *sessionEmbeddings) shutdown() {
	if s != nil {
		s.e.Shutdown()
	}
}

// record adds the embeddings' counters since the last call to the judge's series
// (calls, errors, cache hits, budget denials as dropped, cost-limited, tokens).
func (s *sessionEmbeddings) record(ctx context.Context, tb *metadata.TelemetryBuilder) {
	if s == nil {
		return
	}
	st := s.e.Stats()
	recordJudgeStats(ctx, tb, st, s.lastStats)
	s.lastStats = st
}

// recordJudgeStats adds the increase from prev to st of judge or embeddings counters to
// the processor's judge series.
func recordJudgeStats(ctx context.Context, tb *metadata.TelemetryBuilder, st, prev judge.Stats) {
	add := func(f func(context.Context, int64, ...metric.AddOption), now, before int64) {
		if d := now - before; d > 0 {
			f(ctx, d)
		}
	}
	add(tb.ProcessorAgentsessionJudgeCalls.Add, st.Calls, prev.Calls)
	add(tb.ProcessorAgentsessionJudgeErrors.Add, st.Errors, prev.Errors)
	add(tb.ProcessorAgentsessionJudgeCacheHits.Add, st.CacheHits, prev.CacheHits)
	add(tb.ProcessorAgentsessionJudgeDropped.Add, st.Drops+st.BudgetDenied, prev.Drops+prev.BudgetDenied)
	add(tb.ProcessorAgentsessionJudgeCostLimited.Add, st.CostLimited, prev.CostLimited)
	add(tb.ProcessorAgentsessionJudgeTokens.Add, st.InputTokens+st.OutputTokens, prev.InputTokens+prev.OutputTokens)
}
