// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
	"github.com/agenteval/agenteval-collector/internal/toolschema"
)

// Not-evaluable reasons of a tool call (ToolCallResult.NotEvaluable).
const (
	ReasonToolsUnknown         = "tools_unknown"
	ReasonSchemaUnknown        = "schema_unknown"
	ReasonSchemaInvalid        = "schema_invalid"
	ReasonArgumentsNotCaptured = "arguments_not_captured"
	ReasonArgumentsTruncated   = "arguments_truncated"
)

// ReasonContentNotCaptured is the not-evaluable reason of a turn (TurnResult.NotEvaluable)
// whose text was not captured at all (no user message, response, agent input or output,
// tool result): its verdict (RDM, CCM, hallucination) and intent drift cannot be judged.
// Instrumentations leave content out unless told to capture it (README, "Point your app
// at it").
const ReasonContentNotCaptured = "content_not_captured"

// ReasonCutByCollector is the not-evaluable reason of a turn the collector closed early
// for a limit or a shutdown (session.Turn.CutBy): its answer was not seen, so it is not
// judged (no detection, no follow-up verdict, and its final responder's empty output is
// no failure).
const ReasonCutByCollector = "cut_by_collector"

// maxErrorText caps a tool error quoted in an issue message.
const maxErrorText = 160

func agentIDOf(a *session.AgentDefinition) string {
	if a == nil {
		return ""
	}
	return a.ID
}

func sessionAgentSet(s *session.AgentSession) map[string]bool {
	m := map[string]bool{}
	addSessionAgents(m, s)
	return m
}

// addSessionAgents adds to m the keys sessionAgentSet gives.
func addSessionAgents(m map[string]bool, s *session.AgentSession) {
	if s == nil {
		return
	}
	for _, a := range s.Agents {
		m[session.AgentKey(a.ID)] = true
		if a.Name != "" {
			m[session.AgentKey(a.Name)] = true
		}
	}
	for _, t := range s.Turns {
		for _, in := range t.Interactions {
			m[session.AgentKey(in.AgentID)] = true
		}
	}
}

// notEvaluableExplanation explains a call that no check could run on. With one reason,
// the common case, it is one of a few constant strings: the result keeps no string of
// its own (a turn's results are held until its session ends).
func notEvaluableExplanation(reasons []string) string {
	if len(reasons) == 1 {
		if s, ok := notEvaluableOne[reasons[0]]; ok {
			return s
		}
	}
	return "not evaluable (" + strings.Join(reasons, ", ") + notEvaluableTail
}

const notEvaluableTail = "): neither the authorisation nor the parameters could be checked"

var notEvaluableOne = func() map[string]string {
	m := map[string]string{}
	for _, r := range []string{ReasonToolsUnknown, ReasonSchemaUnknown, ReasonSchemaInvalid, ReasonArgumentsNotCaptured, ReasonArgumentsTruncated} {
		m[r] = "not evaluable (" + r + notEvaluableTail
	}
	return m
}()

// ExplanationAllChecksPassed is the explanation of a call whose authorisation,
// arguments and parameters were checked without an issue (most calls; the evaluation
// spans leave it out as their default, internal/evalspan).
const ExplanationAllChecksPassed = "checked authorisation, arguments, parameters; no issue; score 1"

// validateCall validates call made by agentID, whose definition agent may be nil.
func (e *Evaluator) validateCall(agentID string, agent *session.AgentDefinition, call *session.ToolCall, turnIndex int, sessionAgents map[string]bool, ac *argCache) ToolCallResult {
	r := ToolCallResult{
		ToolName:  call.ToolName,
		CallID:    call.CallID,
		SpanID:    call.SpanID,
		AgentID:   agentID,
		Executed:  call.Executed,
		Status:    call.Status,
		LatencyMs: call.LatencyMs,
		Issues:    []ToolIssue{},
	}
	add := func(issue IssueType, sev Severity, param, detail string) {
		r.Issues = append(r.Issues, ToolIssue{
			TurnIndex: turnIndex, AgentID: agentID, ToolName: call.ToolName, Issue: issue,
			Severity: sev, Parameter: param, SpanID: call.SpanID, Executed: call.Executed,
			Message: agentLabel(agentID) + ": " + detail,
		})
	}
	checks := make([]string, 0, 3) // the checks that ran, for the explanation
	handoffTo := ""                // the first check is "authorisation (handoff to handoffTo)"
	authorised, paramsChecked := false, false

	// 1. Authorisation.
	var def *session.ToolDefinition
	if agent != nil {
		def = agent.Tool(call.ToolName)
	}
	if agent == nil || agent.ToolsSource == "" {
		r.NotEvaluable = append(r.NotEvaluable, ReasonToolsUnknown)
	} else {
		authorised = true
		checks = append(checks, "authorisation")
		if def == nil {
			if target, ok := ac.handoffTarget(call); ok && handoffAllowed(agent, target, sessionAgents) {
				handoffTo = target
			} else {
				add(IssueUnauthorizedTool, SeverityHigh, "", unauthorizedDetail(call.ToolName, agent))
			}
		}
	}

	// 2. Argument shape, 3. parameters against the schema.
	d := ac.get(call)
	args, reason, malformed := d.args, d.reason, d.malformed
	switch {
	case reason != "":
		r.NotEvaluable = append(r.NotEvaluable, reason)
	case malformed != "":
		checks = append(checks, "arguments")
		add(IssueMalformedArguments, SeverityHigh, "", call.ToolName+" arguments are not a JSON object (got "+malformed+")")
	default:
		checks = append(checks, "arguments")
		switch {
		case agent == nil || agent.ToolsSource == "" && def == nil:
			// tools_unknown already listed: no schema can be known either.
		case def == nil || len(bytes.TrimSpace(def.Parameters)) == 0 || string(bytes.TrimSpace(def.Parameters)) == "null":
			r.NotEvaluable = append(r.NotEvaluable, ReasonSchemaUnknown)
		default:
			si := ac.schema(e.schemas, bytes.TrimSpace(def.Parameters))
			if si.Err() != nil {
				r.NotEvaluable = append(r.NotEvaluable, ReasonSchemaInvalid)
				break
			}
			paramsChecked = true
			checks = append(checks, "parameters")
			for _, f := range e.checkParameters(si, args) {
				switch f.issue {
				case IssueParameterHallucination:
					add(f.issue, SeverityMedium, f.parameter, call.ToolName+" got unknown parameter '"+f.parameter+"'")
				case IssueMissingRequiredParam:
					add(f.issue, SeverityMedium, f.parameter, call.ToolName+" is missing required parameter '"+f.parameter+"'")
				default:
					if f.parameter == "" {
						add(f.issue, SeverityLow, "", call.ToolName+" arguments violate the schema: "+f.detail)
					} else {
						add(f.issue, SeverityLow, f.parameter, call.ToolName+" got an invalid value for '"+f.parameter+"': "+f.detail)
					}
				}
			}
		}
	}

	// 4. Execution outcome.
	if call.Status == session.StatusError || call.Error != "" {
		msg := call.ToolName + " failed"
		if call.Error != "" {
			msg += ": " + text.Truncate(oneLine(call.Error), maxErrorText)
		}
		add(IssueToolError, SeverityLow, "", msg)
	}

	evaluable := authorised || paramsChecked || malformed != ""
	penalty := 0.0
	for _, is := range r.Issues {
		penalty += e.cfg.Penalty(is.Severity)
	}
	switch {
	case !evaluable:
		r.Verdict = VerdictNotEvaluable
		r.Explanation = notEvaluableExplanation(r.NotEvaluable)
		if len(r.Issues) > 0 {
			r.Explanation += fmt.Sprintf("; %d issue(s) recorded without a score", len(r.Issues))
		}
	default:
		r.Score = ptr(clamp01(1 - penalty))
		if len(r.Issues) == 0 {
			r.Verdict = VerdictValid
		} else {
			r.Verdict = VerdictInvalid
		}
		if len(r.Issues) == 0 && len(r.NotEvaluable) == 0 && len(checks) == 3 && handoffTo == "" {
			// Most calls: every check ran and found nothing.
			r.Explanation = ExplanationAllChecksPassed
			break
		}
		var b strings.Builder
		b.Grow(64 + 40*len(r.Issues)) // "checked authorisation, arguments, parameters; no issue; score 1"
		b.WriteString("checked ")
		for i, check := range checks {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(check)
			if i == 0 && handoffTo != "" {
				b.WriteString(" (handoff to ")
				b.WriteString(handoffTo)
				b.WriteString(")")
			}
		}
		if len(r.Issues) == 0 {
			b.WriteString("; no issue; score 1")
		} else {
			b.WriteString("; score = max(0, 1 − (")
			for i, is := range r.Issues {
				if i > 0 {
					b.WriteString(" + ")
				}
				b.WriteString(num(e.cfg.Penalty(is.Severity)))
				b.WriteString(" ")
				b.WriteString(string(is.Issue))
			}
			b.WriteString(")) = ")
			b.WriteString(num(*r.Score))
		}
		if len(r.NotEvaluable) > 0 {
			b.WriteString("; not checked: ")
			b.WriteString(strings.Join(r.NotEvaluable, ", "))
		}
		r.Explanation = b.String()
	}
	return r
}

// checkParameters runs the key checks (when the schema declares its keys) and then
// the value validation, never reporting one parameter twice.
func (e *Evaluator) checkParameters(si *toolschema.Schema, args map[string]any) []schemaFinding {
	var out []schemaFinding
	var reported map[string]bool // made at the first finding
	report := func(f schemaFinding) {
		if reported == nil {
			reported = map[string]bool{}
		}
		reported[f.parameter] = true
		out = append(out, f)
	}
	if si.Keyed() {
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !si.Known(k) {
				report(schemaFinding{issue: IssueParameterHallucination, parameter: k})
			}
		}
		for _, k := range si.Required() {
			if _, ok := args[k]; !ok && !reported[k] {
				report(schemaFinding{issue: IssueMissingRequiredParam, parameter: k})
			}
		}
	}
	// reported is nil when the key checks found nothing (most calls): Validate makes its
	// own set only for arguments it finds invalid.
	for _, v := range si.Validate(args, reported) {
		out = append(out, schemaFinding{issue: violationIssue[v.Kind], parameter: v.Parameter, detail: v.Detail})
	}
	return out
}

// schemaFinding is one parameter fault: the key checks' or the validator's.
type schemaFinding struct {
	issue     IssueType
	parameter string
	detail    string
}

// violationIssue maps the validator's violation kinds to issue types.
var violationIssue = [...]IssueType{
	toolschema.InvalidValue:    IssueInvalidParamValue,
	toolschema.MissingRequired: IssueMissingRequiredParam,
	toolschema.Unexpected:      IssueParameterHallucination,
}

// decodeArguments returns the call's arguments as an object, or the not-evaluable
// reason, or the JSON kind of malformed arguments. JSON null and an empty string count
// as no arguments ({}); a JSON string holding a JSON object (double-encoded) is decoded.
func decodeArguments(call *session.ToolCall) (args map[string]any, reason, malformed string) {
	raw := bytes.TrimSpace(call.Parameters)
	if len(raw) == 0 {
		return nil, ReasonArgumentsNotCaptured, ""
	}
	if call.ArgumentsTruncated {
		return nil, ReasonArgumentsTruncated, ""
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, "", "invalid JSON"
	}
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if t == "" {
			return map[string]any{}, "", ""
		}
		if inner, err := decodeJSON([]byte(t)); err == nil {
			if m, ok := inner.(map[string]any); ok {
				return m, "", ""
			}
		}
		return nil, "", "string"
	}
	switch v := v.(type) {
	case nil:
		return map[string]any{}, "", ""
	case map[string]any:
		return v, "", ""
	default:
		return nil, "", toolschema.JSONKind(v)
	}
}

// decodeJSON decodes one JSON value; numbers become float64.
func decodeJSON(b []byte) (any, error) {
	var v any
	err := json.Unmarshal(b, &v)
	if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
		// Valid JSON with a number no float64 holds ({"n": 1e400}): read its numbers as
		// written (json.Number, which the schema validator reads), rather than report
		// well-formed arguments as malformed.
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		v = nil
		if err = d.Decode(&v); err == nil && d.More() {
			err = errors.New("data after the JSON value")
		}
	}
	return v, err
}

// argCache memoises, for one session evaluation, the decoded arguments of the calls
// and the schemas looked up. A nil *argCache decodes and looks up every time.
type argCache struct {
	args    map[*session.ToolCall]*decodedArgs
	schemas map[string]*toolschema.Schema
	slab    []decodedArgs // the entries, allocated 16 at a time
}

// newArgCache makes the memo of an evaluation of about calls tool calls.
func newArgCache(calls int) *argCache {
	return &argCache{args: make(map[*session.ToolCall]*decodedArgs, calls), schemas: map[string]*toolschema.Schema{}}
}

type decodedArgs struct {
	args              map[string]any
	reason, malformed string
	canonical         *string
	// target and isHandoff are handoffTarget's answer once targetDone.
	target                string
	isHandoff, targetDone bool
}

// schema returns the compiled schema, from the memo or the Evaluator's LRU.
func (ac *argCache) schema(sc *toolschema.Cache, raw json.RawMessage) *toolschema.Schema {
	if ac == nil {
		return sc.Get(raw)
	}
	if si, ok := ac.schemas[string(raw)]; ok {
		return si
	}
	si := sc.Get(raw)
	ac.schemas[string(raw)] = si
	return si
}

func (ac *argCache) get(call *session.ToolCall) *decodedArgs {
	if ac != nil {
		if d, ok := ac.args[call]; ok {
			return d
		}
	}
	var d *decodedArgs
	if ac != nil {
		if len(ac.slab) == cap(ac.slab) {
			ac.slab = make([]decodedArgs, 0, 16) // a full slab is left to its entries
		}
		ac.slab = append(ac.slab, decodedArgs{})
		d = &ac.slab[len(ac.slab)-1]
		ac.args[call] = d
	} else {
		d = &decodedArgs{}
	}
	d.args, d.reason, d.malformed = decodeArguments(call)
	return d
}

// canonical renders captured object arguments with sorted keys, for duplicate
// detection; ok=false when they are not captured, truncated or not an object.
func (ac *argCache) canonical(call *session.ToolCall) (string, bool) {
	d := ac.get(call)
	if d.args == nil {
		return "", false
	}
	if d.canonical == nil {
		b, err := json.Marshal(d.args)
		if err != nil {
			return "", false
		}
		c := string(b)
		d.canonical = &c
	}
	return *d.canonical, true
}

func unauthorizedDetail(tool string, agent *session.AgentDefinition) string {
	names := make([]string, 0, len(agent.Tools))
	for _, t := range agent.Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return "called " + tool + ", which is not in its tools_available [" + strings.Join(names, ", ") + "]"
}

func agentLabel(id string) string {
	if id == "" {
		return "(unknown agent)"
	}
	return id
}

// Handoff tools (docs/decisions/sessions.md §1.5 (d)): generic ones name the target in their
// arguments, the others in their name.
var (
	genericHandoffTools = map[string]bool{
		"transfer_to_agent": true, "handoff_to_agent": true,
		"delegate_work_to_coworker": true, "ask_question_to_coworker": true,
	}
	handoffPrefixes = []string{"transfer_back_to_", "transfer_to_", "handoff_to_"}
	handoffArgKeys  = []string{"agent_name", "agent", "coworker", "target", "to_agent"}
)

// handoffTarget returns the agent a handoff tool call transfers to, when the call is a
// handoff tool (IsHandoff, or a name of docs/decisions/sessions.md §1.5 (d)) and its target can be
// read from the arguments or the name.
func (ac *argCache) handoffTarget(call *session.ToolCall) (string, bool) {
	if ac == nil {
		return handoffTargetOf(call, ac)
	}
	// Memoised per call: the handoff context asks it of every earlier call at each handoff.
	d := ac.get(call)
	if !d.targetDone {
		d.target, d.isHandoff = handoffTargetOf(call, ac)
		d.targetDone = true
	}
	return d.target, d.isHandoff
}

func handoffTargetOf(call *session.ToolCall, ac *argCache) (string, bool) {
	name := session.AgentKey(call.ToolName)
	if genericHandoffTools[name] || call.IsHandoff {
		if args := ac.get(call).args; args != nil {
			for _, k := range handoffArgKeys {
				if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
					return strings.TrimSpace(v), true
				}
			}
		}
	}
	for _, p := range handoffPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) && !genericHandoffTools[name] {
			return name[len(p):], true
		}
	}
	return "", false
}

func handoffAllowed(agent *session.AgentDefinition, target string, sessionAgents map[string]bool) bool {
	t := session.AgentKey(target)
	for _, h := range agent.HandoffTargets {
		if session.AgentKey(h) == t {
			return true
		}
	}
	return sessionAgents[t]
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
