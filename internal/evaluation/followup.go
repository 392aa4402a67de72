// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agenteval/agenteval-collector/internal/text"
)

// FollowUpDetection is the verdict on turn N from turn N+1's user message (docs/architecture.md
// §5.3 RDM and CCM; docs/scoring.md §5.2).
type FollowUpDetection struct {
	// Type is DetectionRDM, DetectionCCM or DetectionNone.
	Type string
	// Confidence of Type, in [0,1]: the cue's or the evidence's confidence for RDM, the
	// similarity for CCM (1 verbatim, 0.7 for a re-ask told by its frame), 1 − Signal for
	// none.
	Confidence float64
	// Signal is the strongest correction or re-ask signal seen, in [0,1] (0 for none
	// without any).
	Signal float64
	// Reason names the cue or the evidence, in one sentence.
	Reason string
	// Checks lists every check and its outcome, for the turn's explanation.
	Checks []string
}

// DetectFollowUp judges a turn by its follow-up: request and answer are turn N's user
// message and final response, followUp turn N+1's user message. The rules, in order
// (docs/scoring.md §5.2):
//
//   - no words (empty, blank, emoji or punctuation only) → none;
//   - RDM: a correction or complaint cue (text.Correction, which ignores a plain "no"
//     answering the answer's question and reads "Still getting the 502." as a fix that
//     failed), else a contradiction of the answer (text.Contradiction: "Lisbon, not
//     Madrid!" after an answer that said Madrid), a restated value (text.Restatement:
//     "12% of 450 is 54." after "… is 48.") or an objection (text.Objection:
//     "atorvastatin??", "why is this in Spanish?");
//   - CCM: the follow-up repeats the request's words (verbatim), or it is similar
//     (text.CompareFollowUp similarity ≥ ccm_similarity_threshold, ids the answer served
//     left out; else the embedding similarity when configured), or it has a re-ask frame
//     (text.Reask.Frame: "great, but is the amoxicillin ready yet?", "ok but what day?"
//     after an answer with no time, "so can I or not"; confidence 0.7, no embedding
//     call), while it does not accept the answer ("OK, then…"), does not ask the same
//     about another thing the answer served ("…in Lyon?" after Paris), and the answer did
//     not already contain the request (answered share < ccm_answered_threshold; a frame
//     overrides this: the answer echoed the request without answering it);
//   - none otherwise.
//
// It never panics: inputs are capped by the text primitives and invalid UTF-8 reads as
// U+FFFD.
func (e *Evaluator) DetectFollowUp(request, answer, followUp string) FollowUpDetection {
	return e.detectFollowUp("", request, answer, followUp)
}

// detectFollowUp is DetectFollowUp for session sessionID: with a Similarity configured,
// a follow-up below the lexical threshold is similar when its embedding similarity
// reaches embeddings.ccm_threshold (semantic.go).
func (e *Evaluator) detectFollowUp(sessionID, request, answer, followUp string) FollowUpDetection {
	var d FollowUpDetection
	if !hasWord(followUp) {
		d.Type = DetectionNone
		d.Confidence = 0
		d.Reason = "the follow-up has no words to judge by (empty, emoji or punctuation only)"
		d.Checks = []string{"rdm/ccm: not checked (follow-up has no words)"}
		return d
	}
	if ok, conf, cue := text.Correction(followUp, answer); ok {
		conf = clamp01(conf)
		d.Checks = append(d.Checks, "rdm: detected (cue "+strconv.Quote(cue)+", confidence "+num(conf)+")")
		d.Type, d.Confidence, d.Signal = DetectionRDM, conf, conf
		d.Reason = "the next user message corrects or complains about the response (cue " + strconv.Quote(cue) + ")"
		return d
	}
	ev := text.FollowUpEvidence(request, answer, followUp, e.cfg.CCMSimilarityThreshold)
	if ev.Contradicts {
		conf := clamp01(ev.ContradictionConf)
		d.Checks = append(d.Checks, fmt.Sprintf("rdm: contradiction (%s, confidence %s)", ev.ContradictionEvidence, num(conf)))
		d.Type, d.Confidence, d.Signal = DetectionRDM, conf, conf
		d.Reason = "the next user message contradicts the response (" + ev.ContradictionEvidence + ")"
		return d
	}
	d.Checks = append(d.Checks, "rdm: no correction cue and no contradiction of the response")

	th := e.cfg.CCMSimilarityThreshold
	if strings.TrimSpace(request) == "" {
		d.Checks = append(d.Checks, "ccm: not checked (user message not captured)")
		return d.none()
	}
	r := ev.Reask
	d.Signal = clamp01(r.Similarity)
	switch {
	case r.Empty && r.Frame == "":
		d.Checks = append(d.Checks, "ccm: no content words to compare")
		return d.none()
	case r.Verbatim:
		d.Checks = append(d.Checks, "ccm: the follow-up repeats the request's words")
		d.Type, d.Confidence = DetectionCCM, 1
		d.Reason = "the next user message re-asks the same request word for word"
		return d
	}
	served := ""
	if len(r.Served) > 0 {
		served = " (without " + strings.Join(r.Served, ", ") + ", which the answer served)"
	}
	sim := d.Signal
	frame := ""
	if sim < th {
		d.Checks = append(d.Checks, "ccm: similarity "+num(sim)+" < "+num(th)+served)
		if frame = r.Frame; frame != "" {
			d.Checks = append(d.Checks, "ccm: re-ask frame: "+frame)
			d.Signal = max(d.Signal, frameConfidence)
		} else {
			es, similar, check := e.semanticReask(sessionID, request, followUp)
			if check != "" {
				d.Checks = append(d.Checks, check)
			}
			if !similar {
				return d.none()
			}
			sim, th, d.Signal = es, e.cfg.Embeddings.CCMThreshold, es
		}
	}
	if cue, ok := text.Acceptance(followUp); ok && r.Frame != text.FrameYesNo {
		d.Checks = append(d.Checks, fmt.Sprintf("ccm: the follow-up accepts the answer (%q); similarity %s%s", cue, num(sim), served))
		return d.none()
	}
	if text.SettledYesNo(request, answer) { // a verbatim re-ask returned above
		d.Checks = append(d.Checks, fmt.Sprintf("ccm: the answer settled the request's yes/no question; similarity %s%s", num(sim), served))
		return d.none()
	}
	if len(r.SwappedOut) > 0 {
		d.Checks = append(d.Checks, fmt.Sprintf("ccm: the follow-up asks about %q instead of %q, which the answer served; similarity %s",
			strings.Join(r.SwappedIn, " "), strings.Join(r.SwappedOut, " "), num(sim)))
		return d.none()
	}
	if at := e.cfg.CCMAnsweredThreshold; r.Answered >= at && frame == "" {
		// The answer echoes the request; a frame can still show that it did not deliver
		// what was asked ("fine, but has the application been approved?").
		if r.Frame == "" {
			d.Checks = append(d.Checks, fmt.Sprintf("ccm: the answer contains %s of the request (>= %s), so it was answered; similarity %s%s",
				num(r.Answered), num(at), num(sim), served))
			return d.none()
		}
		frame = r.Frame
		d.Checks = append(d.Checks, fmt.Sprintf("ccm: the answer contains %s of the request (>= %s); re-ask frame: %s", num(r.Answered), num(at), frame))
	}
	if frame != "" {
		d.Type, d.Confidence = DetectionCCM, frameConfidence
		d.Reason = "the next user message re-asks the same request (" + frame + ")"
		return d
	}
	d.Checks = append(d.Checks, fmt.Sprintf("ccm: similarity %s >= %s%s; the answer contains %s of the request", num(sim), num(th), served, num(r.Answered)))
	d.Type, d.Confidence = DetectionCCM, sim
	d.Reason = fmt.Sprintf("the next user message re-asks the same request (similarity %s >= %s)", num(sim), num(th))
	return d
}

// frameConfidence is the confidence of a re-ask told by its frame (text.Reask.Frame), not
// by its similarity to the request.
const frameConfidence = 0.7

func (d FollowUpDetection) none() FollowUpDetection {
	d.Type = DetectionNone
	d.Confidence = clamp01(1 - d.Signal)
	d.Reason = "the follow-up neither corrects nor re-asks"
	return d
}

// hasWord reports whether s holds a letter or a digit (in its first MaxInputBytes).
func hasWord(s string) bool {
	if len(s) > text.MaxInputBytes {
		s = s[:text.MaxInputBytes]
	}
	for _, r := range s {
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return true
		}
	}
	return false
}

// followUpDetector is the RDM and CCM detector of a turn (docs/scoring.md §5.2): it
// judges the turn by the next turn's user message once the follow-up is known.
type followUpDetector struct{}

var _ turnDetector = followUpDetector{}

func (followUpDetector) detect(c *evalCtx, x *detectInput) detection {
	if !x.final {
		x.expl = append(x.expl, "rdm/ccm: pending (follow-up not known yet)")
		return detection{}
	}
	t := &c.s.Turns[x.ti]
	var next *string
	if x.ti+1 < len(c.s.Turns) {
		next = &c.s.Turns[x.ti+1].UserMessage
	}
	var d detection
	d, x.followUpConf, x.expl = c.e.followUpVerdict(c.s.ID, t.UserMessage, t.FinalResponse, next, x.expl)
	return d
}

// followUpVerdict judges the turn (request, answer) by its follow-up next, nil when the
// session ended without one: the RDM or CCM verdict (the zero detection for none), the strongest
// follow-up signal (−1 when the checks did not run), and expl with the checks appended.
// sessionID keys the embeddings' per-session cost limit (semantic.go).
// The whole-session path (followUpDetector) and the turn-by-turn path (finalize) share it.
func (e *Evaluator) followUpVerdict(sessionID, request, answer string, next *string, expl []string) (detection, float64, []string) {
	switch {
	case next == nil:
		return detection{}, -1, append(expl, "rdm/ccm: not applicable (last turn, no follow-up)")
	case strings.TrimSpace(*next) == "":
		return detection{}, -1, append(expl, "rdm/ccm: not checked (follow-up user message not captured)")
	}
	fd := e.detectFollowUp(sessionID, request, answer, *next)
	expl = append(expl, fd.Checks...)
	switch fd.Type {
	case DetectionRDM, DetectionCCM:
		return detection{bad: true, typ: fd.Type, conf: fd.Confidence, reason: fd.Reason}, fd.Signal, expl
	}
	return detection{}, fd.Signal, expl
}
