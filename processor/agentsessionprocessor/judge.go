// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/pkg/reference"
	"github.com/agenteval/agenteval-collector/processor/agentsessionprocessor/internal/metadata"
)

// transcriptBytes caps the transcript a session-level judge call carries.
const transcriptBytes = 32 << 10

// sessionJudge is the optional LLM judge (docs/judge.md): its client and worker pool, the
// sample, and the counters already turned into telemetry. Judge work never runs on the
// ingest path nor on the evaluation worker: it is queued on the judge's own pool.
type sessionJudge struct {
	client     *judge.Client
	cfg        judge.Config
	sampleRate float64
	lastStats  judge.Stats // recorded by recordJudge (worker only)
	// ledger holds each session to max_calls_per_session and max_tokens_per_session
	// across all its judge jobs (session metrics and the dataset case's interactions).
	ledger *judge.Ledger
}

func newSessionJudge(cfg judge.Config) (*sessionJudge, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	c, err := judge.New(cfg, []judge.Option{judge.WithCallHook(recordCall)})
	if err != nil {
		return nil, err
	}
	sj := &sessionJudge{client: c, cfg: cfg, sampleRate: 1,
		ledger: judge.NewLedger(*c.Config().MaxCallsPerSession, cfg.MaxTokensPerSession)}
	if cfg.SampleRate != nil {
		sj.sampleRate = *cfg.SampleRate
	}
	return sj, nil
}

// sampled: the session is in metric m's sample (sha256 of its conversation id, salted
// with the metric's name under sample_per_metric).
func (j *sessionJudge) sampled(sessionID string, m judge.Metric) bool {
	salt := ""
	if j.cfg.SamplePerMetric {
		salt = string(m)
	}
	return judge.Sampled(sessionID, j.sampleRate, salt)
}

// sessionMetrics are the configured metrics judged on every sampled session (all but
// interactions, which need a dataset case).
func (j *sessionJudge) sessionMetrics() []judge.Metric {
	if j == nil {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(j.cfg.Metrics), func(m judge.Metric) bool { return m == judge.MetricInteractions })
}

func (j *sessionJudge) shutdown(ctx context.Context) error {
	if j == nil {
		return nil
	}
	return j.client.Shutdown(ctx)
}

// recordJudge adds the judge's counters since the last call to the processor's telemetry
// and records its queue depth. Called from the worker (and at shutdown) only.
func (j *sessionJudge) recordJudge(ctx context.Context, tb *metadata.TelemetryBuilder) {
	if j == nil {
		return
	}
	st := j.client.Stats()
	recordJudgeStats(ctx, tb, st, j.lastStats)
	j.lastStats = st
	tb.ProcessorAgentsessionJudgeQueueDepth.Record(ctx, int64(st.QueueDepth))
}

// callSinkKey carries a job's callSink in its context, for the call hook.
type callSinkKey struct{}

// callSink collects the judge calls of one job.
type callSink struct {
	mu    sync.Mutex
	calls []judge.Call
}

func recordCall(ctx context.Context, c judge.Call) {
	if s, ok := ctx.Value(callSinkKey{}).(*callSink); ok {
		s.mu.Lock()
		s.calls = append(s.calls, c)
		s.mu.Unlock()
	}
}

func (s *callSink) drain() []judge.Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// addJudgeCallSpan appends a GenAI client span for one judge or embeddings call under
// parent ("chat {model}" or "embeddings {model}"), marked agent_eval.judge so that it is
// never evaluated.
func addJudgeCallSpan(b *evalBatch, parent ptrace.Span, c judge.Call) {
	sp := b.spans.AppendEmpty()
	sp.SetName(c.Operation + " " + c.Model)
	sp.SetKind(ptrace.SpanKindClient)
	sp.SetTraceID(parent.TraceID())
	sp.SetParentSpanID(parent.SpanID())
	sp.SetSpanID(newSpanID())
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(c.Start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(c.End))
	a := sp.Attributes()
	a.PutStr(semconv.GenAIOperationName, c.Operation)
	a.PutStr(semconv.GenAIRequestModel, c.Model)
	a.PutBool(semconv.AgentEvalJudge, true)
	if c.Server.Address != "" {
		a.PutStr(semconv.ServerAddress, c.Server.Address)
	}
	if c.Server.Port > 0 {
		a.PutInt(semconv.ServerPort, int64(c.Server.Port))
	}
	if c.InputTokens > 0 {
		a.PutInt(semconv.GenAIUsageInputTokens, c.InputTokens)
	}
	if c.OutputTokens > 0 {
		a.PutInt(semconv.GenAIUsageOutputTokens, c.OutputTokens)
	}
	if c.Err != nil {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(judge.CapErrorText(c.Err.Error()))
		a.PutStr(semconv.ErrorType, semconv.EvalErrorTypeJudgeError)
	}
}

// putVerdict adds a judge verdict (or its error) as a gen_ai.evaluation.result event.
// The reason is capped at judge.MaxReasonBytes (a case's joins one per interaction),
// the error text at judge.MaxErrorBytes: what reaches spans and stored rows is bounded.
func putVerdict(sp ptrace.Span, name string, v reference.JudgeVerdict, err error, prov judge.Provenance) ptrace.SpanEvent {
	var ev ptrace.SpanEvent
	if err != nil {
		ev = putScore(sp, name, nil, judge.CapErrorText(err.Error()))
		ev.Attributes().PutStr(semconv.ErrorType, semconv.EvalErrorTypeJudgeError)
	} else {
		ev = putScore(sp, name, &v.Score, judge.CapReason(v.Reason))
		label := semconv.EvalLabelFail
		if v.Pass {
			label = semconv.EvalLabelPass
		}
		ev.Attributes().PutStr(semconv.GenAIEvaluationScoreLabel, label)
	}
	putProvenance(ev.Attributes(), prov.ID, prov.Type, prov.Version)
	return ev
}

// submitSessionJudge queues the judgement of the configured session metrics (one call
// per metric, per agent for reasoning and response_quality, with that agent's rubric) and
// returns at once. The job emits an "evaluate judge" span, a child of the last turn's
// root, with one gen_ai.evaluation.result event per verdict and one chat span per call.
// The session analysis already emitted keeps its deterministic scores. chunk is the batch
// of the shard's chunk that evaluated the session: a job the pool refuses goes out in it
// (submitJob).
func (p *agentSessionProcessor) submitSessionJudge(chunk *evalBatch, s *session.AgentSession, a *evaluation.Analysis) {
	j := p.judge
	metrics := j.sessionMetrics()
	if len(s.Turns) == 0 {
		return
	}
	metrics = slices.DeleteFunc(metrics, func(m judge.Metric) bool { return !j.sampled(s.ID, m) })
	if len(metrics) == 0 {
		return
	}
	transcript := judge.Transcript(s, transcriptBytes)
	var agents []string
	for ti := range s.Turns {
		for ii := range s.Turns[ti].Interactions {
			if id := s.Turns[ti].Interactions[ii].AgentID; id != "" && !slices.Contains(agents, id) {
				agents = append(agents, id)
			}
		}
	}
	last := s.Turns[len(s.Turns)-1]
	sid, traceID, parentID, revision := s.ID, last.TraceID, last.RootSpanID, a.AnalysisRevision
	system := cmp.Or(j.cfg.SystemPrompt, judge.SessionMetricSystemPrompt)
	p.submitJob(chunk, sid, func(ctx context.Context, b *evalBatch) {
		sink := &callSink{}
		jctx := context.WithValue(ctx, callSinkKey{}, sink)
		sp, err := b.newSpan(sid, semconv.EvalKindJudge, traceID, parentID)
		if err != nil {
			return // counted in b.skipped, reported when b is emitted
		}
		sp.Attributes().PutStr(semconv.GenAIConversationID, sid)
		// failed is why the rest is not judged: the job was refused (queue full) or shut
		// down. Each planned verdict not obtained records it, so that none looks pending.
		var failed error
		for _, m := range metrics {
			targets := []string{""}
			if m.PerAgent() {
				targets = agents
			}
			for _, agent := range targets {
				if !j.nearThreshold(m, a, agent, p.cfg.Scoring.RecommendationThreshold) {
					continue
				}
				rubric := j.cfg.Rubric
				if agent != "" {
					rubric = j.cfg.RubricFor(agent)
				}
				verdict := func(v reference.JudgeVerdict, err error) {
					ev := putVerdict(sp, string(m), v, err, j.cfg.Provenance(string(m)))
					if agent != "" {
						ev.Attributes().PutStr(semconv.GenAIAgentName, agent)
					}
				}
				if failed == nil {
					failed = context.Cause(ctx)
				}
				if failed != nil {
					verdict(reference.JudgeVerdict{}, failed)
					continue
				}
				prompt := judge.MetricPrompt(m, transcript, agent, rubric)
				// The session is charged only for a call sent: not for a cached verdict nor
				// one refused by calls_per_minute.
				est := j.estimate(system, prompt)
				v, err := j.client.Judge(judge.WithCharge(jctx, func() error { return j.ledger.Spend(sid, est) }), reference.JudgeRequest{
					Evaluator: string(m), Node: agent, Rubric: rubric, System: system, Prompt: prompt,
				})
				if err != nil && ctx.Err() != nil {
					failed = context.Cause(ctx) // cut off by shutdown
					err = failed
				}
				if errors.Is(err, judge.ErrCostLimit) {
					p.telemetry.ProcessorAgentsessionJudgeCostLimited.Add(ctx, 1)
				}
				verdict(v, err)
			}
		}
		p.emitter.sealVerdicts(sp, revision)
		for _, c := range sink.drain() {
			addJudgeCallSpan(b, sp, c)
		}
	})
}

// judgeJob is one judge job: it adds its spans to b, an "evaluate judge" or "evaluate
// reference" span and one GenAI client span per judge call. ctx is cancelled with cause
// judge.ErrShutdown when the pool shuts down, and is so already (cause judge.ErrQueueFull
// or judge.ErrShutdown) for a job the pool refused: the job then makes no call and records
// that error as judge_error on each verdict it planned (DESIGN §5.6), so that no session's
// verdicts look pending for ever.
type judgeJob func(ctx context.Context, b *evalBatch)

// refusedJob is a judge job the pool refused, and the pool's error (runRefused).
type refusedJob struct {
	job   judgeJob
	cause error
}

// submitJob queues job on the judge's pool and returns at once. Run there, the job fills a
// batch of its own, emitted when it ends, seconds or minutes after the session's spans.
// A job the pool refuses (judge.ErrQueueFull, judge.ErrShutdown) is kept in chunk, the
// batch of the shard's chunk that evaluates the session, and run into it once the
// session's event is evaluated (runRefused): its spans go out with the chunk's, in the
// same ConsumeTraces call and after the same continuation-store writes, not in a call of
// their own, which under overload would be one more export and one more store
// transaction per session (docs/decisions/reference-and-judge.md).
func (p *agentSessionProcessor) submitJob(chunk *evalBatch, sid string, job judgeJob) {
	err := p.judge.client.Pool().Submit(func(ctx context.Context) {
		b := p.emitter.newBatch(time.Now())
		job(ctx, b)
		// Not cancelled with the job: what a job cut off by shutdown obtained is delivered.
		p.emit(context.WithoutCancel(ctx), b)
	})
	if err == nil {
		return
	}
	p.logger.Debug("judge job refused; its verdicts record the error", zap.String("session_id", sid), zap.Error(err))
	chunk.refused = append(chunk.refused, refusedJob{job: job, cause: err})
}

// runRefused runs into b the judge jobs the pool refused while b was filled (submitJob),
// in the order they were submitted, each with a context already cancelled with the
// pool's error as its cause. It forgets them before it runs them, so that each runs
// once even when one panics (the next event of the chunk would run them again), and a
// job that panics is logged without failing the event or the jobs after it: the
// event's own spans are already in b.
func (b *evalBatch) runRefused(logger *zap.Logger) {
	refused := b.refused
	b.refused = nil
	for _, r := range refused {
		runRefusedJob(logger, r, b)
	}
}

// runRefusedJob runs one refused job into b. A job that panics is logged, and the spans
// it had added are taken out of b: a half-built "evaluate judge" span has no signed
// verdicts, so a consumer could not tell it from a judge that is still working.
func runRefusedJob(logger *zap.Logger, r refusedJob, b *evalBatch) {
	mark := b.spans.Len()
	defer func() {
		if v := recover(); v != nil {
			logger.Error("a refused judge job panicked; its verdicts are not recorded", zap.Any("panic", v))
			i := 0
			b.spans.RemoveIf(func(ptrace.Span) bool {
				i++
				return i > mark
			})
		}
	}()
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(r.cause)
	r.job(ctx, b)
}

// estimate is the estimated cost in tokens of a judge call with these messages: its
// prompt (bytes / 4) and the most it may answer (max_tokens).
func (j *sessionJudge) estimate(system, prompt string) int {
	return judge.EstimateTokens(system, prompt) + j.client.Config().MaxTokens
}

// nearThreshold reports whether metric m for agent deserves a judge call under
// near_threshold_margin: its deterministic score (per-agent reasoning, response_quality)
// is within the margin of threshold, or it has none. Always true without a margin.
func (j *sessionJudge) nearThreshold(m judge.Metric, a *evaluation.Analysis, agent string, threshold float64) bool {
	if j.cfg.NearThresholdMargin <= 0 || a == nil {
		return true
	}
	sc, ok := a.PerAgentScores[agent]
	if !ok {
		return true
	}
	var v *float64
	switch m {
	case judge.MetricReasoning:
		v = sc.Reasoning
	case judge.MetricResponseQuality:
		v = sc.ResponseQuality
	}
	return v == nil || judge.NearThreshold(*v, threshold, j.cfg.NearThresholdMargin)
}
