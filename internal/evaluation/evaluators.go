// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

// The scores are computed by small evaluators, one per file, each behind the interface
// of its level; the Evaluator runs the lists below in order. Adding a score is adding a
// file with its evaluator (and its test) and an entry here (docs/architecture.md,
// "Evaluation"; docs/decisions/maintenance.md).

// An interactionEvaluator scores one component of an agent interaction (docs/scoring.md
// §4): evaluate returns the score of the interaction x in [0,1], nil when it cannot be
// judged, and the explanation.
type interactionEvaluator interface {
	evaluate(c *evalCtx, x interactionInput) (*float64, string)
}

// An interactionComponent is an interactionEvaluator and where its component goes: the
// component is a field of InteractionResult and of AgentScores and a term of the weighted
// interaction and agent scores, with a weight of AgentWeights.
type interactionComponent struct {
	interactionEvaluator
	// name is the component's explanation key and its term in the weighted scores.
	name string
	// weight is the component's weight in w.
	weight func(w AgentWeights) float64
	// field and agentField locate the component in an interaction's and an agent's
	// scores.
	field      func(r *InteractionResult) **float64
	agentField func(as *AgentScores) **float64
}

// interactionEvaluators are the components of an interaction's score, in the order of
// the weighted mean's explanation.
var interactionEvaluators = []interactionComponent{
	{toolUse{}, keyToolUse, func(w AgentWeights) float64 { return w.ToolUse }, func(r *InteractionResult) **float64 { return &r.ToolUse }, func(as *AgentScores) **float64 { return &as.ToolUse }},
	{reasoning{}, keyReasoning, func(w AgentWeights) float64 { return w.Reasoning }, func(r *InteractionResult) **float64 { return &r.Reasoning }, func(as *AgentScores) **float64 { return &as.Reasoning }},
	{handoff{}, keyHandoff, func(w AgentWeights) float64 { return w.Handoff }, func(r *InteractionResult) **float64 { return &r.Handoff }, func(as *AgentScores) **float64 { return &as.Handoff }},
	{responseQuality{}, keyResponseQuality, func(w AgentWeights) float64 { return w.ResponseQuality }, func(r *InteractionResult) **float64 { return &r.ResponseQuality }, func(as *AgentScores) **float64 { return &as.ResponseQuality }},
}

// A turnEvaluator sets part of a turn's result once its interactions are scored
// (docs/scoring.md §5, §6). It reads what the entries before it in turnEvaluators set.
type turnEvaluator interface {
	evaluate(c *evalCtx, x turnInput, tr *TurnResult)
}

// turnEvaluators complete a turn's result, in order: the recovered calls are marked
// before the detection reads them.
var turnEvaluators = []turnEvaluator{toolRecovery{}, turnDetection{}, turnIntentDrift{}}

// A turnDetector looks for one kind of bad turn (docs/scoring.md §5.2). It returns its
// verdict (bad true), or the zero detection when it finds none, and appends the
// explanation of its checks to x.expl.
type turnDetector interface {
	detect(c *evalCtx, x *detectInput) detection
}

// turnDetectors run in this order, which is the order of the detection's explanation
// and the verdicts' priority: the first verdict wins (RDM or CCM > no_answer >
// hallucination > none).
var turnDetectors = []turnDetector{
	followUpDetector{},
	recoveredParameters{},
	noAnswerDetector{},
	hallucinationDetector{},
}

// A sessionEvaluator computes one part of the session analysis (docs/scoring.md §6) from
// the final turn records. It reads what the entries before it in sessionEvaluators set
// on a, and sets its own fields and explanations.
type sessionEvaluator interface {
	evaluate(e *Evaluator, x sessionInput, a *Analysis)
}

// sessionEvaluators compute the analysis, in order: the references fold into
// tool_use_score (before coordination, whose dependency_compliance they set), the
// overall score weighs what precedes it, and the recommendations read the agent scores.
var sessionEvaluators = []sessionEvaluator{
	sessionConversation{},
	sessionToolUseScore{},
	sessionReasoningScore{},
	sessionReferences{},
	sessionCoordination{},
	sessionIntentDriftScore{},
	sessionTaskCompletion{},
	sessionOverall{},
	sessionAgentScores{},
	sessionRecommendations{},
	sessionLatency{},
}
