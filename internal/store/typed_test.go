// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// goldenAnalyses reads every golden analysis of the repository: the evaluation
// package's and the end-to-end test's (real framework traces).
func goldenAnalyses(t *testing.T) map[string]evaluation.Analysis {
	t.Helper()
	out := map[string]evaluation.Analysis{}
	one, err := filepath.Glob(filepath.Join("..", "evaluation", "testdata", "*.analysis.json"))
	require.NoError(t, err)
	for _, p := range one {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var a evaluation.Analysis
		require.NoError(t, json.Unmarshal(b, &a))
		out[filepath.Base(p)] = a
	}
	many, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.analyses.json"))
	require.NoError(t, err)
	for _, p := range many {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var as []evaluation.Analysis
		require.NoError(t, json.Unmarshal(b, &as))
		for i, a := range as {
			out[filepath.Base(p)+"#"+strings.Repeat("i", i)] = a
		}
	}
	require.Greater(t, len(out), 6)
	return out
}

// TestTypedRowsEqualJSONRows pins that the rows the store writes from an analysis read
// from the typed evaluation span attributes equal the rows the old path wrote from the
// agent_eval.analysis JSON (encoded by the processor, decoded by the exporter), on
// every golden analysis, and that every turn result survives the turn span's typed
// attributes.
func TestTypedRowsEqualJSONRows(t *testing.T) {
	s := &sqlStore{d: sqliteDialect}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for name, golden := range goldenAnalyses(t) {
		t.Run(name, func(t *testing.T) {
			js, err := json.Marshal(&golden)
			require.NoError(t, err)
			var viaJSON evaluation.Analysis
			require.NoError(t, json.Unmarshal(js, &viaJSON))

			attrs := pcommon.NewMap()
			evalspan.EncodeAnalysis(attrs, &golden)
			viaTyped, err := evalspan.DecodeAnalysis(attrs)
			require.NoError(t, err)

			want, err := s.rows(&viaJSON, now)
			require.NoError(t, err)
			got, err := s.rows(&viaTyped, now)
			require.NoError(t, err)
			assert.Equal(t, want.session, got.session)
			assert.Equal(t, want.doc, got.doc)
			require.Len(t, got.children, len(want.children))
			for i := range want.children {
				assert.Equal(t, *want.children[i], *got.children[i], want.children[i].table)
			}

			for _, tr := range golden.TurnResults {
				m := pcommon.NewMap()
				evalspan.EncodeTurn(m, &tr)
				back, err := evalspan.DecodeTurn(m)
				require.NoError(t, err)
				want, _ := json.Marshal(tr)
				got, _ := json.Marshal(back)
				assert.JSONEq(t, string(want), string(got))
			}
		})
	}
}
