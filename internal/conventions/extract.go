// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strings"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// MaxSessionKeys is how many session keys an Extractor reads: keys are numbered in one byte
// (254 slots), and ai.telemetry.metadata.conversationId is always added after the
// configured ones, so Config.SessionKeys may hold MaxSessionKeys-1 keys.
const MaxSessionKeys = 254

// DefaultMaxTextBytes is the text cap used when Config.MaxTextBytes is not positive.
const DefaultMaxTextBytes = 32 << 10

// minParseLimit is the smallest parse budget of tool definitions, name lists and
// metadata: such a JSON value larger than max(16 × MaxTextBytes, minParseLimit) is not
// parsed (definitions are compiled, and cost far more than their bytes).
const minParseLimit = 64 << 10

// minMessageParseLimit is the smallest parse budget of message lists and content values
// (gen_ai.input/output.messages and their equivalents): one larger than
// max(16 × MaxTextBytes, minMessageParseLimit) is not parsed. A model's input list holds
// the whole conversation and its tool results (hundreds of KB with a large context
// window), and an answer may be long: below this bound they are read, in place, their
// texts then cut to MaxTextBytes, so that neither the user message nor the final response
// is lost to their size. With the 64 KiB of minParseLimit, a 70 KB answer was scored as
// an empty one (docs/decisions/conventions.md).
const minMessageParseLimit = 4 << 20

// parentIsRemote is the pair of OTLP span flags that says the span's parent context is
// remote: SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK (0x100, the flag is known) and
// SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK (0x200) of opentelemetry-proto's trace.proto.
const parentIsRemote = 0x100 | 0x200

// Config configures an Extractor.
type Config struct {
	// SessionKeys are attribute keys, in priority order, looked up on the span then on
	// the resource (docs/architecture.md §4). Nil or empty means DefaultSessionKeys().
	// ai.telemetry.metadata.conversationId is always tried after them (docs/decisions/sessions.md §1.5).
	SessionKeys []string
	// EndAttribute, e.g. "agent_eval.session.end": a bool true (or the string "true") on
	// any span is an explicit session end. Empty disables the signal.
	EndAttribute string
	// MaxTextBytes caps every text field of a SpanRecord, in bytes; text is cut at a UTF-8
	// rune boundary and Truncated is set. Zero or negative means DefaultMaxTextBytes.
	MaxTextBytes int
}

// DefaultSessionKeys returns the default session key list (docs/conventions.md):
// gen_ai.conversation.id, session.id, traceloop.association.properties.session_id,
// langfuse.session.id, ai.telemetry.metadata.sessionId, gcp.vertex.agent.session_id,
// ai.settings.context.sessionId (AI SDK 7 runtime context), mastra.metadata.sessionId
// (Mastra tracingOptions.metadata), conversation.id (VoltAgent).
func DefaultSessionKeys() []string {
	return []string{
		semconv.GenAIConversationID,
		semconv.SessionID,
		semconv.TraceloopSessionID,
		semconv.LangfuseSessionID,
		semconv.AITelemetrySessionID,
		semconv.ADKSessionID,
		semconv.AISettingsContextSessionID,
		semconv.MastraMetadataSessionID,
		semconv.VoltConversationID,
	}
}

// Extractor turns pdata spans into SpanRecords following docs/decisions/sessions.md §1.5.
// It is safe for concurrent use; it keeps a small bounded cache of parsed tool
// definitions.
type Extractor struct {
	keys        map[string]keyInfo
	sessKeys    []string // configured session keys, then the implicit ones
	resSessKeys []string // "resource:" + key, same order
	endAttr     string
	maxText     int
	parseLimit  int
	msgLimit    int // message lists and content values: minMessageParseLimit
	defs        *toolDefCache
}

// keyInfo says what an attribute key is to the extractor.
type keyInfo struct {
	id   attrKey // noKey when the key is only a session/end key
	sess uint8   // 1-based session-key priority; 0 = not a session key
	end  bool
}

// NewExtractor returns an Extractor for cfg.
func NewExtractor(cfg Config) *Extractor {
	e := &Extractor{
		keys:    make(map[string]keyInfo, len(staticKeys)+8),
		endAttr: strings.TrimSpace(cfg.EndAttribute),
		maxText: cfg.MaxTextBytes,
		defs:    newExToolDefCache(),
	}
	if e.maxText <= 0 {
		e.maxText = DefaultMaxTextBytes
	}
	e.parseLimit = max(16*e.maxText, minParseLimit)
	e.msgLimit = max(16*e.maxText, minMessageParseLimit)
	for k, id := range staticKeys {
		e.keys[k] = keyInfo{id: id}
	}
	keys := cfg.SessionKeys
	if len(keys) == 0 {
		keys = DefaultSessionKeys()
	}
	keys = append(keys[:len(keys):len(keys)], semconv.AITelemetryConvID)
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" || len(e.sessKeys) >= MaxSessionKeys {
			continue
		}
		info, ok := e.keys[k]
		if ok && info.sess != 0 {
			continue // duplicate
		}
		if !ok {
			info.id = noKey
		}
		e.sessKeys = append(e.sessKeys, k)
		e.resSessKeys = append(e.resSessKeys, "resource:"+k)
		info.sess = uint8(len(e.sessKeys))
		e.keys[k] = info
	}
	if e.endAttr != "" {
		info, ok := e.keys[e.endAttr]
		if !ok {
			info.id = noKey
		}
		info.end = true
		e.keys[e.endAttr] = info
	}
	return e
}

// attrScan holds the attribute values of one span that the extractor reads, collected in a
// single pass over the span's attributes (pcommon.Map.Get is a linear scan).
type attrScan struct {
	v        [numKeys]pcommon.Value
	has      [numKeys]bool
	sessPrio uint8
	sessKey  string
	sessVal  string
	endVal   pcommon.Value
	hasEnd   bool

	oiIn, oiOut, oiTools []flatAttr // llm.input_messages., llm.output_messages., llm.tools.
	tlIn, tlOut, tlFuncs []flatAttr // gen_ai.prompt.N., gen_ai.completion.N., llm.request.functions.
}

func (s *attrScan) str(k attrKey) string {
	if !s.has[k] {
		return ""
	}
	t, _ := valueText(s.v[k])
	return t
}

// SessionKeyRank is the priority of a session key name as SpanRecord.SessionKey holds it:
// the position of the key in the configured list (0 is the first), the keys on a span's
// attributes before the same keys on its resource ("resource:" + key); -1 for a name the
// extractor does not use. DESIGN §4: the session key is the first present of the list on
// any span of the trace, so a trace that meets a better key than the one it joined by
// moves to that key's session (tracker).
func (e *Extractor) SessionKeyRank(key string) int {
	if k, ok := strings.CutPrefix(key, "resource:"); ok {
		if i := slices.Index(e.sessKeys, k); i >= 0 {
			return len(e.sessKeys) + i
		}
		return -1
	}
	return slices.Index(e.sessKeys, key)
}

func (s *attrScan) collect(e *Extractor, attrs pcommon.Map) {
	attrs.Range(func(k string, v pcommon.Value) bool {
		if info, ok := e.keys[k]; ok {
			if info.id != noKey && !s.has[info.id] {
				s.v[info.id], s.has[info.id] = v, true
			}
			if info.sess != 0 && (s.sessPrio == 0 || info.sess < s.sessPrio) {
				if t, ok := valueText(v); ok && strings.TrimSpace(t) != "" {
					s.sessPrio, s.sessKey, s.sessVal = info.sess, k, t
				}
			}
			if info.end && !s.hasEnd {
				s.endVal, s.hasEnd = v, true
			}
			return true
		}
		s.collectIndexed(k, v)
		return true
	})
}

// collectIndexed keeps attributes under the indexed prefixes.
func (s *attrScan) collectIndexed(k string, v pcommon.Value) {
	if len(k) < 12 {
		return
	}
	switch k[0] {
	case 'l':
		switch {
		case strings.HasPrefix(k, semconv.PrefixLLMInputMessages):
			s.oiIn = appendFlat(s.oiIn, k[len(semconv.PrefixLLMInputMessages):], v)
		case strings.HasPrefix(k, semconv.PrefixLLMOutputMessages):
			s.oiOut = appendFlat(s.oiOut, k[len(semconv.PrefixLLMOutputMessages):], v)
		case strings.HasPrefix(k, semconv.PrefixLLMTools):
			if strings.HasSuffix(k, "."+semconv.SuffixToolJSONSchema) {
				s.oiTools = appendFlat(s.oiTools, k[len(semconv.PrefixLLMTools):], v)
			}
		case strings.HasPrefix(k, semconv.PrefixLLMRequestFunctions):
			s.tlFuncs = appendFlat(s.tlFuncs, k[len(semconv.PrefixLLMRequestFunctions):], v)
		}
	case 'g':
		switch {
		case strings.HasPrefix(k, semconv.PrefixGenAIPrompt) && isDigit(k, len(semconv.PrefixGenAIPrompt)):
			s.tlIn = appendFlat(s.tlIn, k[len(semconv.PrefixGenAIPrompt):], v)
		case strings.HasPrefix(k, semconv.PrefixGenAICompletion) && isDigit(k, len(semconv.PrefixGenAICompletion)):
			s.tlOut = appendFlat(s.tlOut, k[len(semconv.PrefixGenAICompletion):], v)
		}
	}
}

// maxFlatAttrs bounds how many indexed attributes of one family are kept.
const maxFlatAttrs = 4096

func appendFlat(dst []flatAttr, rest string, v pcommon.Value) []flatAttr {
	if len(dst) >= maxFlatAttrs {
		return dst
	}
	if dst == nil {
		dst = make([]flatAttr, 0, 16)
	}
	return append(dst, flatAttr{rest: rest, v: v})
}

func isDigit(s string, i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }

// Extract returns the SpanRecord of one span (docs/decisions/sessions.md §1.5). It never panics and
// never fails: values it cannot read are noted in Problems and the rest is used. Every
// text field is valid UTF-8 and at most MaxTextBytes long. Text fields may share memory
// with the span's attribute values (a name, a cut argument string, the user message
// inside a JSON message list): whoever keeps records after the batch is released copies
// them, as the Tracker does (it retains its own compact copy, tracker_recs.go).
func (e *Extractor) Extract(res pcommon.Resource, scope pcommon.InstrumentationScope, span ptrace.Span) (r session.SpanRecord) {
	e.ExtractInto(&r, res, scope, span)
	return r
}

// ExtractInto is Extract writing the record into *r (which it overwrites entirely), so that
// a caller can extract into a reused buffer without copying the record.
func (e *Extractor) ExtractInto(r *session.SpanRecord, res pcommon.Resource, scope pcommon.InstrumentationScope, span ptrace.Span) {
	e.extract(r, res, scope, span, false, nil)
}

// extract is ExtractInto; with lazy, the input message list of a span whose user
// message comes from it alone is left raw in r.Deferred (ExtractDeferred). The ids are
// formatted into ids (IDBuffer.hexIDs; nil: an allocation of their own).
func (e *Extractor) extract(r *session.SpanRecord, res pcommon.Resource, scope pcommon.InstrumentationScope, span ptrace.Span, lazy bool, ids *IDBuffer) {
	*r = session.SpanRecord{}
	defer func() {
		if p := recover(); p != nil {
			addProblem(r, "extract", "internal error")
		}
	}()
	r.TraceID, r.SpanID, r.ParentSpanID = ids.hexIDs(span.TraceID(), span.SpanID(), span.ParentSpanID())
	r.ParentRemote = r.ParentSpanID != "" && span.Flags()&parentIsRemote == parentIsRemote
	r.Name = e.text(r, span.Name())
	r.StartUnixNano = int64(span.StartTimestamp()) //nolint:gosec // ns since epoch fit in int64 until 2262
	r.EndUnixNano = int64(span.EndTimestamp())     //nolint:gosec

	var s attrScan
	s.collect(e, span.Attributes())

	// Session, service, end signal, outcome.
	if s.sessPrio != 0 {
		if p := SessionIDProblem(s.sessVal, min(MaxSessionIDBytes, e.maxText)); p != "" {
			addProblem(r, s.sessKey, p+"; ignored")
		} else {
			r.SessionID, r.SessionKey = s.sessVal, s.sessKey
		}
	}
	resAttrs := res.Attributes()
	if r.SessionID == "" && resAttrs.Len() > 0 {
		for i, k := range e.sessKeys {
			if v, ok := resAttrs.Get(k); ok {
				if t, ok := valueText(v); ok && strings.TrimSpace(t) != "" {
					if p := SessionIDProblem(t, min(MaxSessionIDBytes, e.maxText)); p != "" {
						addProblem(r, e.resSessKeys[i], p+"; ignored")
						continue
					}
					r.SessionID, r.SessionKey = t, e.resSessKeys[i]
					break
				}
			}
		}
	}
	if v, ok := resAttrs.Get(semconv.ServiceName); ok {
		t, _ := valueText(v)
		r.Service = e.text(r, t)
	}
	if s.hasEnd {
		r.EndSignal, _ = valueBool(s.endVal)
	}
	if s.has[attrTaskCompleted] {
		if b, ok := valueBool(s.v[attrTaskCompleted]); ok {
			r.Outcome = &b
		} else {
			addProblem(r, semconv.AgentEvalTaskCompleted, "not a boolean")
		}
	}

	// Error.
	if span.Status().Code() == ptrace.StatusCodeError {
		r.Error, r.ErrorMessage = true, e.text(r, span.Status().Message())
	}
	if t := s.str(attrErrorType); t != "" {
		r.Error, r.ErrorType = true, e.text(r, t)
	}
	if strings.EqualFold(s.str(attrToolStatus), "error") {
		r.Error = true
	}

	// Classification and the fields of each class.
	cls := e.classify(&s, r, scope.Name())
	r.GraphNodeID = e.text(r, s.str(attrGraphNodeID))
	r.GraphParentID = e.text(r, s.str(attrGraphParentID))
	if m := cmp.Or(s.str(attrRespModel), s.str(attrReqModel), s.str(attrOIModel), s.str(attrAIRespModel), s.str(attrAIModelID), s.str(attrVoltLLMModel)); m != "" {
		r.Model = e.text(r, m)
	}

	events := span.Events()
	// VoltAgent's content is read after the messages and may replace the user message:
	// it is never deferred.
	lazy = lazy && !cls.volt
	switch r.Class {
	case session.ClassAgent:
		e.agentFields(&s, r)
		e.agentUsage(&s, r)
		e.content(&s, events, r, lazy)
		e.toolDefs(&s, events, r)
	case session.ClassTurn:
		e.content(&s, events, r, lazy)
	case session.ClassLLM:
		e.usage(&s, r)
		e.content(&s, events, r, lazy)
		e.toolDefs(&s, events, r)
	case session.ClassTool:
		e.toolFields(&s, events, r, cls)
		if cls.volt {
			e.voltToolFields(&s, r)
		}
	case session.ClassHandoff:
		e.handoffFields(&s, r, cls)
	case session.ClassOther:
		if cls.adkCallLLM {
			// Its usage counts only when no inference span is under it (ADK for
			// TypeScript, assembly's promoteLoneCallLLM).
			e.usage(&s, r)
			e.content(&s, events, r, false)
			e.toolDefs(&s, events, r)
		}
	}
	if (r.Class == session.ClassLLM || r.Class == session.ClassAgent) && events.Len() > 0 {
		e.decisionEvents(events, r)
	}
	if cls.volt && (r.Class == session.ClassAgent || r.Class == session.ClassLLM) {
		e.voltContent(&s, r)
	}
	if cls.volt && r.Class == session.ClassOther && r.Name == semconv.VoltSpanMemoryWrite {
		e.voltSavedCalls(&s, r)
	}
	if r.Error && r.ErrorType == "" {
		e.exceptionType(events, r)
	}
	// LangGraph steers the graph with exceptions (a handoff ends its node spans with
	// ParentCommand): such a span did not fail.
	if r.Error && controlFlowError(r, span.Status().Message(), events) {
		r.Error, r.ErrorType, r.ErrorMessage = false, "", ""
	}
}

// idBytes is the size of a span's three ids in hex.
const idBytes = 2 * (len(pcommon.TraceID{}) + 2*len(pcommon.SpanID{}))

// appendHexIDs appends the ids to buf and returns it with them as views of its array:
// those bytes must not be written again.
func appendHexIDs(buf []byte, tid pcommon.TraceID, sid, pid pcommon.SpanID) (out []byte, traceID, spanID, parentID string) {
	start := len(buf)
	if !tid.IsEmpty() {
		buf = hex.AppendEncode(buf, tid[:])
	}
	t := len(buf)
	if !sid.IsEmpty() {
		buf = hex.AppendEncode(buf, sid[:])
	}
	sp := len(buf)
	if !pid.IsEmpty() {
		buf = hex.AppendEncode(buf, pid[:])
	}
	all := unsafe.String(unsafe.SliceData(buf[start:]), len(buf)-start) // not written again
	return buf, all[:t-start], all[t-start : sp-start], all[sp-start:]
}

// IDBuffer holds the hex ids of a batch's records (SpanRecord.TraceID, SpanID,
// ParentSpanID) in a few shared allocations instead of one a span
// (ExtractDeferred). A record's ids are views of it: whoever keeps an id after the
// batch is released copies it, as the Tracker does. Not safe for concurrent use; the
// zero value is ready.
type IDBuffer struct {
	buf []byte
}

// Grow makes room for the ids of n more spans, at most idChunk of them in one allocation.
func (b *IDBuffer) Grow(n int) {
	if cap(b.buf)-len(b.buf) < n*idBytes {
		// A new array: the ids already handed out stay where they are.
		b.buf = make([]byte, 0, min(n, idChunk)*idBytes)
	}
}

// idChunk bounds the spans an IDBuffer allocation holds: 32 KiB, the largest size class
// of Go's allocator (a larger allocation is rounded up to whole pages), and what a
// batch of the OTLP SDKs' default size (512 spans) needs. Past it, an allocation holds
// idGrowth spans.
const (
	idChunk  = 512
	idGrowth = 64
)

// hexIDs returns the ids as pcommon's String methods do (lower-case hex, "" for an
// empty id), formatted into b, or into one allocation of their own when b is nil.
func (b *IDBuffer) hexIDs(tid pcommon.TraceID, sid, pid pcommon.SpanID) (traceID, spanID, parentID string) {
	if tid.IsEmpty() && sid.IsEmpty() && pid.IsEmpty() {
		return "", "", ""
	}
	if b == nil {
		_, traceID, spanID, parentID = appendHexIDs(make([]byte, 0, idBytes), tid, sid, pid)
		return traceID, spanID, parentID
	}
	if cap(b.buf)-len(b.buf) < idBytes {
		b.Grow(idGrowth)
	}
	// Appending then never moves the ids handed out before.
	b.buf, traceID, spanID, parentID = appendHexIDs(b.buf, tid, sid, pid)
	return traceID, spanID, parentID
}

// text caps and sanitises one text value for r.
func (e *Extractor) text(r *session.SpanRecord, s string) string {
	out, cut := cleanText(s, e.maxText)
	if cut {
		r.Truncated = true
	}
	return out
}

// exceptionType takes error.type from the first "exception" event's exception.type.
func (e *Extractor) exceptionType(events ptrace.SpanEventSlice, r *session.SpanRecord) {
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		if ev.Name() != semconv.EventException {
			continue
		}
		if v, ok := ev.Attributes().Get(semconv.ExceptionType); ok {
			t, _ := valueText(v)
			r.ErrorType = e.text(r, t)
			return
		}
	}
}

// agentFields fills the agent-span fields other than the name (set by classify).
func (e *Extractor) agentFields(s *attrScan, r *session.SpanRecord) {
	if d := s.str(attrAgentDesc); !defaultAgentDescription(d) {
		r.AgentDescription = e.text(r, d)
	}
	if s.has[attrAgentTools] {
		r.AllowedTools = e.nameList(s.v[attrAgentTools], semconv.GenAIAgentTools, r)
	}
	if s.has[attrOAHandoffs] {
		r.HandoffTargets = e.nameList(s.v[attrOAHandoffs], semconv.OpenAIAgentHandoffs, r)
	}
	// OpenLLMetry marks the agent that received a handoff with its parent agent.
	if p := s.str(attrHandoffParent); p != "" {
		r.HandoffFrom, r.HandoffTo = e.text(r, p), r.AgentName
		r.HandoffMode, r.HandoffRule = semconv.TransferModePassControl, semconv.GenAIAgentHandoffParent
	}
	// A remote agent's invoke_agent CLIENT span names the agent that called it
	// (semantic-conventions-genai main): the caller gets the answer back.
	if c := strings.TrimSpace(s.str(attrCallerName)); c != "" && r.HandoffFrom == "" && c != r.AgentName {
		if t := s.str(attrCallerType); t == "" || strings.EqualFold(t, semconv.CallerTypeAgent) {
			r.HandoffFrom, r.HandoffTo = e.text(r, c), r.AgentName
			r.HandoffMode, r.HandoffRule = semconv.TransferModeReturn, semconv.GenAICallerName
		}
	}
}

// defaultAgentDescription reports placeholder descriptions that instrumentations write
// on every span: the python-contrib openai-agents-v2 "OpenAI Agents instrumentation".
func defaultAgentDescription(d string) bool {
	return d == "OpenAI Agents instrumentation"
}

// nameList reads a list of names from a string-array attribute or a JSON list.
func (e *Extractor) nameList(v pcommon.Value, key string, r *session.SpanRecord) []string {
	if v.Type() == pcommon.ValueTypeSlice {
		sl := v.Slice()
		if sl.Len() > 0 && sl.At(0).Type() == pcommon.ValueTypeStr {
			out := make([]string, 0, min(sl.Len(), MaxList))
			for i := 0; i < sl.Len() && len(out) < MaxList; i++ {
				if t := strings.TrimSpace(sl.At(i).Str()); t != "" {
					out = append(out, e.text(r, t))
				}
			}
			return out
		}
	}
	data, ok := jsonBytes(v, e.parseLimit)
	if !ok {
		addProblem(r, key, "value too large, not parsed")
		return nil
	}
	names, ok := parseNameList(data, e.maxText)
	if !ok {
		addProblem(r, key, "not a JSON list of names")
	}
	return names
}

// usage fills token usage and cost of an inference span. Agent spans are never counted:
// they carry accumulated totals (docs/decisions/conventions.md).
func (e *Extractor) usage(s *attrScan, r *session.SpanRecord) {
	r.Usage.LLMCalls = 1
	r.Usage.InputTokens = e.firstInt(s, r, attrInTok, attrPromptTok, attrOIPromptTok, attrAIInTok, attrAIPromptTok, attrVoltPromptTok)
	r.Usage.OutputTokens = e.firstInt(s, r, attrOutTok, attrComplTok, attrOIComplTok, attrAIOutTok, attrAIComplTok, attrVoltComplTok)
	r.Usage.CacheReadTokens = e.firstInt(s, r, attrCacheRead, attrCacheReadAlt, attrOICacheRead, attrAICached)
	r.Usage.ReasoningTokens = e.firstInt(s, r, attrReasoning, attrReasoningAlt, attrOIReasoning, attrAIReasoning)
	for _, k := range [...]attrKey{attrOICost, attrOpCost} {
		if s.has[k] {
			if f, ok := valueFloat(s.v[k]); ok {
				r.Cost = &f
				break
			}
			addProblem(r, keyNames[k], "not a number")
		}
	}
}

// agentUsage reads the token counts an agent span carries. They are the
// instrumentation's totals over the agent's model calls, so they count only for a turn
// that has no LLM span at all (the Claude Agent SDK through OpenInference: the query
// span is the only one with usage; docs/decisions/conventions.md §8). LLMCalls stays 0:
// how many calls made the totals is not recorded.
func (e *Extractor) agentUsage(s *attrScan, r *session.SpanRecord) {
	e.usage(s, r)
	r.Usage.LLMCalls = 0
	r.Cost = nil
}

func (e *Extractor) firstInt(s *attrScan, r *session.SpanRecord, keys ...attrKey) int64 {
	for _, k := range keys {
		if !s.has[k] {
			continue
		}
		if n, ok := valueInt(s.v[k]); ok {
			return n
		}
		addProblem(r, keyNames[k], "not a token count")
	}
	return 0
}

// decisionEvents reads the pre-execution gen_ai.tool.call.decision events of a model or
// agent span: a call whose outcome is deny was requested and never ran, so it is added to
// the span's requested calls when the output messages did not already list it (matched
// by call id, else by name). Its arguments are unknown.
func (e *Extractor) decisionEvents(events ptrace.SpanEventSlice, r *session.SpanRecord) {
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		if ev.Name() != semconv.EventToolCallDecision {
			continue
		}
		attrs := ev.Attributes()
		outcome, _ := attrs.Get(semconv.GenAIToolCallDecisionOutcome)
		if !strings.EqualFold(outcome.Str(), semconv.ToolCallDecisionDeny) {
			continue
		}
		name, _ := attrs.Get(semconv.GenAIToolName)
		id, _ := attrs.Get(semconv.GenAIToolCallID)
		call := session.RequestedToolCall{ID: e.text(r, strings.TrimSpace(id.Str())), Name: e.text(r, strings.TrimSpace(name.Str()))}
		if call.Name == "" || len(r.RequestedCalls) >= MaxList {
			continue
		}
		if !slices.ContainsFunc(r.RequestedCalls, func(c session.RequestedToolCall) bool {
			return (call.ID != "" && c.ID == call.ID) || (call.ID == "" && c.Name == call.Name)
		}) {
			r.RequestedCalls = append(r.RequestedCalls, call)
		}
	}
}
