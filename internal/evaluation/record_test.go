// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

// TestFollowUpEqualsFinalEvaluation pins that the verdict made final by FollowUp (or
// FinishLast) from a turn evaluated once equals the verdict of evaluating the turn
// again with its follow-up (EvaluateTurn with final=true), on every golden session.
func TestFollowUpEqualsFinalEvaluation(t *testing.T) {
	e := newEval(t)
	eachClosedTurn(t, e, func(t *testing.T, s *session.AgentSession, ti int, rec TurnRecord) {
		assert.False(t, rec.Result.Final)
		var got TurnRecord
		if ti+1 < len(s.Turns) {
			got = e.FollowUp(rec, s.Turns[ti+1].UserMessage)
		} else {
			got = e.FinishLast(rec)
		}
		want := e.EvaluateTurn(s, ti, true)
		wantJS, err := json.Marshal(want)
		require.NoError(t, err)
		gotJS, err := json.Marshal(got.Result)
		require.NoError(t, err)
		assert.JSONEq(t, string(wantJS), string(gotJS), "turn %d", ti)
		assert.Equal(t, VerdictStage(&got), got.Result.VerdictStage(), "turn %d: the result's stage is its record's", ti)
		assert.Equal(t, VerdictStage(&rec), rec.Result.VerdictStage(), "turn %d: provisional", ti)
		// FollowUp does not modify the provisional record.
		assert.False(t, rec.Result.Final)
	})
}

// TestFollowUpGivenAgain pins that a verdict given with the user message of a turn that
// turned out not to be the next one (a turn closed late on another collector took its
// place, docs/decisions/sessions.md §4.5), given again with the right one, equals the
// verdict given with the right one at once, also when the wrong follow-up was a
// correction (RDM replaced the provisional verdict and zeroed the final responder's
// response quality), and after the record went through its JSON.
// eachClosedTurn calls fn, in a subtest per golden session, with each turn's record as
// the processor evaluates it when the turn closes (EvaluateClosedTurn after the previous
// turn's record).
func eachClosedTurn(t *testing.T, e *Evaluator, fn func(t *testing.T, s *session.AgentSession, ti int, rec TurnRecord)) {
	for name, build := range goldenSessions {
		t.Run(name, func(t *testing.T) {
			s := build()
			var prev *TurnRecord
			for ti := range s.Turns {
				rec := e.EvaluateClosedTurn(s.ID, s.Agents, &s.Turns[ti], ti, prev)
				prev = &rec
				fn(t, s, ti, rec)
			}
		})
	}
}

func TestFollowUpGivenAgain(t *testing.T) {
	e := newEval(t)
	replaced := 0
	eachClosedTurn(t, e, func(t *testing.T, s *session.AgentSession, ti int, rec TurnRecord) {
		if ti+1 == len(s.Turns) {
			return
		}
		right := &TurnRecord{Result: TurnResult{TraceID: "right", UserMessage: s.Turns[ti+1].UserMessage}}
		want := e.FollowUpBy(rec, right)
		wrong := e.FollowUpBy(rec, &TurnRecord{Result: TurnResult{TraceID: "wrong", UserMessage: "No, that's wrong, I meant the other one."}})
		assert.Equal(t, "wrong", wrong.FollowedBy.TraceID)
		if wrong.Replaced != nil {
			replaced++
		}
		js, err := json.Marshal(wrong)
		require.NoError(t, err)
		var decoded TurnRecord
		require.NoError(t, json.Unmarshal(js, &decoded))
		for _, w := range []TurnRecord{wrong, decoded} {
			got := e.FollowUpBy(w, right)
			assert.True(t, got.Result.Revised, "turn %d: a verdict given again", ti)
			assert.True(t, got.FollowedBy.Of(right), "turn %d: followed by the right turn", ti)
			assert.Equal(t, wrong.Result.DetectionType, got.Result.ReplacedDetectionType, "turn %d: it replaces the verdict given with the wrong turn", ti)
			got.Result.Revised, got.Result.ReplacedDetectionType = false, ""
			wantJS, err := json.Marshal(want)
			require.NoError(t, err)
			gotJS, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, string(wantJS), string(gotJS), "turn %d", ti)
		}
	})
	assert.Positive(t, replaced, "some wrong follow-up replaced a verdict")
}

// TestRecordsSurviveJSON pins that a record decoded from its JSON (the continuation
// store's form) finalizes and aggregates to the same analysis.
func TestRecordsSurviveJSON(t *testing.T) {
	e := newEval(t)
	for name, build := range goldenSessions {
		t.Run(name, func(t *testing.T) {
			s := build()
			want := e.AnalyzeSession(s)
			recs := make([]TurnRecord, len(s.Turns))
			for ti := range s.Turns {
				var prev *TurnRecord
				if ti > 0 {
					prev = &recs[ti-1]
				}
				rec := e.EvaluateClosedTurn(s.ID, s.Agents, &s.Turns[ti], ti, prev)
				js, err := json.Marshal(rec)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(js, &recs[ti]))
			}
			for ti := range recs {
				if ti+1 < len(recs) {
					recs[ti] = e.FollowUp(recs[ti], recs[ti+1].Result.UserMessage)
				} else {
					recs[ti] = e.FinishLast(recs[ti])
				}
			}
			meta := SessionMeta{ID: s.ID, Service: s.Service, Partial: s.Partial, EndReason: string(s.EndReason),
				Outcome: s.Outcome, StartedAt: s.StartedAt, EndedAt: s.EndedAt, Usage: &s.Usage, TotalLatencyMs: s.TotalLatencyMs}
			for _, a := range s.Agents {
				meta.Agents = append(meta.Agents, a.ID)
			}
			got := e.Aggregate(meta, recs)
			wantJS, _ := json.Marshal(want)
			gotJS, _ := json.Marshal(got)
			assert.JSONEq(t, string(wantJS), string(gotJS))
		})
	}
}

// TestClosedTurnRecordsOwnTheirMemory checks that EvaluateClosedTurn's pooled scratch
// (scratch.go) is not part of any record: with the pool, each session evaluated after
// the others (so with a scratch they left behind and cleared), every record equals the
// one made with a new scratch that is never cleared, and still does once the scratch
// was reused by later turns.
func TestClosedTurnRecordsOwnTheirMemory(t *testing.T) {
	e := newEval(t)
	ss := append(e2eSessions(t), benchSession(10), benchSession(3))
	evaluate := func(s *session.AgentSession) []TurnRecord {
		recs := make([]TurnRecord, 0, len(s.Turns))
		for i := range s.Turns {
			var prev *TurnRecord
			if i > 0 {
				prev = &recs[i-1]
			}
			recs = append(recs, e.EvaluateClosedTurn(s.ID, s.Agents, &s.Turns[i], i, prev))
		}
		return recs
	}
	encode := func(r *TurnRecord) string {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		return string(b)
	}
	poolScratch = false
	t.Cleanup(func() { poolScratch = true })
	var want []string
	for _, s := range ss {
		rs := evaluate(s)
		for i := range rs {
			want = append(want, encode(&rs[i]))
		}
	}
	poolScratch = true
	var recs [][]TurnRecord
	for _, s := range ss {
		recs = append(recs, evaluate(s))
	}
	k := 0
	for i := range recs {
		for j := range recs[i] {
			require.Equal(t, want[k], encode(&recs[i][j]), "session %d turn %d", i, j)
			k++
		}
	}
	assert.Greater(t, k, 20)
}

// TestRecordFromResult: on every golden session, a record rebuilt from a turn's stored
// result (FinishLast's verdict, what an analysis made before the next turn holds) gives,
// with the next turn's user message, the verdict the turn's own record gives (FollowUp);
// its summary holds what the result shows of the turn's.
func TestRecordFromResult(t *testing.T) {
	e := newEval(t)
	eachClosedTurn(t, e, func(t *testing.T, s *session.AgentSession, ti int, rec TurnRecord) {
		stored := e.FinishLast(rec).Result
		rebuilt := RecordFromResult(stored)
		assert.Equal(t, stored, rebuilt.Result)
		assert.True(t, rebuilt.NoFollowUp)
		assert.Equal(t, len(stored.Interactions)-1, rebuilt.FinalResponder)
		assert.Empty(t, rebuilt.Grounding)
		assert.Empty(t, rebuilt.Conversation)

		sum, want := rebuilt.Summary, rec.Summary
		assert.True(t, want.StartedAt.Equal(sum.StartedAt), "turn %d start", ti)
		assert.Equal(t, want.Handoffs, sum.Handoffs, "turn %d handoffs", ti)
		var errs, wantErrs []int
		for _, ae := range sum.AgentErrors {
			errs = append(errs, ae.Interaction)
		}
		for _, ae := range want.AgentErrors {
			wantErrs = append(wantErrs, ae.Interaction)
		}
		assert.Equal(t, wantErrs, errs, "turn %d agent errors", ti)
		assert.Subset(t, want.Participants, sum.Participants, "turn %d participants", ti)
		if sum.HasContent {
			assert.True(t, want.HasContent, "turn %d content", ti)
		}

		assert.Equal(t, 1, rebuilt.Result.VerdictStage())

		if ti+1 < len(s.Turns) {
			next := s.Turns[ti+1].UserMessage
			followed := RecordFromResult(e.FollowUp(rec, next).Result)
			assert.Equal(t, 1, VerdictStage(&followed), "turn %d: a stored result is rebuilt without follow-up", ti)
			assert.Equal(t, 1, followed.Result.VerdictStage(), "turn %d: and its result says so", ti)
			got, want := e.FollowUp(rebuilt, next).Result, e.FollowUp(rec, next).Result
			assert.Equal(t, want.IsBad, got.IsBad, "turn %d", ti)
			assert.Equal(t, want.DetectionType, got.DetectionType, "turn %d", ti)
			assert.Equal(t, want.Confidence, got.Confidence, "turn %d", ti)
			assert.Equal(t, want.Reason, got.Reason, "turn %d", ti)
			assert.True(t, got.Final)
			assert.True(t, got.Revised, "turn %d: a verdict given again", ti)
			assert.Equal(t, rebuilt.Result.DetectionType, got.ReplacedDetectionType, "turn %d: it replaces the verdict given before", ti)
		}
	})
}
