// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import "testing"

// ~200-byte user messages, the size the session evaluator scores per turn.
const (
	benchA = "Hi, I need to process a refund for order #12345 placed on March 3rd. The customer, Jane Doe, was charged $1,200.50 twice " +
		"and wants the duplicate charge reversed today. Can you check the payment status?"
	benchB = "Could you please look at the refund for order 12345 again? Jane Doe still sees two charges of $1,200.50 on her card " +
		"statement and the duplicate payment hasn't been reversed yet. What is going on?"
)

func BenchmarkSimilarity(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchA) + len(benchB)))
	for b.Loop() {
		Similarity(benchA, benchB)
	}
}

func BenchmarkTokens(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Tokens(benchA)
	}
}
