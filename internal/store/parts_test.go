// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store // import "github.com/agenteval/agenteval-collector/internal/store"

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

// partAnalysis is revision rev of session id as a collector numbered it: one turn per
// trace seed, at indexes from 0 (first) on, each with one tool issue.
func partAnalysis(id string, rev, first int, seeds ...int) *evaluation.Analysis {
	a := sampleAnalysis(id, t0.Add(time.Duration(rev)*time.Minute), f64(0.5), "triage")
	a.AnalysisRevision = rev
	a.TurnResults, a.ToolIssues = nil, nil
	for i, seed := range seeds {
		idx := first + i
		issue := evaluation.ToolIssue{TurnIndex: idx, AgentID: "triage", ToolName: "refund", Issue: evaluation.IssueToolError,
			Severity: evaluation.SeverityLow, SpanID: fmt.Sprintf("%016x", seed), Executed: true, Message: "timeout"}
		a.TurnResults = append(a.TurnResults, evaluation.TurnResult{
			SessionID: id, TurnIndex: idx, TraceID: fmt.Sprintf("%032x", seed), RootSpanID: fmt.Sprintf("%016x", seed),
			Final: true, DetectionType: evaluation.DetectionNone, LatencyMs: 10,
			Interactions: []evaluation.InteractionResult{{AgentID: "triage", SpanID: "00000000000000a1", Status: "ok",
				ToolCalls: []evaluation.ToolCallResult{{ToolName: "refund", SpanID: issue.SpanID, AgentID: "triage",
					Verdict: evaluation.VerdictInvalid, Executed: true, Status: "error", Issues: []evaluation.ToolIssue{issue}}}}},
		})
		a.ToolIssues = append(a.ToolIssues, issue)
	}
	return a
}

// atIndexes renumbers a partAnalysis: its turns, in order, and their tool issues at
// indexes idx.
func atIndexes(a *evaluation.Analysis, idx ...int) *evaluation.Analysis {
	for i, k := range idx {
		a.TurnResults[i].TurnIndex = k
		a.TurnResults[i].Interactions[0].ToolCalls[0].Issues[0].TurnIndex = k
		a.ToolIssues[i].TurnIndex = k
	}
	return a
}

// storedTurns returns the session's stored turns as index → trace seed, and its
// analysis revision as GetAnalysis returns it.
func storedTurns(t *testing.T, s *sqlStore, id string) (map[int]int, int) {
	t.Helper()
	return storedSeeds(t, s, id, func(tr *evaluation.TurnResult) string { return tr.TraceID })
}

// storedSeeds is storedTurns with the seed read from the id that seedOf returns.
func storedSeeds(t *testing.T, s *sqlStore, id string, seedOf func(*evaluation.TurnResult) string) (map[int]int, int) {
	t.Helper()
	a, err := s.GetAnalysis(context.Background(), id)
	require.NoError(t, err)
	got := map[int]int{}
	for _, tr := range a.TurnResults {
		var seed int
		_, err := fmt.Sscanf(seedOf(&tr), "%x", &seed)
		require.NoError(t, err)
		got[tr.TurnIndex] = seed
		for _, ia := range tr.Interactions {
			for _, c := range ia.ToolCalls {
				for _, is := range c.Issues {
					assert.Equal(t, tr.TurnIndex, is.TurnIndex, "a tool issue's turn index is its turn's")
				}
			}
		}
	}
	for _, is := range a.ToolIssues {
		_, ok := got[is.TurnIndex]
		assert.True(t, ok, "tool issue of turn %d: a stored turn", is.TurnIndex)
	}
	return got, a.AnalysisRevision
}

// TestRestartedNumberingAppends: a collector that forgot a session (memory-only
// continuation: evicted, or restarted) numbers its turns and revisions from 0 and 1
// again. The store never lets that part overwrite the stored turns: it places the part
// after them (its turns, its tool issues and its revisions shifted), its later
// revisions and retried exports land in the same place, a stale export of an earlier
// part changes nothing, and a part that restarts again goes after it
// (docs/decisions/sessions.md §4.6).
func TestRestartedNumberingAppends(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "parts-1"
		first := partAnalysis(id, 1, 0, 1, 2)
		require.NoError(t, s.SaveAnalysis(ctx, first))

		restarted := partAnalysis(id, 1, 0, 3) // turn 0, revision 1 again: another trace
		require.NoError(t, s.SaveAnalysis(ctx, restarted))
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3}, got, "the part goes after the stored turns")
		assert.Equal(t, 2, rev, "and its revision after the stored one")

		require.NoError(t, s.SaveAnalysis(ctx, restarted), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 2, 0, 3, 4)), "the part's next revision")
		require.NoError(t, s.SaveAnalysis(ctx, first), "a stale export of the first part")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got)
		assert.Equal(t, 3, rev)

		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 5)), "restarted again")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, got)
		assert.Equal(t, 4, rev)
		assert.Equal(t, 4, count(t, s, "session_analyses", id), "every revision's document kept")
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, 5, list[0].Turns)
	})
}

// TestLaterRevisionKeepsEarlierTurns: a revision that holds only the later turns (its
// collector dropped the earlier records but kept the counters, §4.2.1) keeps the stored
// turns below its first one.
func TestLaterRevisionKeepsEarlierTurns(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "later-1"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2)))
		later := partAnalysis(id, 2, 2, 3)
		require.NoError(t, s.SaveAnalysis(ctx, later))
		require.NoError(t, s.SaveAnalysis(ctx, later), "a retried export")
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3}, got)
		assert.Equal(t, 2, rev)
	})
}

// TestSaveKeepsTurnItLacksInItsRange: a later revision that lacks a stored turn between
// its first and last (its collector could not load it: docs/decisions/sessions.md §4.6)
// keeps it; a stored turn the save holds at its own index is replaced as before.
func TestSaveKeepsTurnItLacksInItsRange(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "gap-1"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2, 3)))
		gap := atIndexes(partAnalysis(id, 2, 0, 1, 3, 4), 0, 2, 3) // seed 2 (turn 1) missing
		require.NoError(t, s.SaveAnalysis(ctx, gap))
		require.NoError(t, s.SaveAnalysis(ctx, gap), "a retried export")
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got, "turn 1 kept")
		assert.Equal(t, 2, rev)
		a, err := s.GetAnalysis(ctx, id)
		require.NoError(t, err)
		assert.Len(t, a.TurnResults, 4)

		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 3, 0, 1, 2, 3, 4, 5)), "the whole conversation")
		got, _ = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, got)
	})
}

// TestLaterRevisionKeepsTurnAfterItsLast: a later revision from a collector that could
// not load the session (two collectors, docs/decisions/sessions.md §4.5, FuzzStoreOutage
// input 0e38c9909932f1a0) holds turns 3 and 4 of six, at the indexes the store gave
// them, and nothing after: it keeps the stored turn after its last (turn 5), as it keeps
// one it lacks between its first and last. A retried export changes nothing, and a next
// revision that holds turn 5 again replaces it.
func TestLaterRevisionKeepsTurnAfterItsLast(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "after-last-1"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2, 3, 4, 5, 6)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 3, 4)), "its revision 1: stale (it cuts off turns 4 and 5)")
		later := partAnalysis(id, 2, 3, 4, 5)
		require.NoError(t, s.SaveAnalysis(ctx, later))
		require.NoError(t, s.SaveAnalysis(ctx, later), "a retried export")
		all := map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6}
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, all, got, "turn 5 kept")
		assert.Equal(t, 2, rev)
		a, err := s.GetAnalysis(ctx, id)
		require.NoError(t, err)
		assert.Len(t, a.TurnResults, 6)
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, 6, list[0].Turns)

		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 3, 4, 5, 6, 7)), "the next revision, turn 5 and a new one")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7}, got)
		assert.Equal(t, 3, rev)
	})
}

// TestLowerRevisionAddsTurnsStoredLacks: revision 2 of a collector that recovered the
// session holds turns 0 and 3 only and reaches the result store first; revision 1 of the
// other collector holds turns 0–3 (two collectors, docs/decisions/sessions.md §4.5,
// FuzzStoreOutage input 8ff64bbb02a4fc33). Skipped as older, turns 1 and 2 were in no
// stored analysis: it is stored as a revision after the stored one, keeping every stored
// turn. A retried export of either revision changes nothing; a lower revision that adds
// no turn is still skipped.
func TestLowerRevisionAddsTurnsStoredLacks(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "lower-adds-1"
		higher := atIndexes(partAnalysis(id, 2, 0, 1, 4), 0, 3)
		lower := partAnalysis(id, 1, 0, 1, 2, 3, 4)
		require.NoError(t, s.SaveAnalysis(ctx, higher))
		require.NoError(t, s.SaveAnalysis(ctx, lower))
		all := map[int]int{0: 1, 1: 2, 2: 3, 3: 4}
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, all, got, "turns 1 and 2 added")
		assert.Equal(t, 3, rev, "after the stored revision")
		require.NoError(t, s.SaveAnalysis(ctx, lower), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, higher), "a retried export of the higher")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, all, got)
		assert.Equal(t, 3, rev)
		assert.Equal(t, 2, count(t, s, "session_analyses", id))

		const id2 = "lower-adds-2"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id2, 2, 0, 1, 2, 3)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id2, 1, 0, 1, 2)), "older, adds nothing")
		got, rev = storedTurns(t, s, id2)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3}, got)
		assert.Equal(t, 2, rev)
	})
}

// TestLowerRevisionKeepsFurtherVerdict: revision 2 (the collector that recovered the
// session) holds turns 0 and 3, turn 0 final with its follow-up (RDM); revision 1 (the
// other collector, exported later) holds turns 0–3, turn 0 provisional or final without
// follow-up. Stored after revision 2 because it adds turns 1 and 2, revision 1 took turn
// 0 back to its older verdict (docs/decisions/sessions.md §4.5): the stored row, its tool
// issue and the document now keep the further verdict, in the rows and in the document
// alike (a save whose turns are not in index order has them in its document). A later
// revision with a lower stage of that turn keeps it too (a collector that rebuilt the
// turn's record from its stored result); one of the same stage replaces it.
func TestLowerRevisionKeepsFurtherVerdict(t *testing.T) {
	for _, tc := range []struct {
		name            string
		final, shuffled bool
	}{
		{"provisional", false, false},
		{"final without follow-up", true, false},
		{"final without follow-up, turns not in index order", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runAll(t, func(t *testing.T, b backend) {
				s, _, _ := open(t, b)
				ctx := context.Background()
				const id = "lower-keeps-further"
				higher := atIndexes(partAnalysis(id, 2, 0, 1, 4), 0, 3)
				withVerdict(higher, 0, true, evaluation.DetectionRDM, "revision 2")
				lower := partAnalysis(id, 1, 0, 1, 2, 3, 4)
				lower.TurnResults[0].Final, lower.TurnResults[0].WithFollowUp = tc.final, false
				if tc.shuffled {
					lower.TurnResults[0], lower.TurnResults[1] = lower.TurnResults[1], lower.TurnResults[0]
				}
				require.NoError(t, s.SaveAnalysis(ctx, higher))
				require.NoError(t, s.SaveAnalysis(ctx, lower))

				got, rev := storedTurns(t, s, id)
				assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got, "turns 1 and 2 added")
				assert.Equal(t, 3, rev)
				assertVerdict(t, s, id, 0, 2, evaluation.DetectionRDM, "revision 2")
				assertVerdict(t, s, id, 1, 1, evaluation.DetectionNone, "timeout")
				assert.Equal(t, 4, count(t, s, "tool_issues", id), "one issue a turn, none twice")
				assert.Equal(t, 4, listedTurns(t, s, id))

				require.NoError(t, s.SaveAnalysis(ctx, lower), "a retried export")
				assertVerdict(t, s, id, 0, 2, evaluation.DetectionRDM, "revision 2")

				rebuilt := partAnalysis(id, 4, 0, 1, 2, 3, 4)
				withVerdict(rebuilt, 0, false, evaluation.DetectionNone, "revision 4")
				require.NoError(t, s.SaveAnalysis(ctx, rebuilt), "a newer revision, turn 0 without follow-up")
				assertVerdict(t, s, id, 0, 2, evaluation.DetectionRDM, "revision 2")
				assert.Equal(t, 4, count(t, s, "tool_issues", id))

				next := partAnalysis(id, 5, 0, 1, 2, 3, 4)
				withVerdict(next, 0, true, evaluation.DetectionCCM, "revision 5")
				require.NoError(t, s.SaveAnalysis(ctx, next), "a newer revision of the same stage")
				assertVerdict(t, s, id, 0, 2, evaluation.DetectionCCM, "revision 5")
				got, rev = storedTurns(t, s, id)
				assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got)
				assert.Equal(t, 5, rev)
			})
		})
	}
}

// withVerdict gives turn i of a partAnalysis a final verdict of detection type typ, with
// follow-up or without, and its tool issue the message msg (in the turn and in the
// analysis' tool_issues).
func withVerdict(a *evaluation.Analysis, i int, followUp bool, typ, msg string) {
	tr := &a.TurnResults[i]
	tr.Final, tr.WithFollowUp = true, followUp
	tr.IsBad, tr.DetectionType = typ != evaluation.DetectionNone, typ
	tr.Interactions[0].ToolCalls[0].Issues[0].Message = msg
	for j := range a.ToolIssues {
		if a.ToolIssues[j].TurnIndex == tr.TurnIndex {
			a.ToolIssues[j].Message = msg
		}
	}
}

// assertVerdict asserts that turn idx of session id is stored at verdict stage stage
// (the turn_results row), of detection type typ (the row and the analysis GetAnalysis
// returns), with its one tool issue's message msg (the turn, the analysis' tool_issues
// and the tool_issues rows).
func assertVerdict(t *testing.T, s *sqlStore, id string, idx, stage int, typ, msg string) {
	t.Helper()
	var (
		gotStage int
		gotType  string
	)
	require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT verdict_stage, detection_type FROM turn_results WHERE session_id = ? AND turn_index = ?"),
		id, idx).Scan(&gotStage, &gotType))
	assert.Equal(t, stage, gotStage, "turn %d: the row's stage", idx)
	assert.Equal(t, typ, gotType, "turn %d: the row's detection type", idx)
	var rowMsg []string
	tx, err := s.db.Begin()
	require.NoError(t, err)
	err = scanEach(context.Background(), tx, s.d.rebind("SELECT message FROM tool_issues WHERE session_id = ? AND turn_index = ?"),
		[]any{id, idx}, func(m string) { rowMsg = append(rowMsg, m) })
	_ = tx.Rollback()
	require.NoError(t, err)
	assert.Equal(t, []string{msg}, rowMsg, "turn %d: its tool_issues rows", idx)

	a, err := s.GetAnalysis(context.Background(), id)
	require.NoError(t, err)
	i := slices.IndexFunc(a.TurnResults, func(tr evaluation.TurnResult) bool { return tr.TurnIndex == idx })
	require.GreaterOrEqual(t, i, 0, "turn %d read back", idx)
	tr := a.TurnResults[i]
	assert.Equal(t, stage, tr.VerdictStage(), "turn %d: the analysis' stage", idx)
	assert.Equal(t, typ, tr.DetectionType, "turn %d: the analysis' detection type", idx)
	assert.Equal(t, msg, tr.Interactions[0].ToolCalls[0].Issues[0].Message, "turn %d: its tool issue", idx)
	var docMsg []string
	for _, is := range a.ToolIssues {
		if is.TurnIndex == idx {
			docMsg = append(docMsg, is.Message)
		}
	}
	assert.Equal(t, []string{msg}, docMsg, "turn %d: the analysis' tool_issues", idx)
}

// listedTurns returns the turn count ListSessions gives session id.
func listedTurns(t *testing.T, s *sqlStore, id string) int {
	t.Helper()
	sums, err := s.ListSessions(context.Background(), Filter{Limit: MaxLimit})
	require.NoError(t, err)
	for _, sum := range sums {
		if sum.SessionID == id {
			return sum.Turns
		}
	}
	t.Fatalf("session %q not listed", id)
	return 0
}

// TestRestartedPartStartsAtReclosedTurn: a turn whose spans came both before and after a
// restart is closed again, first, by the restarted collector (docs/decisions/sessions.md
// §3): the new part starts at that trace's stored turn. A late export of the first part
// that holds only that turn is stale.
func TestRestartedPartStartsAtReclosedTurn(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "reclosed-1"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 2, 3)))
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3}, got)
		assert.Equal(t, 2, rev)
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 1, 2)), "stale")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3}, got)
		assert.Equal(t, 2, rev)
	})
}

// TestWholeSessionAfterPart: a collector whose continuation store was down when a
// session came back numbered the continued turn from 0 (a part, placed after the stored
// turns); once the store is back its next revision covers the whole conversation, every
// stored trace at its stored index and a new turn after them. That save is the whole
// session, not a stale export of an earlier part: it is stored (its revision after the
// stored one), and so are its retried export and its next revision. An earlier part's
// late export, which lacks the later part's turns, stays stale; so does the part's own
// export replayed after the whole session (several queue consumers, a retried batch),
// which before cut off the turn after it.
func TestWholeSessionAfterPart(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "whole-after-part-1"
		first := partAnalysis(id, 1, 0, 1, 2)
		require.NoError(t, s.SaveAnalysis(ctx, first))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 3)), "the part made while the store was down")
		got, rev := storedTurns(t, s, id)
		require.Equal(t, map[int]int{0: 1, 1: 2, 2: 3}, got)
		require.Equal(t, 2, rev)

		whole := partAnalysis(id, 2, 0, 1, 2, 3, 4)
		require.NoError(t, s.SaveAnalysis(ctx, whole))
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got, "the whole conversation")
		assert.Equal(t, 3, rev, "after the part's revision")

		require.NoError(t, s.SaveAnalysis(ctx, whole), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, first), "a stale export of the first part")
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 3)), "the part's export, replayed late")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got)
		assert.Equal(t, 3, rev)

		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 3, 0, 1, 2, 3, 4, 5)), "the next revision")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, got)
		assert.Equal(t, 4, rev)
		assert.Equal(t, 4, count(t, s, "session_analyses", id), "every revision's document kept once")
	})
}

// TestWholeSessionOverGuessedPart: a part numbered from 0 by a collector that could not
// load the session (its store down) is placed after the turns stored then; the turns
// between reached the result store only with the whole conversation, which puts the
// part's turn after them. That save holds every stored turn and more: it is stored
// whole, the part's turn moved (before, it was skipped as an earlier part's late export,
// the turns between lost; or, when the part was all that was stored, placed at a
// negative offset). The part's export replayed after it changes no turn; a save holding
// the stored turns in another order is not written over them. When the first part was
// numbered from 0 too, the whole conversation goes at its own numbering (before: at a
// negative offset). Found by FuzzStoreOutage.
func TestWholeSessionOverGuessedPart(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "whole-over-guessed-1"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2, 3)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 9)), "the part, numbered from 0")
		got, rev := storedTurns(t, s, id)
		require.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 9}, got)
		require.Equal(t, 2, rev)
		whole := partAnalysis(id, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
		require.NoError(t, s.SaveAnalysis(ctx, whole))
		want := map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 8, 8: 9}
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got, "the whole conversation, the part's turn moved")
		assert.Equal(t, 3, rev, "after the part's revision")
		require.NoError(t, s.SaveAnalysis(ctx, whole), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 9)), "the part's export, replayed late")
		got, _ = storedTurns(t, s, id)
		assert.Equal(t, want, got)

		const first = "whole-over-guessed-2"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(first, 1, 0, 5)), "the part, stored first")
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(first, 2, 0, 1, 2, 3, 4, 5)))
		got, _ = storedTurns(t, s, first)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, got, "no negative index")

		const guessed = "whole-over-guessed-4"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(guessed, 1, 0, 7, 8)), "the first part, numbered from 0 too")
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(guessed, 1, 0, 9)), "the part, numbered from 0")
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(guessed, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)))
		got, rev = storedTurns(t, s, guessed)
		assert.Equal(t, want, got, "at its own numbering, no negative index")
		assert.Equal(t, 3, rev)

		const order = "whole-over-guessed-3"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(order, 1, 0, 1, 2, 3)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(order, 2, 0, 1, 3, 2, 4)), "the stored turns in another order")
		got, _ = storedTurns(t, s, order)
		for _, seed := range []int{1, 2, 3} {
			n := 0
			for _, v := range got {
				if v == seed {
					n++
				}
			}
			assert.Equal(t, 1, n, "turn %d stored once: %v", seed, got)
		}
	})
}

// TestPartNumberedApartPlacedTurnByTurn: two collectors stored turns 0–4 (seeds 1–5);
// the database down, one of them numbered the two turns it closed (seeds 6 and 7) after
// the only ones it held (0–2), so its save holds stored turns where they are stored and
// new turns on the indexes of other stored turns: it fits at no offset. Placed at one
// offset after the stored turns (a new part), it held turns 0–2 twice. It is placed turn
// by turn: its stored turns where they are, its new ones after the highest stored turn;
// the stored turns it lacks (3 and 4) are kept, and its revision goes after the stored
// one. Its retried export and its next revision, numbered apart still, land in the same
// places; the session's offsets do not move, so the whole conversation numbered as the
// store numbers fits as before (docs/decisions/sessions.md §4.5, §4.6; FuzzStoreOutage).
func TestPartNumberedApartPlacedTurnByTurn(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "numbered-apart-1"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2, 3, 4, 5)))
		apart := partAnalysis(id, 1, 0, 1, 2, 3, 6, 7)
		require.NoError(t, s.SaveAnalysis(ctx, apart))
		want := map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7}
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, want, got, "each turn once, the new ones after the stored ones")
		assert.Equal(t, 2, rev, "after the stored revision")
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, 7, list[0].Turns)

		require.NoError(t, s.SaveAnalysis(ctx, apart), "a retried export")
		got, _ = storedTurns(t, s, id)
		assert.Equal(t, want, got)
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 2, 0, 1, 2, 3, 6, 7, 8)), "its next revision, numbered apart")
		want[7] = 8
		got, _ = storedTurns(t, s, id)
		assert.Equal(t, want, got)
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)), "the whole conversation")
		want[8] = 9
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got)
		assert.Equal(t, 5, rev)
	})
}

// TestPartPlacedTurnByTurnReadsBackKeptTurns: a save placed turn by turn whose turns land
// out of index order (a stored turn's index below a new one's) keeps the stored turns it
// lacks, as rows; its document held its own turns (a save not in index order keeps them
// there), and GetAnalysis, which reads the rows only for a document without turns, gave
// back 3 of 12 turns. From FuzzStoreOutage input db5f16361f2c5a97 (two collectors, a
// sender's retry of two turns to the one that could not load the session).
func TestPartPlacedTurnByTurnReadsBackKeptTurns(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "by-turn-read-back"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 2, 6, 4)))
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 0, 1: 1, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 8, 8: 9, 9: 10, 10: 11, 11: 2}, got,
			"every stored turn where it is, the new one after them")
		assert.Equal(t, 2, rev)
	})
}

// TestEarlierPartAddingTurnPlacedTurnByTurn: a save below the current part (one of its
// stored turns puts it there) that adds a turn of a trace no stored turn has is not an
// earlier part's late export, which the stored analyses hold: it is placed turn by turn.
// Before, it was stale and its turn was in no stored analysis (FuzzStoreOutage, two
// collectors: a sender's retry of turn 1 to the collector that closed turn 0 while the
// database was down, each numbering from 0; the parts [1 2] and [0 1]).
func TestEarlierPartAddingTurnPlacedTurnByTurn(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "earlier-adds"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 0, 1)))
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 0}, got, "each turn once, the new one after the stored ones")
		assert.Equal(t, 2, rev)
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1)), "an earlier part that adds nothing")
		got, _ = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 0}, got, "stale")
	})
}

// TestWholeSessionLackingTurnAtGapAfterPart: three turns stored (seeds 1–3); a part
// numbered from 0 while the continuation store was down (seeds 4 and 5) is placed after
// them, at 3 and 4. The whole conversation, from a collector that could not load the
// part's first turn (its record dropped over the bound, the part not stored yet when it
// continued), holds every other stored turn where it is stored, lacks seed 4 at its gap
// (index 3) and adds seed 6 after every stored turn. It is below the part's offset and
// lacks a stored turn, so it was refused as an earlier part's late export, and seed 6
// was in no stored analysis. A save there that loses no stored turn (each one it lacks
// is below its last index, where it keeps it) is the whole conversation: stored, the
// gap's turn kept, its revision after the part's. An earlier part's late export, which
// lacks the part's turns after its own, stays stale (docs/decisions/sessions.md §4.5,
// §4.6; FuzzStoreOutage, input 3962bb8a6f03f9b9).
func TestWholeSessionLackingTurnAtGapAfterPart(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "whole-gap-after-part-1"
		first := partAnalysis(id, 1, 0, 1, 2, 3)
		require.NoError(t, s.SaveAnalysis(ctx, first))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 4, 5)), "the part, numbered from 0")
		got, rev := storedTurns(t, s, id)
		require.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, got)
		require.Equal(t, 2, rev)

		whole := atIndexes(partAnalysis(id, 2, 0, 1, 2, 3, 5, 6), 0, 1, 2, 4, 5)
		require.NoError(t, s.SaveAnalysis(ctx, whole))
		want := map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6}
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got, "the gap's turn kept, the new turn stored")
		assert.Equal(t, 3, rev, "after the part's revision")

		require.NoError(t, s.SaveAnalysis(ctx, whole), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, first), "a stale export of the first part")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got)
		assert.Equal(t, 3, rev)

		const late = "whole-gap-after-part-2"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(late, 1, 0, 1, 2, 3)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(late, 1, 0, 4, 5)), "the part, numbered from 0")
		require.NoError(t, s.SaveAnalysis(ctx, atIndexes(partAnalysis(late, 2, 0, 1, 3), 0, 2)),
			"an earlier part's late revision, lacking turn 1 at a gap and the part's turns after it")
		got, rev = storedTurns(t, s, late)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, got, "stale: nothing changed")
		assert.Equal(t, 2, rev)
	})
}

// TestWholeSessionMovesPartTurnItLacks: three turns stored (seeds 1–3); the turns closed
// next (seeds 4 and 5) reached only the continuation store, and a collector that could
// not load the session numbered the two after them (seeds 6 and 7) from 0: that part was
// placed after the turns stored then, at 3 and 4, the indexes the store gave seeds 4 and
// 5. The whole conversation, from a collector that could not load seed 6 (its record
// dropped over the bound), holds seeds 1–5 at 0–4, seed 7 at 6 and adds seed 8 at 7,
// lacking seed 6 at its gap (5). It puts seeds 4 and 5 on the part's rows: it fitted at
// no offset and was placed turn by turn, seeds 4, 5 and 8 after the part's (5, 6, 7),
// not where the store numbers them. It is stored whole, the part's turn it lacks moved
// to the gap, with its tool issues; its retried export, the part's late export and its
// next revision change no turn's place (docs/decisions/sessions.md §4.5, §4.6;
// FuzzStoreOutage input f62cc4a9906be8dc). With two gaps for the one turn it lacks, the
// save does not say where that turn goes, nor do the gaps of a save whose offset no
// earlier part's turn gives (the session stored in one part, numbered otherwise by a
// collector that could not load it): each is placed turn by turn as before, each turn
// once.
func TestWholeSessionMovesPartTurnItLacks(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "whole-moves-part-1"
		first := partAnalysis(id, 1, 0, 1, 2, 3)
		require.NoError(t, s.SaveAnalysis(ctx, first))
		part := partAnalysis(id, 1, 0, 6, 7)
		require.NoError(t, s.SaveAnalysis(ctx, part), "the part, numbered from 0")
		got, rev := storedTurns(t, s, id)
		require.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 6, 4: 7}, got)
		require.Equal(t, 2, rev)

		whole := atIndexes(partAnalysis(id, 2, 0, 1, 2, 3, 4, 5, 7, 8), 0, 1, 2, 3, 4, 6, 7)
		require.NoError(t, s.SaveAnalysis(ctx, whole))
		want := map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 8}
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got, "every turn at the store's index, the part's turn moved to the gap")
		assert.Equal(t, 3, rev, "after the part's revision")
		list, err := s.ListSessions(ctx, Filter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, 8, list[0].Turns)
		a, err := s.GetAnalysis(ctx, id)
		require.NoError(t, err)
		moved := a.TurnResults[5]
		assert.Equal(t, part.TurnResults[0].Interactions[0].ToolCalls[0].Issues[0].SpanID,
			moved.Interactions[0].ToolCalls[0].Issues[0].SpanID, "the moved turn keeps its tool issue")

		require.NoError(t, s.SaveAnalysis(ctx, whole), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, part), "the part's export, replayed late")
		require.NoError(t, s.SaveAnalysis(ctx, first), "a stale export of the first part")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got)
		assert.Equal(t, 3, rev)

		require.NoError(t, s.SaveAnalysis(ctx, atIndexes(partAnalysis(id, 3, 0, 1, 2, 3, 4, 5, 7, 8, 9), 0, 1, 2, 3, 4, 6, 7, 8)),
			"the next revision, lacking seed 6 still")
		want[8] = 9
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got)
		assert.Equal(t, 4, rev)

		const two = "whole-moves-part-2"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(two, 1, 0, 1, 2, 3)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(two, 1, 0, 6, 7, 8)), "the part, numbered from 0")
		require.NoError(t, s.SaveAnalysis(ctx, atIndexes(partAnalysis(two, 2, 0, 1, 2, 3, 4, 5, 7, 9), 0, 1, 2, 3, 4, 6, 8)),
			"lacking seeds 6 (at the gap 5) and 8 (at the gap 7)")
		got, _ = storedTurns(t, s, two)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 8, 8: 9}, got, "both moved")

		const gaps = "whole-moves-part-3"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(gaps, 1, 0, 1, 2, 3)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(gaps, 1, 0, 6, 7)), "the part, numbered from 0")
		require.NoError(t, s.SaveAnalysis(ctx, atIndexes(partAnalysis(gaps, 2, 0, 1, 2, 3, 4, 7, 8), 0, 1, 2, 3, 6, 7)),
			"two gaps (4 and 5) for seed 6")
		got, _ = storedTurns(t, s, gaps)
		seen := map[int]int{}
		for _, seed := range got {
			seen[seed]++
		}
		assert.Equal(t, map[int]int{1: 1, 2: 1, 3: 1, 4: 1, 6: 1, 7: 1, 8: 1}, seen, "each turn once: %v", got)

		const apart = "whole-moves-part-4"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(apart, 4, 0, 1, 2, 5, 8, 9, 10)))
		require.NoError(t, s.SaveAnalysis(ctx, atIndexes(partAnalysis(apart, 5, 0, 1, 2, 3, 10, 7), 0, 1, 2, 6, 9)),
			"no earlier part gives its offset: its gaps are not the store's")
		got, _ = storedTurns(t, s, apart)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 5, 3: 8, 4: 9, 5: 10, 6: 3, 7: 7}, got,
			"placed turn by turn: the stored turns where they are (FuzzStoreOutage input 257b49578c28e7bb)")
	})
}

// TestWholeSessionReordersPartTurns: two turns stored (seeds 1 and 2); a collector that
// could not load the session numbered the turns it closed from 0, a sender's retry of
// seed 4 among them after seed 5: the part (5, 4, 6) is placed at 2–4. The whole
// conversation holds the earlier part's turns where they are stored and the part's in
// another order, after seed 3, which only the continuation store had. The stored turns
// in another order kept it from the rule for the whole conversation, and it was placed
// turn by turn: seed 3 after the part's (at 5). Anchored by the earlier part's turns and
// holding every stored turn, it now replaces them, in its order; a save that no earlier
// part anchors is still not written over stored turns in another order
// (TestWholeSessionOverGuessedPart). Its retried export and the part's late one change
// nothing (docs/decisions/sessions.md §4.6; FuzzStoreOutage input bf84ab6ee84344ea).
// The same with two parts placed before the turn between (seed 4), each after the turns
// stored then: the earlier part's turn moves too (FuzzStoreOutage input
// f02e364494d9ea34; before, the save was placed turn by turn, seed 4 after both).
func TestWholeSessionReordersPartTurns(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "whole-reorders-part"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2)))
		part := partAnalysis(id, 1, 0, 5, 4, 6)
		require.NoError(t, s.SaveAnalysis(ctx, part), "the part, numbered from 0")
		got, rev := storedTurns(t, s, id)
		require.Equal(t, map[int]int{0: 1, 1: 2, 2: 5, 3: 4, 4: 6}, got)
		require.Equal(t, 2, rev)

		whole := partAnalysis(id, 2, 0, 1, 2, 3, 4, 5, 6)
		require.NoError(t, s.SaveAnalysis(ctx, whole))
		want := map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6}
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got, "the whole conversation, in its order")
		assert.Equal(t, 3, rev, "after the part's revision")

		require.NoError(t, s.SaveAnalysis(ctx, whole), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, part), "the part's export, replayed late")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, want, got)
		assert.Equal(t, 3, rev)

		const two = "whole-reorders-parts"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(two, 1, 0, 1, 2, 3)))
		first := partAnalysis(two, 1, 0, 5)
		require.NoError(t, s.SaveAnalysis(ctx, first), "a part, numbered from 0")
		second := partAnalysis(two, 1, 0, 6)
		require.NoError(t, s.SaveAnalysis(ctx, second), "another, numbered from 0")
		got, _ = storedTurns(t, s, two)
		require.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 5, 4: 6}, got)
		whole = partAnalysis(two, 2, 0, 1, 2, 3, 4, 5, 6)
		require.NoError(t, s.SaveAnalysis(ctx, whole), "seed 4 before both parts' turns")
		want = map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6}
		got, rev = storedTurns(t, s, two)
		assert.Equal(t, want, got, "the earlier part's turn moved too")
		assert.Equal(t, 4, rev, "after the parts' revisions")
		require.NoError(t, s.SaveAnalysis(ctx, whole), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, first), "the first part's export, replayed late")
		require.NoError(t, s.SaveAnalysis(ctx, second), "the second's")
		got, _ = storedTurns(t, s, two)
		assert.Equal(t, want, got)
	})
}

// numbered marks a as numbered by its collector without its continuation store
// (Analysis.NumberedHere: its indexes are guesses).
func numbered(a *evaluation.Analysis) *evaluation.Analysis {
	a.NumberedHere = true
	return a
}

// storedNumberedHere returns the session's sessions.numbered_here.
func storedNumberedHere(t *testing.T, s *sqlStore, id string) bool {
	t.Helper()
	var mark bool
	require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT numbered_here FROM sessions WHERE session_id = ?"), id).Scan(&mark))
	return mark
}

// TestStoreNumberedSaveReordersGuessedPart: a collector that could not load a session
// (its continuation store down) numbers from 0 its new turn (seed 3), then a sender's
// retry of a stored turn (seed 1) as a new one: a part whose indexes it guessed
// (NumberedHere), stored first, on a session the result store does not have. The
// analysis over the continuation store's turns (seeds 1–3 at 0–2) holds every stored
// turn and more, in another order, with no earlier part to anchor it: the order rule
// placed it turn by turn, seeds 1, 2 and 3 at 1, 2 and 0 (FuzzStoreOutage input
// f272254620ec775f). Stored in the other order, the part is an earlier part's late
// export. In both orders every turn is stored once, at the continuation store's index.
// The reverse never happens: a save whose indexes were guessed does not reorder the
// stored turns, with an earlier part to anchor it or without (docs/decisions/sessions.md
// §4.6).
func TestStoreNumberedSaveReordersGuessedPart(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		want := map[int]int{0: 1, 1: 2, 2: 3}

		const first = "guessed-part-first"
		part := numbered(partAnalysis(first, 1, 0, 3, 1))
		require.NoError(t, s.SaveAnalysis(ctx, part), "the part, its indexes guessed")
		got, _ := storedTurns(t, s, first)
		require.Equal(t, map[int]int{0: 3, 1: 1}, got, "stored at its numbering: nothing else is stored")
		assert.True(t, storedNumberedHere(t, s, first))
		whole := partAnalysis(first, 3, 0, 1, 2, 3)
		require.NoError(t, s.SaveAnalysis(ctx, whole), "the continuation store's numbering")
		got, rev := storedTurns(t, s, first)
		assert.Equal(t, want, got, "every turn once, at the continuation store's index")
		assert.Equal(t, 3, rev)
		assert.False(t, storedNumberedHere(t, s, first), "every stored index is the continuation store's")
		require.NoError(t, s.SaveAnalysis(ctx, whole), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, part), "the part's export, replayed late")
		got, rev = storedTurns(t, s, first)
		assert.Equal(t, want, got)
		assert.Equal(t, 3, rev)

		const second = "guessed-part-second"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(second, 3, 0, 1, 2, 3)))
		require.NoError(t, s.SaveAnalysis(ctx, numbered(partAnalysis(second, 1, 0, 3, 1))), "the part after it")
		got, rev = storedTurns(t, s, second)
		assert.Equal(t, want, got, "the part changes nothing")
		assert.Equal(t, 3, rev)
		assert.False(t, storedNumberedHere(t, s, second), "the part was not written")

		// Never the reverse: a save whose indexes were guessed holds the stored turns in
		// another order, and more.
		const guessed = "guessed-over-stored"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(guessed, 1, 0, 1, 2, 3)))
		require.NoError(t, s.SaveAnalysis(ctx, numbered(partAnalysis(guessed, 2, 0, 3, 1, 2, 4))))
		got, _ = storedTurns(t, s, guessed)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got, "the stored turns where they are, the new one after them")
		assert.True(t, storedNumberedHere(t, s, guessed), "its turn's index is a guess")

		// With an earlier part's turn to anchor it (seed 1, where it is stored): a save
		// the continuation store numbered reorders the current part's turns
		// (TestWholeSessionReordersPartTurns), a guessed one does not.
		const anchored = "guessed-anchored"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(anchored, 1, 0, 1, 2)))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(anchored, 1, 0, 5, 4)), "a part, numbered from 0")
		got, _ = storedTurns(t, s, anchored)
		require.Equal(t, map[int]int{0: 1, 1: 2, 2: 5, 3: 4}, got)
		require.NoError(t, s.SaveAnalysis(ctx, numbered(partAnalysis(anchored, 2, 0, 1, 2, 4, 5, 6))))
		got, _ = storedTurns(t, s, anchored)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 5, 3: 4, 4: 6}, got, "placed turn by turn")
	})
}

// TestSameRevisionThatCutsOffIsStale: a save at the stored revision and offset that holds
// only stored turns and lacks a stored turn after them is not a retried export of the
// stored analysis (which lacks none): another analysis was given the same revision. It
// changes nothing; a retried export of the stored one, and a save that adds a turn at
// that revision, are still written.
func TestSameRevisionThatCutsOffIsStale(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "same-revision-1"
		stored := partAnalysis(id, 2, 0, 1, 2, 3, 4)
		require.NoError(t, s.SaveAnalysis(ctx, stored))
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 2, 2, 3)), "turn 2 alone at revision 2")
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got, "turn 3 kept")
		assert.Equal(t, 2, rev)

		require.NoError(t, s.SaveAnalysis(ctx, stored), "a retried export")
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 2, 2, 3, 4, 5)), "revision 2 again, with a new turn")
		got, rev = storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, got)
		assert.Equal(t, 2, rev)
	})
}

// TestTurnsPartsInAnyOrder: a session span over the processor's bound carries its newest
// turns, and turns parts (Analysis.TurnsPart) carry the older ones
// (docs/decisions/sessions.md §4.10). Saved in any order, in one batch or one by one,
// they store every turn once: a turns part replaces its range only. A retried part
// changes nothing, a part of an older revision is not written, and the next revision's
// part replaces its range.
func TestTurnsPartsInAnyOrder(t *testing.T) {
	turnsPart := func(a *evaluation.Analysis) *evaluation.Analysis {
		a.TurnsPart = true
		return a
	}
	saves := func(id string, rev int) []*evaluation.Analysis {
		return []*evaluation.Analysis{
			partAnalysis(id, rev, 4, 5, 6), // the session span: turns 4 and 5
			turnsPart(partAnalysis(id, rev, 2, 3, 4)),
			turnsPart(partAnalysis(id, rev, 0, 1, 2)),
		}
	}
	all := map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6}
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		turnsListed := func(id string) int { return listedTurns(t, s, id) }
		for i, order := range orders {
			for _, batch := range []bool{false, true} {
				id := fmt.Sprintf("parts-%d-%v", i, batch)
				as := saves(id, 1)
				ordered := make([]*evaluation.Analysis, 0, len(as))
				for _, k := range order {
					ordered = append(ordered, as[k])
				}
				if batch {
					require.NoError(t, s.SaveAnalyses(ctx, ordered))
				} else {
					for _, a := range ordered {
						require.NoError(t, s.SaveAnalysis(ctx, a))
					}
				}
				got, rev := storedTurns(t, s, id)
				assert.Equal(t, all, got, "order %v, batch %v", order, batch)
				assert.Equal(t, 1, rev)
				assert.Equal(t, 6, turnsListed(id))
			}
		}

		const id = "parts-revisions"
		for _, a := range saves(id, 1) {
			require.NoError(t, s.SaveAnalysis(ctx, a))
		}
		require.NoError(t, s.SaveAnalysis(ctx, saves(id, 1)[2]), "a retried part")
		next := saves(id, 2)
		next[2].TurnResults[0].LatencyMs = 99 // the next revision changed turn 0
		require.NoError(t, s.SaveAnalysis(ctx, next[0]))
		require.NoError(t, s.SaveAnalysis(ctx, next[2]))
		stale := saves(id, 1)[2]
		stale.TurnResults[0].LatencyMs = 7
		require.NoError(t, s.SaveAnalysis(ctx, stale), "a part of an older revision")
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, all, got)
		assert.Equal(t, 2, rev)
		assert.Equal(t, 6, turnsListed(id))
		a, err := s.GetAnalysis(ctx, id)
		require.NoError(t, err)
		assert.InDelta(t, 99.0, a.TurnResults[0].LatencyMs, 0, "revision 2's part replaced turn 0")
	})
}

// TestTurnsPartWritesTurnsOnly: a turns part of a stored session writes its turn rows
// and the turn count, never the session's scores or session-level rows: a part of another
// analysis given the stored revision (docs/decisions/sessions.md §4.8) replaced them
// before (review of 2026-11-27).
func TestTurnsPartWritesTurnsOnly(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "part-turns-only"
		stored := partAnalysis(id, 1, 2, 3, 4)
		stored.OverallScore = f64(0.9)
		require.NoError(t, s.SaveAnalysis(ctx, stored))
		other := partAnalysis(id, 1, 0, 1, 2)
		other.OverallScore, other.TurnsPart = f64(0.1), true
		other.ToolIssues = other.ToolIssues[:1]
		require.NoError(t, s.SaveAnalysis(ctx, other))
		got, err := s.GetAnalysis(ctx, id)
		require.NoError(t, err)
		require.NotNil(t, got.OverallScore)
		assert.InDelta(t, 0.9, *got.OverallScore, 0, "the session span's score")
		assert.Len(t, got.ToolIssues, 2, "the session span's tool issues")
		turns, _ := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, turns)
	})
}

// TestTurnsPartNeverStartsAPart: a collector that forgot a stored session emits a span and
// a turns part numbered from 0 again (§4.6). The part does not fit at the session's
// offsets; it is not placed as a new part, which moved the session's offsets so that the
// span's next revision was taken for a stale export and its new turn was lost (review of
// 2026-11-27). The span's turns, and its next revision's, are stored.
func TestTurnsPartNeverStartsAPart(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "part-forgotten"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 100)))
		part := partAnalysis(id, 1, 0, 10, 11)
		part.TurnsPart = true
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 2, 12, 13)))
		require.NoError(t, s.SaveAnalysis(ctx, part))
		next := partAnalysis(id, 2, 3, 13, 14)
		require.NoError(t, s.SaveAnalysis(ctx, next))
		got, _ := storedTurns(t, s, id)
		for idx, seed := range map[int]int{0: 100, 2: 12, 3: 13, 4: 14} {
			assert.Equal(t, seed, got[idx], "turn %d", idx)
		}
	})
}

// TestTurnsWithoutTraceContinue: turns without a trace id identify nothing; saving their
// session again is a continuation, not a new part.
func TestTurnsWithoutTraceContinue(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		a := partAnalysis("no-trace-1", 1, 0, 1, 2, 3)
		for i := range a.TurnResults {
			a.TurnResults[i].TraceID = ""
		}
		require.NoError(t, s.SaveAnalysis(ctx, a))
		a.AnalysisRevision = 2
		require.NoError(t, s.SaveAnalysis(ctx, a))
		got, err := s.GetAnalysis(ctx, "no-trace-1")
		require.NoError(t, err)
		assert.Equal(t, 2, got.AnalysisRevision)
		assert.Len(t, got.TurnResults, 3)
	})
}

// TestBatchSavesNewSessionTwice: a batch that holds two revisions of a session not stored
// yet (and a stored one) stores each session's newest revision whole, as saving them one
// by one does: the second save of the new session finds the first.
func TestBatchSavesNewSessionTwice(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis("known-1", 1, 0, 7)))
		require.NoError(t, s.SaveAnalyses(ctx, []*evaluation.Analysis{
			partAnalysis("new-1", 1, 0, 1), partAnalysis("known-1", 2, 0, 7, 8), partAnalysis("new-1", 2, 0, 1, 2),
		}))
		got, rev := storedTurns(t, s, "new-1")
		assert.Equal(t, map[int]int{0: 1, 1: 2}, got)
		assert.Equal(t, 2, rev)
		assert.Equal(t, 2, count(t, s, "session_analyses", "new-1"))
		got, rev = storedTurns(t, s, "known-1")
		assert.Equal(t, map[int]int{0: 7, 1: 8}, got)
		assert.Equal(t, 2, rev)
	})
}

// TestContinuedSaveReplacesTurns: a stored session's next revision (SQLite: a plain
// UPDATE of its sessions row) replaces its turn rows whichever of them changed, a retried
// export changes nothing, an older revision is skipped, a revision with fewer turns
// keeps the stored turns it lacks, and a repeated turn index fails the save.
func TestContinuedSaveReplacesTurns(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "continued-1"
		check := func(want *evaluation.Analysis) {
			t.Helper()
			got, err := s.GetAnalysis(ctx, id)
			require.NoError(t, err)
			wantJS, err := json.Marshal(want.TurnResults)
			require.NoError(t, err)
			gotJS, err := json.Marshal(got.TurnResults)
			require.NoError(t, err)
			assert.JSONEq(t, string(wantJS), string(gotJS))
			assert.Equal(t, want.AnalysisRevision, got.AnalysisRevision)
			list, err := s.ListSessions(ctx, Filter{})
			require.NoError(t, err)
			require.Len(t, list, 1)
			assert.Equal(t, len(want.TurnResults), list[0].Turns)
		}

		first := partAnalysis(id, 1, 0, 1, 2)
		require.NoError(t, s.SaveAnalysis(ctx, first))
		next := partAnalysis(id, 2, 0, 1, 2, 3)
		next.TurnResults[1].LatencyMs = 20 // the follow-up changed turn 1
		require.NoError(t, s.SaveAnalysis(ctx, next))
		check(next)
		require.NoError(t, s.SaveAnalysis(ctx, next), "a retried export")
		check(next)
		require.NoError(t, s.SaveAnalysis(ctx, first), "an older revision")
		check(next)

		// A revision with fewer turns keeps the stored turns it lacks: a collector that
		// could not load them analysed only the turns it holds (docs/decisions/sessions.md
		// §4.5, FuzzStoreOutage input 0e38c9909932f1a0). Until 2026-11-29 it left fewer
		// rows, and turns 1 and 2 were in no stored analysis.
		fewer := partAnalysis(id, 3, 0, 1)
		require.NoError(t, s.SaveAnalysis(ctx, fewer))
		kept := *fewer
		kept.TurnResults = append(slices.Clone(fewer.TurnResults), next.TurnResults[1:]...)
		check(&kept)

		dup := partAnalysis(id, 4, 0, 1)
		dup.TurnResults = append(dup.TurnResults, dup.TurnResults[0])
		require.Error(t, s.SaveAnalysis(ctx, dup), "a repeated turn index")
		check(&kept)
	})
}

// saveRetried saves as the exporter does: a failed save is retried (its transaction
// rolled back whole), here up to 10 times.
func saveRetried(ctx context.Context, s Store, a *evaluation.Analysis) error {
	var err error
	for range 10 {
		if err = s.SaveAnalysis(ctx, a); err == nil {
			return nil
		}
	}
	return err
}

// racePartSaves stores, for sessions sessions, the first part (traces 1 and 2 of the
// session's seed range) through one handle, then runs save(handle, session) on two
// handles of the same database at once, each on its own goroutine (its own
// connections), released together; it returns the store handle for reading.
func racePartSaves(t *testing.T, b backend, sessions int, save func(h int, i int) *evaluation.Analysis) *sqlStore {
	t.Helper()
	ctx := context.Background()
	x, driver, dsn := open(t, b)
	st, err := Open(ctx, driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, st.Close()) })
	handles := []Store{x, st.(*sqlStore)}
	for i := range sessions {
		require.NoError(t, x.SaveAnalysis(ctx, partAnalysis(fmt.Sprintf("race-%d", i), 1, 0, 10*i+1, 10*i+2)))
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range sessions {
		for h := range handles {
			a := save(h, i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				assert.NoError(t, saveRetried(ctx, handles[h], a))
			}()
		}
	}
	close(start)
	wg.Wait()
	return x
}

// TestConcurrentNewParts: two collectors without a continuation store that both forgot
// a session (docs/decisions/sessions.md §4.6) save a new part of it at the same moment,
// each through its own handle of one database: each part goes after the stored turns
// and after the other part, whichever commits first; no turn is lost or overwritten and
// each revision's document is kept. On PostgreSQL both placements read the stored turns
// before either committed; before the placement was serialised per session the second
// save deleted the first one's turns (from the index both chose) and overwrote its
// revision's document.
func TestConcurrentNewParts(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		const sessions = 24
		s := racePartSaves(t, b, sessions, func(h, i int) *evaluation.Analysis {
			return partAnalysis(fmt.Sprintf("race-%d", i), 1, 0, 10*i+3+h) // turn 0, revision 1 again
		})
		for i := range sessions {
			id := fmt.Sprintf("race-%d", i)
			got, rev := storedTurns(t, s, id)
			first, second := 10*i+3, 10*i+4
			if got[2] == second {
				first, second = second, first
			}
			assert.Equal(t, map[int]int{0: 10*i + 1, 1: 10*i + 2, 2: first, 3: second}, got, "%s: both parts after the stored turns", id)
			assert.Equal(t, 3, rev, id)
			assert.Equal(t, 3, count(t, s, "session_analyses", id), "%s: every revision's document", id)
			var doc string
			require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT analysis FROM session_analyses WHERE session_id = ? AND revision = 2"), id).Scan(&doc))
			assert.Contains(t, doc, fmt.Sprintf("%016x", first), "%s: revision 2 is the first part's (its tool issue)", id)
			assert.NotContains(t, doc, fmt.Sprintf("%016x", second), id)
		}
	})
}

// TestLateEarlierPartRacesNewPart: the collector that still holds a session exports its
// next revision (a new turn) or retries its last one while another collector, which
// forgot the session, saves a new part of it at the same moment. The outcome is one of
// the two orders: neither loses its turn, and the stored turns stay where they are. The
// next revision saved after the new part is placed turn by turn, its new turn after the
// part's (until 2026-11-29 it was stale, and its turn lost: sessions.md §4.6); the retry
// saved after it is stale (it adds nothing).
func TestLateEarlierPartRacesNewPart(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		const sessions = 24
		s := racePartSaves(t, b, sessions, func(h, i int) *evaluation.Analysis {
			id := fmt.Sprintf("race-%d", i)
			switch {
			case h == 1:
				return partAnalysis(id, 1, 0, 10*i+3) // the new part
			case i%2 == 0:
				return partAnalysis(id, 2, 0, 10*i+1, 10*i+2, 10*i+5) // the earlier part's next revision
			}
			return partAnalysis(id, 1, 0, 10*i+1, 10*i+2) // the earlier part's retried export
		})
		for i := range sessions {
			id := fmt.Sprintf("race-%d", i)
			got, rev := storedTurns(t, s, id)
			if i%2 == 0 {
				nextFirst := map[int]int{0: 10*i + 1, 1: 10*i + 2, 2: 10*i + 5, 3: 10*i + 3}
				partFirst := map[int]int{0: 10*i + 1, 1: 10*i + 2, 2: 10*i + 3, 3: 10*i + 5}
				assert.Contains(t, []map[int]int{nextFirst, partFirst}, got, "%s: both turns, in the order saved", id)
				assert.Equal(t, 3, rev, id)
				continue
			}
			assert.Equal(t, map[int]int{0: 10*i + 1, 1: 10*i + 2, 2: 10*i + 3}, got, "%s: the new part first (or the retry)", id)
			assert.Equal(t, 2, rev, id)
		}
	})
}

// TestCrossedBatchesOnSharedStore: two handles of one database save batches holding the
// same stored sessions in opposite orders, at once, for several rounds. Every save
// succeeds the first time (the per-session locks of a batch are taken in one order
// whatever the batch's, so two batches never wait for each other crosswise) and each
// session ends with the highest revision saved.
func TestCrossedBatchesOnSharedStore(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		x, driver, dsn := open(t, b)
		st, err := Open(ctx, driver, dsn)
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, st.Close()) })
		const sessions, rounds = 8, 6
		for i := range sessions {
			require.NoError(t, x.SaveAnalysis(ctx, partAnalysis(fmt.Sprintf("crossed-%d", i), 1, 0, 10*i+1)))
		}
		var wg sync.WaitGroup
		for h, s := range []BatchSaver{x, st.(*sqlStore)} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					batch := make([]*evaluation.Analysis, 0, sessions)
					for k := range sessions {
						i := k
						if h == 1 {
							i = sessions - 1 - k
						}
						batch = append(batch, partAnalysis(fmt.Sprintf("crossed-%d", i), 2+2*r+h, 0, 10*i+1, 10*i+2))
					}
					assert.NoError(t, s.SaveAnalyses(ctx, batch), "handle %d, round %d", h, r)
				}
			}()
		}
		wg.Wait()
		for i := range sessions {
			id := fmt.Sprintf("crossed-%d", i)
			got, rev := storedTurns(t, x, id)
			assert.Equal(t, map[int]int{0: 10*i + 1, 1: 10*i + 2}, got, id)
			assert.Equal(t, 2*rounds+1, rev, id)
		}
	})
}

// oneTracePart is partAnalysis with every turn in one trace: a conversation run inside
// one trace, its turns told apart by their root spans (seed).
func oneTracePart(id string, rev, first int, seeds ...int) *evaluation.Analysis {
	a := partAnalysis(id, rev, first, seeds...)
	for i := range a.TurnResults {
		a.TurnResults[i].TraceID = "0af7651916cd43dd8448eb211c80319c"
	}
	return a
}

// storedRoots returns the session's stored turns as index → root span seed, and its
// analysis revision.
func storedRoots(t *testing.T, s *sqlStore, id string) (map[int]int, int) {
	t.Helper()
	return storedSeeds(t, s, id, func(tr *evaluation.TurnResult) string { return tr.RootSpanID })
}

// TestOneTraceTurnsPlaced: the turns of a session run inside one trace are placed by
// their trace and root span: the next revision (one turn more) lands over the stored
// turns, a retried export of an earlier revision is stale, and a restarted part (turn
// 0 again, another turn of the trace) goes after them. Before, the stored turns of the
// trace were known by their trace only, at one of their indexes: the next revision did
// not fit where it was stored and went after it as a new part, twice the turns.
func TestOneTraceTurnsPlaced(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "one-trace-parts"
		first := oneTracePart(id, 1, 0, 1, 2, 3)
		require.NoError(t, s.SaveAnalysis(ctx, first))
		require.NoError(t, s.SaveAnalysis(ctx, oneTracePart(id, 2, 0, 1, 2, 3, 4)), "the next revision")
		require.NoError(t, s.SaveAnalysis(ctx, first), "a late export of revision 1")
		got, rev := storedRoots(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4}, got)
		assert.Equal(t, 2, rev)

		require.NoError(t, s.SaveAnalysis(ctx, oneTracePart(id, 1, 0, 5)), "restarted: turn 0 again, another turn")
		got, _ = storedRoots(t, s, id)
		assert.Equal(t, map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, got)
	})
}

// TestSaveNeverBelowIndexZero: a save with the continuation store's indexes ([0 4 7])
// holds one stored turn of a guessed part at a higher index than the part gave it (4
// against 3). The offset of that turn (−1) fitted, and the save's first turn was stored
// at index −1 (FuzzStoreOutage input 9faadff7dc3f8fff, two collectors). No offset puts a
// turn below 0: the save is placed turn by turn, each turn once.
func TestSaveNeverBelowIndexZero(t *testing.T) {
	ctx := context.Background()
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		const id = "below-zero"
		require.NoError(t, s.SaveAnalysis(ctx, numbered(partAnalysis(id, 1, 0, 2, 4, 6, 7))), "a part, its indexes guessed")
		require.NoError(t, s.SaveAnalysis(ctx, atIndexes(partAnalysis(id, 2, 0, 8, 7, 5), 0, 4, 7)),
			"the continuation store's numbering: turn 7 at 4, stored at 3")
		got, _ := storedTurns(t, s, id)
		seeds := map[int]int{}
		for idx, seed := range got {
			assert.GreaterOrEqual(t, idx, 0, "turn %d stored at a negative index", seed)
			seeds[seed]++
		}
		assert.Equal(t, map[int]int{2: 1, 4: 1, 6: 1, 7: 1, 8: 1, 5: 1}, seeds, "every turn once: %v", got)
		assert.Equal(t, 7, got[3], "the stored turn where it is stored")
	})
}

// TestStoreNumberedSaveReordersGuessedPartsAddingNone: the whole conversation with the
// continuation store's indexes over guessed parts holds every stored turn and adds none.
// It was judged an earlier part exported late and skipped, so the stored order stayed
// the guessed one and the verdicts it carried further on were lost (FuzzStoreOutage
// input e5ac2bd9e6b5faa4: a turn's final verdict with follow-up in no stored analysis).
// While the stored indexes are guesses (sessions.numbered_here) it is the whole
// conversation: its order and its verdicts are stored.
func TestStoreNumberedSaveReordersGuessedPartsAddingNone(t *testing.T) {
	ctx := context.Background()
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		const id = "guessed-parts-whole"
		require.NoError(t, s.SaveAnalysis(ctx, numbered(partAnalysis(id, 1, 0, 2, 4))), "a part, its indexes guessed")
		whole := partAnalysis(id, 2, 0, 4, 2)
		whole.TurnResults[1].DetectionType = evaluation.DetectionRDM
		require.NoError(t, s.SaveAnalysis(ctx, whole), "the continuation store's numbering, adding no turn")
		got, rev := storedTurns(t, s, id)
		assert.Equal(t, map[int]int{0: 4, 1: 2}, got, "in the continuation store's order")
		assert.Equal(t, 2, rev)
		a, err := s.GetAnalysis(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, evaluation.DetectionRDM, a.TurnResults[1].DetectionType, "its verdict stored")
		assert.False(t, storedNumberedHere(t, s, id))
	})
}
