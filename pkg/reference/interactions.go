// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference // import "github.com/agenteval/agenteval-collector/pkg/reference"

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Interaction is one step of a multi-agent run in the strands-evals shape: the node (agent
// or component) that acted, the nodes it depends on, and its messages (any JSON value).
type Interaction struct {
	NodeName     string   `json:"node_name"`
	Dependencies []string `json:"dependencies,omitempty"`
	Messages     any      `json:"messages,omitempty"`
}

// Judge scores one prompt. Implementations return a verdict with Score in [0,1]; an error
// leaves the deterministic result in place (recorded as `judge_error`). internal/judge
// provides one over OpenAI-compatible chat completions.
type Judge interface {
	Judge(ctx context.Context, req JudgeRequest) (JudgeVerdict, error)
}

// JudgeRequest is one judge call: System and Prompt are the messages; the other fields
// say what is judged (for routing, caching and provenance).
type JudgeRequest struct {
	Evaluator string `json:"evaluator"`
	Node      string `json:"node,omitempty"`
	Index     int    `json:"index"`
	Last      bool   `json:"last,omitempty"`
	Rubric    string `json:"rubric,omitempty"`
	System    string `json:"system"`
	Prompt    string `json:"prompt"`
}

// JudgeVerdict is the judge's structured answer `{score, pass, reason}`.
type JudgeVerdict struct {
	Score  float64 `json:"score"`
	Pass   bool    `json:"pass"`
	Reason string  `json:"reason"`
}

// InteractionsOptions configures NewInteractionsEvaluator.
type InteractionsOptions struct {
	// Rubric applies to every node without an entry in Rubrics.
	Rubric string
	// Rubrics are per-node rubrics, keyed by node name (strands' rubric dict).
	Rubrics map[string]string
	// InteractionDescription describes the available interactions to the judge.
	InteractionDescription map[string]any
	// ExcludeInputs leaves the case input out of the prompts (strands include_inputs=False).
	ExcludeInputs bool
	// SystemPrompt replaces DefaultInteractionsSystemPrompt.
	SystemPrompt string
	// Judge, when set, judges every actual interaction (one call each, sequentially).
	Judge Judge
}

// DefaultInteractionsSystemPrompt is the judge's system prompt for interactions.
const DefaultInteractionsSystemPrompt = `You evaluate the interactions of a multi-agent system one at a time.
For each interaction, judge it against the rubric, the expected interaction sequence and the expected
interactions around its position, and whether the node's dependencies were respected. Keep track of
problematic interactions. On the final interaction, also judge the overall collaboration: which agents
contributed most and which were problematic.
Answer with a JSON object {"score": <decimal between 0.0 and 1.0>, "pass": <true|false>, "reason": "<step-by-step reasoning>"}.`

// Prompt headers (strands-evals interactions_evaluator.py wording, so that rubrics written
// for it behave the same).
const (
	headerInteraction = "Evaluate this interaction. THE SCORE MUST BE A DECIMAL BETWEEN 0.0 AND 1.0 (NOT 0 to 10 OR 0 to 100). \n"
	headerFinal       = "Evaluate this final interaction. THE FINAL SCORE MUST BE A DECIMAL BETWEEN 0.0 AND 1.0 (NOT 0 to 10 OR 0 to 100). Your reasoning should include information from all of the previous interactions evaluated.\n"
)

// InteractionResult is the evaluation of one actual interaction.
type InteractionResult struct {
	Index    int    `json:"index"`
	NodeName string `json:"node_name"`
	// InOrder: the interaction is part of the longest common subsequence of node names
	// with the expected interactions.
	InOrder bool `json:"in_order"`
	// Expected is the index of the expected interaction it was aligned with, -1 if none.
	Expected int `json:"expected"`
	// MissingDependencies are required nodes that had not acted before it.
	MissingDependencies []string `json:"missing_dependencies,omitempty"`
	// Judge is the judge's verdict, when a judge ran.
	Judge *JudgeVerdict `json:"judge,omitempty"`
}

// InteractionsComparison is the deterministic comparison of actual with expected
// interactions.
type InteractionsComparison struct {
	// OrderCompliance = len(LCS(expected node names, actual node names)) / len(expected);
	// both empty = 1, expected empty with actual interactions = 0.
	OrderCompliance float64 `json:"order_compliance"`
	// DependencyCompliance = satisfied / required dependencies, where each actual
	// interaction requires its own declared dependencies and those of the expected
	// interaction it is aligned with, and a dependency is satisfied when that node acted
	// earlier in the run. nil when nothing is required.
	DependencyCompliance *float64 `json:"dependency_compliance,omitempty"`
	// ExactOrder: the node names are equal element-wise.
	ExactOrder   bool                `json:"exact_order"`
	Interactions []InteractionResult `json:"interactions"`
}

// CompareInteractions aligns actual with expected interactions (LCS of node names, then the
// remaining interactions of the same node one-to-one in order) and computes order and
// dependency compliance.
func CompareInteractions(expected, actual []Interaction) InteractionsComparison {
	wantNames := nodeNames(expected)
	gotNames := nodeNames(actual)
	align := make([]int, len(actual))
	for i := range align {
		align[i] = -1
	}
	inOrder := make([]bool, len(actual))
	// LCS alignment (same tie rule as LCS).
	lcs := lcsPairs(wantNames, gotNames)
	usedWant := make([]bool, len(expected))
	for _, p := range lcs {
		align[p[1]] = p[0]
		inOrder[p[1]] = true
		usedWant[p[0]] = true
	}
	for j := range actual {
		if align[j] >= 0 {
			continue
		}
		for i := range expected {
			if !usedWant[i] && wantNames[i] == gotNames[j] {
				usedWant[i] = true
				align[j] = i
				break
			}
		}
	}
	cmp := InteractionsComparison{
		OrderCompliance: ratio(len(lcs), len(expected), len(actual)),
		ExactOrder:      slices.Equal(wantNames, gotNames),
		Interactions:    make([]InteractionResult, len(actual)),
	}
	seen := make(map[string]bool, len(actual))
	required, satisfied := 0, 0
	for j, a := range actual {
		deps := slices.Clone(a.Dependencies)
		if align[j] >= 0 {
			for _, d := range expected[align[j]].Dependencies {
				if !slices.Contains(deps, d) {
					deps = append(deps, d)
				}
			}
		}
		r := InteractionResult{Index: j, NodeName: a.NodeName, InOrder: inOrder[j], Expected: align[j]}
		for _, d := range deps {
			required++
			if seen[d] {
				satisfied++
			} else {
				r.MissingDependencies = append(r.MissingDependencies, d)
			}
		}
		seen[a.NodeName] = true
		cmp.Interactions[j] = r
	}
	if required > 0 {
		v := float64(satisfied) / float64(required)
		cmp.DependencyCompliance = &v
	}
	return cmp
}

func nodeNames(in []Interaction) []string {
	out := make([]string, len(in))
	for i, x := range in {
		out[i] = x.NodeName
	}
	return out
}

type interactionsEval struct {
	name string
	opts InteractionsOptions
}

// NewInteractionsEvaluator returns strands-evals' InteractionsEvaluator with a
// deterministic core (name "" = "interactions").
//
// Expected interactions: Metadata["expected_interactions"], else Reference when it is a
// list of interactions or `{"interactions": [...]}` (any other reference belongs to another
// evaluator); expected output: Metadata["expected_output"].
// Output: a list of interactions, or strands' TaskOutput `{"output": ..., "interactions":
// [...]}`. Interactions are objects `{node_name, dependencies, messages}`.
//
// Without a judge: Score = mean(order_compliance, dependency_compliance when present);
// pass = the node names equal the expected ones element-wise and every dependency is
// satisfied (see CompareInteractions). Needs expected interactions (ErrNoReference).
//
// With a judge: one call per actual interaction, built like strands': the header (the
// final one on the last call), <Input> (the case input on the first call, or input[i]
// when the input is a list as long as the interactions), <Interaction>, the
// <ExpectedSequence> and the ±1 window expected[max(0,i−1):min(n,i+2)] as
// <RelevantExpectedInteraction>s, on the last call <Output>, <ExpectedOutput> and the
// previous verdicts, <InteractionDescription>, and <Rubric> (Rubrics[node], else
// Rubric). Score = mean of the judge scores, pass = every verdict passes (strands'
// aggregation). A failed or unroutable judge call keeps the deterministic result and
// records `judge_error`. No actual interactions: score 0, fail (strands), unless none
// were expected either (score 1, pass).
//
// Details: order_compliance, dependency_compliance, exact_order, interactions
// ([]InteractionResult), judge_error.
func NewInteractionsEvaluator(name string, opts InteractionsOptions) Evaluator {
	return interactionsEval{name: cmp.Or(name, DefaultInteractionsName), opts: opts}
}

func (e interactionsEval) Name() string { return e.name }

func (e interactionsEval) Evaluate(ctx context.Context, ex Example, output any) (Result, error) {
	var want []Interaction
	ref, src, hasRef := expected(ex, MetaExpectedInteractions)
	if hasRef {
		var err error
		want, err = interactions(ref)
		switch {
		case err != nil && src == "reference":
			// A reference that is not a list of interactions belongs to another evaluator
			// (a tool name, a class): this case expects no interactions.
			hasRef = false
		case err != nil:
			return Result{}, fmt.Errorf("%s: %s: %w", e.name, src, err)
		}
	}
	if !hasRef && e.opts.Judge == nil {
		return Result{}, fmt.Errorf("%s: %w (want metadata.expected_interactions or reference)", e.name, ErrNoReference)
	}
	got, err := interactions(output)
	if err != nil {
		return Result{}, fmt.Errorf("%s: output: %w", e.name, err)
	}
	if len(got) == 0 && (!hasRef || len(want) > 0) {
		return Result{Score: 0, Pass: false, Reason: "No interactions were evaluated. Ensure actual_interactions is not empty.",
			Details: map[string]any{"order_compliance": 0.0, "interactions": []InteractionResult{}}}, nil
	}
	cmp := CompareInteractions(want, got)
	res := Result{Details: map[string]any{"interactions": cmp.Interactions}}
	if hasRef {
		res.Details["order_compliance"] = cmp.OrderCompliance
		res.Details["exact_order"] = cmp.ExactOrder
		res.Score = cmp.OrderCompliance
		if cmp.DependencyCompliance != nil {
			res.Details["dependency_compliance"] = *cmp.DependencyCompliance
			res.Score = (cmp.OrderCompliance + *cmp.DependencyCompliance) / 2
		}
		res.Pass = cmp.ExactOrder && (cmp.DependencyCompliance == nil || *cmp.DependencyCompliance == 1)
		res.Reason = deterministicReason(cmp)
	}
	if e.opts.Judge == nil {
		return res, nil
	}
	verdicts, jerr := e.judge(ctx, ex, output, want, got)
	if jerr != nil {
		if !hasRef {
			return Result{}, fmt.Errorf("%s: judge: %w", e.name, jerr)
		}
		res.Details["judge_error"] = jerr.Error()
		return res, nil
	}
	sum, pass := 0.0, true
	reasons := make([]string, len(verdicts))
	for i, v := range verdicts {
		cmp.Interactions[i].Judge = &verdicts[i]
		sum += v.Score
		pass = pass && v.Pass
		reasons[i] = v.Reason
	}
	res.Score = sum / float64(len(verdicts))
	res.Pass = pass
	res.Reason = strings.Join(reasons, " | ")
	return res, nil
}

func deterministicReason(c InteractionsComparison) string {
	var b strings.Builder
	fmt.Fprintf(&b, "order compliance %.2f", c.OrderCompliance)
	if c.DependencyCompliance != nil {
		fmt.Fprintf(&b, ", dependency compliance %.2f", *c.DependencyCompliance)
	}
	for _, r := range c.Interactions {
		if len(r.MissingDependencies) > 0 {
			fmt.Fprintf(&b, "; %s ran before %s", r.NodeName, strings.Join(r.MissingDependencies, ", "))
		}
	}
	return b.String()
}

// judge makes one call per actual interaction, in order, and stops at the first error.
func (e interactionsEval) judge(ctx context.Context, ex Example, output any, want, got []Interaction) ([]JudgeVerdict, error) {
	system := cmp.Or(e.opts.SystemPrompt, DefaultInteractionsSystemPrompt)
	var finalOut, expectedOut any
	if m, ok := normalize(output).(map[string]any); ok {
		finalOut = m["output"]
	}
	expectedOut = ex.Metadata[MetaExpectedOutput]
	out := make([]JudgeVerdict, 0, len(got))
	for i := range got {
		rubric, ok := e.opts.Rubrics[got[i].NodeName]
		if !ok {
			rubric = e.opts.Rubric
		}
		if rubric == "" {
			return nil, fmt.Errorf("no rubric for node %q (set rubrics[%q] or rubric)", got[i].NodeName, got[i].NodeName)
		}
		prompt := BuildInteractionPrompt(InteractionPrompt{
			Index: i, Interactions: got, Expected: want, Input: ex.Input, IncludeInputs: !e.opts.ExcludeInputs,
			Output: finalOut, ExpectedOutput: expectedOut, Description: e.opts.InteractionDescription,
			Rubric: rubric, Previous: out,
		})
		v, err := e.opts.Judge.Judge(ctx, JudgeRequest{
			Evaluator: e.name, Node: got[i].NodeName, Index: i, Last: i == len(got)-1,
			Rubric: rubric, System: system, Prompt: prompt,
		})
		if err != nil {
			return nil, fmt.Errorf("interaction %d (%s): %w", i, got[i].NodeName, err)
		}
		if !(v.Score >= 0 && v.Score <= 1) {
			return nil, fmt.Errorf("interaction %d (%s): judge score %v not in [0,1]", i, got[i].NodeName, v.Score)
		}
		out = append(out, v)
	}
	return out, nil
}

// InteractionPrompt holds what BuildInteractionPrompt renders for interaction Index.
type InteractionPrompt struct {
	Index          int
	Interactions   []Interaction
	Expected       []Interaction
	Input          any
	IncludeInputs  bool
	Output         any
	ExpectedOutput any
	Description    map[string]any
	Rubric         string
	Previous       []JudgeVerdict
}

// BuildInteractionPrompt renders the judge prompt for one interaction in strands-evals'
// layout (see NewInteractionsEvaluator).
func BuildInteractionPrompt(p InteractionPrompt) string {
	n := len(p.Interactions)
	last := p.Index == n-1
	var b strings.Builder
	if last {
		b.WriteString(headerFinal)
	} else {
		b.WriteString(headerInteraction)
	}
	if p.IncludeInputs && p.Input != nil {
		in := normalize(p.Input)
		if list, ok := in.([]any); ok && len(list) == n {
			fmt.Fprintf(&b, "<Input>%s</Input>\n", text(list[p.Index]))
		} else if p.Index == 0 {
			fmt.Fprintf(&b, "<Input>%s</Input>\n", text(in))
		}
	}
	cur := p.Interactions[p.Index]
	fmt.Fprintf(&b, "<Interaction> Node Name: %s, Depends on %s \n Message: %s </Interaction>\n",
		cur.NodeName, list(cur.Dependencies), text(cur.Messages))
	if len(p.Expected) > 0 {
		fmt.Fprintf(&b, "<ExpectedSequence>%s</ExpectedSequence>\n", list(nodeNames(p.Expected)))
		lo, hi := max(0, p.Index-1), min(len(p.Expected), p.Index+2)
		for _, x := range p.Expected[min(lo, hi):hi] {
			fmt.Fprintf(&b, "<RelevantExpectedInteraction> Node Name: %s, Depends on %s, Message: %s </RelevantExpectedInteraction>\n",
				x.NodeName, list(x.Dependencies), text(x.Messages))
		}
	}
	if last {
		if p.Output != nil {
			fmt.Fprintf(&b, "<Output>%s</Output>\n", text(p.Output))
		}
		if p.ExpectedOutput != nil {
			fmt.Fprintf(&b, "<ExpectedOutput>%s</ExpectedOutput>\n", text(p.ExpectedOutput))
		}
		for i, v := range p.Previous {
			fmt.Fprintf(&b, "<PreviousEvaluation> Interaction %d (%s): score %.2f, pass %t, reason: %s </PreviousEvaluation>\n",
				i, p.Interactions[i].NodeName, v.Score, v.Pass, v.Reason)
		}
	}
	if len(p.Description) > 0 {
		fmt.Fprintf(&b, "<InteractionDescription>%s</InteractionDescription>\n", text(p.Description))
	}
	if cur.NodeName != "" {
		fmt.Fprintf(&b, "<Rubric>%s</Rubric>", p.Rubric)
	}
	return b.String()
}

func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	bs, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(bs)
}

func list(s []string) string {
	if s == nil {
		s = []string{}
	}
	return text(s)
}

// interactions reads a list of interactions, or an object with `interactions`.
func interactions(v any) ([]Interaction, error) {
	n := normalize(v)
	if m, ok := n.(map[string]any); ok {
		inner, ok := m["interactions"]
		if !ok {
			return nil, shapeError("interactions", v)
		}
		n = normalize(inner)
	}
	if n == nil {
		return nil, nil
	}
	items, ok := n.([]any)
	if !ok {
		return nil, shapeError("interactions", v)
	}
	out := make([]Interaction, 0, len(items))
	for i, it := range items {
		m, ok := normalize(it).(map[string]any)
		if !ok {
			return nil, shapeError(fmt.Sprintf("interaction %d", i), it)
		}
		var x Interaction
		x.NodeName, _ = m["node_name"].(string)
		x.Messages = m["messages"]
		if deps, ok := m["dependencies"]; ok && deps != nil {
			names, err := toolNames(deps, selectionKeys)
			if err != nil {
				return nil, fmt.Errorf("interaction %d dependencies: %w", i, err)
			}
			x.Dependencies = names
		}
		if x.NodeName == "" && x.Dependencies == nil && x.Messages == nil {
			return nil, errors.Join(ErrBadShape, fmt.Errorf("interaction %d has none of node_name, dependencies, messages", i))
		}
		out = append(out, x)
	}
	return out, nil
}
