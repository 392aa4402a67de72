// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// Every case below reproduces a number a peer computes for the same input, or states where
// this package deliberately differs (differs != ""; docs/scoring.md, "Reference-based
// evaluators", gives the reasons). Sources:
//
//	evalaf:     github.com/antflydb/antfly go/pkg/evalaf/agent/tool_use.go and classification.go
//	            (commit 710a8aa1; the package has no tests upstream, the numbers follow its code)
//	agentevals: github.com/langchain-ai/agentevals python/tests/test_trajectory.py and
//	            python/agentevals/trajectory/utils.py (argument matchers)
//	strands:    github.com/strands-agents/evals src/strands_evals/tools/evaluation_tools.py
//	            (exact/in_order/any_order scorers) and evaluators/interactions_evaluator.py (commit 4190bbb)
//	ADK:        github.com/google/adk-python src/google/adk/evaluation/trajectory_evaluator.py

type peerCase struct {
	name      string
	ev        Evaluator
	ex        Example
	output    any
	score     float64
	pass      bool
	peerScore float64 // the peer's number when it differs
	peerPass  bool
	differs   string // why we differ; "" = same numbers as the peer
}

func runPeerCases(t *testing.T, cases []peerCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.ev.Evaluate(context.Background(), tc.ex, tc.output)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if math.Abs(res.Score-tc.score) > 1e-9 || res.Pass != tc.pass {
				t.Fatalf("got score %v pass %t, want %v %t (reason %q)", res.Score, res.Pass, tc.score, tc.pass, res.Reason)
			}
			if tc.differs != "" && tc.peerScore == tc.score && tc.peerPass == tc.pass {
				t.Fatalf("case says it differs from the peer (%s) but gives the same numbers", tc.differs)
			}
		})
	}
}

func ref(v any) Example { return Example{Reference: v} }

func TestEvalafToolSelection(t *testing.T) {
	sel := NewToolSelectionEvaluator("")
	runPeerCases(t, []peerCase{
		{name: "single tool", ev: sel, ex: ref("search_papers"), output: "search_papers", score: 1, pass: true},
		{name: "partial", ev: sel, ex: ref([]string{"search_papers", "summarize"}), output: []string{"search_papers"}, score: 0.5},
		{name: "tools key any order", ev: sel, ex: ref([]any{"a", "b"}), output: map[string]any{"tools": []any{"b", "a"}}, score: 1, pass: true},
		{name: "tool key", ev: sel, ex: ref("get_weather"), output: map[string]any{"tool": "get_weather"}, score: 1, pass: true},
		{name: "selected_tools key", ev: sel, ex: ref(map[string]any{"tools": []any{"a"}}), output: map[string]any{"selected_tools": []any{"a"}}, score: 1, pass: true},
		{name: "names trimmed", ev: sel, ex: ref(" a "), output: "a\n", score: 1, pass: true},
		{name: "case-sensitive", ev: sel, ex: ref("Search"), output: "search", score: 0},
		{name: "no tools selected", ev: sel, ex: ref([]string{"a", "b"}), output: []string{}, score: 0},
		{name: "extra tool fails exact set", ev: sel, ex: ref([]string{"a"}), output: []string{"a", "b"}, score: 1},
		{name: "expected from metadata.expected_tool", ev: sel,
			ex: Example{Reference: "question", Metadata: map[string]any{"expected_tool": "get_weather"}}, output: "get_weather", score: 1, pass: true},
		{name: "duplicates in actual", ev: sel, ex: ref([]string{"a", "b"}), output: []string{"a", "a"},
			score: 0.5, pass: false, peerScore: 0.5, peerPass: true, differs: "evalaf setsEqual is one-way: [a,a] passes for [a,b]"},
		{name: "duplicates in expected", ev: sel, ex: ref([]string{"a", "a"}), output: []string{"a", "b"}, score: 0.5},
		{name: "duplicates both", ev: sel, ex: ref([]string{"a", "a"}), output: []string{"a", "a"},
			score: 1, pass: true, peerScore: 0.5, peerPass: true, differs: "evalaf's unique intersection counts a once over a denominator of 2"},
		{name: "both empty", ev: sel, ex: ref([]string{}), output: []string{},
			score: 1, pass: true, peerScore: 0, peerPass: false, differs: "evalaf: error 'no expected tools specified'"},
		{name: "none expected, some called", ev: sel, ex: ref([]string{}), output: []string{"a"}, score: 0,
			peerScore: 0, peerPass: true, differs: "evalaf: error; here calling a tool when none is expected fails"},
	})
}

func TestEvalafReasons(t *testing.T) {
	sel := NewToolSelectionEvaluator("")
	for _, tc := range []struct {
		want, got any
		reason    string
	}{
		{[]string{"a", "b"}, []string{"b", "a"}, "Expected: [a b], Got: [b a] ✓"},
		{[]string{"a", "b"}, []string{"a"}, "Expected: [a b], Got: [a] (partial match: [a])"},
		{[]string{"a"}, []string{"c"}, "Expected: [a], Got: [c] ✗"},
		{[]string{"a"}, []string{}, "No tools selected"},
	} {
		res, err := sel.Evaluate(context.Background(), ref(tc.want), tc.got)
		if err != nil || res.Reason != tc.reason {
			t.Errorf("reason %q (err %v), want %q", res.Reason, err, tc.reason)
		}
	}
}

func TestEvalafToolSequence(t *testing.T) {
	seq := NewToolCallSequenceEvaluator("")
	want := []string{"search_papers", "summarize", "format_output"}
	runPeerCases(t, []peerCase{
		{name: "exact", ev: seq, ex: ref(want), output: want, score: 1, pass: true},
		{name: "tool_sequence key prefix", ev: seq, ex: ref(want), output: map[string]any{"tool_sequence": []any{"search_papers", "summarize"}}, score: 2.0 / 3},
		{name: "swapped", ev: seq, ex: ref([]string{"a", "b", "c"}), output: []string{"a", "c", "b"}, score: 2.0 / 3},
		{name: "metadata.expected_sequence wins", ev: seq,
			ex:     Example{Reference: []any{"search_papers", "summarize"}, Metadata: map[string]any{"expected_sequence": []any{"search_papers", "summarize", "format"}}},
			output: []string{"search_papers", "summarize", "format"}, score: 1, pass: true},
		{name: "repeated call counts once per occurrence", ev: seq, ex: ref([]string{"a", "a", "b"}), output: []string{"a", "b"}, score: 2.0 / 3},
		{name: "nothing called", ev: seq, ex: ref([]string{"a"}), output: []string{}, score: 0},
		{name: "both empty", ev: seq, ex: ref([]string{}), output: []string{},
			score: 1, pass: true, peerScore: 0, peerPass: true, differs: "evalaf returns 0 when expected is empty"},
	})
	// evalaf's LCS tie rule: [a,b,c] vs [a,c,b] reconstructs [a,c].
	res, err := seq.Evaluate(context.Background(), ref([]string{"a", "b", "c"}), []string{"a", "c", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(res.Details["lcs"]); string(got) != `["a","c"]` {
		t.Fatalf("lcs = %s, want [\"a\",\"c\"]", got)
	}
	if res.Reason != "Expected sequence: [a b c], Got: [a c b] (similarity: 0.67)" {
		t.Fatalf("reason %q", res.Reason)
	}
}

func TestEvalafClassificationAndConfidence(t *testing.T) {
	cls := NewClassificationEvaluator("", []string{"question", "search"})
	conf := NewConfidenceEvaluator("", 0.7)
	runPeerCases(t, []peerCase{
		{name: "string", ev: cls, ex: ref("question"), output: "question", score: 1, pass: true},
		{name: "classification key, case and space", ev: cls, ex: ref("question"), output: map[string]any{"classification": " Question ", "confidence": 0.95}, score: 1, pass: true},
		{name: "route_type key", ev: cls, ex: ref("question"), output: map[string]any{"route_type": "search", "confidence": 0.9}, score: 0},
		{name: "above", ev: conf, output: map[string]any{"classification": "question", "confidence": 0.95}, score: 0.95, pass: true},
		{name: "at threshold", ev: conf, output: map[string]any{"confidence": 0.7}, score: 0.7, pass: true},
		{name: "below", ev: conf, output: map[string]any{"confidence": 0.5}, score: 0.5},
		{name: "integer", ev: conf, output: map[string]any{"confidence": 1}, score: 1, pass: true},
		{name: "above 1", ev: conf, output: map[string]any{"confidence": 1.2}, score: 0},
		{name: "negative", ev: conf, output: map[string]any{"confidence": -0.1}, score: 0},
	})
	// evalaf's reason strings (classification.go).
	for _, tc := range []struct {
		ev     Evaluator
		ex     Example
		output any
		reason string
	}{
		{cls, ref("Question"), map[string]any{"route_type": " question "}, `Expected: "question", Got: "question" ✓`},
		{cls, ref("question"), "search", `Expected: "question", Got: "search" ✗`},
		{conf, Example{}, map[string]any{"confidence": 0.95}, "Confidence: 0.95 (threshold: 0.70) ✓"},
		{conf, Example{}, map[string]any{"confidence": 0.5}, "Confidence: 0.50 (threshold: 0.70) ✗"},
		{conf, Example{}, map[string]any{"confidence": 1.5}, "Confidence 1.50 out of range [0, 1]"},
	} {
		res, err := tc.ev.Evaluate(context.Background(), tc.ex, tc.output)
		if err != nil || res.Reason != tc.reason {
			t.Errorf("reason %q (err %v), want %q", res.Reason, err, tc.reason)
		}
	}
	// Where evalaf scores a missing confidence 0 (fail), it is an error here.
	if _, err := conf.Evaluate(context.Background(), Example{}, map[string]any{"classification": "q"}); !errors.Is(err, ErrNoConfidence) {
		t.Fatalf("missing confidence: err = %v, want ErrNoConfidence", err)
	}
	// evalaf replaces an out-of-range threshold with 0.7 silently; here it is an error.
	if _, err := NewConfidenceEvaluator("", 1.5).Evaluate(context.Background(), Example{}, 0.9); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("threshold 1.5: err = %v, want ErrInvalidOption", err)
	}
	if res, _ := NewConfidenceEvaluator("", 0).Evaluate(context.Background(), Example{}, 0.69); res.Pass {
		t.Fatal("threshold 0 must mean the default 0.7")
	}
}

// TestEvalafCompleteExample runs the two cases of evalaf's "Complete Agent Evaluation
// Example" (the seed, evalaf-agent-evaluators.md) through its four evaluators, and the
// collector's default ones, on a run that did what each case expects. Case 1's reference is
// a class label ("question") and its tool is in metadata: no tool evaluator may read the
// label as a tool (evalaf's sequence evaluator rejects a string reference), so the case
// passes.
func TestEvalafCompleteExample(t *testing.T) {
	weatherCase := Example{Input: "What is the weather in Paris?", Reference: "question",
		Metadata: map[string]any{"expected_tool": "get_weather"}}
	docsCase := Example{Input: "Find all documents about AI", Reference: "search", Metadata: map[string]any{
		"expected_tools": []string{"search", "filter"}, "expected_sequence": []string{"search", "filter", "rank"}}}
	weatherOut := map[string]any{"classification": "question", "confidence": 0.95, "tools": []string{"get_weather"}}
	docsOut := map[string]any{"classification": "search", "confidence": 0.9,
		"tools": []string{"search", "filter"}, "tool_sequence": []string{"search", "filter", "rank"}}
	// What the collector reads from a session (processor sessionOutput).
	sessionOut := map[string]any{
		"tool_calls":   []any{map[string]any{"name": "get_weather", "args": map[string]any{"city": "Paris"}}},
		"interactions": []any{map[string]any{"node_name": "assistant", "messages": "Sunny, 21C"}},
		"output":       "Sunny, 21C", "classification": "Sunny, 21C",
	}
	tests := []struct {
		name   string
		ev     Evaluator
		ex     Example
		output any
		score  float64
		pass   bool
		err    error
	}{
		{name: "1/classification", ev: NewClassificationEvaluator("classification", []string{"question", "search"}), ex: weatherCase, output: weatherOut, score: 1, pass: true},
		{name: "1/confidence", ev: NewConfidenceEvaluator("confidence", 0.7), ex: weatherCase, output: weatherOut, score: 0.95, pass: true},
		{name: "1/tool_selection", ev: NewToolSelectionEvaluator("tool_selection"), ex: weatherCase, output: weatherOut, score: 1, pass: true},
		{name: "1/sequence: the class label is not a sequence", ev: NewToolCallSequenceEvaluator("sequence"), ex: weatherCase, output: weatherOut, err: ErrNoReference},
		{name: "1/trajectory: the class label is not a trajectory", ev: NewTrajectoryMatchEvaluator("", TrajectoryOptions{}), ex: weatherCase, output: weatherOut, err: ErrNoReference},
		{name: "1/session output/tool_selection", ev: NewToolSelectionEvaluator(""), ex: weatherCase, output: sessionOut, score: 1, pass: true},
		{name: "1/session output/tool_sequence", ev: NewToolCallSequenceEvaluator(""), ex: weatherCase, output: sessionOut, err: ErrNoReference},
		{name: "1/session output/interactions", ev: NewInteractionsEvaluator("", InteractionsOptions{}), ex: weatherCase, output: sessionOut, err: ErrNoReference},
		{name: "2/classification", ev: NewClassificationEvaluator("classification", []string{"question", "search"}), ex: docsCase, output: docsOut, score: 1, pass: true},
		{name: "2/tool_selection", ev: NewToolSelectionEvaluator("tool_selection"), ex: docsCase, output: docsOut, score: 1, pass: true},
		{name: "2/sequence reads tool_sequence, not tools", ev: NewToolCallSequenceEvaluator("sequence"), ex: docsCase, output: docsOut, score: 1, pass: true},
		{name: "2/trajectory: the class label is not a trajectory", ev: NewTrajectoryMatchEvaluator("", TrajectoryOptions{}), ex: docsCase, output: docsOut, err: ErrNoReference},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.ev.Evaluate(context.Background(), tt.ex, tt.output)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v (result %+v), want %v", err, res, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if math.Abs(res.Score-tt.score) > 1e-9 || res.Pass != tt.pass {
				t.Fatalf("got score %v pass %t, want %v %t (reason %q)", res.Score, res.Pass, tt.score, tt.pass, res.Reason)
			}
		})
	}
	// With the collector's default evaluators the case is tool selection alone, and passes.
	cr := Run(context.Background(), []Evaluator{NewToolSelectionEvaluator(""), NewToolCallSequenceEvaluator(""),
		NewInteractionsEvaluator("", InteractionsOptions{})}, weatherCase, sessionOut)
	if len(cr.Results) != 1 || !cr.Pass || cr.Score != 1 || len(cr.Errors) != 0 {
		t.Fatalf("case result %+v, want tool_selection alone, passing with 1", cr)
	}
}

// messages builds an OpenAI message list: "user", "tool", "assistant" are text messages;
// a []ToolCall is one assistant message with those calls.
func messages(steps ...any) []any {
	out := make([]any, 0, len(steps))
	for _, s := range steps {
		switch v := s.(type) {
		case string:
			out = append(out, map[string]any{"role": v, "content": "..."})
		case []ToolCall:
			calls := make([]any, len(v))
			for i, c := range v {
				args, _ := json.Marshal(c.Args)
				calls[i] = map[string]any{"function": map[string]any{"name": c.Name, "arguments": string(args)}}
			}
			out = append(out, map[string]any{"role": "assistant", "tool_calls": calls})
		}
	}
	return out
}

func weather(city string) ToolCall {
	return ToolCall{Name: "get_weather", Args: map[string]any{"city": city}}
}

func TestAgentevalsTrajectoryModes(t *testing.T) {
	modes := []TrajectoryMode{TrajectoryUnordered, TrajectorySuperset, TrajectorySubset, TrajectoryStrict}
	// Each row: python/tests/test_trajectory.py, scores in the order unordered, superset,
	// subset, strict (those tests compare names only: args mode ignore).
	rows := []struct {
		name      string
		out, want []any
		scores    [4]float64
	}{
		{"test_trajectory_match",
			messages("user", []ToolCall{weather("SF")}, "tool", "assistant"),
			messages("user", []ToolCall{weather("San Francisco")}, "tool", "assistant"),
			[4]float64{1, 1, 1, 1}},
		{"test_trajectory_with_different_tool_message_order",
			messages("user", []ToolCall{weather("SF"), weather("London")}, "tool", "tool", "assistant"),
			messages("user", []ToolCall{weather("London"), weather("SF")}, "tool", "tool", "assistant"),
			[4]float64{1, 1, 1, 1}},
		{"test_trajectory_with_different_message_count",
			messages("user", []ToolCall{weather("SF")}, "tool", []ToolCall{weather("London")}, "tool", "assistant"),
			messages("user", []ToolCall{weather("London"), weather("SF")}, "tool", "tool", "assistant"),
			[4]float64{1, 1, 1, 0}},
		{"test_trajectory_subset_tool_call",
			messages("user", []ToolCall{weather("SF")}, "tool", "assistant"),
			messages("user", []ToolCall{weather("London"), weather("SF")}, "tool", "tool", "assistant"),
			[4]float64{0, 0, 1, 0}},
		{"test_exact_matcher_with_different_called_tools",
			messages("user", []ToolCall{weather("SF")}, "tool", "assistant"),
			messages("user", []ToolCall{{Name: "accuweather_forecast", Args: map[string]any{"city": "San Francisco"}}}, "tool", "assistant"),
			[4]float64{0, 0, 0, 0}},
		{"test_trajectory_with_extra_tool_calls",
			messages("user", []ToolCall{weather("San Francisco"), weather("London")}, "tool", "tool", "assistant"),
			messages("user", []ToolCall{weather("SF and London")}, "tool", "assistant"),
			[4]float64{0, 1, 0, 0}},
	}
	var cases []peerCase
	for _, r := range rows {
		for i, m := range modes {
			ev := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: m, ArgsMode: ArgsIgnore})
			cases = append(cases, peerCase{name: r.name + "/" + string(m), ev: ev, ex: ref(r.want), output: r.out,
				score: r.scores[i], pass: r.scores[i] == 1})
		}
	}
	runPeerCases(t, cases)
}

func TestAgentevalsArgsModes(t *testing.T) {
	out := []any{map[string]any{"name": "get_weather", "args": map[string]any{"city": "SF"}}}
	want := []any{map[string]any{"name": "get_weather", "args": map[string]any{"city": "SF", "unit": "C"}}}
	// python/agentevals/trajectory/utils.py: subset = output args ⊆ reference args,
	// superset = output args ⊇ reference args.
	for _, tc := range []struct {
		mode ArgsMode
		pass bool
	}{{ArgsExact, false}, {ArgsIgnore, true}, {ArgsSubset, true}, {ArgsSuperset, false}} {
		res, err := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryStrict, ArgsMode: tc.mode}).
			Evaluate(context.Background(), ref(want), out)
		if err != nil || res.Pass != tc.pass {
			t.Errorf("args %s: pass %t err %v, want %t", tc.mode, res.Pass, err, tc.pass)
		}
	}
	// Per-tool overrides: a mode, key paths, a function.
	book := func(start, end string) []any {
		return []any{map[string]any{"name": "book", "arguments": `{"time":{"start":"` + start + `","end":"` + end + `"}}`}}
	}
	for _, tc := range []struct {
		name string
		ov   ArgsMatcher
		pass bool
	}{
		{"keys equal", ArgsMatcher{Keys: []string{"time.start"}}, true},
		{"keys differ", ArgsMatcher{Keys: []string{"time.end"}}, false},
		{"mode", ArgsMatcher{Mode: ArgsIgnore}, true},
		{"func", ArgsMatcher{Func: func(o, r map[string]any) bool { return o["time"] != nil && r["time"] != nil }}, true},
	} {
		ev := NewTrajectoryMatchEvaluator("", TrajectoryOptions{ArgsOverrides: map[string]ArgsMatcher{"book": tc.ov}})
		res, err := ev.Evaluate(context.Background(), ref(book("9", "10")), book("9", "11"))
		if err != nil || res.Pass != tc.pass {
			t.Errorf("override %s: pass %t err %v, want %t", tc.name, res.Pass, err, tc.pass)
		}
	}
	// Numbers compare by value whatever their Go type.
	res, err := NewTrajectoryMatchEvaluator("", TrajectoryOptions{}).Evaluate(context.Background(),
		ref([]any{map[string]any{"name": "t", "args": map[string]any{"n": 1}}}),
		[]any{map[string]any{"name": "t", "arguments": `{"n": 1.0}`}})
	if err != nil || !res.Pass {
		t.Errorf("1 vs 1.0: pass %t err %v", res.Pass, err)
	}
}

func TestDuplicateCallsAreMatchedOneToOne(t *testing.T) {
	// deepeval#3141 / ragas#1658: a repeated call must not satisfy two expected calls, and
	// the verdict must not depend on list order. With subset argument matching, agentevals'
	// greedy first-fit gives out[0] to want[0] and then finds nothing for want[1]; the
	// maximum matching pairs want[0]-out[1] and want[1]-out[0].
	want := []any{
		map[string]any{"name": "q", "args": map[string]any{"a": 1, "b": 2}},
		map[string]any{"name": "q", "args": map[string]any{"a": 1}},
	}
	out := []any{
		map[string]any{"name": "q", "args": map[string]any{"a": 1}},
		map[string]any{"name": "q", "args": map[string]any{"b": 2}},
	}
	ev := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryUnordered, ArgsMode: ArgsSubset})
	res, err := ev.Evaluate(context.Background(), ref(want), out)
	if err != nil || !res.Pass {
		t.Fatalf("unordered subset-args: pass %t err %v (%s)", res.Pass, err, res.Reason)
	}
	res, _ = NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectorySuperset, ArgsMode: ArgsIgnore}).
		Evaluate(context.Background(), ref([]string{"a", "a"}), []string{"a"})
	if res.Pass {
		t.Fatal("one call satisfied two expected calls")
	}
}

func TestStrandsScorers(t *testing.T) {
	pc := func(m TrajectoryMode) Evaluator {
		return NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: m, ArgsMode: ArgsIgnore, PartialCredit: true})
	}
	abc := []string{"a", "b", "c"}
	runPeerCases(t, []peerCase{
		{name: "exact_match_scorer", ev: pc(TrajectoryStrict), ex: ref(abc), output: []string{"a", "c", "b"}, score: 1.0 / 3},
		{name: "exact_match_scorer shorter", ev: pc(TrajectoryStrict), ex: ref(abc), output: []string{"a", "b"}, score: 2.0 / 3},
		{name: "in_order_match_scorer", ev: pc(TrajectoryInOrder), ex: ref(abc), output: []string{"a", "c", "b"}, score: 2.0 / 3},
		{name: "in_order_match_scorer extras", ev: pc(TrajectoryInOrder), ex: ref(abc), output: []string{"x", "a", "b", "y", "c"}, score: 1, pass: true},
		{name: "in_order_match_scorer empty expected", ev: pc(TrajectoryInOrder), ex: ref([]string{}), output: []string{"a"}, score: 1, pass: true},
		{name: "any_order_match_scorer", ev: pc(TrajectoryAnyOrder), ex: ref(abc), output: []string{"c", "a"}, score: 2.0 / 3},
		{name: "any_order_match_scorer empty expected", ev: pc(TrajectoryAnyOrder), ex: ref([]string{}), output: []string{"a"}, score: 1, pass: true},
		{name: "any_order_match_scorer one of two", ev: pc(TrajectoryAnyOrder), ex: ref([]string{"a", "a"}), output: []string{"a"}, score: 0.5},
		{name: "any_order_match_scorer duplicates", ev: pc(TrajectoryAnyOrder), ex: ref([]string{"a", "a"}), output: []string{"a", "a"},
			score: 1, pass: true, peerScore: 0.5, peerPass: true, differs: "strands intersects sets: {a} ∩ {a} over 2 expected"},
		{name: "exact_match_scorer both empty", ev: pc(TrajectoryStrict), ex: ref([]string{}), output: []string{},
			score: 1, pass: true, peerScore: 0, differs: "strands raises ZeroDivisionError on an empty expected list"},
	})
}

func TestADKTrajectory(t *testing.T) {
	inOrder := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryInOrder})
	anyOrder := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryAnyOrder})
	exact := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryStrict})
	ignoreArgs := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryInOrder, ArgsMode: ArgsIgnore})
	call := func(name string, q float64) map[string]any {
		return map[string]any{"name": name, "args": map[string]any{"q": q}}
	}
	runPeerCases(t, []peerCase{
		{name: "IN_ORDER extras between", ev: inOrder, ex: ref([]string{"a", "b"}), output: []string{"a", "x", "b"}, score: 1, pass: true},
		{name: "IN_ORDER reversed", ev: inOrder, ex: ref([]string{"a", "b"}), output: []string{"b", "a"}, score: 0},
		{name: "IN_ORDER empty expected", ev: inOrder, ex: ref([]string{}), output: []string{"x"}, score: 1, pass: true},
		{name: "ANY_ORDER", ev: anyOrder, ex: ref([]string{"a", "b"}), output: []string{"b", "x", "a"}, score: 1, pass: true},
		{name: "ANY_ORDER multiset", ev: anyOrder, ex: ref([]string{"a", "a"}), output: []string{"a"}, score: 0},
		{name: "EXACT extra call", ev: exact, ex: ref([]string{"a", "b"}), output: []string{"a", "b", "c"}, score: 0},
		{name: "args differ", ev: inOrder, ex: ref([]any{call("a", 1)}), output: []any{call("a", 2)}, score: 0},
		{name: "ignore_args", ev: ignoreArgs, ex: ref([]any{call("a", 1)}), output: []any{call("a", 2)}, score: 1, pass: true},
	})
}

// fakeJudge answers every call with a fixed verdict and records the requests.
type fakeJudge struct {
	verdict JudgeVerdict
	err     error
	reqs    []JudgeRequest
}

func (f *fakeJudge) Judge(_ context.Context, r JudgeRequest) (JudgeVerdict, error) {
	f.reqs = append(f.reqs, r)
	return f.verdict, f.err
}

func TestStrandsInteractionsAggregation(t *testing.T) {
	actual := []Interaction{
		{NodeName: "planner", Messages: "Created execution plan"},
		{NodeName: "executor", Dependencies: []string{"planner"}, Messages: "Executed plan steps"},
		{NodeName: "validator", Dependencies: []string{"executor"}, Messages: "Validated results"},
	}
	ex := Example{Input: "Process data pipeline", Metadata: map[string]any{
		"expected_interactions": []any{
			map[string]any{"node_name": "planner", "dependencies": []any{}, "messages": "Plan created"},
			map[string]any{"node_name": "executor", "dependencies": []any{"planner"}, "messages": "Executed"},
			map[string]any{"node_name": "validator", "dependencies": []any{"executor"}, "messages": "Validated"},
		},
		"expected_output": "Task completed",
	}}
	// strands' tests mock the judge with EvaluationOutput(score=0.85, test_pass=True): the
	// case score is the mean (0.85) and it passes.
	j := &fakeJudge{verdict: JudgeVerdict{Score: 0.85, Pass: true, Reason: "ok"}}
	ev := NewInteractionsEvaluator("", InteractionsOptions{Rubric: "r", Judge: j})
	res, err := ev.Evaluate(context.Background(), ex, map[string]any{"output": "Task completed", "interactions": actual})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Score-0.85) > 1e-9 || !res.Pass || len(j.reqs) != 3 {
		t.Fatalf("score %v pass %t calls %d", res.Score, res.Pass, len(j.reqs))
	}
	// Deterministic part alone: a perfect run.
	res, _ = NewInteractionsEvaluator("", InteractionsOptions{}).Evaluate(context.Background(), ex, actual)
	if res.Score != 1 || !res.Pass || res.Details["dependency_compliance"] != 1.0 {
		t.Fatalf("deterministic: %+v", res)
	}
	// Empty actual interactions: strands' fixed verdict.
	res, _ = NewInteractionsEvaluator("", InteractionsOptions{}).Evaluate(context.Background(), ex, []any{})
	if res.Score != 0 || res.Pass || res.Reason != "No interactions were evaluated. Ensure actual_interactions is not empty." {
		t.Fatalf("empty: %+v", res)
	}
	// Both empty: 1.0 (our rule).
	res, _ = NewInteractionsEvaluator("", InteractionsOptions{}).Evaluate(context.Background(),
		Example{Metadata: map[string]any{"expected_interactions": []any{}}}, []any{})
	if res.Score != 1 || !res.Pass {
		t.Fatalf("both empty: %+v", res)
	}
	// One failing verdict fails the case; the score stays the mean.
	j2 := &seqJudge{verdicts: []JudgeVerdict{{Score: 1, Pass: true}, {Score: 0.5, Pass: false}, {Score: 0.9, Pass: true}}}
	res, _ = NewInteractionsEvaluator("", InteractionsOptions{Rubric: "r", Judge: j2}).Evaluate(context.Background(), ex, actual)
	if math.Abs(res.Score-0.8) > 1e-9 || res.Pass {
		t.Fatalf("mixed verdicts: %+v", res)
	}
}

type seqJudge struct {
	verdicts []JudgeVerdict
	n        int
}

func (s *seqJudge) Judge(context.Context, JudgeRequest) (JudgeVerdict, error) {
	v := s.verdicts[s.n%len(s.verdicts)]
	s.n++
	return v, nil
}
