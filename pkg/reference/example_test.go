// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reference_test

import (
	"context"
	"fmt"

	"github.com/agenteval/agenteval-collector/pkg/reference"
)

func Example_dataset() {
	dataset, _ := reference.ParseDataset([]byte(`[
	  {"input": "Find all documents about AI", "reference": "search",
	   "metadata": {"expected_tools": ["search", "filter"], "expected_sequence": ["search", "filter", "rank"]}}
	]`))
	evaluators := []reference.Evaluator{
		reference.NewClassificationEvaluator("classification", []string{"question", "search"}),
		reference.NewConfidenceEvaluator("confidence", 0.7),
		reference.NewToolSelectionEvaluator("tool_selection"),
		reference.NewToolCallSequenceEvaluator("sequence"),
	}
	// What the agent produced for the first example.
	output := map[string]any{
		"route_type":    "search",
		"confidence":    0.9,
		"tools":         []string{"search", "filter"},
		"tool_sequence": []string{"search", "rank"},
	}
	for _, ev := range evaluators {
		res, err := ev.Evaluate(context.Background(), dataset[0], output)
		if err != nil {
			fmt.Println(ev.Name(), "error:", err)
			continue
		}
		fmt.Printf("%s: score %.2f pass %t\n", ev.Name(), res.Score, res.Pass)
	}
	// Output:
	// classification: score 1.00 pass true
	// confidence: score 0.90 pass true
	// tool_selection: score 1.00 pass true
	// sequence: score 0.67 pass false
}

func ExampleNewInteractionsEvaluator() {
	ex := reference.Example{
		Input: "Process data pipeline",
		Metadata: map[string]any{"expected_interactions": []reference.Interaction{
			{NodeName: "planner"},
			{NodeName: "executor", Dependencies: []string{"planner"}},
			{NodeName: "validator", Dependencies: []string{"executor"}},
		}},
	}
	// The validator ran before the executor it depends on.
	output := map[string]any{"output": "done", "interactions": []reference.Interaction{
		{NodeName: "planner", Messages: "Created execution plan"},
		{NodeName: "validator", Dependencies: []string{"executor"}, Messages: "Validated results"},
		{NodeName: "executor", Dependencies: []string{"planner"}, Messages: "Executed plan steps"},
	}}
	res, _ := reference.NewInteractionsEvaluator("interactions", reference.InteractionsOptions{}).
		Evaluate(context.Background(), ex, output)
	fmt.Printf("score %.2f pass %t order %.2f dependencies %.2f\n", res.Score, res.Pass,
		res.Details["order_compliance"], res.Details["dependency_compliance"])
	fmt.Println(res.Reason)
	// Output:
	// score 0.58 pass false order 0.67 dependencies 0.50
	// order compliance 0.67, dependency compliance 0.50; validator ran before executor
}
