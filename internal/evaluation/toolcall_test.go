// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/toolschema"
)

func newEval(t testing.TB) *Evaluator {
	t.Helper()
	e, err := New(DefaultConfig())
	require.NoError(t, err)
	return e
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// executorDef is the executor of the ReAsk plan's refund example with JSON Schemas.
func executorDef() *session.AgentDefinition {
	return &session.AgentDefinition{
		ID: "executor", ToolsSource: "config", HandoffTargets: []string{"reviewer"},
		Tools: []session.ToolDefinition{
			{Name: "lookup_order", Parameters: schema(`{"type":"object","properties":{"order_id":{"type":"string","pattern":"^[0-9]+$"}},"required":["order_id"],"additionalProperties":false}`)},
			{Name: "issue_refund", Parameters: schema(`{"type":"object","properties":{"order_id":{"type":"string"},"amount":{"type":"number","minimum":0},"currency":{"type":"string","enum":["USD","EUR"]}},"required":["order_id","amount"]}`)},
			{Name: "send_email", Parameters: schema(`{"type":"object","properties":{"to":{"type":"string","format":"email"},"body":{"type":"string"}},"required":["to","body"]}`)},
			{Name: "search", Parameters: schema(`{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":true}`)},
			{Name: "update_address", Parameters: schema(`{"type":"object","properties":{"address":{"type":"object","properties":{"zip":{"type":"string"}},"required":["zip"]}},"required":["address"]}`)},
			{Name: "by_ref", Parameters: schema(`{"$ref":"#/definitions/A","definitions":{"A":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}}`)},
			{Name: "broken", Parameters: schema(`{"type": 12}`)},
			{Name: "external_ref", Parameters: schema(`{"$ref":"file:///etc/hostname"}`)},
			{Name: "draft2020", Parameters: schema(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
			{Name: "no_schema"},
			{Name: "any_object", Parameters: schema(`{"type":"object"}`)},
		},
	}
}

// issueKeys renders issues as "TYPE/param" for compact comparisons.
func issueKeys(is []ToolIssue) []string {
	out := []string{}
	for _, i := range is {
		k := string(i.Issue)
		if i.Parameter != "" {
			k += "/" + i.Parameter
		}
		out = append(out, k)
	}
	return out
}

func call(name, params string) *session.ToolCall {
	c := &session.ToolCall{ToolName: name, Status: "ok", Executed: true, Requested: true, SpanID: "span-" + name}
	if params != "" {
		c.Parameters = json.RawMessage(params)
	}
	return c
}

func TestValidateToolCall(t *testing.T) {
	unknownTools := &session.AgentDefinition{ID: "ghost"}
	mod := func(c *session.ToolCall, f func(*session.ToolCall)) *session.ToolCall { f(c); return c }
	tests := []struct {
		name         string
		agent        *session.AgentDefinition
		call         *session.ToolCall
		score        *float64
		verdict      string
		issues       []string
		notEvaluable []string
	}{
		{"valid call", executorDef(), call("issue_refund", `{"order_id":"12345","amount":49.99}`), ptr(1), VerdictValid, []string{}, nil},
		{"unauthorized tool (seed)", executorDef(), call("delete_database", `{"confirm":true}`), ptr(0), VerdictInvalid,
			[]string{"UNAUTHORIZED_TOOL"}, []string{ReasonSchemaUnknown}},
		{"parameter hallucination (seed)", executorDef(), call("issue_refund", `{"order_id":"12345","amount":49.99,"reason":"late"}`), ptr(0.5), VerdictInvalid,
			[]string{"PARAMETER_HALLUCINATION/reason"}, nil},
		{"missing required param (seed)", executorDef(), call("issue_refund", `{"order_id":"12345"}`), ptr(0.5), VerdictInvalid,
			[]string{"MISSING_REQUIRED_PARAM/amount"}, nil},
		{"hallucinated and missing", executorDef(), call("issue_refund", `{"order":"12345","amount":1}`), ptr(0), VerdictInvalid,
			[]string{"PARAMETER_HALLUCINATION/order", "MISSING_REQUIRED_PARAM/order_id"}, nil},
		{"two hallucinated and one missing floor at 0", executorDef(), call("issue_refund", `{"b":1,"a":2,"order_id":"1"}`), ptr(0), VerdictInvalid,
			[]string{"PARAMETER_HALLUCINATION/a", "PARAMETER_HALLUCINATION/b", "MISSING_REQUIRED_PARAM/amount"}, nil},
		{"enum violation", executorDef(), call("issue_refund", `{"order_id":"1","amount":5,"currency":"GBP"}`), ptr(0.75), VerdictInvalid,
			[]string{"INVALID_PARAM_VALUE/currency"}, nil},
		{"type violation", executorDef(), call("issue_refund", `{"order_id":"1","amount":"5"}`), ptr(0.75), VerdictInvalid,
			[]string{"INVALID_PARAM_VALUE/amount"}, nil},
		{"minimum violation", executorDef(), call("issue_refund", `{"order_id":"1","amount":-3}`), ptr(0.75), VerdictInvalid,
			[]string{"INVALID_PARAM_VALUE/amount"}, nil},
		{"two invalid values, sorted by parameter", executorDef(), call("issue_refund", `{"order_id":"1","currency":"GBP","amount":"x"}`), ptr(0.5), VerdictInvalid,
			[]string{"INVALID_PARAM_VALUE/amount", "INVALID_PARAM_VALUE/currency"}, nil},
		{"format violation", executorDef(), call("send_email", `{"to":"not-an-email","body":"hi"}`), ptr(0.75), VerdictInvalid,
			[]string{"INVALID_PARAM_VALUE/to"}, nil},
		{"pattern violation", executorDef(), call("lookup_order", `{"order_id":"#12345"}`), ptr(0.75), VerdictInvalid,
			[]string{"INVALID_PARAM_VALUE/order_id"}, nil},
		{"additionalProperties false not double counted", executorDef(), call("lookup_order", `{"order_id":"1","foo":1}`), ptr(0.5), VerdictInvalid,
			[]string{"PARAMETER_HALLUCINATION/foo"}, nil},
		{"missing key not also reported by the validator", executorDef(), call("lookup_order", `{}`), ptr(0.5), VerdictInvalid,
			[]string{"MISSING_REQUIRED_PARAM/order_id"}, nil},
		{"additionalProperties true allows extra keys", executorDef(), call("search", `{"q":"x","page":2}`), ptr(1), VerdictValid, []string{}, nil},
		{"type object without properties allows any key", executorDef(), call("any_object", `{"input":"refund 12345","n":2}`), ptr(1), VerdictValid, []string{}, nil},
		{"nested violation names the top-level parameter", executorDef(), call("update_address", `{"address":{"street":"Main"}}`), ptr(0.75), VerdictInvalid,
			[]string{"INVALID_PARAM_VALUE/address"}, nil},
		{"$ref schema: validator's required/additionalProperties mapped", executorDef(), call("by_ref", `{"b":1}`), ptr(0), VerdictInvalid,
			[]string{"MISSING_REQUIRED_PARAM/a", "PARAMETER_HALLUCINATION/b"}, nil},
		{"a number no float64 holds is well-formed JSON", executorDef(), call("issue_refund", `{"order_id":"1","amount":1e400}`), ptr(1), VerdictValid, []string{}, nil},
		{"a huge number still meets the schema's type", executorDef(), call("issue_refund", `{"order_id":"1","amount":"5","n":1e400}`), ptr(0.25), VerdictInvalid,
			[]string{"PARAMETER_HALLUCINATION/n", "INVALID_PARAM_VALUE/amount"}, nil},
		{"malformed: raw string", executorDef(), call("issue_refund", `"order 12345, refund it"`), ptr(0), VerdictInvalid,
			[]string{"MALFORMED_ARGUMENTS"}, nil},
		{"malformed: array", executorDef(), call("issue_refund", `[1,2]`), ptr(0), VerdictInvalid,
			[]string{"MALFORMED_ARGUMENTS"}, nil},
		{"double-encoded object accepted", executorDef(), call("lookup_order", `"{\"order_id\":\"12345\"}"`), ptr(1), VerdictValid, []string{}, nil},
		{"null arguments are {}", executorDef(), call("lookup_order", `null`), ptr(0.5), VerdictInvalid,
			[]string{"MISSING_REQUIRED_PARAM/order_id"}, nil},
		{"arguments not captured: authorisation only", executorDef(), call("issue_refund", ""), ptr(1), VerdictValid,
			[]string{}, []string{ReasonArgumentsNotCaptured}},
		{"arguments truncated: no shape check", executorDef(),
			mod(call("issue_refund", `"{\"order_id\":\"1234`), func(c *session.ToolCall) { c.ArgumentsTruncated = true }), ptr(1), VerdictValid,
			[]string{}, []string{ReasonArgumentsTruncated}},
		{"schema unknown", executorDef(), call("no_schema", `{"x":1}`), ptr(1), VerdictValid, []string{}, []string{ReasonSchemaUnknown}},
		{"schema invalid", executorDef(), call("broken", `{"x":1}`), ptr(1), VerdictValid, []string{}, []string{ReasonSchemaInvalid}},
		{"external $ref is not followed", executorDef(), call("external_ref", `{"x":1}`), ptr(1), VerdictValid, []string{}, []string{ReasonSchemaInvalid}},
		{"$schema 2020-12 honoured", executorDef(), call("draft2020", `{"n":1.5}`), ptr(0.75), VerdictInvalid, []string{"INVALID_PARAM_VALUE/n"}, nil},
		{"tools unknown: not evaluable", unknownTools, call("issue_refund", `{"order_id":"1"}`), nil, VerdictNotEvaluable,
			[]string{}, []string{ReasonToolsUnknown}},
		{"unknown agent: not evaluable", nil, call("issue_refund", `{"order_id":"1"}`), nil, VerdictNotEvaluable,
			[]string{}, []string{ReasonToolsUnknown}},
		{"tools unknown but malformed: evaluable", unknownTools, call("issue_refund", `42`), ptr(0), VerdictInvalid,
			[]string{"MALFORMED_ARGUMENTS"}, []string{ReasonToolsUnknown}},
		{"tool error", executorDef(), mod(call("lookup_order", `{"order_id":"1"}`), func(c *session.ToolCall) { c.Status = "error"; c.Error = "timeout" }),
			ptr(0.75), VerdictInvalid, []string{"TOOL_ERROR"}, nil},
		{"tool error alone is recorded but not scored", unknownTools, mod(call("x", ""), func(c *session.ToolCall) { c.Error = "boom" }),
			nil, VerdictNotEvaluable, []string{"TOOL_ERROR"}, []string{ReasonToolsUnknown, ReasonArgumentsNotCaptured}},
		{"rejected call validated like any other", executorDef(),
			mod(call("issue_refund", `{"order_id":"1","amount":2,"reason":"x"}`), func(c *session.ToolCall) { c.Executed = false; c.Status = "not_executed" }),
			ptr(0.5), VerdictInvalid, []string{"PARAMETER_HALLUCINATION/reason"}, nil},
		{"unauthorized and errored: both, floored", executorDef(), mod(call("delete_database", `{}`), func(c *session.ToolCall) { c.Status = "error" }),
			ptr(0), VerdictInvalid, []string{"UNAUTHORIZED_TOOL", "TOOL_ERROR"}, []string{ReasonSchemaUnknown}},
		{"handoff tool to an allowed target", executorDef(), call("transfer_to_reviewer", `{}`), ptr(1), VerdictValid,
			[]string{}, []string{ReasonSchemaUnknown}},
		{"generic handoff tool, target in arguments", executorDef(), call("transfer_to_agent", `{"agent_name":"Reviewer"}`), ptr(1), VerdictValid,
			[]string{}, []string{ReasonSchemaUnknown}},
		{"handoff tool to a target not allowed", executorDef(), call("transfer_to_mallory", `{}`), ptr(0), VerdictInvalid,
			[]string{"UNAUTHORIZED_TOOL"}, []string{ReasonSchemaUnknown}},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.ValidateToolCall(tt.agent, tt.call, 2)
			if tt.score == nil {
				assert.Nil(t, r.Score)
			} else if assert.NotNil(t, r.Score) {
				assert.InDelta(t, *tt.score, *r.Score, 1e-9)
			}
			assert.Equal(t, tt.verdict, r.Verdict)
			assert.Equal(t, tt.issues, issueKeys(r.Issues))
			assert.Equal(t, tt.notEvaluable, r.NotEvaluable)
			assert.NotEmpty(t, r.Explanation)
			for _, is := range r.Issues {
				assert.Equal(t, 2, is.TurnIndex)
				assert.Equal(t, tt.call.Executed, is.Executed)
				assert.Equal(t, tt.call.SpanID, is.SpanID)
				assert.Contains(t, is.Message, tt.call.ToolName)
				if is.Parameter != "" {
					assert.Contains(t, is.Message, "'"+is.Parameter+"'")
				}
			}
		})
	}
}

// TestValidateToolCallFlatMapKeywordParams: a ReAsk flat map whose parameters are named
// after schema keywords (`type`, `required`) is a flat map, so correct calls are valid and
// unknown or missing keys are found (audit a, finding 4).
func TestValidateToolCallFlatMapKeywordParams(t *testing.T) {
	tests := []struct {
		name, flat, args string
		score            float64
		issues           []string
		notEvaluable     []string
	}{
		{"parameter named type: correct call", `{"title":"string","type":"string"}`, `{"title":"x","type":"bug"}`, 1, []string{}, nil},
		{"parameter named type: unknown and missing keys", `{"title":"string","type":"string"}`, `{"title":"x","made_up":1}`, 0,
			[]string{"PARAMETER_HALLUCINATION/made_up", "MISSING_REQUIRED_PARAM/type"}, nil},
		{"parameter named type: wrong value", `{"title":"string","type":"string"}`, `{"title":"x","type":3}`, 0.75,
			[]string{"INVALID_PARAM_VALUE/type"}, nil},
		{"parameter named required: correct call", `{"user":"string","required":"boolean"}`, `{"user":"u","required":true}`, 1, []string{}, nil},
		{"parameter named required: wrong value", `{"user":"string","required":"boolean"}`, `{"user":"u","required":"yes"}`, 0.75,
			[]string{"INVALID_PARAM_VALUE/required"}, nil},
	}
	e := newEval(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params, err := toolschema.Normalize(tt.flat)
			require.NoError(t, err)
			def := &session.AgentDefinition{ID: "a", ToolsSource: "config", Tools: []session.ToolDefinition{{Name: "create_ticket", Parameters: params}}}
			r := e.ValidateToolCall(def, call("create_ticket", tt.args), 0)
			require.NotNil(t, r.Score)
			assert.InDelta(t, tt.score, *r.Score, 1e-9)
			assert.Equal(t, tt.issues, issueKeys(r.Issues))
			assert.Equal(t, tt.notEvaluable, r.NotEvaluable)
		})
	}
}

func TestValidateToolCallMessages(t *testing.T) {
	e := newEval(t)
	r := e.ValidateToolCall(executorDef(), call("issue_refund", `{"order_id":"1","amount":"5","reason":"x"}`), 2)
	msgs := []string{}
	for _, is := range r.Issues {
		msgs = append(msgs, is.Message)
	}
	assert.Equal(t, []string{
		"executor: issue_refund got unknown parameter 'reason'",
		"executor: issue_refund got an invalid value for 'amount': got string, want number",
	}, msgs)
	assert.Equal(t, "checked authorisation, arguments, parameters; score = max(0, 1 − (0.5 PARAMETER_HALLUCINATION + 0.25 INVALID_PARAM_VALUE)) = 0.25", r.Explanation)

	r = e.ValidateToolCall(executorDef(), call("delete_database", `{}`), 0)
	require.Len(t, r.Issues, 1)
	assert.Equal(t, "executor: called delete_database, which is not in its tools_available [any_object, broken, by_ref, draft2020, external_ref, issue_refund, lookup_order, no_schema, search, send_email, update_address]", r.Issues[0].Message)
	assert.Equal(t, SeverityHigh, r.Issues[0].Severity)
}

func TestValidateToolCallInSessionAcceptsSessionAgents(t *testing.T) {
	e := newEval(t)
	s := &session.AgentSession{Agents: []session.AgentDefinition{*executorDef(), {ID: "mallory"}}}
	r := e.ValidateToolCallInSession(s, executorDef(), call("transfer_to_mallory", `{}`), 0)
	assert.Equal(t, VerdictValid, r.Verdict)
	assert.Empty(t, r.Issues)
	r = e.ValidateToolCallInSession(s, executorDef(), call("transfer_to_nobody", `{}`), 0)
	assert.Equal(t, []string{"UNAUTHORIZED_TOOL"}, issueKeys(r.Issues))
}

func TestSeverityPenaltiesAreConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SeverityPenalties.Medium = 0.3
	e, err := New(cfg)
	require.NoError(t, err)
	r := e.ValidateToolCall(executorDef(), call("issue_refund", `{"order_id":"1","amount":2,"reason":"x"}`), 0)
	require.NotNil(t, r.Score)
	assert.InDelta(t, 0.7, *r.Score, 1e-9)
}

func TestSchemaCacheBoundedAndConcurrent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SchemaCacheSize = 4
	e, err := New(cfg)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				def := &session.AgentDefinition{ID: "a", ToolsSource: "config", Tools: []session.ToolDefinition{{
					Name:       "t",
					Parameters: schema(fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string"}},"required":["p%d"]}`, i%10, i%10)),
				}}}
				r := e.ValidateToolCall(def, call("t", fmt.Sprintf(`{"p%d":"v"}`, i%10)), 0)
				if r.Verdict != VerdictValid {
					t.Errorf("goroutine %d call %d: %s %v", g, i, r.Verdict, issueKeys(r.Issues))
				}
			}
		}(g)
	}
	wg.Wait()
	assert.LessOrEqual(t, e.schemas.Len(), 4)
}

func TestHandoffTarget(t *testing.T) {
	tests := []struct {
		name, tool, args, want string
		handoff, ok            bool
	}{
		{"openai style", "transfer_to_refund_agent", "", "refund_agent", false, true},
		{"back to supervisor", "transfer_back_to_supervisor", "", "supervisor", false, true},
		{"strands swarm", "handoff_to_agent", `{"agent_name":"billing","message":"m"}`, "billing", false, true},
		{"adk", "transfer_to_agent", `{"agent_name":"billing"}`, "billing", false, true},
		{"crewai", "Delegate work to coworker", `{"coworker":"Researcher","task":"t"}`, "Researcher", false, true},
		{"generic without target", "transfer_to_agent", `{}`, "", false, false},
		{"not a handoff", "lookup_order", `{"agent_name":"x"}`, "", false, false},
		{"flagged handoff with target argument", "route", `{"target":"billing"}`, "billing", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := call(tt.tool, tt.args)
			c.IsHandoff = tt.handoff
			got, ok := (*argCache)(nil).handoffTarget(c)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNormName(t *testing.T) {
	for in, want := range map[string]string{"Refund Agent": "refund_agent", "refund-agent": "refund_agent", " A__B ": "a_b", "x.y/z": "x_y_z"} {
		assert.Equal(t, want, session.AgentKey(in), in)
	}
	assert.False(t, strings.Contains(session.AgentKey("--a--"), "-"))
}

// FuzzValidateToolCall: any schema and any arguments give a score in [0,1] or a
// not-evaluable verdict, never a panic, and the verdict agrees with the issues.
func FuzzValidateToolCall(f *testing.F) {
	f.Add(issueRefundSchema, `{"order_id":"1","amount":2}`, false)
	f.Add(`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"required":["a"]}`, `{"a":[1]}`, false)
	f.Add(`{"$ref":"#/definitions/x","definitions":{"x":{"required":["q"]}}}`, `{}`, false)
	f.Add(`{"patternProperties":{"^x-":{"type":"string"}}}`, `{"x-a":1,"b":2}`, false)
	f.Add(`not json`, `"{\"a\":1}"`, false)
	f.Add(`{"type":"object"}`, `{"a":`, true)
	e := newEval(f)
	f.Fuzz(func(t *testing.T, sch, params string, truncated bool) {
		def := &session.AgentDefinition{ID: "a", ToolsSource: "config", Tools: []session.ToolDefinition{{Name: "t", Parameters: json.RawMessage(sch)}}}
		c := call("t", params)
		c.ArgumentsTruncated = truncated
		r := e.ValidateToolCall(def, c, 0)
		if r.Score != nil && (*r.Score < 0 || *r.Score > 1) {
			t.Fatalf("score %v", *r.Score)
		}
		switch r.Verdict {
		case VerdictValid:
			if r.Score == nil || len(r.Issues) > 0 {
				t.Fatalf("valid with score %v and issues %v", r.Score, issueKeys(r.Issues))
			}
		case VerdictInvalid:
			if r.Score == nil || len(r.Issues) == 0 {
				t.Fatalf("invalid without score or issues")
			}
		case VerdictNotEvaluable:
			if r.Score != nil {
				t.Fatalf("not evaluable with a score")
			}
		default:
			t.Fatalf("verdict %q", r.Verdict)
		}
		seen := map[string]bool{}
		for _, k := range issueKeys(r.Issues) {
			if seen[k] && k != string(IssueInvalidParamValue) {
				t.Fatalf("issue %s reported twice", k)
			}
			seen[k] = true
		}
	})
}

func TestToolCallTextRendersNameKeysAndScalars(t *testing.T) {
	tc := &session.ToolCall{ToolName: "lookup_order.v2-x"}
	args := map[string]any{"order_id": "ORD-1", "amount": 12.5, "ok": true, "list": []any{1.0, "a"},
		"n": map[string]any{"b_c": false}, "big": 1e21, "none": nil}
	assert.Equal(t, "lookup order v2 x amount 12.5 big 1000000000000000000000 list 1 a n b c false none ok true order id ORD-1",
		toolCallText(tc, args))
	assert.Equal(t, "transfer to billing", toolCallText(&session.ToolCall{ToolName: "transfer_to_billing"}, nil))
}
