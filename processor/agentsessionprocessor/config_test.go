// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	scoring := evaluation.DefaultConfig()
	scoring.RecommendationThreshold = 0.6
	scoring.Embeddings.CCMThreshold = 0.9

	tests := []struct {
		id       component.ID
		expected component.Config
	}{
		{id: component.NewID(metadata.Type), expected: createDefaultConfig()},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			expected: &Config{
				SessionKeys:        []string{"gen_ai.conversation.id", "app.thread_id"},
				TurnSettle:         500 * time.Millisecond,
				TurnTimeout:        30 * time.Second,
				SessionTimeout:     10 * time.Minute,
				MaxSessionDuration: 2 * time.Hour,
				MaxSessions:        500,
				MaxSpansPerSession: 2000,
				MaxTextBytes:       8192,
				EndAttribute:       "app.session.done",
				Emit:               EmitConfig{ToolCalls: EmitToolCallsAll, Interactions: EmitToolCallsNone, Analysis: true, MaxSessionSpanBytes: 2 << 20},
				Continuation:       ContinuationConfig{Driver: "postgres", DSN: "postgres://agenteval@db:5432/agenteval", MaxRecords: 20000, Storage: &keptStorageID},
				Workers:            4,
				Scoring:            scoring,
				References:         defaultReferencesConfig(),
				Agents: []AgentConfig{
					{
						Name: "triage", Role: "router", HandoffTargets: []string{"refund_agent"},
						Tools: []ToolConfig{{
							Name: "lookup_order", Description: "Look up an order by id",
							Parameters: map[string]any{
								"type":       "object",
								"properties": map[string]any{"order_id": map[string]any{"type": "string"}},
								"required":   []any{"order_id"},
							},
						}},
					},
					{
						Name: "refund_agent",
						Tools: []ToolConfig{{
							Name:       "issue_refund",
							Parameters: map[string]any{"order_id": "string", "amount": "number"},
						}},
					},
				},
			},
		},
		{id: component.NewIDWithName(metadata.Type, "references"), expected: referencesConfig()},
		{id: component.NewIDWithName(metadata.Type, "handoff"), expected: func() *Config {
			cfg := createDefaultConfig().(*Config)
			id := component.MustNewID("agenteval_handoff")
			cfg.Handoff = &id
			return cfg
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			assert.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, tt.expected, cfg)
		})
	}
}

func TestDefaultConfigIsValid(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, cfg.Validate())
	assert.Equal(t, conventions.DefaultSessionKeys(), cfg.SessionKeys)
	assert.Equal(t, 2*time.Second, cfg.TurnSettle)
	assert.Equal(t, 5*time.Minute, cfg.SessionTimeout)
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*Config)
		expectedErr string
	}{
		{"turn_settle zero", func(c *Config) { c.TurnSettle = 0 }, "turn_settle: must be positive"},
		{"turn_timeout negative", func(c *Config) { c.TurnTimeout = -time.Second }, "turn_timeout: must be positive"},
		{"session_timeout zero", func(c *Config) { c.SessionTimeout = 0 }, "session_timeout: must be positive"},
		{"max_session_duration zero", func(c *Config) { c.MaxSessionDuration = 0 }, "max_session_duration: must be positive"},
		{"settle above timeout", func(c *Config) { c.TurnSettle = 2 * time.Minute }, "turn_settle (2m0s) must not exceed turn_timeout (1m0s)"},
		{"max_sessions zero", func(c *Config) { c.MaxSessions = 0 }, "max_sessions: must be positive"},
		{"max_spans_per_session negative", func(c *Config) { c.MaxSpansPerSession = -1 }, "max_spans_per_session: must be positive"},
		{"max_text_bytes tiny", func(c *Config) { c.MaxTextBytes = 10 }, "max_text_bytes: must be at least 64"},
		{"too many session_keys", func(c *Config) { c.SessionKeys = manyKeys(maxSessionKeys + 1) }, "session_keys: at most 253 keys, got 254"},
		{"no session keys", func(c *Config) { c.SessionKeys = nil }, "session_keys: must list at least one attribute key"},
		{"empty session key", func(c *Config) { c.SessionKeys = []string{"a", ""} }, "session_keys[1]: must not be empty"},
		{"emit policy", func(c *Config) { c.Emit.ToolCalls = "some" }, `emit.tool_calls: invalid value "some", valid values are issues, all, none`},
		{"interaction emit policy", func(c *Config) { c.Emit.Interactions = "few" }, `emit.interactions: invalid value "few", valid values are issues, all, none`},
		{"session span bound", func(c *Config) { c.Emit.MaxSessionSpanBytes = 4096 }, `emit.max_session_span_bytes: must be 0 (no bound) or at least 65536, got 4096`},
		{"continuation driver", func(c *Config) { c.Continuation.Driver = "mysql" }, `continuation.driver: invalid value "mysql"`},
		{"continuation dsn", func(c *Config) { c.Continuation.Driver = "sqlite" }, `continuation.dsn: required with continuation.driver "sqlite"`},
		{"continuation postgres dsn", func(c *Config) { c.Continuation.Driver, c.Continuation.DSN = "postgres", "postgres://u:pw@db:port/x" }, `continuation.dsn: not a PostgreSQL DSN`},
		{"continuation max_records", func(c *Config) { c.Continuation.MaxRecords = 0 }, `continuation.max_records: must be positive, got 0`},
		{"continuation dsn alone", func(c *Config) { c.Continuation.DSN = "x.db" }, `continuation.dsn: set without continuation.driver`},
		{"continuation storage alone", func(c *Config) { c.Continuation.Storage = &keptStorageID }, `continuation.storage: set without continuation.driver`},
		{"workers", func(c *Config) { c.Workers = -1 }, `workers: must not be negative, got -1`},
		{"workers bound", func(c *Config) { c.Workers = 1_000_000 }, `workers: must be at most 1024`},
		{"signing_key", func(c *Config) { c.SigningKey = "short" }, `signing_key: must be at least 16 bytes (or empty for a random key per process), got 5`},
		{"agent without name", func(c *Config) { c.Agents = []AgentConfig{{}} }, "agents[0].name: must not be empty"},
		{"agent twice", func(c *Config) { c.Agents = []AgentConfig{{Name: "a"}, {Name: "a"}} }, `agents[1].name: agent "a" is declared twice`},
		{"tool without name", func(c *Config) { c.Agents = []AgentConfig{{Name: "a", Tools: []ToolConfig{{}}}} }, "agents[0].tools[0].name: must not be empty"},
		{"tool twice", func(c *Config) {
			c.Agents = []AgentConfig{{Name: "a", Tools: []ToolConfig{{Name: "t"}, {Name: "t"}}}}
		}, `agents[0].tools[1].name: tool "t" is declared twice for agent "a"`},
		{"invalid JSON Schema", func(c *Config) {
			c.Agents = []AgentConfig{{Name: "a", Tools: []ToolConfig{{Name: "t", Parameters: map[string]any{"type": 5}}}}}
		}, "agents[0].tools[0].parameters:"},
		{"empty dataset path", func(c *Config) { c.References.Datasets = []string{" "} }, "references.datasets[0]: must not be empty"},
		{"missing dataset file", func(c *Config) { c.References.Datasets = []string{"testdata/no-such-dataset.json"} }, "references.datasets[0]: stat testdata/no-such-dataset.json: no such file or directory"},
		{"unknown reference evaluator", func(c *Config) {
			c.References.Datasets = []string{"d.json"}
			c.References.Evaluators = []string{"tool_selection", "vibes"}
		}, `references.evaluators[1]: unknown evaluator "vibes"`},
		{"no case id attribute", func(c *Config) {
			c.References.Datasets = []string{"d.json"}
			c.References.CaseIDAttribute = ""
		}, "references.case_id_attribute: must not be empty"},
		{"trajectory mode", func(c *Config) {
			c.References.Datasets = []string{"d.json"}
			c.References.Trajectory.Mode = "loose"
		}, `references.trajectory.mode: invalid evaluator option: "loose"`},
		{"trajectory args override", func(c *Config) {
			c.References.Datasets = []string{"d.json"}
			c.References.Trajectory.ArgsOverrides = map[string]string{"search": "fuzzy"}
		}, "references.trajectory.args_overrides[search]"},
		{"max tracked traces", func(c *Config) {
			c.References.Datasets = []string{"d.json"}
			c.References.MaxTrackedTraces = 0
		}, "references.max_tracked_traces: must be positive"},
		{"judge without model", func(c *Config) {
			c.Judge = judge.Config{Enabled: true, Endpoint: "http://localhost:1/v1", Rubric: "r"}
		}, "judge.model: required when judge.enabled is true"},
		{"judge with nothing to judge", func(c *Config) {
			c.Judge = judge.Config{Enabled: true, Endpoint: "http://localhost:1/v1", Model: "m", Rubric: "r"}
		}, "judge.metrics: only interactions is judged, which needs references.datasets"},
		{"judge margin", func(c *Config) {
			c.Judge = judge.Config{Enabled: true, Endpoint: "http://localhost:1/v1", Model: "m", Rubric: "r", NearThresholdMargin: 2}
		}, "judge.near_threshold_margin: must be in [0,1]"},
		{"judge metric", func(c *Config) {
			c.Judge = judge.Config{Enabled: true, Endpoint: "http://localhost:1/v1", Model: "m", Rubric: "r", Metrics: []judge.Metric{"vibes"}}
		}, `judge.metrics[0]: unknown metric "vibes"`},
		{"judge sample rate", func(c *Config) {
			rate := 1.5
			c.Judge = judge.Config{Enabled: true, Endpoint: "http://localhost:1/v1", Model: "m", Rubric: "r", SampleRate: &rate}
		}, "judge.sample_rate: must be in [0,1]"},
		{"embeddings without an endpoint", func(c *Config) {
			c.Judge.Embeddings = judge.EmbeddingsConfig{Model: "e"}
		}, "judge.embeddings.endpoint: required when judge.embeddings.model is set"},
		{"embeddings timeout", func(c *Config) {
			c.Judge.Embeddings = judge.EmbeddingsConfig{Model: "e", Endpoint: "http://localhost:1/v1", Timeout: -time.Second}
		}, "judge.embeddings.timeout: must be >= 0"},
		{"embeddings ccm threshold", func(c *Config) { c.Scoring.Embeddings.CCMThreshold = 1.2 },
			"scoring.embeddings.ccm_threshold: must be in [0,1] (got 1.2)"},
		{"judge tokens per session", func(c *Config) {
			c.Judge = judge.Config{Enabled: true, Endpoint: "http://localhost:1/v1", Model: "m", Rubric: "r",
				Metrics: []judge.Metric{judge.MetricTaskCompletion}, MaxTokensPerSession: -1}
		}, "judge.max_tokens_per_session: must be >= 0 (got -1)"},
		{"external $ref refused", func(c *Config) {
			c.Agents = []AgentConfig{{Name: "a", Tools: []ToolConfig{{Name: "t", Parameters: map[string]any{"$ref": "file:///etc/passwd"}}}}}
		}, "agents[0].tools[0].parameters:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tt.mutate(cfg)
			err := confmap.Validate(cfg) // as the collector validates: nested configs too
			if tt.expectedErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.expectedErr)
			assert.Equal(t, 1, strings.Count(err.Error(), tt.expectedErr), "each error once: %v", err)
		})
	}
}

func TestAgentsFile(t *testing.T) {
	dir := t.TempDir()
	yml := filepath.Join(dir, "agents.yaml")
	require.NoError(t, os.WriteFile(yml, []byte(`
- name: executor
  tools:
    - name: refund_order
      parameters: {order_id: string, amount: number}
`), 0o600))
	cfg := createDefaultConfig().(*Config)
	cfg.Agents = []AgentConfig{{Name: "planner"}}
	cfg.AgentsFile = yml
	reg, err := buildRegistry(cfg)
	require.NoError(t, err)
	require.Len(t, reg, 2)
	assert.Equal(t, "planner", reg[0].ID)
	assert.Equal(t, session.ToolsSourceConfig, reg[1].ToolsSource)
	require.Len(t, reg[1].Tools, 1)
	assert.JSONEq(t, `{"type":"object","properties":{"amount":{"type":"number"},"order_id":{"type":"string"}},"required":["amount","order_id"],"additionalProperties":false}`,
		string(reg[1].Tools[0].Parameters))

	// Validate reads the file too, and each error names the entry where it is: in
	// the file, not at an index of the merged list that the agents key does not have.
	cfg.AgentsFile = filepath.Join(dir, "missing.yaml")
	assert.ErrorContains(t, cfg.Validate(), "agents_file:")

	js := filepath.Join(dir, "agents.json")
	require.NoError(t, os.WriteFile(js, []byte(`[{"name":"planner"}]`), 0o600))
	cfg.AgentsFile = js
	assert.EqualError(t, cfg.Validate(), `agents_file[0].name: agent "planner" is declared in agents too (in `+js+`)`)

	require.NoError(t, os.WriteFile(js, []byte(`[{"name":"executor","tools":[{"name":""}]}]`), 0o600))
	cfg.Agents = []AgentConfig{{Name: "x"}, {Name: "y"}}
	assert.EqualError(t, cfg.Validate(), `agents_file[0].tools[0].name: must not be empty (in `+js+`)`)
}

func referencesConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	rate := 0.25
	cfg.References = ReferencesConfig{
		Datasets:              []string{"testdata/dataset.json"},
		CaseIDAttribute:       "app.case",
		RunIDAttribute:        "app.run",
		MatchFirstUserMessage: false,
		Evaluators:            []string{"tool_selection", "trajectory", "interactions"},
		Trajectory: TrajectoryConfig{Mode: "unordered", ArgsMode: "subset", ArgsOverrides: map[string]string{"search": "ignore"},
			PartialCredit: true},
		MaxTrackedTraces: 1000,
	}
	cfg.Judge = judge.Config{
		Enabled: true, Endpoint: "http://localhost:11434/v1", Model: "llama3.1", APIKeyEnv: "JUDGE_KEY",
		Timeout: 10 * time.Second, Concurrency: 1, CallsPerMinute: 30, SampleRate: &rate,
		// An explicit 0 stays 0 (no retry; every score passes), not the default.
		MaxRetries: new(0), PassThreshold: new(0.0),
		SamplePerMetric: true, NearThresholdMargin: 0.1,
		Rubric:              "Is the interaction correct and complete?",
		Rubrics:             map[string]string{"planner": "Is the plan thorough and logical?"},
		Metrics:             []judge.Metric{judge.MetricInteractions, judge.MetricTaskCompletion},
		MaxTokensPerSession: 20000,
		Embeddings: judge.EmbeddingsConfig{Model: "nomic-embed-text", Timeout: 2 * time.Second, MaxRetries: new(0),
			MaxCallsPerSession: 40},
	}
	return cfg
}

func manyKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("app.session_key_%d", i)
	}
	return keys
}

// TestMaxSessionKeysAllExtracted: with the most session_keys Validate accepts, the last
// one still names the session (the extractor drops keys past its limit).
func TestMaxSessionKeysAllExtracted(t *testing.T) {
	keys := manyKeys(maxSessionKeys)
	ex := conventions.NewExtractor(conventions.Config{SessionKeys: keys})
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ss := rs.ScopeSpans().AppendEmpty()
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID([16]byte{1})
	sp.SetSpanID([8]byte{1})
	sp.Attributes().PutStr(keys[len(keys)-1], "conv-253")
	r := ex.Extract(rs.Resource(), ss.Scope(), sp)
	assert.Equal(t, "conv-253", r.SessionID)
	assert.Equal(t, keys[len(keys)-1], r.SessionKey)
}
