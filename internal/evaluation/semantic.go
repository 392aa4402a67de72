// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"math"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/text"
)

// Similarity is a semantic similarity (embeddings, internal/judge.Embedder) that CCM
// and intent drift consult where the lexical measure finds nothing (docs/scoring.md
// §5.5). Similarities returns the similarity in [0,1] of query with each of texts, in
// order; sessionID is the session whose evaluation pays for it (cost limits). On an
// error the lexical verdict stands and the error is recorded in the explanation as
// `embeddings_error`. It is called on the evaluation worker, never on the ingest path.
type Similarity interface {
	Similarities(sessionID, query string, texts []string) ([]float64, error)
}

// EmbeddingScoring holds how an embedding similarity enters the scores (the processor's
// `scoring.embeddings` block), used only when Config.Similarity is set.
type EmbeddingScoring struct {
	// CCMThreshold: a follow-up whose similarity to the request is below
	// ccm_similarity_threshold lexically, but whose embedding similarity is at or above
	// CCMThreshold, is similar (a paraphrased re-ask); the other CCM rules (acceptance,
	// another thing the answer served, already answered) still apply. In [0,1];
	// default 0.85 (embedding cosines of unrelated sentences are rarely near 0).
	CCMThreshold float64 `mapstructure:"ccm_threshold"`
	// OnTaskThreshold: in intent drift, an action or answer that shares too few words
	// with the task but whose embedding similarity to the user message is at or above
	// it is on task (drift 0), like a lexically anchored one. In [0,1]; default 0.75.
	OnTaskThreshold float64 `mapstructure:"on_task_threshold"`
}

// Defaults of scoring.embeddings.
const (
	DefaultEmbeddingCCMThreshold    = 0.85
	DefaultEmbeddingOnTaskThreshold = 0.75
)

// embeddingsErrorPrefix starts the explanation of a similarity that fell back to the
// lexical one, like a judge_error.
const embeddingsErrorPrefix = "embeddings_error: "

func (c EmbeddingScoring) validate() []error {
	var errs []error
	for _, f := range []struct {
		key string
		v   float64
	}{{"ccm_threshold", c.CCMThreshold}, {"on_task_threshold", c.OnTaskThreshold}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			errs = append(errs, fmt.Errorf("scoring.embeddings.%s: must be in [0,1] (got %v)", f.key, f.v))
		}
	}
	return errs
}

// semanticReask is the embedding route into CCM: with a Similarity configured, the
// embedding similarity of request and followUp, whether it reaches
// embeddings.ccm_threshold, and the check to explain it (an embeddings_error check on
// failure: the lexical verdict stands).
func (e *Evaluator) semanticReask(sessionID, request, followUp string) (sim float64, similar bool, check string) {
	if e.cfg.Similarity == nil {
		return 0, false, ""
	}
	sims, err := e.cfg.Similarity.Similarities(sessionID, request, []string{followUp})
	if err != nil || len(sims) != 1 {
		return 0, false, "ccm: " + embeddingsErrorPrefix + errText(err, len(sims)) + "; lexical similarity used"
	}
	s, th := clamp01(sims[0]), e.cfg.Embeddings.CCMThreshold
	if s < th {
		return s, false, fmt.Sprintf("ccm: embedding similarity %s < %s", num(s), num(th))
	}
	return s, true, fmt.Sprintf("ccm: embedding similarity %s >= %s (a paraphrased request)", num(s), num(th))
}

// semanticAnchor is the embedding route into intent drift's anchoring: the first item
// (by order) whose embedding similarity to the user message reaches
// embeddings.on_task_threshold, as its index, similarity and explanation; -1 when none
// does or on error (the explanation then starts with embeddings_error).
func (e *Evaluator) semanticAnchor(sessionID, userMessage string, items []string) (int, float64, string) {
	if e.cfg.Similarity == nil || len(items) == 0 {
		return -1, 0, ""
	}
	sims, err := e.cfg.Similarity.Similarities(sessionID, userMessage, items)
	if err != nil || len(sims) != len(items) {
		return -1, 0, embeddingsErrorPrefix + errText(err, len(sims)) + "; lexical coverage used"
	}
	best, bi := -1.0, -1
	for i, s := range sims {
		if s = clamp01(s); s > best {
			best, bi = s, i
		}
	}
	th := e.cfg.Embeddings.OnTaskThreshold
	if best >= th {
		return bi, best, fmt.Sprintf("embedding similarity %s >= %s to the user message", num(best), num(th))
	}
	return -1, best, fmt.Sprintf("best embedding similarity %s < %s", num(best), num(th))
}

func errText(err error, n int) string {
	if err == nil {
		return fmt.Sprintf("%d similarities returned", n)
	}
	return text.Truncate(strings.TrimSpace(err.Error()), 200)
}
