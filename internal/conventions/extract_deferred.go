// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"strings"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// maxDeferredBytes bounds what ExtractDeferred leaves raw of an input message list (with
// max_text_bytes when that is lower): when more is needed the list is decoded at once,
// so that what an open span holds stays bounded by configuration
// (docs/decisions/performance.md §8.19).
const maxDeferredBytes = 4 << 10

// ExtractDeferred is ExtractInto for a caller that assembles turns later (the
// processor's ingest, through the Tracker). When a span's user message can come from its
// gen_ai.input.messages alone (a string; no input-side events, no OpenInference,
// Traceloop, Vercel, Pydantic AI, ADK, Mastra or input.value input), the list is only
// scanned: its elements that may be a user message (those that spell a user role
// anywhere) are left raw in r.Deferred.InputMessages, the rest dropped, and
// UserMessage stays empty until CompleteAll decodes them, from the last back, as Extract
// does. A list with no such element defers nothing (it has no user message). A list
// that does not scan, or whose candidates take more than min(MaxTextBytes, 4 KiB), is
// decoded at once. Every other field, the output side included, is what ExtractInto
// writes; CompleteAll then makes r exactly what ExtractInto would have written,
// problems included.
//
// The record's ids are formatted into ids, shared by the records of a batch (IDBuffer),
// or, when ids is nil, into an allocation of the record's own.
func (e *Extractor) ExtractDeferred(ids *IDBuffer, r *session.SpanRecord, res pcommon.Resource, scope pcommon.InstrumentationScope, span ptrace.Span) {
	e.extract(r, res, scope, span, true, ids)
}

// inputSources are the attributes besides gen_ai.input.messages that contentInput may
// read: their presence keeps the input eager.
var inputSources = [...]attrKey{attrAIPromptMessages, attrAIPrompt, attrPydAllMessages, attrADKLLMRequest,
	attrMastraRunInput, attrInputValue, attrTLEntityInput}

// deferInput does contentInput's work up to the decoding of the message list, when that
// list is the only input source (see ExtractDeferred), and reports whether it did; it
// runs where contentInput would have run, so that the problems CompleteAll notes are
// inserted there. readInput decodes the list's elements that pass mayBeUser, from the
// last, until one is a user message with text: the other elements cannot change its
// result, so only those are kept, in order, as the body of a JSON array (separated by
// what separated them when they are contiguous and that fits the cap, else by commas).
func (e *Extractor) deferInput(s *attrScan, ev *spanEvents, r *session.SpanRecord) bool {
	if !s.has[attrInMsgs] || ev.hasDetIn || ev.hasUser || len(s.oiIn) > 0 || len(s.tlIn) > 0 {
		return false
	}
	for _, k := range inputSources {
		if s.has[k] {
			return false
		}
	}
	v := s.v[attrInMsgs]
	if v.Type() != pcommon.ValueTypeStr || len(v.Str()) > e.msgLimit {
		return false
	}
	var buf [16]jsonSpan
	spans, doc, err := msgList(unsafeBytes(v.Str()), buf[:0])
	if err != nil || len(doc) == 0 {
		return false // decoded at once, with its problem
	}
	limit := min(e.maxText, maxDeferredBytes)
	first, last, n, size := -1, -1, 0, 0
	for i, sp := range spans {
		if !mayBeUser(doc[sp.a:sp.b]) {
			continue
		}
		if first < 0 {
			first = i
		}
		last, n, size = i, n+1, size+sp.b-sp.a+1
		if size > limit {
			return false
		}
	}
	if n == 0 {
		return true // no element can be a user message: no user message, no problem
	}
	var body string
	if last-first+1 == n && spans[last].b-spans[first].a <= limit { // contiguous, not spaced out
		body = unsafeString(doc[spans[first].a:spans[last].b])
	} else {
		b := make([]byte, 0, size)
		for _, sp := range spans[first : last+1] {
			if mayBeUser(doc[sp.a:sp.b]) {
				if len(b) > 0 {
					b = append(b, ',')
				}
				b = append(b, doc[sp.a:sp.b]...)
			}
		}
		body = unsafeString(b)
	}
	r.Deferred = session.DeferredContent{InputMessages: body, ProblemsAt: len(r.Problems)}
	return true
}

// CompleteAll decodes what ExtractDeferred left in each record's Deferred into the
// record, which is then what ExtractInto would have written (the user message is the
// record's own copy, sharing nothing with the raw elements), and clears Deferred; a
// record with nothing deferred is left as it is. Each distinct deferred list is decoded
// once: the model calls of one agent in a turn repeat the same input, and the records
// that share it share the decoded user message. Bad input is handled as ExtractInto
// handles it: a malformed element costs a problem ("gen_ai.input.messages: malformed
// JSON") at the place Extract notes it, invalid UTF-8 is replaced, a long message is cut
// at MaxTextBytes. Safe for concurrent use on different slices.
func (e *Extractor) CompleteAll(recs []session.SpanRecord) {
	// A trace has a few distinct lists (one per agent and step): a short list of the
	// decoded ones, searched in order (equal strings interned by the Tracker compare by
	// pointer), bounded so that a trace of many distinct lists stays linear.
	const memoMax = 16
	var memo [memoMax]deferredInput
	n := 0
	for i := range recs {
		r := &recs[i]
		body := r.Deferred.InputMessages
		if body == "" {
			r.Deferred = session.DeferredContent{}
			continue
		}
		k := 0
		for k < n && memo[k].body != body {
			k++
		}
		switch {
		case k < n:
		case n < memoMax:
			memo[n] = e.decodeDeferred(body)
			n++
		default:
			res := e.decodeDeferred(body)
			res.apply(r)
			continue
		}
		memo[k].apply(r)
	}
}

// deferredInput is what contentInput made of a deferred list: the (capped) user
// message, whether it was cut, and the problems it noted.
type deferredInput struct {
	body      string
	user      string
	truncated bool
	problems  []string
	panicked  bool
}

// decodeDeferred runs contentInput over a deferred list, on a scratch record.
func (e *Extractor) decodeDeferred(body string) (res deferredInput) {
	res.body = body
	var scratch session.SpanRecord
	defer func() {
		if p := recover(); p != nil {
			res.panicked = true
		}
		// The reader may return a substring of the list (go-json aliases its input): a
		// turn keeping the user message must not keep the whole list.
		res.user = strings.Clone(scratch.UserMessage)
		res.truncated, res.problems = scratch.Truncated, scratch.Problems
	}()
	var s attrScan
	s.v[attrInMsgs], s.has[attrInMsgs] = pcommon.NewValueStr("["+body+"]"), true
	e.contentInput(&s, &spanEvents{}, &scratch)
	return res
}

// apply writes a decoded list into r as contentInput would have, its problems at
// r.Deferred.ProblemsAt (those noted after the input follow them, within the bound a
// record keeps), and clears r.Deferred.
func (d *deferredInput) apply(r *session.SpanRecord) {
	at := min(max(r.Deferred.ProblemsAt, 0), len(r.Problems))
	r.Deferred = session.DeferredContent{}
	if d.user != "" {
		r.UserMessage = d.user
	}
	if d.truncated {
		r.Truncated = true
	}
	add := d.problems
	if d.panicked {
		add = append(add[:len(add):len(add)], "extract: internal error")
	}
	if len(add) == 0 || at >= maxProblems {
		return
	}
	add = add[:min(len(add), maxProblems-at)]
	after := r.Problems[at:]
	out := make([]string, 0, min(maxProblems, len(r.Problems)+len(add)))
	out = append(out, r.Problems[:at]...)
	out = append(out, add...)
	out = append(out, after[:min(len(after), maxProblems-len(out))]...)
	r.Problems = out
}

// unsafeString returns a string view of b without copying; b must not be written again.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
