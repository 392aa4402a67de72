// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// Reference-based evaluation and evaluator provenance (docs/scoring.md §11, §5.6;
// docs/scoring.md §11).
const (
	// AgentEvalDatasetRunID (read): groups the sessions of one dataset run; the
	// processor's default references.run_id_attribute. No GenAI convention exists yet.
	AgentEvalDatasetRunID = "agent_eval.dataset.run.id"
	// AgentEvalReferencePass and AgentEvalReferenceScore summarise a session's dataset
	// case on its session span: every reference evaluator passed, their mean score.
	AgentEvalReferencePass  = "agent_eval.reference.pass"
	AgentEvalReferenceScore = "agent_eval.reference.score"

	// Provenance of an evaluation result, on its gen_ai.evaluation.result event: the
	// evaluator's name, its type (EvaluatorType*) and a hash of its configuration. Ready to
	// move to gen_ai.evaluation.evaluator.* if that proposal lands.
	AgentEvalEvaluatorID      = "agent_eval.evaluator.id"
	AgentEvalEvaluatorType    = "agent_eval.evaluator.type"
	AgentEvalEvaluatorVersion = "agent_eval.evaluator.version"

	EvaluatorTypeDeterministic = "deterministic"
	EvaluatorTypeLLMJudge      = "llm_judge"
	EvaluatorTypeReference     = "reference"

	// EvalKindReference is the kind of the span carrying late (judge) verdicts on a
	// session's dataset case: "evaluate reference", a child of the last turn's root.
	EvalKindReference = "reference"
	EvalSpanReference = EvalSpanPrefix + EvalKindReference
	// EvalErrorTypeReferenceError marks a reference evaluator that could not evaluate.
	EvalErrorTypeReferenceError = "reference_error"
)

// EvalKindJudge is the kind of the span carrying the judge's session-level verdicts
// (reasoning, response_quality, handoff, hallucination, intent_drift, task_completion):
// "evaluate judge", a child of the last turn's root.
const (
	EvalKindJudge = "judge"
	EvalSpanJudge = EvalSpanPrefix + EvalKindJudge
)
