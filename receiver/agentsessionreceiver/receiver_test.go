// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver/internal/metadata"
	"github.com/agenteval/agenteval-collector/receiver/agentsessionreceiver/internal/metadatatest"
)

// startReceiver runs the receiver on an ephemeral loopback port and returns its URL.
func startReceiver(t *testing.T, cfg *Config, next consumer.Traces, tel *componenttest.Telemetry) string {
	t.Helper()
	cfg.NetAddr.Endpoint = "localhost:0"
	set := receivertest.NewNopSettings(metadata.Type)
	if tel != nil {
		set = metadatatest.NewSettings(tel)
	}
	r, err := NewFactory().CreateTraces(context.Background(), set, cfg, next)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return "http://" + r.(*agentSessionReceiver).addr.String() + SessionsPath
}

func post(t *testing.T, url string, body []byte, header map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "body: %s", raw)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	return resp.StatusCode, resp.Header, out
}

func allSpans(sink *consumertest.TracesSink) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					out = append(out, ss.At(k))
				}
			}
		}
	}
	return out
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func TestReceiveSession(t *testing.T) {
	sink := new(consumertest.TracesSink)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	url := startReceiver(t, createDefaultConfig().(*Config), sink, tel)

	status, _, resp := post(t, url, readTestdata(t, "session.json"), nil)
	require.Equal(t, http.StatusAccepted, status, "response: %v", resp)
	assert.Equal(t, "sess-42", resp["session_id"])
	sessions := resp["sessions"].([]any)
	require.Len(t, sessions, 1)
	s := sessions[0].(map[string]any)
	assert.Equal(t, "sess-42", s["session_id"])
	assert.InDelta(t, 2, s["turns"], 0)
	require.Len(t, s["trace_ids"], 2)

	// One ConsumeTraces call with every span of the session.
	require.Len(t, sink.AllTraces(), 1)
	spans := allSpans(sink)
	assert.InDelta(t, len(spans), s["spans"], 0)
	traceIDs := map[string]bool{}
	var ends []string
	for _, sp := range spans {
		traceIDs[sp.TraceID().String()] = true
		conv, ok := sp.Attributes().Get(semconv.GenAIConversationID)
		require.True(t, ok)
		assert.Equal(t, "sess-42", conv.Str())
		if v, ok := sp.Attributes().Get(semconv.AgentEvalSessionEnd); ok && v.Bool() {
			ends = append(ends, sp.Name()+"@"+sp.TraceID().String())
		}
	}
	assert.Len(t, traceIDs, 2, "one trace per turn")
	assert.Equal(t, []string{"invoke_workflow agent_session@" + s["trace_ids"].([]any)[1].(string)}, ends,
		"end_session marks the last turn's root only")

	metadatatest.AssertEqualReceiverAgentsessionSessionsReceived(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestReceiveDatasetAndCompressedBody(t *testing.T) {
	sink := new(consumertest.TracesSink)
	url := startReceiver(t, createDefaultConfig().(*Config), sink, nil)
	body := []byte(`{"name": "ds", "conversations": [
		{"session_id": "a", "turns": [{"user_message": "hi", "agent_response": "hello"}]},
		{"turns": [{"user_message": "bye", "agent_response": "ciao"}, {"user_message": "?", "agent_response": "!"}]}]}`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write(body)
	require.NoError(t, err)
	require.NoError(t, zw.Close())

	status, _, resp := post(t, url, gz.Bytes(), map[string]string{"Content-Encoding": "gzip"})
	require.Equal(t, http.StatusAccepted, status, "response: %v", resp)
	_, single := resp["session_id"]
	assert.False(t, single, "no top-level session_id for several sessions")
	sessions := resp["sessions"].([]any)
	require.Len(t, sessions, 2)
	assert.Equal(t, "a", sessions[0].(map[string]any)["session_id"])
	generated := sessions[1].(map[string]any)["session_id"].(string)
	assert.Len(t, generated, 32, "a generated session id is returned")
	assert.InDelta(t, 2, sessions[1].(map[string]any)["turns"], 0)

	perSession := map[string]int{}
	for _, sp := range allSpans(sink) {
		conv, _ := sp.Attributes().Get(semconv.GenAIConversationID)
		perSession[conv.Str()]++
	}
	assert.Equal(t, map[string]int{"a": 2, generated: 4}, perSession)
}

func TestRejectedRequests(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		body       string
		wantStatus int
		wantError  string
		wantField  string
	}{
		{name: "schema violation names the field", method: http.MethodPost,
			body:       `{"turns": [{"agent_interactions": [{"agent_steps": []}]}]}`,
			wantStatus: http.StatusBadRequest, wantError: "missing required property", wantField: "turns[0].agent_interactions[0].agent_id"},
		{name: "not JSON", method: http.MethodPost, body: `turns=1`,
			wantStatus: http.StatusBadRequest, wantError: "body is not valid JSON"},
		{name: "wrong type", method: http.MethodPost, body: `{"turns": [{"agent_response": "x", "latency_ms": "slow"}]}`,
			wantStatus: http.StatusBadRequest, wantError: "got string, want null or number", wantField: "turns[0].latency_ms"},
		{name: "over max_request_body_size", method: http.MethodPost,
			body:       `{"turns": [{"agent_response": "` + strings.Repeat("x", 2048) + `"}]}`,
			wantStatus: http.StatusRequestEntityTooLarge, wantError: "exceeds max_request_body_size (1024 bytes)"},
		{name: "session_id no session can have", method: http.MethodPost, body: `{"session_id": "..", "turns": [{"agent_response": "x"}]}`,
			wantStatus: http.StatusBadRequest, wantError: "names no session in a URL path", wantField: "session_id"},
		{name: "GET", method: http.MethodGet, wantStatus: http.StatusMethodNotAllowed, wantError: "use POST"},
	}
	sink := new(consumertest.TracesSink)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := createDefaultConfig().(*Config)
	cfg.MaxRequestBodySize = 1024
	url := startReceiver(t, cfg, sink, tel)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, url, strings.NewReader(tt.body))
			require.NoError(t, err)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			var got errorResponse
			require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
			assert.Contains(t, got.Error, tt.wantError)
			assert.Equal(t, tt.wantField, got.Field)
			if tt.wantStatus == http.StatusMethodNotAllowed {
				assert.Equal(t, http.MethodPost, res.Header.Get("Allow"))
			}
		})
	}
	assert.Empty(t, sink.AllTraces(), "nothing reaches the pipeline")
	metadatatest.AssertEqualReceiverAgentsessionRequestsRejected(t, tel,
		[]metricdata.DataPoint[int64]{{Value: int64(len(tests))}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestUndecodableBodyIsJSON: what confighttp refuses before the handler runs (a body that
// is not what its Content-Encoding says, an encoding it does not know) is answered in JSON
// like every other error, and counted as a rejected request.
func TestUndecodableBodyIsJSON(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	sink := new(consumertest.TracesSink)
	url := startReceiver(t, createDefaultConfig().(*Config), sink, tel)
	for _, encoding := range []string{"gzip", "zstd", "x-unknown"} {
		status, _, resp := post(t, url, []byte(`{"turns": []}`), map[string]string{"Content-Encoding": encoding})
		assert.Equal(t, http.StatusBadRequest, status, encoding)
		assert.NotEmpty(t, resp["error"], encoding)
	}
	assert.Empty(t, sink.AllTraces())
	metadatatest.AssertEqualReceiverAgentsessionRequestsRejected(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 3}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestUnknownPathIsJSON: a path the receiver does not serve (a sub-path of
// /v1/agent_sessions, the channel's paths without the channel) is a JSON 404 like every
// other error; it is not a POST /v1/agent_sessions, so requests_rejected does not count it.
func TestUnknownPathIsJSON(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	url := startReceiver(t, createDefaultConfig().(*Config), consumertest.NewNop(), tel)
	for _, tt := range []struct{ method, path string }{
		{http.MethodPost, SessionsPath + "/x"},
		{http.MethodGet, "/"},
		{http.MethodPost, EvaluationsPath + "/non-spamminess/register"},
	} {
		req, err := http.NewRequest(tt.method, strings.TrimSuffix(url, SessionsPath)+tt.path, strings.NewReader(`{}`))
		require.NoError(t, err)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, tt.path)
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"), tt.path)
		var got errorResponse
		require.NoError(t, json.NewDecoder(res.Body).Decode(&got), tt.path)
		require.NoError(t, res.Body.Close())
		assert.Equal(t, "no such endpoint: "+tt.path, got.Error)
	}
	res, err := http.Get(url) // a rejected request of the endpoint: the only one counted
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	metadatatest.AssertEqualReceiverAgentsessionRequestsRejected(t, tel,
		[]metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestNextConsumerErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		retryAfter string
	}{
		{name: "retryable", err: errors.New("memory limit"), wantStatus: http.StatusServiceUnavailable, retryAfter: "5"},
		{name: "permanent", err: consumererror.NewPermanent(errors.New("bad data")), wantStatus: http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := startReceiver(t, createDefaultConfig().(*Config), consumertest.NewErr(tt.err), nil)
			status, header, resp := post(t, url, readTestdata(t, "session.json"), nil)
			assert.Equal(t, tt.wantStatus, status)
			assert.Contains(t, resp["error"], tt.err.Error())
			assert.Equal(t, tt.retryAfter, header.Get("Retry-After"))
		})
	}
}

func TestEndSessionOff(t *testing.T) {
	sink := new(consumertest.TracesSink)
	cfg := createDefaultConfig().(*Config)
	cfg.EndSession = false
	cfg.ServiceName = "replay"
	url := startReceiver(t, cfg, sink, nil)
	status, _, _ := post(t, url, readTestdata(t, "session.json"), nil)
	require.Equal(t, http.StatusAccepted, status)
	spans := allSpans(sink)
	require.NotEmpty(t, spans)
	for _, sp := range spans {
		_, ok := sp.Attributes().Get(semconv.AgentEvalSessionEnd)
		assert.False(t, ok, "span %s", sp.Name())
	}
	svc, _ := sink.AllTraces()[0].ResourceSpans().At(0).Resource().Attributes().Get(semconv.ServiceName)
	assert.Equal(t, "replay", svc.Str())
}

func TestStartFailsOnBusyPort(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	url := startReceiver(t, cfg, consumertest.NewNop(), nil)
	busy := createDefaultConfig().(*Config)
	busy.NetAddr.Endpoint = strings.TrimSuffix(strings.TrimPrefix(url, "http://"), SessionsPath)
	r, err := NewFactory().CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), busy, consumertest.NewNop())
	require.NoError(t, err)
	assert.Error(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.Shutdown(context.Background()))
}
