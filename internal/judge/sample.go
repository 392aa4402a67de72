// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

// Sampled reports whether the session with this conversation id is in a sample of the
// given rate: the first 8 bytes of sha256(salt + id) as a fraction of 2^64, below rate.
// Every evaluator with the same salt ("" by default) sees the same sessions; a per-rule
// salt decorrelates samples. rate ≥ 1 keeps all, ≤ 0 none.
func Sampled(conversationID string, rate float64, salt string) bool {
	if rate >= 1 {
		return true
	}
	if rate <= 0 || math.IsNaN(rate) {
		return false
	}
	sum := sha256.Sum256([]byte(salt + conversationID))
	return float64(binary.BigEndian.Uint64(sum[:8]))/math.Exp2(64) < rate
}

// NearThreshold reports whether a deterministic score is within margin of its threshold,
// where a judge's second opinion is worth its cost. margin ≤ 0 means always.
func NearThreshold(score, threshold, margin float64) bool {
	return margin <= 0 || math.Abs(score-threshold) <= margin
}
