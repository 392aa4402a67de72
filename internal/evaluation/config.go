// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"errors"
	"fmt"
	"math"
)

// Config holds the scoring weights, penalties and thresholds (docs/scoring.md; the
// processor's `scoring` config block, snake_case keys). DefaultConfig gives the
// documented defaults; docs/scoring.md states how each value is used.
type Config struct {
	// AgentWeights weigh the per-interaction and per-agent score (docs/scoring.md §4).
	AgentWeights AgentWeights `mapstructure:"agent_weights"`
	// SessionWeights weigh the session overall_score (docs/scoring.md §6).
	SessionWeights SessionWeights `mapstructure:"session_weights"`
	// SeverityPenalties are subtracted from a tool call's score per issue (docs/scoring.md §3).
	SeverityPenalties SeverityPenalties `mapstructure:"severity_penalties"`
	// RecommendationThreshold: a score below it triggers the ReAsk plan's recommendation
	// (tool_use, reasoning, handoff, response_quality, coordination). In [0,1]; default 0.7.
	RecommendationThreshold float64 `mapstructure:"recommendation_threshold"`
	// CCMSimilarityThreshold: similarity(user_N, user_N+1) at or above it is a re-ask
	// (docs/scoring.md §5). In [0,1]; default 0.5.
	CCMSimilarityThreshold float64 `mapstructure:"ccm_similarity_threshold"`
	// CCMAnsweredThreshold: when the answer contains at least this share of the request's
	// content words (ids and numbers weigh 2), the request was answered and a similar
	// follow-up builds on the answer instead of re-asking (docs/scoring.md §5.2). In
	// [0,1]; default 0.7.
	CCMAnsweredThreshold float64 `mapstructure:"ccm_answered_threshold"`
	// RDMRateThreshold: RDM detections / turns with a follow-up at or above it is
	// "high RDM" (the ReAsk plan's recommendations table). In [0,1]; default 0.2.
	RDMRateThreshold float64 `mapstructure:"rdm_rate_threshold"`
	// CCMRateThreshold: CCM detections / turns with a follow-up at or above it is
	// "high CCM". In [0,1]; default 0.2.
	CCMRateThreshold float64 `mapstructure:"ccm_rate_threshold"`
	// TruncationPenalty is subtracted from response_quality when the interaction's
	// finish reason is "length". In [0,1]; default 0.5.
	TruncationPenalty float64 `mapstructure:"truncation_penalty"`
	// RefusalPenalty is subtracted from response_quality for a refusal. In [0,1]; default 0.5.
	RefusalPenalty float64 `mapstructure:"refusal_penalty"`
	// UncertaintyPenalty is subtracted from reasoning_score when the reasoning expresses
	// uncertainty that no later tool call or handoff resolves. In [0,1]; default 0.25.
	UncertaintyPenalty float64 `mapstructure:"uncertainty_penalty"`
	// PingPongPenalty is subtracted from the ping-pong coordination component per
	// A→B→A→B handoff loop. In [0,1]; default 0.5.
	PingPongPenalty float64 `mapstructure:"ping_pong_penalty"`
	// SchemaCacheSize bounds the number of compiled tool JSON Schemas kept. > 0; default 256.
	SchemaCacheSize int `mapstructure:"schema_cache_size"`
	// Embeddings sets how an embedding similarity enters CCM and intent drift
	// (semantic.go, docs/scoring.md §5.5); used only with Similarity.
	Embeddings EmbeddingScoring `mapstructure:"embeddings"`
	// Similarity, when not nil, is the embedding similarity (the processor sets it when
	// judge.embeddings is configured); nil keeps the deterministic lexical measures.
	Similarity Similarity `mapstructure:"-" json:"-"`
}

// AgentWeights weigh the four interaction scores (the ReAsk evaluation plan, "Per-Agent Score Formula").
// Each >= 0, not all zero; they are renormalised over the scores present.
type AgentWeights struct {
	ToolUse         float64 `mapstructure:"tool_use"`
	Reasoning       float64 `mapstructure:"reasoning"`
	Handoff         float64 `mapstructure:"handoff"`
	ResponseQuality float64 `mapstructure:"response_quality"`
}

// SessionWeights weigh the session overall_score (the ReAsk evaluation plan, "Overall Score Formula");
// IntentDrift weighs 1 − intent_drift_score. Each >= 0, not all zero.
type SessionWeights struct {
	Conversation float64 `mapstructure:"conversation"`
	ToolUse      float64 `mapstructure:"tool_use"`
	Coordination float64 `mapstructure:"coordination"`
	Reasoning    float64 `mapstructure:"reasoning"`
	IntentDrift  float64 `mapstructure:"intent_drift"`
}

// SeverityPenalties map a tool-issue severity to the penalty subtracted from the call
// score (docs/scoring.md §3). Each in [0,1].
type SeverityPenalties struct {
	High   float64 `mapstructure:"high"`
	Medium float64 `mapstructure:"medium"`
	Low    float64 `mapstructure:"low"`
}

// DefaultConfig returns the defaults of docs/scoring.md and docs/scoring.md.
func DefaultConfig() Config {
	return Config{
		AgentWeights:            AgentWeights{ToolUse: 0.35, Reasoning: 0.25, Handoff: 0.20, ResponseQuality: 0.20},
		SessionWeights:          SessionWeights{Conversation: 0.30, ToolUse: 0.25, Coordination: 0.20, Reasoning: 0.15, IntentDrift: 0.10},
		SeverityPenalties:       SeverityPenalties{High: 1.0, Medium: 0.5, Low: 0.25},
		RecommendationThreshold: 0.7,
		CCMSimilarityThreshold:  0.5,
		CCMAnsweredThreshold:    0.7,
		RDMRateThreshold:        0.2,
		CCMRateThreshold:        0.2,
		TruncationPenalty:       0.5,
		RefusalPenalty:          0.5,
		UncertaintyPenalty:      0.25,
		PingPongPenalty:         0.5,
		SchemaCacheSize:         256,
		Embeddings:              EmbeddingScoring{CCMThreshold: DefaultEmbeddingCCMThreshold, OnTaskThreshold: DefaultEmbeddingOnTaskThreshold},
	}
}

// Penalty returns the configured penalty of a severity (0 for an unknown one).
func (c Config) Penalty(s Severity) float64 {
	switch s {
	case SeverityHigh:
		return c.SeverityPenalties.High
	case SeverityMedium:
		return c.SeverityPenalties.Medium
	case SeverityLow:
		return c.SeverityPenalties.Low
	}
	return 0
}

// Validate checks the configuration. Each error names the YAML key under the
// processor's `scoring` block, e.g. "scoring.agent_weights.tool_use: must be >= 0".
// Weights must be finite and >= 0, not all zero within a group, and have a finite sum;
// thresholds and penalties must lie in [0,1]; schema_cache_size must be > 0.
func (c Config) Validate() error {
	var errs []error
	weights := func(group string, names []string, vals []float64) {
		sum := 0.0
		for i, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				errs = append(errs, fmt.Errorf("scoring.%s.%s: must be >= 0 and finite (got %v)", group, names[i], v))
				continue
			}
			sum += v
		}
		switch {
		case sum == 0:
			errs = append(errs, fmt.Errorf("scoring.%s: at least one weight must be > 0", group))
		case math.IsInf(sum, 0):
			// Each weight is finite but the weighted mean would divide Inf by Inf (NaN).
			errs = append(errs, fmt.Errorf("scoring.%s: the weights' sum must be finite (got %v); weights are relative, e.g. 0.3 and 0.7", group, sum))
		}
	}
	aw := c.AgentWeights
	weights("agent_weights", []string{"tool_use", "reasoning", "handoff", "response_quality"},
		[]float64{aw.ToolUse, aw.Reasoning, aw.Handoff, aw.ResponseQuality})
	sw := c.SessionWeights
	weights("session_weights", []string{"conversation", "tool_use", "coordination", "reasoning", "intent_drift"},
		[]float64{sw.Conversation, sw.ToolUse, sw.Coordination, sw.Reasoning, sw.IntentDrift})
	unit := func(key string, v float64) {
		if math.IsNaN(v) || v < 0 || v > 1 {
			errs = append(errs, fmt.Errorf("scoring.%s: must be in [0,1] (got %v)", key, v))
		}
	}
	unit("severity_penalties.high", c.SeverityPenalties.High)
	unit("severity_penalties.medium", c.SeverityPenalties.Medium)
	unit("severity_penalties.low", c.SeverityPenalties.Low)
	unit("recommendation_threshold", c.RecommendationThreshold)
	unit("ccm_similarity_threshold", c.CCMSimilarityThreshold)
	unit("ccm_answered_threshold", c.CCMAnsweredThreshold)
	unit("rdm_rate_threshold", c.RDMRateThreshold)
	unit("ccm_rate_threshold", c.CCMRateThreshold)
	unit("truncation_penalty", c.TruncationPenalty)
	unit("refusal_penalty", c.RefusalPenalty)
	unit("uncertainty_penalty", c.UncertaintyPenalty)
	unit("ping_pong_penalty", c.PingPongPenalty)
	errs = append(errs, c.Embeddings.validate()...)
	if c.SchemaCacheSize <= 0 {
		errs = append(errs, fmt.Errorf("scoring.schema_cache_size: must be > 0 (got %d)", c.SchemaCacheSize))
	}
	return errors.Join(errs...)
}
