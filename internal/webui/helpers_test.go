// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// goldenAnalyses reads the analyses internal/evaluation computes for its golden
// sessions (internal/evaluation/testdata/*.analysis.json), sorted by file name.
func goldenAnalyses(t testing.TB) []*evaluation.Analysis {
	t.Helper()
	files, err := filepath.Glob("../evaluation/testdata/*.analysis.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	out := make([]*evaluation.Analysis, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var a evaluation.Analysis
		require.NoError(t, json.Unmarshal(data, &a), f)
		out = append(out, &a)
	}
	return out
}

// goldenStore opens a SQLite store in a temp dir holding the golden analyses.
func goldenStore(t testing.TB) (store.Store, []*evaluation.Analysis) {
	t.Helper()
	as := goldenAnalyses(t)
	return storeOf(t, as), as
}

// storeOf opens a SQLite store in a temp dir holding as.
func storeOf(t testing.TB, as []*evaluation.Analysis) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.DriverSQLite, filepath.Join(t.TempDir(), "ui.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	// Saved oldest end first, so that the list order (by the time stored) is also the
	// order of the sessions' ends.
	byEnd := slices.Clone(as)
	slices.SortStableFunc(byEnd, func(a, b *evaluation.Analysis) int { return a.EndedAt.Compare(b.EndedAt) })
	for _, a := range byEnd {
		require.NoError(t, st.SaveAnalysis(context.Background(), a))
	}
	return st
}

// lateTurnAnalysis is the golden session "clean" stored as "late-turn", its third turn
// (turn_index 2) having started between the first two: it closed late, after the turn
// that followed it in the conversation, so the store lists it second.
func lateTurnAnalysis(t testing.TB) *evaluation.Analysis {
	t.Helper()
	for _, a := range goldenAnalyses(t) {
		if a.SessionID != "clean" {
			continue
		}
		require.Len(t, a.TurnResults, 3)
		a.SessionID = "late-turn"
		for i := range a.TurnResults {
			a.TurnResults[i].SessionID = a.SessionID
		}
		first, second := a.TurnResults[0].StartedAt, a.TurnResults[1].StartedAt
		require.True(t, first.Before(second))
		a.TurnResults[2].StartedAt = first.Add(second.Sub(first) / 2)
		return a
	}
	t.Fatal("no golden analysis clean")
	return nil
}
