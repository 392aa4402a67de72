// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"cmp"
	"slices"
	"time"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// All scores are in [0,1], higher is better, except IntentDriftScore (lower is better).
// A score that cannot be computed is nil (JSON null) and its Explanations entry says why;
// it is never a default number (docs/scoring.md).

// Severity of a tool issue (docs/scoring.md §3). Penalties: HIGH 1.0, MEDIUM 0.5, LOW 0.25.
type Severity string

// Severities.
const (
	SeverityHigh   Severity = "HIGH"
	SeverityMedium Severity = "MEDIUM"
	SeverityLow    Severity = "LOW"
)

// IssueType is a tool-use issue (docs/scoring.md §3; the ReAsk evaluation plan's "Smart Tool Validation").
type IssueType string

// Issue types.
const (
	IssueUnauthorizedTool       IssueType = "UNAUTHORIZED_TOOL"
	IssueParameterHallucination IssueType = "PARAMETER_HALLUCINATION"
	IssueMissingRequiredParam   IssueType = "MISSING_REQUIRED_PARAM"
	IssueInvalidParamValue      IssueType = "INVALID_PARAM_VALUE"
	IssueMalformedArguments     IssueType = "MALFORMED_ARGUMENTS"
	IssueToolError              IssueType = "TOOL_ERROR"
)

// Detection types of a turn (docs/scoring.md §5; seed reask).
const (
	DetectionNone          = "none"
	DetectionRDM           = "rdm"
	DetectionCCM           = "ccm"
	DetectionHallucination = "hallucination"
	DetectionLLMJudge      = "llm_judge"
	// DetectionNoAnswer: the turn ended in an error (error status, or cut short) without
	// a final response; the user got nothing (docs/scoring.md §5.2).
	DetectionNoAnswer = "no_answer"
)

// Tool-call verdicts, used as the `valid` metric label.
const (
	VerdictValid        = "valid"
	VerdictInvalid      = "invalid"
	VerdictNotEvaluable = "not_evaluable"
)

// ToolIssue is one finding on one tool call; the item shape of the analysis'
// tool_issues[] (docs/architecture.md §11).
type ToolIssue struct {
	TurnIndex int       `json:"turn_index"`
	AgentID   string    `json:"agent_id"`
	ToolName  string    `json:"tool_name"`
	Issue     IssueType `json:"issue"`
	Severity  Severity  `json:"severity"`
	// Parameter is the offending argument key (PARAMETER_HALLUCINATION,
	// MISSING_REQUIRED_PARAM, INVALID_PARAM_VALUE); "" otherwise, JSON null (MarshalJSON).
	Parameter string `json:"parameter,omitempty"`
	SpanID    string `json:"span_id"`
	// Executed tells whether the call ran (false: rejected before running, or only
	// requested by the model).
	Executed bool `json:"executed"`
	// Message is a human-readable statement of the finding.
	Message string `json:"message"`
}

// ToolCallResult is the validation of one tool call (docs/scoring.md §3).
type ToolCallResult struct {
	ToolName string `json:"tool_name"`
	CallID   string `json:"call_id,omitempty"`
	SpanID   string `json:"span_id"`
	AgentID  string `json:"agent_id"`
	// Score = max(0, 1 − Σ penalty); nil when not evaluable.
	Score *float64 `json:"score"`
	// Verdict is VerdictValid, VerdictInvalid or VerdictNotEvaluable.
	Verdict string      `json:"verdict"`
	Issues  []ToolIssue `json:"issues"`
	// NotEvaluable lists why a check could not run: "tools_unknown", "schema_unknown",
	// "arguments_not_captured", "arguments_truncated".
	NotEvaluable []string `json:"not_evaluable,omitempty"`
	Executed     bool     `json:"executed"`
	Status       string   `json:"status"`
	// LatencyMs is the execution span's duration in milliseconds; nil when not executed.
	LatencyMs *float64 `json:"latency_ms,omitempty"`
	// RecoveredBy is set on a call with a MEDIUM or HIGH issue when a later call of the
	// same turn to the same tool ended ok with no such issue (the framework rejected the
	// call and the agents retried it correctly): the span id (else the call id) of that
	// call. A recovered fault lowers tool_use only (docs/scoring.md §5.2).
	RecoveredBy string `json:"recovered_by,omitempty"`
	Explanation string `json:"explanation"`
}

// InteractionResult scores one agent interaction (docs/scoring.md §4).
type InteractionResult struct {
	AgentID string `json:"agent_id"`
	SpanID  string `json:"span_id"`
	// Score is the interaction's agent_score (weighted, renormalised).
	Score           *float64          `json:"score"`
	ToolUse         *float64          `json:"tool_use"`
	Reasoning       *float64          `json:"reasoning"`
	Handoff         *float64          `json:"handoff"`
	ResponseQuality *float64          `json:"response_quality"`
	LatencyMs       float64           `json:"latency_ms"`
	Status          string            `json:"status"`
	ToolCalls       []ToolCallResult  `json:"tool_calls"`
	Handoffs        []session.Handoff `json:"handoffs,omitempty"`
	Explanations    map[string]string `json:"explanations"`
}

// TurnResult is the evaluation of one turn, carried by the turn evaluation span as
// agent_eval.turn.* attributes (internal/evalspan).
type TurnResult struct {
	SessionID  string `json:"session_id"`
	TurnIndex  int    `json:"turn_index"`
	TraceID    string `json:"trace_id"`
	RootSpanID string `json:"root_span_id"`
	// StartedAt is when the turn began (session.Turn.StartedAt: the start of its earliest
	// span, UTC). TurnIndex is the order turns closed in, which a turn that closed late
	// does not follow; the conversation order is by StartedAt, then TurnIndex
	// (ConversationOrder, docs/decisions/sessions.md §1.5). Zero (absent) on a turn
	// evaluated by a collector that did not record it, or whose spans carry no time.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Final is false while the turn's follow-up user message is not yet known: only
	// hallucination can be detected then; CCM/RDM come with the final verdict.
	Final bool `json:"final"`
	// WithFollowUp is true on a final verdict given with the next turn's user message
	// (Evaluator.FollowUp, FollowUpBy), false while provisional and on a final verdict
	// given without it (FinishLast: the session went idle after this turn). With Final it
	// gives the verdict's stage (VerdictStage), which the result store compares so that
	// a save never takes a turn's verdict back (docs/decisions/sessions.md §4.5). Absent
	// on the results of a collector that did not set it: read as without follow-up.
	WithFollowUp bool `json:"with_follow_up,omitempty"`
	// Revised is true on a final verdict that replaces an earlier final one: the last
	// turn of an idle session judged again when the session continued (its follow-up
	// arrived), a turn judged again with another follow-up (it closed late), or a
	// verdict that another collector sharing the continuation store gave first
	// (docs/decisions/sessions.md §4.5). agent_eval_turns_total skips it, so each turn
	// is counted once; agent_eval_turns_revised_total counts its change.
	Revised bool `json:"revised,omitempty"`
	// ReplacedDetectionType is, on a Revised verdict, the DetectionType (one of the
	// Detection* values) of the final verdict it replaces: the one counted, or its
	// latest revision. Equal to DetectionType when the verdict did not change; ""
	// when not Revised, and on the spans of an earlier collector, which did not set it
	// (agent_eval_turns_revised_total counts those as "unknown", docs/metrics.md).
	ReplacedDetectionType string `json:"replaced_detection_type,omitempty"`

	IsBad         bool          `json:"is_bad"`
	DetectionType string        `json:"detection_type"`
	Confidence    float64       `json:"confidence"`
	Reason        string        `json:"reason"`
	IntentDrift   *float64      `json:"intent_drift"`
	LatencyMs     float64       `json:"latency_ms"`
	Usage         session.Usage `json:"usage"`
	Partial       bool          `json:"partial,omitempty"`
	// NotEvaluable lists why the turn's detection could not run (ReasonContentNotCaptured);
	// empty when it ran.
	NotEvaluable []string `json:"not_evaluable,omitempty"`
	// Anomalies lists what was odd in the turn's spans and how assembly handled it
	// (session.Turn.Anomalies, sorted: cycle, duplicate_span, missing_parent, self_parent,
	// truncated_text, unreadable_value; docs/decisions/sessions.md §1.1); empty when
	// nothing was. The spans themselves are passed on unchanged.
	Anomalies []string `json:"anomalies,omitempty"`
	// UserMessage and FinalResponse are the turn's texts (capped at the processor's
	// max_text_bytes; "" when not captured): with every turn's, the analysis holds the
	// whole conversation, the transcript the web UI shows next to the verdicts.
	UserMessage   string              `json:"user_message,omitempty"`
	FinalResponse string              `json:"final_response,omitempty"`
	Interactions  []InteractionResult `json:"interactions"`
	Explanations  map[string]string   `json:"explanations,omitempty"`
}

// CompareConversation orders, in the conversation, the turn that started at a with turn
// index i and the one that started at b with index j: by start, then by index (the order
// they closed in). It returns -1, 0 or +1, as cmp.Compare.
func CompareConversation(a time.Time, i int, b time.Time, j int) int {
	if c := a.Compare(b); c != 0 {
		return c
	}
	return cmp.Compare(i, j)
}

// ConversationOrder sorts turns, in place, into the order of the conversation
// (CompareConversation: by StartedAt, then TurnIndex). When a turn has no StartedAt
// (evaluated by a collector that did not record it) the order of starts is not known, and
// turns are left in the order given. The query API lists a session's turns in this order (docs/decisions/sessions.md
// §1.5): a turn that closed late has a higher TurnIndex than the turn after it.
func ConversationOrder(turns []TurnResult) {
	if slices.ContainsFunc(turns, func(t TurnResult) bool { return t.StartedAt.IsZero() }) {
		return
	}
	slices.SortStableFunc(turns, func(a, b TurnResult) int {
		return CompareConversation(a.StartedAt, a.TurnIndex, b.StartedAt, b.TurnIndex)
	})
}

// AgentScores is one agent's entry in per_agent_scores (the ReAsk evaluation plan, "Session Analysis
// Response"): the means of its interactions' scores over the session.
type AgentScores struct {
	Overall           *float64 `json:"overall"`
	ToolUse           *float64 `json:"tool_use"`
	Reasoning         *float64 `json:"reasoning"`
	Handoff           *float64 `json:"handoff"`
	ResponseQuality   *float64 `json:"response_quality"`
	InteractionsCount int      `json:"interactions_count"`
	ToolCalls         int      `json:"tool_calls"`
	NotEvaluableCalls int      `json:"not_evaluable_calls"`
	// MeanLatencyMs is the mean interaction latency in milliseconds.
	MeanLatencyMs float64  `json:"mean_latency_ms"`
	Issues        []string `json:"issues"`
	// Recommendations are the analysis' recommendations about this agent (AgentID is
	// the agent), in the same order and shape as Analysis.Recommendations.
	Recommendations []Recommendation  `json:"recommendations"`
	Explanations    map[string]string `json:"explanations"`
}

// ConversationSummary counts turn verdicts (the ReAsk evaluation plan, "conversation").
type ConversationSummary struct {
	TotalResponses          int `json:"total_responses"`
	GoodResponses           int `json:"good_responses"`
	BadResponses            int `json:"bad_responses"`
	CCMDetections           int `json:"ccm_detections"`
	RDMDetections           int `json:"rdm_detections"`
	HallucinationDetections int `json:"hallucination_detections"`
	LLMJudgeDetections      int `json:"llm_judge_detections"`
	NoAnswerDetections      int `json:"no_answer_detections"`
	// Score is conversation_score = good / total; nil without turns.
	Score *float64 `json:"score"`
}

// Recommendation is one actionable suggestion, ranked by Impact (higher first). In JSON
// every key is present (MarshalJSON): agent_id, tool_name and parameter are null when
// the rule is not about one agent, tool or parameter, count is null when the rule does
// not count occurrences.
type Recommendation struct {
	// Kind is the rule: "tool_use", "handoff", "reasoning", "coordination", "rdm", "ccm",
	// or an issue type in lower case for specific ones ("missing_required_param"...).
	Kind      string `json:"kind"`
	AgentID   string `json:"agent_id,omitempty"`
	ToolName  string `json:"tool_name,omitempty"`
	Parameter string `json:"parameter,omitempty"`
	// Count is how many occurrences the rule counted (tool issues, corrections,
	// re-asks); 0 for the score-threshold rules.
	Count   int     `json:"count,omitempty"`
	Message string  `json:"message"`
	Impact  float64 `json:"impact"`
}

// LatencySummary aggregates latencies, in milliseconds.
type LatencySummary struct {
	TotalMs           float64 `json:"total_ms"`
	MeanTurnMs        float64 `json:"mean_turn_ms"`
	MaxTurnMs         float64 `json:"max_turn_ms"`
	ToolCalls         int     `json:"tool_calls"`
	MeanToolCallMs    float64 `json:"mean_tool_call_ms"`
	MaxToolCallMs     float64 `json:"max_tool_call_ms"`
	MeanInteractionMs float64 `json:"mean_interaction_ms"`
}

// Analysis is the session analysis (docs/scoring.md §6): the ReAsk plan's "Session Analysis
// Response" plus session_id, partial, tool_issues, recommendations, latency, usage and
// references. It is carried by the session evaluation span as agent_eval.session.* attributes
// (internal/evalspan) and is what the query API returns.
type Analysis struct {
	SessionID string `json:"session_id"`
	// AnalysisRevision numbers the analyses of one session from 1: a session that
	// continues after it went idle is analysed again over all its turns as the next
	// revision (docs/decisions/sessions.md). 0 (absent) before it is emitted.
	AnalysisRevision  int                    `json:"analysis_revision,omitempty"`
	Service           string                 `json:"service,omitempty"`
	StartedAt         time.Time              `json:"started_at"`
	EndedAt           time.Time              `json:"ended_at"`
	Partial           bool                   `json:"partial"`
	EndReason         string                 `json:"end_reason,omitempty"`
	OverallScore      *float64               `json:"overall_score"`
	CoordinationScore *float64               `json:"coordination_score"`
	IntentDriftScore  *float64               `json:"intent_drift_score"`
	TaskCompletion    *bool                  `json:"task_completion"`
	PerAgentScores    map[string]AgentScores `json:"per_agent_scores"`
	TurnResults       []TurnResult           `json:"turn_results"`
	Conversation      ConversationSummary    `json:"conversation"`
	ToolIssues        []ToolIssue            `json:"tool_issues"`
	Recommendations   []Recommendation       `json:"recommendations"`
	Latency           LatencySummary         `json:"latency"`
	Usage             session.Usage          `json:"usage"`
	// References holds reference-based results (docs/scoring.md §11); nil without a dataset.
	References any `json:"references"`
	// Explanations gives, per session-level score name, how it was computed or why it
	// is absent.
	Explanations map[string]string `json:"explanations"`
	// Coordination holds the components coordination_score averages (docs/scoring.md §6).
	Coordination CoordinationComponents `json:"coordination"`
	// ToolUseScore is the session tool_use term of overall_score: the mean score of all
	// evaluable tool calls; nil without one.
	ToolUseScore *float64 `json:"tool_use_score"`
	// ReasoningScore is the session reasoning term of overall_score: the mean
	// reasoning_score of the interactions that have one; nil without one.
	ReasoningScore *float64 `json:"reasoning_score"`
	// TurnsPart: TurnResults hold only a contiguous range of the session's turns, the
	// rest of the analysis is whole (a turns part, read from a span marked
	// agent_eval.session.turns_part: docs/decisions/sessions.md §4.10). Saved, it
	// replaces the stored turns of that range only. Not in the JSON or the span's typed
	// attributes.
	TurnsPart bool `json:"-"`
	// NumberedHere: some of TurnResults' indexes were numbered by the collector that
	// analysed the session, without its continuation store, which could not allocate
	// them (unreachable; read from a span marked agent_eval.session.numbered_here). The
	// indexes are guesses: a collector that could not load the session numbers its turns
	// from 0. Without it, an analysis from a collector with a continuation store holds the
	// indexes that store allocated, which the result store may use to put a stored
	// session's guessed turns back in order (docs/decisions/sessions.md §4.6). False
	// without a continuation store. Not in the JSON or the span's typed attributes.
	NumberedHere bool `json:"-"`
}

// CoordinationComponents are the parts of coordination_score (docs/scoring.md §6), each in
// [0,1], higher is better; nil when absent (not applicable or not computable).
type CoordinationComponents struct {
	// NoDuplicateWork = 1 − duplicated calls / calls of tools shared by two or more
	// agents within a turn.
	NoDuplicateWork *float64 `json:"no_duplicate_work"`
	// ContextPreserved is the mean handoff_score of the interactions that have one.
	ContextPreserved *float64 `json:"context_preserved"`
	// RoleAdherence is the fraction of authorised calls among the coordinating agents'
	// calls whose authorisation could be checked.
	RoleAdherence *float64 `json:"role_adherence"`
	// NoPingPong = max(0, 1 − ping_pong_penalty × A→B→A→B loops).
	NoPingPong *float64 `json:"no_ping_pong"`
	// DependencyCompliance comes from expected interactions (docs/scoring.md §11); nil here.
	DependencyCompliance *float64 `json:"dependency_compliance"`
}

// Agents returns the agent ids of the analysis, sorted.
func (a *Analysis) Agents() []string {
	out := make([]string, 0, len(a.PerAgentScores))
	for id := range a.PerAgentScores {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
