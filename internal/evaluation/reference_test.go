// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"strings"
	"testing"
)

func TestAnalyzeSessionWithReferences(t *testing.T) {
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := refundSession()
	base := e.AnalyzeSession(s)
	if base.ToolUseScore == nil || base.CoordinationScore == nil || base.References != nil {
		t.Fatalf("fixture: %+v", base)
	}
	dep := 0.5
	refs := &ReferenceScores{
		ToolUse:              []NamedScore{{"tool_selection", 1}, {"tool_sequence", 0.25}},
		DependencyCompliance: &dep,
		Results:              map[string]any{"case": "refund-1"},
	}
	a := e.AnalyzeSessionWithReferences(s, refs)
	wantTool := round4((*base.ToolUseScore + 1 + 0.25) / 3)
	if *a.ToolUseScore != wantTool {
		t.Fatalf("tool_use_score %v, want %v", *a.ToolUseScore, wantTool)
	}
	if !strings.Contains(a.Explanations["tool_use_score"], "tool_sequence(0.25)") {
		t.Fatalf("explanation %q", a.Explanations["tool_use_score"])
	}
	if a.Coordination.DependencyCompliance == nil || *a.Coordination.DependencyCompliance != 0.5 {
		t.Fatalf("dependency compliance %v", a.Coordination.DependencyCompliance)
	}
	if *a.CoordinationScore >= *base.CoordinationScore && *base.CoordinationScore > 0.5 {
		t.Fatalf("a 0.5 dependency compliance must lower coordination %v -> %v", *base.CoordinationScore, *a.CoordinationScore)
	}
	if !strings.Contains(a.Explanations["coordination_score"], "dependency_compliance(0.5)") {
		t.Fatalf("coordination explanation %q", a.Explanations["coordination_score"])
	}
	if a.References == nil || *a.OverallScore == *base.OverallScore {
		t.Fatalf("references %v overall %v vs %v", a.References, *a.OverallScore, *base.OverallScore)
	}
	// nil refs is AnalyzeSession.
	if b := e.AnalyzeSessionWithReferences(s, nil); *b.OverallScore != *base.OverallScore {
		t.Fatal("nil references changed the analysis")
	}
}
