// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/internal/store/storetest"
)

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

// chosenIDs hands out the trace id the test sets with use for each root span, so the test
// decides which trace id, and so which tier-2 collector, each turn gets.
type chosenIDs struct {
	mu   sync.Mutex
	next trace.TraceID
	n    atomic.Uint64
}

func (g *chosenIDs) use(tid trace.TraceID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next = tid
}

func (g *chosenIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	g.mu.Lock()
	tid := g.next
	g.mu.Unlock()
	return tid, g.NewSpanID(ctx, tid)
}

func (g *chosenIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], g.n.Add(1)<<8|0x5)
	return sid
}

// candidateTraceID is the i-th trace id the test may give a turn.
func candidateTraceID(i int) trace.TraceID {
	var tid trace.TraceID
	tid[0], tid[1] = 0x2e, 0x71
	binary.BigEndian.PutUint64(tid[8:], uint64(i)*0x9e3779b97f4a7c15+1)
	return tid
}

// tracesIn maps each trace id in sink to the names of its spans (evaluation spans left
// out).
func tracesIn(sink *consumertest.TracesSink) map[pcommon.TraceID][]string {
	out := map[pcommon.TraceID][]string{}
	for _, td := range sink.AllTraces() {
		forEach(td, func(sp ptrace.Span) {
			if _, ok := sp.Attributes().Get(semconv.AgentEvalKind); !ok {
				out[sp.TraceID()] = append(out[sp.TraceID()], sp.Name())
			}
		})
	}
	return out
}

// startTier1 runs the built distribution (make build) with deploy/scale-out/tier1.yaml:
// OTLP in, contrib's load_balancing exporter (routing_key: traceID, static resolver) out
// to the tier-2 OTLP gRPC endpoints. It returns tier 1's OTLP gRPC endpoint.
func startTier1(t *testing.T, tier2 ...string) string {
	t.Helper()
	bin := collectorBinary(t)
	grpcEP, health := freePort(t), freePort(t)
	_, telemetryPort, err := net.SplitHostPort(freePort(t))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", "deploy/scale-out/tier1.yaml")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(),
		"AGENTEVAL_TIER1_OTLP_GRPC="+grpcEP,
		"AGENTEVAL_TIER1_OTLP_HTTP="+freePort(t),
		"AGENTEVAL_TIER1_HEALTH="+health,
		"AGENTEVAL_TIER1_TELEMETRY="+telemetryPort,
		"AGENTEVAL_TIER2_HOSTS=["+strings.Join(tier2, ", ")+"]")
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cancel()
			<-exited
		}
		cancel()
		if t.Failed() {
			t.Logf("tier 1 log:\n%s", tail(logs.String(), 40))
		}
	})
	require.Eventually(t, func() bool {
		select {
		case err := <-exited:
			exited <- err
			return true
		default:
		}
		resp, err := http.Get("http://" + health + "/")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond)
	select {
	case err := <-exited:
		t.Fatalf("tier 1 exited: %v\n%s", err, tail(logs.String(), 40))
	default:
	}
	return grpcEP
}

// TestTwoTiersSharingPostgres runs the scale-out setup of docs/architecture.md §10 on
// loopback: tier 1 is the built distribution with deploy/scale-out/tier1.yaml (contrib's
// load_balancing exporter, routing by trace id), tier 2 two agenteval collectors sharing
// one PostgreSQL database (result store and continuation state). Four three-turn
// conversations are sent, each turn its own trace, each after the previous one's session
// went idle (a user's think time); the trace ids are picked so that every conversation's
// turns alternate between the tier-2 collectors. Every session must be stored once and
// whole: one row, revision 3, turns 0, 1 and 2 once each, the correction in turn 1 judged
// RDM on turn 0 by the collector that did not see turn 0; and every span sent to tier 1
// reaches exactly one tier-2 collector.
func TestTwoTiersSharingPostgres(t *testing.T) { runTwoTiers(t, false) }

// TestTwoTiersQuickTurns is TestTwoTiersSharingPostgres with the turns of a conversation
// sent 300 ms apart (after each turn settled, well within session_timeout): both tier-2
// collectors hold each session open at the same time. Every turn must still be stored
// once with a distinct index, and the stored analysis, the highest revision, must cover
// every turn (docs/decisions/sessions.md §4.5).
func TestTwoTiersQuickTurns(t *testing.T) { runTwoTiers(t, true) }

func runTwoTiers(t *testing.T, quick bool) {
	if testing.Short() {
		t.Skip("two-tier end-to-end test: skipped with -short")
	}
	dsn := storetest.PostgresDSN(t)
	collectorBinary(t) // fail or skip before starting anything

	// Tier 2 "a" hands its processor's results to its exporter in process (the
	// agenteval_handoff extension, as deploy/scale-out/tier2.yaml does); "b" does not:
	// both paths store into the one database.
	var proms []string // the tier-2 collectors' Prometheus endpoints
	tier2 := func(sink *consumertest.TracesSink, handoff bool) string {
		grpc, prom := freePort(t), freePort(t)
		proms = append(proms, prom)
		ext, use, svc := "", "", ""
		if handoff {
			ext = "extensions:\n  agenteval_handoff:\n"
			use = "    handoff: agenteval_handoff\n"
			svc = "  extensions: [agenteval_handoff]\n"
		}
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
%sexporters:
  capture:
  agenteval:
%s    store: {driver: postgres, dsn: %q}
    prometheus: {endpoint: %q}
    api: {endpoint: %q}
%sservice:
%s  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [agentsession]
      exporters: [capture, agenteval]
`, grpc, dsn, use, use, dsn, prom, freePort(t), ext, svc)
		t.Cleanup(runCollectorWith(t, cfg, testFactories(t, sink)))
		return grpc
	}
	sinks := []*consumertest.TracesSink{{}, {}}
	a, b := tier2(sinks[0], true), tier2(sinks[1], false)
	tier1 := startTier1(t, a, b)

	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(tier1), otlptracegrpc.WithInsecure())
	require.NoError(t, err)
	ids := &chosenIDs{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(ids),
		sdktrace.WithResource(sdkresource.NewSchemaless(attribute.String("service.name", "weather-bot"))))
	defer func() { _ = tp.Shutdown(ctx) }()
	tr := tp.Tracer("e2e-two-tiers")
	sent := 0

	sessions := []string{"two-tier-alpha", "two-tier-beta", "two-tier-gamma", "two-tier-delta"}
	convo := []struct{ user, answer string }{
		{"What is the weather in Paris tomorrow?", "Tomorrow in Paris: sunny, 21 degrees."},
		{"No, that's wrong, I meant Paris in Texas.", "Tomorrow in Paris, Texas: rain, 17 degrees."},
		{"Thanks. And on Sunday?", "On Sunday in Paris, Texas: cloudy, 19 degrees."},
	}
	// Where does tier 1 send a trace id? Ask it: one span without GenAI attributes per
	// candidate id (tier 2 passes such traces through), then look in the sinks.
	need := len(sessions) * len(convo) / 2 // trace ids per collector: half the turns
	pools := [2][]trace.TraceID{}
	for probed := 0; len(pools[0]) < need || len(pools[1]) < need; {
		require.Less(t, probed, 256, "tier 1 sent 256 trace ids to one collector only: %d on a, %d on b",
			len(pools[0]), len(pools[1]))
		batch := make([]trace.TraceID, 16)
		for i := range batch {
			batch[i] = candidateTraceID(probed + i)
			ids.use(batch[i])
			_, sp := tr.Start(ctx, "route-probe")
			sp.End()
			sent++
		}
		probed += len(batch)
		var seen [2]map[pcommon.TraceID][]string
		require.Eventually(t, func() bool {
			seen = [2]map[pcommon.TraceID][]string{tracesIn(sinks[0]), tracesIn(sinks[1])}
			return len(seen[0])+len(seen[1]) == probed
		}, 10*time.Second, 20*time.Millisecond, "every probe reaches one tier-2 collector")
		for _, tid := range batch {
			_, onA := seen[0][pcommon.TraceID(tid)]
			_, onB := seen[1][pcommon.TraceID(tid)]
			require.NotEqual(t, onA, onB, "trace %s on exactly one collector", tid)
			if onA {
				pools[0] = append(pools[0], tid)
			} else {
				pools[1] = append(pools[1], tid)
			}
		}
	}
	take := func(instance int) trace.TraceID {
		tid := pools[instance][0]
		pools[instance] = pools[instance][1:]
		return tid
	}

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
		sent += 2
	}
	st, err := store.Open(ctx, store.DriverPostgres, dsn)
	require.NoError(t, err)
	defer st.Close()
	turnTrace := map[string][]trace.TraceID{} // session -> trace id of each turn
	for i, c := range convo {
		for k, id := range sessions {
			// Sessions 0 and 2 go a, b, a; sessions 1 and 3 go b, a, b.
			tid := take((i + k) % 2)
			turnTrace[id] = append(turnTrace[id], tid)
			ids.use(tid)
			turn(id, c.user, c.answer)
		}
		if quick {
			time.Sleep(300 * time.Millisecond) // the turn settles (200ms); the session stays open
			continue
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

	cs, err := store.OpenContinuation(ctx, store.DriverPostgres, dsn)
	require.NoError(t, err)
	defer cs.Close()
	wantRevision := map[string]int{}
	for _, id := range sessions {
		wantRevision[id] = len(convo)
		if !quick {
			continue
		}
		// Each collector that held the session open emits an analysis when it goes idle
		// there; wait until the highest revision allocated is the one stored.
		require.Eventually(t, func() bool {
			time.Sleep(500 * time.Millisecond)
			an, err := st.GetAnalysis(ctx, id)
			c, cerr := cs.LoadContinuation(ctx, id, nil)
			wantRevision[id] = c.Revision
			return err == nil && cerr == nil && c.Revision >= 2 && an.AnalysisRevision == c.Revision
		}, 30*time.Second, 50*time.Millisecond, "session %s: the highest revision stored", id)
	}

	// Spans in == spans out: each span sent to tier 1 reached one tier-2 collector, once.
	var out [2]map[pcommon.TraceID][]string
	spansOut := func() int {
		out = [2]map[pcommon.TraceID][]string{tracesIn(sinks[0]), tracesIn(sinks[1])}
		n := 0
		for _, m := range out {
			for _, names := range m {
				n += len(names)
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return spansOut() >= sent }, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, sent, spansOut(), "spans in at tier 1 == spans out of tier 2")
	// The turns of each session landed on both collectors, each turn whole on one.
	for _, id := range sessions {
		var onInstance [2]int
		for j, tid := range turnTrace[id] {
			for inst, m := range out {
				if names := m[pcommon.TraceID(tid)]; len(names) > 0 {
					// The trace id's probe span is part of the trace.
					assert.ElementsMatch(t, []string{"route-probe", "invoke_agent weather", "chat gpt-4o"}, names,
						"session %s turn %d: the whole trace on one collector", id, j)
					onInstance[inst]++
				}
			}
		}
		assert.Positive(t, onInstance[0], "session %s: turns on collector a", id)
		assert.Positive(t, onInstance[1], "session %s: turns on collector b", id)
		assert.Equal(t, 3, onInstance[0]+onInstance[1], "session %s: each turn on one collector", id)
	}

	list, err := st.ListSessions(ctx, store.Filter{})
	require.NoError(t, err)
	require.Len(t, list, len(sessions), "every session stored once")
	storedVerdicts := map[string]float64{}
	for _, id := range sessions {
		an, err := st.GetAnalysis(ctx, id)
		require.NoError(t, err)
		for _, r := range an.TurnResults {
			storedVerdicts[r.DetectionType]++
		}
		assert.Equal(t, wantRevision[id], an.AnalysisRevision)
		require.Len(t, an.TurnResults, 3, "session %s is whole", id)
		first := 0
		indexes := make([]int, 0, len(an.TurnResults))
		for _, r := range an.TurnResults {
			indexes = append(indexes, r.TurnIndex)
			assert.True(t, r.Final)
			// By the turn's user message, not its index: a turn that closed late on
			// one collector holds an index after the next turn's, and its follow-up is
			// still the next turn in the conversation (docs/decisions/sessions.md §4.5).
			if r.UserMessage == convo[0].user {
				first++
				assert.Equal(t, evaluation.DetectionRDM, r.DetectionType,
					"session %s: the correction (on the other collector) lands on the first turn (index %d)", id, r.TurnIndex)
			}
		}
		// Listed in conversation order (by start), a late turn before the one after it.
		assert.ElementsMatch(t, []int{0, 1, 2}, indexes, "session %s: turns 0-2 once each", id)
		assert.Equal(t, convo[0].user, an.TurnResults[0].UserMessage, "session %s: the first turn listed first, whatever its index", id)
		assert.Equal(t, 1, first, "session %s: the first turn stored once", id)
		assert.Equal(t, 1, an.Conversation.RDMDetections)
	}
	for _, id := range sessions {
		c, err := cs.LoadContinuation(ctx, id, nil)
		require.NoError(t, err)
		assert.Equal(t, wantRevision[id], c.Revision)
		require.Len(t, c.Turns, 3, "every turn stored once")
		for j, r := range c.Turns {
			assert.Equal(t, j, r.Result.TurnIndex, "session %s: distinct indexes", id)
		}
	}

	// The turn counters of both collectors, corrected by their revisions (docs/metrics.md:
	// the first turn's RDM comes after a pause, or on the other collector, as a revised
	// verdict), give the verdicts stored.
	assert.Equal(t, 4.0, storedVerdicts[evaluation.DetectionRDM], "stored: %v", storedVerdicts)
	var counted map[string]float64
	assert.Eventually(t, func() bool {
		counted = correctedTurnCounts(t, proms...)
		return maps.Equal(storedVerdicts, counted)
	}, 10*time.Second, 100*time.Millisecond)
	assert.Equal(t, storedVerdicts, counted, "the corrected turn counters give the verdicts stored")
}

// correctedTurnCounts scrapes the Prometheus endpoints and returns, by detection type,
// agent_eval_turns_total corrected by agent_eval_turns_revised_total (each revision
// counted as its detection_type in place of its replaced_detection_type), summed over
// the endpoints; types that add up to 0 are left out.
func correctedTurnCounts(t *testing.T, endpoints ...string) map[string]float64 {
	t.Helper()
	n := map[string]float64{}
	label := func(m *dto.Metric, name string) string {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == name {
				return lp.GetValue()
			}
		}
		return ""
	}
	for _, ep := range endpoints {
		_, body := get(t, "http://"+ep+"/metrics")
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
		require.NoError(t, err)
		for _, m := range fams["agent_eval_turns_total"].GetMetric() {
			n[label(m, "detection_type")] += m.GetCounter().GetValue()
		}
		for _, m := range fams["agent_eval_turns_revised_total"].GetMetric() {
			v := m.GetCounter().GetValue()
			n[label(m, "detection_type")] += v
			n[label(m, "replaced_detection_type")] -= v
		}
	}
	maps.DeleteFunc(n, func(_ string, v float64) bool { return v == 0 })
	return n
}
