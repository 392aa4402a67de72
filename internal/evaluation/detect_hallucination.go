// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation // import "github.com/agenteval/agenteval-collector/internal/evaluation"

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/text"
)

// parameterHallucinations lists the turn's calls that passed a hallucinated parameter
// ("agent→tool.parameter"), split by whether a later valid call recovered them.
func parameterHallucinations(irs []InteractionResult) (params, recovered []string) {
	for i := range irs {
		for j := range irs[i].ToolCalls {
			for _, is := range irs[i].ToolCalls[j].Issues {
				if is.Issue != IssueParameterHallucination {
					continue
				}
				if irs[i].ToolCalls[j].RecoveredBy != "" {
					recovered = append(recovered, is.AgentID+"→"+is.ToolName+"."+is.Parameter)
				} else {
					params = append(params, is.AgentID+"→"+is.ToolName+"."+is.Parameter)
				}
			}
		}
	}
	return params, recovered
}

// recoveredParameters explains, and never reports, the parameter hallucinations that a
// later valid call recovered: they count in tool_use only (docs/scoring.md §5.2).
type recoveredParameters struct{}

var _ turnDetector = recoveredParameters{}

func (recoveredParameters) detect(_ *evalCtx, x *detectInput) detection {
	if _, recovered := x.parameterHallucinations(); len(recovered) > 0 {
		x.expl = append(x.expl, "hallucination: parameter hallucination ("+strings.Join(recovered, ", ")+") recovered by a later valid call; counted in tool_use only")
	}
	return detection{}
}

// hallucinationDetector finds ungrounded specifics in the final response, or a
// hallucinated tool parameter that no later call recovered (docs/scoring.md §5.2).
type hallucinationDetector struct{}

var _ turnDetector = hallucinationDetector{}

func (hallucinationDetector) detect(c *evalCtx, x *detectInput) detection {
	t := &c.s.Turns[x.ti]
	var hall detection
	params, _ := x.parameterHallucinations()
	var ungrounded []text.Fact
	final_ := strings.TrimSpace(t.FinalResponse)
	if final_ != "" {
		ungrounded = c.ungrounded(x.ti, t.FinalResponse)
	}
	expl := x.expl
	switch {
	case len(params) > 0:
		hall = detection{bad: true, typ: DetectionHallucination, conf: 1, fromParams: true,
			reason: "a tool call passed hallucinated parameter(s): " + strings.Join(params, ", ")}
		expl = append(expl, "hallucination: parameter hallucination ("+strings.Join(params, ", ")+"), confidence 1")
		if len(ungrounded) > 0 {
			hall.reason += "; ungrounded specifics in the final response: " + factList(ungrounded)
		}
	case len(ungrounded) > 0 && !weakEvidence(ungrounded):
		stated := len(c.salient(t.FinalResponse))
		if stated < len(ungrounded) {
			stated = len(ungrounded)
		}
		conf := 0.5 + 0.5*float64(len(ungrounded))/float64(stated)
		hall = detection{bad: true, typ: DetectionHallucination, conf: conf,
			reason: "the final response states specifics found in no source: " + factList(ungrounded)}
		expl = append(expl, fmt.Sprintf("hallucination: %d of %d stated specific(s) ungrounded (%s), confidence 0.5 + 0.5×%d/%d = %s",
			len(ungrounded), stated, factList(ungrounded), len(ungrounded), stated, num(conf)))
	case len(ungrounded) > 0:
		expl = append(expl, "hallucination: only one ungrounded proper name ("+factList(ungrounded)+"), not evidence enough; no parameter hallucination")
	case final_ == "":
		expl = append(expl, "hallucination: final response empty or not captured; no parameter hallucination")
	default:
		expl = append(expl, "hallucination: every stated specific is grounded; no parameter hallucination")
	}
	x.expl = expl
	return hall
}

// weakEvidence reports whether the ungrounded facts are a single proper name and nothing
// else. A capitalised word absent from the sources is often a paraphrase ("Amazon" for
// AMZN, "Python" from the model's knowledge); ids, numbers, amounts, dates, emails and
// URLs are not, so one of those, or two names, is needed to call a hallucination.
func weakEvidence(fs []text.Fact) bool {
	return len(fs) == 1 && fs[0].Kind == text.KindName
}

func factList(fs []text.Fact) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Kind + " " + f.Value
	}
	return strings.Join(parts, ", ")
}

// ungrounded returns text.Ungrounded(final, sources of turns 0..ti). Grounding in more
// sources can only find more facts, so it widens the sources in three stages (each source
// indexed once, memo.go; the turn's own sources with their facts, which its record
// carries forward) and stops as soon as nothing is left ungrounded: the user message with the final responder's
// input and tool results, then all of the turn's sources, then those of turns 0..ti.
// The result is the same as the last stage's, without the numbers the response derives
// in writing from grounded ones (text.WithoutDerived: "20% of $350 is $70", "20°C
// (68°F)"); the common case costs a few texts.
func (c *evalCtx) ungrounded(ti int, final string) []text.Fact {
	t := &c.s.Turns[ti]
	stated := c.salient(final)
	if !text.NeedGrounding(stated) {
		return nil
	}
	if fr := finalResponder(t); fr >= 0 {
		in := &t.Interactions[fr]
		first := []string{t.UserMessage, in.Input}
		for si := range in.Steps {
			if tc := in.Steps[si].ToolCall; tc != nil {
				first = append(first, tc.Result)
			}
		}
		if len(text.UngroundedIn(stated, c.sourceIndexes(first)...)) == 0 {
			return nil
		}
	}
	own := c.sourceIndexes(c.turnSources(ti))
	out := text.UngroundedIn(stated, own...)
	if len(out) == 0 || ti == 0 {
		return text.WithoutDerived(out, stated, final, own...)
	}
	all := make([]*text.Index, 0, 8*(ti+1))
	for k := 0; k < ti; k++ {
		all = append(all, c.indexes(c.turnSources(k))...)
	}
	all = append(all, own...)
	return text.WithoutDerived(text.UngroundedIn(stated, all...), stated, final, all...)
}

// turnSources returns the texts a final response may draw on from turn ti: the user
// message, the agents' inputs (instructions), the tool results and errors and the
// handoff payloads.
func (c *evalCtx) turnSources(ti int) []string {
	if c.sources == nil {
		c.sources = make([][]string, len(c.s.Turns))
	}
	if c.sources[ti] != nil {
		return c.sources[ti]
	}
	t := &c.s.Turns[ti]
	src := []string{}
	seen := map[string]bool{}
	add := func(s string) {
		// An agent's input is often the previous handoff payload: index each text once.
		if strings.TrimSpace(s) != "" && !seen[s] {
			seen[s] = true
			src = append(src, s)
		}
	}
	add(t.UserMessage)
	for ii := range t.Interactions {
		in := &t.Interactions[ii]
		add(in.Input)
		for si := range in.Steps {
			st := &in.Steps[si]
			if st.ToolCall != nil {
				add(st.ToolCall.Result)
				add(st.ToolCall.Error)
			}
			if st.Handoff != nil {
				add(st.Handoff.Payload)
			}
		}
	}
	c.sources[ti] = src
	return src
}
