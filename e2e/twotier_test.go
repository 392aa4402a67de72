// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

// The first tier of docs/architecture.md §10 is contrib's load-balancing exporter. It is not a
// dependency of this module at v0.158.0, so the test's first tier routes with two OTLP
// exporters behind a deterministic split by trace id: the `tracesplit` processor below
// keeps, in each of two pipelines fed by one OTLP receiver, the traces whose trace id's
// first byte is even (pipeline a) or odd (pipeline b). That is what the load-balancing
// exporter does with routing_key: traceID and two backends: every span of a trace goes to
// one backend, and the turns (traces) of one session may go to different ones.
var tracesplitType = component.MustNewType("tracesplit")

type tracesplitConfig struct {
	// Odd keeps the traces whose trace id's first byte is odd; else the even ones.
	Odd bool `mapstructure:"odd"`
}

func tracesplitFactory() processor.Factory {
	return processor.NewFactory(tracesplitType,
		func() component.Config { return &tracesplitConfig{} },
		processor.WithTraces(func(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
			odd := cfg.(*tracesplitConfig).Odd
			return processorhelper.NewTraces(ctx, set, cfg, next, func(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) {
				td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
					rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
						ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return (sp.TraceID()[0]%2 == 1) != odd })
						return ss.Spans().Len() == 0
					})
					return rs.ScopeSpans().Len() == 0
				})
				if td.ResourceSpans().Len() == 0 {
					return td, processorhelper.ErrSkipProcessingData
				}
				return td, nil
			}, processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
		}, component.StabilityLevelDevelopment))
}

// runCollectorWith runs a collector of yaml config with the given factories until stop.
func runCollectorWith(t *testing.T, cfg string, factories otelcol.Factories) (stop func()) {
	t.Helper()
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo:               component.NewDefaultBuildInfo(),
		Factories:               func() (otelcol.Factories, error) { return factories, nil },
		DisableGracefulShutdown: true,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"yaml:" + cfg},
			ProviderFactories: []confmap.ProviderFactory{yamlprovider.NewFactory()},
		}},
	})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		assert.NoError(t, col.Run(context.Background()))
	}()
	require.Eventually(t, func() bool { return col.GetState() == otelcol.StateRunning }, 30*time.Second, 20*time.Millisecond)
	return func() {
		col.Shutdown()
		wg.Wait()
	}
}

// parityIDs gives each root span a trace id whose first byte has the parity set with
// next, so the test decides which tier-2 collector gets each turn.
type parityIDs struct {
	odd atomic.Bool
	n   atomic.Uint64
}

func (g *parityIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	binary.BigEndian.PutUint64(tid[8:], g.n.Add(1))
	tid[1] = 0xa7
	if g.odd.Load() {
		tid[0] = 1
	} else {
		tid[0] = 2
	}
	return tid, g.NewSpanID(context.Background(), tid)
}

func (g *parityIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], g.n.Add(1)<<8|0x5)
	return sid
}

// TestTwoTiersSharingPostgres runs a first tier splitting traces by trace id over two
// agenteval collectors that share one PostgreSQL database (result store and continuation
// state), and sends two interleaved three-turn conversations whose turns alternate
// between the collectors, each turn after the previous one's session went idle (the
// think time of a user). Every session must be stored once and whole: one row, revision
// 3, turns 0, 1 and 2, with the correction in turn 1 judged RDM on turn 0 by the
// collector that did not see turn 0.
func TestTwoTiersSharingPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("two-tier end-to-end test: skipped with -short")
	}
	dsn := storetest.PostgresDSN(t)

	tier2 := func() (grpc string, stop func()) {
		grpc = freePort(t)
		cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: %q}
processors:
  agentsession:
    turn_settle: 200ms
    turn_timeout: 5s
    session_timeout: 1s
    continuation: {driver: postgres, dsn: %q}
exporters:
  agenteval:
    store: {driver: postgres, dsn: %q}
    prometheus: {endpoint: %q}
    api: {endpoint: %q}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [agentsession]
      exporters: [agenteval]
`, grpc, dsn, dsn, freePort(t), freePort(t))
		var f otelcol.Factories
		var err error
		f.Receivers, err = otelcol.MakeFactoryMap(otlpreceiver.NewFactory())
		require.NoError(t, err)
		f.Processors, err = otelcol.MakeFactoryMap(agentsessionprocessor.NewFactory())
		require.NoError(t, err)
		f.Exporters, err = otelcol.MakeFactoryMap(agentevalexporter.NewFactory())
		require.NoError(t, err)
		f.Telemetry = otelconftelemetry.NewFactory()
		return grpc, runCollectorWith(t, cfg, f)
	}
	a, stopA := tier2()
	defer stopA()
	b, stopB := tier2()
	defer stopB()

	tier1 := freePort(t)
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: %q}
processors:
  tracesplit/a: {odd: false}
  tracesplit/b: {odd: true}
exporters:
  otlp_grpc/a:
    endpoint: %q
    tls: {insecure: true}
  otlp_grpc/b:
    endpoint: %q
    tls: {insecure: true}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces/a:
      receivers: [otlp]
      processors: [tracesplit/a]
      exporters: [otlp_grpc/a]
    traces/b:
      receivers: [otlp]
      processors: [tracesplit/b]
      exporters: [otlp_grpc/b]
`, tier1, a, b)
	var f otelcol.Factories
	var err error
	f.Receivers, err = otelcol.MakeFactoryMap(otlpreceiver.NewFactory())
	require.NoError(t, err)
	f.Processors, err = otelcol.MakeFactoryMap(tracesplitFactory())
	require.NoError(t, err)
	f.Exporters, err = otelcol.MakeFactoryMap(otlpexporter.NewFactory())
	require.NoError(t, err)
	f.Telemetry = otelconftelemetry.NewFactory()
	stop1 := runCollectorWith(t, cfg, f)
	defer stop1()

	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(tier1), otlptracegrpc.WithInsecure())
	require.NoError(t, err)
	ids := &parityIDs{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(ids),
		sdktrace.WithResource(sdkresource.NewSchemaless(attribute.String("service.name", "weather-bot"))))
	defer func() { _ = tp.Shutdown(ctx) }()
	tr := tp.Tracer("e2e-two-tiers")
	msg := func(role, text string) string {
		js, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]any{{"type": "text", "content": text}}}})
		return string(js)
	}
	turn := func(sessionID, user, answer string) {
		common := []attribute.KeyValue{attribute.String("gen_ai.conversation.id", sessionID)}
		rctx, root := tr.Start(ctx, "invoke_agent weather", trace.WithAttributes(append(common,
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", "weather"),
			attribute.String("gen_ai.input.messages", msg("user", user)),
			attribute.String("gen_ai.output.messages", msg("assistant", answer)))...))
		_, chat := tr.Start(rctx, "chat gpt-4o", trace.WithAttributes(append(common,
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.input.messages", msg("user", user)),
			attribute.String("gen_ai.output.messages", msg("assistant", answer)))...))
		chat.End()
		root.End()
	}
	sessions := []string{"two-tier-alpha", "two-tier-beta"}
	convo := []struct{ user, answer string }{
		{"What is the weather in Paris tomorrow?", "Tomorrow in Paris: sunny, 21 degrees."},
		{"No, that's wrong, I meant Paris in Texas.", "Tomorrow in Paris, Texas: rain, 17 degrees."},
		{"Thanks. And on Sunday?", "On Sunday in Paris, Texas: cloudy, 19 degrees."},
	}
	st, err := store.Open(ctx, store.DriverPostgres, dsn)
	require.NoError(t, err)
	defer st.Close()
	for i, c := range convo {
		ids.odd.Store(i%2 == 1) // turns 0 and 2 on collector a, turn 1 on b
		for _, id := range sessions {
			turn(id, c.user, c.answer)
		}
		// Wait until each session's revision i+1 is stored: the turn settled, the session
		// went idle on its collector and the exporter saved the analysis.
		for _, id := range sessions {
			require.Eventually(t, func() bool {
				an, err := st.GetAnalysis(ctx, id)
				return err == nil && an.AnalysisRevision == i+1
			}, 30*time.Second, 50*time.Millisecond, "session %s, revision %d", id, i+1)
		}
	}

	list, err := st.ListSessions(ctx, store.Filter{})
	require.NoError(t, err)
	require.Len(t, list, 2, "every session stored once")
	for _, id := range sessions {
		an, err := st.GetAnalysis(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, 3, an.AnalysisRevision)
		require.Len(t, an.TurnResults, 3, "session %s is whole", id)
		for j, r := range an.TurnResults {
			assert.Equal(t, j, r.TurnIndex)
			assert.True(t, r.Final)
		}
		assert.Equal(t, evaluation.DetectionRDM, an.TurnResults[0].DetectionType,
			"session %s: the correction (on the other collector) lands on turn 0", id)
		assert.Equal(t, 1, an.Conversation.RDMDetections)
	}
	cs, err := store.OpenContinuation(ctx, store.DriverPostgres, dsn)
	require.NoError(t, err)
	defer cs.Close()
	for _, id := range sessions {
		c, err := cs.LoadContinuation(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, 3, c.Revision)
		assert.Len(t, c.Turns, 3, "every turn stored once")
	}
}
