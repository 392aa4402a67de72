// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	_ "modernc.org/sqlite" // the SQLite database/sql driver, to count rows

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
