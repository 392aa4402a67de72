// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"strings"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// detection is a turn's verdict.
type detection struct {
	bad    bool
	typ    string
	conf   float64
	reason string
	expl   string
	// fromParams: the verdict is a parameter hallucination of a tool call.
	fromParams bool
}

// turnDetection sets the turn's verdict (docs/scoring.md §5) from turnDetectors, and
// applies the bad-turn rule: the final responder of a bad turn gets response_quality 0.
type turnDetection struct{}

var _ turnEvaluator = turnDetection{}

func (turnDetection) evaluate(c *evalCtx, x turnInput, tr *TurnResult) {
	t := &c.s.Turns[x.ti]
	d := c.detect(x.ti, x.final, tr.Interactions)
	tr.IsBad, tr.DetectionType, tr.Confidence, tr.Reason = d.bad, d.typ, d.conf, d.reason
	tr.Explanations[keyDetection] = d.expl
	// The bad-turn rule judges the final response: a verdict on a tool call's
	// parameters is counted in tool_use and the conversation score, not again here.
	if d.bad && !d.fromParams {
		if fr := finalResponder(t); fr >= 0 {
			ir := &tr.Interactions[fr]
			ir.ResponseQuality = ptr(0)
			ir.Explanations[keyResponseQuality] = "0: final responder of a bad turn (" + d.typ + ")"
			c.score(ir)
		}
	}
}

// detectInput is what a turnDetector reads, and the explanation it adds to.
type detectInput struct {
	ti    int
	final bool
	irs   []InteractionResult
	// followUpConf is the strongest follow-up signal when the follow-up checks ran, −1
	// when they did not (followUpDetector sets it).
	followUpConf float64
	// expl are the explanation lines so far; each detector appends its own.
	expl []string
	// params and recovered memoise parameterHallucinations(irs) (paramsDone).
	params, recovered []string
	paramsDone        bool
}

// parameterHallucinations is parameterHallucinations(x.irs), computed once per turn.
func (x *detectInput) parameterHallucinations() (params, recovered []string) {
	if !x.paramsDone {
		x.params, x.recovered = parameterHallucinations(x.irs)
		x.paramsDone = true
	}
	return x.params, x.recovered
}

// detect applies docs/scoring.md §5: every detector of turnDetectors runs and explains
// its checks, and the first verdict in the list's order wins (RDM > CCM > no_answer >
// hallucination > none). RDM and CCM need the follow-up (final and a next turn);
// hallucination always runs.
func (c *evalCtx) detect(ti int, final bool, irs []InteractionResult) detection {
	x := &c.detecting
	// The explanation has 3 to 6 lines: one allocation instead of one per growth.
	*x = detectInput{ti: ti, final: final, irs: irs, followUpConf: -1, expl: make([]string, 0, 8)}
	if cut := c.s.Turns[ti].CutBy; cut != "" {
		return detection{typ: DetectionNone, reason: "not judged: closed early by the collector (" + string(cut) + ")", expl: notJudgedCut(cut)}
	}
	var found detection
	for _, det := range turnDetectors {
		if v := det.detect(c, x); v.bad && !found.bad {
			found = v
		}
	}
	var d detection
	if found.bad {
		d = chooseDetection(x.followUpConf, &found)
	} else {
		d = chooseDetection(x.followUpConf)
	}
	x.expl = append(x.expl, "→ "+d.typ+", confidence "+num(d.conf))
	d.expl = strings.Join(x.expl, "; ")
	return d
}

// chooseDetection returns the first verdict of found, in the priority RDM > CCM >
// no_answer > hallucination > none (docs/scoring.md §5.2), or none. followUpConf is the strongest follow-up signal when the
// follow-up checks ran (the confidence of none is 1 − it), negative when they did not.
// Both the whole-session path (detect) and the turn-by-turn path (finalize) use it.
func chooseDetection(followUpConf float64, found ...*detection) detection {
	for _, d := range found {
		if d != nil {
			return *d
		}
	}
	d := detection{typ: DetectionNone}
	if followUpConf >= 0 {
		d.conf = clamp01(1 - followUpConf)
		d.reason = "the follow-up neither corrects nor re-asks, and nothing is ungrounded"
	} else {
		d.reason = "no follow-up to judge by, and nothing is ungrounded"
	}
	return d
}

// notJudgedCut is the detection explanation of a turn the collector cut (ReasonCutByCollector).
func notJudgedCut(cut session.EndReason) string {
	return "not judged: the collector closed the turn early (" + string(cut) + ") while its spans could still come; → none, confidence 0"
}
