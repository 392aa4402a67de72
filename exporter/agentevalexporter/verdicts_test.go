// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// judge adds an `evaluate judge` span with the processor's verdict arrays (one verdict
// scored 0.7 for planner's response_quality, one judge error for task_completion) for
// revision rev, signed unless forged.
func (b *spanBuilder) judge(sessionID string, rev int, forged bool) *spanBuilder {
	sp := b.span(traceTurn1, semconv.EvalSpanJudge)
	a := sp.Attributes()
	a.PutStr(semconv.AgentEvalKind, semconv.EvalKindJudge)
	a.PutStr(semconv.AgentEvalSessionID, sessionID)
	a.PutInt(semconv.AgentEvalVerdictRevision, int64(rev))
	put := func(k string, vals ...any) {
		s := a.PutEmptySlice(k)
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				s.AppendEmpty().SetStr(v)
			case float64:
				s.AppendEmpty().SetDouble(v)
			case bool:
				s.AppendEmpty().SetBool(v)
			}
		}
	}
	put(semconv.AgentEvalVerdictNames, "response_quality", "task_completion")
	put(semconv.AgentEvalVerdictAgents, "planner", "")
	put(semconv.AgentEvalVerdictScores, 0.7, math.NaN())
	put(semconv.AgentEvalVerdictPasses, true, false)
	put(semconv.AgentEvalVerdictReasons, "clear answer", "")
	put(semconv.AgentEvalVerdictErrors, "", "judge: calls-per-minute budget exhausted")
	put(semconv.AgentEvalVerdictVersions, "v1", "v1")
	if !forged {
		fixtureSigner.Sign(a)
	}
	return b
}

// TestLateJudgeVerdicts: verdicts that arrive after the analysis was stored reach the
// store and GET /api/v1/agent_sessions/{id}/judge_verdicts; a redelivery stores nothing
// twice, the analysis is untouched, and an unsigned judge span stores nothing.
func TestLateJudgeVerdicts(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	require.NoError(t, x.consume(newSpanBuilder(t).turn(turn0(true)).turn(turn1(true)).session(analysisCheckout()).traces()))
	var before map[string]any
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agent_sessions/sess-checkout", &before))

	require.NoError(t, x.consume(newSpanBuilder(t).judge("sess-checkout", 1, false).traces()))
	require.NoError(t, x.consume(newSpanBuilder(t).judge("sess-checkout", 1, false).traces()), "redelivered")
	require.NoError(t, x.consume(newSpanBuilder(t).judge("forged", 1, true).traces()))

	var got JudgeVerdicts
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agent_sessions/sess-checkout/judge_verdicts", &got))
	require.Len(t, got.Verdicts, 2)
	v := got.Verdicts[0]
	assert.Equal(t, "response_quality", v.Name)
	assert.Equal(t, "planner", v.Agent)
	assert.Equal(t, semconv.EvalKindJudge, v.Kind)
	assert.Equal(t, 1, v.AnalysisRevision)
	require.NotNil(t, v.Score)
	assert.Equal(t, 0.7, *v.Score)
	assert.Nil(t, got.Verdicts[1].Score)
	assert.Equal(t, "judge: calls-per-minute budget exhausted", got.Verdicts[1].JudgeError)

	var after map[string]any
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agent_sessions/sess-checkout", &after))
	assert.Equal(t, before, after, "the analysis keeps its deterministic scores")

	var forged JudgeVerdicts
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agent_sessions/forged/judge_verdicts", &forged))
	assert.Empty(t, forged.Verdicts)
	assert.NotNil(t, forged.Verdicts)
}

// refusingVerdictStore is the real store, except that it refuses (store.ErrRejected: a
// value the database cannot hold) any save that holds a task_completion verdict.
type refusingVerdictStore struct{ store.Store }

func (r refusingVerdictStore) SaveVerdicts(ctx context.Context, vs []store.JudgeVerdict) error {
	for _, v := range vs {
		if v.Name == "task_completion" {
			return fmt.Errorf("value out of range: %w", store.ErrRejected)
		}
	}
	return r.Store.(store.VerdictStore).SaveVerdicts(ctx, vs)
}

func (r refusingVerdictStore) JudgeVerdicts(ctx context.Context, id string) ([]store.JudgeVerdict, error) {
	return r.Store.(store.VerdictStore).JudgeVerdicts(ctx, id)
}

// TestRefusedVerdictsDoNotHoldTheRest: a judge verdict the store refuses is dropped (a
// permanent error, nothing to retry); the other verdict of its span and the analysis of
// the same batch are stored.
func TestRefusedVerdictsDoNotHoldTheRest(t *testing.T) {
	x := newTestExporter(t, testConfig(), func(e *agentEvalExporter) {
		e.openStore = func(ctx context.Context, driver, dsn string) (store.Store, error) {
			st, err := store.Open(ctx, driver, dsn)
			return refusingVerdictStore{st}, err
		}
	})
	td := newSpanBuilder(t).judge("sess-checkout", 1, false).session(analysisCheckout()).traces()
	err := x.exp.pushTraces(context.Background(), td)
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "%v", err)
	assert.ErrorIs(t, err, store.ErrRejected)
	assert.ErrorContains(t, err, "1 analyses or verdicts the result store refused")
	assert.Equal(t, []string{"sess-checkout"}, x.sessionIDs(""), "the analysis is stored")
	vs, err := x.exp.store.(store.VerdictStore).JudgeVerdicts(context.Background(), "sess-checkout")
	require.NoError(t, err)
	require.Len(t, vs, 1, "the verdict not refused is stored")
	assert.Equal(t, "response_quality", vs[0].Name)
}

// TestUnauthenticatedSpansWarn: spans signed with another key (a processor whose
// signing_key differs) store nothing; the first one is a warning naming signing_key,
// then at most one a minute, not one per span.
func TestUnauthenticatedSpansWarn(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	x := newTestExporter(t, testConfig(), func(e *agentEvalExporter) { e.logger = zap.New(core) })
	logs.TakeAll() // start-up lines
	for range 3 {
		require.NoError(t, x.consume(newSpanBuilder(t).judge("other-key", 1, true).traces()))
	}
	warns := logs.FilterMessageSnippet("signing_key").All()
	require.Len(t, warns, 1)
	assert.Equal(t, zapcore.WarnLevel, warns[0].Level)
	assert.Contains(t, warns[0].Message, "processor")
}
