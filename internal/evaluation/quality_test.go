// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// The labelled corpus of testdata/turns (hand-written, see its README.md) and the
// quality targets of docs/scoring.md §5.4.
const (
	turnsDir = "../../testdata/turns"

	targetRDMPrecision = 0.9
	targetRDMRecall    = 0.9
	targetCCMPrecision = 0.9
	targetCCMRecall    = 0.8
	targetFalseAlarms  = 0.05 // share of `none` follow-ups detected as rdm or ccm
	targetOnTaskDrift  = 0.2  // max intent_drift_score of an on-task session
	targetDriftingMin  = 0.5  // min intent_drift_score of a drifting session
)

// qualityFloors are the regression floors of the parts that do not meet the targets
// above: the figures measured on them, asserted instead of the targets so that a change
// that makes them worse fails. heldout3 (written by an independent auditor without reading
// the rules, audit c of 2026-11-27) was measured once, blind: RDM P 7/10 R 7/21, CCM P 11/12
// R 11/13, false alarms 3/24. Its misses were then read, and the third round of rules
// (new tuning cases for its false alarms and two of its cue gaps) gave RDM P 9/9 R 9/21,
// CCM unchanged, false alarms 0/24. heldout4 (a second independent writer, same terms,
// 2026-11-27) was measured blind before the fourth round: RDM P 12/14 R 12/33, CCM P
// 11/11 R 11/16, false alarms 2/31; and once, still blind, with the first version of
// Restatement: RDM P 15/18 R 15/33, CCM unchanged, false alarms 2/31. Its misses were then
// read, and the fourth round (restated values, own-slip "I meant", new cues; tuning cases
// in our own words) gave RDM P 21/21 R 21/33 there; a review then narrowed rules that
// raised false alarms on ordinary messages ("I am at work" read as AM, "My budget is
// $600", "There's no way I can make Monday"), which cost two of those. The floors below
// are the figures after that, on parts that are no longer blind (docs/scoring.md §5.4).
// heldout5 (a third independent writer, other domains, 2026-11-27) was written after all
// of that and measured once, blind, with the final rules: RDM P 17/19 R 17/24, CCM P 9/9
// R 9/14, false alarms 2/26 (the third round's rules gave RDM P 12/14 R 12/24, the rest
// the same). Its misses were then read, and the fifth round (a fix that still fails, an
// incredulous echo, the answer's language named, the user's own slip rejecting what they
// asked, re-asks told by their frame; tuning cases in our own words)
// gave RDM P 22/22 R 22/24, CCM P 12/12 R 12/14, false alarms 0/26 there. heldout6 (a
// fourth independent writer, other domains again) was written while that round was being
// built and measured blind, first with the fourth round's rules (RDM P 23/25 R 23/30, CCM
// P 13/13 R 13/20, false alarms 1/30), then at the round's end (RDM P 23/23 R 23/30, CCM P
// 15/15 R 15/20, false alarms 0/30). A read-only review then found 36 false alarms of the
// round on ordinary messages it wrote; narrowing the rules for them cost heldout5 one
// re-ask ("…or not" now needs no new word) and heldout6 one CCM and one RDM precision
// (its summary, never its misses, was looked at). Weekdays read as values (heldout4 RDM R
// +1) were taken out after a second review. The floors are the figures after that, but
// for one heldout5 correction that was caught for a wrong reason: "pickup Friday 9am"
// answered "Friday 9:00 AM", then "…we have 4 suitcases" read as "4" in place of the
// answer's "9:00"; since "9am" is read as the time it is (decisions/text.md §6.4), the
// answer kept the request's time and there is no contradiction (RDM R 22/24 -> 21/24).
//
// In the sixth round heldout6's misses were read (so it is no longer blind) and the rules
// of decisions/text.md §3.7 written for them, then narrowed after review 10: heldout6 RDM
// R 23/30 -> 27/30, P 23/24 -> 27/27, CCM R 14/20 -> 16/20. heldout8 (a fifth independent
// writer, 2026-11-27) was measured blind before the round and after it, with the same
// figures both times; its floor is that figure. heldout11 (a seventh independent writer,
// labels checked by a second helper) was measured blind once, with the follow-up rules of
// dc609fa (unchanged since); its floor is that figure.
//
// In the seventh round (2026-11-28, decisions/text.md §3.8) the re-asks heldout8 and
// heldout11 missed were read, so neither is blind any more; the rules written for them
// were not kept (a blind twelfth part did not move, a review found false alarms), so their
// floors stay. heldout12 (an eighth independent writer, labels checked by a second helper)
// was measured blind once with the rules of this file's commit; its floor is that figure.
// heldout13 (a ninth writer) was measured blind once, with and without a guard not kept
// (decisions/text.md §3.9); its floor is the figure without it.
var qualityFloors = map[string]struct{ rdmP, rdmR, ccmP, ccmR, falseAlarms float64 }{
	"heldout3":  {rdmP: 14.0 / 14, rdmR: 14.0 / 21, ccmP: 11.0 / 12, ccmR: 11.0 / 13, falseAlarms: 0},
	"heldout4":  {rdmP: 20.0 / 20, rdmR: 20.0 / 33, ccmP: 12.0 / 12, ccmR: 12.0 / 16, falseAlarms: 0},
	"heldout5":  {rdmP: 21.0 / 21, rdmR: 21.0 / 24, ccmP: 11.0 / 11, ccmR: 11.0 / 14, falseAlarms: 0},
	"heldout6":  {rdmP: 27.0 / 27, rdmR: 27.0 / 30, ccmP: 16.0 / 16, ccmR: 16.0 / 20, falseAlarms: 0},
	"heldout8":  {rdmP: 25.0 / 27, rdmR: 25.0 / 29, ccmP: 9.0 / 9, ccmR: 9.0 / 18, falseAlarms: 2.0 / 33},
	"heldout11": {rdmP: 21.0 / 24, rdmR: 21.0 / 28, ccmP: 8.0 / 8, ccmR: 8.0 / 20, falseAlarms: 3.0 / 32},
	"heldout12": {rdmP: 19.0 / 20, rdmR: 19.0 / 28, ccmP: 11.0 / 12, ccmR: 11.0 / 20, falseAlarms: 2.0 / 32},
	// heldout13 (a ninth writer, 2026-11-28): 40 ordinary questions about a good answer and
	// 20 re-asks, 15 of them borrowing the answer's words; no RDM item (P and R are 1).
	"heldout13": {rdmP: 1, rdmR: 1, ccmP: 7.0 / 8, ccmR: 7.0 / 20, falseAlarms: 1.0 / 40},
}

// blindParts are the labelled parts nobody tuning the rules has read: the follow-up
// splits heldout12 and heldout13 and the intent-drift files drift9.jsonl (but for the verdicts of its
// first 15 sessions, shown once by a verbose log, testdata/turns/README.md) and
// drift10.jsonl. The quality tests print only their figures, never an item, so that a
// verbose run does not show them to whoever tunes next; reading one is a decision to
// record in that README.
var blindParts = map[string]bool{"heldout12": true, "heldout13": true, "drift9.jsonl": true, "drift10.jsonl": true}

// floorEps absorbs float rounding when a figure equals its floor.
const floorEps = 1e-9

type followUpItem struct {
	ID     string `json:"id"`
	Split  string `json:"split"`
	Lang   string `json:"lang"`
	Cat    string `json:"cat"`
	Label  string `json:"label"`
	Prev   string `json:"prev"`
	Answer string `json:"answer"`
	Next   string `json:"next"`
	Note   string `json:"note"`
}

func readJSONL[T any](t testing.TB, name string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join(turnsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func loadFollowUps(t testing.TB) []followUpItem {
	var all []followUpItem
	for _, f := range []string{"en.jsonl", "fr.jsonl", "es.jsonl", "de.jsonl", "heldout.jsonl", "heldout2.jsonl", "heldout3.jsonl", "heldout4.jsonl", "heldout5.jsonl", "heldout6.jsonl", "heldout8.jsonl", "heldout11.jsonl", "heldout12.jsonl", "heldout13.jsonl"} {
		all = append(all, readJSONL[followUpItem](t, f)...)
	}
	ids := map[string]bool{}
	for _, it := range all {
		if ids[it.ID] {
			t.Fatalf("duplicate corpus id %s", it.ID)
		}
		ids[it.ID] = true
		if !slices.Contains([]string{DetectionRDM, DetectionCCM, DetectionNone}, it.Label) ||
			!slices.Contains([]string{"tune", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout8", "heldout11", "heldout12", "heldout13"}, it.Split) || it.Lang == "" || it.Next == "" {
			t.Fatalf("corpus item %s: bad label, split, lang or next", it.ID)
		}
	}
	return all
}

// followUpSession is the two-turn session the receiver would build from an item: one
// agent answers turn 0; turn 1 carries the follow-up.
func followUpSession(it followUpItem) *session.AgentSession {
	return &session.AgentSession{
		ID: it.ID,
		Turns: []session.Turn{
			{Index: 0, UserMessage: it.Prev, FinalResponse: it.Answer, Status: "ok",
				Interactions: []session.AgentInteraction{{AgentID: "assistant", Input: it.Prev, Output: it.Answer, Status: "ok"}}},
			{Index: 1, UserMessage: it.Next, Status: "ok"},
		},
	}
}

// followUpVerdict is what the turn evaluation says about turn 0 of the item's session,
// restricted to the follow-up labels: hallucination (a property of the answer, not of
// the follow-up) counts as none.
func followUpVerdict(e *Evaluator, it followUpItem) (string, string) {
	tr := e.EvaluateTurn(followUpSession(it), 0, true)
	switch tr.DetectionType {
	case DetectionRDM, DetectionCCM:
		return tr.DetectionType, tr.Reason
	}
	return DetectionNone, tr.Reason
}

type confusion map[[2]string]int // {truth, predicted} → count

func (c confusion) prf(label string) (p, r float64, tp, fp, fn int) {
	for k, n := range c {
		switch {
		case k[0] == label && k[1] == label:
			tp += n
		case k[1] == label:
			fp += n
		case k[0] == label:
			fn += n
		}
	}
	p, r = 1, 1
	if tp+fp > 0 {
		p = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		r = float64(tp) / float64(tp+fn)
	}
	return p, r, tp, fp, fn
}

// falseAlarms is the share of `none` items detected as rdm or ccm.
func (c confusion) falseAlarms() (float64, int, int) {
	bad, all := 0, 0
	for k, n := range c {
		if k[0] == DetectionNone {
			all += n
			if k[1] != DetectionNone {
				bad += n
			}
		}
	}
	if all == 0 {
		return 0, 0, 0
	}
	return float64(bad) / float64(all), bad, all
}

func (c confusion) String() string {
	labels := []string{DetectionRDM, DetectionCCM, DetectionNone}
	var b strings.Builder
	b.WriteString("truth\\pred   rdm   ccm  none\n")
	for _, tl := range labels {
		fmt.Fprintf(&b, "%-9s", tl)
		for _, pl := range labels {
			fmt.Fprintf(&b, " %5d", c[[2]string{tl, pl}])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (c confusion) summary() string {
	rp, rr, _, _, _ := c.prf(DetectionRDM)
	cp, cr, _, _, _ := c.prf(DetectionCCM)
	fa, bad, all := c.falseAlarms()
	return fmt.Sprintf("RDM P %.2f R %.2f | CCM P %.2f R %.2f | false alarms on none %.3f (%d/%d)", rp, rr, cp, cr, fa, bad, all)
}

// TestDetectionQuality measures the RDM/CCM detection of docs/scoring.md §5 on the
// hand-labelled follow-ups of testdata/turns and fails under the targets of
// docs/scoring.md §5.4 on the tuning part and the first two held-out parts; the third
// held-out part does not meet them and is held to its regression floor (qualityFloors).
// Run with -v for the confusion matrices, the per-language figures and every miss of the
// parts that are not blindParts.
func TestDetectionQuality(t *testing.T) {
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	items := loadFollowUps(t)
	bySplit := map[string]confusion{}
	byLang := map[string]confusion{}
	for _, it := range items {
		got, reason := followUpVerdict(e, it)
		if bySplit[it.Split] == nil {
			bySplit[it.Split] = confusion{}
		}
		bySplit[it.Split][[2]string{it.Label, got}]++
		key := it.Split + "/" + it.Lang
		if byLang[key] == nil {
			byLang[key] = confusion{}
		}
		byLang[key][[2]string{it.Label, got}]++
		if got != it.Label && !blindParts[it.Split] {
			t.Logf("miss %s (%s) %s→%s: %q → %q → %q; reason: %s", it.ID, it.Cat, it.Label, got, it.Prev, it.Answer, it.Next, reason)
		}
	}
	for _, split := range []string{"tune", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout8", "heldout11", "heldout12", "heldout13"} {
		c := bySplit[split]
		t.Logf("%s: %s\n%s", split, c.summary(), c)
		for _, lang := range []string{"en", "fr", "es", "de"} {
			t.Logf("  %s/%s: %s", split, lang, byLang[split+"/"+lang].summary())
		}
		rp, rr, _, _, _ := c.prf(DetectionRDM)
		cp, cr, _, _, _ := c.prf(DetectionCCM)
		fa, _, _ := c.falseAlarms()
		if f, ok := qualityFloors[split]; ok {
			// Under target: the floor is the measured figure, so a change that makes it
			// worse fails (the targets are reported, not asserted, on this part).
			if rp < f.rdmP-floorEps || rr < f.rdmR-floorEps || cp < f.ccmP-floorEps || cr < f.ccmR-floorEps || fa > f.falseAlarms+floorEps {
				t.Errorf("%s: under its regression floor (RDM P %.2f R %.2f; CCM P %.2f R %.2f; false alarms <= %.3f): %s",
					split, f.rdmP, f.rdmR, f.ccmP, f.ccmR, f.falseAlarms, c.summary())
			}
			if rp < targetRDMPrecision || rr < targetRDMRecall || cp < targetCCMPrecision || cr < targetCCMRecall || fa > targetFalseAlarms {
				t.Logf("%s: under target, not asserted (RDM P,R >= %.2f; CCM P >= %.2f, R >= %.2f; false alarms <= %.2f): %s",
					split, targetRDMPrecision, targetCCMPrecision, targetCCMRecall, targetFalseAlarms, c.summary())
			}
			continue
		}
		if rp < targetRDMPrecision || rr < targetRDMRecall || cp < targetCCMPrecision || cr < targetCCMRecall || fa > targetFalseAlarms {
			t.Errorf("%s: under target (RDM P,R >= %.2f; CCM P >= %.2f, R >= %.2f; false alarms <= %.2f): %s",
				split, targetRDMPrecision, targetCCMPrecision, targetCCMRecall, targetFalseAlarms, c.summary())
		}
	}
}

type driftItem struct {
	ID    string `json:"id"`
	Split string `json:"split"`
	Lang  string `json:"lang"`
	Label string `json:"label"`
	Note  string `json:"note"`
	Turns []struct {
		User  string `json:"user"`
		Final string `json:"final"`
		Calls []struct {
			Agent  string         `json:"agent"`
			Tool   string         `json:"tool"`
			Args   map[string]any `json:"args"`
			Result string         `json:"result"`
		} `json:"calls"`
		Handoffs []struct {
			From    string `json:"from"`
			To      string `json:"to"`
			Payload string `json:"payload"`
		} `json:"handoffs"`
	} `json:"turns"`
}

// driftSession builds the item's session: per turn, the handoffs (one interaction of
// the delegating agent each), the tool calls grouped by agent in order, and the final
// response as the last interaction's output.
func driftSession(t testing.TB, it driftItem) *session.AgentSession {
	s := &session.AgentSession{ID: it.ID}
	for ti, tu := range it.Turns {
		turn := session.Turn{Index: ti, UserMessage: tu.User, FinalResponse: tu.Final, Status: "ok"}
		for _, h := range tu.Handoffs {
			turn.Interactions = append(turn.Interactions, session.AgentInteraction{AgentID: h.From, Input: tu.User, Status: "ok",
				Steps: []session.AgentStep{{Kind: session.StepHandoff, Handoff: &session.Handoff{
					FromAgent: h.From, ToAgent: h.To, Payload: h.Payload, PayloadCaptured: true}}}})
		}
		var last *session.AgentInteraction
		for _, c := range tu.Calls {
			if last == nil || last.AgentID != c.Agent {
				turn.Interactions = append(turn.Interactions, session.AgentInteraction{AgentID: c.Agent, Status: "ok"})
				last = &turn.Interactions[len(turn.Interactions)-1]
			}
			args, err := json.Marshal(c.Args)
			if err != nil {
				t.Fatal(err)
			}
			last.Steps = append(last.Steps, session.AgentStep{Kind: session.StepToolCall, ToolCall: &session.ToolCall{
				ToolName: c.Tool, Parameters: args, Result: c.Result, Requested: true, Executed: true, Status: "ok"}})
		}
		if last == nil {
			turn.Interactions = append(turn.Interactions, session.AgentInteraction{AgentID: "assistant", Status: "ok"})
			last = &turn.Interactions[len(turn.Interactions)-1]
		}
		last.Output = tu.Final
		s.Turns = append(s.Turns, turn)
	}
	return s
}

// driftKnownMisses are the tuning sessions of drift.jsonl the rules do not get right, and
// why: the test logs them instead of failing, and fails when one comes within target (so
// that the list stays true).
var driftKnownMisses = map[string]string{
	"d-48": `"money back" names no task (only single words do), so the re-shipped order anchors by the order number`,
	"d-50": `"mejorar" (to upgrade) is no task word: its stem "mejor" is also "better", so the upsell anchors by the plan`,
	"d-80": `flight BA117's baggage rules for its delay: get_baggage_rules names no task, so the call anchors by "flight" and "BA117"`,
	// On-task paraphrases: the call does the requested task but shares no word of the
	// request's object with it (docs/scoring.md §5.3, "the requested task on the
	// request's object").
	"d-72": `"Cancel my yoga membership" → stop_membership: "stop" names no task (in tool names it also stops calls, timers and autoplay: review 13), so one shared word ("membership")`,
	"d-60": `"Reset my password, I'm locked out" → send_reset_link: one shared word ("reset")`,
	"d-61": `"Kündige mein Zeitungsabo" → beende_abonnement: no shared word ("Zeitungsabo" is one stem)`,
}

// TestIntentDriftQuality checks intent_drift_score (docs/scoring.md §6) on the sessions of
// testdata/turns/drift.jsonl: at most 0.2 on every on-task session and at least 0.5 on
// every drifting one, in both splits, but for driftKnownMisses.
func TestIntentDriftQuality(t *testing.T) {
	e, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	items := readJSONL[driftItem](t, "drift.jsonl")
	if len(items) < 40 {
		t.Fatalf("drift corpus has %d sessions, want >= 40", len(items))
	}
	type tally struct{ ok, all int }
	res := map[string]*tally{}
	for _, it := range items {
		a := e.AnalyzeSession(driftSession(t, it))
		d := -1.0
		if a.IntentDriftScore != nil {
			d = *a.IntentDriftScore
		}
		var ok bool
		switch it.Label {
		case "on_task":
			ok = a.IntentDriftScore != nil && d <= targetOnTaskDrift
		case "drifting":
			ok = a.IntentDriftScore != nil && d >= targetDriftingMin
		default:
			t.Fatalf("%s: bad label %q", it.ID, it.Label)
		}
		k := it.Split + "/" + it.Label
		if res[k] == nil {
			res[k] = &tally{}
		}
		res[k].all++
		t.Logf("%s (%s/%s): intent_drift_score %.4g", it.ID, it.Split, it.Label, d)
		why, known := driftKnownMisses[it.ID]
		switch {
		case ok && known:
			t.Errorf("%s: listed in driftKnownMisses but within target now (%.4g): take it out", it.ID, d)
		case ok:
			res[k].ok++
		case known:
			t.Logf("%s: known miss, intent_drift_score %.4g: %s", it.ID, d, why)
		default:
			t.Errorf("%s (%s, %s): intent_drift_score %.4g: %s", it.ID, it.Label, it.Note, d, a.Explanations[keyIntentDriftScore])
		}
	}
	for _, k := range []string{"tune/on_task", "tune/drifting", "heldout/on_task", "heldout/drifting"} {
		if r := res[k]; r != nil {
			t.Logf("%s: %d/%d within target", k, r.ok, r.all)
		}
	}
}
