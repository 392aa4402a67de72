// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
)

func turnState(sessionID string, index int, final bool, detection string) TurnState {
	return TurnState{SessionID: sessionID, Record: evaluation.TurnRecord{
		Result: evaluation.TurnResult{SessionID: sessionID, TurnIndex: index, TraceID: fmt.Sprintf("%032x", index+1),
			Final: final, DetectionType: detection, Interactions: []evaluation.InteractionResult{},
			UserMessage: fmt.Sprintf("question %d", index)},
		FinalResponder: -1,
	}}
}

// TestContinuationStores: both implementations keep turns by (session, trace), never
// replace a final verdict by a provisional one nor one with follow-up by one without,
// keep the highest revision, and give the turns back in index order.
func TestContinuationStores(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, cs ContinuationStore) {
		c, err := cs.LoadContinuation(ctx, "s", nil)
		require.NoError(t, err)
		assert.Equal(t, Continuation{}, c, "unknown session")

		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{turnState("s", 1, false, "none"), turnState("s", 0, false, "none")})))
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{turnState("s", 0, true, "rdm")})))
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{turnState("s", 0, false, "none")})), "a late provisional copy")
		noFollowUp := turnState("s", 0, true, "none")
		noFollowUp.Record.NoFollowUp = true
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{noFollowUp})), "a late verdict without follow-up")
		finished := turnState("s", 1, true, "none")
		finished.Record.NoFollowUp = true
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{finished})))
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{turnState("s", 1, true, "ccm")})), "its follow-up known later")
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{finished})), "a late copy of the verdict without follow-up")
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{turnState("other", 0, false, "none")})))
		require.NoError(t, cs.SaveRevision(ctx, "s", 2))
		require.NoError(t, cs.SaveRevision(ctx, "s", 1))

		c, err = cs.LoadContinuation(ctx, "s", nil)
		require.NoError(t, err)
		assert.Equal(t, 2, c.Revision)
		require.Len(t, c.Turns, 2)
		assert.Equal(t, []int{0, 1}, []int{c.Turns[0].Result.TurnIndex, c.Turns[1].Result.TurnIndex})
		assert.True(t, c.Turns[0].Result.Final)
		assert.Equal(t, "rdm", c.Turns[0].Result.DetectionType, "the final verdict with follow-up stays")
		assert.Equal(t, "question 1", c.Turns[1].Result.UserMessage)
		assert.Equal(t, "ccm", c.Turns[1].Result.DetectionType, "a verdict with follow-up replaces one without")
		assert.False(t, c.Turns[1].NoFollowUp)
	}
	t.Run("memory", func(t *testing.T) { check(t, NewMemoryContinuation(10)) })
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		check(t, s)
	})
}

// TestSaveTurnsFirstFinal: SaveTurns reports, per record, whether it first stored a
// final verdict for its turn, and otherwise which final verdict it replaced: a final
// record over none or a provisional one is first; a final record over a final one (a
// copy, a later verdict with follow-up) replaced that one's detection type; a final
// record refused (a lower stage) and a provisional record report nothing.
func TestSaveTurnsFirstFinal(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, cs ContinuationStore) {
		save := func(ts ...TurnState) []SavedTurn {
			t.Helper()
			got, err := cs.SaveTurns(ctx, ts)
			require.NoError(t, err)
			require.Len(t, got, len(ts), "one result per record")
			return got
		}
		noFollowUp := func(ts TurnState) TurnState { ts.Record.NoFollowUp = true; return ts }
		first, replaced := func(string) SavedTurn { return SavedTurn{FirstFinal: true} }, func(d string) SavedTurn { return SavedTurn{Replaced: d} }
		hall, rdm, ccm := evaluation.DetectionHallucination, evaluation.DetectionRDM, evaluation.DetectionCCM
		assert.Equal(t, []SavedTurn{{}, first("")}, save(turnState("s", 0, false, "none"), turnState("s", 1, true, "none")),
			"provisional; final over none")
		assert.Equal(t, []SavedTurn{first("")}, save(noFollowUp(turnState("s", 0, true, hall))), "final over provisional")
		assert.Equal(t, []SavedTurn{replaced(hall)}, save(noFollowUp(turnState("s", 0, true, "none"))), "the same stage again")
		assert.Equal(t, []SavedTurn{replaced("none")}, save(turnState("s", 0, true, rdm)), "with follow-up over without")
		assert.Equal(t, []SavedTurn{{}}, save(noFollowUp(turnState("s", 0, true, "none"))), "refused: lower stage")
		assert.Equal(t, []SavedTurn{{}}, save(turnState("s", 1, false, "none")), "a late provisional copy")
		assert.Equal(t, []SavedTurn{first(""), replaced("none")}, save(turnState("s", 2, true, "none"), turnState("s", 2, true, ccm)),
			"two finals of one turn in a batch: the first, then one over it")
		c, err := cs.LoadContinuation(ctx, "s", nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, 3)
		assert.Equal(t, rdm, c.Turns[0].Result.DetectionType)
		assert.True(t, c.Turns[1].Result.Final)
		assert.Equal(t, ccm, c.Turns[2].Result.DetectionType)
	}
	t.Run("memory", func(t *testing.T) { check(t, NewMemoryContinuation(10)) })
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		check(t, s)
	})
}

// TestSaveAnalysesRevisions: a batch is one transaction; saving the same batch again
// (a retried export) stores each revision once and the same rows; an older revision
// never replaces a newer one; a newer one replaces the whole.
func TestSaveAnalysesRevisions(t *testing.T) {
	ctx := context.Background()
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		r1 := sampleAnalysis("s1", t0, f64(0.5))
		r1.AnalysisRevision = 1
		r1.TurnResults = r1.TurnResults[:1]
		other := sampleAnalysis("s2", t0, f64(0.9))
		other.AnalysisRevision = 1
		require.NoError(t, s.SaveAnalyses(ctx, []*evaluation.Analysis{r1, other}))
		require.NoError(t, s.SaveAnalyses(ctx, []*evaluation.Analysis{r1, other}), "retried")
		count := func(q string, args ...any) int {
			var n int
			require.NoError(t, s.db.QueryRowContext(ctx, s.d.rebind(q), args...).Scan(&n))
			return n
		}
		assert.Equal(t, 2, count("SELECT COUNT(*) FROM session_analyses"))
		assert.Equal(t, 1, count("SELECT COUNT(*) FROM turn_results WHERE session_id = ?", "s1"))

		r2 := sampleAnalysis("s1", t0.Add(1e9), f64(0.7))
		r2.AnalysisRevision = 2
		require.NoError(t, s.SaveAnalyses(ctx, []*evaluation.Analysis{r2}))
		require.NoError(t, s.SaveAnalyses(ctx, []*evaluation.Analysis{r1}), "a stale revision")
		got, err := s.GetAnalysis(ctx, "s1")
		require.NoError(t, err)
		assert.Equal(t, 2, got.AnalysisRevision)
		assert.Len(t, got.TurnResults, 2, "the newer revision's whole conversation")
		assert.Equal(t, 2, count("SELECT COUNT(*) FROM turn_results WHERE session_id = ?", "s1"))
		assert.Equal(t, 3, count("SELECT COUNT(*) FROM session_analyses"))

		// All or nothing: a bad analysis fails the whole batch.
		bad := sampleAnalysis("s3", t0, f64(0.1))
		bad.TurnResults = append(bad.TurnResults, bad.TurnResults[0]) // duplicate turn_index
		require.Error(t, s.SaveAnalyses(ctx, []*evaluation.Analysis{sampleAnalysis("s4", t0, nil), bad}))
		_, err = s.GetAnalysis(ctx, "s4")
		assert.ErrorIs(t, err, ErrNotFound)
		// Nor any row the batch inserted before the failing one (on SQLite one row a
		// statement: s4's rows and bad's first two turns were written before its third).
		assert.Equal(t, 0, count("SELECT COUNT(*) FROM turn_results WHERE session_id IN (?, ?)", "s3", "s4"))
		assert.Equal(t, 0, count("SELECT COUNT(*) FROM agent_scores WHERE session_id IN (?, ?)", "s3", "s4"))
		// The failed save left no transaction open: the next saves are taken, once each.
		for range 3 {
			require.NoError(t, s.SaveAnalyses(ctx, []*evaluation.Analysis{sampleAnalysis("s5", t0, nil)}), "the next save")
		}
		assert.Equal(t, 2, count("SELECT COUNT(*) FROM turn_results WHERE session_id = ?", "s5"))
		_, err = s.GetAnalysis(ctx, "s5")
		assert.NoError(t, err)
	})
}

// cancelAfter is a context that ends at its n-th Err call: SaveAnalyses checks its
// context before each statement of a SQLite transaction (txStmts.run).
type cancelAfter struct {
	context.Context
	cancel context.CancelFunc
	n      atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) == 0 {
		c.cancel()
	}
	return c.Context.Err()
}

// TestSaveEndsWithItsContext: a context that ends during a save ends it, whatever
// statement it is at; the save is then stored not at all, and the next one whole. On
// PostgreSQL a context that ends during the COMMIT leaves its outcome to the server:
// the save reports the context's error and is stored either not at all or whole, never
// in part (a retried save writes it once, TestSaveAnalysesRevisions).
func TestSaveEndsWithItsContext(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		rowsOf := func(a, b string) int {
			rows := 0
			for _, table := range []string{"sessions", "session_analyses", "agent_scores", "turn_results", "tool_issues", "recommendations"} {
				var c int
				require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT COUNT(*) FROM "+table+" WHERE session_id IN (?, ?)"), a, b).Scan(&c))
				rows += c
			}
			return rows
		}
		// The rows of the two new sessions of a save stored whole.
		require.NoError(t, s.SaveAnalyses(context.Background(), []*evaluation.Analysis{sampleAnalysis("whole-a", t0, nil), sampleAnalysis("whole-b", t0, nil)}))
		whole := rowsOf("whole-a", "whole-b")
		require.Positive(t, whole)
		var ended, saved, committed int
		for n := range int32(60) {
			id := fmt.Sprintf("ctx-%d", n)
			// A stored session's next revision, after two new sessions.
			stored := sampleAnalysis(id+"-c", t0, nil)
			require.NoError(t, s.SaveAnalyses(context.Background(), []*evaluation.Analysis{stored}))
			next := sampleAnalysis(id+"-c", t0, f64(0.9))
			next.AnalysisRevision = 2
			parent, cancel := context.WithCancel(context.Background())
			ctx := &cancelAfter{Context: parent, cancel: cancel}
			ctx.n.Store(n + 1)
			err := s.SaveAnalyses(ctx, []*evaluation.Analysis{sampleAnalysis(id+"-a", t0, nil), sampleAnalysis(id+"-b", t0, nil), next})
			cancel()
			got, gerr := s.GetAnalysis(context.Background(), id+"-c")
			require.NoError(t, gerr)
			rows := rowsOf(id+"-a", id+"-b")
			switch {
			case err != nil && rows != 0 && b.name == DriverPostgres:
				// Ended during the COMMIT, which the server finished: stored whole.
				committed++
				assert.ErrorIs(t, err, context.Canceled, n)
				assert.Equal(t, whole, rows, "%d: stored whole, never in part", n)
				assert.Equal(t, 2, got.AnalysisRevision, n)
			case err != nil:
				ended++
				assert.ErrorIs(t, err, context.Canceled, n)
				assert.Zero(t, rows, "%d: an ended save stores nothing", n)
				assert.Equal(t, stored.AnalysisRevision, got.AnalysisRevision, "%d: the stored revision stays", n)
				assert.Len(t, got.TurnResults, len(stored.TurnResults), n)
			default:
				saved++
				assert.Equal(t, whole, rows, n)
				assert.Equal(t, 2, got.AnalysisRevision, n)
			}
			require.NoError(t, s.SaveAnalyses(context.Background(), []*evaluation.Analysis{sampleAnalysis(id+"-next", t0, nil)}), "%d: the next save", n)
		}
		t.Logf("%d saves ended, %d stored, %d ended during a COMMIT the server finished", ended, saved, committed)
		assert.Positive(t, ended)
		assert.Positive(t, saved, "some contexts end only after the save")
	})
}

// TestMemoryContinuationBound: the memory store keeps at most maxTurns records,
// dropping the least recently used sessions whole.
func TestMemoryContinuationBound(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryContinuation(4)
	require.NoError(t, saved(m.SaveTurns(ctx, []TurnState{turnState("a", 0, false, "none"), turnState("a", 1, false, "none")})))
	require.NoError(t, saved(m.SaveTurns(ctx, []TurnState{turnState("b", 0, false, "none"), turnState("b", 1, false, "none")})))
	require.NoError(t, saved(m.SaveTurns(ctx, []TurnState{turnState("a", 1, true, "rdm")})), "an update adds no record")
	require.NoError(t, saved(m.SaveTurns(ctx, []TurnState{turnState("c", 0, false, "none")})))
	b, err := m.LoadContinuation(ctx, "b", nil)
	require.NoError(t, err)
	assert.Empty(t, b.Turns, "b was the least recently used")
	a, err := m.LoadContinuation(ctx, "a", nil)
	require.NoError(t, err)
	assert.Len(t, a.Turns, 2)
	c, err := m.LoadContinuation(ctx, "c", nil)
	require.NoError(t, err)
	assert.Len(t, c.Turns, 1)
}

// TestMemoryContinuationEvictedSessionGoesOn: a session whose records were dropped
// keeps its counters, so that when it comes back its turn indexes and revisions go on
// (a second revision 1 would replace the stored analysis of the first); past
// StubsPerRecord × maxTurns dropped sessions, the oldest is forgotten whole.
func TestMemoryContinuationEvictedSessionGoesOn(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryContinuation(2)
	for i := range 2 {
		idx, err := ReserveTurn(ctx, m, "a", fmt.Sprintf("%032x", i+1), "")
		require.NoError(t, err)
		require.Equal(t, i, idx)
	}
	require.NoError(t, saved(m.SaveTurns(ctx, []TurnState{turnState("a", 0, true, "none"), turnState("a", 1, true, "none")})))
	rev, err := m.NextRevision(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, 1, rev)
	require.NoError(t, saved(m.SaveTurns(ctx, []TurnState{turnState("b", 0, false, "none"), turnState("b", 1, false, "none")})))

	a, err := m.LoadContinuation(ctx, "a", nil)
	require.NoError(t, err)
	assert.Empty(t, a.Turns, "a's records were dropped")
	assert.Equal(t, 1, a.Revision, "its revision is kept")
	idx, err := ReserveTurn(ctx, m, "a", fmt.Sprintf("%032x", 3), "")
	require.NoError(t, err)
	assert.Equal(t, 2, idx, "its turn indexes go on")
	rev, err = m.NextRevision(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, 2, rev, "its revisions go on")

	// 2 records, 8 stubs: ten more one-turn sessions push a's counters out (b's first).
	for i := range 10 {
		require.NoError(t, saved(m.SaveTurns(ctx, []TurnState{turnState(fmt.Sprintf("s%d", i), 0, false, "none")})))
	}
	assert.LessOrEqual(t, m.stubs.Len(), StubsPerRecord*2)
	b, err := m.LoadContinuation(ctx, "b", nil)
	require.NoError(t, err)
	assert.Equal(t, Continuation{}, b, "the oldest dropped session is forgotten")
	idx, err = ReserveTurn(ctx, m, "b", fmt.Sprintf("%032x", 9), "")
	require.NoError(t, err)
	assert.Equal(t, 0, idx, "a forgotten session starts again at index 0 (docs/decisions/sessions.md §4.2)")
}

// TestRetentionDeletesContinuationState: retention removes the continuation state last
// written before the cutoff too.
func TestRetentionDeletesContinuationState(t *testing.T) {
	ctx := context.Background()
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		require.NoError(t, saved(s.SaveTurns(ctx, []TurnState{turnState("old", 0, true, "none")})))
		require.NoError(t, s.SaveRevision(ctx, "old", 1))
		_, err := s.DeleteStoredBefore(ctx, time.Now().Add(-time.Hour))
		require.NoError(t, err)
		c, err := s.LoadContinuation(ctx, "old", nil)
		require.NoError(t, err)
		assert.Len(t, c.Turns, 1, "written after the cutoff: kept")
		_, err = s.DeleteStoredBefore(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		c, err = s.LoadContinuation(ctx, "old", nil)
		require.NoError(t, err)
		assert.Equal(t, Continuation{}, c)
	})
}

// TestSharedSessionAllocation: two handles on one database (two collectors sharing the
// store) that hold one session open at the same time and interleave its turns: every
// trace gets one index, distinct and stable on a repeated reservation, each turn is
// stored once, and the revisions they allocate are 1, 2, 3... without a repeat.
func TestSharedSessionAllocation(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, a, b ContinuationStore) {
		handles := []ContinuationStore{a, b}
		const turns = 12
		idx := make([]int, turns)
		var wg sync.WaitGroup
		for h := range handles {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := h; i < turns; i += 2 {
					trace := fmt.Sprintf("%032x", i+1)
					n, err := ReserveTurn(ctx, handles[h], "shared", trace, "")
					assert.NoError(t, err)
					again, err := ReserveTurn(ctx, handles[1-h], "shared", trace, "")
					assert.NoError(t, err)
					assert.Equal(t, n, again, "a trace keeps its index")
					ts := turnState("shared", n, false, "none")
					ts.Record.Result.TraceID = trace
					assert.NoError(t, saved(handles[h].SaveTurns(ctx, []TurnState{ts})))
					idx[i] = n
				}
			}()
		}
		wg.Wait()
		seen := map[int]bool{}
		for _, n := range idx {
			assert.False(t, seen[n], "index %d given twice: %v", n, idx)
			seen[n] = true
		}
		c, err := a.LoadContinuation(ctx, "shared", nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, turns, "every turn stored once")
		for i, r := range c.Turns {
			assert.Equal(t, i, r.Result.TurnIndex)
		}
		// Both handles make every turn final at once, over its provisional row (session
		// "shared") and over none ("fresh"), twice, each time with another verdict: one
		// save per turn is the first final one, and each of the others reports the
		// verdict it replaced, so that counting the first verdicts and then each
		// replacement (+ the new one, - the one replaced: agent_eval_turns_revised_total)
		// ends at the verdicts stored.
		var firsts [2]int
		verdicts := [2][2]string{{evaluation.DetectionNone, evaluation.DetectionCCM}, {evaluation.DetectionHallucination, evaluation.DetectionRDM}}
		var counted [2]map[string]int
		for h := range handles {
			counted[h] = map[string]int{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range turns {
					for _, id := range []string{"shared", "fresh"} {
						for _, v := range verdicts[h] {
							ts := []TurnState{turnState(id, i, true, v)}
							ts[0].Record.NoFollowUp = true
							saved, err := handles[h].SaveTurns(ctx, ts)
							if !assert.NoError(t, err) {
								continue
							}
							switch {
							case saved[0].FirstFinal:
								firsts[h]++
								counted[h][v]++
							case saved[0].Replaced != "":
								counted[h][v]++
								counted[h][saved[0].Replaced]--
							default:
								t.Errorf("turn %d of %s: a final record of the same stage was not written", i, id)
							}
						}
					}
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, 2*turns, firsts[0]+firsts[1], "one first final save per turn: %v", firsts)
		stored := map[string]int{}
		for _, id := range []string{"shared", "fresh"} {
			c, err := a.LoadContinuation(ctx, id, nil)
			require.NoError(t, err)
			require.Len(t, c.Turns, turns)
			for _, r := range c.Turns {
				stored[r.Result.DetectionType]++
			}
		}
		for v := range counted[1] {
			counted[0][v] += counted[1][v]
		}
		maps.DeleteFunc(counted[0], func(_ string, n int) bool { return n == 0 })
		assert.Equal(t, stored, counted[0], "first verdicts corrected by their replacements equal the verdicts stored")
		var revs []int
		var mu sync.Mutex
		for h := range handles {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					r, err := handles[h].NextRevision(ctx, "shared")
					assert.NoError(t, err)
					mu.Lock()
					revs = append(revs, r)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		slices.Sort(revs)
		assert.Equal(t, []int{1, 2, 3, 4, 5, 6}, revs)
		require.NoError(t, a.SaveRevision(ctx, "shared", 2), "a late lower revision")
		c, err = b.LoadContinuation(ctx, "shared", nil)
		require.NoError(t, err)
		assert.Equal(t, 6, c.Revision)
		n, err := ReserveTurn(ctx, b, "legacy", "t", "")
		require.NoError(t, err)
		assert.Equal(t, 0, n)
	}
	t.Run("memory", func(t *testing.T) {
		m := NewMemoryContinuation(100)
		check(t, m, m)
	})
	runAll(t, func(t *testing.T, b backend) {
		s, driver, dsn := open(t, b)
		other, err := OpenContinuation(ctx, driver, dsn)
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, other.Close()) })
		check(t, s, other)
	})
}

// saved is SaveTurns' error (its per-record results ignored).
func saved(_ []SavedTurn, err error) error { return err }

// firsts is SaveTurns' FirstFinal of each record.
func firsts(saved []SavedTurn, err error) ([]bool, error) {
	var first []bool
	for _, s := range saved {
		first = append(first, s.FirstFinal)
	}
	return first, err
}

// TestClaimFinal: a provisional record claimed final (its verdict counted while its final
// record could not be saved) keeps its document, and a final record saved after it is not
// the turn's first; a turn not claimed, or claimed without a stored record, still gets
// its first final verdict once, and a claim leaves a final record as it is. The next final
// save reports the claim's detection type, when it names one, as the verdict it replaced.
func TestClaimFinal(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, cs ContinuationStore) {
		prov := []TurnState{turnState("s", 0, false, evaluation.DetectionHallucination), turnState("s", 1, false, "none")}
		require.NoError(t, saved(cs.SaveTurns(ctx, prov)))
		final2 := turnState("s", 2, true, "none")
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{final2})))
		trace := func(i int) string { return fmt.Sprintf("%032x", i+1) }
		claim := func(session string, i int, counted string) Claim {
			return Claim{TurnKey: TurnKey{session, trace(i), ""}, DetectionType: counted}
		}
		require.NoError(t, cs.ClaimFinal(ctx, []Claim{claim("s", 0, ""), claim("s", 2, evaluation.DetectionCCM), claim("s", 7, "none"), claim("unknown", 0, "")}))
		require.NoError(t, cs.ClaimFinal(ctx, nil))

		c, err := cs.LoadContinuation(ctx, "s", nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, 3)
		assert.False(t, c.Turns[0].Result.Final, "the claimed record's document is unchanged")
		assert.True(t, c.Turns[2].Result.Final)

		first, err := cs.SaveTurns(ctx, []TurnState{turnState("s", 0, true, "rdm"), turnState("s", 1, true, "none"), turnState("s", 7, true, "none")})
		require.NoError(t, err)
		assert.Equal(t, []SavedTurn{{Replaced: evaluation.DetectionHallucination}, {FirstFinal: true}, {FirstFinal: true}}, first,
			"claimed: not first, and it replaced the claimed verdict (the provisional one, which a verdict without follow-up keeps); "+
				"not claimed, or claimed without a record: first")
		c, err = cs.LoadContinuation(ctx, "s", nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, 4)
		assert.Equal(t, evaluation.DetectionRDM, c.Turns[0].Result.DetectionType, "the final record stored over the claimed one")

		// The claim left turn 2's final record (with follow-up) as it was, and keeps the
		// verdict counted (CCM: a revision emitted while saves failed, then dropped) as the
		// one the next final save replaces, once.
		first, err = cs.SaveTurns(ctx, []TurnState{turnState("s", 2, true, "none"), turnState("s", 2, true, "none")})
		require.NoError(t, err)
		assert.Equal(t, []SavedTurn{{Replaced: evaluation.DetectionCCM}, {Replaced: "none"}}, first, "the counted verdict, then the record's")
		// One without follow-up does not replace it.
		noFollowUp := turnState("s", 2, true, evaluation.DetectionRDM)
		noFollowUp.Record.NoFollowUp = true
		first, err = cs.SaveTurns(ctx, []TurnState{noFollowUp})
		require.NoError(t, err)
		assert.Equal(t, []SavedTurn{{}}, first, "not written: nothing replaced")
		c, err = cs.LoadContinuation(ctx, "s", nil)
		require.NoError(t, err)
		assert.Equal(t, evaluation.DetectionNone, c.Turns[2].Result.DetectionType, "turn 2's final record kept")
	}
	t.Run("memory", func(t *testing.T) { check(t, NewMemoryContinuation(10)) })
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		check(t, s)
	})
}

// TestContinuationKnowsStoredTurns: a turn of a stored analysis without a turn record
// (its record never reached the turns table) comes back from LoadContinuation, rebuilt
// from its stored result at its stored index, and ReserveTurns neither gives its index to
// another trace nor moves it; a record on the same index or of the same trace stands
// over the stored result (docs/decisions/sessions.md §4.7).
func TestContinuationKnowsStoredTurns(t *testing.T) {
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		ctx := context.Background()
		const id = "stored-only-1"
		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 1, 2, 3, 4)))
		// A turn's record and its stored result name the same trace and root span
		// (partAnalysis).
		trace := func(seed int) string { return fmt.Sprintf("%032x", seed) }
		root := func(seed int) string { return fmt.Sprintf("%016x", seed) }
		record := func(idx, seed int) TurnState {
			ts := turnState(id, idx, true, "rdm")
			ts.Record.Result.TraceID, ts.Record.Result.RootSpanID = trace(seed), root(seed)
			return ts
		}
		// Turn 0's record; turn 2's index holds another trace's record (seed 9); turn 3's
		// trace has its record on index 5: neither result of those two comes back.
		require.NoError(t, saved(s.SaveTurns(ctx, []TurnState{record(0, 1), record(2, 9), record(5, 4)})))

		c, err := s.LoadContinuation(ctx, id, nil)
		require.NoError(t, err)
		var got []string
		for _, r := range c.Turns {
			got = append(got, fmt.Sprintf("%d:%s", r.Result.TurnIndex, r.Result.TraceID[30:]))
		}
		assert.Equal(t, []string{"0:01", "1:02", "2:09", "5:04"}, got)
		assert.Equal(t, 1, c.Revision, "the stored analysis' revision")
		rev, err := s.NextRevision(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, 2, rev, "after the stored analysis' revision")
		rebuilt := c.Turns[1]
		assert.Equal(t, "rdm", c.Turns[0].Result.DetectionType, "the record, not the stored result")
		assert.Equal(t, evaluation.DetectionNone, rebuilt.Result.DetectionType, "the stored result")
		assert.Equal(t, id, rebuilt.Result.SessionID)
		assert.Equal(t, [2]string{trace(2), root(2)}, [2]string{rebuilt.Result.TraceID, rebuilt.Result.RootSpanID})
		assert.True(t, rebuilt.Result.Final)
		assert.True(t, rebuilt.NoFollowUp, "its follow-up, when it comes, gives its verdict again")
		assert.Equal(t, 0, rebuilt.FinalResponder, "the last interaction")
		for _, tc := range rebuilt.Result.Interactions[0].ToolCalls {
			for _, is := range tc.Issues {
				assert.Equal(t, 1, is.TurnIndex)
			}
		}

		n, err := ReserveTurn(ctx, s, id, trace(2), root(2))
		require.NoError(t, err)
		assert.Equal(t, 1, n, "a stored turn's trace keeps its stored index")
		n, err = ReserveTurn(ctx, s, id, trace(3), root(3))
		require.NoError(t, err)
		assert.Equal(t, 6, n, "its stored index holds another trace's record: after the highest")
		n, err = ReserveTurn(ctx, s, id, trace(7), root(7))
		require.NoError(t, err)
		assert.Equal(t, 7, n, "a new trace: after every reservation, record and stored turn")
		n, err = ReserveTurn(ctx, s, id, trace(2), root(2))
		require.NoError(t, err)
		assert.Equal(t, 1, n, "a reservation is kept")
		n, err = ReserveTurn(ctx, s, id, trace(2), root(8))
		require.NoError(t, err)
		assert.Equal(t, 8, n, "another turn of a stored turn's trace: not the stored turn's index")

		require.NoError(t, s.SaveAnalysis(ctx, partAnalysis("stored-only-2", 1, 0, 1, 2)))
		n, err = ReserveTurn(ctx, s, "stored-only-2", trace(5), root(5))
		require.NoError(t, err)
		assert.Equal(t, 2, n, "the next turn after the stored turns without records")
		c, err = s.LoadContinuation(ctx, "stored-only-2", nil)
		require.NoError(t, err)
		assert.Len(t, c.Turns, 2)
	})
}

// TestLoadContinuationLeavesHeld: a stored record the caller holds (same trace and
// index, at the same or a further verdict stage) is left out; one further on than the
// caller's, or at another index, comes back.
func TestLoadContinuationLeavesHeld(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, cs ContinuationStore) {
		noFollowUp := turnState("s", 1, true, "none")
		noFollowUp.Record.NoFollowUp = true
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{turnState("s", 0, false, "none"), noFollowUp, turnState("s", 2, true, "rdm")})))
		trace := func(i int) string { return fmt.Sprintf("%032x", i+1) }
		held := map[string][2]int{ // trace → index, stage held
			trace(0): {0, 2}, // further on than the stored provisional record
			trace(1): {1, 0}, // behind the stored final record
			trace(2): {5, 2}, // at another index
		}
		c, err := cs.LoadContinuation(ctx, "s", func(tr, _ string, idx, stage int) bool {
			h, ok := held[tr]
			return ok && h[0] == idx && h[1] >= stage
		})
		require.NoError(t, err)
		var got []int
		for _, r := range c.Turns {
			got = append(got, r.Result.TurnIndex)
		}
		assert.Equal(t, []int{1, 2}, got)
		c, err = cs.LoadContinuation(ctx, "s", nil)
		require.NoError(t, err)
		assert.Len(t, c.Turns, 3)
		require.NoError(t, cs.SaveRevision(ctx, "s", 4))
		c, err = cs.LoadContinuation(ctx, "s", func(string, string, int, int) bool { return true })
		require.NoError(t, err)
		assert.Empty(t, c.Turns, "every record held")
		assert.Equal(t, 4, c.Revision)
	}
	t.Run("memory", func(t *testing.T) { check(t, NewMemoryContinuation(10)) })
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		check(t, s)
	})
}

// BenchmarkContinuationTurn is what the continuation store costs a new turn on SQLite:
// loading its session (stored with three turns, and a session never seen) and reserving
// the turn's index, among 500 stored sessions.
func BenchmarkContinuationTurn(b *testing.B) {
	ctx := context.Background()
	s, err := OpenContinuation(ctx, DriverSQLite, filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	defer s.Close()
	results := s.(Store)
	const sessions = 500
	for i := range sessions {
		id := fmt.Sprintf("stored-%d", i)
		require.NoError(b, results.SaveAnalysis(ctx, partAnalysis(id, 1, 0, 3*i+1, 3*i+2, 3*i+3)))
		var ts []TurnState
		for k := range 3 {
			r := turnState(id, k, true, "none")
			r.Record.Result.TraceID = fmt.Sprintf("%032x", 3*i+k+1)
			ts = append(ts, r)
		}
		require.NoError(b, saved(s.SaveTurns(ctx, ts)))
	}
	b.Run("load_stored", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			c, err := s.LoadContinuation(ctx, fmt.Sprintf("stored-%d", i%sessions), nil)
			if err != nil || len(c.Turns) != 3 {
				b.Fatal(err, len(c.Turns))
			}
		}
	})
	b.Run("load_stored_held", func(b *testing.B) {
		held := func(string, string, int, int) bool { return true } // a session end's reload, one collector
		for i := 0; b.Loop(); i++ {
			c, err := s.LoadContinuation(ctx, fmt.Sprintf("stored-%d", i%sessions), held)
			if err != nil || len(c.Turns) != 0 {
				b.Fatal(err, len(c.Turns))
			}
		}
	})
	b.Run("load_new", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.LoadContinuation(ctx, fmt.Sprintf("new-%d", i), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reserve", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := ReserveTurn(ctx, s, fmt.Sprintf("stored-%d", i%sessions), fmt.Sprintf("%032x", 1<<40+i), ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestReserveTurnsInOrder: one call allocates its turns in order, each session's from
// its own highest index, a repeated trace keeping its index.
func TestReserveTurnsInOrder(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, cs ContinuationStore) {
		_, err := ReserveTurn(ctx, cs, "s", "z", "")
		require.NoError(t, err)
		idx, err := cs.ReserveTurns(ctx, []TurnKey{{"s", "a", ""}, {"s", "b", ""}, {"t", "x", ""}, {"s", "a", ""}, {"t", "y", ""}, {"s", "c", ""}})
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 0, 1, 1, 3}, idx)
		idx, err = cs.ReserveTurns(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, idx)
	}
	t.Run("memory", func(t *testing.T) { check(t, NewMemoryContinuation(10)) })
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		check(t, s)
	})
}

// TestSQLiteWritersShareALock: two stores opened on one SQLite file (the exporter's and
// the processor's continuation store) share the file (sqliteFile) and take its one
// in-process write lock; a writer waiting for it gives up when its context ends, and goes
// in once the lock is free.
func TestSQLiteWritersShareALock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, err := Open(ctx, DriverSQLite, filepath.Join(dir, "shared.db"))
	require.NoError(t, err)
	defer a.Close()
	t.Chdir(dir)
	b, err := OpenContinuation(ctx, DriverSQLite, "shared.db") // the same file, relative
	require.NoError(t, err)
	defer b.Close()
	file := a.(*sqlStore).file
	require.NotNil(t, file)
	require.Same(t, file, b.(*sqlStore).file)
	writer := file.lock

	require.NoError(t, writer.lock(ctx))
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = b.NextRevision(short, "s")
	require.ErrorIs(t, err, context.DeadlineExceeded, "waits for the lock, not past its context")
	_, err = b.ReserveTurns(short, []TurnKey{{"s", "t", ""}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	done := make(chan error)
	go func() {
		_, err := b.ReserveTurns(ctx, []TurnKey{{"s", "t", ""}})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("wrote while the lock was held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	writer.unlock()
	require.NoError(t, <-done)
	rev, err := b.NextRevision(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, 1, rev, "the revision that timed out was not allocated")

	p, err := Open(ctx, DriverSQLite, filepath.Join(t.TempDir(), "other.db"))
	require.NoError(t, err)
	defer p.Close()
	assert.NotSame(t, file, p.(*sqlStore).file, "another file, another lock")
}

// TestSQLiteWritesOnOneConnection: the stores of one SQLite file write on one connection,
// whose page cache no other writer of the process invalidates (sqliteFile); a broken one
// is replaced and the write run again; the file is closed with its last store, and
// opened anew after.
// TestSQLiteWriteAfterAnEndedTransaction: a write transaction whose context ends before
// its Commit is rolled back by database/sql in the background, after Commit returned the
// context's error; the next write of the file, at once, must not find that transaction
// still open on the write connection ("cannot start a transaction within a transaction",
// seen in CI under TestSaveEndsWithItsContext).
func TestSQLiteWriteAfterAnEndedTransaction(t *testing.T) {
	st, err := Open(context.Background(), DriverSQLite, filepath.Join(t.TempDir(), "ended.db"))
	require.NoError(t, err)
	defer st.Close()
	s := st.(*sqlStore)
	for i := range 300 {
		ctx, cancel := context.WithCancel(context.Background())
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO session_revisions (session_id, revision, updated_at) VALUES (?, 1, '')", fmt.Sprintf("ended-%d", i))
			cancel() // ends before the Commit: database/sql rolls back in the background
			return err
		})
		require.ErrorIs(t, err, context.Canceled, i)
		_, err = s.NextRevision(context.Background(), fmt.Sprintf("next-%d", i))
		require.NoError(t, err, "%d: the write after an ended transaction", i)
	}
	var n int
	require.NoError(t, s.db.QueryRowContext(context.Background(), "SELECT count(*) FROM session_revisions WHERE session_id LIKE 'ended-%'").Scan(&n))
	assert.Zero(t, n, "every ended transaction rolled back")
}

func TestSQLiteWritesOnOneConnection(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	a, err := Open(ctx, DriverSQLite, path)
	require.NoError(t, err)
	b, err := OpenContinuation(ctx, DriverSQLite, path)
	require.NoError(t, err)
	file := a.(*sqlStore).file
	link := filepath.Join(t.TempDir(), "link.db")
	require.NoError(t, os.Symlink(path, link))
	l, err := Open(ctx, DriverSQLite, link)
	require.NoError(t, err)
	assert.Same(t, file, l.(*sqlStore).file, "a symbolic link to the file shares it")
	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "a second Close does nothing")
	require.NoError(t, a.SaveAnalysis(ctx, sampleAnalysis("one", t0, f64(0.5))))
	conn := file.conn
	require.NotNil(t, conn)
	_, err = b.ReserveTurns(ctx, []TurnKey{{"one", "t", ""}})
	require.NoError(t, err)
	_, err = b.NextRevision(ctx, "one")
	require.NoError(t, err)
	assert.Same(t, conn, file.conn, "the continuation store's writes ran on the exporter's write connection")
	var id int64
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT 1").Scan(&id))

	require.NoError(t, conn.Close()) // as database/sql does after the driver's ErrBadConn
	rev, err := b.NextRevision(ctx, "one")
	require.NoError(t, err, "the write ran again on a new connection")
	assert.Equal(t, 2, rev, "once")
	assert.NotSame(t, conn, file.conn)

	require.NoError(t, a.Close())
	got, err := b.(Store).GetAnalysis(ctx, "one")
	require.NoError(t, err, "the file stays open for its other store")
	assert.Equal(t, "one", got.SessionID)
	require.NoError(t, b.Close())
	sqliteFiles.mu.Lock()
	_, open := sqliteFiles.m[file.path]
	sqliteFiles.mu.Unlock()
	assert.False(t, open, "closed with its last store")
	c, err := Open(ctx, DriverSQLite, path)
	require.NoError(t, err)
	defer c.Close()
	assert.NotSame(t, file, c.(*sqlStore).file)
	_, err = c.GetAnalysis(ctx, "one")
	require.NoError(t, err)
}

// TestTurnsOfOneTrace: two turns of a session run inside one trace (the same trace id,
// their own root spans: a conversation run inside one trace, docs/decisions/sessions.md
// §4.2) get distinct indexes, kept on a retried reservation, are stored as two records,
// each saved again in place (a retry, its final verdict), and claimed apart. Before,
// both took the first turn's index and the second record replaced the first.
func TestTurnsOfOneTrace(t *testing.T) {
	ctx := context.Background()
	const trace = "0af7651916cd43dd8448eb211c80319c"
	check := func(t *testing.T, cs ContinuationStore) {
		keys := []TurnKey{{"one-trace", trace, "b7ad6b7169203331"}, {"one-trace", trace, "00f067aa0ba902b7"}}
		idx, err := cs.ReserveTurns(ctx, keys)
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1}, idx, "one index a turn")
		idx, err = cs.ReserveTurns(ctx, []TurnKey{keys[1], keys[0]})
		require.NoError(t, err)
		assert.Equal(t, []int{1, 0}, idx, "a retried reservation keeps each turn's index")
		n, err := ReserveTurn(ctx, cs, "one-trace", trace, "")
		require.NoError(t, err)
		assert.Equal(t, 2, n, "a turn of the trace without a root span is a third turn")

		record := func(i int, final bool) TurnState {
			ts := turnState("one-trace", i, final, "none")
			ts.Record.Result.TraceID, ts.Record.Result.RootSpanID = trace, keys[i].RootSpanID
			ts.Record.Result.UserMessage = fmt.Sprintf("question %d", i)
			return ts
		}
		first, err := firsts(cs.SaveTurns(ctx, []TurnState{record(0, false), record(1, false)}))
		require.NoError(t, err)
		assert.Equal(t, []bool{false, false}, first)
		require.NoError(t, saved(cs.SaveTurns(ctx, []TurnState{record(0, false), record(1, false)})), "a retried save")
		require.NoError(t, cs.ClaimFinal(ctx, []Claim{{TurnKey: keys[1]}}), "turn 1's final verdict counted without its record")
		first, err = firsts(cs.SaveTurns(ctx, []TurnState{record(0, true), record(1, true)}))
		require.NoError(t, err)
		assert.Equal(t, []bool{true, false}, first, "turn 0's first final verdict; turn 1's was claimed")

		c, err := cs.LoadContinuation(ctx, "one-trace", nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, 2, "two records, not one")
		for i, r := range c.Turns {
			assert.Equal(t, i, r.Result.TurnIndex)
			assert.Equal(t, keys[i].RootSpanID, r.Result.RootSpanID)
			assert.Equal(t, fmt.Sprintf("question %d", i), r.Result.UserMessage)
			assert.True(t, r.Result.Final)
		}
		c, err = cs.LoadContinuation(ctx, "one-trace", func(tr, root string, idx, stage int) bool {
			return tr == trace && root == keys[0].RootSpanID && idx == 0 && stage == 2
		})
		require.NoError(t, err)
		require.Len(t, c.Turns, 1, "the held turn of the trace left out, the other not")
		assert.Equal(t, keys[1].RootSpanID, c.Turns[0].Result.RootSpanID)
	}
	t.Run("memory", func(t *testing.T) { check(t, NewMemoryContinuation(10)) })
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		check(t, s)
	})
}

// TestTurnIdentityMigration: a turn record and turn indexes stored before migration
// 00013 (keyed by session and trace) keep their index and record, the record's root
// span becomes the row's, on both tables, and the session goes on across the upgrade:
// the turn's reservation returns its index, its final verdict updates its row (one
// record, the first final verdict), and the next turn of the trace gets the next index.
func TestTurnIdentityMigration(t *testing.T) {
	const (
		id    = "upgraded"
		trace = "0af7651916cd43dd8448eb211c80319c"
		root  = "b7ad6b7169203331"
		other = "4bf92f3577b34da6a3ce929d0e0e4736" // a trace reserved, its record not saved
	)
	runAll(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		db, d, driver, dsn := atVersion(t, b, 12)
		// As the code before 00013 saved them: reserveTurnSQL and upsertTurnSQL without
		// the root span.
		prov := turnState(id, 0, false, "none")
		prov.Record.Result.TraceID, prov.Record.Result.RootSpanID = trace, root
		doc, err := json.Marshal(&prov.Record)
		require.NoError(t, err)
		now := d.timeArg(time.Now())
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"INSERT INTO turn_indexes (session_id, trace_id, turn_index, updated_at) VALUES (?, ?, ?, ?)", []any{id, trace, 0, now}},
			{"INSERT INTO turn_indexes (session_id, trace_id, turn_index, updated_at) VALUES (?, ?, ?, ?)", []any{id, other, 1, now}},
			{"INSERT INTO turns (session_id, trace_id, turn_index, final, verdict_stage, record, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
				[]any{id, trace, 0, false, 0, string(doc), now}},
		} {
			_, err := db.ExecContext(ctx, d.rebind(q.sql), q.args...)
			require.NoError(t, err)
		}
		require.NoError(t, db.Close())

		s := reopen(t, driver, dsn)
		assert.GreaterOrEqual(t, schemaVersion(t, s), int64(13), "migrated past 00013_turn_root_span")
		var gotRoot string
		require.NoError(t, s.db.QueryRow(s.d.rebind("SELECT root_span_id FROM turns WHERE session_id = ? AND trace_id = ?"), id, trace).Scan(&gotRoot))
		assert.Equal(t, root, gotRoot, "turns: backfilled from the record")
		got := map[string]string{}
		rows, err := s.db.Query(s.d.rebind("SELECT trace_id, root_span_id FROM turn_indexes WHERE session_id = ?"), id)
		require.NoError(t, err)
		for rows.Next() {
			var tr, r string
			require.NoError(t, rows.Scan(&tr, &r))
			got[tr] = r
		}
		require.NoError(t, closeRows(rows))
		assert.Equal(t, map[string]string{trace: root, other: ""}, got, "turn_indexes: from the turn's record, '' without one")

		c, err := s.LoadContinuation(ctx, id, nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, 1)
		assert.Equal(t, prov.Record, c.Turns[0], "the record unchanged")

		n, err := ReserveTurn(ctx, s, id, trace, root)
		require.NoError(t, err)
		assert.Equal(t, 0, n, "the turn keeps its index")
		n, err = ReserveTurn(ctx, s, id, other, "")
		require.NoError(t, err)
		assert.Equal(t, 1, n, "the reserved trace without a record keeps its index")
		final := prov
		final.Record.Result.Final, final.Record.NoFollowUp = true, true
		first, err := firsts(s.SaveTurns(ctx, []TurnState{final}))
		require.NoError(t, err)
		assert.Equal(t, []bool{true}, first, "the final verdict over the stored provisional row")
		c, err = s.LoadContinuation(ctx, id, nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, 1, "the old row updated, not a second one")
		assert.True(t, c.Turns[0].Result.Final)
		n, err = ReserveTurn(ctx, s, id, trace, "00f067aa0ba902b7")
		require.NoError(t, err)
		assert.Equal(t, 2, n, "another turn of the trace: the next index")
	})
}

// TestSaveTurnsNULInRecord: a record whose texts hold a NUL (an application's bad input,
// kept in the record as JSON's \u0000) is saved, replaced by a later final verdict and
// loaded back whole. PostgreSQL's JSON operators refuse to read any document holding
// \u0000, so reading the stored verdict's detection type through them failed the second
// final save of such a turn (and with it the whole batch of records).
func TestSaveTurnsNULInRecord(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, cs ContinuationStore) {
		withNUL := func(ts TurnState) TurnState {
			ts.Record.Result.UserMessage = "refund order 4\x00711"
			ts.Record.Result.FinalResponse = "done\x00"
			return ts
		}
		noFollowUp := withNUL(turnState("s", 0, true, evaluation.DetectionHallucination))
		noFollowUp.Record.NoFollowUp = true
		got, err := cs.SaveTurns(ctx, []TurnState{withNUL(turnState("s", 0, false, "none")), noFollowUp})
		require.NoError(t, err)
		assert.Equal(t, []SavedTurn{{}, {FirstFinal: true}}, got)
		got, err = cs.SaveTurns(ctx, []TurnState{withNUL(turnState("s", 0, true, evaluation.DetectionRDM))})
		require.NoError(t, err, "a final verdict with follow-up over the stored one")
		assert.Equal(t, []SavedTurn{{Replaced: evaluation.DetectionHallucination}}, got)
		c, err := cs.LoadContinuation(ctx, "s", nil)
		require.NoError(t, err)
		require.Len(t, c.Turns, 1)
		assert.Equal(t, evaluation.DetectionRDM, c.Turns[0].Result.DetectionType)
		assert.Equal(t, "refund order 4\x00711", c.Turns[0].Result.UserMessage, "the text as the application sent it")
	}
	t.Run("memory", func(t *testing.T) { check(t, NewMemoryContinuation(10)) })
	runAll(t, func(t *testing.T, b backend) {
		s, _, _ := open(t, b)
		check(t, s)
	})
}
