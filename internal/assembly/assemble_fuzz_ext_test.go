// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/agenteval/agenteval-collector/internal/assembly"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/session/sessiontest"
)

func FuzzAssembleTurn(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 2, 3, 0, 10, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("a multi-agent trace with cycles, self parents and handoff tools...."))
	for _, n := range []int{7, 23, 41} {
		b := make([]byte, 600)
		for i := range b {
			b[i] = byte(i*n + i/3)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := sessiontest.FuzzRecords(data)
		got := assembly.Assemble(recs)
		assembly.CheckTurn(t, recs, got)
		if again := assembly.Assemble(recs); !reflect.DeepEqual(got, again) {
			t.Fatal("same input, different output")
		}
		kept := assembly.FirstOccurrences(recs)
		base := assembly.Assemble(kept)
		rev := slices.Clone(kept)
		slices.Reverse(rev)
		if !reflect.DeepEqual(base, assembly.Assemble(rev)) {
			t.Fatal("record order changed the output")
		}
		rot := append(slices.Clone(kept[len(kept)/2:]), kept[:len(kept)/2]...)
		if !reflect.DeepEqual(base, assembly.Assemble(rot)) {
			t.Fatal("record order changed the output")
		}
		got.Turn.Anomalies = slices.DeleteFunc(got.Turn.Anomalies, func(s string) bool { return s == session.AnomalyDuplicateSpan })
		if len(got.Turn.Anomalies) == 0 {
			got.Turn.Anomalies = nil
		}
		if !reflect.DeepEqual(base, got) {
			t.Fatal("dropping duplicates changed more than the duplicate_span anomaly")
		}
	})
}
