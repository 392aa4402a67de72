// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

// Explanation keys of a TurnResult.
const (
	keyDetection   = "detection"
	keyIntentDrift = "intent_drift"
)

// turn evaluates turn ti: its interactions (interactionEvaluators), then the turn
// (turnEvaluators: recovered calls, the detection (docs/scoring.md §5) with the
// bad-turn rule on the final responder, the turn's intent drift).
func (c *evalCtx) turn(ti int, final bool) TurnResult {
	t := &c.s.Turns[ti]
	tr := &c.result
	*tr = TurnResult{
		SessionID:    c.s.ID,
		TurnIndex:    ti,
		TraceID:      t.TraceID,
		RootSpanID:   t.RootSpanID,
		StartedAt:    t.StartedAt.UTC(),
		Final:        final,
		WithFollowUp: final && ti+1 < len(c.s.Turns), // as Evaluator.FollowUp gives it
		LatencyMs:    t.LatencyMs,
		Usage:        t.Usage,
		Partial:      t.Partial,
		Anomalies:    t.Anomalies, // copy-on-write in the tracker: shared, never changed
		Interactions: make([]InteractionResult, len(t.Interactions)),
		Explanations: map[string]string{},
	}
	tr.UserMessage, tr.FinalResponse = t.UserMessage, t.FinalResponse
	for ii := range t.Interactions {
		c.interaction(ti, ii, &tr.Interactions[ii])
	}
	x := turnInput{ti: ti, final: final}
	for _, ev := range turnEvaluators {
		ev.evaluate(c, x, tr)
	}
	if !turnHasContent(t) {
		tr.NotEvaluable = []string{ReasonContentNotCaptured}
	}
	if t.CutBy != "" {
		tr.NotEvaluable = append(tr.NotEvaluable, ReasonCutByCollector)
	}
	return *tr
}

// turnInput is what a turnEvaluator reads besides the turn's model and its result.
type turnInput struct {
	ti int
	// final: the turn's follow-up is known (the next turn exists or the session ended).
	final bool
}
