// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"strings"
	"unicode/utf8"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// classInfo carries what classification learnt from the span name for the field
// readers.
type classInfo struct {
	// nameHint is the entity name taken from the span name ("invoke_agent X" → X,
	// "X.tool" → X, "handoff to X" → X).
	nameHint string
	// adkCallLLM marks ADK's call_llm wrapper (ClassOther) whose payloads are still read.
	adkCallLLM bool
	// oiHandoff marks the OpenInference "handoff to X" span; tlFrom/tlTo the Traceloop
	// "{from} → {to}.handoff" span name.
	oiHandoff    bool
	tlFrom, tlTo string
	// volt marks a VoltAgent span (its own vocabulary, extract_voltagent.go).
	volt bool
}

// Classification rule names recorded in SpanRecord.ClassRule.
const (
	ruleOp = "gen_ai.operation.name="
	ruleOI = "openinference.span.kind="
	ruleTL = "traceloop.span.kind="
	// RuleName prefixes the ClassRule of a span classified by its name ("name:" + rule).
	RuleName = "name:"
	// ruleNormalized: an invoke_agent that contrib's gen_ai_normalizer made of a chain,
	// workflow or task span (its source kind is kept beside it).
	ruleNormalized = "gen_ai_normalizer:source_kind"
	// RuleSubagentFromTool: an agent named after the sub-agent its launching tool's
	// arguments name (assemble.go nameGenericSubagents).
	RuleSubagentFromTool = "launching_tool_arguments"
	ruleUnnamed          = ";unnamed"
	ruleOIHandoff        = "openinference.handoff_span"
	ruleGenAIHandoff     = "gen_ai.handoff"
	ruleNotNested        = semconv.GenAIInvocationIsNested + "=false"
	ruleADKMerged        = ";adk_merged_tools"
)

// maxRuleValue bounds the attribute value quoted in a rule name.
const maxRuleValue = 64

// rulesByName holds the rule strings for known values so that classifying allocates nothing.
var rulesByName = func() map[string]string {
	m := map[string]string{}
	for _, op := range []string{
		semconv.OpChat, semconv.OpGenerateContent, semconv.OpTextCompletion, semconv.OpEmbeddings,
		semconv.OpRetrieval, semconv.OpCreateAgent, semconv.OpInvokeAgent, semconv.OpExecuteTool,
		semconv.OpInvokeWorkflow, semconv.OpHandleConversationTurn, semconv.OpPlan, semconv.OpFetchResponse,
		semconv.OpAgentHandoff, semconv.OpHandoff, semconv.OpInvokeSwarm, semconv.OpInvokeGraph,
		semconv.OpExecuteEventLoopCycle, semconv.OpAgentStep, semconv.OpUnknown, semconv.OpGuardrailCheck,
	} {
		m[ruleOp+op] = ruleOp + op
		m[ruleOp+op+ruleUnnamed] = ruleOp + op + ruleUnnamed
	}
	for _, k := range []string{
		semconv.OIKindLLM, semconv.OIKindEmbedding, semconv.OIKindChain, semconv.OIKindRetriever,
		semconv.OIKindReranker, semconv.OIKindTool, semconv.OIKindAgent, semconv.OIKindGuardrail,
		semconv.OIKindEvaluator, semconv.OIKindPrompt, semconv.OIKindUnknown,
	} {
		m[ruleOI+k] = ruleOI + k
		m[ruleOI+k+ruleUnnamed] = ruleOI + k + ruleUnnamed
	}
	m[semconv.LLMRequestType+"=chat"] = semconv.LLMRequestType + "=chat"
	m[semconv.LLMRequestType+"=completion"] = semconv.LLMRequestType + "=completion"
	m[ruleOI+semconv.OIKindChain+";root"] = ruleOI + semconv.OIKindChain + ";root"
	m[ruleOI+semconv.OIKindChain+ruleLGSuffix] = ruleOI + semconv.OIKindChain + ruleLGSuffix
	m[ruleOI+semconv.OIKindAgent+ruleLGSuffix] = ruleOI + semconv.OIKindAgent + ruleLGSuffix
	for _, k := range []string{
		semconv.TraceloopKindWorkflow, semconv.TraceloopKindTask, semconv.TraceloopKindAgent,
		semconv.TraceloopKindTool, semconv.TraceloopKindHandoff, semconv.TraceloopKindUnknown,
	} {
		m[ruleTL+k] = ruleTL + k
		m[ruleTL+k+ruleUnnamed] = ruleTL + k + ruleUnnamed
	}
	for _, n := range []string{
		"invoke_agent", "execute_tool", "chat", "generate_content", "text_completion", "invoke_workflow",
		"handle_conversation_turn", "create_agent", semconv.AISpanGenerateText, semconv.AISpanStreamText,
		semconv.AISpanGenerateObject, semconv.AISpanStreamObject, "ai.*.doGenerate", semconv.AISpanToolCall,
		"tools/call", semconv.SpanNameOpenAIResponse, semconv.ADKSpanInvoc, semconv.ADKSpanCallLLM,
		"*.agent", "*.tool", "*.workflow", "*.handoff",
	} {
		m[RuleName+n] = RuleName + n
		m[RuleName+n+ruleUnnamed] = RuleName + n + ruleUnnamed
	}
	return m
}()

// joinRule returns the interned rule string prefix+value(+suffix); only unknown values
// allocate.
func joinRule(prefix, value, suffix string) string {
	if len(value) > maxRuleValue {
		value, _ = cutText(value, maxRuleValue)
	}
	if !utf8.ValidString(value) {
		value = strings.ToValidUTF8(value, "\uFFFD")
	}
	// Build the key on the stack: a map index m[string(bytes)] does not allocate.
	var buf [96]byte
	key := append(append(append(buf[:0], prefix...), value...), suffix...)
	if r, ok := rulesByName[string(key)]; ok {
		return r
	}
	return string(key)
}

// classify decides the span class (docs/decisions/conventions.md, §5.1): gen_ai.operation.name
// first, then openinference.span.kind, then traceloop.span.kind, then span-name patterns.
// It sets Class, ClassRule, Operation and, on agent spans, AgentName and AgentRule.
func (e *Extractor) classify(s *attrScan, r *session.SpanRecord, scopeName string) classInfo {
	var info classInfo
	name := r.Name

	// Spans this collector emitted (docs/architecture.md §6) and judge calls (§5.6).
	if s.has[attrEvalJudge] {
		if b, _ := valueBool(s.v[attrEvalJudge]); b {
			r.Class, r.ClassRule = session.ClassEvaluation, semconv.AgentEvalJudge
			return info
		}
	}
	if s.has[attrEvalKind] && strings.HasPrefix(name, semconv.EvalSpanPrefix) {
		r.Class, r.ClassRule = session.ClassEvaluation, semconv.AgentEvalKind
		return info
	}

	op := strings.TrimSpace(s.str(attrOp))
	oiKind := strings.ToUpper(strings.TrimSpace(s.str(attrOIKind)))
	r.Operation = e.text(r, op)

	// The OpenInference handoff span ("handoff to X", TOOL; dual-written as execute_tool).
	if strings.HasPrefix(name, semconv.OIHandoffSpanPrefix) && (oiKind == semconv.OIKindTool || op == semconv.OpExecuteTool) {
		info.oiHandoff, info.nameHint = true, strings.TrimSpace(name[len(semconv.OIHandoffSpanPrefix):])
		r.Class, r.ClassRule = session.ClassHandoff, ruleOIHandoff
		return info
	}

	// 1. gen_ai.operation.name.
	if op != "" {
		lop := lowerASCII(op)
		rule := joinRule(ruleOp, lop, "")
		switch lop {
		case semconv.OpInvokeAgent:
			tlKind := lowerASCII(strings.TrimSpace(s.str(attrTLKind)))
			switch {
			case oiKind == semconv.OIKindChain || tlKind == semconv.TraceloopKindWorkflow:
				// contrib's gen_ai_normalizer maps OpenInference CHAIN and OpenLLMetry
				// workflow/task spans to invoke_agent and keeps the source kind: a chain
				// is no agent (the trace root is the turn).
				if r.ParentSpanID == "" {
					r.Class, r.ClassRule = session.ClassTurn, ruleNormalized
				} else {
					r.Class, r.ClassRule = session.ClassOther, ruleNormalized
				}
			case tlKind == semconv.TraceloopKindTask:
				r.Class, r.ClassRule = session.ClassOther, ruleNormalized
			default:
				info.nameHint = afterPrefix(name, "invoke_agent")
				e.setAgent(s, r, rule, info.nameHint, false)
			}
		case semconv.OpExecuteTool:
			if strings.TrimSpace(s.str(attrToolName)) == semconv.ADKMergedTools {
				// ADK's span of the merged responses of parallel calls: each call has its
				// own execute_tool span.
				r.Class, r.ClassRule = session.ClassOther, joinRule(ruleOp, lop, ruleADKMerged)
				break
			}
			info.nameHint = afterPrefix(name, "execute_tool")
			r.Class, r.ClassRule = session.ClassTool, rule
		case semconv.MastraOpClientToolCall:
			info.nameHint = afterPrefix(name, semconv.MastraOpClientToolCall)
			r.Class, r.ClassRule = session.ClassTool, rule
		case semconv.OpChat, semconv.OpGenerateContent, semconv.OpTextCompletion:
			r.Class, r.ClassRule = session.ClassLLM, rule
		case semconv.OpAgentHandoff, semconv.OpHandoff:
			info.tlFrom, info.tlTo = traceloopHandoff(name)
			r.Class, r.ClassRule = session.ClassHandoff, rule
		case semconv.OpHandleConversationTurn, semconv.OpInvokeWorkflow, semconv.OpInvokeSwarm, semconv.OpInvokeGraph:
			r.Class, r.ClassRule = session.ClassTurn, rule
		default: // create_agent, unknown, execute_event_loop_cycle, agent_step, plan, embeddings...
			r.Class, r.ClassRule = session.ClassOther, rule
		}
		return info
	}

	// 2. openinference.span.kind.
	if oiKind != "" {
		rule := joinRule(ruleOI, oiKind, "")
		switch oiKind {
		case semconv.OIKindAgent:
			// LangGraph node spans first: the ReAct model node "agent" is its subgraph's agent.
			if !e.langGraphAgent(s, r, oiKind) {
				e.setAgent(s, r, rule, "", true)
			}
		case semconv.OIKindTool:
			r.Class, r.ClassRule = session.ClassTool, rule
		case semconv.OIKindLLM:
			r.Class, r.ClassRule = session.ClassLLM, rule
		case semconv.OIKindChain:
			switch {
			case r.ParentSpanID == "":
				r.Class, r.ClassRule = session.ClassTurn, joinRule(ruleOI, oiKind, ";root")
			case e.langGraphAgent(s, r, oiKind):
				// A LangGraph agent node (the JS tracer never writes AGENT).
			default:
				r.Class, r.ClassRule = session.ClassOther, rule
			}
		default:
			r.Class, r.ClassRule = session.ClassOther, rule
		}
		return info
	}

	// 3. traceloop.span.kind.
	if tl := lowerASCII(strings.TrimSpace(s.str(attrTLKind))); tl != "" {
		rule := joinRule(ruleTL, tl, "")
		switch tl {
		case semconv.TraceloopKindWorkflow:
			r.Class, r.ClassRule = session.ClassTurn, rule
		case semconv.TraceloopKindAgent:
			info.nameHint = strings.TrimSuffix(name, semconv.TraceloopSuffixAgent)
			e.setAgent(s, r, rule, info.nameHint, false)
		case semconv.TraceloopKindTool:
			info.nameHint = strings.TrimSuffix(name, semconv.TraceloopSuffixTool)
			r.Class, r.ClassRule = session.ClassTool, rule
		case semconv.TraceloopKindHandoff:
			info.tlFrom, info.tlTo = traceloopHandoff(name)
			r.Class, r.ClassRule = session.ClassHandoff, rule
		default:
			r.Class, r.ClassRule = session.ClassOther, rule
		}
		return info
	}

	// Explicit handoff attributes without an operation, and the main-branch turn marker.
	if s.has[attrHandoffFrom] || s.has[attrHandoffTo] {
		r.Class, r.ClassRule = session.ClassHandoff, ruleGenAIHandoff
		return info
	}
	if s.has[attrIsNested] {
		if b, ok := valueBool(s.v[attrIsNested]); ok && !b {
			r.Class, r.ClassRule = session.ClassTurn, ruleNotNested
			return info
		}
	}

	// Legacy OpenLLMetry inference spans ("openai.chat") carry only llm.request.type.
	if rt := lowerASCII(strings.TrimSpace(s.str(attrLLMRequestType))); rt == "chat" || rt == "completion" {
		r.Class, r.ClassRule = session.ClassLLM, joinRule(semconv.LLMRequestType+"=", rt, "")
		return info
	}

	// 4. Span-name patterns.
	e.classifyByName(s, r, scopeName, &info)
	return info
}

func (e *Extractor) classifyByName(s *attrScan, r *session.SpanRecord, scopeName string, info *classInfo) {
	name := r.Name
	set := func(c session.SpanClass, rule string) { r.Class, r.ClassRule = c, joinRule(RuleName, rule, "") }
	isADK := strings.HasPrefix(scopeName, semconv.ADKScope) || s.has[attrADKLLMRequest] || s.has[attrADKLLMResponse]
	switch {
	case (s.has[attrVoltEntityType] || s.has[attrVoltSpanType]) && e.classifyVolt(s, r, info):
	case hasWordPrefix(name, "invoke_agent"):
		info.nameHint = afterPrefix(name, "invoke_agent")
		e.setAgent(s, r, joinRule(RuleName, "invoke_agent", ""), info.nameHint, false)
	case hasWordPrefix(name, "execute_tool"):
		info.nameHint = afterPrefix(name, "execute_tool")
		set(session.ClassTool, "execute_tool")
	case hasWordPrefix(name, "chat"):
		set(session.ClassLLM, "chat")
	case hasWordPrefix(name, "generate_content"):
		set(session.ClassLLM, "generate_content")
	case hasWordPrefix(name, "text_completion"):
		set(session.ClassLLM, "text_completion")
	case hasWordPrefix(name, "invoke_workflow"):
		set(session.ClassTurn, "invoke_workflow")
	case hasWordPrefix(name, "handle_conversation_turn"):
		set(session.ClassTurn, "handle_conversation_turn")
	case hasWordPrefix(name, "create_agent"):
		set(session.ClassOther, "create_agent")
	case strings.HasPrefix(name, semconv.AISpanPrefix):
		switch {
		case strings.HasSuffix(name, semconv.AISpanDoGenerate) || strings.HasSuffix(name, semconv.AISpanDoStream):
			set(session.ClassLLM, "ai.*.doGenerate")
		case name == semconv.AISpanToolCall:
			set(session.ClassTool, semconv.AISpanToolCall)
		case name == semconv.AISpanGenerateText || name == semconv.AISpanStreamText ||
			name == semconv.AISpanGenerateObject || name == semconv.AISpanStreamObject:
			// The root of one generateText call: an agent when the app named it
			// (telemetry.functionId), else a turn.
			e.setAgent(s, r, joinRule(RuleName, name, ""), "", false)
		default:
			set(session.ClassOther, "")
			r.ClassRule = ""
		}
	case strings.HasPrefix(name, semconv.MCPToolsCallPrefix) || s.str(attrMCPMethod) == semconv.MCPMethodToolsCall:
		info.nameHint = strings.TrimSpace(strings.TrimPrefix(name, semconv.MCPToolsCallPrefix))
		set(session.ClassTool, "tools/call")
	case name == semconv.SpanNameOpenAIResponse:
		set(session.ClassLLM, semconv.SpanNameOpenAIResponse)
	case isADK && name == semconv.ADKSpanInvoc:
		set(session.ClassTurn, semconv.ADKSpanInvoc)
	case isADK && name == semconv.ADKSpanCallLLM:
		// ADK's wrapper around one model call. Its child generate_content span is the
		// inference span (and carries the same usage): the wrapper stays ClassOther so
		// usage is counted once, but its request/response payloads are read for content,
		// requested calls and tool definitions.
		info.adkCallLLM = true
		set(session.ClassOther, semconv.ADKSpanCallLLM)
	case strings.HasSuffix(name, semconv.TraceloopSuffixAgent) && len(name) > len(semconv.TraceloopSuffixAgent):
		info.nameHint = strings.TrimSuffix(name, semconv.TraceloopSuffixAgent)
		e.setAgent(s, r, joinRule(RuleName, "*.agent", ""), info.nameHint, false)
	case strings.HasSuffix(name, semconv.TraceloopSuffixTool) && len(name) > len(semconv.TraceloopSuffixTool):
		info.nameHint = strings.TrimSuffix(name, semconv.TraceloopSuffixTool)
		set(session.ClassTool, "*.tool")
	case strings.HasSuffix(name, semconv.TraceloopSuffixWorkflow) && len(name) > len(semconv.TraceloopSuffixWorkflow):
		set(session.ClassTurn, "*.workflow")
	case strings.HasSuffix(name, semconv.TraceloopSuffixHandoff) && strings.Contains(name, semconv.TraceloopHandoffArrow):
		info.tlFrom, info.tlTo = traceloopHandoff(name)
		set(session.ClassHandoff, "*.handoff")
	default:
		r.Class, r.ClassRule = session.ClassOther, ""
	}
}

// setAgent classifies an agent-operation span: ClassAgent with its resolved name, or
// ClassTurn when no name can be resolved (the OpenAI Agents "Agent workflow" root).
// The name comes from gen_ai.agent.name → agent.name → graph.node.id (docs/decisions/sessions.md §1.5
// Agent interaction), then traceloop.entity.name, ai.telemetry.functionId, and finally
// the span name (hint, or for OpenInference AGENT spans the whole name).
func (e *Extractor) setAgent(s *attrScan, r *session.SpanRecord, rule, hint string, wholeName bool) {
	candidates := [...]struct {
		k    attrKey
		rule string
	}{
		{attrGenAIAgentName, semconv.GenAIAgentName},
		{attrOIAgentName, semconv.AgentName},
		{attrGraphNodeID, semconv.GraphNodeID},
		{attrTLEntityName, semconv.TraceloopEntityName},
		{attrAIFunctionID, semconv.AITelemetryFunction},
	}
	for _, c := range candidates {
		if n := strings.TrimSpace(s.str(c.k)); n != "" {
			r.Class, r.ClassRule = session.ClassAgent, rule
			r.AgentName, r.AgentRule = e.text(r, n), c.rule
			return
		}
	}
	if hint == "" && wholeName && !genericAgentName(r.Name) {
		hint = strings.TrimSpace(r.Name)
	}
	if hint != "" {
		r.Class, r.ClassRule = session.ClassAgent, rule
		r.AgentName, r.AgentRule = e.text(r, hint), "span_name"
		return
	}
	r.Class, r.ClassRule = session.ClassTurn, joinRule(rule, ruleUnnamed, "")
}

// genericAgentName reports span names that name a workflow, not an agent: the OpenAI
// Agents SDK default trace name "Agent workflow" (OpenLLMetry: "Agent Workflow").
func genericAgentName(name string) bool {
	return strings.EqualFold(strings.TrimSpace(name), semconv.SpanNameAgentWorkflow)
}

// hasWordPrefix reports name == word or name starting with word + " ".
func hasWordPrefix(name, word string) bool {
	return strings.HasPrefix(name, word) && (len(name) == len(word) || name[len(word)] == ' ')
}

// afterPrefix returns the trimmed remainder of "word X" (X), or "".
func afterPrefix(name, word string) string {
	if !hasWordPrefix(name, word) {
		return ""
	}
	return strings.TrimSpace(name[len(word):])
}

// traceloopHandoff splits "{from} → {to}.handoff".
func traceloopHandoff(name string) (from, to string) {
	n := strings.TrimSuffix(name, semconv.TraceloopSuffixHandoff)
	i := strings.Index(n, semconv.TraceloopHandoffArrow)
	if i < 0 {
		return "", ""
	}
	return strings.TrimSpace(n[:i]), strings.TrimSpace(n[i+len(semconv.TraceloopHandoffArrow):])
}

// lowerASCII lower-cases ASCII letters, allocating only when s has upper-case ones.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
