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

func BenchmarkCorrection(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Correction(benchB, benchA)
	}
}

// BenchmarkUngrounded checks a ~200-byte response against two ~200-byte sources.
func BenchmarkUngrounded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Ungrounded(benchA, benchB, benchA)
	}
}

// BenchmarkCoverage extracts the facts of a ~200-byte context and covers them by a ~200-byte payload.
func BenchmarkCoverage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Coverage(SalientFacts(benchA), benchA, benchB)
	}
}

// BenchmarkSession10Turns runs what the session evaluator calls for a 10-turn session with ~200-byte
// messages: per turn Correction and Similarity against the next user message, Ungrounded of the final
// response against the user message, a ~600-byte tool result and ~300 bytes of instructions, the handoff
// Coverage, Refusal, Uncertainty of the reasoning and Mentions of the tools. Budget: under 1 ms per op.
func BenchmarkSession10Turns(b *testing.B) {
	toolResult := `{"order_id":"12345","status":"charged_twice","customer":{"name":"Jane Doe","email":"jane.doe@example.com"},` +
		`"charges":[{"id":"ch_1","amount":1200.50,"currency":"USD","date":"2024-03-03"},{"id":"ch_2","amount":1200.50,` +
		`"currency":"USD","date":"2024-03-03"}],"refundable":true,"notes":"duplicate charge detected by the billing system",` +
		`"links":{"self":"https://api.example.com/orders/12345","refund":"https://api.example.com/orders/12345/refund"}}`
	instructions := "You are the billing agent. Use lookup_order to find orders and refund_order to refund duplicate " +
		"charges. Never refund more than the charged amount. Hand off to the support agent for anything else."
	response := "I found order 12345 for Jane Doe: two charges of $1,200.50 on 2024-03-03. I refunded the duplicate " +
		"charge ch_2; the refund reference is RF-5521 and it should appear within 5 business days."
	reasoning := "The user wants a refund. I should call lookup_order first, then refund_order for the duplicate charge."
	tools := []string{"lookup_order", "refund_order", "handoff_to_support"}
	b.ReportAllocs()
	for b.Loop() {
		for turn := range 10 {
			if turn < 9 {
				Correction(benchB, response)
				Similarity(benchA, benchB)
			}
			Ungrounded(response, benchA, toolResult, instructions)
			Coverage(SalientFacts(benchA), benchA, toolResult)
			Refusal(response)
			Uncertainty(reasoning)
			Mentions(reasoning, tools)
		}
	}
}
