// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// EmitPolicy selects which tool calls (emit.tool_calls) or agent interactions
// (emit.interactions) get their own evaluation span (docs/architecture.md §6): issues,
// all or none. Without its own span, a tool call or an interaction is still carried,
// scores included, by its turn span's agent_eval.turn.interactions.
type EmitPolicy string

// EmitToolCalls is the type of emit.tool_calls (the policy's former name).
type EmitToolCalls = EmitPolicy

// Values of emit.tool_calls and emit.interactions.
const (
	// EmitToolCallsIssues emits a span for a call with an issue or not evaluable, or for
	// an interaction with such a call (default).
	EmitToolCallsIssues EmitPolicy = "issues"
	// EmitToolCallsAll emits a span for every tool call or interaction.
	EmitToolCallsAll EmitPolicy = "all"
	// EmitToolCallsNone emits no such span.
	EmitToolCallsNone EmitPolicy = "none"
)

// validate returns an error naming field when p is not a policy.
func (p EmitPolicy) validate(field string) error {
	switch p {
	case EmitToolCallsIssues, EmitToolCallsAll, EmitToolCallsNone:
		return nil
	}
	return fmt.Errorf("%s: invalid value %q, valid values are issues, all, none", field, p)
}

// maxSessionKeys bounds session_keys: the extractor reads conventions.MaxSessionKeys keys and
// always adds ai.telemetry.metadata.conversationId after the configured ones, so a longer
// list would lose its tail silently.
const maxSessionKeys = conventions.MaxSessionKeys - 1

// Config is the configuration of the agentsession processor (docs/architecture.md §11).
type Config struct {
	// SessionKeys are the attribute keys, in priority order, whose value names the
	// session; each is looked up on the span, then on its resource. When none is present
	// on any span of a trace, the trace id is the session id.
	// Default: gen_ai.conversation.id, session.id,
	// traceloop.association.properties.session_id, langfuse.session.id,
	// ai.telemetry.metadata.sessionId, gcp.vertex.agent.session_id,
	// ai.settings.context.sessionId, mastra.metadata.sessionId, conversation.id
	// (docs/conventions.md says which framework writes which).
	SessionKeys []string `mapstructure:"session_keys"`
	// TurnSettle is how long a turn stays open after its root span arrived with no new
	// span of the trace. Default 2s.
	TurnSettle time.Duration `mapstructure:"turn_settle"`
	// TurnTimeout closes a turn after this much silence even without its root span (the
	// turn is then partial). Default 60s.
	TurnTimeout time.Duration `mapstructure:"turn_timeout"`
	// SessionTimeout ends a session after this much silence once its turns are closed.
	// Default 5m.
	SessionTimeout time.Duration `mapstructure:"session_timeout"`
	// MaxSessionDuration ends (as partial) a session open longer than this. Default 1h.
	MaxSessionDuration time.Duration `mapstructure:"max_session_duration"`
	// MaxSessions bounds the open sessions; past it the least recently active session is
	// closed early and evaluated as partial. Default 10000.
	MaxSessions int `mapstructure:"max_sessions"`
	// MaxSpansPerSession bounds the spans retained per session; past it the session is
	// closed early and evaluated as partial. Default 10000.
	MaxSpansPerSession int `mapstructure:"max_spans_per_session"`
	// MaxTextBytes caps every text kept per span (messages, arguments, results), in
	// bytes. Default 4096.
	MaxTextBytes int `mapstructure:"max_text_bytes"`
	// EndAttribute names a boolean span attribute that, when true, ends the session once
	// its open turns close. Default agent_eval.session.end.
	EndAttribute string `mapstructure:"end_attribute"`
	// Agents is the tool registry: per agent, the tools it may call with their JSON
	// Schemas. It wins over tool definitions seen in traces.
	Agents []AgentConfig `mapstructure:"agents"`
	// AgentsFile is a YAML or JSON file holding the same list as Agents; its agents are
	// added to Agents (an agent in both is an error).
	AgentsFile string `mapstructure:"agents_file"`
	// Scoring holds the weights and thresholds of the evaluators (docs/scoring.md).
	Scoring evaluation.Config `mapstructure:"scoring"`
	// Emit selects the evaluation spans emitted.
	Emit EmitConfig `mapstructure:"emit"`
	// Continuation says where the processor keeps what a session that continues after
	// it went idle needs (its evaluated turns and analysis revision;
	// docs/decisions/sessions.md). Default: in memory (lost at restart).
	Continuation ContinuationConfig `mapstructure:"continuation"`
	// Workers is the number of goroutines that evaluate closed turns and ended sessions
	// (sessions are spread over them; one session's events stay in order). Default: the
	// number of CPUs the process may use.
	Workers int `mapstructure:"workers"`
	// References are evalaf dataset files and how sessions are matched to their cases
	// (reference-based evaluation, docs/scoring.md §11). Off without datasets.
	References ReferencesConfig `mapstructure:"references"`
	// Judge is the optional LLM judge (docs/judge.md). Off by default.
	Judge judge.Config `mapstructure:"judge"`
	// SigningKey signs the typed result of every turn and session evaluation span
	// (HMAC-SHA256, attribute agent_eval.signature); the agenteval exporter stores only
	// results signed with its own signing_key (docs/decisions/evaluation-authenticity.md).
	// Empty (default): a random key per process, which the agenteval exporter of the
	// same collector also uses. In a two-tier deployment set the same key (at least 16
	// bytes) on both tiers, e.g. ${env:AGENTEVAL_SIGNING_KEY}.
	SigningKey configopaque.String `mapstructure:"signing_key"`
	// Handoff names an agenteval_handoff extension (in service::extensions) through
	// which the turn and session results are passed, in process, to an agenteval
	// exporter of this collector that names the same extension: it then skips their
	// signature check and decode. The evaluation spans are emitted complete and signed
	// all the same (docs/decisions/performance.md §8.41). Default: none (off).
	Handoff *component.ID `mapstructure:"handoff"`

	_ struct{}
}

// defaultContinuationMaxRecords is continuation.max_records' default: about 11 KB a
// record on bench-e2e's turns (docs/decisions/performance.md §8.14), some 55 MB.
const defaultContinuationMaxRecords = 5000

// defaultMaxSessionSpanBytes and minSessionSpanBytes bound emit.max_session_span_bytes: a
// quarter of the 4 MiB a default OTLP/gRPC receiver takes in one request, which the span
// shares with the spans batched with it; and room for a session's own fields and a turn.
const (
	defaultMaxSessionSpanBytes = 1 << 20
	minSessionSpanBytes        = 64 << 10
)

// ContinuationConfig selects the continuation store.
type ContinuationConfig struct {
	// Driver is "" (in memory: at most max_records turn records, the least recently
	// used sessions dropped first), "sqlite" or "postgres": the
	// result store's database (the agenteval exporter's store.driver), whose turns and
	// session_revisions tables then survive a restart and are shared by the collectors
	// that use the same PostgreSQL database.
	Driver string `mapstructure:"driver"`
	// DSN is the SQLite file path or PostgreSQL connection string, as the exporter's
	// store.dsn. Required with a driver.
	DSN configopaque.String `mapstructure:"dsn"`
	// MaxRecords bounds the in-memory state (Driver ""): at most this many turn records
	// (a few KB to a few tens of KB each, with the turn's interactions and tool calls:
	// about 11 KB on bench-e2e's turns), the least recently written sessions' records
	// dropped first. A dropped session keeps its next turn index and last revision for 4
	// × max_records more sessions (docs/decisions/sessions.md §4.2). With a driver it
	// bounds the records kept while their save fails, to be saved again (§4.5), and
	// four times as many ids of turns numbered while the store was unreachable, whose
	// indexes are reserved once it is back (§4.7).
	// Default 5000.
	MaxRecords int `mapstructure:"max_records"`
	// Storage names a storage extension (e.g. contrib's file_storage) in which, with a
	// driver, the records, turn numbers, revisions and claims that could not be saved
	// because the database was down are kept at shutdown, and from which they are taken back at the
	// next start and saved once the database is back (docs/decisions/sessions.md §4.8,
	// §4.9). One pipeline per processor id: its client is named after the id.
	// Without it they are lost at shutdown, and a continued session's next turn may take
	// the index of a turn whose analysis still waits in the exporter's queue.
	// Optional.
	Storage *component.ID `mapstructure:"storage"`
}

// EmitConfig selects the evaluation spans emitted (docs/architecture.md §6).
type EmitConfig struct {
	// ToolCalls is issues (default), all or none: which tool calls get an
	// `evaluate tool_call` span.
	ToolCalls EmitPolicy `mapstructure:"tool_calls"`
	// Interactions is issues (default), all or none: which agent interactions get an
	// `evaluate agent_interaction` span. issues: those with a tool call that has an
	// issue or is not evaluable. Every interaction's scores ride on its turn span.
	Interactions EmitPolicy `mapstructure:"interactions"`
	// Analysis adds the full session analysis as JSON (agent_eval.analysis) to the
	// session's evaluation span. Off by default: the typed attributes carry what the
	// agenteval exporter stores.
	Analysis bool `mapstructure:"analysis"`
	// MaxSessionSpanBytes bounds the OTLP size of a session's evaluation span, in bytes
	// (default 1 MiB; 0: no bound; otherwise at least 64 KiB, a Validate error below). The span carries every turn's result, about 2–10 KB a
	// turn, so a long conversation's span grew without bound, past the 4 MiB a default
	// OTLP/gRPC receiver takes, and the downstream refusal dropped the user's spans batched
	// with it. Past the bound the span carries the newest turns that fit and
	// agent_eval.turns_omitted; an agenteval exporter in the same collector (handoff)
	// still stores every turn while the handoff holds the analysis, and one that decodes
	// the span stores the turns it carries (docs/decisions/processor.md). A single turn
	// larger than the bound is kept whole.
	MaxSessionSpanBytes int `mapstructure:"max_session_span_bytes"`
}

// AgentConfig declares one agent and its tools.
type AgentConfig struct {
	// Name is the agent name as its agent spans carry it (gen_ai.agent.name...).
	Name string `mapstructure:"name"`
	// Role and Description are informative.
	Role        string `mapstructure:"role"`
	Description string `mapstructure:"description"`
	// Tools are the tools the agent may call.
	Tools []ToolConfig `mapstructure:"tools"`
	// HandoffTargets are the agents it may hand off to.
	HandoffTargets []string `mapstructure:"handoff_targets"`
}

// ToolConfig declares one tool.
type ToolConfig struct {
	Name        string `mapstructure:"name"`
	Description string `mapstructure:"description"`
	// Parameters is the tool's JSON Schema (draft-07), or a ReAsk flat {param: type} map
	// (converted: every key required, no additional properties).
	Parameters map[string]any `mapstructure:"parameters"`
}

var _ component.Config = (*Config)(nil)

// maxWorkers bounds workers: a goroutine and a queue each, started with the processor
// (1,000,000 took 2.8 GB before the first span; audit h). Evaluation is CPU-bound, so more
// workers than cores only adds queues.
const maxWorkers = 1024

// Validate checks the configuration; errors name the offending key.
func (cfg *Config) Validate() error {
	var errs []error
	positive := func(key string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %s", key, d))
		}
	}
	positive("turn_settle", cfg.TurnSettle)
	positive("turn_timeout", cfg.TurnTimeout)
	positive("session_timeout", cfg.SessionTimeout)
	positive("max_session_duration", cfg.MaxSessionDuration)
	if cfg.TurnTimeout > 0 && cfg.TurnSettle > cfg.TurnTimeout {
		errs = append(errs, fmt.Errorf("turn_settle (%s) must not exceed turn_timeout (%s)", cfg.TurnSettle, cfg.TurnTimeout))
	}
	if cfg.MaxSessions <= 0 {
		errs = append(errs, fmt.Errorf("max_sessions: must be positive, got %d", cfg.MaxSessions))
	}
	if cfg.MaxSpansPerSession <= 0 {
		errs = append(errs, fmt.Errorf("max_spans_per_session: must be positive, got %d", cfg.MaxSpansPerSession))
	}
	if cfg.MaxTextBytes < 64 {
		errs = append(errs, fmt.Errorf("max_text_bytes: must be at least 64, got %d", cfg.MaxTextBytes))
	}
	if len(cfg.SessionKeys) == 0 {
		errs = append(errs, errors.New("session_keys: must list at least one attribute key"))
	}
	if len(cfg.SessionKeys) > maxSessionKeys {
		errs = append(errs, fmt.Errorf("session_keys: at most %d keys, got %d", maxSessionKeys, len(cfg.SessionKeys)))
	}
	for i, k := range cfg.SessionKeys {
		if k == "" {
			errs = append(errs, fmt.Errorf("session_keys[%d]: must not be empty", i))
		}
	}
	if err := cfg.Emit.ToolCalls.validate("emit.tool_calls"); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.Emit.Interactions.validate("emit.interactions"); err != nil {
		errs = append(errs, err)
	}
	if b := cfg.Emit.MaxSessionSpanBytes; b != 0 && b < minSessionSpanBytes {
		errs = append(errs, fmt.Errorf("emit.max_session_span_bytes: must be 0 (no bound) or at least %d, got %d", minSessionSpanBytes, b))
	}
	if cfg.Continuation.MaxRecords <= 0 {
		errs = append(errs, fmt.Errorf("continuation.max_records: must be positive, got %d", cfg.Continuation.MaxRecords))
	}
	switch cfg.Continuation.Driver {
	case "":
		if cfg.Continuation.DSN != "" {
			errs = append(errs, errors.New("continuation.dsn: set without continuation.driver (sqlite or postgres)"))
		}
		if cfg.Continuation.Storage != nil {
			errs = append(errs, errors.New("continuation.storage: set without continuation.driver (sqlite or postgres): the memory store has nothing to keep"))
		}
	case "sqlite", "postgres":
		if cfg.Continuation.DSN == "" {
			errs = append(errs, fmt.Errorf("continuation.dsn: required with continuation.driver %q", cfg.Continuation.Driver))
		} else if err := store.ValidateDSN(cfg.Continuation.Driver, string(cfg.Continuation.DSN)); err != nil {
			errs = append(errs, fmt.Errorf("continuation.dsn: %w", err))
		}
	default:
		errs = append(errs, fmt.Errorf("continuation.driver: invalid value %q, valid values are sqlite, postgres (or empty for memory)", cfg.Continuation.Driver))
	}
	if n := len(cfg.SigningKey); n > 0 && n < evalspan.MinSigningKeyBytes {
		errs = append(errs, fmt.Errorf("signing_key: must be at least %d bytes (or empty for a random key per process), got %d", evalspan.MinSigningKeyBytes, n))
	}
	if cfg.Workers < 0 {
		errs = append(errs, fmt.Errorf("workers: must not be negative, got %d", cfg.Workers))
	} else if cfg.Workers > maxWorkers {
		errs = append(errs, fmt.Errorf("workers: must be at most %d (each is a goroutine with its queue, started with the processor), got %d", maxWorkers, cfg.Workers))
	}
	// The agents_file is read here too, so that `otelcol validate` and the start report
	// a missing or invalid file, not only the pipeline's creation.
	if _, err := buildRegistry(cfg); err != nil {
		errs = append(errs, err)
	}
	// scoring and judge are not validated here: the collector calls their own Validate
	// (confmap.Validate walks the nested configs), and a second call printed every error
	// twice.
	if err := cfg.References.validate(); err != nil {
		errs = append(errs, err)
	}
	if cfg.Judge.Enabled && len(cfg.References.Datasets) == 0 &&
		(len(cfg.Judge.Metrics) == 0 || slices.Equal(cfg.Judge.Metrics, []judge.Metric{judge.MetricInteractions})) {
		errs = append(errs, errors.New("judge.metrics: only interactions is judged, which needs references.datasets; "+
			"add session metrics (reasoning, response_quality, handoff, hallucination, intent_drift, task_completion) or datasets"))
	}
	return errors.Join(errs...)
}
