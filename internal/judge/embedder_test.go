// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/option"
)

// embedder builds an Embedder against the fake API with cfg's embeddings block; the
// judge itself stays disabled (embeddings do not need it).
func (f *fakeAPI) embedder(t *testing.T, ec EmbeddingsConfig, onCall func(context.Context, Call)) *Embedder {
	t.Helper()
	ec.Endpoint = f.srv.URL + "/v1/"
	ec.Model = "embed-model"
	e, err := NewEmbedder(Config{Embeddings: ec}, onCall, option.WithHTTPClient(f.srv.Client()), option.WithMaxRetryDelay(20*time.Millisecond))
	if err != nil || e == nil {
		t.Fatalf("NewEmbedder: %v", err)
	}
	t.Cleanup(e.Shutdown)
	return e
}

func (f *fakeAPI) embedRequests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, r := range f.requests {
		if _, ok := r["input"]; ok {
			out = append(out, r)
		}
	}
	return out
}

// TestEmbedderRequestsAndCache: one request per evaluation carrying the query and the
// texts not cached, with the model; cosine similarities in [0,1]; the cache serves a
// text seen before (the hit rate below is what a follow-up that repeats turn texts gets).
func TestEmbedderRequestsAndCache(t *testing.T) {
	api := newFakeAPI(t)
	var calls []Call
	e := api.embedder(t, EmbeddingsConfig{}, func(_ context.Context, c Call) { calls = append(calls, c) })
	sims, err := e.Similarities("s1", "aab", []string{"aab", "cc"})
	if err != nil || len(sims) != 2 || math.Abs(sims[0]-1) > 1e-9 || sims[1] != 0 {
		t.Fatalf("similarities %v %v", sims, err)
	}
	reqs := api.embedRequests()
	if len(reqs) != 1 || reqs[0]["model"] != "embed-model" {
		t.Fatalf("requests %v", reqs)
	}
	if in := reqs[0]["input"].([]any); len(in) != 3 || in[0] != "aab" || in[2] != "cc" {
		t.Fatalf("input %v", in)
	}
	// "aab" and "cc" are cached: only "ab" is sent.
	sims, err = e.Similarities("s1", "cc", []string{"aab", "ab"})
	if err != nil || len(sims) != 2 || sims[0] != 0 {
		t.Fatalf("second similarities %v %v", sims, err)
	}
	reqs = api.embedRequests()
	if in := reqs[len(reqs)-1]["input"].([]any); len(reqs) != 2 || len(in) != 1 || in[0] != "ab" {
		t.Fatalf("second request %v", reqs[len(reqs)-1])
	}
	// Everything cached: no request at all.
	if _, err := e.Similarities("s1", "ab", []string{"cc"}); err != nil || len(api.embedRequests()) != 2 {
		t.Fatalf("cached call: %v, %d requests", err, len(api.embedRequests()))
	}
	st := e.Stats()
	if st.Calls != 2 || st.CacheHits != 4 || st.InputTokens != 10 {
		t.Fatalf("stats %+v", st)
	}
	if len(calls) != 2 || calls[0].Operation != "embeddings" || calls[0].Model != "embed-model" || calls[0].Err != nil {
		t.Fatalf("call hook %+v", calls)
	}
	if hit := float64(st.CacheHits) / float64(st.CacheHits+3+1); hit < 0.5 {
		t.Fatalf("cache hit rate %.2f", hit)
	}
}

// TestEmbedderRetries: 429 (with Retry-After) and 500 are retried up to max_retries;
// a 400 is not; the error reaches the caller once the retries are spent.
func TestEmbedderRetries(t *testing.T) {
	for _, tt := range []struct {
		name      string
		statuses  []int
		retries   int
		wantErr   bool
		wantCalls int64
	}{
		{"429 then ok", []int{429}, 2, false, 2},
		{"500 500 then ok", []int{500, 500}, 2, false, 3},
		{"500 past retries", []int{500, 500, 500}, 2, true, 3},
		{"400 not retried", []int{400}, 2, true, 1},
		{"max_retries 0 is no retry", []int{500}, 0, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t)
			api.embedReply = func(n int) (int, http.Header) {
				if n < len(tt.statuses) {
					return tt.statuses[n], http.Header{"Retry-After-Ms": {"5"}}
				}
				return http.StatusOK, nil
			}
			e := api.embedder(t, EmbeddingsConfig{MaxRetries: &tt.retries}, nil)
			_, err := e.Similarities("s", "a", []string{"b"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if got := api.embedN.Load(); got != tt.wantCalls {
				t.Fatalf("server saw %d requests, want %d", got, tt.wantCalls)
			}
			if st := e.Stats(); tt.wantErr != (st.Errors == 1) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestEmbedderTimeoutAndShutdown: a hanging server costs one timeout, never more; after
// Shutdown a call fails at once.
func TestEmbedderTimeoutAndShutdown(t *testing.T) {
	api := newFakeAPI(t)
	api.hang = make(chan struct{})
	e := api.embedder(t, EmbeddingsConfig{Timeout: 150 * time.Millisecond}, nil)
	start := time.Now()
	if _, err := e.Similarities("s", "a", []string{"b"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("a 150ms timeout took %s", d)
	}
	// The endpoint cools down: the next calls fail at once without a request.
	sent := api.embedN.Load()
	start = time.Now()
	for range 3 {
		if _, err := e.Similarities("s", "e", []string{"f"}); !errors.Is(err, ErrEmbeddingsUnavailable) {
			t.Fatalf("during the cooldown: %v", err)
		}
	}
	if d := time.Since(start); d > 100*time.Millisecond || api.embedN.Load() != sent {
		t.Fatalf("cooldown calls took %s and sent %d requests", d, api.embedN.Load()-sent)
	}
	later := time.Now().Add(EmbeddingsCooldown + time.Second)
	e.now = func() time.Time { return later }
	if _, err := e.Similarities("s", "e", []string{"f"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the cooldown the endpoint is tried again: %v", err)
	}
	e.Shutdown()
	start = time.Now()
	if _, err := e.Similarities("s", "c", []string{"d"}); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("after shutdown: %v in %s", err, time.Since(start))
	}
}

// TestEmbedderLimits: the calls-per-minute budget and the per-session cost limits refuse
// a request without sending it; another session is not charged for the first one's.
func TestEmbedderLimits(t *testing.T) {
	api := newFakeAPI(t)
	e := api.embedder(t, EmbeddingsConfig{MaxCallsPerSession: 2, MaxTokensPerSession: 100}, nil)
	for i, want := range []error{nil, nil, ErrCostLimit} {
		if _, err := e.Similarities("s1", fmt.Sprint("q", i), []string{"t"}); !errors.Is(err, want) {
			t.Fatalf("call %d: %v, want %v", i, err, want)
		}
	}
	long := strings.Repeat("a", 404) // ~101 tokens
	if _, err := e.Similarities("s2", long, nil); !errors.Is(err, ErrCostLimit) || !strings.Contains(err.Error(), "max_tokens_per_session") {
		t.Fatalf("token limit: %v", err)
	}
	if _, err := e.Similarities("s3", "x", []string{"y"}); err != nil {
		t.Fatalf("other session: %v", err)
	}
	if st := e.Stats(); st.CostLimited != 2 || st.Calls != 3 || api.embedN.Load() != 3 {
		t.Fatalf("stats %+v, server saw %d", st, api.embedN.Load())
	}

	api2 := newFakeAPI(t)
	b := api2.embedder(t, EmbeddingsConfig{CallsPerMinute: 1}, nil)
	if _, err := b.Similarities("", "a", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Similarities("", "c", []string{"d"}); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("over budget: %v", err)
	}

	// A call the calls-per-minute budget refuses is not charged to the session: with a
	// budget of 1 and a session limit of 2 calls, the refused call leaves the session
	// room for a second call once the budget allows it.
	api3 := newFakeAPI(t)
	c := api3.embedder(t, EmbeddingsConfig{CallsPerMinute: 1, MaxCallsPerSession: 2}, nil)
	if _, err := c.Similarities("s", "a", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Similarities("s", "c", []string{"d"}); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("over budget: %v", err)
	}
	c.budget.refund() // the minute has passed
	if _, err := c.Similarities("s", "e", []string{"f"}); err != nil {
		t.Fatalf("the refused call was charged to the session: %v", err)
	}
}

func TestEmbeddingsConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Embeddings: EmbeddingsConfig{Model: "m", Timeout: -1}}, "judge.embeddings.timeout"},
		{Config{Embeddings: EmbeddingsConfig{Model: "m", MaxTokensPerSession: -1}}, "judge.embeddings.max_tokens_per_session"},
		{Config{Embeddings: EmbeddingsConfig{MaxCallsPerSession: 3}}, "judge.embeddings.model"},
		{Config{Embeddings: EmbeddingsConfig{Model: "m"}}, "judge.embeddings.endpoint: required"},
		{Config{Embeddings: EmbeddingsConfig{Model: "m", Endpoint: "https://u:s3cret@x/v1"}}, "judge.embeddings.endpoint: must not carry credentials"},
		// The judge's endpoint, inherited by embeddings, is checked without the judge.
		{Config{Endpoint: "https://u:s3cret@x/v1", Embeddings: EmbeddingsConfig{Model: "m"}}, "judge.endpoint: must not carry credentials"},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", MaxTokensPerSession: -5}, "judge.max_tokens_per_session"},
	} {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	if err := (&Config{Embeddings: EmbeddingsConfig{Model: "m", Endpoint: "http://x"}}).Validate(); err != nil {
		t.Fatalf("embeddings without the judge: %v", err)
	}
	if e, err := NewEmbedder(Config{Embeddings: EmbeddingsConfig{Model: "m"}}, nil); err == nil || e != nil {
		t.Fatalf("no endpoint: %v", err)
	}
	if e, err := NewEmbedder(Config{}, nil); err != nil || e != nil {
		t.Fatalf("no model: %v %v", e, err)
	}
}

// embedderAnswering builds an Embedder (no retries) against a server whose
// /v1/embeddings answers 200 with the body body(number of inputs) returns.
func embedderAnswering(t *testing.T, body func(inputs int) string) (*Embedder, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body(len(req.Input)))
	}))
	t.Cleanup(srv.Close)
	e, err := NewEmbedder(Config{Embeddings: EmbeddingsConfig{Endpoint: srv.URL + "/v1/", Model: "embed-model", MaxRetries: new(0)}}, nil,
		option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	return e, &requests
}

// TestEmbedderResponseTooLarge: an embeddings response past MaxEmbeddingsResponseBytes
// fails with ErrResponseTooLarge, a wrong answer rather than a server down (no cooldown).
func TestEmbedderResponseTooLarge(t *testing.T) {
	pad := strings.Repeat(" ", MaxEmbeddingsResponseBytes)
	e, requests := embedderAnswering(t, func(int) string {
		return `{"object":"list","model":"embed-model","data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]` + pad + `}`
	})
	for range 2 {
		if _, err := e.Similarities("s", "a", []string{"b"}); !errors.Is(err, ErrResponseTooLarge) || len(err.Error()) > MaxErrorBytes {
			t.Fatalf("err %.300v, want ErrResponseTooLarge", err)
		}
	}
	if requests.Load() != 2 {
		t.Fatalf("%d requests: a response too large must not cool the endpoint down", requests.Load())
	}
}

// TestEmbedderMalformedVectors: an answer that does not give one usable vector per text
// (an index twice or missing, an empty or zero vector, vectors of different lengths) is
// ErrMalformed, never a similarity of 0, and nothing of it is cached: the next call asks
// again.
func TestEmbedderMalformedVectors(t *testing.T) {
	for name, data := range map[string]string{
		"index twice":      `[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]`,
		"empty vectors":    `[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]`,
		"zero vector":      `[{"index":0,"embedding":[0,0]},{"index":1,"embedding":[1,0]}]`,
		"lengths differ":   `[{"index":0,"embedding":[1,0,0]},{"index":1,"embedding":[1,0]}]`,
		"index past texts": `[{"index":0,"embedding":[1,0]},{"index":2,"embedding":[0,1]}]`,
	} {
		t.Run(name, func(t *testing.T) {
			e, requests := embedderAnswering(t, func(int) string {
				return `{"object":"list","model":"embed-model","data":` + data + `}`
			})
			for i := range 2 {
				if sims, err := e.Similarities("s", "query", []string{"text"}); !errors.Is(err, ErrMalformed) {
					t.Fatalf("call %d: %v %v, want ErrMalformed", i, sims, err)
				}
			}
			if requests.Load() != 2 || e.Stats().CacheHits != 0 {
				t.Fatalf("%d requests, stats %+v: a malformed answer must not be cached", requests.Load(), e.Stats())
			}
		})
	}

	// A new vector must have the length of the cached ones it is compared with.
	var dims atomic.Int64
	dims.Store(3)
	e, _ := embedderAnswering(t, func(n int) string {
		data := make([]map[string]any, n)
		for i := range data {
			v := make([]float64, dims.Load())
			v[i%len(v)] = 1
			data[i] = map[string]any{"index": i, "embedding": v}
		}
		b, _ := json.Marshal(map[string]any{"object": "list", "model": "embed-model", "data": data})
		return string(b)
	})
	if _, err := e.Similarities("s", "a", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	dims.Store(2)
	if _, err := e.Similarities("s", "a", []string{"c"}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a 2-dimensional vector against a cached 3-dimensional one: %v", err)
	}
}
