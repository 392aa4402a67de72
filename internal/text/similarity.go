// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"math"
	"slices"
)

// Weights of Similarity (docs/decisions/text.md §2).
const (
	// wordWeight is the weight of a word or CJK bigram token.
	wordWeight = 1.0
	// numWeight is the weight of a token that contains a digit (ids, numbers): an id both messages share
	// counts twice a word.
	numWeight = 2.0
	// conflictFactor multiplies the score when each message has a number/id token the other lacks
	// ("order 12345" vs "order 67890"). With 0.5 and a cosine < 1, conflicting messages never reach the CCM
	// threshold 0.5.
	conflictFactor = 0.5
)

// key is a hashed distinct token of a message.
type key struct {
	h   uint64
	num bool
}

// keys returns the distinct tokens of the last scan as hashes (FNV-1a 64), sorted.
func (sc *scanner) keysInto(dst []key) []key {
	dst = dst[:0]
	for _, t := range sc.toks {
		h := uint64(14695981039346656037)
		for _, c := range sc.buf[t.start:t.end] {
			h ^= uint64(c)
			h *= 1099511628211
		}
		dst = append(dst, key{h: h, num: t.num})
	}
	slices.SortFunc(dst, func(a, b key) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	return slices.CompactFunc(dst, func(a, b key) bool { return a.h == b.h })
}

// Similarity is a lexical similarity of two user messages in [0,1] (CCM, docs/scoring.md §5): 1 for the same request reworded,
// ~0 for unrelated requests. Handles stop words (several languages at least en/fr/es/de), inflections (stemming), numbers and ids
// (an id/number present in both weighs more; different ids in otherwise identical messages lower the score markedly),
// case, punctuation and Unicode (accents folded). Both empty -> 0 (nothing to compare).
//
// Formula: A and B are the sets of distinct Tokens of a and b; each token t weighs w(t) = 2 when it contains
// a digit, else 1; cos = Σ_{t∈A∩B} w(t)² / sqrt(Σ_{t∈A} w(t)² · Σ_{t∈B} w(t)²); when A has a digit token
// not in B and B has a digit token not in A, the score is cos × 0.5. A or B empty (no content token) -> 0.
// Example: "Refund order 12345" vs "Refund order 67890": A={refund, ord, 12345}, B={refund, ord, 67890},
// cos = 2/sqrt(6·6) = 0.333, conflict -> 0.167.
func Similarity(a, b string) float64 {
	sc := scannerPool.Get().(*scanner)
	defer scannerPool.Put(sc)
	sc.scan(a)
	sc.keys[0] = sc.keysInto(sc.keys[0])
	sc.scan(b)
	sc.keys[1] = sc.keysInto(sc.keys[1])
	return cosine(sc.keys[0], sc.keys[1])
}

func weight(k key) float64 {
	if k.num {
		return numWeight
	}
	return wordWeight
}

// cosine merges two sorted distinct key sets.
func cosine(ka, kb []key) float64 {
	if len(ka) == 0 || len(kb) == 0 {
		return 0
	}
	var inter, na, nb float64
	onlyA, onlyB := false, false
	i, j := 0, 0
	for i < len(ka) || j < len(kb) {
		switch {
		case j == len(kb) || i < len(ka) && ka[i].h < kb[j].h:
			w := weight(ka[i])
			na += w * w
			onlyA = onlyA || ka[i].num
			i++
		case i == len(ka) || kb[j].h < ka[i].h:
			w := weight(kb[j])
			nb += w * w
			onlyB = onlyB || kb[j].num
			j++
		default:
			w := weight(ka[i])
			inter += w * w
			na += w * w
			nb += w * w
			i++
			j++
		}
	}
	s := inter / math.Sqrt(na*nb)
	if onlyA && onlyB {
		s *= conflictFactor
	}
	return min(max(s, 0), 1)
}

// Tokens returns the normalised content tokens of s (lower-cased, accent-folded, stemmed, stop words removed), in order.
//
// Words are runs of letters and digits; apostrophes and all other punctuation separate words. A word with a
// digit is kept as an id/number token with its number form canonicalised ("1,200.50" -> "1200.5", plain digit
// runs unchanged); other words of fewer than 2 runes, stop words (en/fr/es/de) and request-framing words
// ("please", "show", "explain", "pouvez", "puedes", "bitte"...) are dropped and the rest stemmed
// (docs/decisions/text.md). CJK runs become character bigrams. Duplicates are kept. Nil when nothing is left.
func Tokens(s string) []string {
	sc := scannerPool.Get().(*scanner)
	defer scannerPool.Put(sc)
	sc.scan(s)
	if len(sc.toks) == 0 {
		return nil
	}
	str := string(sc.buf)
	out := make([]string, len(sc.toks))
	for i, t := range sc.toks {
		out[i] = str[t.start:t.end]
	}
	return out
}
