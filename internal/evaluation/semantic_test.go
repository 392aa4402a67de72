// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// fakeSimilarity returns sim for every text (or err) and records the calls.
type fakeSimilarity struct {
	sim   float64
	err   error
	calls []string // sessionID|query|texts
}

func (f *fakeSimilarity) Similarities(sessionID, query string, texts []string) ([]float64, error) {
	f.calls = append(f.calls, sessionID+"|"+query+"|"+strings.Join(texts, "|"))
	if f.err != nil {
		return nil, f.err
	}
	out := make([]float64, len(texts))
	for i := range out {
		out[i] = f.sim
	}
	return out, nil
}

func semanticEval(t *testing.T, sim Similarity) *Evaluator {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Similarity = sim
	e, err := New(cfg)
	require.NoError(t, err)
	return e
}

// A paraphrased re-ask that the lexical measure misses: "refund" vs "money back".
const (
	paraReq    = "I want a refund for the broken blender."
	paraAnswer = "Our blenders come with a two-year warranty."
	paraNext   = "Can I get my money back for it?"
)

func TestSemanticCCM(t *testing.T) {
	lexical := newEval(t).DetectFollowUp(paraReq, paraAnswer, paraNext)
	require.Equal(t, DetectionNone, lexical.Type, "the lexical measure must miss the paraphrase: %+v", lexical)

	t.Run("above ccm_threshold is a re-ask", func(t *testing.T) {
		f := &fakeSimilarity{sim: 0.9}
		e := semanticEval(t, f)
		tr := e.FollowUp(TurnRecord{Result: TurnResult{SessionID: "s1", UserMessage: paraReq, FinalResponse: paraAnswer,
			DetectionType: DetectionNone}}, paraNext)
		assert.Equal(t, DetectionCCM, tr.Result.DetectionType)
		assert.InDelta(t, 0.9, tr.Result.Confidence, 1e-9)
		assert.Contains(t, tr.Result.Explanations["detection"], "embedding similarity 0.9 >= 0.85")
		assert.Equal(t, []string{"s1|" + paraReq + "|" + paraNext}, f.calls, "one call, charged to the session")
	})
	t.Run("below ccm_threshold stays none", func(t *testing.T) {
		d := semanticEval(t, &fakeSimilarity{sim: 0.6}).DetectFollowUp(paraReq, paraAnswer, paraNext)
		assert.Equal(t, DetectionNone, d.Type)
		assert.Contains(t, strings.Join(d.Checks, "; "), "embedding similarity 0.6 < 0.85")
	})
	t.Run("the other CCM rules still apply", func(t *testing.T) {
		d := semanticEval(t, &fakeSimilarity{sim: 0.95}).DetectFollowUp("Where is order #123?", "Order #123 is in the warehouse.", "OK, then cancel #123 please.")
		assert.Equal(t, DetectionNone, d.Type, "%+v", d)
	})
	t.Run("an error keeps the lexical verdict and is recorded", func(t *testing.T) {
		d := semanticEval(t, &fakeSimilarity{err: errors.New("embeddings: 503 Service Unavailable")}).DetectFollowUp(paraReq, paraAnswer, paraNext)
		assert.Equal(t, lexical.Type, d.Type)
		assert.Equal(t, lexical.Confidence, d.Confidence)
		assert.Contains(t, strings.Join(d.Checks, "; "), "ccm: embeddings_error: embeddings: 503 Service Unavailable; lexical similarity used")
	})
	t.Run("a lexical re-ask asks no embedding", func(t *testing.T) {
		f := &fakeSimilarity{sim: 0}
		d := semanticEval(t, f).DetectFollowUp("Where is my order 5521?", "I can help with orders.", "Where is my order 5521?")
		assert.Equal(t, DetectionCCM, d.Type)
		assert.Empty(t, f.calls)
	})
}

// driftingTurn answers a refund request with a tool call and an answer that share no
// word with it (lexically drifting: drift 1).
func driftingTurn() *session.AgentSession {
	return &session.AgentSession{ID: "s2", Turns: []session.Turn{{UserMessage: "Please refund order 55102 now",
		FinalResponse: "Your reimbursement was issued.", Status: "ok",
		Interactions: []session.AgentInteraction{{AgentID: "support", Output: "Your reimbursement was issued.", Status: "ok"}}}}}
}

func TestSemanticIntentDrift(t *testing.T) {
	base := newEval(t).AnalyzeSession(driftingTurn())
	require.NotNil(t, base.IntentDriftScore)
	require.Greater(t, *base.IntentDriftScore, 0.5, base.Explanations[keyIntentDriftScore])

	f := &fakeSimilarity{sim: 0.8}
	a := semanticEval(t, f).AnalyzeSession(driftingTurn())
	require.NotNil(t, a.IntentDriftScore)
	assert.Equal(t, 0.0, *a.IntentDriftScore)
	assert.Equal(t, []string{"s2|Please refund order 55102 now|Your reimbursement was issued."}, f.calls, "one call for all the turn's items (deduplicated)")
	tr := semanticEval(t, &fakeSimilarity{sim: 0.8}).EvaluateTurn(driftingTurn(), 0, true)
	assert.Contains(t, tr.Explanations[keyIntentDrift], "final response is on task (embedding similarity 0.8 >= 0.75")

	low := semanticEval(t, &fakeSimilarity{sim: 0.5}).AnalyzeSession(driftingTurn())
	assert.Equal(t, *base.IntentDriftScore, *low.IntentDriftScore)

	bad := semanticEval(t, &fakeSimilarity{err: errors.New("judge: cost limit per session reached")}).EvaluateTurn(driftingTurn(), 0, true)
	assert.Equal(t, *base.IntentDriftScore, *bad.IntentDrift)
	assert.Contains(t, bad.Explanations[keyIntentDrift], "embeddings_error: judge: cost limit per session reached; lexical coverage used")
}

func TestEmbeddingScoringValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Embeddings.CCMThreshold = 1.5
	cfg.Embeddings.OnTaskThreshold = -0.1
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scoring.embeddings.ccm_threshold: must be in [0,1] (got 1.5)")
	assert.Contains(t, err.Error(), "scoring.embeddings.on_task_threshold: must be in [0,1] (got -0.1)")
}
