// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package tracker // import "github.com/agenteval/agenteval-collector/internal/tracker"

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/agenteval/agenteval-collector/internal/reuse"
	"github.com/agenteval/agenteval-collector/internal/session"
)

// traceRecords holds the records of one open trace in the compact form the Tracker retains
// them in until the turn closes (docs/decisions/performance.md §2). A SpanRecord is a
// 784-byte struct of mostly empty fields whose strings repeat across the spans of a turn
// (the same user message, system prompt, model, session id and rules on every LLM span);
// here each record is a few dozen bytes:
//
//   - strings are interned per trace: each distinct value is copied once into text (so an
//     open trace pins nothing of the batches it came from) and a record refers to it by
//     its index; short values of low-cardinality fields go to the Tracker's shared
//     vocabulary (valueVocab) instead;
//   - span ids are interned too, as 8-byte binary ids when they are 16 lower-case hex
//     digits (as pcommon.SpanID.String writes them); a record refers to its own id and
//     to its parent's by index. The id table also answers "has this span arrived, and is
//     it a GenAI span" for the Tracker's root detection and duplicate check;
//   - a record is encoded as varints: its class, a bit mask of the fields it sets (in
//     recordField order), its span id index, start (from the trace's first start) and
//     duration, then the set fields in mask order.
//
// records() decodes the exact []SpanRecord that was retained, in arrival order: every
// field, nil and empty slices told apart (tracker_recs_test.go checks the round trip of
// every SpanRecord field, so a new field cannot be forgotten here).
type traceRecords struct {
	n    int    // records retained
	base int64  // StartUnixNano of the first record
	buf  []byte // the encoded records, in arrival order

	// Distinct strings: string i is text[end(i-1):end(i)] (with end(-1) = 0). The ends
	// are 32-bit; ends64 replaces them in the unlikely trace whose text passes 4 GiB.
	text     []byte
	ends     []uint32
	ends64   []int
	strIndex internIndex

	// Distinct span ids, own and parents'. ids[i] is the binary id, or the string index
	// of an id that is not 16 lower-case hex digits (idMeta bit idStr). Once the span
	// arrived, idMeta has idArrived, and idGenAI when its class is a GenAI one.
	ids     []uint64
	idMeta  []uint8
	idIndex internIndex

	// Distinct ToolDefs slices: the extractor's cache shares them between spans.
	defs [][]session.ToolDefinition

	// listed and calls count the list elements and requested calls of the records, so
	// that records sizes their backing arrays once.
	listed, calls int
}

// idMeta bits.
const (
	idStr uint8 = 1 << iota
	idArrived
	idGenAI
)

// recordField numbers the SpanRecord fields that a record's mask marks as set: frequent
// fields first, so that the mask of a common record fits in two varint bytes. Strings
// are set when not empty, slices and ToolSchema when not nil, pointers when not nil.
type recordField uint8

const (
	fieldParent recordField = iota
	fieldClassRule
	fieldOperation
	fieldSessionID
	fieldSessionKey
	fieldService
	fieldContentCaptured // flag
	fieldModel
	fieldUsage // set when any count is not zero
	fieldUserMessage
	fieldOutput
	fieldFinishReasons
	fieldRequestedCalls
	fieldToolName
	fieldToolCallID
	fieldToolArguments
	fieldToolResult
	fieldToolArgsSource
	fieldAgentName
	fieldAgentRule
	fieldError // flag
	fieldErrorType
	fieldInput
	fieldReasoning
	fieldToolDefs
	fieldToolArgsTruncated // flag
	fieldTruncated         // flag
	fieldEndSignal         // flag
	fieldOutcome
	fieldOutcomeTrue // flag
	fieldAgentDescription
	fieldGraphNodeID
	fieldGraphParentID
	fieldLangGraphNode
	fieldToolSchema
	fieldToolDescription
	fieldAllowedTools
	fieldHandoffTargets
	fieldCost
	fieldHandoffFrom
	fieldHandoffTo
	fieldHandoffMode
	fieldHandoffRule
	fieldProblems
	fieldErrorMessage
	fieldDeferredInput // Deferred.InputMessages
	fieldDeferredAt    // Deferred.ProblemsAt, when not zero
	fieldParentRemote  // flag
)

// RequestedToolCall flags.
const (
	callBitID = 1 << iota
	callBitName
	callBitArgs
	callBitArgsTruncated
)

var hashSeed = maphash.MakeSeed()

// maxEnd32 is the text size past which a trace's string ends move to ends64 (a
// variable so that tests can lower it).
var maxEnd32 = math.MaxUint32

// add appends r (which belongs to this trace) and reports whether its parent span already
// arrived (parentArrived) with a GenAI class (parentGenAI, SpanClass.GenAI), and whether r
// repeats the id of a span that already arrived (dup).
func (c *traceRecords) add(r *session.SpanRecord, vocab *valueVocab) (parentArrived, parentGenAI, dup bool) {
	if c.n == 0 {
		c.base = r.StartUnixNano
		// A turn has tens of records: skip the first doublings of the buffers (a one-span
		// trace then holds about 250 bytes).
		c.buf = make([]byte, 0, 128)
		c.text = make([]byte, 0, 64)
		c.ids, c.idMeta = make([]uint64, 0, 8), make([]uint8, 0, 8)
	}
	c.n++
	var mask uint64
	set := func(f recordField, on bool) {
		if on {
			mask |= 1 << f
		}
	}
	set(fieldParent, r.ParentSpanID != "")
	set(fieldClassRule, r.ClassRule != "")
	set(fieldOperation, r.Operation != "")
	set(fieldSessionID, r.SessionID != "")
	set(fieldSessionKey, r.SessionKey != "")
	set(fieldService, r.Service != "")
	set(fieldContentCaptured, r.ContentCaptured)
	set(fieldModel, r.Model != "")
	set(fieldUsage, r.Usage != session.Usage{})
	set(fieldUserMessage, r.UserMessage != "")
	set(fieldOutput, r.Output != "")
	set(fieldFinishReasons, r.FinishReasons != nil)
	set(fieldRequestedCalls, r.RequestedCalls != nil)
	set(fieldToolName, r.ToolName != "")
	set(fieldToolCallID, r.ToolCallID != "")
	set(fieldToolArguments, r.ToolArguments != "")
	set(fieldToolResult, r.ToolResult != "")
	set(fieldAgentName, r.AgentName != "")
	set(fieldAgentRule, r.AgentRule != "")
	set(fieldError, r.Error)
	set(fieldErrorType, r.ErrorType != "")
	set(fieldErrorMessage, r.ErrorMessage != "")
	set(fieldInput, r.Input != "")
	set(fieldReasoning, r.Reasoning != "")
	set(fieldToolDefs, r.ToolDefs != nil)
	set(fieldToolArgsSource, r.ToolArgsSource != "")
	set(fieldToolArgsTruncated, r.ToolArgsTruncated)
	set(fieldTruncated, r.Truncated)
	set(fieldEndSignal, r.EndSignal)
	set(fieldParentRemote, r.ParentRemote)
	set(fieldOutcome, r.Outcome != nil)
	set(fieldOutcomeTrue, r.Outcome != nil && *r.Outcome)
	set(fieldAgentDescription, r.AgentDescription != "")
	set(fieldGraphNodeID, r.GraphNodeID != "")
	set(fieldGraphParentID, r.GraphParentID != "")
	set(fieldLangGraphNode, r.LangGraphNode != "")
	set(fieldToolSchema, r.ToolSchema != nil)
	set(fieldToolDescription, r.ToolDescription != "")
	set(fieldAllowedTools, r.AllowedTools != nil)
	set(fieldHandoffTargets, r.HandoffTargets != nil)
	set(fieldCost, r.Cost != nil)
	set(fieldHandoffFrom, r.HandoffFrom != "")
	set(fieldHandoffTo, r.HandoffTo != "")
	set(fieldHandoffMode, r.HandoffMode != "")
	set(fieldHandoffRule, r.HandoffRule != "")
	set(fieldProblems, r.Problems != nil)
	set(fieldDeferredInput, r.Deferred.InputMessages != "")
	set(fieldDeferredAt, r.Deferred.ProblemsAt != 0)

	self := c.id(r.SpanID)
	if c.idMeta[self]&idArrived != 0 {
		dup = true
	} else {
		c.idMeta[self] |= idArrived
		if r.Class.GenAI() {
			c.idMeta[self] |= idGenAI
		}
	}
	// Most records take a few dozen bytes: room for maxRecordGuess, grown by a quarter
	// (a longer record, with many calls or problems, grows the buffer as append does).
	b := append(reserve(c.buf, maxRecordGuess, 256), byte(r.Class))
	b = binary.AppendUvarint(b, mask)
	b = binary.AppendUvarint(b, uint64(self))
	b = binary.AppendVarint(b, r.StartUnixNano-c.base)
	b = binary.AppendVarint(b, r.EndUnixNano-r.StartUnixNano)
	// memo is the last reference written for each field of this class (valueVocab.memo).
	var memo *[numMemoFields]memoEntry
	if vocab != nil && int(r.Class) < len(vocab.memo) {
		memo = &vocab.memo[r.Class]
	}
	if r.ParentSpanID != "" {
		// Siblings share their parent: the id table is searched once for a run of them.
		var p int
		if memo != nil && memo[memoParent].trace == c && memo[memoParent].s == r.ParentSpanID {
			p = memo[memoParent].ref
		} else {
			p = c.id(r.ParentSpanID)
			if memo != nil {
				memo[memoParent] = memoEntry{s: r.ParentSpanID, trace: c, ref: p}
			}
		}
		if m := c.idMeta[p]; m&idArrived != 0 && p != self {
			parentArrived, parentGenAI = true, m&idGenAI != 0
		}
		b = binary.AppendUvarint(b, uint64(p))
	}
	// strAt is str for a field the memo follows.
	strAt := func(f memoField, on bool, s string) {
		if !on {
			return
		}
		if memo != nil {
			if m := &memo[f]; m.trace == c && m.s == s {
				b = binary.AppendUvarint(b, uint64(m.ref))
				return
			}
			i := c.str(s)
			memo[f] = memoEntry{s: s, trace: c, ref: i}
			b = binary.AppendUvarint(b, uint64(i))
			return
		}
		b = binary.AppendUvarint(b, uint64(c.str(s)))
	}
	str := func(on bool, s string) {
		if on {
			b = binary.AppendUvarint(b, uint64(c.str(s)))
		}
	}
	// voc writes a field of the vocabulary: 1 + its index there, else 0 and a string ref.
	voc := func(on bool, s string) {
		if !on {
			return
		}
		if i, ok := vocab.ref(s); ok {
			b = binary.AppendUvarint(b, uint64(i)+1)
			return
		}
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(c.str(s)))
	}
	// vocAt is voc for a field the memo follows.
	vocAt := func(f memoField, on bool, s string) {
		if !on {
			return
		}
		if memo == nil {
			voc(true, s)
			return
		}
		if m := &memo[f]; m.s == s && m.ok && (m.trace == nil || m.trace == c) {
			if m.trace == nil {
				b = binary.AppendUvarint(b, uint64(m.ref)+1)
			} else {
				b = append(b, 0)
				b = binary.AppendUvarint(b, uint64(m.ref))
			}
			return
		}
		if i, ok := vocab.ref(s); ok {
			memo[f] = memoEntry{s: s, ok: true, ref: i}
			b = binary.AppendUvarint(b, uint64(i)+1)
			return
		}
		i := c.str(s)
		memo[f] = memoEntry{s: s, ok: true, trace: c, ref: i}
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(i))
	}
	list := func(l []string, vocabulary bool) {
		if l != nil {
			c.listed += len(l)
			b = binary.AppendUvarint(b, uint64(len(l)))
			for _, s := range l {
				if vocabulary {
					voc(true, s)
				} else {
					b = binary.AppendUvarint(b, uint64(c.str(s)))
				}
			}
		}
	}
	strAt(memoName, true, r.Name)
	vocAt(memoClassRule, r.ClassRule != "", r.ClassRule)
	vocAt(memoOperation, r.Operation != "", r.Operation)
	strAt(memoSessionID, r.SessionID != "", r.SessionID)
	vocAt(memoSessionKey, r.SessionKey != "", r.SessionKey)
	vocAt(memoService, r.Service != "", r.Service)
	vocAt(memoModel, r.Model != "", r.Model)
	if r.Usage != (session.Usage{}) {
		u := &r.Usage
		b = binary.AppendVarint(b, u.InputTokens)
		b = binary.AppendVarint(b, u.OutputTokens)
		b = binary.AppendVarint(b, u.CacheReadTokens)
		b = binary.AppendVarint(b, u.ReasoningTokens)
		b = binary.AppendVarint(b, int64(u.LLMCalls))
	}
	str(r.UserMessage != "", r.UserMessage)
	str(r.Output != "", r.Output)
	list(r.FinishReasons, true)
	if r.RequestedCalls != nil {
		c.calls += len(r.RequestedCalls)
		b = binary.AppendUvarint(b, uint64(len(r.RequestedCalls)))
		for i := range r.RequestedCalls {
			rc := &r.RequestedCalls[i]
			var f byte
			if rc.ID != "" {
				f |= callBitID
			}
			if rc.Name != "" {
				f |= callBitName
			}
			if rc.Arguments != "" {
				f |= callBitArgs
			}
			if rc.ArgumentsTruncated {
				f |= callBitArgsTruncated
			}
			b = append(b, f)
			str(rc.ID != "", rc.ID)
			voc(rc.Name != "", rc.Name)
			str(rc.Arguments != "", rc.Arguments)
		}
	}
	vocAt(memoToolName, r.ToolName != "", r.ToolName)
	str(r.ToolCallID != "", r.ToolCallID)
	str(r.ToolArguments != "", r.ToolArguments)
	str(r.ToolResult != "", r.ToolResult)
	vocAt(memoToolArgsSource, r.ToolArgsSource != "", r.ToolArgsSource)
	vocAt(memoAgentName, r.AgentName != "", r.AgentName)
	vocAt(memoAgentRule, r.AgentRule != "", r.AgentRule)
	str(r.ErrorType != "", r.ErrorType)
	str(r.ErrorMessage != "", r.ErrorMessage)
	str(r.Input != "", r.Input)
	str(r.Reasoning != "", r.Reasoning)
	if r.ToolDefs != nil {
		b = binary.AppendUvarint(b, uint64(c.toolDefs(r.ToolDefs)))
	}
	str(r.AgentDescription != "", r.AgentDescription)
	str(r.GraphNodeID != "", r.GraphNodeID)
	str(r.GraphParentID != "", r.GraphParentID)
	str(r.LangGraphNode != "", r.LangGraphNode)
	if r.ToolSchema != nil {
		b = binary.AppendUvarint(b, uint64(c.str(string(r.ToolSchema))))
	}
	str(r.ToolDescription != "", r.ToolDescription)
	list(r.AllowedTools, false)
	list(r.HandoffTargets, false)
	if r.Cost != nil {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*r.Cost))
	}
	str(r.HandoffFrom != "", r.HandoffFrom)
	str(r.HandoffTo != "", r.HandoffTo)
	voc(r.HandoffMode != "", r.HandoffMode)
	voc(r.HandoffRule != "", r.HandoffRule)
	list(r.Problems, false)
	strAt(memoDeferredInput, r.Deferred.InputMessages != "", r.Deferred.InputMessages)
	if r.Deferred.ProblemsAt != 0 {
		b = binary.AppendVarint(b, int64(r.Deferred.ProblemsAt))
	}
	c.buf = b
	return parentArrived, parentGenAI, dup
}

// maxRecordGuess is the room reserved before a record is encoded: most take less.
const maxRecordGuess = 64

// reserve returns s with room for n more elements. It grows s by a quarter of its
// length (at least n, at least step) rather than doubling it as append does: an open
// trace's buffers are held until its turn closes, and a doubled buffer holds up to
// half of itself unused (docs/decisions/performance.md §8.19). The copies this costs
// are amortised: each element is copied about four times.
func reserve[T any](s []T, n, step int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	g := make([]T, len(s), len(s)+max(n, step, len(s)/4))
	copy(g, s)
	return g
}

// str interns s and returns its index.
func (c *traceRecords) str(s string) int {
	if n := c.strCount(); c.strIndex.full(n) {
		c.strIndex.grow(n, func(e int) uint64 { return maphash.Bytes(hashSeed, c.strBytes(e)) })
	}
	mask := uint64(c.strIndex.len() - 1)
	for i := maphash.String(hashSeed, s) & mask; ; i = (i + 1) & mask {
		e := c.strIndex.at(i)
		if e == 0 {
			n := c.appendStr(s)
			c.strIndex.put(i, n)
			return n - 1
		}
		if string(c.strBytes(e-1)) == s {
			return e - 1
		}
	}
}

// appendStr adds s to the strings and returns their new count.
func (c *traceRecords) appendStr(s string) int {
	c.text = append(reserve(c.text, len(s), 128), s...)
	if c.ends64 == nil && len(c.text) > maxEnd32 {
		c.ends64 = make([]int, len(c.ends), len(c.ends)+1)
		for i, e := range c.ends {
			c.ends64[i] = int(e)
		}
		c.ends = nil
	}
	if c.ends64 != nil {
		c.ends64 = append(c.ends64, len(c.text))
		return len(c.ends64)
	}
	c.ends = append(c.ends, uint32(len(c.text))) //nolint:gosec // checked above
	return len(c.ends)
}

// strCount returns the number of distinct strings.
func (c *traceRecords) strCount() int {
	if c.ends64 != nil {
		return len(c.ends64)
	}
	return len(c.ends)
}

// strEnd returns the end offset of string i in text (0 for i = -1).
func (c *traceRecords) strEnd(i int) int {
	switch {
	case i < 0:
		return 0
	case c.ends64 != nil:
		return c.ends64[i]
	}
	return int(c.ends[i])
}

func (c *traceRecords) strBytes(i int) []byte {
	return c.text[c.strEnd(i-1):c.strEnd(i)]
}

// valueVocab holds the short strings of low-cardinality fields that the records of every
// trace repeat (rules, session keys, operations, services, models, agent and tool names,
// finish reasons): a Tracker keeps one copy of each for all its traces. It is bounded:
// values longer than vocabMaxLen bytes, and new values once it holds vocabMax,
// stay in the trace's own strings. A nil *valueVocab admits nothing.
type valueVocab struct {
	strs  []string
	index internIndex
	// memo holds, per span class and for the fields that repeat most, the last string
	// written and its reference: a record that repeats it (the session id and the
	// service of its trace's previous record, the rule, operation, model or input list
	// of the previous record of its class) is written without hashing the string
	// (docs/decisions/performance.md §8.39). Its strings are a batch's: forgetMemo clears
	// it once the batch is observed, so that it pins nothing of it.
	memo [numMemoClasses][numMemoFields]memoEntry
}

// memoEntry is a memo's string and the reference written for it: a string of the trace
// records trace (index ref; for memoParent, an index of its span ids), or, with trace
// nil, vocabulary entry ref.
type memoEntry struct {
	s     string
	trace *traceRecords
	ref   int
	ok    bool // set (a vocabulary entry's trace is nil)
}

// memoField numbers the fields valueVocab.memo follows.
type memoField uint8

const (
	memoName memoField = iota
	memoClassRule
	memoOperation
	memoSessionID
	memoSessionKey
	memoService
	memoModel
	memoToolName
	memoToolArgsSource
	memoAgentName
	memoAgentRule
	memoDeferredInput
	memoParent // an index in the trace's span ids
	numMemoFields
)

// numMemoClasses bounds the span classes the memo follows (session.ClassEvaluation is
// the last; its records are never retained).
const numMemoClasses = int(session.ClassEvaluation) + 1

// forgetMemo clears the memo (nil v: nothing to do).
func (v *valueVocab) forgetMemo() {
	if v != nil {
		v.memo = [numMemoClasses][numMemoFields]memoEntry{}
	}
}

// vocabMaxLen bounds the length of a vocabulary string, vocabMax their number (a
// variable so that tests can lower it).
const vocabMaxLen = 64

var vocabMax = 4096

// ref returns the index of s in the vocabulary, adding it when there is room.
func (v *valueVocab) ref(s string) (int, bool) {
	if v == nil || len(s) > vocabMaxLen {
		return 0, false
	}
	if n := len(v.strs); v.index.full(n) && n < vocabMax {
		v.index.grow(n, func(e int) uint64 { return maphash.String(hashSeed, v.strs[e]) })
	}
	if v.index.len() == 0 {
		return 0, false
	}
	mask := uint64(v.index.len() - 1)
	for i := maphash.String(hashSeed, s) & mask; ; i = (i + 1) & mask {
		e := v.index.at(i)
		if e == 0 {
			if len(v.strs) >= vocabMax {
				return 0, false
			}
			v.strs = append(v.strs, strings.Clone(s))
			v.index.put(i, len(v.strs))
			return len(v.strs) - 1, true
		}
		if v.strs[e-1] == s {
			return e - 1, true
		}
	}
}

// internIndex is an open-addressing hash index (linear probing) of the entries of a table
// held elsewhere: a slot holds entry+1, 0 when free. Its length is a power of two, kept
// at least 4/3 of the entries. Slots are 16-bit while the table has fewer than
// maxIndex16 entries, 32-bit past it.
type internIndex struct {
	s16 []uint16
	s32 []uint32
}

// maxIndex16 is the number of entries up to which 16-bit slots are used (a variable so
// that tests can lower it).
var maxIndex16 = math.MaxUint16 - 1

func (x *internIndex) len() int {
	if x.s32 != nil {
		return len(x.s32)
	}
	return len(x.s16)
}

func (x *internIndex) at(i uint64) int {
	if x.s32 != nil {
		return int(x.s32[i])
	}
	return int(x.s16[i])
}

func (x *internIndex) put(i uint64, v int) {
	if x.s32 != nil {
		x.s32[i] = uint32(v) //nolint:gosec // entries are fewer than 2^32: each costs a record field
	} else {
		x.s16[i] = uint16(v) //nolint:gosec // at most maxIndex16 (full)
	}
}

// full reports whether adding an entry to the n already indexed needs grow.
func (x *internIndex) full(n int) bool {
	return 4*(n+1) > 3*x.len() || (x.s32 == nil && n+1 > maxIndex16)
}

// grow rebuilds the index twice as large for the n entries, hash giving an entry's hash.
func (x *internIndex) grow(n int, hash func(e int) uint64) {
	size := max(16, 2*x.len())
	if n+1 > maxIndex16 {
		x.s16, x.s32 = nil, make([]uint32, size)
	} else {
		x.s16, x.s32 = make([]uint16, size), nil
	}
	mask := uint64(size - 1)
	for e := range n {
		i := hash(e) & mask
		for x.at(i) != 0 {
			i = (i + 1) & mask
		}
		x.put(i, e+1)
	}
}

// hexNibble maps a byte to its value as a lower-case hex digit, 0xff for any other
// byte (upper-case digits included: their id would not format back to the same string).
var hexNibble = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, ch := range []byte("0123456789abcdef") {
		t[ch] = byte(i)
	}
	return t
}()

// hexID returns the binary value of a 16-digit lower-case hex span id. It looks each
// digit up in a table without a branch: the digits of random ids defeat the branch
// predictor of a digit-or-letter test (docs/decisions/performance.md §8.30).
func hexID(s string) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	var v uint64
	var bad byte
	for i := range 16 {
		d := hexNibble[s[i]]
		bad |= d
		v = v<<4 | uint64(d&0xf)
	}
	return v, bad&0xf0 == 0
}

// mixHash is a 64-bit finaliser (murmur3 fmix64): span ids are random, string indices
// are not.
func mixHash(v uint64) uint64 {
	v ^= v >> 33
	v *= 0xff51afd7ed558ccd
	v ^= v >> 33
	v *= 0xc4ceb9fe1a85ec53
	v ^= v >> 33
	return v
}

// id interns a span id and returns its index.
func (c *traceRecords) id(s string) int {
	v, bin := hexID(s)
	var meta uint8
	if !bin {
		v, meta = uint64(c.str(s)), idStr
	}
	if c.idIndex.full(len(c.ids)) {
		c.idIndex.grow(len(c.ids), func(e int) uint64 { return mixHash(c.ids[e] ^ uint64(c.idMeta[e]&idStr)) })
	}
	mask := uint64(c.idIndex.len() - 1)
	for i := mixHash(v^uint64(meta)) & mask; ; i = (i + 1) & mask {
		e := c.idIndex.at(i)
		if e == 0 {
			c.ids = append(reserve(c.ids, 1, 16), v)
			c.idMeta = append(reserve(c.idMeta, 1, 16), meta)
			c.idIndex.put(i, len(c.ids))
			return len(c.ids) - 1
		}
		if j := e - 1; c.ids[j] == v && c.idMeta[j]&idStr == meta {
			return j
		}
	}
}

// toolDefs interns a ToolDefs list by content: the spans of one agent repeat the same
// definitions, which are then kept once per trace however each span's copy was decoded.
func (c *traceRecords) toolDefs(d []session.ToolDefinition) int {
	for i, x := range c.defs {
		if slices.EqualFunc(x, d, equalToolDefinition) {
			return i
		}
	}
	c.defs = append(c.defs, d)
	return len(c.defs) - 1
}

// equalToolDefinition compares two definitions; a nil schema (unknown) differs from an
// empty one.
func equalToolDefinition(a, b session.ToolDefinition) bool {
	return a.Name == b.Name && a.Description == b.Description &&
		(a.Parameters == nil) == (b.Parameters == nil) && bytes.Equal(a.Parameters, b.Parameters)
}

// recordReader decodes the records of a traceRecords.
type recordReader struct {
	c     *traceRecords
	vocab *valueVocab
	b     []byte
	ids   []string // decoded span ids
	// strs are the trace's distinct strings decoded so far, by index. Each is its own
	// allocation: a string the evaluation keeps for long (a turn record's user message or
	// tokens, kept by the continuation state) must not pin the trace's other strings, as
	// one shared allocation of the whole text did.
	strs []string
}

// readerPool holds recordReaders between decodings: their index of the trace's strings
// and span ids is scratch (the records get the strings, not the arrays), reused for the
// next closed trace instead of allocated again (docs/decisions/performance.md §8.27).
var readerPool = sync.Pool{New: func() any { return new(recordReader) }}

// maxPooledStrs bounds the string and id arrays a pooled reader keeps: a rare huge
// trace's are left to the collector.
const maxPooledStrs = 4096

// put clears the reader (it pins no string or trace) and pools it.
func (d *recordReader) put() {
	*d = recordReader{strs: reuse.Slice(d.strs, maxPooledStrs), ids: reuse.Slice(d.ids, maxPooledStrs)}
	readerPool.Put(d)
}

// zeroed returns n zero strings, in s's array when it is large enough (s comes from
// reuse.Slice, so its whole capacity is zero).
func zeroed(s []string, n int) []string {
	if cap(s) < n {
		return make([]string, n)
	}
	return s[:n]
}

func (d *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *recordReader) varint() int64 {
	v, n := binary.Varint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *recordReader) str() string {
	return d.strAt(int(d.uvarint()))
}

// strAt returns distinct string i, decoded once.
func (d *recordReader) strAt(i int) string {
	if s := d.strs[i]; s != "" {
		return s
	}
	s := string(d.c.text[d.c.strEnd(i-1):d.c.strEnd(i)])
	d.strs[i] = s
	return s
}

// voc reads a field written by voc.
func (d *recordReader) voc() string {
	if i := d.uvarint(); i > 0 {
		return d.vocab.strs[i-1]
	}
	return d.str()
}

// records decodes the retained records, in arrival order, with traceID as their TraceID;
// vocab is the one they were added with. Each distinct string of the trace is one
// allocation, shared by the records that repeat it (the vocabulary's are the Tracker's);
// their slices share a few backing arrays.
func (c *traceRecords) records(traceID string, vocab *valueVocab) []session.SpanRecord {
	if c.n == 0 {
		return nil
	}
	d := readerPool.Get().(*recordReader)
	defer d.put()
	*d = recordReader{c: c, vocab: vocab, b: c.buf, strs: zeroed(d.strs, c.strCount()), ids: zeroed(d.ids, len(c.ids))}
	// Span ids: the hex ones are formatted into one buffer.
	nbin := 0
	for _, m := range c.idMeta {
		if m&idStr == 0 {
			nbin++
		}
	}
	hexBuf := make([]byte, 0, 16*nbin)
	for i, v := range c.ids {
		if c.idMeta[i]&idStr == 0 {
			var raw [8]byte
			binary.BigEndian.PutUint64(raw[:], v)
			hexBuf = hex.AppendEncode(hexBuf, raw[:])
		}
	}
	hexStr := string(hexBuf)
	k := 0
	for i, v := range c.ids {
		if c.idMeta[i]&idStr == 0 {
			d.ids[i] = hexStr[16*k : 16*k+16]
			k++
		} else {
			d.ids[i] = d.strAt(int(v))
		}
	}

	recs := getRecords(c.n)
	var strs []string
	if c.listed > 0 {
		strs = make([]string, 0, c.listed)
	}
	var calls []session.RequestedToolCall
	if c.calls > 0 {
		calls = make([]session.RequestedToolCall, 0, c.calls)
	}
	list := func(vocabulary bool) []string {
		n := int(d.uvarint())
		if n == 0 {
			return []string{}
		}
		at := len(strs)
		for j := 0; j < n; j++ {
			if vocabulary {
				strs = append(strs, d.voc())
			} else {
				strs = append(strs, d.str())
			}
		}
		return strs[at : at+n : at+n]
	}
	for i := range recs {
		r := &recs[i]
		r.TraceID = traceID
		r.Class = session.SpanClass(d.b[0])
		d.b = d.b[1:]
		mask := d.uvarint()
		has := func(f recordField) bool { return mask&(1<<f) != 0 }
		r.SpanID = d.ids[d.uvarint()]
		r.StartUnixNano = c.base + d.varint()
		r.EndUnixNano = r.StartUnixNano + d.varint()
		if has(fieldParent) {
			r.ParentSpanID = d.ids[d.uvarint()]
		}
		str := func(f recordField) string {
			if has(f) {
				return d.str()
			}
			return ""
		}
		voc := func(f recordField) string {
			if has(f) {
				return d.voc()
			}
			return ""
		}
		r.Name = d.str()
		r.ClassRule = voc(fieldClassRule)
		r.Operation = voc(fieldOperation)
		r.SessionID = str(fieldSessionID)
		r.SessionKey = voc(fieldSessionKey)
		r.Service = voc(fieldService)
		r.Model = voc(fieldModel)
		if has(fieldUsage) {
			r.Usage.InputTokens = d.varint()
			r.Usage.OutputTokens = d.varint()
			r.Usage.CacheReadTokens = d.varint()
			r.Usage.ReasoningTokens = d.varint()
			r.Usage.LLMCalls = int(d.varint())
		}
		r.UserMessage = str(fieldUserMessage)
		r.Output = str(fieldOutput)
		if has(fieldFinishReasons) {
			r.FinishReasons = list(true)
		}
		if has(fieldRequestedCalls) {
			n := int(d.uvarint())
			at := len(calls)
			for j := 0; j < n; j++ {
				f := d.b[0]
				d.b = d.b[1:]
				var rc session.RequestedToolCall
				if f&callBitID != 0 {
					rc.ID = d.str()
				}
				if f&callBitName != 0 {
					rc.Name = d.voc()
				}
				if f&callBitArgs != 0 {
					rc.Arguments = d.str()
				}
				rc.ArgumentsTruncated = f&callBitArgsTruncated != 0
				calls = append(calls, rc)
			}
			if n == 0 {
				r.RequestedCalls = []session.RequestedToolCall{}
			} else {
				r.RequestedCalls = calls[at : at+n : at+n]
			}
		}
		r.ToolName = voc(fieldToolName)
		r.ToolCallID = str(fieldToolCallID)
		r.ToolArguments = str(fieldToolArguments)
		r.ToolResult = str(fieldToolResult)
		r.ToolArgsSource = voc(fieldToolArgsSource)
		r.AgentName = voc(fieldAgentName)
		r.AgentRule = voc(fieldAgentRule)
		r.Error = has(fieldError)
		r.ErrorType = str(fieldErrorType)
		r.ErrorMessage = str(fieldErrorMessage)
		r.Input = str(fieldInput)
		r.Reasoning = str(fieldReasoning)
		if has(fieldToolDefs) {
			r.ToolDefs = c.defs[d.uvarint()]
		}
		r.ToolArgsTruncated = has(fieldToolArgsTruncated)
		r.Truncated = has(fieldTruncated)
		r.EndSignal = has(fieldEndSignal)
		r.ParentRemote = has(fieldParentRemote)
		if has(fieldOutcome) {
			v := has(fieldOutcomeTrue)
			r.Outcome = &v
		}
		r.ContentCaptured = has(fieldContentCaptured)
		r.AgentDescription = str(fieldAgentDescription)
		r.GraphNodeID = str(fieldGraphNodeID)
		r.GraphParentID = str(fieldGraphParentID)
		r.LangGraphNode = str(fieldLangGraphNode)
		if has(fieldToolSchema) {
			r.ToolSchema = []byte(d.str())
		}
		r.ToolDescription = str(fieldToolDescription)
		if has(fieldAllowedTools) {
			r.AllowedTools = list(false)
		}
		if has(fieldHandoffTargets) {
			r.HandoffTargets = list(false)
		}
		if has(fieldCost) {
			v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
			d.b = d.b[8:]
			r.Cost = &v
		}
		r.HandoffFrom = str(fieldHandoffFrom)
		r.HandoffTo = str(fieldHandoffTo)
		r.HandoffMode = voc(fieldHandoffMode)
		r.HandoffRule = voc(fieldHandoffRule)
		if has(fieldProblems) {
			r.Problems = list(false)
		}
		r.Deferred.InputMessages = str(fieldDeferredInput)
		if has(fieldDeferredAt) {
			r.Deferred.ProblemsAt = int(d.varint())
		}
	}
	return recs
}
