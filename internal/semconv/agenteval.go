// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// This project's own attribute keys (docs/architecture.md §4, §6). They are written on the evaluation
// spans the processor emits, except the input signals marked "read".
const (
	// AgentEvalPrefix starts every agent_eval.* key; per-metric scores are
	// AgentEvalPrefix + metric name (e.g. "agent_eval.overall_score").
	AgentEvalPrefix = "agent_eval."

	// AgentEvalKind is the evaluated entity kind: one of the EvalKind* values.
	AgentEvalKind = "agent_eval.kind"
	// AgentEvalSessionID is the evaluated session's id.
	AgentEvalSessionID = "agent_eval.session.id"
	// AgentEvalToolIssues is a string array of issue codes (UNAUTHORIZED_TOOL...).
	AgentEvalToolIssues = "agent_eval.tool.issues"
	// AgentEvalPartial is true when the evaluated session or turn was closed early.
	AgentEvalPartial = "agent_eval.partial"
	// AgentEvalAnalysis is the full session analysis JSON, on the session evaluation span
	// when the processor's emit.analysis is on (off by default).
	AgentEvalAnalysis = "agent_eval.analysis"
	// AgentEvalTurnPrefix starts the typed attributes of a turn result on the turn
	// evaluation span: agent_eval.turn.<field> for each field of evaluation.TurnResult by
	// its JSON name (internal/evalspan).
	AgentEvalTurnPrefix = "agent_eval.turn."
	// AgentEvalSessionPrefix starts the typed attributes of a session analysis on the
	// session evaluation span: agent_eval.session.<field> for each field of
	// evaluation.Analysis by its JSON name (internal/evalspan).
	AgentEvalSessionPrefix = "agent_eval.session."
	// AgentEvalTurnWireDefaults and AgentEvalSessionWireDefaults (int) name the table of
	// defaults a turn or session span's typed attributes were written with: a field
	// whose value is its default is left out, one absent by value (nil, "", false) is
	// an empty value (internal/evalspan). Absent on spans of earlier collectors, whose
	// attributes are read with no defaults.
	AgentEvalTurnWireDefaults    = AgentEvalTurnPrefix + "wire_defaults"
	AgentEvalSessionWireDefaults = AgentEvalSessionPrefix + "wire_defaults"
	// AgentEvalTurnsOmitted (int) on a session evaluation span: how many of the session's
	// oldest turns its typed attributes leave out, to stay within the processor's
	// emit.max_session_span_bytes; they are in turns parts (AgentEvalSessionTurnsPart).
	// Outside AgentEvalSessionPrefix: not signed, informative.
	AgentEvalTurnsOmitted = "agent_eval.turns_omitted"
	// AgentEvalSessionTurnsPart (bool, true) marks a turns part: a session evaluation span
	// beside a session span that omits turns (AgentEvalTurnsOmitted), carrying a range of
	// those turns with the session's fields repeated, and no gen_ai.evaluation.result
	// events. An exporter stores its turns and counts no analysis for it. Under
	// AgentEvalSessionPrefix, so signed; no field of the analysis.
	AgentEvalSessionTurnsPart = AgentEvalSessionPrefix + "turns_part"
	// AgentEvalSessionNumberedHere (bool, true) marks a session evaluation span (or turns
	// part) whose turn indexes are, some of them, the emitting collector's guesses: its
	// continuation store could not allocate them (evaluation.Analysis.NumberedHere). Absent
	// otherwise. Under AgentEvalSessionPrefix, so signed; no field of the analysis.
	AgentEvalSessionNumberedHere = AgentEvalSessionPrefix + "numbered_here"
	// AgentEvalJudge is true on the GenAI chat spans of judge calls (never evaluated).
	AgentEvalJudge = "agent_eval.judge"

	// AgentEvalSessionEnd (read): bool true (or string "true") on any span ends the session
	// explicitly; the processor's default end attribute.
	AgentEvalSessionEnd = "agent_eval.session.end"
	// AgentEvalTaskCompleted (read): bool, an explicit task outcome from the application or
	// the receiver's proctor submit.
	AgentEvalTaskCompleted = "agent_eval.task.completed"
)

// agent_eval.kind values and the evaluation span names: EvalSpanPrefix + kind.
const (
	EvalSpanPrefix          = "evaluate "
	EvalKindToolCall        = "tool_call"
	EvalKindAgentInteract   = "agent_interaction"
	EvalKindTurn            = "turn"
	EvalKindAgentSession    = "agent_session"
	EvalSpanToolCall        = EvalSpanPrefix + EvalKindToolCall
	EvalSpanAgentInteract   = EvalSpanPrefix + EvalKindAgentInteract
	EvalSpanTurn            = EvalSpanPrefix + EvalKindTurn
	EvalSpanAgentSession    = EvalSpanPrefix + EvalKindAgentSession
	EvalLabelPass           = "pass"
	EvalLabelFail           = "fail"
	EvalLabelNotEvaluable   = "not_evaluable"
	EvalErrorTypeJudgeError = "judge_error"
)

// AgentEvalSignature authenticates an evaluation span's typed result (internal/evalspan
// Signer, docs/decisions/evaluation-authenticity.md): "v1:" + hex HMAC-SHA256.
const AgentEvalSignature = "agent_eval.signature"
