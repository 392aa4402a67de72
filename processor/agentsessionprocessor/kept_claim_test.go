// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// TestKeptClaimWithoutRootSpanClaimsItsTrace: a claim kept in continuation.storage by a
// collector before turns had root spans names its trace only, and its record is gone
// (the bound on unsaved records dropped it: that is why it is a claim): restored, it
// claims its trace's provisional row, as it did before migration 00013. Before, it kept
// an empty root span and claimed no row, and the turn's first final verdict could be
// counted again (§4.9; found by review).
func TestKeptClaimWithoutRootSpanClaimsItsTrace(t *testing.T) {
	ctx := context.Background()
	const (
		trace = "0af7651916cd43dd8448eb211c80319c"
		root  = "b7ad6b7169203331"
	)
	dsn := filepath.Join(t.TempDir(), "agenteval.db")
	cs, err := store.OpenContinuation(ctx, "sqlite", dsn)
	require.NoError(t, err)
	rec := evaluation.TurnRecord{Result: evaluation.TurnResult{SessionID: "s", TraceID: trace, RootSpanID: root}}
	_, err = cs.SaveTurns(ctx, []store.TurnState{{SessionID: "s", Record: rec}}) // provisional, as the old collector saved it
	require.NoError(t, err)
	require.NoError(t, cs.Close())

	host, _ := storageHost(t, t.TempDir())
	old := `{"version":1,"claims":[{"session_id":"s","trace_id":"` + trace + `"}]}`
	cl := keptClient(t, host)
	require.NoError(t, cl.Set(ctx, keptKey, []byte(old)))
	require.NoError(t, cl.Close(ctx))

	p, _, _, db := keptProcessor(t, "sqlite", dsn, host)
	sh := p.shards[shardOf("s", len(p.shards))]
	require.NoError(t, p.cont.ClaimFinal(ctx, sh.claims))
	final := rec
	final.Result.Final = true
	saved, err := p.cont.SaveTurns(ctx, []store.TurnState{{SessionID: "s", Record: final}})
	require.NoError(t, err)
	require.Len(t, saved, 1)
	assert.False(t, saved[0].FirstFinal, "the turn's final verdict was counted: claimed (claims: %+v)", sh.claims)
	db.down = true
	require.NoError(t, p.shutdown(ctx))
}
