// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"bytes"
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// LangGraph through OpenInference (docs/decisions/conventions.md;
// docs/decisions/conventions.md §3.1). The JS tracer never writes kind AGENT and the
// Python one writes it for any run whose name contains "agent"; the reliable signal is
// the run metadata LangGraph copies into the OpenInference `metadata` JSON attribute.
const (
	// lgNode is the metadata key naming the graph node a run belongs to.
	lgNode = "langgraph_node"
	// lgCheckpointNS and lgCheckpointNSAlt hold the node's namespace,
	// "outer:task|inner:task": one segment per (sub)graph level.
	lgCheckpointNS    = "langgraph_checkpoint_ns"
	lgCheckpointNSAlt = "checkpoint_ns"
	lgnsSeparator     = "|"
	lgnsEnd           = ":"
	// lgModelNode is the model-calling node of the prebuilt ReAct agent
	// (createReactAgent / create_react_agent): inside a subgraph it is that subgraph's
	// agent, not an agent of its own.
	lgModelNode = "agent"
	// lgSupervisor is the default supervisor node name of langgraph-supervisor.
	lgSupervisor = "supervisor"

	// ruleLGSuffix marks the class rule of a span classified by its LangGraph node.
	ruleLGSuffix = ";langgraph_node"
	// AgentRule values of LangGraph node agents.
	agentRuleLGNode = semconv.Metadata + "." + lgNode
	agentRuleLGNS   = semconv.Metadata + "." + lgCheckpointNS
)

// lgControlFlow are the exceptions LangGraph raises to steer the graph, not because
// something failed: ParentCommand carries a Command(graph=PARENT) (the supervisor/swarm
// handoff tools), GraphInterrupt/NodeInterrupt pause the run for human input, and
// GraphBubbleUp is their common base class.
var lgControlFlow = map[string]bool{
	"ParentCommand":  true,
	"GraphInterrupt": true,
	"NodeInterrupt":  true,
	"GraphBubbleUp":  true,
}

// lgRunMeta is the part of LangGraph's run metadata the extractor reads.
type lgRunMeta struct {
	Node   string `json:"langgraph_node"`
	NS     string `json:"langgraph_checkpoint_ns"`
	NSAlt  string `json:"checkpoint_ns"`
	parent string
}

// langGraphMeta reads the LangGraph node of an OpenInference span from its `metadata`
// attribute: the node name and, when the node runs inside a subgraph, the name of the
// enclosing subgraph's node (the segment before the node's own in the checkpoint
// namespace). ok is false when the span carries no langgraph_node.
func (e *Extractor) langGraphMeta(s *attrScan) (m lgRunMeta, ok bool) {
	if !s.has[attrOIMetadata] {
		return m, false
	}
	data, fits := jsonBytes(s.v[attrOIMetadata], e.parseLimit)
	if !fits || !bytes.Contains(data, []byte(lgNode)) {
		return m, false
	}
	// A wrong-typed field leaves the others filled; only a string node name counts.
	_ = json.Unmarshal(data, &m)
	m.Node = strings.TrimSpace(m.Node)
	if m.Node == "" {
		return m, false
	}
	ns := m.NS
	if ns == "" {
		ns = m.NSAlt
	}
	if segs := strings.Split(ns, lgnsSeparator); len(segs) >= 2 {
		own, _, _ := strings.Cut(segs[len(segs)-1], lgnsEnd)
		if strings.TrimSpace(own) == m.Node {
			parent, _, _ := strings.Cut(segs[len(segs)-2], lgnsEnd)
			m.parent = strings.TrimSpace(parent)
		}
	}
	return m, true
}

// langGraphAgent classifies a LangGraph node span (an OpenInference CHAIN or AGENT span
// whose metadata langgraph_node equals its name) and reports whether it made it an agent:
//
//   - the ReAct model node "agent" inside a subgraph is the agent of that subgraph, named
//     after the enclosing node (AgentRule metadata.langgraph_checkpoint_ns);
//   - a node whose name contains "agent" (case-insensitive, the Python OpenInference
//     rule) or is "supervisor" is an agent of that name (AgentRule
//     metadata.langgraph_node).
//
// Every node span gets LangGraphNode, so that turn assembly can also promote nodes that
// only the trace identifies as agents (targets of transfer_to_<node> tools). An AGENT
// span with an explicit name attribute is left to setAgent.
func (e *Extractor) langGraphAgent(s *attrScan, r *session.SpanRecord, oiKind string) bool {
	if oiKind == semconv.OIKindAgent && (s.has[attrGenAIAgentName] || s.has[attrOIAgentName] || s.has[attrGraphNodeID]) {
		return false
	}
	m, ok := e.langGraphMeta(s)
	if !ok || m.Node != strings.TrimSpace(r.Name) {
		return false
	}
	r.LangGraphNode = e.text(r, m.Node)
	name, rule := "", ""
	switch {
	case strings.EqualFold(m.Node, lgModelNode) && m.parent != "":
		name, rule = m.parent, agentRuleLGNS
	case containsFold(m.Node, lgModelNode) || strings.EqualFold(m.Node, lgSupervisor):
		name, rule = m.Node, agentRuleLGNode
	default:
		return false
	}
	r.Class, r.ClassRule = session.ClassAgent, joinRule(ruleOI, oiKind, ruleLGSuffix)
	r.AgentName, r.AgentRule = e.text(r, name), rule
	return true
}

// containsFold reports whether s contains the lower-case ASCII word sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(lowerASCII(s), sub)
}

// controlFlowError reports whether an error span only carries one of LangGraph's
// control-flow exceptions (lgControlFlow): its error.type / exception.type, or the first
// word of its status message or exception.message (the JS tracer records only the stack
// text, "\n\nParentCommand\n    at ..."). Such a span did not fail.
func controlFlowError(r *session.SpanRecord, status string, events ptrace.SpanEventSlice) bool {
	if r.ErrorType != "" {
		return lgControlFlow[leadingName(r.ErrorType)]
	}
	if strings.TrimSpace(status) != "" {
		return lgControlFlow[leadingName(status)]
	}
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		if ev.Name() != semconv.EventException {
			continue
		}
		for _, k := range [...]string{semconv.ExceptionType, semconv.ExceptionMessage} {
			if v, ok := ev.Attributes().Get(k); ok {
				t, _ := valueText(v)
				if strings.TrimSpace(t) != "" {
					return lgControlFlow[leadingName(t)]
				}
			}
		}
	}
	return false
}

// leadingName returns the first identifier of s (letters, digits, '_' and '.') after
// leading white space, without its dotted qualifier: "langgraph.errors.ParentCommand"
// and "\n\nParentCommand\n  at x" both give "ParentCommand".
func leadingName(s string) string {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) {
		c := s[end]
		if c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			end++
			continue
		}
		break
	}
	name := s[:end]
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// LangChain serialisation (the `lc` constructor form OpenInference's LangChain tracer
// writes into input.value / output.value). The JS tracer leaves the tool-call ids out of
// the flattened llm.output_messages.*, so they are recovered from these values.

// lcMessage is a LangChain-serialised message: {"lc":1,"type":"constructor",
// "id":[...,"ToolMessage"],"kwargs":{...}}.
type lcMessage struct {
	LC     int    `json:"lc"`
	Type   string `json:"type"`
	Kwargs *struct {
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"kwargs"`
}

// lcToolMessage reads a tool span's output.value when it is a serialised ToolMessage,
// bare or wrapped as {"output": message}: its content (the tool result) and its
// tool_call_id. ok is false for any other value.
func lcToolMessage(data []byte) (content, callID string, ok bool) {
	if firstByte(data) != '{' || !bytes.Contains(data, []byte(`"tool_call_id"`)) {
		return "", "", false
	}
	var wrap struct {
		Output json.RawMessage `json:"output"`
	}
	if json.Unmarshal(data, &wrap) == nil && firstByte(wrap.Output) == '{' {
		data = wrap.Output
	}
	var m lcMessage
	if json.Unmarshal(data, &m) != nil || m.LC == 0 || m.Type != "constructor" || m.Kwargs == nil ||
		strings.TrimSpace(m.Kwargs.ToolCallID) == "" {
		return "", "", false
	}
	return contentText(m.Kwargs.Content, nil), strings.TrimSpace(m.Kwargs.ToolCallID), true
}

// lcGenerationCalls reads the tool calls of a serialised LangChain LLMResult, the
// output.value of a LangChain LLM span: {"generations":[[{"message": AIMessage}]]}.
func lcGenerationCalls(data []byte) []session.RequestedToolCall {
	if firstByte(data) != '{' || !bytes.Contains(data, []byte(`"generations"`)) {
		return nil
	}
	var res struct {
		Generations [][]struct {
			Message *jMsg `json:"message"`
		} `json:"generations"`
	}
	if err := json.Unmarshal(data, &res); err != nil && !isTypeError(err) {
		return nil
	}
	var o msgOut
	for _, gs := range res.Generations {
		for _, g := range gs {
			if g.Message != nil {
				_ = msgText(g.Message, &o)
			}
		}
	}
	return o.calls
}

// fillCallIDs gives the calls without an id the id of the same-named call at the same
// rank among those of withIDs (the n-th "lookup_order" takes the n-th one's id).
func fillCallIDs(calls, withIDs []session.RequestedToolCall) {
	used := make([]bool, len(withIDs))
	for i := range calls {
		if calls[i].ID != "" {
			continue
		}
		for j := range withIDs {
			if !used[j] && withIDs[j].ID != "" && withIDs[j].Name == calls[i].Name {
				calls[i].ID, used[j] = withIDs[j].ID, true
				break
			}
		}
	}
}
