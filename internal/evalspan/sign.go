// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evalspan // import "github.com/agenteval/agenteval-collector/internal/evalspan"

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"math"
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
}

// NewSigner returns a Signer with key, or with the process's random key when key is
// empty (processor and exporter in one collector then share it; two collectors must
// be given the same key).
func NewSigner(key string) *Signer {
	k := []byte(key)
	if len(k) == 0 {
		k = processKey()
	}
	s := &Signer{}
	s.pool.New = func() any { return hmac.New(sha256.New, k) }
	return s
}

// Sign sets agent_eval.signature on the span attributes m, over the signed attributes
// m holds now; call it after every signed attribute is written.
func (s *Signer) Sign(m pcommon.Map) {
	m.PutStr(semconv.AgentEvalSignature, signatureVersion+hex.EncodeToString(s.mac(m)))
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
	got, err := hex.DecodeString(strings.TrimPrefix(v.Str(), signatureVersion))
	if err != nil || !strings.HasPrefix(v.Str(), signatureVersion) {
		return ErrBadSignature
	}
	if !hmac.Equal(got, s.mac(m)) {
		return ErrBadSignature
	}
	return nil
}

func (s *Signer) mac(m pcommon.Map) []byte {
	h := s.pool.Get().(hash.Hash)
	defer s.pool.Put(h)
	h.Reset()
	w := canonicalWriter{h: h}
	w.entries(m, signed)
	return h.Sum(nil)
}

// entry is one key and value of a pcommon.Map.
type entry struct {
	k string
	v pcommon.Value
}

// entries writes the entries of m that keep accepts, sorted by key. A key present
// twice (possible on the wire) is written twice, so a duplicate added to a signed
// span breaks its signature instead of overriding a signed value.
func (w *canonicalWriter) entries(m pcommon.Map, keep func(string) bool) {
	es := make([]entry, 0, m.Len())
	m.Range(func(k string, v pcommon.Value) bool {
		if keep == nil || keep(k) {
			es = append(es, entry{k, v})
		}
		return true
	})
	slices.SortStableFunc(es, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	w.uvarint(uint64(len(es)))
	for _, e := range es {
		w.str(e.k)
		w.value(e.v)
	}
}

// signed reports whether the attribute key is covered by the signature.
func signed(k string) bool {
	return k == semconv.AgentEvalKind || k == semconv.AgentEvalSessionID ||
		strings.HasPrefix(k, semconv.AgentEvalTurnPrefix) || strings.HasPrefix(k, semconv.AgentEvalSessionPrefix)
}

// canonicalWriter writes the canonical, unambiguous encoding of OTLP values.
type canonicalWriter struct {
	h   hash.Hash
	buf [binary.MaxVarintLen64]byte
}

func (w *canonicalWriter) uvarint(n uint64) {
	w.h.Write(w.buf[:binary.PutUvarint(w.buf[:], n)])
}

func (w *canonicalWriter) byte1(c byte) {
	w.buf[0] = c
	w.h.Write(w.buf[:1])
}

func (w *canonicalWriter) u64(n uint64) {
	binary.BigEndian.PutUint64(w.buf[:8], n)
	w.h.Write(w.buf[:8])
}

func (w *canonicalWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	_, _ = io.WriteString(w.h, s)
}

func (w *canonicalWriter) value(v pcommon.Value) {
	w.byte1(byte(v.Type()))
	switch v.Type() {
	case pcommon.ValueTypeStr:
		w.str(v.Str())
	case pcommon.ValueTypeInt:
		w.u64(uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		w.u64(math.Float64bits(v.Double()))
	case pcommon.ValueTypeBool:
		if v.Bool() {
			w.byte1(1)
		} else {
			w.byte1(0)
		}
	case pcommon.ValueTypeBytes:
		b := v.Bytes().AsRaw()
		w.uvarint(uint64(len(b)))
		w.h.Write(b)
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		w.uvarint(uint64(s.Len()))
		for i := range s.Len() {
			w.value(s.At(i))
		}
	case pcommon.ValueTypeMap:
		w.entries(v.Map(), nil)
	}
}
