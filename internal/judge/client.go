// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agenteval/agenteval-collector/internal/text"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

// Errors of a judge call; each leaves the deterministic score in place (judge_error).
var (
	ErrDisabled        = errors.New("judge: disabled")
	ErrBudgetExhausted = errors.New("judge: calls-per-minute budget exhausted")
	ErrMalformed       = errors.New("judge: malformed verdict")
	// ErrResponseTooLarge is the error of a response whose body passes MaxResponseBytes
	// (MaxEmbeddingsResponseBytes for embeddings): it is not read further.
	ErrResponseTooLarge = errors.New("judge: response body too large")
)

// Bounds on what a response may cost and carry (docs/judge.md). A verdict is a few
// hundred bytes and an embeddings response about 20 bytes per dimension per text, so
// the body limits leave ample room; a body past them is cut off with
// ErrResponseTooLarge instead of being read whole into memory. What reaches spans and
// stored verdict rows is capped again: a verdict's reason at MaxReasonBytes and an
// error's text at MaxErrorBytes, cut on a rune boundary and ended with "…".
const (
	MaxResponseBytes           = 4 << 20
	MaxEmbeddingsResponseBytes = 32 << 20
	MaxReasonBytes             = 8 << 10
	MaxErrorBytes              = 2 << 10
)

// verdictSchema is the structured output asked of the model.
var verdictSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"score":  map[string]any{"type": "number", "description": "a decimal between 0.0 and 1.0"},
		"pass":   map[string]any{"type": "boolean"},
		"reason": map[string]any{"type": "string"},
	},
	"required":             []string{"score", "pass", "reason"},
	"additionalProperties": false,
}

// Call describes one finished judge or embeddings request, for the caller's telemetry
// (the processor emits it as a GenAI `chat` / `embeddings` span marked never to be
// evaluated).
type Call struct {
	Operation string // "chat" or "embeddings"
	Model     string
	Evaluator string
	Node      string
	// SessionID is the session whose evaluation asked for an embeddings request ("" for
	// chat calls and Embedder.Embed): the processor parents its span by it.
	SessionID string
	// Server is the endpoint's host and port (server.address, server.port; port 0 when
	// the URL names none).
	Server       Server
	Start, End   time.Time
	InputTokens  int64
	OutputTokens int64
	Err          error
}

// Server is the host and port of an endpoint URL.
type Server struct {
	Address string
	Port    int
}

// serverOf returns the host and port of endpoint (a validated URL); the port is the
// explicit one, else 443 for https and 80 for http.
func serverOf(endpoint string) Server {
	u, err := url.Parse(endpoint)
	if err != nil {
		return Server{}
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		switch u.Scheme {
		case "https":
			port = 443
		case "http":
			port = 80
		}
	}
	return Server{Address: u.Hostname(), Port: port}
}

// Stats are the judge's counters since New.
type Stats struct {
	Calls, Errors, CacheHits, BudgetDenied, Drops int64
	// CostLimited counts calls skipped by a per-session cost limit.
	CostLimited               int64
	InputTokens, OutputTokens int64
	QueueDepth                int
}

// Client judges prompts and embeds texts over an OpenAI-compatible API. It is safe for
// concurrent use. Calls are synchronous: run them off the ingest path (Pool).
type Client struct {
	cfg    Config
	chat   openai.Client
	budget *budget
	cache  *lru.Cache[[32]byte, reference.JudgeVerdict]
	onCall func(context.Context, Call)
	pool   *Pool
	server Server

	calls, errors, hits, denied, inTok, outTok atomic.Int64
}

// Option customises a Client.
type Option func(*Client)

// WithCallHook calls f, with the caller's context, after every request that reached the
// API (not cache hits).
func WithCallHook(f func(context.Context, Call)) Option { return func(c *Client) { c.onCall = f } }

// WithClock replaces time.Now for the budget (tests).
func WithClock(now func() time.Time) Option { return func(c *Client) { c.budget.now = now } }

// New builds a Client from a validated Config. extra options go to every openai-go request
// (tests pass option.WithHTTPClient).
func New(cfg Config, opts []Option, extra ...option.RequestOption) (*Client, error) {
	if !cfg.Enabled {
		return nil, ErrDisabled
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := &Client{cfg: cfg, budget: newBudget(cfg.CallsPerMinute, time.Now), server: serverOf(cfg.Endpoint)}
	var err error
	if c.cache, err = lru.New[[32]byte, reference.JudgeVerdict](cfg.CacheSize); err != nil {
		return nil, err
	}
	c.chat = openai.NewClient(clientOptions(cfg.Endpoint, cfg.APIKeyEnv, cfg, extra)...)
	for _, o := range opts {
		o(c)
	}
	c.pool = NewPool(cfg.Concurrency, cfg.QueueSize)
	return c, nil
}

// openAIHost is OpenAI's own API host, the only one that gets the OPENAI_ORG_ID and
// OPENAI_PROJECT_ID openai-go reads from the environment.
const openAIHost = "api.openai.com"

func clientOptions(endpoint, keyEnv string, cfg Config, extra []option.RequestOption) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithBaseURL(endpoint),
		option.WithMaxRetries(*cfg.MaxRetries),
		option.WithRequestTimeout(cfg.Timeout),
		option.WithAPIKey(lookupKey(keyEnv)),
		option.WithMiddleware(limitResponses(MaxResponseBytes)),
	}
	opts = append(opts, withoutOpenAIEnv(endpoint)...)
	return append(opts, extra...)
}

// withoutOpenAIEnv drops the OpenAI-Organization and OpenAI-Project headers that
// openai-go sets from OPENAI_ORG_ID and OPENAI_PROJECT_ID, unless endpoint is OpenAI's
// own API: a LiteLLM, vLLM or other server must not receive the host's OpenAI account.
func withoutOpenAIEnv(endpoint string) []option.RequestOption {
	if serverOf(endpoint).Address == openAIHost {
		return nil
	}
	return []option.RequestOption{option.WithHeaderDel("OpenAI-Organization"), option.WithHeaderDel("OpenAI-Project")}
}

// chargeKey carries a Judge call's charge function in its context (WithCharge).
type chargeKey struct{}

// WithCharge returns ctx carrying charge, which Client.Judge calls when, and only when,
// the request is about to be sent: after the cache (a hit is not charged) and the
// calls-per-minute budget (a denial is not charged). An error from charge (a per-session
// cost limit) fails the call unsent, its budget given back.
func WithCharge(ctx context.Context, charge func() error) context.Context {
	return context.WithValue(ctx, chargeKey{}, charge)
}

// maxQuotedOutput bounds the model output quoted in an ErrMalformed error, in bytes.
const maxQuotedOutput = 200

// Config returns the configuration in force: the one the client was made with, defaults
// applied.
func (c *Client) Config() Config { return c.cfg }

// Pool returns the client's worker pool.
func (c *Client) Pool() *Pool { return c.pool }

// Shutdown stops the pool (Pool.Shutdown): jobs see their context cancelled with cause
// ErrShutdown, queued ones included.
func (c *Client) Shutdown(ctx context.Context) error { return c.pool.Shutdown(ctx) }

// Stats returns the counters.
func (c *Client) Stats() Stats {
	return Stats{
		Calls: c.calls.Load(), Errors: c.errors.Load(), CacheHits: c.hits.Load(), BudgetDenied: c.denied.Load(),
		Drops: c.pool.Drops(), InputTokens: c.inTok.Load(), OutputTokens: c.outTok.Load(), QueueDepth: c.pool.Depth(),
	}
}

// Judge implements reference.Judge: the cache by content hash (model, system, prompt),
// then the budget, then one chat completion with structured output {score, pass, reason}
// (retried by the client on 429/5xx, bounded by the timeout). The verdict's score must be
// in [0,1]; pass defaults to score ≥ pass_threshold when the model omits it.
func (c *Client) Judge(ctx context.Context, req reference.JudgeRequest) (reference.JudgeVerdict, error) {
	key := hashParts(c.cfg.Model, req.System, req.Prompt)
	if v, ok := c.cache.Get(key); ok {
		c.hits.Add(1)
		return v, nil
	}
	if !c.budget.allow() {
		c.denied.Add(1)
		return reference.JudgeVerdict{}, ErrBudgetExhausted
	}
	if charge, ok := ctx.Value(chargeKey{}).(func() error); ok {
		if err := charge(); err != nil {
			c.budget.refund()
			return reference.JudgeVerdict{}, err
		}
	}
	params := openai.ChatCompletionNewParams{
		Model: c.cfg.Model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(req.System),
			openai.UserMessage(req.Prompt),
		},
		Temperature:         openai.Float(c.cfg.Temperature),
		MaxCompletionTokens: openai.Int(int64(c.cfg.MaxTokens)),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:   "verdict",
				Schema: verdictSchema,
				Strict: openai.Bool(true),
			}},
		},
	}
	call := Call{Operation: "chat", Model: c.cfg.Model, Evaluator: req.Evaluator, Node: req.Node, Server: c.server, Start: time.Now()}
	callerCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	c.calls.Add(1)
	resp, err := c.chat.Chat.Completions.New(ctx, params)
	var v reference.JudgeVerdict
	if err == nil {
		call.InputTokens, call.OutputTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
		c.inTok.Add(resp.Usage.PromptTokens)
		c.outTok.Add(resp.Usage.CompletionTokens)
		if len(resp.Choices) == 0 {
			err = fmt.Errorf("%w: no choices", ErrMalformed)
		} else {
			v, err = ParseVerdict(resp.Choices[0].Message.Content, *c.cfg.PassThreshold)
		}
	}
	err = capError(err)
	call.End, call.Err = time.Now(), err
	if c.onCall != nil {
		c.onCall(callerCtx, call)
	}
	if err != nil {
		c.errors.Add(1)
		return reference.JudgeVerdict{}, err
	}
	c.cache.Add(key, v)
	return v, nil
}

// rawVerdict is a verdict object as the model wrote it.
type rawVerdict struct {
	Score  json.RawMessage `json:"score"`
	Pass   *bool           `json:"pass"`
	Reason string          `json:"reason"`
}

// firstVerdict returns the first JSON object in s that decodes and has a score (not
// null: the last of duplicate keys counts), trying each '{' at the top level of the text:
// never one inside an object already read, decoded or not (a malformed verdict's nested
// {"score": ...} is not the verdict); text before and after it is ignored. found tells
// whether any object decoded; err is the first decoding error, for the message when none
// did.
func firstVerdict(s string) (raw rawVerdict, ok, found bool, err error) {
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		i += j
		var r rawVerdict
		d := json.NewDecoder(strings.NewReader(s[i:]))
		if derr := d.Decode(&r); derr != nil {
			if err == nil {
				err = derr
			}
			end := braceSpanEnd(s[i:])
			if end < 0 {
				break // the rest of the text is inside this object
			}
			i += end
			continue
		}
		found = true
		if len(r.Score) > 0 && string(r.Score) != "null" {
			return r, true, true, nil
		}
		i += int(d.InputOffset()) - 1 // past this object: its inner objects are its fields
	}
	return rawVerdict{}, false, found, err
}

// braceSpanEnd returns the index of the '}' that closes the '{' at s[0], counting braces
// outside JSON strings (with their escapes), or -1 when it is not closed.
func braceSpanEnd(s string) int {
	depth, inString := 0, false
	for k := 0; k < len(s); k++ {
		switch c := s[k]; {
		case inString && c == '\\':
			k++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// ParseVerdict reads {score, pass, reason} from a model's answer: the JSON object alone,
// or the first object with a score in surrounding text or a code fence (text after it may
// hold braces). score must be a number (or a string holding only a number, spaces around
// it aside) in [0,1]; a missing or null score is ErrMalformed; a missing pass is
// score ≥ passThreshold. The reason is capped at MaxReasonBytes.
func ParseVerdict(content string, passThreshold float64) (reference.JudgeVerdict, error) {
	s := strings.TrimSpace(content)
	if !strings.Contains(s, "{") {
		return reference.JudgeVerdict{}, fmt.Errorf("%w: no JSON object in %q", ErrMalformed, text.Truncate(content, maxQuotedOutput))
	}
	raw, ok, found, err := firstVerdict(s)
	switch {
	case !ok && found:
		// A null score is no score: json.Unmarshal would leave a float at 0, a silent fail.
		return reference.JudgeVerdict{}, fmt.Errorf("%w: no score in %q", ErrMalformed, text.Truncate(content, maxQuotedOutput))
	case !ok:
		return reference.JudgeVerdict{}, fmt.Errorf("%w: %v in %q", ErrMalformed, err, text.Truncate(content, maxQuotedOutput))
	}
	var score float64
	if err := json.Unmarshal(raw.Score, &score); err != nil {
		var str string
		if json.Unmarshal(raw.Score, &str) != nil {
			return reference.JudgeVerdict{}, fmt.Errorf("%w: score %s is not a number", ErrMalformed, text.Truncate(string(raw.Score), maxQuotedOutput))
		}
		// The whole string is the number: "1/5" or "0.9 out of 10" is not 1 or 0.9.
		if score, err = strconv.ParseFloat(strings.TrimSpace(str), 64); err != nil {
			return reference.JudgeVerdict{}, fmt.Errorf("%w: score %s is not a number", ErrMalformed, text.Truncate(string(raw.Score), maxQuotedOutput))
		}
	}
	if math.IsNaN(score) || score < 0 || score > 1 {
		return reference.JudgeVerdict{}, fmt.Errorf("%w: score %v not in [0,1]", ErrMalformed, score)
	}
	v := reference.JudgeVerdict{Score: score, Reason: CapReason(raw.Reason), Pass: score >= passThreshold}
	if raw.Pass != nil {
		v.Pass = *raw.Pass
	}
	return v, nil
}

// Cosine is the cosine of two vectors (0 for a zero vector or different lengths).
func Cosine(a, b []float64) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return min(1, dot/math.Sqrt(na*nb))
}

func hashParts(parts ...string) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write([]byte(p))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
