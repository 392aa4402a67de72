// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan // import "github.com/agenteval/agenteval-collector/internal/evalspan"

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// MinSigningKeyBytes is the shortest signing key accepted in configuration.
const MinSigningKeyBytes = 16

// signatureVersion prefixes the signature value; a new canonical encoding gets a new one.
const signatureVersion = "v1:"

// processKey is the random key of this process, used by every Signer built without a
// key: a processor and an exporter in one collector then agree without configuration.
var processKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go ≥ 1.24)
	return k
})

// Errors of Signer.Verify.
var (
	ErrUnsigned     = errors.New("evaluation span is not signed (" + semconv.AgentEvalSignature + " missing)")
	ErrBadSignature = errors.New("evaluation span signature does not match its attributes")
)

// Signer authenticates evaluation spans (docs/decisions/evaluation-authenticity.md):
// the agentsession processor signs the typed result of each span it emits, the
// agenteval exporter stores only results whose signature verifies, so an OTLP client
// cannot create or overwrite stored analyses by sending look-alike spans.
//
// The signature is HMAC-SHA256 over a canonical encoding of the signed attributes:
// agent_eval.kind, agent_eval.session.id and every agent_eval.turn.* and
// agent_eval.session.* attribute (everything the exporter reads), sorted by key, each
// value with its OTLP type (strings and bytes length-prefixed, ints and doubles as 8
// big-endian bytes, nested maps sorted by key). It is written as the string attribute
// agent_eval.signature = "v1:" + lowercase hex. Other attributes (the
// gen_ai.evaluation.result events, score mirrors) are not signed and not stored.
//
// A Signer is safe for concurrent use.
type Signer struct {
	pool sync.Pool // of hash.Hash (HMAC with the key)
	// turn and session are the wire defaults EncodeTurn and EncodeAnalysis write with
	// (defaults.go); nil with WithoutWireDefaults.
	turn, session *wireDefaults
}

// SignerOption configures a Signer (NewSigner).
type SignerOption func(*Signer)

// WithoutWireDefaults makes Signer.EncodeTurn and Signer.EncodeAnalysis write every
// value, without wire defaults and without agent_eval.{turn,session}.wire_defaults: the
// form of collectors before wire defaults, which an exporter of any version reads. The
// decoders read both forms either way.
func WithoutWireDefaults() SignerOption {
	return func(s *Signer) { s.turn, s.session = nil, nil }
}

// NewSigner returns a Signer with key, or with the process's random key when key is
// empty (processor and exporter in one collector then share it; two collectors must
// be given the same key).
func NewSigner(key string, opts ...SignerOption) *Signer {
	k := []byte(key)
	if len(k) == 0 {
		k = processKey()
	}
	s := &Signer{turn: turnDefaults, session: sessionDefaults}
	s.pool.New = func() any { return hmac.New(sha256.New, k) }
	for _, o := range opts {
		o(s)
	}
	return s
}

// Sign sets agent_eval.signature on the span attributes m, over the signed attributes
// m holds now; call it after every signed attribute is written.
func (s *Signer) Sign(m pcommon.Map) {
	var sum [sha256.Size]byte
	signatureOf(s.mac(m, sum[:0])).Put(m)
}

// Signature is the value of agent_eval.signature: "v1:" + the lowercase hex of the HMAC.
type Signature string

// Put sets agent_eval.signature = sig on the span attributes m.
func (sig Signature) Put(m pcommon.Map) { m.PutStr(semconv.AgentEvalSignature, string(sig)) }

func signatureOf(mac []byte) Signature {
	var out [len(signatureVersion) + 2*sha256.Size]byte
	copy(out[:], signatureVersion)
	hex.Encode(out[len(signatureVersion):], mac)
	return Signature(out[:])
}

// Verify checks agent_eval.signature against the signed attributes of m. It returns
// ErrUnsigned when the attribute is missing and ErrBadSignature when it does not
// match (forged, altered or signed with another key).
func (s *Signer) Verify(m pcommon.Map) error {
	v, ok := m.Get(semconv.AgentEvalSignature)
	if !ok {
		return ErrUnsigned
	}
	if v.Type() != pcommon.ValueTypeStr {
		return ErrBadSignature
	}
	h, ok := strings.CutPrefix(v.Str(), signatureVersion)
	var got [sha256.Size]byte
	if !ok || len(h) != 2*sha256.Size {
		return ErrBadSignature
	}
	if _, err := hex.Decode(got[:], []byte(h)); err != nil {
		return ErrBadSignature
	}
	var sum [sha256.Size]byte
	if !hmac.Equal(got[:], s.mac(m, sum[:0])) {
		return ErrBadSignature
	}
	return nil
}

// mac appends the HMAC of m's signed attributes to sum. The canonical encoding is
// written into a pooled buffer and hashed in one Write: hashing many small writes
// (two to four per value) cost more than the hashing itself.
func (s *Signer) mac(m pcommon.Map, sum []byte) []byte {
	w := writerPool.Get().(*canonicalWriter)
	w.entries(m, signed)
	sum = s.hash(sum, w.b)
	w.reset()
	writerPool.Put(w)
	return sum
}

// hash appends the HMAC of b to sum.
func (s *Signer) hash(sum, b []byte) []byte {
	h := s.pool.Get().(hash.Hash)
	h.Reset()
	h.Write(b)
	sum = h.Sum(sum)
	s.pool.Put(h)
	return sum
}

// encodeSigned writes struct v into m under prefix (encodeFields) and returns the
// signature of m's signed attributes, the canonical encoding of v's fields written while
// encoding them (macSealed).
func (s *Signer) encodeSigned(m pcommon.Map, prefix string, v reflect.Value, d *wireDefaults) Signature {
	w := writerPool.Get().(*canonicalWriter)
	encodeTop(m, prefix, v, w, d)
	var sum [sha256.Size]byte
	sig := signatureOf(s.macSealed(m, w, sum[:0]))
	w.reset()
	writerPool.Put(w)
	return sig
}

// macSealed appends to sum the HMAC of m's signed attributes, as mac does, when a
// signing encode just wrote some of them and their canonical entries (w.sealed, in key
// order, in w.b). It walks m's top-level keys only: an entry the encode wrote is taken
// from w.b, any other signed entry (agent_eval.kind, agent_eval.session.id) is encoded
// from m; the entries are ordered by key, ties by position in m (as entries orders
// them), and hashed from w.b in place: the bytes are those mac would hash.
//
// An entry of w.sealed stands for the first entry of m with its key: the one the
// encode's PutEmpty wrote (a later duplicate is encoded from m). When the encode wrote
// a key twice (two fields of one JSON name), m holds one entry for both, and the whole
// map is encoded again (mac).
func (s *Signer) macSealed(m pcommon.Map, w *canonicalWriter, sum []byte) []byte {
	enc := w.sealed
	for i := 1; i < len(enc); i++ {
		if enc[i].k <= enc[i-1].k {
			w.b = w.b[:0]
			w.entries(m, signed)
			return s.hash(sum, w.b)
		}
	}
	parts, next := w.parts[:0], 0
	for k, v := range m.All() {
		if !signed(k) {
			continue
		}
		i := next
		if i >= len(enc) || enc[i].k != k || enc[i].used {
			i = sealedIndex(enc, k)
		}
		if i >= 0 {
			enc[i].used, next = true, i+1
			parts = append(parts, enc[i])
			continue
		}
		from := len(w.b)
		w.str(k)
		w.value(v)
		parts = append(parts, sealedEntry{k: k, from: from, to: len(w.b)})
	}
	w.parts = parts
	slices.SortStableFunc(parts, func(a, b sealedEntry) int { return strings.Compare(a.k, b.k) })
	h := s.pool.Get().(hash.Hash)
	h.Reset()
	count := len(w.b) // the entry count, written after the entries, hashed before them
	w.uvarint(uint64(len(parts)))
	h.Write(w.b[count:])
	for i := 0; i < len(parts); {
		from, to := parts[i].from, parts[i].to
		for i++; i < len(parts) && parts[i].from == to; i++ {
			to = parts[i].to // adjacent in w.b: one Write
		}
		h.Write(w.b[from:to])
	}
	sum = h.Sum(sum)
	s.pool.Put(h)
	return sum
}

// sealedIndex returns the position in enc (sorted by key, no key twice) of the unused
// entry with key k, or -1.
func sealedIndex(enc []sealedEntry, k string) int {
	i, ok := slices.BinarySearchFunc(enc, k, func(e sealedEntry, k string) int { return strings.Compare(e.k, k) })
	if !ok || enc[i].used {
		return -1
	}
	return i
}

// sealedEntry is a top-level entry's canonical encoding (key and value), w.b[from:to].
type sealedEntry struct {
	k        string
	from, to int
	used     bool
}

// maxPooledBytes bounds the buffer a pooled writer keeps (a session span of a long
// conversation may need more once; it is not kept).
const maxPooledBytes = 1 << 20

var writerPool = sync.Pool{New: func() any { return new(canonicalWriter) }}

// entry is one key and value of a pcommon.Map.
type entry struct {
	k string
	v pcommon.Value
}

// entries writes the entries of m that keep accepts (all when keep is nil), sorted by
// key: their count, then each key and value. A key present twice (possible on the
// wire) is written twice, in the order the map holds them, so a duplicate added to a
// signed span breaks its signature instead of overriding a signed value.
//
// A map whose keys are already in order (non-decreasing) is written straight from m:
// every nested map of an evaluation span the encoder wrote (codec.go writes a struct's
// fields and a Go map's entries sorted by key). One pass over the keys tells; checking
// before writing, not starting over at the first key out of order, keeps the cost linear
// in the size of any input, forged ones included. Other maps are sorted through a
// pointer-free index (moving entries, which hold pointers, costs a write barrier each
// while the GC marks), ties broken by position, the stable order.
func (w *canonicalWriter) entries(m pcommon.Map, keep func(string) bool) {
	n, inOrder, prev := 0, true, ""
	for k := range m.All() {
		if keep != nil && !keep(k) {
			continue
		}
		if n > 0 && k < prev {
			inOrder = false
		}
		prev = k
		n++
	}
	w.uvarint(uint64(n))
	if inOrder {
		for k, v := range m.All() {
			if keep == nil || keep(k) {
				w.str(k)
				w.value(v)
			}
		}
		return
	}
	base, ibase := len(w.es), len(w.idx)
	for k, v := range m.All() {
		if keep == nil || keep(k) {
			w.idx = append(w.idx, int32(len(w.es)))
			w.es = append(w.es, entry{k, v})
		}
	}
	es, idx := w.es, w.idx[ibase:]
	slices.SortFunc(idx, func(a, b int32) int {
		if c := strings.Compare(es[a].k, es[b].k); c != 0 {
			return c
		}
		return int(a - b)
	})
	for j := ibase; j < len(w.idx); j++ {
		e := w.es[w.idx[j]] // w.es may grow while a nested map is written
		w.str(e.k)
		w.value(e.v)
	}
	clear(w.es[base:]) // drop the references to m's values
	w.es, w.idx = w.es[:base], w.idx[:ibase]
}

// signed reports whether the attribute key is covered by the signature.
func signed(k string) bool {
	return k == semconv.AgentEvalKind || k == semconv.AgentEvalSessionID ||
		strings.HasPrefix(k, semconv.AgentEvalTurnPrefix) || strings.HasPrefix(k, semconv.AgentEvalSessionPrefix)
}

// canonicalWriter writes the canonical, unambiguous encoding of OTLP values into b.
// es and idx are the scratch of entries, a stack shared by the nested maps; sealed and
// parts are the top-level entries of a signing encode (macSealed).
type canonicalWriter struct {
	b      []byte
	es     []entry
	idx    []int32
	sealed []sealedEntry
	parts  []sealedEntry
}

func (w *canonicalWriter) reset() {
	w.b = w.b[:0]
	if cap(w.b) > maxPooledBytes {
		w.b = nil
	}
	clear(w.sealed) // drop the references to keys
	clear(w.parts)
	w.sealed, w.parts = w.sealed[:0], w.parts[:0]
}

// uvarint, byte1 and u64 append to w.b in place (encoding/binary's AppendUvarint and
// BigEndian.AppendUint64 give the same bytes): assigning a slice a function returned
// stores its pointer, with a GC write barrier while the GC marks; appending to w.b
// itself stores only its length unless it grows.
func (w *canonicalWriter) uvarint(n uint64) {
	for n >= 0x80 {
		w.b = append(w.b, byte(n)|0x80)
		n >>= 7
	}
	w.b = append(w.b, byte(n))
}

func (w *canonicalWriter) byte1(c byte) { w.b = append(w.b, c) }

func (w *canonicalWriter) u64(n uint64) {
	w.b = append(w.b, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func (w *canonicalWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *canonicalWriter) value(v pcommon.Value) {
	switch t := v.Type(); t {
	case pcommon.ValueTypeStr:
		w.strValue(v.Str())
	case pcommon.ValueTypeInt:
		w.intValue(v.Int())
	case pcommon.ValueTypeDouble:
		w.doubleValue(v.Double())
	case pcommon.ValueTypeBool:
		w.boolValue(v.Bool())
	case pcommon.ValueTypeBytes:
		w.bytesValue(v.Bytes().AsRaw())
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		w.kind(t)
		w.count(s.Len())
		for i := range s.Len() {
			w.value(s.At(i))
		}
	case pcommon.ValueTypeMap:
		w.kind(t)
		w.entries(v.Map(), nil)
	default:
		w.kind(t)
	}
}

// The canonical encoding of each part of a value, one writer each, for value and for
// the encoder (codec.go), which writes them from the Go values. A nil writer writes
// nothing (an encode that does not sign).

// kind writes a value's OTLP type.
func (w *canonicalWriter) kind(t pcommon.ValueType) {
	if w != nil {
		w.byte1(byte(t))
	}
}

// count writes the length of a slice or map and returns where it starts in b.
func (w *canonicalWriter) count(n int) int {
	if w == nil {
		return 0
	}
	mark := len(w.b)
	w.uvarint(uint64(n))
	return mark
}

// key writes a map entry's key and returns where the entry starts in b.
func (w *canonicalWriter) key(k string) int {
	if w == nil {
		return 0
	}
	from := len(w.b)
	w.str(k)
	return from
}

func (w *canonicalWriter) strValue(s string) {
	if w != nil {
		w.byte1(byte(pcommon.ValueTypeStr))
		w.str(s)
	}
}

func (w *canonicalWriter) intValue(n int64) {
	if w != nil {
		w.byte1(byte(pcommon.ValueTypeInt))
		w.u64(uint64(n))
	}
}

func (w *canonicalWriter) doubleValue(f float64) {
	if w != nil {
		w.byte1(byte(pcommon.ValueTypeDouble))
		w.u64(math.Float64bits(f))
	}
}

func (w *canonicalWriter) boolValue(b bool) {
	if w != nil {
		w.byte1(byte(pcommon.ValueTypeBool))
		if b {
			w.byte1(1)
		} else {
			w.byte1(0)
		}
	}
}

func (w *canonicalWriter) bytesValue(b []byte) {
	if w != nil {
		w.byte1(byte(pcommon.ValueTypeBytes))
		w.uvarint(uint64(len(b)))
		w.b = append(w.b, b...)
	}
}

// seal records the top-level entry written since from (a signing encode).
func (w *canonicalWriter) seal(k string, from int) {
	if w != nil {
		w.sealed = append(w.sealed, sealedEntry{k: k, from: from, to: len(w.b)})
	}
}

// sealSorted records the top-level entry written since from, in its place by key
// among those recorded (w.sealed is in key order: an entry written after the
// encode's, such as the wire-defaults attribute).
func (w *canonicalWriter) sealSorted(k string, from int) {
	if w != nil {
		i, _ := slices.BinarySearchFunc(w.sealed, k, func(e sealedEntry, k string) int { return strings.Compare(e.k, k) })
		w.sealed = slices.Insert(w.sealed, i, sealedEntry{k: k, from: from, to: len(w.b)})
	}
}

// check makes the canonical encoding of the map m, written since mark as n entries,
// that of m when m holds fewer (two entries of one key, which m holds as one): m is
// encoded again from its values.
func (w *canonicalWriter) check(m pcommon.Map, n, mark int) {
	if w != nil && m.Len() != n {
		w.b = w.b[:mark]
		w.entries(m, nil)
	}
}
