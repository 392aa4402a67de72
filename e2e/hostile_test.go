// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/agenteval/agenteval-collector/e2e/internal/hostile"
)

// The deep-nesting crash (docs/decisions/hostile-input.md): pdata v1.64.0 unmarshals
// AnyValue -> ArrayValue -> AnyValue recursively without a depth limit, so one OTLP request
// of nested arrays ends the process with a fatal stack overflow once it holds about
// 1.2 million levels (about 11 MiB of protobuf; measured: 1,150,000 levels, 10.97 MB,
// decode; 1,300,000 levels, 12.47 MB, crash). config.yaml's OTLP receiver limits keep every
// request under that. These tests run the repository's config.yaml receiver settings.

// safeNestedBytes is the largest request, in decompressed bytes, that config.yaml may let
// through: below the crash threshold measured above, with a margin.
const safeNestedBytes = 9 << 20

// otlpProtocolsFromConfig returns receivers.otlp.protocols of the repository's config.yaml
// with the endpoints replaced by grpcEP and httpEP.
func otlpProtocolsFromConfig(t *testing.T, grpcEP, httpEP string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../config.yaml")
	require.NoError(t, err)
	var doc struct {
		Receivers struct {
			OTLP struct {
				Protocols map[string]map[string]any `yaml:"protocols"`
			} `yaml:"otlp"`
		} `yaml:"receivers"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	protocols := doc.Receivers.OTLP.Protocols
	require.Contains(t, protocols, "grpc")
	require.Contains(t, protocols, "http")
	protocols["grpc"]["endpoint"] = grpcEP
	protocols["http"]["endpoint"] = httpEP
	out := map[string]any{}
	for k, v := range protocols {
		out[k] = v
	}
	return out
}

func TestConfigOTLPLimitsBelowNestingCrash(t *testing.T) {
	p := otlpProtocolsFromConfig(t, "x", "y")
	httpLimit, ok := p["http"].(map[string]any)["max_request_body_size"].(int)
	require.True(t, ok, "config.yaml sets receivers.otlp.protocols.http.max_request_body_size")
	assert.LessOrEqual(t, httpLimit, safeNestedBytes)
	grpcMiB, ok := p["grpc"].(map[string]any)["max_recv_msg_size_mib"].(int)
	require.True(t, ok, "config.yaml sets receivers.otlp.protocols.grpc.max_recv_msg_size_mib")
	assert.LessOrEqual(t, grpcMiB<<20, safeNestedBytes)
}

// startOTLPCollector runs otlp (config.yaml's protocol settings) -> agentsession -> capture.
func startOTLPCollector(t *testing.T, sink *consumertest.TracesSink) (grpcEP, httpEP string, stop func()) {
	t.Helper()
	grpcEP, httpEP = freePort(t), freePort(t)
	cfg, err := yaml.Marshal(map[string]any{
		"receivers":  map[string]any{"otlp": map[string]any{"protocols": otlpProtocolsFromConfig(t, grpcEP, httpEP)}},
		"processors": map[string]any{"agentsession": map[string]any{"turn_settle": "100ms"}},
		"exporters":  map[string]any{"capture": nil},
		"service": map[string]any{
			"telemetry": map[string]any{"metrics": map[string]any{"level": "none"}, "logs": map[string]any{"level": "error"}},
			"pipelines": map[string]any{"traces": map[string]any{
				"receivers": []string{"otlp"}, "processors": []string{"agentsession"}, "exporters": []string{"capture"},
			}},
		},
	})
	require.NoError(t, err)
	return grpcEP, httpEP, runCollectorWith(t, string(cfg), testFactories(t, sink))
}

func postOTLP(t *testing.T, endpoint string, body []byte, gzipped bool) int {
	t.Helper()
	if gzipped {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, err := zw.Write(body)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		body = buf.Bytes()
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+endpoint+"/v1/traces", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	if gzipped {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	return resp.StatusCode
}

func exportGRPC(t *testing.T, endpoint string, body []byte) error {
	t.Helper()
	conn, err := grpc.NewClient(endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(hostile.RawCodec{}), grpc.MaxCallSendMsgSize(64<<20)))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reply []byte
	return conn.Invoke(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", body, &reply)
}

// TestDeepNestingRefused sends the payload that crashed the collector (1.5 million levels,
// 14.5 MB) over OTLP/HTTP (plain and gzip) and gRPC, and checks each is refused and the
// collector goes on passing spans; then a nested payload just under the limit is decoded
// and passes through the processor whole.
func TestDeepNestingRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds requests of 15 MB (CI runs it)")
	}
	sink := new(consumertest.TracesSink)
	grpcEP, httpEP, stop := startOTLPCollector(t, sink)
	defer stop()

	crash := hostile.NestedRequest("too-deep", hostile.CrashDepth, 1)
	require.Greater(t, len(crash), 14_000_000)
	// otlpreceiver v0.158.0 answers 400 when the body reader hits the limit (413 would be
	// the better answer; either refuses without decoding).
	refused := []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge}
	assert.Contains(t, refused, postOTLP(t, httpEP, crash, false), "plain protobuf")
	assert.Contains(t, refused, postOTLP(t, httpEP, crash, true), "gzip: the limit holds on the decoded size")
	err := exportGRPC(t, grpcEP, crash)
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)

	// Still alive: a request just under the limit, nested as deep as it can be, is
	// accepted and passes through the agentsession processor unchanged in number.
	under := hostile.NestedRequest("deep-but-allowed", hostile.AllowedDepth, 1)
	require.Less(t, len(under), 8<<20)
	assert.Equal(t, http.StatusOK, postOTLP(t, httpEP, under, true))
	require.NoError(t, exportGRPC(t, grpcEP, under))
	require.Eventually(t, func() bool { return sink.SpanCount() == 2 }, 30*time.Second, 20*time.Millisecond)
	for _, td := range sink.AllTraces() {
		assert.Equal(t, "deep-but-allowed", td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name())
	}
}
