// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions // import "github.com/agenteval/agenteval-collector/internal/conventions"

import (
	"encoding/base64"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// Limits on what one SpanRecord may carry besides the configured text cap.
const (
	// maxProblems bounds SpanRecord.Problems.
	maxProblems = 8
	// maxProblemLen bounds one Problems entry, in bytes.
	maxProblemLen = 160
	// MaxList bounds RequestedCalls, ToolDefs, FinishReasons, AllowedTools and
	// HandoffTargets.
	MaxList = 128
	// maxDepth bounds the nesting of structured values we serialise or scan.
	maxDepth = 256
)

// cutText returns s cut to at most max bytes at a UTF-8 rune boundary, and whether it cut.
// It does not validate s.
func cutText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := max
	// Back off to the start of a rune (at most 3 bytes for valid UTF-8).
	for j := 0; j < utf8.UTFMax && i > 0 && !utf8.RuneStart(s[i]); j++ {
		i--
	}
	return s[:i], true
}

// cleanText caps s at max bytes (cutting at a rune boundary) and replaces invalid UTF-8
// with U+FFFD, keeping the result within max. It allocates only when s is invalid UTF-8.
func cleanText(s string, max int) (string, bool) {
	s, cut := cutText(s, max)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		if len(s) > max {
			s, _ = cutText(s, max)
			cut = true
		}
	}
	return s, cut
}

// addProblem appends a short problem note "key: reason" to r, bounded in count and size.
func addProblem(r *session.SpanRecord, key, reason string) {
	if len(r.Problems) >= maxProblems {
		return
	}
	p := key + ": " + reason
	p, _ = cleanText(p, maxProblemLen)
	r.Problems = append(r.Problems, p)
}

// valueText returns the text of a scalar attribute value: strings as they are, numbers
// and booleans formatted. Maps, slices and bytes return ok=false.
func valueText(v pcommon.Value) (string, bool) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str(), true
	case pcommon.ValueTypeInt:
		return strconv.FormatInt(v.Int(), 10), true
	case pcommon.ValueTypeDouble:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64), true
	case pcommon.ValueTypeBool:
		return strconv.FormatBool(v.Bool()), true
	}
	return "", false
}

// valueInt reads a token count that may arrive as int, double or decimal string ("47").
// ok is false for absent, negative, non-finite or unparsable values.
func valueInt(v pcommon.Value) (int64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n := v.Int()
		return n, n >= 0
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > math.MaxInt64/2 {
			return 0, false
		}
		return int64(f), true
	case pcommon.ValueTypeStr:
		s := strings.TrimSpace(v.Str())
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, n >= 0
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 && f <= math.MaxInt64/2 {
			return int64(f), true
		}
	}
	return 0, false
}

// valueFloat reads a cost that may arrive as double, int or decimal string.
func valueFloat(v pcommon.Value) (float64, bool) {
	var f float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		f = v.Double()
	case pcommon.ValueTypeInt:
		f = float64(v.Int())
	case pcommon.ValueTypeStr:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(v.Str()), 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// valueBool reads a boolean that may arrive as bool or as the string "true"/"false".
func valueBool(v pcommon.Value) (val, ok bool) {
	switch v.Type() {
	case pcommon.ValueTypeBool:
		return v.Bool(), true
	case pcommon.ValueTypeStr:
		s := strings.TrimSpace(v.Str())
		switch {
		case strings.EqualFold(s, "true"):
			return true, true
		case strings.EqualFold(s, "false"):
			return false, true
		}
	}
	return false, false
}

// jsonBytes returns the JSON text of a value for parsing: a string's bytes as they are
// (it usually holds JSON already; the returned slice aliases the string and must not be
// modified), a structured value (kvlist, array) serialised to canonical JSON (object keys
// sorted), other scalars formatted as JSON. ok is false when the text would exceed limit
// bytes: the caller then skips the parse and records a problem.
func jsonBytes(v pcommon.Value, limit int) (data []byte, ok bool) {
	if v.Type() == pcommon.ValueTypeStr {
		s := v.Str()
		if len(s) > limit {
			return nil, false
		}
		return unsafeBytes(s), true
	}
	buf := make([]byte, 0, 256)
	buf, ok = appendJSON(buf, v, 0, limit)
	if !ok || len(buf) > limit {
		return nil, false
	}
	return buf, true
}

// unsafeBytes returns a read-only view of s without copying. The JSON decoders used here never
// write to their input nor keep it, so this saves one copy of every parsed attribute on the
// hot path.
func unsafeBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// appendJSON appends v as canonical JSON: object keys sorted (the first of duplicate keys
// kept), NaN and ±Inf as null, bytes as base64 strings, invalid UTF-8 replaced by U+FFFD.
// It stops (complete=false) once buf exceeds limit or nesting exceeds maxDepth.
func appendJSON(buf []byte, v pcommon.Value, depth, limit int) ([]byte, bool) {
	if len(buf) > limit || depth > maxDepth {
		return buf, false
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendJSONString(buf, v.Str()), true
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(buf, v.Int(), 10), true
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(buf, "null"...), true
		}
		return strconv.AppendFloat(buf, f, 'g', -1, 64), true
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(buf, v.Bool()), true
	case pcommon.ValueTypeBytes:
		buf = append(buf, '"')
		buf = base64.StdEncoding.AppendEncode(buf, v.Bytes().AsRaw())
		return append(buf, '"'), true
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		buf = append(buf, '[')
		for i := 0; i < s.Len(); i++ {
			if i > 0 {
				buf = append(buf, ',')
			}
			var ok bool
			if buf, ok = appendJSON(buf, s.At(i), depth+1, limit); !ok {
				return buf, false
			}
		}
		return append(buf, ']'), true
	case pcommon.ValueTypeMap:
		m := v.Map()
		type kv struct {
			k string
			v pcommon.Value
		}
		var small [16]kv
		kvs := small[:0]
		m.Range(func(k string, v pcommon.Value) bool {
			kvs = append(kvs, kv{k, v})
			return true
		})
		sort.SliceStable(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
		buf = append(buf, '{')
		first := true
		for i := range kvs {
			if i > 0 && kvs[i].k == kvs[i-1].k {
				continue // duplicate key: keep the first, as pcommon.Map.Get does
			}
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = appendJSONString(buf, kvs[i].k)
			buf = append(buf, ':')
			var ok bool
			if buf, ok = appendJSON(buf, kvs[i].v, depth+1, limit); !ok {
				return buf, false
			}
		}
		return append(buf, '}'), true
	}
	return append(buf, "null"...), true
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal, replacing invalid UTF-8.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
