// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package sessionjson // import "github.com/agenteval/agenteval-collector/internal/sessionjson"

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/toolschema"
)

// Defaults of Options.
const (
	// DefaultServiceName is the resource service.name of converted sessions.
	DefaultServiceName = "agentsession"
	// DefaultWorkflowName is the gen_ai.workflow.name of every turn's root span.
	DefaultWorkflowName = "agent_session"
	// DefaultAgentID is the agent of the single-agent form when no agent is declared
	// (ReAsk AgentTraceInput.to_session).
	DefaultAgentID = "agent"
	// ScopeName is the instrumentation scope of the converted spans.
	ScopeName = "github.com/agenteval/agenteval-collector/internal/sessionjson"

	// AttrStepObservation holds a step's observation when the step has no tool call to
	// carry it as a result (on the step's chat span).
	AttrStepObservation = "agent_eval.step.observation"
	// ErrorTypeTool is the error.type of a tool call that reported an error.
	ErrorTypeTool = "tool_error"
)

// spanGap separates consecutive spans so that start-time order is the body's order even
// when latencies are unknown (zero).
const spanGap = time.Microsecond

// IDGenerator makes the ids of converted sessions. Tests inject deterministic ones.
type IDGenerator interface {
	NewTraceID() pcommon.TraceID
	NewSpanID() pcommon.SpanID
	// NewSessionID returns a session id for a body without session_id.
	NewSessionID() string
}

// Options tune Convert. The zero value is usable.
type Options struct {
	// ServiceName is the resource service.name; DefaultServiceName when empty.
	ServiceName string
	// WorkflowName is gen_ai.workflow.name on the turn roots; DefaultWorkflowName when empty.
	WorkflowName string
	// EndSession writes agent_eval.session.end=true on the last turn's root span, so the
	// processor closes and evaluates the session at once (docs/architecture.md §4 "Session end").
	EndSession bool
	// Now is the clock (time.Now when nil): a session without a usable
	// session_metadata.timestamp is laid out to end at Now().
	Now func() time.Time
	// IDs makes trace, span and session ids. When nil, a turn's trace id is derived
	// from the session id, the turn's position in the body and the turn's JSON, its
	// spans' ids from the trace id (the same body posted again gives the same ids:
	// a client's retry is taken for late spans of the turns the processor has, not
	// for new turns), and a missing session_id is drawn from crypto/rand.
	IDs IDGenerator
}

// Converted is one session converted to spans.
type Converted struct {
	// SessionID is the body's session_id or the generated one.
	SessionID string
	// TraceIDs are the hex trace ids, one per turn, in turn order.
	TraceIDs []string
	// SpanCount is the number of spans in Traces.
	SpanCount int
	Traces    ptrace.Traces
}

// Convert lays one session out as OTel GenAI spans, one trace per turn:
//
//	invoke_workflow {workflow}         turn root: gen_ai.conversation.id, the user message
//	│                                  (gen_ai.input.messages) and the final response
//	├─ invoke_agent {agent_id}         one per interaction, in order: gen_ai.agent.name/id,
//	│  │                               gen_ai.tool.definitions (tools_available as JSON
//	│  │                               Schema), input/output messages, duration latency_ms
//	│  ├─ chat                         one per step with a thought, action or tool call: output
//	│  │                               message with reasoning / text / tool_call parts
//	│  └─ execute_tool {tool}          one per tool call: gen_ai.tool.call.id/arguments/result,
//	│                                  error status, duration latency_ms; a call that names
//	│                                  another agent of the session as its target (transfer_to_X,
//	│                                  {agent_id: X}...) also carries gen_ai.transfer.*
//	└─ ...
//
// Timestamps are synthetic: spans follow each other in body order, separated by 1µs; an
// agent span lasts max(latency_ms, its children); one latency_ms counts at most 7 days. The last turn's root carries
// agent_eval.session.end=true when opts.EndSession, and agent_eval.task.completed when the
// body has "success". Consecutive interactions of different agents are left to the
// processor's sibling-agent handoff rule (pass_control); the receiving agent's input is the
// previous interaction's response (else its last tool result).
func Convert(s Session, opts Options) Converted {
	c := newConverter(&s, opts)
	return c.run()
}

type converter struct {
	s          *Session
	opts       Options
	ids        IDGenerator // nil: ids derived from the body (traceID, spanID)
	trace      pcommon.TraceID
	traceSpans uint64 // spans of trace so far (spanID)
	sessionID  string
	agents     map[string]*Agent
	known      map[string]string // lower-cased agent id -> agent id (declared or used)
	toolDefs   map[string]string // agent id -> gen_ai.tool.definitions JSON ("" = unknown)
	traces     ptrace.Traces
	spans      ptrace.SpanSlice
	cur        time.Duration // layout cursor, relative to the session start
	end        time.Duration // end of the last turn root
	lastRootAt int           // index in spans of the last turn root
}

func newConverter(s *Session, opts Options) *converter {
	if opts.ServiceName == "" {
		opts.ServiceName = DefaultServiceName
	}
	if opts.WorkflowName == "" {
		opts.WorkflowName = DefaultWorkflowName
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &converter{
		s: s, opts: opts, ids: opts.IDs,
		sessionID: s.SessionID,
		agents:    map[string]*Agent{},
		known:     map[string]string{},
		toolDefs:  map[string]string{},
		traces:    ptrace.NewTraces(),
	}
	if c.sessionID == "" {
		c.sessionID = cmp.Or[IDGenerator](opts.IDs, randomIDs{}).NewSessionID()
	}
	for i := range s.Agents {
		a := &s.Agents[i]
		if _, dup := c.agents[a.ID]; !dup {
			c.agents[a.ID] = a
		}
		c.known[strings.ToLower(a.ID)] = a.ID
	}
	for _, t := range s.Turns {
		for _, in := range t.AgentInteractions {
			c.known[strings.ToLower(in.AgentID)] = in.AgentID
		}
	}
	rs := c.traces.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.ServiceName, opts.ServiceName)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(ScopeName)
	c.spans = ss.Spans()
	return c
}

func (c *converter) run() Converted {
	out := Converted{SessionID: c.sessionID}
	for i := range c.s.Turns {
		out.TraceIDs = append(out.TraceIDs, c.turn(i, &c.s.Turns[i]))
	}
	if c.spans.Len() > 0 {
		root := c.spans.At(c.lastRootAt)
		if c.opts.EndSession {
			root.Attributes().PutBool(semconv.AgentEvalSessionEnd, true)
		}
		if c.s.Success != nil {
			root.Attributes().PutBool(semconv.AgentEvalTaskCompleted, *c.s.Success)
		}
	}
	c.shift()
	out.SpanCount = c.spans.Len()
	out.Traces = c.traces
	return out
}

// shift turns the relative layout into absolute times: from session_metadata.timestamp
// when it is an RFC 3339 time, else ending at Now().
func (c *converter) shift() {
	var base time.Time
	if md := c.s.SessionMetadata; md != nil && md.Timestamp != nil {
		// Only times that pdata's uint64 nanoseconds can hold, with room for the layout.
		if t, err := time.Parse(time.RFC3339Nano, *md.Timestamp); err == nil && t.Year() >= 1970 && t.Year() < 2200 {
			base = t
		}
	}
	if base.IsZero() {
		base = c.opts.Now().Add(-c.end)
	}
	off := pcommon.Timestamp(base.UnixNano())
	for i := 0; i < c.spans.Len(); i++ {
		sp := c.spans.At(i)
		sp.SetStartTimestamp(sp.StartTimestamp() + off)
		sp.SetEndTimestamp(sp.EndTimestamp() + off)
	}
}

// newSpan appends a span; times are relative until shift.
func (c *converter) newSpan(trace pcommon.TraceID, parent pcommon.SpanID, name string, start, end time.Duration) ptrace.Span {
	sp := c.spans.AppendEmpty()
	sp.SetTraceID(trace)
	sp.SetSpanID(c.spanID())
	sp.SetParentSpanID(parent)
	sp.SetName(name)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetStartTimestamp(pcommon.Timestamp(start))
	sp.SetEndTimestamp(pcommon.Timestamp(end))
	sp.Attributes().PutStr(semconv.GenAIConversationID, c.sessionID)
	return sp
}

func (c *converter) turn(idx int, t *Turn) string {
	traceID := c.traceID(idx, t)
	rootStart := c.cur
	root := c.newSpan(traceID, pcommon.SpanID{}, semconv.OpInvokeWorkflow+" "+c.opts.WorkflowName, rootStart, rootStart)
	rootAt := c.spans.Len() - 1
	ra := root.Attributes()
	ra.PutStr(semconv.GenAIOperationName, semconv.OpInvokeWorkflow)
	ra.PutStr(semconv.GenAIWorkflowName, c.opts.WorkflowName)
	if t.UserMessage != nil && *t.UserMessage != "" {
		ra.PutStr(semconv.GenAIInputMessages, messagesJSON(genaiMessage{Role: semconv.RoleUser, Parts: []part{textPart(*t.UserMessage)}}))
	}
	rootID := root.SpanID()
	c.cur += spanGap

	interactions := t.AgentInteractions
	if len(interactions) == 0 && (t.AgentResponse != nil || len(t.AgentSteps) > 0) {
		interactions = []Interaction{{
			AgentID:       c.defaultAgentID(),
			AgentSteps:    t.AgentSteps,
			AgentResponse: t.AgentResponse,
			LatencyMs:     t.LatencyMs,
		}}
	}
	final := ""
	var prevOutput, prevAgent string
	for i := range interactions {
		in := &interactions[i]
		var input *genaiMessage
		switch {
		case i == 0 && t.UserMessage != nil && *t.UserMessage != "":
			input = &genaiMessage{Role: semconv.RoleUser, Parts: []part{textPart(*t.UserMessage)}}
		case i > 0 && prevOutput != "":
			input = &genaiMessage{Role: semconv.RoleAssistant, Name: prevAgent, Parts: []part{textPart(prevOutput)}}
		}
		prevOutput = c.interaction(traceID, rootID, idx, i, in, input)
		prevAgent = in.AgentID
		if in.AgentResponse != nil && *in.AgentResponse != "" {
			final = *in.AgentResponse
		}
	}
	if t.FinalResponse != nil && *t.FinalResponse != "" {
		final = *t.FinalResponse
	}
	root = c.spans.At(rootAt)
	if final != "" {
		root.Attributes().PutStr(semconv.GenAIOutputMessages, messagesJSON(genaiMessage{Role: semconv.RoleAssistant, Parts: []part{textPart(final)}, FinishReason: semconv.FinishStop}))
	}
	root.SetEndTimestamp(pcommon.Timestamp(c.cur))
	c.end = c.cur
	c.lastRootAt = rootAt
	c.cur += spanGap
	return traceID.String()
}

func (c *converter) defaultAgentID() string {
	if len(c.s.Agents) > 0 {
		return c.s.Agents[0].ID
	}
	return DefaultAgentID
}

// interaction emits one agent span and its children; it returns what the agent handed
// on: its response, else its last tool result.
func (c *converter) interaction(traceID pcommon.TraceID, parent pcommon.SpanID, turnIdx, idx int, in *Interaction, input *genaiMessage) string {
	start := c.cur
	agent := c.newSpan(traceID, parent, semconv.OpInvokeAgent+" "+in.AgentID, start, start)
	agentAt := c.spans.Len() - 1
	aa := agent.Attributes()
	aa.PutStr(semconv.GenAIOperationName, semconv.OpInvokeAgent)
	aa.PutStr(semconv.GenAIAgentName, in.AgentID)
	aa.PutStr(semconv.GenAIAgentID, in.AgentID)
	if def := c.agents[in.AgentID]; def != nil && def.Description != nil && *def.Description != "" {
		aa.PutStr(semconv.GenAIAgentDescription, *def.Description)
	}
	if defs := c.toolDefinitions(in.AgentID); defs != "" {
		aa.PutStr(semconv.GenAIToolDefinitions, defs)
	}
	if input != nil {
		aa.PutStr(semconv.GenAIInputMessages, messagesJSON(*input))
	}
	agentID := agent.SpanID()
	c.cur += spanGap

	// A tool_execution_result equal to a step's call completes that call (result, error)
	// instead of becoming a second execution.
	dup := -1
	if ter := in.ToolExecutionResult; ter != nil {
		dup = sameCall(in.AgentSteps, ter)
	}
	handedOn := ""
	for s := range in.AgentSteps {
		step := &in.AgentSteps[s]
		callID := ""
		if tc := step.ToolCall; tc != nil {
			callID = fmt.Sprintf("call_%d_%d_%d", turnIdx, idx, s)
			if tc.CallID != nil && *tc.CallID != "" {
				callID = *tc.CallID
			}
		}
		c.stepChat(traceID, agentID, step, callID)
		if tc := step.ToolCall; tc != nil {
			result, errText := resultText(tc.Result), tc.Error
			if result == "" && step.Observation != nil {
				result = *step.Observation
			}
			if s == dup {
				if result == "" {
					result = resultText(in.ToolExecutionResult.Output)
				}
				if errText == nil {
					errText = in.ToolExecutionResult.Error
				}
			}
			c.toolSpan(traceID, agentID, in.AgentID, tc.ToolName, callID, tc.Parameters, result, errText, tc.LatencyMs)
			if result != "" {
				handedOn = result
			}
		}
	}
	if ter := in.ToolExecutionResult; ter != nil && dup < 0 {
		callID := fmt.Sprintf("call_%d_%d_exec", turnIdx, idx)
		result := resultText(ter.Output)
		c.toolSpan(traceID, agentID, in.AgentID, ter.ToolName, callID, ter.Parameters, result, ter.Error, nil)
		if result != "" {
			handedOn = result
		}
	}

	end := c.cur
	if in.LatencyMs != nil {
		if d := ms(*in.LatencyMs); start+d > end {
			end = start + d
		}
	}
	agent = c.spans.At(agentAt)
	agent.SetEndTimestamp(pcommon.Timestamp(end))
	if in.AgentResponse != nil && *in.AgentResponse != "" {
		agent.Attributes().PutStr(semconv.GenAIOutputMessages, messagesJSON(genaiMessage{Role: semconv.RoleAssistant, Parts: []part{textPart(*in.AgentResponse)}, FinishReason: semconv.FinishStop}))
		agent.Attributes().PutEmptySlice(semconv.GenAIResponseFinishReasons).AppendEmpty().SetStr(semconv.FinishStop)
		handedOn = *in.AgentResponse
	}
	c.cur = end + spanGap
	return handedOn
}

// stepChat emits the chat span of a step that has model-side content: the thought as a
// reasoning part, the action as text and the requested tool call.
func (c *converter) stepChat(traceID pcommon.TraceID, parent pcommon.SpanID, st *Step, callID string) {
	var parts []part
	if st.Thought != nil && *st.Thought != "" {
		parts = append(parts, part{Type: semconv.PartReasoning, Content: *st.Thought})
	}
	if st.Action != nil && *st.Action != "" {
		parts = append(parts, textPart(*st.Action))
	}
	finish := semconv.FinishStop
	if tc := st.ToolCall; tc != nil {
		parts = append(parts, part{Type: semconv.PartToolCall, ID: callID, Name: tc.ToolName, Arguments: compact(tc.Parameters)})
		finish = semconv.FinishToolCall
	}
	if len(parts) == 0 {
		return
	}
	sp := c.newSpan(traceID, parent, semconv.OpChat, c.cur, c.cur)
	a := sp.Attributes()
	a.PutStr(semconv.GenAIOperationName, semconv.OpChat)
	a.PutStr(semconv.GenAIOutputMessages, messagesJSON(genaiMessage{Role: semconv.RoleAssistant, Parts: parts, FinishReason: finish}))
	a.PutEmptySlice(semconv.GenAIResponseFinishReasons).AppendEmpty().SetStr(finish)
	if st.ToolCall == nil && st.Observation != nil && *st.Observation != "" {
		a.PutStr(AttrStepObservation, *st.Observation)
	}
	c.cur += spanGap
}

func (c *converter) toolSpan(traceID pcommon.TraceID, parent pcommon.SpanID, agentID, name, callID string, params json.RawMessage, result string, errText *string, latency *float64) {
	start := c.cur
	end := start
	if latency != nil {
		end += ms(*latency)
	}
	sp := c.newSpan(traceID, parent, semconv.OpExecuteTool+" "+name, start, end)
	a := sp.Attributes()
	a.PutStr(semconv.GenAIOperationName, semconv.OpExecuteTool)
	a.PutStr(semconv.GenAIToolName, name)
	a.PutStr(semconv.GenAIToolCallID, callID)
	a.PutStr(semconv.GenAIToolType, "function")
	if d := c.toolDescription(agentID, name); d != "" {
		a.PutStr(semconv.GenAIToolDescription, d)
	}
	if args, ok := argumentsText(params); ok {
		a.PutStr(semconv.GenAIToolCallArguments, args)
	}
	if result != "" {
		a.PutStr(semconv.GenAIToolCallResult, result)
	}
	if errText != nil && *errText != "" {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(*errText)
		a.PutStr(semconv.ErrorType, ErrorTypeTool)
	}
	if target := c.transferTarget(agentID, name, params); target != "" {
		a.PutStr(semconv.GenAITransferMode, semconv.TransferModePassControl)
		a.PutStr(semconv.GenAITransferTargetName, target)
		a.PutStr(semconv.GenAITransferTargetID, target)
		a.PutStr(semconv.GenAITransferTargetType, semconv.TransferTargetTypeAgent)
	}
	c.cur = end + spanGap
}

// transferTargetKeys are argument keys that name the agent a call hands over to (ReAsk
// delegate_task/transfer_to_agent {agent_id}, ADK {agent_name}, CrewAI {coworker}...).
var transferTargetKeys = []string{"agent_id", "agent_name", "agent", "to_agent", "target_agent", "coworker"}

// transferTargetPrefixes are handoff tool-name prefixes followed by the target agent
// (docs/decisions/sessions.md §1.5 Handoff (d)).
var transferTargetPrefixes = []string{"transfer_to_", "handoff_to_", "transfer_back_to_"}

// transferTarget returns the session agent a tool call hands over to, or "": an argument
// in transferTargetKeys or a transfer_to_<agent> name that names another agent of the
// session (declared or seen in an interaction).
func (c *converter) transferTarget(self, name string, params json.RawMessage) string {
	var args map[string]any
	if json.Unmarshal(params, &args) == nil {
		for _, k := range transferTargetKeys {
			if v, ok := args[k].(string); ok {
				if id, ok := c.known[strings.ToLower(v)]; ok && id != self {
					return id
				}
			}
		}
	}
	lname := strings.ToLower(name)
	for _, p := range transferTargetPrefixes {
		if rest, ok := strings.CutPrefix(lname, p); ok {
			if id, ok := c.known[rest]; ok && id != self {
				return id
			}
		}
	}
	return ""
}

// toolDefinitions renders an agent's tools_available as gen_ai.tool.definitions
// ([{type:"function", name, description?, parameters?}], parameters as JSON Schema with
// ReAsk flat maps converted by toolschema.Normalize). "" when the agent's tools are
// unknown (not declared, or tools_available absent); "[]" when declared empty.
func (c *converter) toolDefinitions(agentID string) string {
	if v, ok := c.toolDefs[agentID]; ok {
		return v
	}
	def := c.agents[agentID]
	out := ""
	if def != nil && def.ToolsAvailable != nil {
		type toolDef struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters,omitempty"`
		}
		defs := make([]toolDef, 0, len(def.ToolsAvailable))
		for _, t := range def.ToolsAvailable {
			td := toolDef{Type: "function", Name: t.Name}
			if t.Description != nil {
				td.Description = *t.Description
			}
			if schema, err := toolschema.Normalize(json.RawMessage(t.ParametersSchema)); err == nil {
				td.Parameters = schema
			}
			defs = append(defs, td)
		}
		b, _ := json.Marshal(defs) // plain strings and valid raw JSON: cannot fail
		out = string(b)
	}
	c.toolDefs[agentID] = out
	return out
}

func (c *converter) toolDescription(agentID, tool string) string {
	if def := c.agents[agentID]; def != nil {
		for _, t := range def.ToolsAvailable {
			if t.Name == tool && t.Description != nil {
				return *t.Description
			}
		}
	}
	return ""
}

// sameCall returns the index of the last step whose tool call is the interaction's tool
// execution (same tool, equal compacted arguments), or -1.
func sameCall(steps []Step, ter *ToolExecutionResult) int {
	want := compact(ter.Parameters)
	for i := len(steps) - 1; i >= 0; i-- {
		if tc := steps[i].ToolCall; tc != nil && tc.ToolName == ter.ToolName && bytes.Equal(compact(tc.Parameters), want) {
			return i
		}
	}
	return -1
}

type genaiMessage struct {
	Role         string `json:"role"`
	Name         string `json:"name,omitempty"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

func textPart(s string) part { return part{Type: semconv.PartText, Content: s} }

func messagesJSON(msgs ...genaiMessage) string {
	b, _ := json.Marshal(msgs) // strings and compacted valid JSON only: cannot fail
	return string(b)
}

// compact returns raw JSON without insignificant space (nil for absent or JSON null).
func compact(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil
	}
	return buf.Bytes()
}

// argumentsText renders tool arguments for gen_ai.tool.call.arguments: a JSON string value
// is the raw arguments text itself; any other value is its compact JSON. ok is false when
// no arguments were given.
func argumentsText(raw json.RawMessage) (string, bool) {
	c := compact(raw)
	if c == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s, true
	}
	return string(c), true
}

// resultText renders a tool result: strings as is, other JSON values compacted, null/absent "".
func resultText(raw json.RawMessage) string {
	s, _ := argumentsText(raw)
	return s
}

// maxLatency caps one latency_ms: larger values (or +Inf) are clamped to it so the layout
// cannot overflow.
const maxLatency = 7 * 24 * time.Hour

// ms converts float milliseconds to a duration, clamped to [0, maxLatency].
func ms(v float64) time.Duration {
	if !(v > 0) { // also NaN
		return 0
	}
	if v >= float64(maxLatency/time.Millisecond) {
		return maxLatency
	}
	return time.Duration(v * float64(time.Millisecond))
}

// traceID returns the trace id of the body's turn idx, t (Options.IDs).
func (c *converter) traceID(idx int, t *Turn) pcommon.TraceID {
	if c.ids != nil {
		return c.ids.NewTraceID()
	}
	h := sha256.New()
	h.Write([]byte(c.sessionID))
	h.Write(binary.AppendUvarint([]byte{0}, uint64(idx))) //nolint:gosec // idx >= 0
	body, err := json.Marshal(t)                          // struct fields in order; RawMessage as received
	if err != nil {
		// Unreachable for a decoded body; the turn then gets ids of its own.
		c.trace, c.traceSpans = randomIDs{}.NewTraceID(), 0
		return c.trace
	}
	h.Write(body)
	c.trace, c.traceSpans = pcommon.TraceID(h.Sum(nil)[:16]), 0
	return c.trace
}

// spanID returns the id of the next span of the current turn's trace (Options.IDs).
func (c *converter) spanID() pcommon.SpanID {
	if c.ids != nil {
		return c.ids.NewSpanID()
	}
	c.traceSpans++
	sum := sha256.Sum256(binary.AppendUvarint(c.trace[:], c.traceSpans))
	return pcommon.SpanID(sum[:8])
}

// randomIDs draws ids from crypto/rand.
type randomIDs struct{}

func (randomIDs) NewTraceID() pcommon.TraceID {
	var id pcommon.TraceID
	_, _ = rand.Read(id[:])
	return id
}

func (randomIDs) NewSpanID() pcommon.SpanID {
	var id pcommon.SpanID
	_, _ = rand.Read(id[:])
	return id
}

func (randomIDs) NewSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
