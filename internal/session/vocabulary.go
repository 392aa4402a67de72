// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session // import "github.com/agenteval/agenteval-collector/internal/session"

import "strings"

// The vocabulary of the model that assembly writes: turn anomalies, root rules, agent rules
// of derived agents, handoff sources, and the agent key that matches agents and tools by
// name. The consumers (evaluation, tracker, console) read the same constants.

// Anomaly values recorded in Turn.Anomalies: what was odd in a trace and was handled
// (docs/architecture.md §4; docs/decisions/sessions.md).
const (
	// AnomalyCycle: the parent links of some spans formed a cycle; it was broken at the
	// earliest span of the cycle (by start time, then span id), which became a root.
	AnomalyCycle = "cycle"
	// AnomalyMissingParent: a GenAI span (turn/agent/llm/tool/handoff) other than the turn
	// root names a parent span that is not in the trace. Orphaned non-GenAI spans (HTTP
	// server spans whose parent is outside the batch) and an orphaned root are normal.
	AnomalyMissingParent = "missing_parent"
	// AnomalyDuplicateSpan: the same span id was seen more than once; the first kept.
	AnomalyDuplicateSpan = "duplicate_span"
	// AnomalySelfParent: a span named itself as its parent; it was treated as a root.
	AnomalySelfParent = "self_parent"
	// AnomalyLateSpan: a span of the turn's trace arrived after the turn closed; it was
	// counted, not assembled (set by the Tracker).
	AnomalyLateSpan = "late_span"
	// AnomalyTruncatedText: a text field or tool arguments were cut at max_text_bytes.
	AnomalyTruncatedText = "truncated_text"
	// AnomalyUnreadableValue: an attribute value of a span could not be read or was not
	// parsed (malformed message JSON, a token count that is no number, an outcome that is
	// no bool, a value over the parse limit...: SpanRecord.Problems); it was not used,
	// the rest of the span was.
	AnomalyUnreadableValue = "unreadable_value"
)

// Turn.RootRule values: which rule chose the turn root (docs/decisions/sessions.md §1.5 "Turn").
const (
	// RootRuleTurnMarker: the highest explicit turn marker (ClassTurn: handle_conversation_turn,
	// invoke_workflow, ADK invocation, traceloop workflow...).
	RootRuleTurnMarker = "turn_marker"
	// RootRuleGenAIRoot: no turn marker; the highest agent, LLM or tool span.
	RootRuleGenAIRoot = "highest_genai_span"
	// RootRuleSpanRoot: no GenAI span of those classes; the highest span of the trace.
	RootRuleSpanRoot = "highest_span"
	// RootRuleWorkflowAgent: the highest turn marker is a top-level agent span that only
	// wraps other agents (named by nothing but its span name, no LLM, tool or handoff
	// span of its own): the OpenAI Agents trace span through OpenInference.
	RootRuleWorkflowAgent = "workflow_agent"
)

// AgentInteraction.AgentRule values of the synthetic interaction built for traces without
// any agent span (single-agent frameworks such as the Vercel AI SDK).
const (
	// AgentRuleSyntheticRootName: the agent id was derived from the root span's name
	// ("invoke_agent X", "invoke_workflow X", "X.agent", "X.workflow").
	AgentRuleSyntheticRootName = "synthetic:root_span_name"
	// AgentRuleSynthetic: no name could be derived; the agent id is SyntheticAgentID.
	AgentRuleSynthetic = "synthetic"
	// SyntheticAgentID is the agent id of a synthetic interaction whose root has no
	// agent-like name.
	SyntheticAgentID = "agent"
)

// AgentInteraction.AgentRule of a LangGraph node promoted to an agent by the trace (see
// promoteLangGraphNodes).
const (
	// AgentRuleLangGraphHandoffTarget: a LangGraph node span named as the target of a
	// handoff tool (transfer_to_<node>, handoff_to_<node>...) seen in the trace.
	AgentRuleLangGraphHandoffTarget = "metadata.langgraph_node;handoff_target"
	// AgentRuleLangGraphSubgraph: a LangGraph node span whose subgraph holds an agent span
	// of the same name (the ReAct model node "agent", named after its subgraph).
	AgentRuleLangGraphSubgraph = "metadata.langgraph_node;subgraph"
)

// AgentRuleSpanName is the AgentRule of an agent named only by its span name.
const AgentRuleSpanName = "span_name"

// Handoff.SourceRule values: the six handoff signals of docs/decisions/sessions.md §1.5, strongest
// first.
const (
	// HandoffSourceTransfer (a): gen_ai.transfer.* on a tool execution span.
	HandoffSourceTransfer = "gen_ai.transfer"
	// HandoffSourceHandoffSpan (b): an explicit handoff span (agent_handoff / handoff
	// operation, gen_ai.handoff.from_agent / to_agent).
	HandoffSourceHandoffSpan = "gen_ai.handoff"
	// HandoffSourceOpenInference (c): the OpenInference "handoff to X" span, or an agent
	// span whose graph.node.parent_id names an earlier agent.
	HandoffSourceOpenInference = "openinference.handoff_span"
	// HandoffSourceTool (d): a handoff tool call (transfer_to_*, transfer_to_agent,
	// handoff_to_agent, handoff_to_*, transfer_back_to_*, CrewAI coworker tools). Inferred.
	HandoffSourceTool = "handoff_tool"
	// HandoffSourceAgentAsTool (e): an agent span nested under a tool span (agent-as-tool,
	// mode return_to_caller). Inferred.
	HandoffSourceAgentAsTool = "agent_as_tool"
	// HandoffSourceSibling (f): consecutive sibling agent spans of different agents (mode
	// pass_control). Inferred; the weakest signal.
	HandoffSourceSibling = "sibling_agents"
	// HandoffSourceCaller: an agent span names the agent that called it
	// (gen_ai.caller.name on a remote invoke_agent CLIENT span, semantic-conventions-genai
	// main; OpenLLMetry's gen_ai.agent.handoff_parent).
	HandoffSourceCaller = "gen_ai.caller"
)

// AgentKey normalises an agent or tool name for matching: lower case, every run of
// non-alphanumeric characters as one "_", trimmed ("Math Specialist", "math-specialist"
// and the suffix of transfer_to_math_specialist all give "math_specialist"). Non-ASCII
// letters are kept as they are.
func AgentKey(s string) string {
	if isAgentKey(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	sep := false
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
		} else {
			sep = true
		}
	}
	return b.String()
}

// isAgentKey reports whether AgentKey(s) == s without allocating: lower-case ASCII letters
// and digits in runs joined by single underscores.
func isAgentKey(s string) bool {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' {
		return s == ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
		case c == '_' && s[i-1] != '_':
		default:
			return false
		}
	}
	return true
}
