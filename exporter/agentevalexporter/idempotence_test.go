// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	_ "modernc.org/sqlite" // the SQLite database/sql driver, to count rows

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadatatest"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// failingBatchStore is the real store whose batch save fails while failures > 0 (after
// writing nothing: the transaction is not even begun).
type failingBatchStore struct {
	store.Store
	failures atomic.Int32
}

func (f *failingBatchStore) SaveAnalyses(ctx context.Context, as []*evaluation.Analysis) error {
	if f.failures.Add(-1) >= 0 {
		return errors.New("connection reset")
	}
	return f.Store.(store.BatchSaver).SaveAnalyses(ctx, as)
}

// TestRetriedExportWritesOnce: an export that failed on the store is retried with the
// spans the error returned, then delivered once more (an at-least-once pipeline): each
// session's revision and each of its turns is stored exactly once, and a second
// session of the same batch too.
func TestRetriedExportWritesOnce(t *testing.T) {
	fs := &failingBatchStore{}
	x := newTestExporter(t, testConfig(), func(e *agentEvalExporter) {
		e.openStore = func(ctx context.Context, driver, dsn string) (store.Store, error) {
			st, err := store.Open(ctx, driver, dsn)
			fs.Store = st
			return fs, err
		}
	})
	fs.failures.Store(1)
	first := analysisCheckout()
	first.AnalysisRevision = 1
	second := analysisCheckout()
	second.SessionID, second.AnalysisRevision = "sess-other", 3
	td := newSpanBuilder(t).turn(turn0(false)).session(first).session(second).traces()

	err := x.exp.pushTraces(context.Background(), td)
	require.Error(t, err)
	require.False(t, consumererror.IsPermanent(err))
	var retry consumererror.Traces
	require.ErrorAs(t, err, &retry)
	require.Equal(t, 2, retry.Data().SpanCount(), "both session spans of the failed transaction")
	require.NoError(t, x.exp.pushTraces(context.Background(), retry.Data()))
	require.NoError(t, x.exp.pushTraces(context.Background(), retry.Data()), "delivered again")

	db, err := sql.Open("sqlite", x.dsn)
	require.NoError(t, err)
	defer db.Close()
	count := func(q string, args ...any) int {
		var n int
		require.NoError(t, db.QueryRow(q, args...).Scan(&n))
		return n
	}
	assert.Equal(t, 2, count("SELECT COUNT(*) FROM sessions"))
	assert.Equal(t, 2, count("SELECT COUNT(*) FROM session_analyses"))
	assert.Equal(t, 1, count("SELECT COUNT(*) FROM session_analyses WHERE session_id = ? AND revision = 3", "sess-other"))
	for _, id := range []string{"sess-checkout", "sess-other"} {
		assert.Equal(t, len(first.TurnResults), count("SELECT COUNT(*) FROM turn_results WHERE session_id = ?", id), id)
	}
	got, err := fs.GetAnalysis(context.Background(), "sess-other")
	require.NoError(t, err)
	assert.Equal(t, 3, got.AnalysisRevision)
}

// TestRejectedAnalysisDoesNotHoldItsBatch: an analysis the store refuses for good (two
// turn results at one turn_index break turn_results' key) makes the batch's transaction
// fail; the other analyses of the batch are then stored one by one, the refused one is
// dropped with a permanent error naming it and counted, and nothing is left to retry.
func TestRejectedAnalysisDoesNotHoldItsBatch(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	first := analysisCheckout()
	poison := analysisCheckout()
	poison.SessionID = "sess-poison"
	require.GreaterOrEqual(t, len(poison.TurnResults), 2)
	poison.TurnResults[1].TurnIndex = poison.TurnResults[0].TurnIndex
	last := analysisCheckout()
	last.SessionID = "sess-last"
	td := newSpanBuilder(t).session(first).session(poison).session(last).traces()

	err := x.exp.pushTraces(context.Background(), td)
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "a refused analysis is not retried: %v", err)
	var retry consumererror.Traces
	assert.False(t, errors.As(err, &retry), "nothing is left to retry")
	assert.ErrorIs(t, err, store.ErrRejected)
	assert.ErrorContains(t, err, `session "sess-poison"`)

	for _, id := range []string{first.SessionID, last.SessionID} {
		got, err := x.exp.store.GetAnalysis(context.Background(), id)
		require.NoError(t, err, id)
		assert.Len(t, got.TurnResults, len(first.TurnResults), id)
	}
	_, err = x.exp.store.GetAnalysis(context.Background(), poison.SessionID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	metadatatest.AssertEqualExporterAgentevalRejectedAnalyses(t, x.tel, []metricdata.DataPoint[int64]{{Value: 1}},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterAgentevalAnalysesStored(t, x.tel, []metricdata.DataPoint[int64]{{Value: 2}},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	_, err = x.tel.GetMetric("otelcol_exporter_agenteval_store_errors")
	assert.Error(t, err, "a refusal is not a store error: no retry follows")

	// Alone in its batch, it is refused the same way, and the error names it.
	err = x.exp.pushTraces(context.Background(), newSpanBuilder(t).session(poison).traces())
	assert.True(t, consumererror.IsPermanent(err), "%v", err)
	assert.ErrorContains(t, err, `session "sess-poison"`)
}

// splitStore is the real store whose batch saves of more than one analysis fail as
// refused (store.ErrRejected), and whose single saves fail as an outage from the
// outageAt-th on (0: never), counting the single saves tried.
type splitStore struct {
	store.Store
	outageAt int32
	singles  atomic.Int32
}

func (s *splitStore) SaveAnalyses(ctx context.Context, as []*evaluation.Analysis) error {
	if len(as) > 1 {
		return fmt.Errorf("a constraint: %w", store.ErrRejected)
	}
	if n := s.singles.Add(1); s.outageAt > 0 && n >= s.outageAt {
		return errors.New("connection reset")
	}
	return s.Store.(store.BatchSaver).SaveAnalyses(ctx, as)
}

// TestOutageWhileSavingOneByOne: a refused batch is saved one analysis at a time; when
// the store goes down during that (its second single save fails as an outage), the
// rest of the batch is not tried: the first analysis is stored, the other three are
// returned for a retry, and no analysis is dropped as refused.
func TestOutageWhileSavingOneByOne(t *testing.T) {
	ss := &splitStore{outageAt: 2}
	x := newTestExporter(t, testConfig(), func(e *agentEvalExporter) {
		e.openStore = func(ctx context.Context, driver, dsn string) (store.Store, error) {
			st, err := store.Open(ctx, driver, dsn)
			ss.Store = st
			return ss, err
		}
	})
	b := newSpanBuilder(t)
	for i := range 4 {
		a := analysisCheckout()
		a.SessionID = fmt.Sprintf("sess-%d", i)
		b.session(a)
	}
	err := x.exp.pushTraces(context.Background(), b.traces())
	require.Error(t, err)
	assert.False(t, consumererror.IsPermanent(err))
	var retry consumererror.Traces
	require.ErrorAs(t, err, &retry)
	assert.Equal(t, 3, retry.Data().SpanCount(), "the analyses not stored are retried")
	assert.Equal(t, int32(2), ss.singles.Load(), "no single save after the outage began")
	assert.Equal(t, []string{"sess-0"}, x.sessionIDs(""))
	_, err = x.tel.GetMetric("otelcol_exporter_agenteval_rejected_analyses")
	assert.Error(t, err, "nothing refused")
}
