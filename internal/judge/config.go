// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"time"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// Metric is what the judge may be asked to judge.
type Metric string

// Judged metrics (the `judge.metrics` config list).
const (
	MetricInteractions    Metric = "interactions"
	MetricReasoning       Metric = "reasoning"
	MetricResponseQuality Metric = "response_quality"
	MetricHandoff         Metric = "handoff"
	MetricHallucination   Metric = "hallucination"
	MetricIntentDrift     Metric = "intent_drift"
	MetricTaskCompletion  Metric = "task_completion"
)

var knownMetrics = []Metric{MetricInteractions, MetricReasoning, MetricResponseQuality, MetricHandoff,
	MetricHallucination, MetricIntentDrift, MetricTaskCompletion}

// Defaults.
const (
	DefaultAPIKeyEnv     = "OPENAI_API_KEY"
	DefaultTimeout       = 30 * time.Second
	DefaultMaxRetries    = 2
	DefaultConcurrency   = 2
	DefaultQueueSize     = 128
	DefaultMaxTokens     = 512
	DefaultCacheSize     = 1024
	DefaultPassThreshold = 0.5
	// DefaultMaxCallsPerSession bounds a session's judge calls when max_calls_per_session
	// is left out: every metric on a session of up to 20 agents (4 session-level calls and
	// 2 per agent) and a few interactions of its dataset case, while a trace with hundreds
	// of agent names costs at most this many calls.
	DefaultMaxCallsPerSession = 50
)

// Upper bounds of the pool's sizes, which are allocated when the client is made (a
// goroutine per worker, the queue's buffer), before any call.
const (
	MaxConcurrency = 256
	MaxQueueSize   = 100_000
)

// Config configures the judge and the embeddings client: the processor's `judge:` block.
// The judge is off unless Enabled is true. Durations are Go durations ("30s").
type Config struct {
	Enabled bool `mapstructure:"enabled"`
	// Endpoint is the base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1,
	// http://localhost:11434/v1 (Ollama), a vLLM or LiteLLM server.
	Endpoint string `mapstructure:"endpoint"`
	Model    string `mapstructure:"model"`
	// APIKeyEnv names the environment variable holding the API key (default
	// OPENAI_API_KEY); an unset variable sends no key (local servers).
	APIKeyEnv   string  `mapstructure:"api_key_env"`
	Temperature float64 `mapstructure:"temperature"`
	// Timeout bounds one call, retries included (default 30s).
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxRetries on 408, 409, 429, 5xx and connection errors, with exponential backoff
	// from 0.5s (Retry-After honoured); default 2 when unset, 0 = no retry.
	MaxRetries *int `mapstructure:"max_retries"`
	// Concurrency is the number of workers (default 2); QueueSize the jobs waiting for one
	// (default 128). A job that finds the queue full is dropped and counted.
	Concurrency int `mapstructure:"concurrency"`
	QueueSize   int `mapstructure:"queue_size"`
	// CallsPerMinute caps the calls sent (0 = unlimited). A call over budget fails with
	// ErrBudgetExhausted, which keeps the deterministic score.
	CallsPerMinute int `mapstructure:"calls_per_minute"`
	// MaxCallsPerSession caps the judge calls spent on one session, all its judge jobs
	// together (default DefaultMaxCallsPerSession when unset, 0 = unlimited): past it,
	// session metrics are left unjudged (judge_error) and a dataset case's interactions
	// are not judged when they would need more calls than are left.
	MaxCallsPerSession *int `mapstructure:"max_calls_per_session"`
	// MaxTokensPerSession caps the estimated tokens (prompt bytes / 4 + max_tokens per
	// call) of the judge calls spent on one session, all its judge jobs together
	// (0 = unlimited): a call that would pass it is skipped with judge_error "cost limit
	// per session reached".
	MaxTokensPerSession int `mapstructure:"max_tokens_per_session"`
	// MaxTokens caps the completion tokens of one call (default 512).
	MaxTokens int `mapstructure:"max_tokens"`
	// CacheSize is the number of verdicts kept by content hash (default 1024).
	CacheSize int `mapstructure:"cache_size"`
	// SampleRate is the fraction of sessions judged, chosen by a hash of the conversation
	// id so that every evaluator sees the same sessions (default 1 when enabled).
	SampleRate *float64 `mapstructure:"sample_rate"`
	// SamplePerMetric decorrelates the samples of the metrics: each metric hashes the
	// conversation id with its own name (default false: every metric judges the same
	// sessions).
	SamplePerMetric bool `mapstructure:"sample_per_metric"`
	// NearThresholdMargin, when > 0, judges reasoning and response_quality of an
	// agent only where the deterministic score is within this margin of
	// scoring.recommendation_threshold (a judge's second opinion where it matters); a
	// metric without a deterministic score is always judged. Default 0 (always).
	NearThresholdMargin float64 `mapstructure:"near_threshold_margin"`
	// PassThreshold decides pass when the judge omits it (default 0.5 when unset; 0
	// passes every score).
	PassThreshold *float64 `mapstructure:"pass_threshold"`
	// Rubric applies to every agent without an entry in Rubrics (keyed by agent name).
	Rubric  string            `mapstructure:"rubric"`
	Rubrics map[string]string `mapstructure:"rubrics"`
	// Metrics lists what the judge judges (default: interactions).
	Metrics []Metric `mapstructure:"metrics"`
	// SystemPrompt replaces the evaluator's default system prompt.
	SystemPrompt string `mapstructure:"system_prompt"`
	// Embeddings, when its model is set, feeds similarity (CCM, intent drift), with or
	// without the judge (Enabled).
	Embeddings EmbeddingsConfig `mapstructure:"embeddings"`
}

// EmbeddingsConfig is the embeddings endpoint (judge.embeddings): on when Model is set,
// whether or not the judge is enabled. Endpoint and APIKeyEnv default to the judge's;
// how the similarity is used (thresholds) is scoring.embeddings (docs/scoring.md).
type EmbeddingsConfig struct {
	Endpoint  string `mapstructure:"endpoint"`
	Model     string `mapstructure:"model"`
	APIKeyEnv string `mapstructure:"api_key_env"`
	// Timeout bounds one request, retries included (default 5s): the evaluation worker
	// waits for it, the trace pipeline never does.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxRetries on 408, 409, 429, 5xx and connection errors (default 2 when unset, 0 =
	// no retry).
	MaxRetries *int `mapstructure:"max_retries"`
	// CallsPerMinute caps the requests sent (0 = unlimited); a request over budget
	// fails at once and the lexical similarity is used.
	CallsPerMinute int `mapstructure:"calls_per_minute"`
	// CacheSize is the number of vectors kept by SHA-256 of model + text (default 4096).
	CacheSize int `mapstructure:"cache_size"`
	// MaxCallsPerSession and MaxTokensPerSession cap the requests and estimated input
	// tokens (text bytes / 4) spent on one session's evaluation (0 = unlimited); past
	// them the lexical similarity is used and the cost limit is recorded.
	MaxCallsPerSession  int `mapstructure:"max_calls_per_session"`
	MaxTokensPerSession int `mapstructure:"max_tokens_per_session"`
}

// validate checks the embeddings block (whether or not the judge is enabled).
func (c *EmbeddingsConfig) validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"max_retries", deref(c.MaxRetries)}, {"calls_per_minute", c.CallsPerMinute}, {"cache_size", c.CacheSize},
		{"max_calls_per_session", c.MaxCallsPerSession}, {"max_tokens_per_session", c.MaxTokensPerSession}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("judge.embeddings.%s: must be >= 0 (got %d)", f.name, f.v))
		}
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("judge.embeddings.timeout: must be >= 0 (got %s)", c.Timeout))
	}
	if err := checkEndpoint("judge.embeddings.endpoint", c.Endpoint); err != nil {
		errs = append(errs, err)
	}
	if c.Model == "" && (c.Endpoint != "" || c.MaxCallsPerSession != 0 || c.MaxTokensPerSession != 0 || c.CallsPerMinute != 0) {
		errs = append(errs, errors.New("judge.embeddings.model: required when other judge.embeddings settings are set"))
	}
	return errors.Join(errs...)
}

// Validate reports the first invalid field, named as in the configuration.
func (c *Config) Validate() error {
	embErr := c.Embeddings.validate()
	if c.Embeddings.Model != "" && c.Embeddings.Endpoint == "" {
		if c.Endpoint == "" {
			embErr = errors.Join(embErr, errors.New("judge.embeddings.endpoint: required when judge.embeddings.model is set (or set judge.endpoint)"))
		} else if !c.Enabled { // inherited; checked below when the judge is enabled
			embErr = errors.Join(embErr, checkEndpoint("judge.endpoint", c.Endpoint))
		}
	}
	if !c.Enabled {
		return embErr
	}
	errs := []error{embErr}
	if c.Endpoint == "" {
		errs = append(errs, errors.New("judge.endpoint: required when judge.enabled is true"))
	} else if err := checkEndpoint("judge.endpoint", c.Endpoint); err != nil {
		errs = append(errs, err)
	}
	if c.Model == "" {
		errs = append(errs, errors.New("judge.model: required when judge.enabled is true"))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max_retries", deref(c.MaxRetries)}, {"concurrency", c.Concurrency}, {"queue_size", c.QueueSize},
		{"calls_per_minute", c.CallsPerMinute}, {"max_calls_per_session", deref(c.MaxCallsPerSession)},
		{"max_tokens_per_session", c.MaxTokensPerSession}, {"max_tokens", c.MaxTokens}, {"cache_size", c.CacheSize}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("judge.%s: must be >= 0 (got %d)", f.name, f.v))
		}
	}
	if c.Concurrency > MaxConcurrency {
		errs = append(errs, fmt.Errorf("judge.concurrency: must be at most %d (got %d)", MaxConcurrency, c.Concurrency))
	}
	if c.QueueSize > MaxQueueSize {
		errs = append(errs, fmt.Errorf("judge.queue_size: must be at most %d (got %d)", MaxQueueSize, c.QueueSize))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("judge.timeout: must be >= 0 (got %s)", c.Timeout))
	}
	if c.Temperature < 0 || c.Temperature > 2 || math.IsNaN(c.Temperature) {
		errs = append(errs, fmt.Errorf("judge.temperature: must be in [0,2] (got %v)", c.Temperature))
	}
	if c.SampleRate != nil && !(*c.SampleRate >= 0 && *c.SampleRate <= 1) {
		errs = append(errs, fmt.Errorf("judge.sample_rate: must be in [0,1] (got %v)", *c.SampleRate))
	}
	// Written so that NaN (YAML .nan) fails too.
	if !(c.NearThresholdMargin >= 0 && c.NearThresholdMargin <= 1) {
		errs = append(errs, fmt.Errorf("judge.near_threshold_margin: must be in [0,1] (got %v)", c.NearThresholdMargin))
	}
	if c.PassThreshold != nil && !(*c.PassThreshold >= 0 && *c.PassThreshold <= 1) {
		errs = append(errs, fmt.Errorf("judge.pass_threshold: must be in [0,1] (got %v)", *c.PassThreshold))
	}
	for i, m := range c.Metrics {
		if !slices.Contains(knownMetrics, m) {
			errs = append(errs, fmt.Errorf("judge.metrics[%d]: unknown metric %q (want one of %v)", i, m, knownMetrics))
		}
	}
	if slices.Contains(c.Metrics, MetricInteractions) || len(c.Metrics) == 0 {
		if c.Rubric == "" && len(c.Rubrics) == 0 {
			errs = append(errs, errors.New("judge.rubric: a rubric (or judge.rubrics per agent) is required to judge interactions"))
		}
	}
	return errors.Join(errs...)
}

// checkEndpoint reports an endpoint (named field) that is not an http(s) URL with a
// host, or that carries credentials (user:password@): openai-go quotes the full URL in
// its errors, which become span statuses and stored judge_error rows, so the key
// belongs in the variable named by api_key_env. The error never quotes a password.
func checkEndpoint(field, endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil { // url.Error quotes the URL: not repeated here
		return fmt.Errorf("%s: must be an http or https URL", field)
	}
	if u.User != nil {
		return fmt.Errorf("%s: must not carry credentials (got %s); name the environment variable holding the key in api_key_env", field, u.Redacted())
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: must be an http or https URL (got %q)", field, endpoint)
	}
	return nil
}

// withDefaults returns c with every unset field set to its default: a zero value, or a
// nil pointer for the settings whose 0 means something (max_retries, pass_threshold).
func (c Config) withDefaults() Config {
	c.APIKeyEnv = cmp.Or(c.APIKeyEnv, DefaultAPIKeyEnv)
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == nil {
		c.MaxRetries = new(DefaultMaxRetries)
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.CacheSize == 0 {
		c.CacheSize = DefaultCacheSize
	}
	if c.PassThreshold == nil {
		c.PassThreshold = new(DefaultPassThreshold)
	}
	if c.MaxCallsPerSession == nil {
		c.MaxCallsPerSession = new(DefaultMaxCallsPerSession)
	}
	if len(c.Metrics) == 0 {
		c.Metrics = []Metric{MetricInteractions}
	}
	c.Embeddings.Endpoint = cmp.Or(c.Embeddings.Endpoint, c.Endpoint)
	c.Embeddings.APIKeyEnv = cmp.Or(c.Embeddings.APIKeyEnv, c.APIKeyEnv)
	if c.Embeddings.Timeout == 0 {
		c.Embeddings.Timeout = DefaultEmbeddingsTimeout
	}
	if c.Embeddings.MaxRetries == nil {
		c.Embeddings.MaxRetries = new(DefaultMaxRetries)
	}
	c.Embeddings.CacheSize = cmp.Or(c.Embeddings.CacheSize, DefaultEmbeddingsCacheSize)
	return c
}

// Judges reports whether metric m is configured to be judged.
func (c *Config) Judges(m Metric) bool {
	if !c.Enabled {
		return false
	}
	if len(c.Metrics) == 0 {
		return m == MetricInteractions
	}
	return slices.Contains(c.Metrics, m)
}

// RubricFor returns the rubric for an agent: Rubrics[agent], else Rubric.
func (c *Config) RubricFor(agent string) string {
	if r, ok := c.Rubrics[agent]; ok {
		return r
	}
	return c.Rubric
}

// Provenance identifies the evaluator that produced a result: id (its name), type
// (deterministic | llm_judge | reference) and version, a hash of its configuration, so
// that results of differently configured evaluators are never mixed.
type Provenance struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// ConfigVersion hashes any JSON-encodable configuration into a short version string (the
// first 12 hex digits of its SHA-256).
func ConfigVersion(cfg any) string {
	b, err := json.Marshal(cfg)
	if err != nil {
		b = fmt.Appendf(nil, "%#v", cfg)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Provenance returns the provenance of judge results of evaluator id: the version hashes
// what changes a verdict (endpoint, model, temperature, max tokens, rubrics, system prompt,
// pass threshold), never the API key.
func (c *Config) Provenance(id string) Provenance {
	d := c.withDefaults()
	return Provenance{ID: id, Type: semconv.EvaluatorTypeLLMJudge, Version: ConfigVersion(struct {
		Endpoint, Model, Rubric, SystemPrompt string
		Rubrics                               map[string]string
		Temperature, PassThreshold            float64
		MaxTokens                             int
	}{d.Endpoint, d.Model, d.Rubric, d.SystemPrompt, d.Rubrics, d.Temperature, *d.PassThreshold, d.MaxTokens})}
}

// deref is *p, or 0 for nil (an unset setting, which validates like its default).
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
