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
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeAPI is an httptest server speaking OpenAI chat completions and embeddings.
type fakeAPI struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	requests []map[string]any
	// reply returns status, headers and body for the n-th chat request (0-based).
	reply func(n int, req map[string]any) (int, http.Header, string)
	hang  chan struct{}
	chatN atomic.Int64
	// embedReply, when set, returns the status and headers of the n-th embeddings
	// request (0-based); 200 serves the vectors.
	embedReply func(n int) (int, http.Header)
	embedN     atomic.Int64
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		if f.hang != nil {
			close(f.hang)
		}
		f.srv.Close()
	})
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	if f.hang != nil {
		select {
		case <-f.hang:
		case <-r.Context().Done():
		}
		return
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		n := int(f.chatN.Add(1) - 1)
		status, hdr, content := http.StatusOK, http.Header{}, `{"score":0.8,"pass":true,"reason":"ok"}`
		if f.reply != nil {
			status, hdr, content = f.reply(n, req)
		}
		for k, v := range hdr {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":%q}}`, content)
			return
		}
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req["model"],
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
		})
		_, _ = w.Write(b)
	case "/v1/embeddings":
		n := int(f.embedN.Add(1) - 1)
		if f.embedReply != nil {
			if status, hdr := f.embedReply(n); status != http.StatusOK {
				for k, v := range hdr {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				fmt.Fprintf(w, `{"error":{"message":"status %d"}}`, status)
				return
			}
		}
		inputs, _ := req["input"].([]any)
		data := make([]any, len(inputs))
		for i, in := range inputs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": vectorFor(in.(string))}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req["model"],
			"usage": map[string]any{"prompt_tokens": 5, "total_tokens": 5}})
	default:
		http.NotFound(w, r)
	}
}

// vectorFor embeds a text as letter counts of a, b, c (enough for cosine checks), and a
// fourth dimension set only for a text without any, so that no vector is zero (a zero
// vector is a malformed embedding).
func vectorFor(s string) []float64 {
	a, b, c := float64(strings.Count(s, "a")), float64(strings.Count(s, "b")), float64(strings.Count(s, "c"))
	if a+b+c == 0 {
		return []float64{0, 0, 0, 1}
	}
	return []float64{a, b, c, 0}
}

func (f *fakeAPI) chatRequests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, r := range f.requests {
		if _, ok := r["messages"]; ok {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeAPI) config() Config {
	return Config{Enabled: true, Endpoint: f.srv.URL + "/v1/", Model: "judge-model", Rubric: "shared rubric",
		Timeout: 5 * time.Second, Embeddings: EmbeddingsConfig{Model: "embed-model"}}
}

func (f *fakeAPI) client(t *testing.T, cfg Config, opts ...Option) *Client {
	t.Helper()
	c, err := New(cfg, opts, option.WithHTTPClient(f.srv.Client()), option.WithMaxRetryDelay(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}

func userPrompt(req map[string]any) (system, user string) {
	msgs := req["messages"].([]any)
	return msgs[0].(map[string]any)["content"].(string), msgs[1].(map[string]any)["content"].(string)
}

func TestJudgeInteractionsPrompts(t *testing.T) {
	api := newFakeAPI(t)
	cfg := api.config()
	cfg.Rubrics = map[string]string{"planner": "planner rubric", "executor": "executor rubric"}
	c := api.client(t, cfg)
	ev := reference.NewInteractionsEvaluator("interactions", reference.InteractionsOptions{
		Rubric: cfg.Rubric, Rubrics: cfg.Rubrics, Judge: c,
	})
	ex := reference.Example{Input: "Process data pipeline", Metadata: map[string]any{"expected_interactions": []any{
		map[string]any{"node_name": "planner"},
		map[string]any{"node_name": "executor", "dependencies": []any{"planner"}},
		map[string]any{"node_name": "validator", "dependencies": []any{"executor"}},
	}}}
	out := []reference.Interaction{{NodeName: "planner", Messages: "plan"}, {NodeName: "executor", Dependencies: []string{"planner"}, Messages: "run"}, {NodeName: "validator", Dependencies: []string{"executor"}, Messages: "check"}}
	res, err := ev.Evaluate(context.Background(), ex, out)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Score-0.8) > 1e-9 || !res.Pass || res.Details["judge_error"] != nil {
		t.Fatalf("result %+v", res)
	}
	reqs := api.chatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d chat requests, want 3", len(reqs))
	}
	for i, want := range []string{"<Rubric>planner rubric</Rubric>", "<Rubric>executor rubric</Rubric>", "<Rubric>shared rubric</Rubric>"} {
		system, user := userPrompt(reqs[i])
		if !strings.Contains(user, want) {
			t.Errorf("request %d: rubric %q not in %s", i, want, user)
		}
		if system != reference.DefaultInteractionsSystemPrompt {
			t.Errorf("request %d: system prompt %q", i, system)
		}
		if reqs[i]["model"] != "judge-model" {
			t.Errorf("model %v", reqs[i]["model"])
		}
		rf, _ := reqs[i]["response_format"].(map[string]any)
		if rf["type"] != "json_schema" {
			t.Errorf("response_format %v", rf)
		}
	}
	// The ±1 window of the middle interaction holds all three expected interactions.
	_, mid := userPrompt(reqs[1])
	if strings.Count(mid, "<RelevantExpectedInteraction>") != 3 {
		t.Errorf("window of interaction 1: %s", mid)
	}
	_, first := userPrompt(reqs[0])
	if strings.Count(first, "<RelevantExpectedInteraction>") != 2 || !strings.Contains(first, "<Input>Process data pipeline</Input>") {
		t.Errorf("first prompt: %s", first)
	}
	st := c.Stats()
	if st.Calls != 3 || st.InputTokens != 300 || st.OutputTokens != 60 || st.Errors != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestParseVerdict(t *testing.T) {
	for _, tc := range []struct {
		in    string
		score float64
		pass  bool
		err   bool
	}{
		{`{"score":0.9,"pass":true,"reason":"good"}`, 0.9, true, false},
		{"```json\n{\"score\": 0.4, \"pass\": false, \"reason\": \"weak\"}\n```", 0.4, false, false},
		{`Here is my verdict: {"score": 0.7, "reason": "fine"} Thanks.`, 0.7, true, false},
		{`{"score":"0.25","reason":"string score"}`, 0.25, false, false},
		{`{"score":0.6,"pass":false}`, 0.6, false, false},
		{`{"score":7,"pass":true}`, 0, false, true},
		{`{"score":-0.1}`, 0, false, true},
		{`{"pass":true,"reason":"no score"}`, 0, false, true},
		{`{"score":"high"}`, 0, false, true},
		// JSON null is no score, also as the last of duplicate keys.
		{`{"score":null,"pass":false,"reason":"cannot judge"}`, 0, false, true},
		{`{"score":0.9,"score":null,"pass":true}`, 0, false, true},
		// A score string is a number and nothing else.
		{`{"score":" 0.3 ","reason":"padded"}`, 0.3, false, false},
		{`{"score":"1/5","reason":"one of five criteria"}`, 0, false, true},
		{`{"score":"0.5abc"}`, 0, false, true},
		{`{"score":"0.9 out of 10"}`, 0, false, true},
		{`{"score":"NaN"}`, 0, false, true},
		// The first object with a score, whatever braces the text around it holds.
		{`{"score":0.8,"pass":true,"reason":"ok"} (format used: {score, pass, reason})`, 0.8, true, false},
		{`Verdict: {"score":0.8,"pass":false,"reason":"ok"}. Rubric applied: {"clarity"}`, 0.8, false, false},
		{`<think>The answer must be {"score": x}.</think>{"score":0.2,"pass":false,"reason":"ok"}`, 0.2, false, false},
		{`Criteria {"clarity":1}, then {"score":0.9,"reason":"ok"}`, 0.9, true, false},
		{`{"verdict":{"score":0.9}}`, 0, false, true}, // a field's object is not the verdict
		// Nor one inside a verdict that does not decode (review of the first version).
		{`{"score": 0.9, "pass": tru, "details": {"score": 0.1, "pass": false}}`, 0, false, true},
		{`{"score": 0.95, "reason": "the agent said "done"", "breakdown": {"score": 0.0}}`, 0, false, true},
		{`{"score": 0.9, "note": "a } in a string", "x": {"score": 0.1}, bad} then {"score":0.3}`, 0.3, false, false},
		{`score: 0.9`, 0, false, true},
		{`{"score":0.9,`, 0, false, true},
		{``, 0, false, true},
	} {
		v, err := ParseVerdict(tc.in, 0.5)
		if tc.err {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%q: err %v, want ErrMalformed", tc.in, err)
			}
			continue
		}
		if err != nil || v.Score != tc.score || v.Pass != tc.pass {
			t.Errorf("%q: %+v %v, want %v %t", tc.in, v, err, tc.score, tc.pass)
		}
	}
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{`{"score":0.5,"pass":true,"reason":"x"}`, "```{\"score\":1}```", `{"score":"0.3"}`, `{}`, `{{}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVerdict(s, 0.5)
		if err == nil && !(v.Score >= 0 && v.Score <= 1) {
			t.Fatalf("accepted score %v from %q", v.Score, s)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error not ErrMalformed: %v", err)
		}
	})
}

func TestMalformedOutputKeepsDeterministic(t *testing.T) {
	api := newFakeAPI(t)
	api.reply = func(int, map[string]any) (int, http.Header, string) { return http.StatusOK, nil, "I think it is fine." }
	c := api.client(t, api.config())
	ev := reference.NewInteractionsEvaluator("", reference.InteractionsOptions{Rubric: "r", Judge: c})
	res, err := ev.Evaluate(context.Background(), reference.Example{Reference: []reference.Interaction{{NodeName: "a"}}},
		[]reference.Interaction{{NodeName: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	je, _ := res.Details["judge_error"].(string)
	if res.Score != 1 || !res.Pass || !strings.Contains(je, "malformed verdict") {
		t.Fatalf("%+v", res)
	}
	if c.Stats().Errors != 1 {
		t.Fatalf("stats %+v", c.Stats())
	}
}

func TestRetries(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			api := newFakeAPI(t)
			api.reply = func(n int, _ map[string]any) (int, http.Header, string) {
				if n < 2 {
					return status, http.Header{"Retry-After-Ms": {"5"}}, "slow down"
				}
				return http.StatusOK, nil, `{"score":1,"pass":true,"reason":"third time"}`
			}
			c := api.client(t, api.config())
			v, err := c.Judge(context.Background(), reference.JudgeRequest{System: "s", Prompt: "p"})
			if err != nil || v.Reason != "third time" || api.chatN.Load() != 3 {
				t.Fatalf("verdict %+v err %v after %d requests", v, err, api.chatN.Load())
			}
		})
	}
	// Retries are bounded: max_retries 1 = 2 attempts, then the error.
	api := newFakeAPI(t)
	api.reply = func(int, map[string]any) (int, http.Header, string) { return http.StatusTooManyRequests, nil, "quota" }
	cfg := api.config()
	cfg.MaxRetries = new(1)
	c := api.client(t, cfg)
	if _, err := c.Judge(context.Background(), reference.JudgeRequest{Prompt: "p"}); err == nil || api.chatN.Load() != 2 {
		t.Fatalf("err %v after %d requests, want an error after 2", err, api.chatN.Load())
	}
	// An explicit max_retries 0 is one attempt, not the default 2 retries.
	api0 := newFakeAPI(t)
	api0.reply = func(int, map[string]any) (int, http.Header, string) {
		return http.StatusServiceUnavailable, nil, "down"
	}
	cfg0 := api0.config()
	cfg0.MaxRetries = new(0)
	c0 := api0.client(t, cfg0)
	if _, err := c0.Judge(context.Background(), reference.JudgeRequest{Prompt: "p"}); err == nil || api0.chatN.Load() != 1 {
		t.Fatalf("max_retries 0: err %v after %d requests, want an error after 1", err, api0.chatN.Load())
	}
	// A 400 is not retried.
	api2 := newFakeAPI(t)
	api2.reply = func(int, map[string]any) (int, http.Header, string) { return http.StatusBadRequest, nil, "bad" }
	c2 := api2.client(t, api2.config())
	if _, err := c2.Judge(context.Background(), reference.JudgeRequest{Prompt: "p"}); err == nil || api2.chatN.Load() != 1 {
		t.Fatalf("400: err %v after %d requests", err, api2.chatN.Load())
	}
}

// TestPassThreshold: a verdict without pass passes at score >= pass_threshold, 0.5 when
// unset; an explicit 0 passes every score.
func TestPassThreshold(t *testing.T) {
	api := newFakeAPI(t)
	api.reply = func(int, map[string]any) (int, http.Header, string) {
		return http.StatusOK, nil, `{"score":0.1,"reason":"weak"}`
	}
	cfg := api.config()
	if v, err := api.client(t, cfg).Judge(context.Background(), reference.JudgeRequest{Prompt: "p"}); err != nil || v.Pass {
		t.Fatalf("default threshold: %+v %v, want a fail", v, err)
	}
	cfg.PassThreshold = new(0.0)
	if v, err := api.client(t, cfg).Judge(context.Background(), reference.JudgeRequest{Prompt: "p"}); err != nil || !v.Pass {
		t.Fatalf("pass_threshold 0: %+v %v, want a pass", v, err)
	}
}

func TestTimeout(t *testing.T) {
	api := newFakeAPI(t)
	api.hang = make(chan struct{})
	cfg := api.config()
	cfg.Timeout = 200 * time.Millisecond
	c := api.client(t, cfg)
	start := time.Now()
	_, err := c.Judge(context.Background(), reference.JudgeRequest{Prompt: "p"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a 200ms timeout took %s", d)
	}
}

func TestBudgetAndCache(t *testing.T) {
	api := newFakeAPI(t)
	cfg := api.config()
	cfg.CallsPerMinute = 2
	now := time.Unix(0, 0)
	c := api.client(t, cfg, WithClock(func() time.Time { return now }))
	ctx := context.Background()
	for i, want := range []error{nil, nil, ErrBudgetExhausted} {
		_, err := c.Judge(ctx, reference.JudgeRequest{Prompt: fmt.Sprint("p", i)})
		if !errors.Is(err, want) {
			t.Fatalf("call %d: err %v, want %v", i, err, want)
		}
	}
	// A cached prompt costs no budget.
	if _, err := c.Judge(ctx, reference.JudgeRequest{Prompt: "p0"}); err != nil {
		t.Fatalf("cached call: %v", err)
	}
	now = now.Add(30 * time.Second) // refills one call
	if _, err := c.Judge(ctx, reference.JudgeRequest{Prompt: "p3"}); err != nil {
		t.Fatalf("after refill: %v", err)
	}
	if _, err := c.Judge(ctx, reference.JudgeRequest{Prompt: "p4"}); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("after one refill: %v", err)
	}
	st := c.Stats()
	if st.Calls != 3 || st.CacheHits != 1 || st.BudgetDenied != 2 || api.chatN.Load() != 3 {
		t.Fatalf("stats %+v, server saw %d", st, api.chatN.Load())
	}
}

func TestPoolNeverBlocks(t *testing.T) {
	p := NewPool(2, 3)
	release := make(chan struct{})
	var ran atomic.Int64
	hang := func(ctx context.Context) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		ran.Add(1)
	}
	start := time.Now()
	accepted := 0
	for range 100 {
		if err := p.Submit(hang); err == nil {
			accepted++
		} else if !errors.Is(err, ErrQueueFull) {
			t.Fatalf("submit: %v", err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("100 submits to a hanging pool took %s", d)
	}
	// 2 running + 3 queued at most (a worker may not have picked its job yet).
	if accepted > 5 || accepted < 3 || p.Drops() != int64(100-accepted) {
		t.Fatalf("accepted %d drops %d", accepted, p.Drops())
	}
	close(release)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Submit(hang); !errors.Is(err, ErrShutdown) {
		t.Fatalf("submit after shutdown: %v", err)
	}
}

// TestPoolShutdownRunsQueuedJobs: at Shutdown a running job sees its context cancelled
// and a queued one still runs, with that context, so that each can record what it did
// not do; both read ErrShutdown as the cause.
func TestPoolShutdownRunsQueuedJobs(t *testing.T) {
	p := NewPool(1, 1)
	started := make(chan struct{}, 1)
	causes := make(chan error, 2)
	job := func(ctx context.Context) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
	}
	if err := p.Submit(job); err != nil {
		t.Fatal(err)
	}
	<-started // the worker holds the first job
	if err := p.Submit(job); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(causes)
	var n int
	for err := range causes {
		if !errors.Is(err, ErrShutdown) {
			t.Fatalf("cause %v", err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d of 2 jobs ran", n)
	}
}

func TestSampled(t *testing.T) {
	in := 0
	for i := range 20000 {
		if Sampled(fmt.Sprint("conv-", i), 0.25, "") {
			in++
		}
	}
	if frac := float64(in) / 20000; math.Abs(frac-0.25) > 0.02 {
		t.Fatalf("rate 0.25 sampled %.3f", frac)
	}
	// Same id, same answer; a salt decorrelates.
	same, differ := 0, 0
	for i := range 1000 {
		id := fmt.Sprint("c", i)
		first, again := Sampled(id, 0.5, ""), Sampled(id, 0.5, "")
		if first == again {
			same++
		}
		if Sampled(id, 0.5, "") != Sampled(id, 0.5, "rule-x") {
			differ++
		}
	}
	if same != 1000 || differ < 400 || differ > 600 {
		t.Fatalf("same %d differ %d", same, differ)
	}
	if !Sampled("x", 1, "") || Sampled("x", 0, "") {
		t.Fatal("rate bounds")
	}
	if !NearThreshold(0.72, 0.7, 0.05) || NearThreshold(0.9, 0.7, 0.05) || !NearThreshold(0.9, 0.7, 0) {
		t.Fatal("NearThreshold")
	}
}

func TestConfigValidate(t *testing.T) {
	neg := -0.1
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, ""},
		{Config{Enabled: true, Model: "m", Rubric: "r"}, "judge.endpoint"},
		{Config{Enabled: true, Endpoint: "http://x", Rubric: "r"}, "judge.model"},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m"}, "judge.rubric"},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", Concurrency: -1}, "judge.concurrency"},
		// Allocated when the client is made: 4e9 queue slots ran validate out of memory.
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", Concurrency: 5_000_000}, "judge.concurrency: must be at most 256 (got 5000000)"},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", QueueSize: 4_000_000_000}, "judge.queue_size: must be at most 100000 (got 4000000000)"},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", Concurrency: 256, QueueSize: 100_000}, ""},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", SampleRate: &neg}, "judge.sample_rate"},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", Metrics: []Metric{"vibes"}}, "judge.metrics[0]"},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Metrics: []Metric{MetricReasoning}}, ""},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubrics: map[string]string{"a": "r"}}, ""},
		// NaN passes a "< 0 || > 1" check; YAML spells it .nan.
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", PassThreshold: new(math.NaN())}, "judge.pass_threshold"},
		{Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r", NearThresholdMargin: math.NaN()}, "judge.near_threshold_margin"},
		// Credentials in the URL would reach error texts (spans, stored rows): api_key_env.
		{Config{Enabled: true, Endpoint: "http://proxyuser:s3cret@x/v1", Model: "m", Rubric: "r"}, "judge.endpoint: must not carry credentials"},
		{Config{Enabled: true, Endpoint: "http://proxyuser@x/v1", Model: "m", Rubric: "r"}, "judge.endpoint: must not carry credentials"},
		{Config{Enabled: true, Endpoint: "localhost:8080/v1", Model: "m", Rubric: "r"}, "judge.endpoint: must be an http or https URL"},
	} {
		err := tc.cfg.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: err %v, want %q", tc.cfg, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
	if _, err := New(Config{}, nil); !errors.Is(err, ErrDisabled) {
		t.Fatalf("New of a disabled config: %v", err)
	}
}

func TestProvenance(t *testing.T) {
	a := Config{Enabled: true, Endpoint: "http://x", Model: "m", Rubric: "r"}
	b := a
	b.APIKeyEnv = "OTHER_KEY"
	c := a
	c.Rubrics = map[string]string{"planner": "p"}
	pa, pb, pc := a.Provenance("interactions"), b.Provenance("interactions"), c.Provenance("interactions")
	if pa.Type != semconv.EvaluatorTypeLLMJudge || pa.ID != "interactions" || len(pa.Version) != 12 {
		t.Fatalf("%+v", pa)
	}
	if pa.Version != pb.Version {
		t.Fatal("the API key env must not change the version")
	}
	if pa.Version == pc.Version {
		t.Fatal("a rubric change must change the version")
	}
}

// TestResponseBounds: a response body past MaxResponseBytes is not read whole (a clear
// ErrResponseTooLarge, not retried), and what a response may still carry into spans and
// stored rows is capped: the reason at MaxReasonBytes, the error text at MaxErrorBytes,
// both cut on a rune boundary.
func TestResponseBounds(t *testing.T) {
	huge := strings.Repeat("x", MaxResponseBytes)
	for _, status := range []int{http.StatusOK, http.StatusBadRequest} {
		api := newFakeAPI(t)
		api.reply = func(int, map[string]any) (int, http.Header, string) {
			return status, nil, `{"score":0.9,"pass":true,"reason":"` + huge + `"}`
		}
		_, err := api.client(t, api.config()).Judge(context.Background(), reference.JudgeRequest{Prompt: "p"})
		if !errors.Is(err, ErrResponseTooLarge) || len(err.Error()) > MaxErrorBytes || api.chatN.Load() != 1 {
			t.Fatalf("status %d: err %.300v (%d bytes) after %d requests, want ErrResponseTooLarge", status, err, len(fmt.Sprint(err)), api.chatN.Load())
		}
	}

	long := strings.Repeat("é", 64<<10) // 128 KiB, under the response limit
	api := newFakeAPI(t)
	api.reply = func(n int, _ map[string]any) (int, http.Header, string) {
		if n == 0 {
			return http.StatusOK, nil, `{"score":0.9,"pass":true,"reason":"` + long + `"}`
		}
		return http.StatusBadRequest, nil, long
	}
	c := api.client(t, api.config())
	v, err := c.Judge(context.Background(), reference.JudgeRequest{Prompt: "p0"})
	if err != nil || len(v.Reason) > MaxReasonBytes || len(v.Reason) < MaxReasonBytes-8 || !utf8.ValidString(v.Reason) || !strings.HasSuffix(v.Reason, "…") {
		t.Fatalf("reason of %d bytes (valid UTF-8 %t), err %v", len(v.Reason), utf8.ValidString(v.Reason), err)
	}
	var seen Call
	c.onCall = func(_ context.Context, cl Call) { seen = cl }
	_, err = c.Judge(context.Background(), reference.JudgeRequest{Prompt: "p1"})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Fatalf("err %.300v, want the API error kept", err)
	}
	for _, e := range []error{err, seen.Err} {
		if e == nil || len(e.Error()) > MaxErrorBytes || !utf8.ValidString(e.Error()) {
			t.Fatalf("error text of %d bytes", len(fmt.Sprint(e)))
		}
	}
}

// TestWithCharge: the charge runs only for a request about to be sent, never for a cache
// hit or a budget denial; a charge that fails sends nothing and gives the budget back.
func TestWithCharge(t *testing.T) {
	api := newFakeAPI(t)
	cfg := api.config()
	cfg.CallsPerMinute = 1
	now := time.Unix(0, 0)
	c := api.client(t, cfg, WithClock(func() time.Time { return now }))
	charged := 0
	refuse := false
	ctx := WithCharge(context.Background(), func() error {
		if refuse {
			return ErrCostLimit
		}
		charged++
		return nil
	})
	refuse = true
	if _, err := c.Judge(ctx, reference.JudgeRequest{Prompt: "p0"}); !errors.Is(err, ErrCostLimit) || api.chatN.Load() != 0 {
		t.Fatalf("refused charge: %v, %d requests", err, api.chatN.Load())
	}
	refuse = false
	if _, err := c.Judge(ctx, reference.JudgeRequest{Prompt: "p0"}); err != nil {
		t.Fatalf("the refused charge gave its budget back: %v", err)
	}
	if _, err := c.Judge(ctx, reference.JudgeRequest{Prompt: "p0"}); err != nil {
		t.Fatalf("cached: %v", err)
	}
	if _, err := c.Judge(ctx, reference.JudgeRequest{Prompt: "p1"}); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("over budget: %v", err)
	}
	if charged != 1 || api.chatN.Load() != 1 {
		t.Fatalf("charged %d times for %d requests, want 1 and 1", charged, api.chatN.Load())
	}
}

// TestOpenAIEnvHeaders: the OpenAI organisation and project openai-go reads from the
// environment reach OpenAI's API only, never another configured endpoint.
func TestOpenAIEnvHeaders(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-acme")
	t.Setenv("OPENAI_PROJECT_ID", "proj-acme")
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"{\"score\":1,\"pass\":true,\"reason\":\"r\"}"}}]}`))
	}))
	defer srv.Close()
	c, err := New(Config{Enabled: true, Endpoint: srv.URL + "/v1", Model: "m", Rubric: "r"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Shutdown(context.Background()) }()
	if _, err := c.Judge(context.Background(), reference.JudgeRequest{System: "s", Prompt: "p"}); err != nil {
		t.Fatal(err)
	}
	if o, p := got.Get("OpenAI-Organization"), got.Get("OpenAI-Project"); o != "" || p != "" {
		t.Fatalf("a third-party endpoint got OpenAI-Organization %q, OpenAI-Project %q", o, p)
	}
	if opts := withoutOpenAIEnv("https://api.openai.com/v1"); opts != nil {
		t.Fatalf("OpenAI's own API loses the headers: %d options", len(opts))
	}
}
