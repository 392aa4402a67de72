// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly // import "github.com/agenteval/agenteval-collector/internal/assembly"

import (
	"github.com/agenteval/agenteval-collector/internal/conventions"
	"github.com/agenteval/agenteval-collector/internal/reuse"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"

	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Status values are StatusOK, StatusError and StatusNotExecuted (model.go).
const (
	// argsSourceLLMOutput is ToolCall.ArgumentsSource for arguments taken from the
	// LLM output that requested the call (RequestedToolCall.Arguments).
	argsSourceLLMOutput = "llm_output"
)

// TurnAssembly is one reconstructed turn plus what the trace taught about agents.
type TurnAssembly struct {
	// Turn is the reconstructed turn. Its Index is 0; the Tracker sets it.
	Turn session.Turn
	// Agents are the agents that have an interaction in the turn, in order of their first
	// interaction, with the tools learned from the trace: tool definitions seen on the
	// agent's own agent span and LLM spans (gen_ai.tool.definitions, llm.tools,
	// ai.prompt.tools) and tool names declared on its agent span (gen_ai.agent.tools).
	// ToolsSource is "trace" when any was seen, else "" (unknown). HandoffTargets are the
	// declared targets (openai.agent.handoffs) and those named by offered handoff tools
	// (transfer_to_<agent>).
	Agents []session.AgentDefinition
	// Outcome is the explicit task outcome (agent_eval.task.completed) of the span that
	// ended last among those carrying one; nil when none did.
	Outcome *bool
	// Cost sums the cost reported on LLM spans (llm.cost.total), nil when none reported.
	Cost *float64
}

// Assemble reconstructs one turn from the records of one trace (docs/architecture.md §4,
// docs/decisions/sessions.md §1.5). It is a pure function: the records are not modified and the
// output depends only on the set of distinct records, not on their order (records are
// ordered by start time, then span id). When a span id occurs more than once, the first
// occurrence in records is kept (the Tracker passes records in arrival order) and the
// turn gets the "duplicate_span" anomaly. ClassEvaluation records are ignored entirely.
//
// The rules (tree repair, root choice, interactions, tool-call join, the six handoff
// signals and their de-duplication) are documented in docs/decisions/sessions.md.
// An empty input (or one of evaluation spans only) gives a Turn with no interactions,
// Status "ok" and SpanCount 0.
func Assemble(records []session.SpanRecord) TurnAssembly {
	sc := scratchPool.Get().(*scratch)
	a := newAssembler(records, sc)
	out := a.assemble()
	sc.put(a)
	return out
}

// scratch is the working memory of one Assemble that no output references: the tree's
// nodes and their index, and the joined tool calls (a call's ToolCall is copied into the
// turn's steps). It goes back to a pool, cleared, so that the next turn reuses it
// (docs/decisions/performance.md §8.27).
type scratch struct {
	byID  map[string]*treeNode
	nodes []*treeNode
	slab  []treeNode
	calls []interCall
}

var scratchPool = sync.Pool{New: func() any { return &scratch{byID: map[string]*treeNode{}} }}

// maxPooled bounds the nodes or calls of a scratch that goes back to the pool: a larger
// trace's arrays are left to the collector, so that the pool holds what a common turn
// needs.
const maxPooled = 1024

// put clears what a used and returns the scratch to the pool.
func (sc *scratch) put(a *assembler) {
	sc.byID = reuse.Map(a.byID, maxPooled)
	if sc.byID == nil {
		sc.byID = map[string]*treeNode{}
	}
	sc.nodes, sc.slab, sc.calls = reuse.Slice(a.nodes, maxPooled), reuse.Slice(sc.slab, maxPooled), reuse.Slice(a.calls, maxPooled)
	scratchPool.Put(sc)
}

// takeCalls returns n zero calls for an interaction, cut from the assembler's slab (one
// allocation for the turn's calls in the common case).
func (a *assembler) takeCalls(n int) []interCall {
	if cap(a.calls)-len(a.calls) < n {
		a.calls = make([]interCall, 0, max(n, 2*cap(a.calls), 16))
	}
	m := len(a.calls)
	a.calls = a.calls[:m+n]
	return a.calls[m : m+n : m+n]
}

// treeNode is one span of the trace tree.
type treeNode struct {
	rec *session.SpanRecord
	// idx is the position in start order.
	idx      int
	parent   *treeNode
	children []*treeNode
	depth    int
	// missingParent: the parent id names a span absent from the trace.
	missingParent bool
	// agentAnc is the nearest ClassAgent ancestor (strictly above).
	agentAnc *treeNode
	// toolAnc is the nearest ClassTool ancestor strictly above and below agentAnc.
	toolAnc *treeNode
	// inter is the interaction that owns this span (its agent span or a step), -1 if none.
	inter int
	// call is the joined tool call of an execution span.
	call *interCall
	// reclassed: rec is a copy of another class than the extractor gave (see
	// assemble_agents.go).
	reclassed bool
	// llmWrapper: an LLM span demoted to the wrapper of its one LLM child, the same model
	// call recorded twice (demoteNestedLLM).
	llmWrapper bool
}

func (n *treeNode) start() int64 { return n.rec.StartUnixNano }

// end returns the end time, never before the start.
func (n *treeNode) end() int64 {
	if n.rec.EndUnixNano < n.rec.StartUnixNano {
		return n.rec.StartUnixNano
	}
	return n.rec.EndUnixNano
}

func (n *treeNode) durationMs() float64 { return float64(n.end()-n.start()) / 1e6 }

func (n *treeNode) status() string {
	if n.rec.Error {
		return session.StatusError
	}
	return session.StatusOK
}

// interactionBuilder is an agent interaction under construction.
type interactionBuilder struct {
	node      *treeNode // the agent span; the root for the synthetic interaction
	agentID   string
	agentRule string
	synthetic bool
	parent    int // interaction index of the nearest agent ancestor, -1
	llms      []*treeNode
	tools     []*treeNode
	handoffs  []*treeNode
	calls     []*interCall
	// steps and their ordering keys (keys[i] is steps[i]'s), sorted by buildSteps.
	steps []session.AgentStep
	keys  []stepKey
	input string
	// launchOutput is the answer recorded on the tool that launched the sub-agent
	// (conventions.SubagentContent), "" for an interaction no such tool launched.
	launchOutput string
}

// stepKey orders a step: by start time, rank, then insertion order.
type stepKey struct {
	at   int64
	rank int
	seq  int
}

// stepOrder sorts an interaction's steps and their keys together (seq is unique, so the
// order is total and no sort stability is needed).
type stepOrder struct{ in *interactionBuilder }

func (o stepOrder) Len() int { return len(o.in.steps) }

func (o stepOrder) Less(i, j int) bool {
	x, y := o.in.keys[i], o.in.keys[j]
	if x.at != y.at {
		return x.at < y.at
	}
	if x.rank != y.rank {
		return x.rank < y.rank
	}
	return x.seq < y.seq
}

func (o stepOrder) Swap(i, j int) {
	o.in.steps[i], o.in.steps[j] = o.in.steps[j], o.in.steps[i]
	o.in.keys[i], o.in.keys[j] = o.in.keys[j], o.in.keys[i]
}

type assembler struct {
	nodes     []*treeNode
	byID      map[string]*treeNode
	anomalies map[string]bool
	root      *treeNode
	rootRule  string
	inters    []*interactionBuilder
	seq       int
	// nested maps a tool span to the first agent span nested under it (agent-as-tool).
	nested map[*treeNode]*treeNode
	// agentKeys maps normalised agent ids (AgentKey) to the first agent id with that key.
	agentKeys map[string]string
	// wrappers are the agent spans demoted to turn markers (demoteWrappers).
	wrappers map[*treeNode]bool
	// calls is the slab the interactions' joined calls are cut from (takeCalls).
	calls []interCall
	// agentTotals: the turn has no LLM span, so usage is the agent spans' own totals
	// (agentUsage; set by result).
	agentTotals bool
}

func newAssembler(records []session.SpanRecord, sc *scratch) *assembler {
	a := &assembler{anomalies: map[string]bool{}, byID: sc.byID, nodes: slices.Grow(sc.nodes, len(records)), calls: sc.calls}
	if cap(sc.slab) < len(records) {
		sc.slab = make([]treeNode, len(records)) // one allocation for the nodes
	}
	slab := sc.slab[:len(records)]
	for i := range records {
		r := &records[i]
		if r.Class == session.ClassEvaluation {
			continue
		}
		if _, dup := a.byID[r.SpanID]; dup {
			a.anomalies[session.AnomalyDuplicateSpan] = true
			continue
		}
		n := &slab[len(a.nodes)]
		*n = treeNode{rec: r, inter: -1}
		a.byID[r.SpanID] = n
		a.nodes = append(a.nodes, n)
	}
	slices.SortFunc(a.nodes, func(x, y *treeNode) int {
		if c := cmp.Compare(x.start(), y.start()); c != 0 {
			return c
		}
		return strings.Compare(x.rec.SpanID, y.rec.SpanID)
	})
	for i, n := range a.nodes {
		n.idx = i
	}
	return a
}

func (a *assembler) assemble() TurnAssembly {
	if len(a.nodes) == 0 {
		return TurnAssembly{Turn: session.Turn{Status: session.StatusOK, Interactions: []session.AgentInteraction{}}}
	}
	a.buildTree()
	a.inheritWrapperContent()
	a.inheritSavedCalls()
	a.chooseRoot()
	a.buildInteractions()
	for _, in := range a.inters {
		a.joinToolCalls(in)
	}
	a.buildHandoffs()
	for _, in := range a.inters {
		a.buildSteps(in)
	}
	return a.result()
}

// buildTree resolves parents, repairs self-parents and cycles, and computes depths and
// the agent/tool ancestors of every node.
func (a *assembler) buildTree() {
	for _, n := range a.nodes {
		p := n.rec.ParentSpanID
		switch {
		case p == "":
		case p == n.rec.SpanID:
			a.anomalies[session.AnomalySelfParent] = true
		default:
			if pn, ok := a.byID[p]; ok {
				n.parent = pn
			} else {
				n.missingParent = true
			}
		}
	}
	// Cycles: every node has at most one parent, so each cycle is met once; it is broken
	// at its earliest member, which does not depend on where the walk entered it.
	state := make([]uint8, len(a.nodes)) // 0 new, 1 on the current path, 2 done
	var path []*treeNode
	for _, n := range a.nodes {
		path = path[:0]
		cur := n
		for cur != nil && state[cur.idx] == 0 {
			state[cur.idx] = 1
			path = append(path, cur)
			cur = cur.parent
		}
		if cur != nil && state[cur.idx] == 1 {
			pos := slices.Index(path, cur)
			cut := path[pos]
			for _, m := range path[pos:] {
				if m.idx < cut.idx {
					cut = m
				}
			}
			cut.parent = nil
			a.anomalies[session.AnomalyCycle] = true
		}
		for _, m := range path {
			state[m.idx] = 2
		}
	}
	var roots []*treeNode
	for _, n := range a.nodes {
		if n.parent == nil {
			roots = append(roots, n)
		} else {
			n.parent.children = append(n.parent.children, n)
		}
	}
	a.promoteLoneCallLLM()
	a.demoteNestedLLM()
	a.promoteLangGraphNodes()
	a.annotate(roots, false)
	a.demoteWrappers()
	a.annotate(roots, true)
	a.nameGenericSubagents()
}

// nameGenericSubagents names an agent span that carries only the name of the generic tool
// that launched it after the sub-agent the tool's arguments name: the Claude Agent SDK
// runs every sub-agent as a tool "Agent" {subagent_type: "research-specialist", ...} whose
// child agent span is named "Agent" too. The tool span's handoff target (HandoffToolTarget)
// is the real name; an agent span with a name of its own keeps it.
func (a *assembler) nameGenericSubagents() {
	for _, n := range a.nodes {
		t := launchingTool(n)
		if t == nil {
			continue
		}
		if session.AgentKey(n.rec.AgentName) == session.AgentKey(execToolName(t.rec)) && session.AgentKey(t.rec.HandoffTo) != session.AgentKey(n.rec.AgentName) {
			n.reclass(session.ClassAgent, t.rec.HandoffTo, conventions.RuleSubagentFromTool)
		}
	}
}

// launchingTool is the handoff tool call (a tool span whose arguments name its target,
// conventions.RuleHandoffTool) whose execution span the agent span n runs in: the tool
// that launched the sub-agent n (agent-as-tool). It is nil when n is no agent span or
// runs in no such tool.
func launchingTool(n *treeNode) *treeNode {
	t := n.toolAnc
	if n.rec.Class != session.ClassAgent || t == nil || t.rec.HandoffTo == "" || t.rec.HandoffRule != conventions.RuleHandoffTool {
		return nil
	}
	return t
}

// annotate computes, top-down, the depth and the agent/tool ancestors of every node. With
// fold, an agent span that is part of its nearest agent ancestor (foldsInto) is
// reclassified as other on the way, so that its descendants belong to that ancestor.
func (a *assembler) annotate(roots []*treeNode, fold bool) {
	stack := make([]*treeNode, 0, len(a.nodes))
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, roots[i])
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n.depth, n.agentAnc, n.toolAnc = 0, nil, nil
		if p := n.parent; p != nil {
			n.depth = p.depth + 1
			switch p.rec.Class {
			case session.ClassAgent:
				n.agentAnc, n.toolAnc = p, nil
			case session.ClassTool:
				n.agentAnc, n.toolAnc = p.agentAnc, p
			default:
				n.agentAnc, n.toolAnc = p.agentAnc, p.toolAnc
			}
		}
		if fold && foldsInto(n) {
			n.reclass(session.ClassOther, "", "")
		}
		for i := len(n.children) - 1; i >= 0; i-- {
			stack = append(stack, n.children[i])
		}
	}
}

// promoteLoneCallLLM makes an LLM span of ADK's call_llm wrapper when no inference span
// is under it. Python ADK runs the model through google-genai, whose instrumentation adds
// the generate_content child; ADK for TypeScript has none, so call_llm (with
// gen_ai.request.model, usage and the gcp.vertex.agent.llm_request/llm_response payloads)
// is the only record of the model call.
func (a *assembler) promoteLoneCallLLM() {
	for _, n := range a.nodes {
		if n.rec.Class != session.ClassOther || n.rec.ClassRule != conventions.RuleName+semconv.ADKSpanCallLLM {
			continue
		}
		if !slices.ContainsFunc(n.children, func(c *treeNode) bool { return c.rec.Class == session.ClassLLM }) {
			r := *n.rec
			r.Class = session.ClassLLM
			n.rec = &r
		}
	}
}

// demoteNestedLLM counts a model call recorded by two instrumentations once: an LLM span
// whose only LLM child is directly under it (the OpenAI Agents instrumentation's response
// span over the OpenAI client instrumentation's span of the same request, OpenInference
// issue Arize-ai/openinference#2101; reference/conventions.md "two instrumentations") is a
// wrapper of that call. It becomes ClassOther, so that its usage and requested calls are
// not counted a second time, and the inner span, the one nearest the wire, takes each
// field it lacks from it (inheritWrapperContent: content, requested calls, tool
// definitions; here also the usage and the cost, each when the inner span has none). An LLM span
// with several LLM children is left as it is (docs/decisions/sessions.md §1.3). The
// records themselves are not modified.
func (a *assembler) demoteNestedLLM() {
	for _, n := range a.nodes {
		p := n.parent
		if n.rec.Class != session.ClassLLM || p == nil || p.rec.Class != session.ClassLLM ||
			p.reclassed || onlyLLMChild(p) != n {
			continue
		}
		w := p.rec
		p.reclass(session.ClassOther, "", "")
		p.llmWrapper = true
		noTokens := n.rec.Usage.InputTokens == 0 && n.rec.Usage.OutputTokens == 0
		if noTokens || (n.rec.Cost == nil && w.Cost != nil) {
			r := *n.rec
			if noTokens {
				r.Usage = w.Usage
			}
			if r.Cost == nil {
				r.Cost = w.Cost
			}
			n.rec = &r
		}
	}
}

// onlyLLMChild returns n's one LLM child, nil when it has none or several.
func onlyLLMChild(n *treeNode) *treeNode {
	var only *treeNode
	for _, c := range n.children {
		if c.rec.Class == session.ClassLLM {
			if only != nil {
				return nil
			}
			only = c
		}
	}
	return only
}

// inheritSavedCalls gives a VoltAgent model span (llm:*, which records no requested call)
// the tool calls its agent saved to memory (memory.write spans beside it, SpanRecord.
// RequestedCalls of ClassOther sibling spans): every call of the run, once, by call id,
// in the order first saved. The saved messages are cumulative, so later ones repeat
// earlier calls.
func (a *assembler) inheritSavedCalls() {
	for _, n := range a.nodes {
		if n.rec.Class != session.ClassLLM || len(n.rec.RequestedCalls) > 0 || n.parent == nil || n.rec.ClassRule != conventions.RuleVoltLLM {
			continue
		}
		var calls []session.RequestedToolCall
		seen := map[string]bool{}
		for _, c := range n.parent.children {
			if c.rec.Class != session.ClassOther || c.rec.ClassRule != conventions.RuleVoltOther {
				continue
			}
			for _, rc := range c.rec.RequestedCalls {
				key := cmp.Or(rc.ID, rc.Name+"\x00"+rc.Arguments)
				if !seen[key] && len(calls) < conventions.MaxList {
					seen[key] = true
					calls = append(calls, rc)
				}
			}
		}
		if len(calls) > 0 {
			r := *n.rec
			r.RequestedCalls = calls
			n.rec = &r
		}
	}
}

// inheritWrapperContent lets an LLM span use the content recorded on a non-GenAI wrapper
// span whose only LLM child it is (Google ADK records the request and response on
// call_llm, the wrapper of the google-genai generate_content span): each content field
// (user message, input, output, reasoning, finish reasons, requested calls, tool
// definitions) that the LLM span lacks is taken from the wrapper, as from an LLM span
// that records the same call (demoteNestedLLM). An agent span folded
// into its ancestor (a LangGraph node, whose content is the graph state) is no wrapper.
// The records themselves are not modified.
func (a *assembler) inheritWrapperContent() {
	for _, n := range a.nodes {
		p := n.parent
		if n.rec.Class != session.ClassLLM || p == nil || p.rec.Class != session.ClassOther || (p.reclassed && !p.llmWrapper) {
			continue
		}
		w := p.rec
		if onlyLLMChild(p) != n || (w.UserMessage == "" && w.Input == "" && w.Output == "" && w.Reasoning == "" &&
			len(w.RequestedCalls) == 0 && len(w.ToolDefs) == 0 && len(w.FinishReasons) == 0) {
			continue
		}
		r := *n.rec
		fill := func(dst *string, src string) {
			if *dst == "" {
				*dst = src
			}
		}
		fill(&r.UserMessage, w.UserMessage)
		fill(&r.Input, w.Input)
		fill(&r.Output, w.Output)
		fill(&r.Reasoning, w.Reasoning)
		if len(r.FinishReasons) == 0 {
			r.FinishReasons = w.FinishReasons
		}
		if len(r.RequestedCalls) == 0 {
			r.RequestedCalls = w.RequestedCalls
		}
		if len(r.ToolDefs) == 0 {
			r.ToolDefs = w.ToolDefs
		}
		r.ContentCaptured = r.ContentCaptured || w.ContentCaptured
		n.rec = &r
	}
}

// chooseRoot picks the turn root: the highest turn marker, else the highest agent/LLM/tool
// span, else the highest span; ties go to the earliest (start time, span id).
func (a *assembler) chooseRoot() {
	pick := func(ok func(*treeNode) bool) *treeNode {
		var best *treeNode
		for _, n := range a.nodes {
			if ok(n) && (best == nil || n.depth < best.depth) {
				best = n
			}
		}
		return best
	}
	if r := pick(func(n *treeNode) bool { return n.rec.Class == session.ClassTurn }); r != nil {
		a.root, a.rootRule = r, session.RootRuleTurnMarker
		if a.wrappers[r] {
			a.rootRule = session.RootRuleWorkflowAgent
		}
	} else if r := pick(func(n *treeNode) bool {
		c := n.rec.Class
		return c == session.ClassAgent || c == session.ClassLLM || c == session.ClassTool
	}); r != nil {
		a.root, a.rootRule = r, session.RootRuleGenAIRoot
	} else {
		a.root, a.rootRule = pick(func(*treeNode) bool { return true }), session.RootRuleSpanRoot
	}
	for _, n := range a.nodes {
		if n.missingParent && n != a.root && n.rec.Class.GenAI() {
			a.anomalies[session.AnomalyMissingParent] = true
		}
	}
}

// buildInteractions makes one interaction per agent span and attributes every LLM, tool
// and handoff span to the interaction of its nearest agent ancestor. When the trace has
// no agent span, one synthetic interaction (rooted at the turn root) gets all of them.
func (a *assembler) buildInteractions() {
	for _, n := range a.nodes {
		if n.rec.Class != session.ClassAgent {
			continue
		}
		in := &interactionBuilder{node: n, agentID: n.rec.AgentName, agentRule: n.rec.AgentRule, parent: -1}
		if in.agentID == "" {
			in.agentID, in.agentRule = nameDerivedAgent(n.rec.Name)
			if in.agentID == session.SyntheticAgentID && n.rec.Name != "" {
				in.agentID, in.agentRule = n.rec.Name, "span_name"
			}
		}
		if n.agentAnc != nil {
			in.parent = n.agentAnc.inter
		}
		n.inter = len(a.inters)
		a.inters = append(a.inters, in)
	}
	synthetic := -1
	var orphans []*treeNode
	for _, n := range a.nodes {
		switch n.rec.Class {
		case session.ClassLLM, session.ClassTool, session.ClassHandoff:
		default:
			continue
		}
		idx := -1
		if n.agentAnc != nil {
			idx = n.agentAnc.inter
		} else if len(a.inters) == 0 || synthetic >= 0 {
			if synthetic < 0 {
				synthetic = len(a.inters)
				id, rule := nameDerivedAgent(a.root.rec.Name)
				if a.root.rec.AgentName != "" {
					id, rule = a.root.rec.AgentName, a.root.rec.AgentRule
				}
				a.inters = append(a.inters, &interactionBuilder{
					node: a.root, agentID: id, agentRule: rule, synthetic: true, parent: -1,
				})
			}
			idx = synthetic
		}
		if idx < 0 {
			if n.rec.Class == session.ClassTool {
				orphans = append(orphans, n)
			}
			continue // an LLM/tool span outside every agent of a multi-agent trace
		}
		n.inter = idx
		in := a.inters[idx]
		switch n.rec.Class {
		case session.ClassLLM:
			in.llms = append(in.llms, n)
		case session.ClassTool:
			in.tools = append(in.tools, n)
		case session.ClassHandoff:
			in.handoffs = append(in.handoffs, n)
		}
	}
	a.adoptOrphanTools(orphans)
	for _, in := range a.inters {
		if in.parent < 0 && !in.synthetic {
			// Agent-as-tool with the sub-agent span lifted out of the tool span that ran
			// it (OpenLLMetry openai-agents): its parent is the agent of that tool, the
			// link the handoff of that tool (assemble_handoff.go, (e)) is read from.
			if t := a.enclosingNamedTool(in.node); t != nil {
				in.parent = t.inter
			}
		}
		in.input = cmp.Or(in.node.rec.Input, in.node.rec.UserMessage)
		for _, l := range in.llms {
			if in.input != "" {
				break
			}
			in.input = l.rec.UserMessage
		}
		if t := launchingTool(in.node); t != nil && !in.synthetic {
			// Content recorded only on the launching tool (the Claude Agent SDK): the
			// sub-agent's own, when it has some, comes first.
			launchIn, launchOut := conventions.SubagentContent(execToolName(t.rec), t.rec.ToolArguments, t.rec.ToolResult)
			in.input, in.launchOutput = cmp.Or(in.input, launchIn), launchOut
		}
	}
}

// adoptOrphanTools attributes tool execution spans that have no agent ancestor, in a
// trace with agent spans, to the interaction whose LLM requested them: by call id, else
// the latest interaction with an LLM span started no later than the tool span that
// requested a call of that tool. LangGraph runs the "tools" node beside the "agent" node,
// not inside it. Orphans requested by no interaction stay unattributed.
func (a *assembler) adoptOrphanTools(orphans []*treeNode) {
	for _, n := range orphans {
		id, name := n.rec.ToolCallID, execToolName(n.rec)
		byID, byName := -1, -1
		var byNameAt int64
		for i, in := range a.inters {
			for _, l := range in.llms {
				for _, rc := range l.rec.RequestedCalls {
					if id != "" && rc.ID == id && byID < 0 {
						byID = i
					}
					if rc.Name == name && (rc.ID == "" || id == "") && l.start() <= n.start() && (byName < 0 || l.start() > byNameAt) {
						byName, byNameAt = i, l.start()
					}
				}
			}
		}
		idx := byID
		if idx < 0 {
			idx = byName
		}
		if idx < 0 {
			continue
		}
		n.inter = idx
		in := a.inters[idx]
		in.tools = append(in.tools, n)
		slices.SortFunc(in.tools, func(x, y *treeNode) int { return x.idx - y.idx })
	}
}

// nameDerivedAgent derives an agent id from a span name: "invoke_agent X",
// "invoke_workflow X", "X.agent" and "X.workflow" give X; anything else gives
// SyntheticAgentID.
func nameDerivedAgent(name string) (string, string) {
	for _, p := range []string{"invoke_agent ", "invoke_workflow "} {
		if rest, ok := strings.CutPrefix(name, p); ok && strings.TrimSpace(rest) != "" {
			return strings.TrimSpace(rest), session.AgentRuleSyntheticRootName
		}
	}
	for _, s := range []string{".agent", ".workflow"} {
		if rest, ok := strings.CutSuffix(name, s); ok && strings.TrimSpace(rest) != "" {
			return strings.TrimSpace(rest), session.AgentRuleSyntheticRootName
		}
	}
	return session.SyntheticAgentID, session.AgentRuleSynthetic
}

// Step ranks order steps that start at the same instant.
const (
	rankReasoning = iota
	rankLLM
	rankTool
	rankHandoff
)

func (a *assembler) addStep(in *interactionBuilder, at int64, rank int, s session.AgentStep) {
	s.StartedAt = unixTime(at)
	in.steps = append(in.steps, s)
	in.keys = append(in.keys, stepKey{at: at, rank: rank, seq: a.seq})
	a.seq++
}

// buildSteps adds the LLM and reasoning steps and the tool-call steps, then orders every
// step by start time, rank and insertion order (handoff steps were added by
// buildHandoffs).
func (a *assembler) buildSteps(in *interactionBuilder) {
	n := len(in.llms) + len(in.calls)
	for _, l := range in.llms {
		if l.rec.Reasoning != "" {
			n++
		}
	}
	in.steps = slices.Grow(in.steps, n) // once: a step is large, regrowth copies them all
	in.keys = slices.Grow(in.keys, n)
	llms := make([]session.LLMCall, len(in.llms)) // one allocation each for the calls
	for i, l := range in.llms {
		r := l.rec
		if r.Reasoning != "" {
			a.addStep(in, l.start(), rankReasoning, session.AgentStep{Kind: session.StepReasoning, SpanID: r.SpanID, Text: r.Reasoning})
		}
		llms[i] = llmCall(l)
		a.addStep(in, l.start(), rankLLM, session.AgentStep{Kind: session.StepLLMCall, SpanID: r.SpanID, LLMCall: &llms[i]})
	}
	tcs := make([]session.ToolCall, len(in.calls))
	for i, c := range in.calls {
		tcs[i] = c.tc
		a.addStep(in, c.at, rankTool, session.AgentStep{Kind: session.StepToolCall, SpanID: c.tc.SpanID, ToolCall: &tcs[i]})
	}
	sort.Sort(stepOrder{in})
}

func llmCall(l *treeNode) session.LLMCall {
	r := l.rec
	c := session.LLMCall{
		Model:         r.Model,
		FinishReasons: slices.Clone(r.FinishReasons),
		LatencyMs:     l.durationMs(),
		Usage:         llmUsage(r),
		Output:        r.Output,
		Status:        l.status(),
	}
	if len(r.ToolDefs) > 0 {
		c.ToolsOffered = make([]string, len(r.ToolDefs))
		for i, d := range r.ToolDefs {
			c.ToolsOffered[i] = d.Name
		}
	}
	return c
}

// llmUsage is the usage of one inference span, counted as one LLM call.
func llmUsage(r *session.SpanRecord) session.Usage {
	u := r.Usage
	u.LLMCalls = 1
	return u
}

// unixTime converts Unix nanoseconds to a UTC time; 0 gives the zero time.
func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

func (a *assembler) result() TurnAssembly {
	root := a.root
	rr := root.rec
	turn := session.Turn{
		TraceID:       rr.TraceID,
		RootSpanID:    rr.SpanID,
		RootRule:      a.rootRule,
		UserMessage:   rr.UserMessage,
		FinalResponse: rr.Output,
		StartedAt:     unixTime(root.start()),
		EndedAt:       unixTime(root.end()),
		LatencyMs:     root.durationMs(),
		Status:        root.status(),
		SpanCount:     len(a.nodes),
		Interactions:  make([]session.AgentInteraction, 0, len(a.inters)),
	}
	if rr.EndUnixNano <= rr.StartUnixNano {
		// No usable root duration: use the trace's extent.
		lo, hi := a.nodes[0].start(), a.nodes[0].end()
		for _, n := range a.nodes {
			lo, hi = min(lo, n.start()), max(hi, n.end())
		}
		turn.StartedAt, turn.EndedAt, turn.LatencyMs = unixTime(lo), unixTime(hi), float64(hi-lo)/1e6
	}
	var outcomeNode *treeNode
	var cost float64
	var costSeen, llmSeen bool
	for _, n := range a.nodes {
		r := n.rec
		if turn.UserMessage == "" && (r.Class == session.ClassAgent || r.Class == session.ClassLLM) {
			turn.UserMessage = r.UserMessage
		}
		if r.Class == session.ClassLLM {
			llmSeen = true
			turn.Usage.Add(llmUsage(r))
			if r.Cost != nil {
				cost += *r.Cost
				costSeen = true
			}
		}
		if r.Outcome != nil && (outcomeNode == nil || n.end() >= outcomeNode.end()) {
			outcomeNode = n
		}
		if r.Truncated || r.ToolArgsTruncated {
			a.anomalies[session.AnomalyTruncatedText] = true
		}
		if len(r.Problems) > 0 {
			a.anomalies[session.AnomalyUnreadableValue] = true
		}
		for _, rc := range r.RequestedCalls {
			if rc.ArgumentsTruncated {
				a.anomalies[session.AnomalyTruncatedText] = true
			}
		}
	}
	if !llmSeen {
		turn.Usage = a.agentUsage()
		a.agentTotals = true
	}
	var last *interactionBuilder
	for _, in := range a.inters {
		ia := a.interaction(in)
		turn.Interactions = append(turn.Interactions, ia)
		if ia.Output != "" && (last == nil || in.node.end() > last.node.end() ||
			(in.node.end() == last.node.end() && in.node.idx > last.node.idx)) {
			last = in
		}
	}
	if turn.FinalResponse == "" && last != nil {
		turn.FinalResponse = turn.Interactions[slices.Index(a.inters, last)].Output
	}
	for k := range a.anomalies {
		turn.Anomalies = append(turn.Anomalies, k)
	}
	slices.Sort(turn.Anomalies)
	out := TurnAssembly{Turn: turn, Agents: a.agents()}
	if outcomeNode != nil {
		v := *outcomeNode.rec.Outcome
		out.Outcome = &v
	}
	if costSeen {
		out.Cost = &cost
	}
	return out
}

// agentUsage is the usage of a turn without any LLM span: the totals its agent spans
// carry (conventions.md §8), each counted once, from the outermost agent spans that
// have one (an agent's total covers the agents under it).
func (a *assembler) agentUsage() session.Usage {
	var u session.Usage
	for _, n := range a.nodes {
		if n.rec.Class != session.ClassAgent || n.rec.Usage == (session.Usage{}) {
			continue
		}
		outer := true
		for anc := n.agentAnc; anc != nil; anc = anc.agentAnc {
			if anc.rec.Usage != (session.Usage{}) {
				outer = false
				break
			}
		}
		if outer {
			u.Add(n.rec.Usage)
		}
	}
	return u
}

func (a *assembler) interaction(in *interactionBuilder) session.AgentInteraction {
	r := in.node.rec
	ia := session.AgentInteraction{
		AgentID:   in.agentID,
		AgentRule: in.agentRule,
		SpanID:    r.SpanID,
		Input:     in.input,
		Output:    r.Output,
		StartedAt: unixTime(in.node.start()),
		LatencyMs: in.node.durationMs(),
		Status:    in.node.status(),
		ErrorType: r.ErrorType,
		Steps:     in.steps, // sorted by buildSteps; the builder is done with them
	}
	if in.parent >= 0 {
		ia.ParentAgentID = a.inters[in.parent].agentID
	}
	if len(r.FinishReasons) > 0 && !in.synthetic {
		ia.FinishReason = r.FinishReasons[len(r.FinishReasons)-1]
	}
	if a.agentTotals && !in.synthetic {
		// No model call recorded in the turn: the agent's own totals (agentUsage). With
		// LLM spans in the turn, they would count a sub-agent's calls twice.
		ia.Usage = r.Usage
	}
	lastText := ""
	for _, l := range in.llms {
		ia.Usage.Add(llmUsage(l.rec))
		if fr := l.rec.FinishReasons; len(fr) > 0 {
			ia.FinishReason = fr[len(fr)-1]
		}
		if l.rec.Output != "" {
			lastText = l.rec.Output
		}
	}
	if ia.Output == "" {
		// The agent span carries no output: its answer is its last LLM text, else the
		// answer recorded on the tool that launched it.
		ia.Output = cmp.Or(lastText, in.launchOutput)
	}
	if ia.Steps == nil {
		ia.Steps = []session.AgentStep{}
	}
	return ia
}

// agents lists the agents that have an interaction in the turn, with what the trace
// shows of their tools and handoff targets (see TurnAssembly.Agents).
func (a *assembler) agents() []session.AgentDefinition {
	var out []session.AgentDefinition
	pos := map[string]int{}
	for _, in := range a.inters {
		i, ok := pos[in.agentID]
		if !ok {
			i = len(out)
			pos[in.agentID] = i
			out = append(out, session.AgentDefinition{ID: in.agentID, Name: in.agentID, Tools: []session.ToolDefinition{}})
		}
		d := &out[i]
		r := in.node.rec
		if d.Description == "" && r.Class == session.ClassAgent {
			d.Description = r.AgentDescription
		}
		d.AddTools(r.ToolDefs)
		for _, name := range r.AllowedTools {
			d.AddTools([]session.ToolDefinition{{Name: name}})
		}
		for _, t := range r.HandoffTargets {
			if t = a.resolveAgent(t); t != "" {
				d.HandoffTargets = append(d.HandoffTargets, t)
			}
		}
		for _, l := range in.llms {
			d.AddTools(l.rec.ToolDefs)
		}
	}
	for i := range out {
		d := &out[i]
		if len(d.Tools) > 0 {
			d.ToolsSource = "trace"
		}
		for _, t := range d.Tools {
			if h := handoffToolInfo(t.Name, nil); h != nil && h.target != "" {
				d.HandoffTargets = append(d.HandoffTargets, a.resolveAgent(h.target))
			}
		}
		slices.Sort(d.HandoffTargets)
		d.HandoffTargets = slices.Compact(d.HandoffTargets)
	}
	return out
}
