// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly // import "github.com/agenteval/agenteval-collector/internal/assembly"

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// handoffCand is one handoff found by one signal.
type handoffCand struct {
	strength int // index of the signal, 0 = (a) strongest
	rule     string
	inferred bool
	from     int    // interaction index
	to       string // receiving agent id
	receiver int    // receiving interaction index, -1 when it did not run in the turn
	at       int64
	spanID   string
	mode     string
	// modeKnown is false when mode is the default rather than read from the trace or
	// implied by the signal.
	modeKnown bool
	// params are the tool-call arguments carrying the payload, nil when none.
	params json.RawMessage
	// rawPayload: use the whole arguments as the payload when no payload key is present
	// (agent-as-tool: the arguments are the sub-agent's input).
	rawPayload  bool
	calls       []*interCall
	handoffSpan *treeNode
	seq         int
}

// buildHandoffs collects the candidates of the six signals, keeps one handoff per
// transfer (strongest signal first) and adds the handoff steps to the sending
// interactions. A transfer is identified by its receiving interaction; when the receiving
// agent did not run in the turn, by the tool call that made it, else by (sending
// interaction, receiving agent).
func (a *assembler) buildHandoffs() {
	var cands []*handoffCand
	add := func(c *handoffCand) {
		if c.from < 0 || c.to == "" || c.to == a.inters[c.from].agentID {
			return
		}
		c.seq = len(cands)
		cands = append(cands, c)
	}
	// (a) gen_ai.transfer.* on tool spans (or the rule the extractor recorded there) and
	// (d) handoff tool calls. A requested handoff call that was neither executed nor
	// followed by its target agent is a rejected call, not a transfer.
	for i, in := range a.inters {
		for _, c := range in.calls {
			if e := c.exec; e != nil && e.rec.HandoffTo != "" {
				r := e.rec
				strength, rule, inferred := handoffRuleRank(r.HandoffRule)
				cand := &handoffCand{
					strength: strength, rule: rule, inferred: inferred, from: a.fromByName(r.HandoffFrom, e.start(), i),
					at: e.start(), spanID: r.SpanID, params: c.tc.Parameters, mode: r.HandoffMode,
					// A handoff tool's pass_control is the extractor's default for the tool
					// name, not read from the trace: nesting may still imply return_to_caller.
					modeKnown: r.HandoffMode != "" &&
						(rule != session.HandoffSourceTool || r.HandoffMode != semconv.TransferModePassControl),
					calls: []*interCall{c},
				}
				cand.to, cand.receiver = a.receiverUnder(e, a.resolveAgent(r.HandoffTo), cand.from, cand.at)
				if !cand.modeKnown {
					cand.mode = a.modeUnder(e, semconv.TransferModePassControl)
					cand.modeKnown = cand.mode == semconv.TransferModeReturn // implied by the nesting
				}
				add(cand)
			}
			if h := c.handoff; h != nil {
				cand := &handoffCand{
					strength: 3, rule: session.HandoffSourceTool, inferred: true, from: i, at: c.at,
					spanID: c.tc.SpanID, params: c.tc.Parameters, mode: h.mode, modeKnown: true, calls: []*interCall{c},
				}
				to := a.resolveAgent(h.target)
				if c.exec != nil {
					cand.mode = a.modeUnder(c.exec, h.mode)
					cand.to, cand.receiver = a.receiverUnder(c.exec, to, i, c.at)
				} else if to != "" {
					cand.to, cand.receiver = to, a.findReceiver(to, c.at, i)
				}
				if cand.to == "" || (c.exec == nil && cand.receiver < 0) {
					continue
				}
				add(cand)
			}
		}
	}
	for _, n := range a.nodes {
		r := n.rec
		switch r.Class {
		case session.ClassHandoff:
			// (b) explicit handoff spans, (c) OpenInference "handoff to X" spans.
			cand := &handoffCand{strength: 1, rule: session.HandoffSourceHandoffSpan, at: n.start(), spanID: r.SpanID,
				mode: r.HandoffMode, modeKnown: r.HandoffMode != "", handoffSpan: n}
			to := r.HandoffTo
			if rest, ok := strings.CutPrefix(r.Name, semconv.OIHandoffSpanPrefix); ok || strings.Contains(strings.ToLower(r.HandoffRule), "openinference") {
				cand.strength, cand.rule = 2, session.HandoffSourceOpenInference
				if to == "" {
					to = strings.TrimSpace(rest)
				}
			}
			if to == "" {
				continue
			}
			if !cand.modeKnown {
				cand.mode = semconv.TransferModePassControl
			}
			cand.to = a.resolveAgent(to)
			cand.from = a.fromByName(r.HandoffFrom, n.start(), n.inter)
			cand.receiver = a.findReceiver(cand.to, n.start(), cand.from)
			add(cand)
		case session.ClassAgent:
			recv := n.inter
			to := a.inters[recv].agentID
			// (b) the agent span names its caller.
			if r.HandoffRule == semconv.GenAICallerName && r.HandoffFrom != "" {
				if from := a.fromByName(r.HandoffFrom, n.start(), -1); from >= 0 {
					add(&handoffCand{strength: 1, rule: session.HandoffSourceCaller, from: from, to: to,
						receiver: recv, at: n.start(), spanID: r.SpanID, mode: r.HandoffMode, modeKnown: r.HandoffMode != ""})
				}
			}
			// (c) graph.node.parent_id naming an earlier agent (not the enclosing one).
			if gp := r.GraphParentID; gp != "" && gp != r.GraphNodeID && gp != to {
				if from := a.graphParent(n, gp); from >= 0 {
					add(&handoffCand{strength: 2, rule: session.HandoffSourceOpenInference, from: from, to: to,
						receiver: recv, at: n.start(), spanID: r.SpanID, mode: semconv.TransferModePassControl})
				}
			}
			// (e) agent-as-tool: nested under a tool span, or running inside a tool span named
			// after it (OpenLLMetry lifts the sub-agent span out of the tool span).
			tool := n.toolAnc
			if tool == nil {
				tool = a.enclosingNamedTool(n)
			}
			if tool != nil && tool.inter >= 0 {
				cand := &handoffCand{strength: 4, rule: session.HandoffSourceAgentAsTool, inferred: true, from: tool.inter,
					to: to, receiver: recv, at: tool.start(), spanID: tool.rec.SpanID,
					mode: semconv.TransferModeReturn, modeKnown: true, rawPayload: true}
				if tool.call != nil {
					cand.params = tool.call.tc.Parameters
				}
				add(cand)
			}
		}
	}
	// (f) consecutive sibling agent spans of different agents that do not overlap.
	siblings := map[*treeNode][]*treeNode{}
	var parents []*treeNode
	for _, n := range a.nodes {
		if n.rec.Class != session.ClassAgent {
			continue
		}
		if _, ok := siblings[n.parent]; !ok {
			parents = append(parents, n.parent)
		}
		siblings[n.parent] = append(siblings[n.parent], n)
	}
	for _, p := range parents {
		group := siblings[p]
		for k := 1; k < len(group); k++ {
			prev, next := group[k-1], group[k]
			if next.start() < prev.end() {
				continue
			}
			add(&handoffCand{strength: 5, rule: session.HandoffSourceSibling, inferred: true, from: prev.inter,
				to: a.inters[next.inter].agentID, receiver: next.inter, at: next.start(), spanID: next.rec.SpanID,
				mode: semconv.TransferModePassControl})
		}
	}
	a.recordHandoffs(cands)
}

// recordHandoffs de-duplicates the candidates and adds one handoff step per transfer.
func (a *assembler) recordHandoffs(cands []*handoffCand) {
	slices.SortFunc(cands, func(x, y *handoffCand) int {
		if x.strength != y.strength {
			return x.strength - y.strength
		}
		if c := cmp.Compare(x.at, y.at); c != 0 {
			return c
		}
		return x.seq - y.seq
	})
	// A transfer is identified by its receiving interaction, by the tool call that made
	// it, or (when the receiver did not run) by sender and receiving agent.
	var groups [][]*handoffCand
	byRecv := map[int]int{}
	byCall := map[*interCall]int{}
	type pairKey struct {
		from int
		to   string
	}
	byPair := map[pairKey]int{}
	for _, c := range cands {
		pair := pairKey{c.from, c.to}
		g, ok := byRecv[c.receiver]
		if c.receiver < 0 {
			ok = false
		}
		for _, call := range c.calls {
			if !ok {
				g, ok = byCall[call]
			}
		}
		if !ok && c.receiver < 0 {
			g, ok = byPair[pair]
		}
		if !ok {
			g = len(groups)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], c)
		if c.receiver >= 0 {
			if _, taken := byRecv[c.receiver]; !taken {
				byRecv[c.receiver] = g
			}
		} else if _, taken := byPair[pair]; !taken {
			byPair[pair] = g
		}
		for _, call := range c.calls {
			if _, taken := byCall[call]; !taken {
				byCall[call] = g
			}
		}
	}
	for _, g := range groups {
		best := g[0]
		h := session.Handoff{
			FromAgent:  a.inters[best.from].agentID,
			ToAgent:    best.to,
			Mode:       best.mode,
			SourceRule: best.rule,
			Inferred:   best.inferred,
		}
		for _, c := range g {
			if c.modeKnown {
				h.Mode = c.mode
				break
			}
		}
		h.Payload, h.PayloadCaptured = a.handoffPayload(g)
		a.fixUpHandoffCalls(g)
		a.addStep(a.inters[best.from], best.at, rankHandoff, session.AgentStep{Kind: session.StepHandoff, SpanID: best.spanID, Handoff: &h})
	}
}

// handoffPayload is the context passed to the receiving agent: the payload keys of the
// handoff tool arguments (message, task, context...), else the receiving interaction's
// input, else (agent-as-tool) the whole tool arguments.
func (a *assembler) handoffPayload(g []*handoffCand) (string, bool) {
	for _, c := range g {
		if p := argsPayload(c.params); p != "" {
			return p, true
		}
	}
	recv := g[0].receiver
	if recv >= 0 && a.inters[recv].input != "" {
		return a.inters[recv].input, true
	}
	captured := recv >= 0 && a.inters[recv].node.rec.ContentCaptured
	for _, c := range g {
		if len(c.params) == 0 {
			continue
		}
		captured = true
		if c.rawPayload {
			var s string
			if json.Unmarshal(c.params, &s) == nil {
				return s, true
			}
			return string(c.params), true
		}
	}
	return "", captured
}

// fixUpHandoffCalls marks as executed the requested handoff tool call that produced a
// transfer seen in the trace (the receiving agent ran, or a handoff span recorded it)
// when no execution span of the call exists: frameworks such as the OpenAI Agents SDK
// record a handoff span, not a tool span. At most one call per transfer: the last one
// requested before the receiving agent started.
func (a *assembler) fixUpHandoffCalls(g []*handoffCand) {
	var span *treeNode
	recv := g[0].receiver
	for _, c := range g {
		if c.handoffSpan != nil && span == nil {
			span = c.handoffSpan
		}
	}
	if span == nil && recv < 0 {
		return
	}
	var pick *interCall
	for _, c := range g {
		for _, call := range c.calls {
			if call.tc.Executed || (call.exec != nil && call.exec.rec.ClientSide()) || (recv >= 0 && call.at > a.inters[recv].node.start()) {
				continue
			}
			if pick == nil || call.at > pick.at {
				pick = call
			}
		}
	}
	if pick == nil {
		return
	}
	pick.tc.Executed = true
	pick.tc.Status = session.StatusOK
	if span != nil {
		pick.tc.SpanID = span.rec.SpanID
		ms := span.durationMs()
		pick.tc.LatencyMs = &ms
		if recv < 0 {
			// The receiving agent did not run: the handoff span's status tells how it
			// ended. (When it ran, the transfer happened whatever the span says: the
			// OpenAI Agents SDK marks it ERROR when it ignored another requested handoff.)
			pick.tc.Status = span.status()
		}
	}
}

// resolveAgent maps a handoff target name to the id of an agent of the turn when one
// matches exactly or after normalisation (AgentKey); else it returns the name trimmed.
func (a *assembler) resolveAgent(name string) string {
	name = strings.TrimSpace(name)
	for _, in := range a.inters {
		if in.agentID == name {
			return name
		}
	}
	key := session.AgentKey(name)
	if key == "" {
		return name
	}
	if a.agentKeys == nil {
		a.agentKeys = map[string]string{}
		for _, in := range a.inters {
			if k := session.AgentKey(in.agentID); k != "" {
				if _, dup := a.agentKeys[k]; !dup {
					a.agentKeys[k] = in.agentID
				}
			}
		}
	}
	if id, ok := a.agentKeys[key]; ok {
		return id
	}
	return name
}

// fromByName resolves the sending interaction: the owner interaction when name is empty
// or names its agent, else the latest interaction of the named agent started at or before
// at, else the owner interaction.
func (a *assembler) fromByName(name string, at int64, owner int) int {
	if name == "" {
		return owner
	}
	id := a.resolveAgent(name)
	if owner >= 0 && a.inters[owner].agentID == id {
		return owner
	}
	best := -1
	for i, in := range a.inters {
		if in.agentID == id && in.node.start() <= at {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	return owner
}

// findReceiver is the first interaction of agent to (other than from) that started at or
// after at; -1 when there is none.
func (a *assembler) findReceiver(to string, at int64, from int) int {
	for i, in := range a.inters {
		if i != from && in.agentID == to && in.node.start() >= at {
			return i
		}
	}
	return -1
}

// nestedAgent is the first agent span nested under the tool span (no other agent span
// in between), nil when none.
func (a *assembler) nestedAgent(tool *treeNode) *treeNode {
	if a.nested == nil {
		a.nested = map[*treeNode]*treeNode{}
		for _, n := range a.nodes {
			if n.rec.Class != session.ClassAgent || n.toolAnc == nil {
				continue
			}
			for p := n.parent; p != nil && p != n.agentAnc; p = p.parent {
				if _, ok := a.nested[p]; !ok && p.rec.Class == session.ClassTool {
					a.nested[p] = n
				}
			}
		}
	}
	return a.nested[tool]
}

// receiverUnder resolves the receiving agent and interaction of a handoff made by a tool
// execution span: the agent span nested under the tool span when there is one (the
// agent-as-tool that ran; its agent id wins over the name the tool gave), else the first
// later interaction of agent to (-1 when it did not run in the turn).
func (a *assembler) receiverUnder(tool *treeNode, to string, from int, at int64) (string, int) {
	if sub := a.nestedAgent(tool); sub != nil {
		return a.inters[sub.inter].agentID, sub.inter
	}
	if to == "" {
		return "", -1
	}
	return to, a.findReceiver(to, at, from)
}

// handoffRuleRank maps the rule the extractor recorded for a tool span's handoff target
// (SpanRecord.HandoffRule) to the signal's strength, source rule and inferred flag. An
// empty or unknown rule is gen_ai.transfer (a), the only attribute-based signal on tool
// spans.
func handoffRuleRank(rule string) (int, string, bool) {
	switch r := strings.ToLower(rule); {
	case strings.Contains(r, "handoff_tool"):
		return 3, session.HandoffSourceTool, true
	case strings.Contains(r, "agent_as_tool"):
		return 4, session.HandoffSourceAgentAsTool, true
	case strings.Contains(r, "openinference"):
		return 2, session.HandoffSourceOpenInference, false
	case strings.Contains(r, "gen_ai.handoff"):
		return 1, session.HandoffSourceHandoffSpan, false
	}
	return 0, session.HandoffSourceTransfer, false
}

// modeUnder is return_to_caller when an agent span runs nested under the tool span
// (agent-as-tool), else def.
func (a *assembler) modeUnder(tool *treeNode, def string) string {
	if a.nestedAgent(tool) != nil {
		return semconv.TransferModeReturn
	}
	return def
}

// graphParent is the latest interaction started before n whose agent id or
// graph.node.id is gp; -1 when none, or when it is n's enclosing agent (a hierarchy,
// not a transfer).
func (a *assembler) graphParent(n *treeNode, gp string) int {
	best := -1
	for i, in := range a.inters {
		if in.node == n || in.node.start() > n.start() {
			continue
		}
		if in.agentID == gp || in.node.rec.GraphNodeID == gp {
			best = i
		}
	}
	if best >= 0 && a.inters[best].node == n.agentAnc {
		return -1
	}
	return best
}

// enclosingNamedTool finds the tool span an agent span ran inside when the
// instrumentation did not nest it (OpenLLMetry openai-agents agents-as-tools: the
// sub-agent span is a child of the workflow, its time inside the caller's
// "ask_<agent>" tool span). The tool must be of another agent, not an ancestor of the
// agent span, contain its time span, and be named after it; the latest such tool wins.
func (a *assembler) enclosingNamedTool(n *treeNode) *treeNode {
	in := a.inters[n.inter]
	key := session.AgentKey(in.agentID)
	if len(key) < 3 {
		return nil
	}
	var best *treeNode
	for _, t := range a.nodes {
		if t.rec.Class != session.ClassTool || t.inter < 0 || a.inters[t.inter].agentID == in.agentID {
			continue
		}
		if t.start() > n.start() || n.end() > t.end() || !strings.Contains(session.AgentKey(execToolName(t.rec)), key) {
			continue
		}
		if a.isAncestor(t, n) {
			continue
		}
		best = t
	}
	return best
}

func (a *assembler) isAncestor(anc, n *treeNode) bool {
	for p := n.parent; p != nil; p = p.parent {
		if p == anc {
			return true
		}
	}
	return false
}
