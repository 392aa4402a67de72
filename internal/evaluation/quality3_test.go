// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// The third held-out part (audit c of 2026-11-27): sessions and grounding cases written and
// labelled by an independent auditor from the design and the label guidelines, before the
// rules were read, and measured once, blind. They do not meet the targets of
// docs/scoring.md §5.4; the tests below print the figures and assert regression floors
// equal to the blind measurement, so that a change that makes them worse fails.
// driftParts are the independent intent-drift parts and their regression floors: sessions
// within target (on_task ≤ targetOnTaskDrift, drifting ≥ targetDriftingMin).
//   - drift3.jsonl (audit c, read since): blind, 4 of 6 on-task and 4 of 6 drifting;
//     5 and 4 since the lookups (a forecast for the asked city).
//   - drift9.jsonl: written by a helper from the label guidelines alone; its labels checked
//     by a second helper; not read (but for 15 verdicts, blindParts). Blind before the
//     task words and repeats (docs/scoring.md §5.3): 24 of 36 on-task, 20 of 36
//     drifting; after: 24 and 23.
//   - drift10.jsonl: written the same way, two thirds lookups; not read. Blind at
//     dc609fa: 16 of 32 on-task, 23 of 32 drifting; the same after the lookups and the
//     requested task on the request's object (docs/scoring.md §5.3).
var driftParts = []struct {
	file             string
	onTask, drifting int
}{
	{"drift3.jsonl", 5, 4},
	{"drift9.jsonl", 24, 23},
	{"drift10.jsonl", 16, 23},
}

// groundingParts are the grounding cases and what each must reach: halluc3.jsonl (the
// auditor's, blind: 5 of 5 hallucinations caught, 2 false alarms among 7 `none` cases,
// both correctly derived values, "20% of $350 is $70" and "20°C (68°F)"; no false alarm
// since derived values are read, docs/decisions/text.md §6.1) and grounding.jsonl (ours,
// derived values with wrong ones beside them: every wrong one caught; a product stated in
// words, "3 tickets at $18.50 each come to $55.50", and two totals after a discount or a tax
// are derivations the rule does not read; a sum written as an equation it reads).
var groundingParts = []struct {
	file             string
	caught, maxFalse int
}{
	{"halluc3.jsonl", 5, 0},
	{"grounding.jsonl", 16, 3},
	{"grounding7.jsonl", 27, 0},
}

// labelCounts is a confusion over arbitrary labels: {truth, predicted} → count.
type labelCounts map[[2]string]int

func (c labelCounts) table(labels ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s", "truth\\pred")
	for _, l := range labels {
		fmt.Fprintf(&b, " %13s", l)
	}
	b.WriteString("\n")
	for _, tl := range labels {
		fmt.Fprintf(&b, "%-14s", tl)
		for _, pl := range labels {
			fmt.Fprintf(&b, " %13d", c[[2]string{tl, pl}])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// pr is the precision and recall of label (1 when undefined, as confusion.prf).
func (c labelCounts) pr(label string) string {
	p, r, tp, fp, fn := confusion(c).prf(label)
	return fmt.Sprintf("%s: P %.2f (%d/%d) R %.2f (%d/%d)", label, p, tp, tp+fp, r, tp, tp+fn)
}

// TestIntentDriftQualityHeldout3 measures intent_drift_score on the independent parts
// (driftParts) and fails under their floors (the targets are not met on them). A session
// between the two targets, or with a null score, is "unclear": neither label.
func TestIntentDriftQualityHeldout3(t *testing.T) {
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range driftParts {
		c := labelCounts{}
		for _, it := range readJSONL[driftItem](t, part.file) {
			a := e.AnalyzeSession(driftSession(t, it))
			d := -1.0
			if a.IntentDriftScore != nil {
				d = *a.IntentDriftScore
			}
			pred := "unclear" // between the two targets, or null
			switch {
			case a.IntentDriftScore != nil && d <= targetOnTaskDrift:
				pred = "on_task"
			case a.IntentDriftScore != nil && d >= targetDriftingMin:
				pred = "drifting"
			}
			if it.Label != "on_task" && it.Label != "drifting" {
				t.Fatalf("%s: bad label %q", it.ID, it.Label)
			}
			c[[2]string{it.Label, pred}]++
			mark := "ok  "
			if pred != it.Label {
				mark = "MISS"
			}
			if !blindParts[part.file] {
				t.Logf("%s %s label=%s intent_drift_score=%.3g pred=%s: %s | %s", mark, it.ID, it.Label, d, pred, it.Note,
					a.Explanations[keyIntentDriftScore])
			}
		}
		onTask, drifting := c[[2]string{"on_task", "on_task"}], c[[2]string{"drifting", "drifting"}]
		t.Logf("%s: on_task %d/%d, drifting %d/%d within target; %s; %s\n%s", part.file,
			onTask, c[[2]string{"on_task", "drifting"}]+c[[2]string{"on_task", "unclear"}]+onTask,
			drifting, c[[2]string{"drifting", "on_task"}]+c[[2]string{"drifting", "unclear"}]+drifting,
			c.pr("drifting"), c.pr("on_task"), c.table("on_task", "drifting", "unclear"))
		if onTask < part.onTask || drifting < part.drifting {
			t.Errorf("%s: under its regression floor (on_task >= %d, drifting >= %d within target): on_task %d, drifting %d",
				part.file, part.onTask, part.drifting, onTask, drifting)
		}
	}
}

// halluc3Item is a single-turn grounding case (halluc3.jsonl, grounding.jsonl): the user message, the final response and
// at most one tool call with its result.
type halluc3Item struct {
	ID     string         `json:"id"`
	Split  string         `json:"split"`
	Lang   string         `json:"lang"`
	Label  string         `json:"label"` // hallucination | none
	Note   string         `json:"note"`
	User   string         `json:"user"`
	Final  string         `json:"final"`
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	Result string         `json:"result"`
}

// TestHallucinationQuality measures the response-grounding verdict on the grounding
// cases of groundingParts (the follow-up corpus does not cover it) and fails under their
// floors.
func TestHallucinationQuality(t *testing.T) {
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range groundingParts {
		c := labelCounts{}
		for _, it := range readJSONL[halluc3Item](t, part.file) {
			if it.Label != DetectionHallucination && it.Label != DetectionNone {
				t.Fatalf("%s: bad label %q", it.ID, it.Label)
			}
			in := session.AgentInteraction{AgentID: "assistant", Input: it.User, Output: it.Final, Status: "ok"}
			if it.Tool != "" {
				args, err := json.Marshal(it.Args)
				if err != nil {
					t.Fatal(err)
				}
				in.Steps = []session.AgentStep{{Kind: session.StepToolCall, ToolCall: &session.ToolCall{
					ToolName: it.Tool, Parameters: args, Result: it.Result, Requested: true, Executed: true, Status: "ok"}}}
			}
			s := &session.AgentSession{ID: it.ID, Turns: []session.Turn{{Index: 0, UserMessage: it.User, FinalResponse: it.Final,
				Status: "ok", Interactions: []session.AgentInteraction{in}}}}
			tr := e.EvaluateTurn(s, 0, true)
			pred := tr.DetectionType
			c[[2]string{it.Label, pred}]++
			mark := "ok  "
			if pred != it.Label {
				mark = "MISS"
			}
			t.Logf("%s %s label=%s pred=%s confidence=%.2f: %s | reason: %s", mark, it.ID, it.Label, pred, tr.Confidence, it.Note, tr.Reason)
		}
		caught := c[[2]string{DetectionHallucination, DetectionHallucination}]
		fa := 0
		for k, n := range c {
			if k[0] == DetectionNone && k[1] != DetectionNone {
				fa += n
			}
		}
		t.Logf("%s: %s; false alarms on none %d\n%s", part.file, c.pr(DetectionHallucination), fa, c.table(DetectionHallucination, DetectionNone))
		if caught < part.caught || fa > part.maxFalse {
			t.Errorf("%s: under its floor (caught >= %d, false alarms <= %d): caught %d, false alarms %d",
				part.file, part.caught, part.maxFalse, caught, fa)
		}
	}
}
