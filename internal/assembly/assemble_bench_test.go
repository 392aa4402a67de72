// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly_test

import (
	"fmt"
	"testing"

	"github.com/agenteval/agenteval-collector/internal/assembly"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

func BenchmarkAssembleTurn(b *testing.B) {
	for _, n := range []int{20, 40, 60} {
		recs := sessiontest.TurnRecords(n)
		b.Run(fmt.Sprintf("spans=%d", len(recs)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				assembly.Assemble(recs)
			}
		})
	}
}
