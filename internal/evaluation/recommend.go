// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Recommendation kinds of the ReAsk plan's table (the ReAsk evaluation plan, "Recommendations Engine");
// specific ones use the issue type in lower case.
const (
	RecToolUse         = "tool_use"
	RecHandoff         = "handoff"
	RecReasoning       = "reasoning"
	RecResponseQuality = "response_quality"
	RecCoordination    = "coordination"
	RecRDM             = "rdm"
	RecCCM             = "ccm"
)

// recommendations builds the ReAsk plan's threshold rules and the specific tool-issue ones,
// deduplicated by message and ordered by impact (docs/scoring.md "Recommendations").
func (e *Evaluator) recommendations(a *Analysis) []Recommendation {
	th := e.cfg.RecommendationThreshold
	var out []Recommendation
	below := func(v *float64) bool { return v != nil && *v < th }
	gap := func(v float64) float64 { return round4(th - v) }
	suffix := func(metric string, v float64) string {
		return " (" + metric + " " + num(v) + " < " + num(th) + ")"
	}
	for _, id := range slices.Sorted(maps.Keys(a.PerAgentScores)) {
		as := a.PerAgentScores[id]
		if below(as.ToolUse) {
			out = append(out, Recommendation{Kind: RecToolUse, AgentID: id, Impact: gap(*as.ToolUse),
				Message: toolUseAdvice(id, a.ToolIssues) + suffix("tool_use", *as.ToolUse)})
		}
		if below(as.Handoff) {
			out = append(out, Recommendation{Kind: RecHandoff, AgentID: id, Impact: gap(*as.Handoff),
				Message: "Agent " + id + " should pass more context when delegating" + suffix("handoff", *as.Handoff)})
		}
		if below(as.Reasoning) {
			out = append(out, Recommendation{Kind: RecReasoning, AgentID: id, Impact: gap(*as.Reasoning),
				Message: "Agent " + id + "'s reasoning could be more structured" + suffix("reasoning", *as.Reasoning)})
		}
		if below(as.ResponseQuality) {
			out = append(out, Recommendation{Kind: RecResponseQuality, AgentID: id, Impact: gap(*as.ResponseQuality),
				Message: "Agent " + id + "'s responses are often empty, failed, truncated, refusals or judged bad" + suffix("response_quality", *as.ResponseQuality)})
		}
	}
	if below(a.CoordinationScore) {
		out = append(out, Recommendation{Kind: RecCoordination, Impact: gap(*a.CoordinationScore),
			Message: "Agents are not coordinating well - consider clearer role definitions" + suffix("coordination", *a.CoordinationScore)})
	}
	if followUps := len(a.TurnResults) - 1; followUps > 0 {
		cv := a.Conversation
		if rate := float64(cv.RDMDetections) / float64(followUps); cv.RDMDetections > 0 && rate >= e.cfg.RDMRateThreshold {
			out = append(out, Recommendation{Kind: RecRDM, Count: cv.RDMDetections, Impact: round4(rate),
				Message: fmt.Sprintf("Users are frequently correcting responses - improve accuracy (%d of %d follow-ups are corrections)", cv.RDMDetections, followUps)})
		}
		if rate := float64(cv.CCMDetections) / float64(followUps); cv.CCMDetections > 0 && rate >= e.cfg.CCMRateThreshold {
			out = append(out, Recommendation{Kind: RecCCM, Count: cv.CCMDetections, Impact: round4(rate),
				Message: fmt.Sprintf("Users are re-asking questions - improve response completeness (%d of %d follow-ups re-ask)", cv.CCMDetections, followUps)})
		}
	}
	out = append(out, e.issueRecommendations(a)...)

	sort.SliceStable(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x.Impact != y.Impact {
			return x.Impact > y.Impact
		}
		if x.Kind != y.Kind {
			return x.Kind < y.Kind
		}
		if x.AgentID != y.AgentID {
			return x.AgentID < y.AgentID
		}
		if x.ToolName != y.ToolName {
			return x.ToolName < y.ToolName
		}
		if x.Parameter != y.Parameter {
			return x.Parameter < y.Parameter
		}
		return x.Message < y.Message
	})
	seen := map[string]bool{}
	dedup := out[:0]
	for _, r := range out {
		if !seen[r.Message] {
			seen[r.Message] = true
			dedup = append(dedup, r)
		}
	}
	if dedup == nil {
		return []Recommendation{}
	}
	return dedup
}

// issueRecommendations aggregates the tool issues per (agent, tool, issue, parameter):
// "<agent>: <count> of <calls> calls to <tool> <what>", impact = severity penalty ×
// count / calls (calls = the agent's calls to that tool in the session).
func (e *Evaluator) issueRecommendations(a *Analysis) []Recommendation {
	type key struct {
		agent, tool string
		issue       IssueType
		param       string
	}
	if len(a.ToolIssues) == 0 {
		return nil
	}
	counts := map[key]int{}
	sev := map[key]Severity{}
	var order []key
	for _, is := range a.ToolIssues {
		k := key{is.AgentID, is.ToolName, is.Issue, is.Parameter}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
		sev[k] = is.Severity
	}
	// The calls per (agent, tool) are counted only for the pairs that have an issue.
	calls := make(map[[2]string]int, len(order))
	for _, k := range order {
		calls[[2]string{k.agent, k.tool}] = 0
	}
	for ti := range a.TurnResults {
		for ii := range a.TurnResults[ti].Interactions {
			ir := &a.TurnResults[ti].Interactions[ii]
			for ci := range ir.ToolCalls {
				k := [2]string{ir.AgentID, ir.ToolCalls[ci].ToolName}
				if n, ok := calls[k]; ok {
					calls[k] = n + 1
				}
			}
		}
	}
	out := make([]Recommendation, 0, len(order))
	for _, k := range order {
		n, total := counts[k], calls[[2]string{k.agent, k.tool}]
		if total < n {
			total = n
		}
		var what string
		switch k.issue {
		case IssueUnauthorizedTool:
			what = "used a tool outside its tools_available"
		case IssueParameterHallucination:
			what = "passed unknown parameter '" + k.param + "'"
		case IssueMissingRequiredParam:
			what = "omitted required '" + k.param + "'"
		case IssueInvalidParamValue:
			if k.param == "" {
				what = "passed arguments that violate the schema"
			} else {
				what = "passed an invalid value for '" + k.param + "'"
			}
		case IssueMalformedArguments:
			what = "passed arguments that are not a JSON object"
		case IssueToolError:
			what = "failed"
		default:
			what = "had issue " + string(k.issue)
		}
		out = append(out, Recommendation{
			Kind: strings.ToLower(string(k.issue)), AgentID: k.agent, ToolName: k.tool, Parameter: k.param, Count: n,
			Impact:  round4(e.cfg.Penalty(sev[k]) * float64(n) / float64(total)),
			Message: fmt.Sprintf("%s: %d of %d calls to %s %s", agentLabel(k.agent), n, total, k.tool, what),
		})
	}
	return out
}

// toolUseAdvice words the tool_use recommendation after the evidence, the agent's tool
// issues (docs/scoring.md §7): tool selection for UNAUTHORIZED_TOOL (the ReAsk plan's
// message), the arguments for parameter issues (PARAMETER_HALLUCINATION,
// MISSING_REQUIRED_PARAM, INVALID_PARAM_VALUE, MALFORMED_ARGUMENTS), both when both
// occur, and failing calls when only TOOL_ERROR does.
func toolUseAdvice(agent string, issues []ToolIssue) string {
	var selection, params, failed bool
	for _, is := range issues {
		if is.AgentID != agent {
			continue
		}
		switch is.Issue {
		case IssueUnauthorizedTool:
			selection = true
		case IssueToolError:
			failed = true
		default:
			params = true
		}
	}
	switch {
	case selection && params:
		return "Consider improving tool selection logic and validating tool arguments against the tool schemas for " + agent
	case params:
		return "Consider validating " + agent + "'s tool arguments against the tool schemas"
	case !selection && failed:
		return "Tool calls by " + agent + " often fail - check the tools and handle their errors"
	}
	return "Consider improving tool selection logic for " + agent
}
