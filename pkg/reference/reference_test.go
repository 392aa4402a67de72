// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOutputShapes(t *testing.T) {
	type agentOut struct {
		Tools []string `json:"tools"`
	}
	want := []string{"search", "filter"}
	for name, out := range map[string]any{
		"[]string":           []string{"search", "filter"},
		"[]any":              []any{"search", "filter"},
		"tools key":          map[string]any{"tools": want},
		"tool_sequence key":  map[string]any{"tool_sequence": want},
		"struct":             agentOut{Tools: want},
		"json.RawMessage":    json.RawMessage(`{"selected_tools":["search","filter"]}`),
		"tool-call objects":  []any{map[string]any{"tool_name": "search"}, map[string]any{"name": "filter", "arguments": `{"k":1}`}},
		"OpenAI messages":    messages("user", []ToolCall{{Name: "search"}}, "tool", []ToolCall{{Name: "filter"}}, "assistant"),
		"messages key":       map[string]any{"messages": messages([]ToolCall{{Name: "search"}, {Name: "filter"}})},
		"function tool call": []any{map[string]any{"type": "function", "function": map[string]any{"name": "search", "arguments": "{}"}}, "filter"},
	} {
		res, err := NewToolCallSequenceEvaluator("").Evaluate(context.Background(), ref(want), out)
		if err != nil || !res.Pass {
			t.Errorf("%s: pass %t err %v reason %q", name, res.Pass, err, res.Reason)
		}
	}
}

// TestOwnListKeys: an output object carrying several tool lists gives each evaluator its
// own: selection reads `tool`/`tools`, sequence `tool_sequence`/`sequence` (evalaf's
// sequence evaluator reads only these), trajectory `trajectory`/`messages`/`tool_calls`.
func TestOwnListKeys(t *testing.T) {
	both := map[string]any{"tools": []string{"x"}, "tool_sequence": []string{"search", "filter", "rank"}}
	msgs := messages("user", []ToolCall{weather("SF")}, "tool", "assistant")
	tests := []struct {
		name   string
		ev     Evaluator
		want   any
		output any
	}{
		{"sequence reads tool_sequence before tools", NewToolCallSequenceEvaluator(""), []string{"search", "filter", "rank"}, both},
		{"sequence reads sequence before tool", NewToolCallSequenceEvaluator(""), []string{"a", "b"}, map[string]any{"tool": "x", "sequence": []string{"a", "b"}}},
		{"selection reads tools before tool_sequence", NewToolSelectionEvaluator(""), []string{"x"}, both},
		{"selection reads tool before sequence", NewToolSelectionEvaluator(""), []string{"x"}, map[string]any{"tool": "x", "sequence": []string{"a", "b"}}},
		{"trajectory reads messages before tools", NewTrajectoryMatchEvaluator("", TrajectoryOptions{}), msgs,
			map[string]any{"tools": []string{"get_weather", "search"}, "messages": msgs}},
		{"trajectory reads tool_calls before tools", NewTrajectoryMatchEvaluator("", TrajectoryOptions{}), []string{"a", "b"},
			map[string]any{"tools": []string{"b"}, "tool_calls": []string{"a", "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.ev.Evaluate(context.Background(), ref(tt.want), tt.output)
			if err != nil || !res.Pass || res.Score != 1 {
				t.Fatalf("score %v pass %t err %v, want 1 and pass (reason %q)", res.Score, res.Pass, err, res.Reason)
			}
		})
	}
}

// TestSingleToolCallObject: a top-level tool-call object keeps its arguments whichever
// name key it uses, as the same call does inside a list; {"tool": name} alone is a name.
func TestSingleToolCallObject(t *testing.T) {
	call := func(nameKey, argsKey, q string) map[string]any {
		return map[string]any{nameKey: "search", argsKey: map[string]any{"q": q}}
	}
	exact := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryStrict, ArgsMode: ArgsExact})
	tests := []struct {
		name      string
		want, out any
		pass      bool
	}{
		{"tool key, args differ", call("tool", "args", "a"), call("tool", "args", "b"), false},
		{"tool key, arguments differ", call("tool", "arguments", "a"), call("tool", "arguments", "b"), false},
		{"tool key, input differs", call("tool", "input", "a"), call("tool", "input", "b"), false},
		{"tool key, args equal", call("tool", "args", "a"), call("tool", "args", "a"), true},
		{"tool key vs name key, same call", call("tool", "args", "a"), call("name", "parameters", "a"), true},
		{"name key, args differ", call("name", "args", "a"), call("name", "args", "b"), false},
		{"in a list, args differ", []any{call("tool", "args", "a")}, []any{call("tool", "args", "b")}, false},
		{"tool key alone is a name", map[string]any{"tool": "search"}, []string{"search"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := exact.Evaluate(context.Background(), ref(tt.want), tt.out)
			if err != nil || res.Pass != tt.pass {
				t.Fatalf("pass %t err %v, want %t (reason %q)", res.Pass, err, tt.pass, res.Reason)
			}
		})
	}
}

// TestModeNames: mode and argument-mode names are case-insensitive (ADK writes IN_ORDER,
// ANY_ORDER, EXACT), ADK's EXACT is strict, and Validate (what the processor's config
// check calls) agrees with the evaluator.
func TestModeNames(t *testing.T) {
	call := func(q float64) []any { return []any{map[string]any{"name": "a", "args": map[string]any{"q": q}}} }
	tests := []struct {
		name             string
		opts             TrajectoryOptions
		mode, argsMode   string
		want, out        any
		pass             bool
		overrideArgsMode ArgsMode
	}{
		{name: "EXACT is strict", opts: TrajectoryOptions{Mode: "EXACT"}, mode: "strict", argsMode: "exact",
			want: []string{"a", "b"}, out: []string{"a", "b", "c"}, pass: false},
		{name: "exact is strict", opts: TrajectoryOptions{Mode: "exact"}, mode: "strict", argsMode: "exact",
			want: []string{"a", "b"}, out: []string{"a", "b"}, pass: true},
		{name: "IN_ORDER", opts: TrajectoryOptions{Mode: "IN_ORDER"}, mode: "in_order", argsMode: "exact",
			want: []string{"a", "b"}, out: []string{"a", "x", "b"}, pass: true},
		{name: "Any_Order, padded", opts: TrajectoryOptions{Mode: " Any_Order "}, mode: "any_order", argsMode: "exact",
			want: []string{"a", "b"}, out: []string{"b", "a"}, pass: true},
		{name: "args EXACT", opts: TrajectoryOptions{ArgsMode: "EXACT"}, mode: "strict", argsMode: "exact",
			want: call(1), out: call(2), pass: false},
		{name: "args IGNORE", opts: TrajectoryOptions{ArgsMode: "IGNORE"}, mode: "strict", argsMode: "ignore",
			want: call(1), out: call(2), pass: true},
		{name: "override Ignore", opts: TrajectoryOptions{ArgsOverrides: map[string]ArgsMatcher{"a": {Mode: "Ignore"}}}, mode: "strict", argsMode: "exact",
			want: call(1), out: call(2), pass: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.opts.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			res, err := NewTrajectoryMatchEvaluator("", tt.opts).Evaluate(context.Background(), ref(tt.want), tt.out)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if res.Details["mode"] != tt.mode || res.Details["args_mode"] != tt.argsMode || res.Pass != tt.pass {
				t.Fatalf("mode %v args_mode %v pass %t, want %s %s %t (reason %q)",
					res.Details["mode"], res.Details["args_mode"], res.Pass, tt.mode, tt.argsMode, tt.pass, res.Reason)
			}
		})
	}
}

// TestConfidenceShapes: a typed Go value holding NaN or ±Inf, which json.Marshal refuses,
// gives what the same value gives as map[string]any: NaN or out of range scores 0 and
// fails; a typed value without a confidence is still ErrNoConfidence.
func TestConfidenceShapes(t *testing.T) {
	type withTag struct {
		C float64 `json:"confidence"`
	}
	type noTag struct{ Confidence float64 }
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name   string
		output any
		score  float64
		pass   bool
		err    error
	}{
		{name: "map[string]any NaN", output: map[string]any{"confidence": nan}},
		{name: "map[string]float64 NaN", output: map[string]float64{"confidence": nan}},
		{name: "map[string]float64 +Inf", output: map[string]float64{"confidence": inf}},
		{name: "pointer to map NaN", output: &map[string]float64{"confidence": nan}},
		{name: "map[string]any typed NaN", output: map[string]any{"confidence": float32(nan), "x": inf}},
		{name: "struct json tag NaN", output: withTag{C: nan}},
		{name: "pointer to struct NaN", output: &withTag{C: nan}},
		{name: "map[string]float64", output: map[string]float64{"confidence": 0.9}, score: 0.9, pass: true},
		{name: "map[string]float64 without confidence", output: map[string]float64{"other": nan}, err: ErrNoConfidence},
		{name: "struct field without tag", output: noTag{Confidence: nan}, err: ErrNoConfidence},
		{name: "bare NaN", output: nan},
	}
	ev := NewConfidenceEvaluator("", 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ev.Evaluate(context.Background(), Example{}, tt.output)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || res.Score != tt.score || res.Pass != tt.pass {
				t.Fatalf("score %v pass %t err %v, want %v %t", res.Score, res.Pass, err, tt.score, tt.pass)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		ev     Evaluator
		ex     Example
		output any
		want   error
	}{
		"selection without reference":      {NewToolSelectionEvaluator(""), Example{Input: "x"}, "a", ErrNoReference},
		"sequence without reference":       {NewToolCallSequenceEvaluator(""), Example{}, []string{"a"}, ErrNoReference},
		"classification without reference": {NewClassificationEvaluator("", nil), Example{}, "a", ErrNoReference},
		"trajectory without reference":     {NewTrajectoryMatchEvaluator("", TrajectoryOptions{}), Example{}, "a", ErrNoReference},
		"interactions without reference":   {NewInteractionsEvaluator("", InteractionsOptions{}), Example{}, []any{}, ErrNoReference},
		"number as tools":                  {NewToolSelectionEvaluator(""), ref("a"), 42.0, ErrBadShape},
		"non-string in sequence":           {NewToolCallSequenceEvaluator(""), ref([]any{"a", 1.0}), []string{"a"}, ErrBadShape},
		"classification of a list":         {NewClassificationEvaluator("", nil), ref("q"), []any{"q"}, ErrBadShape},
		"arguments not JSON":               {NewTrajectoryMatchEvaluator("", TrajectoryOptions{}), ref([]any{"a"}), []any{map[string]any{"name": "a", "arguments": "{"}}, ErrBadShape},
		"interaction not an object":        {NewInteractionsEvaluator("", InteractionsOptions{}), Example{Reference: []any{}}, []any{"x"}, ErrBadShape},
		"tool reference, no interactions":  {NewInteractionsEvaluator("", InteractionsOptions{}), ref("get_weather"), []any{}, ErrNoReference},
		"bad expected_interactions":        {NewInteractionsEvaluator("", InteractionsOptions{}), Example{Metadata: map[string]any{"expected_interactions": "x"}}, []any{}, ErrBadShape},
		"bad trajectory mode":              {NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: "loose"}), ref("a"), "a", ErrInvalidOption},
		"bad args override":                {NewTrajectoryMatchEvaluator("", TrajectoryOptions{ArgsOverrides: map[string]ArgsMatcher{"a": {Mode: "fuzzy"}}}), ref("a"), "a", ErrInvalidOption},
	} {
		_, err := tc.ev.Evaluate(ctx, tc.ex, tc.output)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
	err := TrajectoryOptions{ArgsOverrides: map[string]ArgsMatcher{"book": {Mode: "x"}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "args_overrides[book]") {
		t.Errorf("Validate must name the field: %v", err)
	}
}

// TestStringReference: a bare-string reference is a tool name for tool selection only, and
// only when no other evaluator's metadata key is present; for the sequence and trajectory
// evaluators it is never theirs (a class label, evalaf's sequence evaluator rejects it). An
// expected value in the evaluator's own metadata key is read as before, string or not.
func TestStringReference(t *testing.T) {
	sel, seq := NewToolSelectionEvaluator(""), NewToolCallSequenceEvaluator("")
	traj := NewTrajectoryMatchEvaluator("", TrajectoryOptions{})
	tests := []struct {
		name   string
		ev     Evaluator
		ex     Example
		output any
		score  float64 // when err is nil
		err    error
	}{
		{"sequence: string reference", seq, ref("search"), []string{"search"}, 0, ErrNoReference},
		{"sequence: string reference as JSON", seq, ref(json.RawMessage(`"search"`)), []string{"search"}, 0, ErrNoReference},
		{"sequence: empty string reference", seq, ref(""), []string{}, 0, ErrNoReference},
		{"sequence: list reference", seq, ref([]string{"search"}), []string{"search"}, 1, nil},
		{"sequence: string in metadata", seq, Example{Reference: "question", Metadata: map[string]any{"expected_sequence": "search"}}, []string{"search"}, 1, nil},
		{"trajectory: string reference", traj, ref("search"), []string{"search"}, 0, ErrNoReference},
		{"trajectory: tool-call reference", traj, ref(map[string]any{"name": "search"}), []string{"search"}, 1, nil},
		{"trajectory: string in metadata", traj, Example{Metadata: map[string]any{"expected_trajectory": "search"}}, []string{"search"}, 1, nil},
		{"selection: string reference alone", sel, Example{Reference: "get_weather", Metadata: map[string]any{"category": "single_tool"}}, "get_weather", 1, nil},
		{"selection: string reference beside expected_sequence", sel, Example{Reference: "question", Metadata: map[string]any{"expected_sequence": []any{"get_weather"}}}, "get_weather", 0, ErrNoReference},
		{"selection: string reference beside expected_classification", sel, Example{Reference: "question", Metadata: map[string]any{"expected_classification": "question"}}, "get_weather", 0, ErrNoReference},
		{"selection: string reference beside expected_trajectory", sel, Example{Reference: "question", Metadata: map[string]any{"expected_trajectory": []any{"get_weather"}}}, "get_weather", 0, ErrNoReference},
		{"selection: string reference beside expected_interactions", sel, Example{Reference: "question", Metadata: map[string]any{"expected_interactions": []any{}}}, "get_weather", 0, ErrNoReference},
		{"selection: string reference beside expected_output", sel, Example{Reference: "question", Metadata: map[string]any{"expected_output": "sunny"}}, "get_weather", 0, ErrNoReference},
		{"selection: list reference beside expected_sequence", sel, Example{Reference: []any{"search_papers", "summarize"}, Metadata: map[string]any{"expected_sequence": []any{"search_papers", "summarize", "format"}}}, []string{"summarize", "search_papers"}, 1, nil},
		{"selection: own key beside a class label", sel, Example{Reference: "question", Metadata: map[string]any{"expected_tool": "get_weather", "expected_sequence": []any{"x"}}}, "get_weather", 1, nil},
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
			if err != nil || res.Score != tt.score {
				t.Fatalf("score %v err %v, want %v (reason %q)", res.Score, err, tt.score, res.Reason)
			}
		})
	}
}

func TestDataset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ds.json")
	data := `[{"input":"Get the weather in Paris","reference":"get_weather","metadata":{"category":"single_tool"}},
	 {"input":"Search and summarize papers","reference":["search_papers","summarize"],
	  "metadata":{"category":"multi_tool","expected_sequence":["search_papers","summarize","format"]}}]`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadDataset(path)
	if err != nil || len(ds) != 2 || ds[1].Metadata["category"] != "multi_tool" {
		t.Fatalf("LoadDataset: %v %+v", err, ds)
	}
	res, err := NewToolSelectionEvaluator("").Evaluate(context.Background(), ds[1], []string{"summarize", "search_papers"})
	if err != nil || !res.Pass {
		t.Fatalf("selection on dataset case: %+v %v", res, err)
	}
	if _, err := ParseDataset([]byte(`{"input":1}`)); err == nil {
		t.Fatal("an object is not a dataset")
	}
}

func TestInteractionPrompt(t *testing.T) {
	expected := []any{
		map[string]any{"node_name": "planner", "dependencies": []any{}, "messages": "Plan created"},
		map[string]any{"node_name": "executor", "dependencies": []any{"planner"}, "messages": "Executed"},
		map[string]any{"node_name": "validator", "dependencies": []any{"executor"}, "messages": "Validated"},
		map[string]any{"node_name": "reporter", "dependencies": []any{"validator"}, "messages": "Reported"},
	}
	actual := []Interaction{
		{NodeName: "planner", Messages: "Created execution plan"},
		{NodeName: "executor", Dependencies: []string{"planner"}, Messages: "Executed plan steps"},
		{NodeName: "validator", Dependencies: []string{"executor"}, Messages: "Validated results"},
		{NodeName: "reporter", Dependencies: []string{"validator"}, Messages: "Report sent"},
	}
	ex := Example{Input: "Process data pipeline", Metadata: map[string]any{"expected_interactions": expected, "expected_output": "Task completed"}}
	j := &fakeJudge{verdict: JudgeVerdict{Score: 1, Pass: true, Reason: "fine"}}
	ev := NewInteractionsEvaluator("", InteractionsOptions{
		Rubric:                 "generic rubric",
		Rubrics:                map[string]string{"planner": "planning rubric", "executor": "execution rubric"},
		InteractionDescription: map[string]any{"planner": "plans"},
		Judge:                  j,
	})
	if _, err := ev.Evaluate(context.Background(), ex, map[string]any{"output": "Task done", "interactions": actual}); err != nil {
		t.Fatal(err)
	}
	if len(j.reqs) != 4 {
		t.Fatalf("%d judge calls, want one per interaction (4)", len(j.reqs))
	}
	p := func(i int) string { return j.reqs[i].Prompt }
	checks := []struct {
		i        int
		contains string
		want     bool
	}{
		{0, "<Input>Process data pipeline</Input>", true},
		{1, "<Input>", false},
		{0, "<Rubric>planning rubric</Rubric>", true},
		{1, "<Rubric>execution rubric</Rubric>", true},
		{2, "<Rubric>generic rubric</Rubric>", true},
		{0, "<Output>", false},
		{3, "<Output>Task done</Output>", true},
		{3, "<ExpectedOutput>Task completed</ExpectedOutput>", true},
		{3, "<PreviousEvaluation> Interaction 2 (validator): score 1.00", true},
		{0, `<ExpectedSequence>["planner","executor","validator","reporter"]</ExpectedSequence>`, true},
		{0, `<Interaction> Node Name: planner, Depends on [] `, true},
		{1, `<Interaction> Node Name: executor, Depends on ["planner"] `, true},
		{0, `<InteractionDescription>{"planner":"plans"}</InteractionDescription>`, true},
		{3, headerFinal, true},
		{0, headerInteraction, true},
	}
	for _, c := range checks {
		if got := strings.Contains(p(c.i), c.contains); got != c.want {
			t.Errorf("prompt %d contains %q = %t, want %t\n%s", c.i, c.contains, got, c.want, p(c.i))
		}
	}
	// The ±1 window: expected[max(0,i-1):min(n,i+2)].
	windows := [][]string{{"planner", "executor"}, {"planner", "executor", "validator"}, {"executor", "validator", "reporter"}, {"validator", "reporter"}}
	for i, w := range windows {
		got := strings.Count(p(i), "<RelevantExpectedInteraction>")
		if got != len(w) {
			t.Errorf("prompt %d: %d expected interactions in the window, want %d", i, got, len(w))
		}
		for _, n := range w {
			if !strings.Contains(p(i), "<RelevantExpectedInteraction> Node Name: "+n+",") {
				t.Errorf("prompt %d: window lacks %s", i, n)
			}
		}
	}
	if j.reqs[1].Node != "executor" || j.reqs[1].Rubric != "execution rubric" || !j.reqs[3].Last || j.reqs[0].Last {
		t.Errorf("request routing: %+v", j.reqs[1])
	}
	// A list input as long as the interactions: input[i] per call.
	j2 := &fakeJudge{verdict: JudgeVerdict{Score: 1, Pass: true}}
	ex2 := Example{Input: []any{"in0", "in1", "in2", "in3"}, Reference: expected}
	_, _ = NewInteractionsEvaluator("", InteractionsOptions{Rubric: "r", Judge: j2}).Evaluate(context.Background(), ex2, actual)
	if !strings.Contains(j2.reqs[2].Prompt, "<Input>in2</Input>") {
		t.Errorf("list input: prompt 2 = %s", j2.reqs[2].Prompt)
	}
	// Actual longer than expected: the window runs empty (strands indexes it by the actual
	// position).
	long := append(append([]Interaction{}, actual...), Interaction{NodeName: "extra1"}, Interaction{NodeName: "extra2"})
	j3 := &fakeJudge{verdict: JudgeVerdict{Score: 1, Pass: true}}
	_, _ = NewInteractionsEvaluator("", InteractionsOptions{Rubric: "r", Judge: j3}).Evaluate(context.Background(), Example{Reference: expected}, long)
	if strings.Contains(j3.reqs[5].Prompt, "<RelevantExpectedInteraction>") {
		t.Errorf("window of interaction 5 of 4 expected must be empty: %s", j3.reqs[5].Prompt)
	}
}

func TestInteractionsJudgeFailureKeepsDeterministic(t *testing.T) {
	ex := Example{Reference: []Interaction{{NodeName: "a"}, {NodeName: "b", Dependencies: []string{"a"}}}}
	out := []Interaction{{NodeName: "b"}, {NodeName: "a"}}
	for name, opts := range map[string]InteractionsOptions{
		"judge error":    {Rubric: "r", Judge: &fakeJudge{err: errors.New("429 too many requests")}},
		"no rubric":      {Rubrics: map[string]string{"a": "r"}, Judge: &fakeJudge{verdict: JudgeVerdict{Score: 1, Pass: true}}},
		"score out of 1": {Rubric: "r", Judge: &fakeJudge{verdict: JudgeVerdict{Score: 7, Pass: true}}},
	} {
		res, err := NewInteractionsEvaluator("", opts).Evaluate(context.Background(), ex, out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Deterministic: LCS 1 of 2 → 0.5; b requires a, not yet seen → 0; mean 0.25.
		if res.Score != 0.25 || res.Pass || res.Details["judge_error"] == nil {
			t.Errorf("%s: %+v", name, res)
		}
	}
	// Without a reference, a failing judge leaves nothing to report: an error.
	_, err := NewInteractionsEvaluator("", InteractionsOptions{Rubric: "r", Judge: &fakeJudge{err: errors.New("down")}}).
		Evaluate(context.Background(), Example{}, out)
	if err == nil {
		t.Fatal("judge-only evaluation with a failing judge must return an error")
	}
}

func TestCompareInteractionsDuplicates(t *testing.T) {
	// A worker that runs twice where two runs are expected is aligned one-to-one.
	want := []Interaction{{NodeName: "coordinator"}, {NodeName: "worker", Dependencies: []string{"coordinator"}}, {NodeName: "worker", Dependencies: []string{"coordinator"}}, {NodeName: "aggregator", Dependencies: []string{"worker"}}}
	got := []Interaction{{NodeName: "coordinator"}, {NodeName: "worker"}, {NodeName: "worker"}, {NodeName: "aggregator"}}
	c := CompareInteractions(want, got)
	if c.OrderCompliance != 1 || !c.ExactOrder || c.DependencyCompliance == nil || *c.DependencyCompliance != 1 {
		t.Fatalf("%+v", c)
	}
	// Only one worker ran: order 3/4, the aggregator's dependency is still met.
	c = CompareInteractions(want, []Interaction{{NodeName: "coordinator"}, {NodeName: "worker"}, {NodeName: "aggregator"}})
	if c.OrderCompliance != 0.75 || c.ExactOrder || *c.DependencyCompliance != 1 {
		t.Fatalf("%+v", c)
	}
	// No dependencies anywhere: dependency compliance is null, not 1.
	if c := CompareInteractions([]Interaction{{NodeName: "a"}}, []Interaction{{NodeName: "a"}}); c.DependencyCompliance != nil {
		t.Fatalf("dependency compliance without dependencies = %v", *c.DependencyCompliance)
	}
}

func FuzzTrajectory(f *testing.F) {
	for _, s := range []string{
		`["a","b"]`, `{"tools":["a"]}`, `[{"role":"assistant","tool_calls":[{"function":{"name":"x","arguments":"{\"a\":1}"}}]}]`,
		`{"tool":"a"}`, `[{"name":"a","args":{"k":[1,2]}}]`, `[1]`, `{"messages":{"role":"user"}}`, `null`,
	} {
		f.Add(s)
	}
	ev := NewTrajectoryMatchEvaluator("", TrajectoryOptions{Mode: TrajectoryUnordered, ArgsMode: ArgsSuperset, PartialCredit: true})
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		res, err := ev.Evaluate(context.Background(), ref(v), v)
		if err != nil {
			_, isString := v.(string) // a string reference is never a trajectory
			if !errors.Is(err, ErrBadShape) && !((v == nil || isString) && errors.Is(err, ErrNoReference)) {
				t.Fatalf("error not ErrBadShape: %v", err)
			}
			return
		}
		// Any readable trajectory matches itself.
		if !res.Pass || res.Score != 1 {
			t.Fatalf("%s does not match itself: %+v", s, res)
		}
	})
}
