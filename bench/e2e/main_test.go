// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/groupbytraceprocessor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/otelcol/otelcoltest"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.uber.org/goleak"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter"
	"github.com/agenteval/agenteval-collector/extension/agentevalhandoffextension"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// endpointExtension stands in for an extension of the bench collector that this module
// does not depend on (health_check, pprof): the rendered config must hold only its
// endpoint.
func endpointExtension(typ string) extension.Factory {
	type cfg struct {
		Endpoint string `mapstructure:"endpoint"`
	}
	return extension.NewFactory(component.MustNewType(typ),
		func() component.Config { return &cfg{} },
		func(context.Context, extension.Settings, component.Config) (extension.Extension, error) {
			return nil, nil
		},
		component.StabilityLevelStable)
}

// TestRenderConfigValidates loads every pipeline's rendered configuration with the real
// factories of its receivers, processors, exporters and telemetry: the keys the harness
// writes exist and their values pass Validate.
func TestRenderConfigValidates(t *testing.T) {
	factories := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	var err error
	factories.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	require.NoError(t, err)
	factories.Processors, err = otelcol.MakeFactoryMap[processor.Factory](batchprocessor.NewFactory(), groupbytraceprocessor.NewFactory(), agentsessionprocessor.NewFactory())
	require.NoError(t, err)
	factories.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](otlpexporter.NewFactory(), agentevalexporter.NewFactory())
	require.NoError(t, err)
	factories.Extensions, err = otelcol.MakeFactoryMap(endpointExtension("health_check"), endpointExtension("pprof"), agentevalhandoffextension.NewFactory())
	require.NoError(t, err)

	for _, batching := range []struct {
		name    string
		how     string
		timeout time.Duration
	}{
		{"batch-processor", batchingProcessor, 0},
		{"batch-processor-50ms", batchingProcessor, 50 * time.Millisecond},
		{"exporter-queue-50ms", batchingExporter, 50 * time.Millisecond},
	} {
		for _, handoff := range []bool{true, false} {
			for i, p := range pipelines {
				t.Run(fmt.Sprintf("%s/handoff=%t/%s", batching.name, handoff, p.Name), func(t *testing.T) {
					dir := t.TempDir()
					cp := collectorParams{TurnSettle: 500 * time.Millisecond, GroupWait: 2 * time.Second, SessionTimeout: 5 * time.Second, ContinuationRecords: 1234, DataDir: dir,
						Batching: batching.how, BatchTimeout: batching.timeout, Handoff: handoff}
					if handoff {
						cp.ContinuationDriver = "sqlite" // config.yaml's continuation store, in half the cases
					}
					checkRenderedConfig(t, factories, p, portsFrom(21000+10*i), cp)
					text := renderConfig(p, portsFrom(21000+10*i), cp)
					switch {
					case batching.how == batchingExporter:
						assert.NotContains(t, cp.processors(p), "batch", "no pipeline batches in a processor")
						assert.Contains(t, text, "flush_timeout: 50ms")
					case batching.timeout > 0:
						assert.Contains(t, text, "timeout: 50ms")
					}
					want := 0
					if handoff && slices.Contains(p.Exporters, "agenteval") {
						want = 2 // the processor's and the exporter's setting
						assert.Contains(t, text, "extensions: [health_check, pprof, agenteval_handoff]")
					}
					assert.Equal(t, want, strings.Count(text, "handoff: agenteval_handoff"), text)
					if strings.Contains(text, "agentsession:") {
						// The shipped pipeline keeps its continuation state in SQLite whatever cp says.
						assert.Equal(t, handoff || p.Name == "shipped", strings.Contains(text, "    continuation:\n      max_records: 1234\n      driver: sqlite\n      dsn: "+filepath.Join(dir, "agenteval.db")), text)
					}
				})
			}
		}
	}
}

// checkRenderedConfig loads p's configuration rendered with cp (in cp.DataDir) through
// factories and checks its pipeline, endpoints and p's settings.
func checkRenderedConfig(t *testing.T, factories otelcol.Factories, p pipeline, pt ports, cp collectorParams) {
	t.Helper()
	text := renderConfig(p, pt, cp)
	path := filepath.Join(cp.DataDir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	cfg, err := otelcoltest.LoadConfigAndValidate(path, factories)
	require.NoError(t, err, text)
	var pl []string
	for _, pc := range cfg.Service.Pipelines {
		for _, id := range pc.Processors {
			pl = append(pl, id.String())
		}
		assert.Len(t, pc.Exporters, 1+len(p.Exporters), "the sink and the pipeline's own exporters")
	}
	assert.Equal(t, cp.processors(p), pl)
	assert.Contains(t, text, "127.0.0.1:21")
	assert.NotContains(t, text, "localhost", "loopback by address only")
	if p.Name == "groupbytrace" {
		assert.Contains(t, text, "wait_duration: 2s")
	}
	if p.Name == "agentsession+agenteval" {
		assert.Contains(t, text, filepath.Join(cp.DataDir, "agenteval.db"))
	}
	if slices.Contains(p.Processors, "agentsession") {
		assert.Contains(t, text, "max_records: 1234")
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil)
	require.NoError(t, err)
	require.Len(t, o.Pipelines, len(pipelines), "every pipeline by default")
	assert.Equal(t, "passthrough", o.Pipelines[0].Name, "the reference runs first")
	assert.Equal(t, "shipped", o.Pipelines[4].Name, "config.yaml's configuration is measured by default")
	assert.Equal(t, []string{modeRate, modeMax}, o.Modes)
	assert.Equal(t, 30000, o.Rate)
	assert.Equal(t, o.SessionTimeout+60*time.Second, o.DrainTimeout)

	o, err = parseFlags([]string{"-pipelines", "agentsession, passthrough", "-modes", "max", "-duration", "5s"})
	require.NoError(t, err)
	assert.Equal(t, "agentsession", o.Pipelines[0].Name)
	assert.Equal(t, []string{modeMax}, o.Modes)
	assert.Equal(t, 5*time.Second, o.Duration)

	for _, args := range [][]string{
		{"-pipelines", "tailsampling"},
		{"-modes", "burst"},
		{"-rate", "0"},
		{"-workers", "-1"},
		{"-batching", "queue"},
		{"-batch-timeout", "-1s"},
	} {
		_, err := parseFlags(args)
		assert.Error(t, err, args)
	}
}

func TestOutputComplete(t *testing.T) {
	sent := turnStats{Spans: 1000, Turns: 40, Sessions: 15}
	tests := []struct {
		name      string
		c         sinkCounts
		evaluates bool
		want      bool
	}{
		{"pass-through, all spans", sinkCounts{Spans: 1000}, false, true},
		{"pass-through, a span missing", sinkCounts{Spans: 999}, false, false},
		{"evaluating, spans only", sinkCounts{Spans: 1000}, true, false},
		{"evaluating, a turn missing", sinkCounts{Spans: 1000, TurnsEvaluated: 39, Eval: map[string]int64{semconv.EvalKindTurn: 70, semconv.EvalKindAgentSession: 15}}, true, false},
		{"evaluating, a session missing", sinkCounts{Spans: 1000, TurnsEvaluated: 40, Eval: map[string]int64{semconv.EvalKindAgentSession: 14}}, true, false},
		{"evaluating, all", sinkCounts{Spans: 1000, TurnsEvaluated: 40, Eval: map[string]int64{semconv.EvalKindAgentSession: 15}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, outputComplete(tt.c, sent, tt.evaluates))
		})
	}
}

func TestResultsTable(t *testing.T) {
	o, err := parseFlags(nil)
	require.NoError(t, err)
	run := func(p, mode string, rep int, spans, out int64, cpu float64) runResult {
		return runResult{Pipeline: p, Mode: mode, Repeat: rep, CPUSeconds: cpu, PeakRSS: 100 << 20,
			Load: loadResult{Stats: turnStats{Spans: spans, Turns: 10, Interactions: 30, Sessions: 4}, Elapsed: 10 * time.Second, Bytes: 1000 * spans},
			Out:  sinkCounts{Spans: out, Bytes: 1500 * out, TurnsEvaluated: 10, Eval: map[string]int64{semconv.EvalKindTurn: 16, semconv.EvalKindAgentInteract: 30, semconv.EvalKindAgentSession: 3, semconv.EvalKindToolCall: 2}},
		}
	}
	rs := []runResult{
		run("passthrough", modeRate, 1, 100000, 100000, 1.0),  // 10 µs/span
		run("passthrough", modeRate, 2, 100000, 100000, 1.2),  // 12 µs/span: reference 11
		run("agentsession", modeRate, 1, 100000, 99990, 5.5),  // 55 µs/span: 5×
		run("passthrough", modeMax, 1, 200000, 200000, 4.0),   // 20 µs/span
		run("groupbytrace", modeMax, 1, 200000, 200000, 6.0),  // 30 µs/span: 1.5×
		run("agentsession", modeMax, 1, 200000, 200000, 10.0), // 50 µs/span: 2.5×
	}
	for i := range rs {
		if rs[i].Pipeline != "agentsession" {
			rs[i].Out.Eval, rs[i].Out.TurnsEvaluated = nil, 0
		}
	}
	rs[0].RootLatency = summarize([]time.Duration{120 * time.Millisecond, 250 * time.Millisecond})
	table := resultsTable(o, rs)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 4+len(rs))
	cells := func(row int) []string {
		var out []string
		for _, c := range strings.Split(strings.Trim(lines[4+row], "|"), "|") {
			out = append(out, strings.TrimSpace(c))
		}
		return out
	}
	assert.Equal(t, []string{"passthrough", "30k/s", "1", "100000", "10000", "1.00", "10.00", "0.91", "100000 ✓", "1.50", "–", "120ms / 250ms", "–", "100"}, cells(0))
	assert.Equal(t, "1.09", cells(1)[7])
	r := cells(2)
	assert.Equal(t, "5.00", r[7], "against the mean pass-through of the same mode")
	assert.Equal(t, "99990 ✗ (-10)", r[8], "spans lost are flagged")
	assert.Equal(t, "10 (16 spans) / 30 / 2 / 3 (of 4)", r[10], "evaluations against what was sent")
	assert.Equal(t, "max", cells(3)[1])
	assert.Equal(t, "1.50", cells(4)[7])
	assert.Equal(t, "2.50", cells(5)[7])
}
