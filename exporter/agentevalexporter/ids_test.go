// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestNotFoundDoesNotEchoAHugeID: the 404 body quotes at most 128 bytes of the id.
func TestNotFoundDoesNotEchoAHugeID(t *testing.T) {
	x := newTestExporter(t, testConfig(), nil)
	id := strings.Repeat("é", 4000) // 8,000 bytes; the cut must not split a rune
	resp, err := http.Get(x.apiURL("/api/v1/agent_sessions/" + url.PathEscape(id)))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Less(t, len(body), 300, "%d bytes", len(body))
	assert.Contains(t, string(body), `session \"`+strings.Repeat("é", 64)+`…\" not found`)
}

// TestStoreWriteFailuresLoggedAtError: a store that rejects writes (a full disk) is an
// error in the log, once per failure streak, and its recovery is logged too.
func TestStoreWriteFailuresLoggedAtError(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	fs := &flakyStore{}
	fs.failures.Store(2)
	cfg := testConfig()
	x := newTestExporter(t, cfg, func(e *agentEvalExporter) {
		withFlakyStore(fs)(e)
		e.logger = zap.New(core)
	})
	for range 2 {
		require.Error(t, x.consume(newSpanBuilder(t).session(analysisCheckout()).traces()))
	}
	require.NoError(t, x.consume(newSpanBuilder(t).session(analysisCheckout()).traces()))
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1, "one error line per failure streak")
	assert.Contains(t, errs[0].Message, "the result store rejects writes")
	assert.Contains(t, errs[0].ContextMap()["error"], "database is locked")
	assert.Equal(t, 1, logs.FilterMessageSnippet("accepts writes again").Len())
}
