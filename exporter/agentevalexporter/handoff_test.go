// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agenteval/agenteval-collector/exporter/agentevalexporter/internal/metadatatest"
	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
	"github.com/agenteval/agenteval-collector/internal/handoff/handofftest"
	"github.com/agenteval/agenteval-collector/internal/pdatautil"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/storagetest"
	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"
)

// realTraceFiles are the recorded agent runs the processor's and e2e golden tests replay.
func realTraceFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"../../testdata/fixtures/*.json", "../../testdata/samples/*.json"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files)
	return files
}

// runProcessor replays the files through an agentsession processor whose handoff
// setting names h's extension (none for a nil h) and returns what it emitted: the
// batches holding evaluation spans, as the exporter receives them. h gets a taker
// attached first, standing in for the exporter that takes the results later (in a
// collector the exporter starts before the processor).
func runProcessor(t *testing.T, files []string, h *handoff.Handoff) []ptrace.Traces {
	t.Helper()
	tds := make([]ptrace.Traces, len(files))
	for i, file := range files {
		tds[i] = readTraces(t, file)
	}
	return runProcessorTraces(t, tds, h, 0)
}

// runProcessorTraces is runProcessor on the batches tds. With sessions > 0 it waits
// until the processor emitted that many session spans before it shuts down, so that the
// sessions are evaluated as in a running collector, not by the shutdown.
func runProcessorTraces(t *testing.T, tds []ptrace.Traces, h *handoff.Handoff, sessions int) []ptrace.Traces {
	t.Helper()
	return runProcessorWith(t, tds, h, sessions, nil)
}

// runProcessorWith is runProcessorTraces with the processor's configuration changed by
// set (when not nil).
func runProcessorWith(t *testing.T, tds []ptrace.Traces, h *handoff.Handoff, sessions int, set func(*agentsessionprocessor.Config)) []ptrace.Traces {
	t.Helper()
	f := agentsessionprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*agentsessionprocessor.Config)
	if set != nil {
		set(cfg)
	}
	host := handofftest.Host{}
	if h != nil {
		h.Attach()
		cfg.Handoff = &handofftest.ID
		host = handofftest.NewHost(h)
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), host))
	for _, td := range tds {
		require.NoError(t, p.ConsumeTraces(context.Background(), td))
	}
	if sessions > 0 {
		require.Eventually(t, func() bool {
			n := 0
			for _, td := range sink.AllTraces() {
				n += countEvalSpans(td, semconv.EvalKindAgentSession)
			}
			return n >= sessions
		}, 30*time.Second, 10*time.Millisecond, "the processor evaluates the sessions")
	}
	require.NoError(t, p.Shutdown(context.Background())) // evaluates every open session
	var out []ptrace.Traces
	for _, td := range sink.AllTraces() {
		if countEvalSpans(td, "") > 0 {
			out = append(out, td)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func readTraces(t *testing.T, path string) ptrace.Traces {
	t.Helper()
	td, err := readTracesFile(path)
	require.NoError(t, err)
	return td
}

// eachEvalSpan calls fn with every evaluation span of td of kind ("" for any).
func eachEvalSpan(td ptrace.Traces, kind string, fn func(ptrace.Span)) {
	for ref := range pdatautil.Spans(td) {
		if v, ok := ref.Span.Attributes().Get(semconv.AgentEvalKind); ok && (kind == "" || v.Str() == kind) {
			fn(ref.Span)
		}
	}
}

func countEvalSpans(td ptrace.Traces, kind string) int {
	n := 0
	eachEvalSpan(td, kind, func(ptrace.Span) { n++ })
	return n
}

// peekHandoff returns, for every turn and session span of batches, what h holds for
// it, left in place (taken and put back). It fails when a span has no entry.
func peekHandoff(t *testing.T, h *handoff.Handoff, batches []ptrace.Traces) []handofftest.Result {
	t.Helper()
	var out []handofftest.Result
	for _, td := range batches {
		eachEvalSpan(td, semconv.EvalKindTurn, func(sp ptrace.Span) {
			tr, ok := h.TakeTurn(handoff.KeyOf(sp))
			require.True(t, ok, "turn span %s is handed off", sp.SpanID())
			h.PutTurn(handoff.KeyOf(sp), tr)
			out = append(out, handofftest.Result{Span: sp, Turn: tr})
		})
		eachEvalSpan(td, semconv.EvalKindAgentSession, func(sp ptrace.Span) {
			a, ok := h.TakeAnalysis(handoff.KeyOf(sp))
			require.True(t, ok, "session span %s is handed off", sp.SpanID())
			h.PutAnalysis(handoff.KeyOf(sp), a)
			out = append(out, handofftest.Result{Span: sp, Analysis: a})
		})
	}
	return out
}

// observed is what an exporter produced: the stored analyses read back through the
// store, the Prometheus metrics, the live UI events and its own telemetry's counts.
type observed struct {
	analyses []string
	metrics  string
	events   []string
}

// exportAll passes the batches to x, one ConsumeTraces each, and returns what it
// produced. A UI stream is open throughout, so that turn and session events are built.
func exportAll(t *testing.T, x *testExporter, batches []ptrace.Traces) observed {
	t.Helper()
	sub, err := x.exp.events.Subscribe()
	require.NoError(t, err)
	var o observed
	for _, td := range batches {
		cp := ptrace.NewTraces()
		td.CopyTo(cp) // each exporter gets its own copy, as a fan-out does
		require.NoError(t, x.consume(cp))
		evs, missed, ended := sub.Take()
		require.Zero(t, missed, "the UI stream dropped events")
		require.False(t, ended, "the UI stream ended")
		for _, ev := range evs {
			o.events = append(o.events, ev.Type+" "+string(ev.Data))
		}
	}
	ctx := context.Background()
	list, err := x.exp.store.ListSessions(ctx, store.Filter{Limit: store.MaxLimit})
	require.NoError(t, err)
	require.NotEmpty(t, list)
	for _, s := range list {
		a, err := x.exp.store.GetAnalysis(ctx, s.SessionID)
		require.NoError(t, err)
		js, err := json.Marshal(a)
		require.NoError(t, err)
		o.analyses = append(o.analyses, string(js))
	}
	// The held-back observations of new series are applied just after the scrape that
	// served them at zero: scraped until two scrapes agree.
	gather := func() string {
		fams, err := x.scrape().Gather()
		require.NoError(t, err)
		var b strings.Builder
		for _, f := range fams {
			fmt.Fprintln(&b, f.String())
		}
		return b.String()
	}
	require.Eventually(t, func() bool {
		prev := o.metrics
		o.metrics = gather()
		return o.metrics != "" && o.metrics == prev
	}, 10*time.Second, 10*time.Millisecond)
	return o
}

// TestHandoffChangesNoOutput replays every recorded agent run through the processor
// with a handoff, then exports its evaluation spans with and without the handoff: the
// stored analyses, the metrics and the UI events are the same, every handed-off result
// is what the exporter would have decoded from its span, every entry is taken (none
// decoded again), and nothing modified a handed-off result after it was put (checked
// once the processor and the exporter are done with it).
func TestHandoffChangesNoOutput(t *testing.T) {
	h := handoff.New(1 << 16)
	batches := runProcessor(t, realTraceFiles(t), h)
	hs := peekHandoff(t, h, batches)
	var turns, sessions int
	for _, x := range hs {
		if x.Turn != nil {
			turns++
		} else {
			sessions++
		}
	}
	t.Logf("%d batches, %d turn and %d session spans handed off", len(batches), turns, sessions)
	require.Positive(t, turns)
	require.Positive(t, sessions)
	require.Equal(t, turns+sessions, h.Len(), "only the emitted spans are handed off")
	handofftest.AssertDecoded(t, hs)

	plain := newTestExporter(t, testConfig(), nil)
	cfg := testConfig()
	cfg.Handoff = &handofftest.ID
	handed := newTestExporterWithExtensions(t, cfg, nil, handofftest.NewHost(h))

	want := exportAll(t, plain, batches)
	got := exportAll(t, handed, batches)
	assert.Equal(t, want.analyses, got.analyses, "stored analyses")
	assert.Equal(t, want.metrics, got.metrics, "Prometheus metrics")
	assert.Equal(t, want.events, got.events, "UI events")
	assert.Len(t, got.analyses, sessions)
	assert.Zero(t, h.Len(), "every entry taken by the exporter")
	assert.Zero(t, h.Evicted())
	for _, x := range []*testExporter{plain, handed} {
		metadatatest.AssertEqualExporterAgentevalAnalysesStored(t, x.tel,
			[]metricdata.DataPoint[int64]{{Value: int64(sessions)}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
		_, err := x.tel.GetMetric("otelcol_exporter_agenteval_unauthenticated_spans")
		assert.Error(t, err, "no span rejected")
	}
	// After everything: the values the handoff passed still equal their spans.
	handofftest.AssertDecoded(t, hs)
}

// TestHandoffDoesNotAdmitForgeries: with the handoff on, a turn or session span with
// the right kind and a wrong signature whose ids are not in the handoff is rejected as
// without it; a forged session span that reuses the ids of a real one whose entry is
// held gets the real analysis stored, not its own.
func TestHandoffDoesNotAdmitForgeries(t *testing.T) {
	h := handoff.New(64)
	cfg := testConfig()
	cfg.Handoff = &handofftest.ID
	x := newTestExporterWithExtensions(t, cfg, nil, handofftest.NewHost(h))

	bad := turn0(true)
	bad.IsBad, bad.DetectionType = true, evaluation.DetectionRDM
	forged := analysisCheckout()
	forged.OverallScore = ptr(0.01)
	b := newSpanBuilder(t).turn(bad).session(forged)
	unsign(b)
	require.NoError(t, x.consume(b.traces()))
	assert.Empty(t, x.sessionIDs(""), "nothing stored")
	metadatatest.AssertEqualExporterAgentevalUnauthenticatedSpans(t, x.tel,
		[]metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	// The real analysis is handed off under the forged span's ids.
	real := analysisCheckout()
	b = newSpanBuilder(t).session(forged)
	unsign(b)
	h.PutAnalysis(handoff.KeyOf(b.ss.Spans().At(0)), &real)
	require.NoError(t, x.consume(b.traces()))
	stored, err := x.exp.store.GetAnalysis(context.Background(), real.SessionID)
	require.NoError(t, err)
	assert.Equal(t, *real.OverallScore, *stored.OverallScore, "the handed-off analysis is stored, not the span's")
}

// TestHandoffEvictedEntryIsDecoded: a span whose entry was dropped from the handoff
// (its bound) is verified and decoded as without the handoff, and stored once.
func TestHandoffEvictedEntryIsDecoded(t *testing.T) {
	h := handoff.New(1)
	batches := runProcessor(t, realTraceFiles(t)[:3], h)
	require.Positive(t, h.Evicted(), "the bound of 1 dropped entries")
	cfg := testConfig()
	cfg.Handoff = &handofftest.ID
	handed := newTestExporterWithExtensions(t, cfg, nil, handofftest.NewHost(h))
	plain := newTestExporter(t, testConfig(), nil)
	want := exportAll(t, plain, batches)
	got := exportAll(t, handed, batches)
	assert.Equal(t, want, got)
	var sessions int
	for _, td := range batches {
		sessions += countEvalSpans(td, semconv.EvalKindAgentSession)
	}
	metadatatest.AssertEqualExporterAgentevalAnalysesStored(t, handed.tel,
		[]metricdata.DataPoint[int64]{{Value: int64(sessions)}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// retryingHandoffConfig is an exporter configuration with the handoff, an in-memory
// sending queue and retries every 10-50 ms without end.
func retryingHandoffConfig() *Config {
	cfg := testConfig()
	cfg.Handoff = &handofftest.ID
	cfg.QueueConfig = configoptional.Some(exporterhelper.NewDefaultQueueConfig())
	cfg.RetryConfig.Enabled = true
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 50 * time.Millisecond
	cfg.RetryConfig.MaxElapsedTime = 0
	return cfg
}

// TestHandoffStoreDownThenUp: with the handoff on and the store refusing writes, the
// analyses wait in the sending queue (each failed attempt gives its entries back, so the
// retries store the handed-off analyses, not decoded spans) and are each stored once when
// the store comes back, which empties the handoff.
func TestHandoffStoreDownThenUp(t *testing.T) {
	h := handoff.New(1 << 16)
	batches := runProcessor(t, realTraceFiles(t), h)
	var sessions int
	for _, td := range batches {
		sessions += countEvalSpans(td, semconv.EvalKindAgentSession)
	}
	cfg := retryingHandoffConfig()
	fs := &flakyStore{}
	fs.failures.Store(1 << 30) // the store refuses every write
	x := newTestExporterWithExtensions(t, cfg, withFlakyStore(fs), handofftest.NewHost(h))
	for _, td := range batches {
		require.NoError(t, x.consume(td))
	}
	require.Eventually(t, func() bool { return fs.saves.Load() > int32(2*sessions) }, 10*time.Second, 10*time.Millisecond,
		"the first attempts failed and retries follow")
	assert.Empty(t, x.sessionIDs(""))
	require.Eventually(t, func() bool { return h.Len() == sessions }, 10*time.Second, time.Millisecond,
		"the failed attempts gave their entries back (a retry holds one between take and give-back)")
	fs.failures.Store(0) // the store is back
	require.Eventually(t, func() bool { return len(x.sessionIDs("?limit=1000")) == sessions }, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return h.Len() == 0 }, 10*time.Second, 10*time.Millisecond, "the stored analyses were taken")
	// A batch's rows are visible as each save commits; the counter follows its last one.
	require.Eventually(t, func() bool { return storedCount(t, x) == int64(sessions) }, 10*time.Second, 10*time.Millisecond)
	metadatatest.AssertEqualExporterAgentevalAnalysesStored(t, x.tel,
		[]metricdata.DataPoint[int64]{{Value: int64(sessions)}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestHandoffSettingNamesAMissingExtension: start fails, naming the setting and the id.
func TestHandoffSettingNamesAMissingExtension(t *testing.T) {
	notProvider := struct {
		component.StartFunc
		component.ShutdownFunc
	}{}
	for want, host := range map[string]handofftest.Host{
		`agenteval: handoff: extension "agenteval_handoff" is not configured in service::extensions`:        nil,
		`agenteval: handoff: extension "agenteval_handoff" is not an agenteval handoff (agenteval_handoff)`: {handofftest.ID: notProvider},
		`agenteval: handoff: extension "agenteval_handoff" has no handoff (not started?)`:                   {handofftest.ID: handofftest.Extension{}},
	} {
		cfg := testConfig()
		cfg.Handoff = &handofftest.ID
		tel := componenttest.NewTelemetry()
		exp, err := newAgentEvalExporter(metadatatest.NewSettings(tel), cfg)
		require.NoError(t, err)
		assert.EqualError(t, exp.start(context.Background(), host), want)
		require.NoError(t, exp.shutdown(context.Background()))
		require.NoError(t, tel.Shutdown(context.Background()))
	}
}

// TestHandoffUnverifiedSessionSpanVerifiedOnMiss: a session span let into the queue
// unverified because its analysis was held is verified by pushTraces when the analysis
// is no longer held there: stored if authentic, dropped and counted if not, also when a
// forgery reuses the ids of a real span that took the analysis first, and when a
// forgery already carries the exporter's mark (agent_eval.exporter.unverified) set to
// false or as a string. A dropped span is counted as unauthenticated, not as an
// evaluation span; an authentic one the other way round.
func TestHandoffUnverifiedSessionSpanVerifiedOnMiss(t *testing.T) {
	ctx := context.Background()
	real := analysisCheckout()
	markFalse := func(m pcommon.Map) { m.PutBool(attrUnverified, false) }
	markStr := func(m pcommon.Map) { m.PutStr(attrUnverified, "false") }
	for _, tc := range []struct {
		name   string
		forged bool              // a copy of the span with its score edited follows it
		mark   func(pcommon.Map) // sets the forgery's own mark before the front
		take   bool              // the entry is gone between the front and pushTraces
		stored float64
	}{
		{name: "entry evicted before pushTraces", take: true, stored: *real.OverallScore},
		{name: "forgery with the same ids after the real span", forged: true, stored: *real.OverallScore},
		{name: "forgery alone, entry evicted before pushTraces", forged: true, take: true},
		{name: "forgery marked false with the same ids after the real span", forged: true, mark: markFalse, stored: *real.OverallScore},
		{name: "forgery alone marked false, entry evicted", forged: true, mark: markFalse, take: true},
		{name: "forgery alone marked with a string, entry evicted", forged: true, mark: markStr, take: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := handoff.New(8)
			cfg := testConfig()
			cfg.Handoff = &handofftest.ID
			x := newTestExporterWithExtensions(t, cfg, nil, handofftest.NewHost(h))
			b := newSpanBuilder(t).session(real)
			sp := b.ss.Spans().At(0)
			k := handoff.KeyOf(sp)
			h.PutAnalysis(k, &real)
			f := sp // the forgery alone
			if tc.forged && !tc.take {
				f = b.ss.Spans().AppendEmpty() // a forged copy after the real span
				sp.CopyTo(f)
			}
			if tc.forged {
				f.Attributes().PutDouble(semconv.AgentEvalSessionPrefix+"overall_score", 0.01)
				if tc.mark != nil {
					tc.mark(f.Attributes())
				}
			}
			out := x.exp.evaluationSpans(ctx, b.traces())
			require.Equal(t, b.ss.Spans().Len(), out.SpanCount(), "held: every copy passes the front")
			if tc.take {
				_, ok := h.TakeAnalysis(k)
				require.True(t, ok)
			}
			require.NoError(t, x.exp.pushTraces(ctx, out))
			var forged int64
			if tc.forged {
				forged = 1
			}
			assertCounter(t, x.tel, "otelcol_exporter_agenteval_unauthenticated_spans", forged)
			assertCounter(t, x.tel, "otelcol_exporter_agenteval_evaluation_spans", int64(out.SpanCount())-forged)
			if tc.stored == 0 {
				assert.Empty(t, x.sessionIDs(""), "the forgery is not stored")
				return
			}
			a, err := x.exp.store.GetAnalysis(ctx, real.SessionID)
			require.NoError(t, err)
			assert.Equal(t, tc.stored, *a.OverallScore)
		})
	}
}

// assertCounter checks the value of one of the exporter's own counters; for want 0,
// that it was never added to.
func assertCounter(t *testing.T, tel *componenttest.Telemetry, name string, want int64) {
	t.Helper()
	m, err := tel.GetMetric(name)
	if want == 0 {
		assert.Error(t, err, "%s not recorded", name)
		return
	}
	require.NoError(t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is an int64 sum", name)
	require.Len(t, sum.DataPoints, 1)
	assert.Equal(t, want, sum.DataPoints[0].Value, name)
}

// TestHandoffVerifiesSessionsWithPersistentQueue: with a persistent queue, whatever the
// signing key (random, or fixed but possibly rotated across a restart), a session span
// is verified before the queue even when its analysis is held (after a restart with
// another key it could not be verified); turn spans still use the handoff. With the
// in-memory queue a held session span passes unverified (handedAnalysis).
func TestHandoffVerifiesSessionsWithPersistentQueue(t *testing.T) {
	for _, tc := range []struct {
		key        string
		persistent bool
		want       handed
	}{
		{key: "", persistent: true, want: handedNone},
		{key: "0123456789abcdef-shared", persistent: true, want: handedNone},
		{key: "", want: handedAnalysis},
		{key: "0123456789abcdef-shared", want: handedAnalysis},
	} {
		t.Run(fmt.Sprintf("key=%q,persistent=%v", tc.key, tc.persistent), func(t *testing.T) {
			cfg := testConfig()
			cfg.QueueConfig = configoptional.Some(exporterhelper.NewDefaultQueueConfig()) // in memory
			if tc.persistent {
				cfg = persistentConfig("")
			}
			cfg.SigningKey = configopaque.String(tc.key)
			cfg.Handoff = &handofftest.ID
			h := handoff.New(8)
			tel := componenttest.NewTelemetry()
			exp, err := newAgentEvalExporter(metadatatest.NewSettings(tel), cfg)
			require.NoError(t, err)
			require.NoError(t, exp.start(context.Background(), handofftest.NewHost(h)))
			t.Cleanup(func() {
				require.NoError(t, exp.shutdown(context.Background()))
				require.NoError(t, tel.Shutdown(context.Background()))
			})
			sp := newSpanBuilder(t).session(analysisCheckout()).ss.Spans().At(0)
			a := analysisCheckout()
			h.PutAnalysis(handoff.KeyOf(sp), &a)
			assert.Equal(t, tc.want, exp.handedOff(semconv.EvalKindAgentSession, sp))
			tr := turn0(false)
			h.PutTurn(handoff.KeyOf(sp), &tr)
			assert.Equal(t, handedTurn, exp.handedOff(semconv.EvalKindTurn, sp))
		})
	}
}

// TestHandoffAttachedWhileRunning: the exporter is the handoff's taker from its start
// to its shutdown; before and after, a put stores nothing, and its shutdown drops what
// is held.
func TestHandoffAttachedWhileRunning(t *testing.T) {
	h := handoff.New(8)
	sp := newSpanBuilder(t).session(analysisCheckout()).ss.Spans().At(0)
	a := analysisCheckout()
	h.PutAnalysis(handoff.KeyOf(sp), &a)
	assert.Zero(t, h.Len(), "no exporter started: nothing stored")

	cfg := testConfig()
	cfg.Handoff = &handofftest.ID
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	exp, err := newAgentEvalExporter(metadatatest.NewSettings(tel), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.start(context.Background(), handofftest.NewHost(h)))
	h.PutAnalysis(handoff.KeyOf(sp), &a)
	assert.Equal(t, 1, h.Len(), "started: stored for the exporter")

	require.NoError(t, exp.shutdown(context.Background()))
	assert.Zero(t, h.Len(), "shut down: dropped")
	h.PutAnalysis(handoff.KeyOf(sp), &a)
	assert.Zero(t, h.Len(), "shut down: nothing stored")
	require.NoError(t, exp.shutdown(context.Background()), "a second shutdown")
}

// longConversation is the recorded OpenAI Agents handoff run repeated as n turns of one
// conversation: each copy under its own trace id, 10 s after the previous one.
func longConversation(t *testing.T, n int) []ptrace.Traces {
	t.Helper()
	one := readTraces(t, "../../testdata/samples/openai_agents_handoff.json")
	out := make([]ptrace.Traces, n)
	for i := range n {
		td := ptrace.NewTraces()
		one.CopyTo(td)
		tid := pcommon.TraceID{0xa1, byte(i >> 8), byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
		shift := time.Duration(i) * 10 * time.Second
		for ref := range pdatautil.Spans(td) {
			sp := ref.Span
			sp.SetTraceID(tid)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(sp.StartTimestamp().AsTime().Add(shift)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(sp.EndTimestamp().AsTime().Add(shift)))
		}
		out[i] = td
	}
	return out
}

// TestLongSessionSpanBounded: the session span of a long conversation stays within
// emit.max_session_span_bytes (it grew by a few KB a turn, and past the 4 MiB of a
// default OTLP receiver the downstream refusal dropped the user's spans batched with it).
// It carries the newest turns and agent_eval.turns_omitted, and turns parts carry the
// others, each turn once, each part within the bound. An exporter with the handoff stores
// every turn, also when the store was down at the first attempt (the retry takes the
// analysis back from the handoff instead of decoding the span); so does an exporter that
// decodes the spans (a second tier), in the order emitted or reversed, counting one
// analysis (before the turns parts it stored the newest turns only).
func TestLongSessionSpanBounded(t *testing.T) {
	const turns, limit = 120, 64 << 10
	tds := longConversation(t, turns)
	bounded := func(cfg *agentsessionprocessor.Config) { cfg.Emit.MaxSessionSpanBytes = limit }
	h := handoff.New(1 << 16)
	batches := runProcessorWith(t, tds, h, 0, bounded)
	var omitted int64
	carried := map[int]int{} // turn index → session spans that carry it
	parts := 0
	for _, td := range batches {
		eachEvalSpan(td, semconv.EvalKindAgentSession, func(sp ptrace.Span) {
			one := ptrace.NewTraces()
			sp.CopyTo(one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
			assert.LessOrEqual(t, (&ptrace.ProtoMarshaler{}).TracesSize(one), limit)
			a, err := evalspan.DecodeAnalysis(sp.Attributes())
			require.NoError(t, err)
			require.NoError(t, evalspan.NewSigner("").Verify(sp.Attributes()), "signed, the mark included")
			for _, tr := range a.TurnResults {
				carried[tr.TurnIndex]++
			}
			assert.Equal(t, len(a.TurnResults), sp.Links().Len(), "linked to the turns it carries")
			_, hasOmitted := sp.Attributes().Get(semconv.AgentEvalTurnsOmitted)
			if a.TurnsPart {
				parts++
				assert.False(t, hasOmitted)
				assert.Zero(t, sp.Events().Len(), "a turns part repeats no gen_ai.evaluation.result")
				return
			}
			v, ok := sp.Attributes().Get(semconv.AgentEvalTurnsOmitted)
			require.True(t, ok, "the session span says it leaves turns out")
			omitted = v.Int()
			assert.Equal(t, int(omitted), a.TurnResults[0].TurnIndex, "the newest turns")
			assert.Equal(t, turns-1, a.TurnResults[len(a.TurnResults)-1].TurnIndex)
			assert.Positive(t, sp.Events().Len())
		})
	}
	assert.Positive(t, parts)
	t.Logf("%d turns: the session span carries %d, %d turns parts the rest", turns, turns-int(omitted), parts)
	for i := range turns {
		assert.Equal(t, 1, carried[i], "turn %d is carried by one span", i)
	}
	require.Positive(t, omitted)
	require.Less(t, omitted, int64(turns))
	unbounded := runProcessorWith(t, longConversation(t, turns), nil, 0, nil)
	for _, td := range unbounded {
		eachEvalSpan(td, semconv.EvalKindAgentSession, func(sp ptrace.Span) {
			_, ok := sp.Attributes().Get(semconv.AgentEvalTurnsOmitted)
			assert.False(t, ok, "the default bound (1 MiB) is far above 120 turns")
			assert.Equal(t, turns, sp.Links().Len())
		})
	}

	storedTurns := func(x *testExporter) []int { return storedTurnIndexes(t, x) }
	all := firstIndexes(turns)

	// The handoff, and the store down at the first attempt.
	cfg := retryingHandoffConfig()
	fs := &flakyStore{}
	fs.failures.Store(3)
	x := newTestExporterWithExtensions(t, cfg, withFlakyStore(fs), handofftest.NewHost(h))
	for _, td := range batches {
		require.NoError(t, x.consume(td))
	}
	require.Eventually(t, func() bool { return len(x.sessionIDs("")) == 1 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, all, storedTurns(x), "every turn, from the handoff")

	// Decoded from the spans (a second tier), in any order: every turn, one analysis.
	var spans []ptrace.Traces
	for _, td := range batches {
		eachEvalSpan(td, semconv.EvalKindAgentSession, func(sp ptrace.Span) {
			one := ptrace.NewTraces()
			sp.CopyTo(one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
			spans = append(spans, one)
		})
	}
	reversed := slices.Clone(spans)
	slices.Reverse(reversed)
	for name, spans := range map[string][]ptrace.Traces{"as emitted": spans, "reversed": reversed} {
		t.Run(name, func(t *testing.T) {
			plain := newTestExporter(t, testConfig(), nil)
			for _, td := range spans {
				require.NoError(t, plain.consume(td))
			}
			assert.Equal(t, all, storedTurns(plain))
			assert.Equal(t, int64(1), storedCount(t, plain), "the turns parts are no analyses of their own")
		})
	}
}

// TestLongSessionStoredWholeWithoutTheEntry: an exporter in the processor's collector
// stores every turn of a session span that carries only the newest turns also when the
// handoff no longer holds its analysis: after a restart with the persistent queue of
// config.yaml and deploy/scale-out (the handoff starts empty), and when newer results
// evicted the entry between the queue's front and its consumer. The turns parts in the
// queue carry the others; before them the consumer stored the newest turns only.
func TestLongSessionStoredWholeWithoutTheEntry(t *testing.T) {
	const turns, limit = 40, 64 << 10
	bounded := func(cfg *agentsessionprocessor.Config) { cfg.Emit.MaxSessionSpanBytes = limit }
	all := firstIndexes(turns)
	sessionSpans := func(batches []ptrace.Traces) []ptrace.Span {
		var out []ptrace.Span
		for _, td := range batches {
			eachEvalSpan(td, semconv.EvalKindAgentSession, func(sp ptrace.Span) {
				if _, ok := sp.Attributes().Get(semconv.AgentEvalSessionTurnsPart); ok {
					return
				}
				_, ok := sp.Attributes().Get(semconv.AgentEvalTurnsOmitted)
				require.True(t, ok, "the span leaves turns out")
				out = append(out, sp)
			})
		}
		require.Len(t, out, 1)
		return out
	}

	t.Run("evicted before the consumer", func(t *testing.T) {
		h := handoff.New(1 << 16)
		batches := runProcessorWith(t, longConversation(t, turns), h, 0, bounded)
		x := newTestExporterWithExtensions(t, retryingHandoffConfig(), nil, handofftest.NewHost(h))
		ctx := context.Background()
		var queued []ptrace.Traces
		for _, td := range batches {
			queued = append(queued, x.exp.evaluationSpans(ctx, td)) // the front, then the queue
		}
		for _, sp := range sessionSpans(batches) {
			_, ok := h.TakeAnalysis(handoff.KeyOf(sp)) // newer results pushed it out
			require.True(t, ok)
		}
		for _, td := range queued {
			if td.SpanCount() > 0 {
				require.NoError(t, x.exp.pushTraces(ctx, td))
			}
		}
		assert.Equal(t, all, storedTurnIndexes(t, x), "every turn, from the queue's copy")
	})

	t.Run("persistent queue replayed after a restart", func(t *testing.T) {
		h := handoff.New(1 << 16)
		batches := runProcessorWith(t, longConversation(t, turns), h, 0, bounded)
		sessionSpans(batches)
		queueDir, dsn := t.TempDir(), filepath.Join(t.TempDir(), "agenteval.db")
		ext, stopExt := storagetest.StartFileStorage(t, queueDir)
		cfg := persistentConfig(dsn)
		cfg.Handoff = &handofftest.ID
		extensions := handofftest.NewHost(h)
		extensions[storagetest.FileStorageID] = ext
		down := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
		x := startTestExporter(t, cfg, func(e *agentEvalExporter) {
			e.openStore = func(context.Context, string, string) (store.Store, error) { return nil, down }
			e.connectBackoff = time.Hour
		}, extensions)
		for _, td := range batches {
			require.NoError(t, x.consume(td))
		}
		require.NoError(t, x.te.Shutdown(context.Background()))
		stopExt()

		// The restarted process: the same queue directory, an empty handoff, another key.
		ext2, _ := storagetest.StartFileStorage(t, queueDir)
		cfg2 := persistentConfig(dsn)
		cfg2.Handoff = &handofftest.ID
		cfg2.SigningKey = "a-new-process-has-a-new-key"
		extensions2 := handofftest.NewHost(handoff.New(1 << 16))
		extensions2[storagetest.FileStorageID] = ext2
		x2 := newTestExporterWithExtensions(t, cfg2, nil, extensions2)
		require.Eventually(t, func() bool { return len(x2.sessionIDs("")) == 1 }, 20*time.Second, 20*time.Millisecond)
		assert.Equal(t, all, storedTurnIndexes(t, x2), "every turn, from the persistent queue")
	})
}

// storedTurnIndexes returns the turn indexes of the one session x's API lists.
func storedTurnIndexes(t *testing.T, x *testExporter) []int {
	t.Helper()
	var a evaluation.Analysis
	ids := x.sessionIDs("")
	require.Len(t, ids, 1)
	require.Equal(t, http.StatusOK, x.getJSON("/api/v1/agent_sessions/"+url.PathEscape(ids[0]), &a))
	var idx []int
	for _, tr := range a.TurnResults {
		idx = append(idx, tr.TurnIndex)
	}
	return idx
}

// firstIndexes returns 0, 1, ..., n-1.
func firstIndexes(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// storedCount is the exporter's otelcol_exporter_agenteval_analyses_stored so far.
func storedCount(t *testing.T, x *testExporter) int64 {
	t.Helper()
	m, err := x.tel.GetMetric("otelcol_exporter_agenteval_analyses_stored")
	if err != nil {
		return 0 // not recorded yet
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}
