// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Defaults of the embeddings client (judge.embeddings). The timeout is shorter than the
// judge's: embeddings are asked for on the evaluation worker, which waits for them.
const (
	DefaultEmbeddingsTimeout   = 5 * time.Second
	DefaultEmbeddingsCacheSize = 4096
)

// EmbeddingsCooldown is how long the embeddings endpoint is left alone after a request
// failed for want of a server (timeout, connection error, 429 or 5xx after the retries).
const EmbeddingsCooldown = 30 * time.Second

// ErrEmbeddingsUnavailable is the error of a call made during the cooldown that follows
// a failed request.
var ErrEmbeddingsUnavailable = errors.New("judge: embeddings endpoint unavailable (cooling down after a failed request)")

// Embedder embeds texts over an OpenAI-compatible /embeddings endpoint and scores
// their cosine similarity (evaluation.Similarity: CCM and intent drift). It is safe for
// concurrent use. Every request is bounded by the timeout and by a context cancelled
// at Shutdown; the cache (by SHA-256 of model + text), the calls-per-minute budget and
// the per-session cost limit (max_calls_per_session, max_tokens_per_session) are
// checked before a request is sent.
type Embedder struct {
	cfg     EmbeddingsConfig
	api     openai.Client
	budget  *budget
	ledger  *Ledger
	vectors *lru.Cache[[32]byte, []float64]
	onCall  func(context.Context, Call)
	server  Server
	ctx     context.Context
	cancel  context.CancelFunc
	now     func() time.Time
	// downUntil (unix nanoseconds) is when an endpoint that timed out or kept failing is
	// tried again: until then calls fail at once (ErrEmbeddingsUnavailable), so a hanging
	// server costs the evaluation worker one timeout per cooldown, not one per turn.
	downUntil atomic.Int64

	calls, errors, hits, denied, limited, inTok atomic.Int64
}

// NewEmbedder builds the embeddings client of cfg.Embeddings (endpoint and API key
// default to the judge's), or returns (nil, nil) when no embeddings model is
// configured. It does not need the judge to be enabled. onCall, when not nil, is called
// after every request that reached the API (not for texts served from the cache), with
// the session that asked for it in Call.SessionID.
func NewEmbedder(cfg Config, onCall func(context.Context, Call), extra ...option.RequestOption) (*Embedder, error) {
	if cfg.Embeddings.Model == "" {
		return nil, nil
	}
	if err := (&Config{Endpoint: cfg.Endpoint, Embeddings: cfg.Embeddings}).Validate(); err != nil {
		return nil, err
	}
	ec := cfg.withDefaults().Embeddings
	vectors, err := lru.New[[32]byte, []float64](ec.CacheSize)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts := append(append([]option.RequestOption{
		option.WithBaseURL(ec.Endpoint),
		option.WithMaxRetries(*ec.MaxRetries),
		option.WithRequestTimeout(ec.Timeout),
		option.WithAPIKey(lookupKey(ec.APIKeyEnv)),
		option.WithMiddleware(limitResponses(MaxEmbeddingsResponseBytes)),
	}, withoutOpenAIEnv(ec.Endpoint)...), extra...)
	return &Embedder{
		cfg: ec, api: openai.NewClient(opts...), budget: newBudget(ec.CallsPerMinute, time.Now),
		ledger: NewLedger(ec.MaxCallsPerSession, ec.MaxTokensPerSession), vectors: vectors,
		onCall: onCall, server: serverOf(ec.Endpoint), ctx: ctx, cancel: cancel, now: time.Now,
	}, nil
}

// Config returns the embeddings configuration in force (defaults applied).
func (e *Embedder) Config() EmbeddingsConfig { return e.cfg }

// Shutdown cancels the requests in flight; later calls fail at once.
func (e *Embedder) Shutdown() { e.cancel() }

// Stats returns the counters: Calls (requests sent), Errors, CacheHits (texts served
// from the cache), BudgetDenied (refused by calls_per_minute), CostLimited (refused by
// the per-session limits), InputTokens.
func (e *Embedder) Stats() Stats {
	return Stats{Calls: e.calls.Load(), Errors: e.errors.Load(), CacheHits: e.hits.Load(),
		BudgetDenied: e.denied.Load(), CostLimited: e.limited.Load(), InputTokens: e.inTok.Load()}
}

// Similarities returns the cosine similarity, clamped to [0,1], of query with each of
// texts, from one embeddings request for the texts not cached. sessionID names the
// session whose evaluation pays for the request (the per-session cost limit; "" counts
// against no session). Errors: ErrBudgetExhausted, ErrCostLimit, a timeout, an API
// error after the retries, ErrMalformed; the caller keeps its lexical similarity.
func (e *Embedder) Similarities(sessionID, query string, texts []string) ([]float64, error) {
	vs, err := e.embed(e.ctx, sessionID, append([]string{query}, texts...))
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(texts))
	for i := range texts {
		out[i] = max(0, Cosine(vs[0], vs[i+1]))
	}
	return out, nil
}

// Embed returns one vector per text, from the cache or one embeddings request for the
// texts not cached (the budget counts one call).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	return e.embed(ctx, "", texts)
}

func (e *Embedder) embed(ctx context.Context, sessionID string, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	var missing []string
	var missingIdx []int
	for i, t := range texts {
		if v, ok := e.vectors.Get(hashParts(e.cfg.Model, t)); ok {
			e.hits.Add(1)
			out[i] = v
			continue
		}
		missing = append(missing, t)
		missingIdx = append(missingIdx, i)
	}
	if len(missing) == 0 {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.now().UnixNano() < e.downUntil.Load() {
		e.errors.Add(1)
		return nil, ErrEmbeddingsUnavailable
	}
	// As Client.Judge: the calls-per-minute budget first, then the session's cost, so that
	// a call the budget refuses is not charged to the session.
	if !e.budget.allow() {
		e.denied.Add(1)
		return nil, ErrBudgetExhausted
	}
	if err := e.ledger.Spend(sessionID, estimateTokens(missing...)); err != nil {
		e.budget.refund()
		e.limited.Add(1)
		return nil, err
	}
	callerCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	call := Call{Operation: "embeddings", Model: e.cfg.Model, SessionID: sessionID, Server: e.server, Start: time.Now()}
	e.calls.Add(1)
	resp, err := e.api.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: e.cfg.Model,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: missing},
	})
	if err == nil && len(resp.Data) != len(missing) {
		err = fmt.Errorf("%w: %d embeddings for %d inputs", ErrMalformed, len(resp.Data), len(missing))
	}
	if err == nil {
		call.InputTokens = resp.Usage.PromptTokens
		e.inTok.Add(resp.Usage.PromptTokens)
		for _, d := range resp.Data {
			if d.Index < 0 || int(d.Index) >= len(missing) {
				err = fmt.Errorf("%w: embedding index %d out of range", ErrMalformed, d.Index)
				break
			}
			if out[missingIdx[d.Index]] != nil {
				err = fmt.Errorf("%w: embedding index %d given twice", ErrMalformed, d.Index)
				break
			}
			out[missingIdx[d.Index]] = d.Embedding
		}
	}
	if err == nil {
		err = checkVectors(out)
	}
	err = capError(err)
	call.End, call.Err = time.Now(), err
	if e.onCall != nil {
		e.onCall(callerCtx, call)
	}
	if err != nil {
		e.errors.Add(1)
		if serverDown(err) {
			e.downUntil.Store(e.now().Add(EmbeddingsCooldown).UnixNano())
		}
		return nil, err
	}
	for j, t := range missing {
		e.vectors.Add(hashParts(e.cfg.Model, t), out[missingIdx[j]])
	}
	return out, nil
}

// checkVectors returns ErrMalformed unless every vector is there, not empty, of one
// length (the cached ones included) and of a finite, non-zero norm: a similarity of 0
// from a vector that cannot be compared would read as "unrelated", and the vector would
// be cached.
func checkVectors(vs [][]float64) error {
	for i, v := range vs {
		if v == nil {
			return fmt.Errorf("%w: no embedding for input %d", ErrMalformed, i)
		}
		if len(v) == 0 {
			return fmt.Errorf("%w: empty embedding for input %d", ErrMalformed, i)
		}
		if len(v) != len(vs[0]) {
			return fmt.Errorf("%w: embeddings of %d and %d dimensions", ErrMalformed, len(vs[0]), len(v))
		}
		var norm float64
		for _, x := range v {
			norm += x * x
		}
		if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
			return fmt.Errorf("%w: embedding for input %d has norm %v", ErrMalformed, i, math.Sqrt(norm))
		}
	}
	return nil
}

// serverDown reports whether err says the server is unreachable or overloaded (a
// timeout, a connection error, 408, 429 or 5xx after the retries) rather than that this
// request was wrong (another 4xx, a malformed answer, the caller's cancellation).
func serverDown(err error) bool {
	var apiErr *openai.Error
	switch {
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrResponseTooLarge), errors.Is(err, context.Canceled):
		return false
	case errors.As(err, &apiErr):
		return apiErr.StatusCode == 408 || apiErr.StatusCode == 429 || apiErr.StatusCode >= 500
	}
	return true
}
