// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/judge"
	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

// Reference evaluator names of references.evaluators.
const (
	refToolSelection  = "tool_selection"
	refToolSequence   = "tool_sequence"
	refClassification = "classification"
	refTrajectory     = "trajectory"
	refInteractions   = "interactions"
)

var knownRefEvaluators = []string{refToolSelection, refToolSequence, refClassification, refTrajectory, refInteractions}

// refToolUse are the evaluators whose scores join tool_use_score (docs/scoring.md §11.4).
var refToolUse = []string{refToolSelection, refToolSequence, refTrajectory}

const (
	defaultRunIDAttribute   = semconv.AgentEvalDatasetRunID
	defaultCaseIDAttribute  = semconv.GenAIEvaluationCaseName
	defaultMaxTrackedTraces = 100_000
	matchedByFirstUserMsg   = "first_user_message"
)

// ReferencesConfig is the `references` block: evalaf dataset files and how a session is
// matched to one of their cases (docs/scoring.md §11.4).
type ReferencesConfig struct {
	// Datasets are evalaf dataset files (JSON arrays of {input, reference, metadata}).
	// Empty disables reference-based evaluation.
	Datasets []string `mapstructure:"datasets"`
	// CaseIDAttribute names the span (or resource) attribute carrying the case id of the
	// run, matched against each case's metadata.case_name / id / name, else
	// "case_<index>". Default gen_ai.evaluation.case.name (what strands-evals emits).
	CaseIDAttribute string `mapstructure:"case_id_attribute"`
	// RunIDAttribute names the attribute grouping the sessions of one dataset run, whose
	// report is GET /api/v1/reports/{run_id}. Default agent_eval.dataset.run.id.
	RunIDAttribute string `mapstructure:"run_id_attribute"`
	// MatchFirstUserMessage matches a session without a case id to the case whose input
	// equals its first user message (trimmed, case and spaces folded). Default true.
	MatchFirstUserMessage bool `mapstructure:"match_first_user_message"`
	// Evaluators run on every matched session: tool_selection, tool_sequence,
	// classification (on the final response), trajectory, interactions. An evaluator
	// whose expectation the case lacks is skipped. Default: tool_selection,
	// tool_sequence, interactions.
	Evaluators []string `mapstructure:"evaluators"`
	// Classes are the valid classes of the classification evaluator (reported).
	Classes []string `mapstructure:"classes"`
	// Trajectory configures the trajectory evaluator.
	Trajectory TrajectoryConfig `mapstructure:"trajectory"`
	// MaxTrackedTraces bounds the traces whose case and run ids are remembered until
	// their session ends (oldest forgotten first). Default 100000.
	MaxTrackedTraces int `mapstructure:"max_tracked_traces"`
}

// TrajectoryConfig configures the trajectory evaluator (agentevals / ADK modes).
type TrajectoryConfig struct {
	// Mode: strict (default), unordered, subset, superset, in_order, any_order; names are
	// case-insensitive (ADK's IN_ORDER) and ADK's EXACT is strict.
	Mode string `mapstructure:"mode"`
	// ArgsMode: exact (default), ignore, subset, superset; case-insensitive.
	ArgsMode string `mapstructure:"args_mode"`
	// ArgsOverrides: per tool name, an argument mode.
	ArgsOverrides map[string]string `mapstructure:"args_overrides"`
	// PartialCredit scores the matched fraction instead of 0/1.
	PartialCredit bool `mapstructure:"partial_credit"`
}

func (t TrajectoryConfig) options() reference.TrajectoryOptions {
	o := reference.TrajectoryOptions{
		Mode: reference.TrajectoryMode(t.Mode), ArgsMode: reference.ArgsMode(t.ArgsMode), PartialCredit: t.PartialCredit,
	}
	if len(t.ArgsOverrides) > 0 {
		o.ArgsOverrides = map[string]reference.ArgsMatcher{}
		for tool, m := range t.ArgsOverrides {
			o.ArgsOverrides[tool] = reference.ArgsMatcher{Mode: reference.ArgsMode(m)}
		}
	}
	return o
}

func defaultReferencesConfig() ReferencesConfig {
	return ReferencesConfig{
		CaseIDAttribute:       defaultCaseIDAttribute,
		RunIDAttribute:        defaultRunIDAttribute,
		MatchFirstUserMessage: true,
		Evaluators:            []string{refToolSelection, refToolSequence, refInteractions},
		MaxTrackedTraces:      defaultMaxTrackedTraces,
	}
}

func (c *ReferencesConfig) validate() error {
	var errs []error
	for i, d := range c.Datasets {
		if strings.TrimSpace(d) == "" {
			errs = append(errs, fmt.Errorf("references.datasets[%d]: must not be empty", i))
		} else if _, err := os.Stat(d); err != nil {
			// Read at the start; a missing file is reported here, at `otelcol validate`.
			errs = append(errs, fmt.Errorf("references.datasets[%d]: %w", i, err))
		}
	}
	if len(c.Datasets) == 0 {
		return errors.Join(errs...)
	}
	if c.CaseIDAttribute == "" {
		errs = append(errs, errors.New("references.case_id_attribute: must not be empty"))
	}
	if c.RunIDAttribute == "" {
		errs = append(errs, errors.New("references.run_id_attribute: must not be empty"))
	}
	if len(c.Evaluators) == 0 {
		errs = append(errs, errors.New("references.evaluators: must list at least one evaluator"))
	}
	for i, e := range c.Evaluators {
		if !slices.Contains(knownRefEvaluators, e) {
			errs = append(errs, fmt.Errorf("references.evaluators[%d]: unknown evaluator %q (want one of %s)", i, e, strings.Join(knownRefEvaluators, ", ")))
		}
	}
	if err := c.Trajectory.options().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("references.trajectory.%w", err))
	}
	if c.MaxTrackedTraces <= 0 {
		errs = append(errs, fmt.Errorf("references.max_tracked_traces: must be positive, got %d", c.MaxTrackedTraces))
	}
	return errors.Join(errs...)
}

// refRunner matches ended sessions to dataset cases and runs the reference evaluators. The
// ingest path only remembers, per trace, the case and run ids its spans carry.
type refRunner struct {
	cfg        ReferencesConfig
	logger     *zap.Logger
	examples   []reference.Example
	caseIDs    []string
	byCase     map[string]int
	byInput    map[string]int
	evaluators []reference.Evaluator
	versions   map[string]string

	judge     *sessionJudge // nil without a judge of interactions
	judgeEval reference.Evaluator
	judgeProv judge.Provenance

	mu     sync.Mutex
	traces map[pcommon.TraceID]traceRef
	order  []pcommon.TraceID // insertion order, for the bound
}

type traceRef struct{ caseID, runID string }

// newRefRunner loads the datasets and builds the evaluators; nil when no dataset is
// configured.
func newRefRunner(cfg ReferencesConfig, sj *sessionJudge, logger *zap.Logger) (*refRunner, error) {
	if len(cfg.Datasets) == 0 {
		return nil, nil
	}
	r := &refRunner{cfg: cfg, logger: logger, byCase: map[string]int{}, byInput: map[string]int{},
		versions: map[string]string{}, traces: map[pcommon.TraceID]traceRef{}}
	for i, path := range cfg.Datasets {
		exs, err := reference.LoadDataset(path)
		if err != nil {
			return nil, fmt.Errorf("references.datasets[%d]: %w", i, err)
		}
		for j, ex := range exs {
			id := reference.CaseID(ex, j)
			if _, dup := r.byCase[id]; dup {
				return nil, fmt.Errorf("references.datasets[%d]: case id %q appears twice", i, id)
			}
			r.byCase[id] = len(r.examples)
			if s, ok := ex.Input.(string); ok {
				if _, dup := r.byInput[foldText(s)]; !dup {
					r.byInput[foldText(s)] = len(r.examples)
				}
			}
			r.examples = append(r.examples, ex)
			r.caseIDs = append(r.caseIDs, id)
		}
	}
	for _, name := range cfg.Evaluators {
		var ev reference.Evaluator
		var conf any = name
		switch name {
		case refToolSelection:
			ev = reference.NewToolSelectionEvaluator(name)
		case refToolSequence:
			ev = reference.NewToolCallSequenceEvaluator(name)
		case refClassification:
			ev, conf = reference.NewClassificationEvaluator(name, cfg.Classes), cfg.Classes
		case refTrajectory:
			ev, conf = reference.NewTrajectoryMatchEvaluator(name, cfg.Trajectory.options()), cfg.Trajectory
		case refInteractions:
			ev = reference.NewInteractionsEvaluator(name, reference.InteractionsOptions{})
		}
		r.evaluators = append(r.evaluators, ev)
		r.versions[name] = judge.ConfigVersion(conf)
	}
	if sj != nil && sj.cfg.Judges(judge.MetricInteractions) && slices.Contains(cfg.Evaluators, refInteractions) {
		r.judge = sj
		r.judgeEval = reference.NewInteractionsEvaluator(refInteractions, reference.InteractionsOptions{
			Rubric: sj.cfg.Rubric, Rubrics: sj.cfg.Rubrics, SystemPrompt: sj.cfg.SystemPrompt,
			Judge: &costGuard{j: sj},
		})
		r.judgeProv = sj.cfg.Provenance(refInteractions)
	}
	return r, nil
}

// observe remembers the case and run ids of a span's trace (span attribute first, then
// resource). It runs on the ingest path: two attribute lookups, a lock only on a hit.
func (r *refRunner) observe(res pcommon.Resource, sp ptrace.Span) {
	caseID := attrStr(sp.Attributes(), res.Attributes(), r.cfg.CaseIDAttribute)
	runID := attrStr(sp.Attributes(), res.Attributes(), r.cfg.RunIDAttribute)
	if caseID == "" && runID == "" {
		return
	}
	tid := sp.TraceID()
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, known := r.traces[tid]
	cur.caseID = cmp.Or(cur.caseID, caseID)
	cur.runID = cmp.Or(cur.runID, runID)
	r.traces[tid] = cur
	if known {
		return
	}
	r.order = append(r.order, tid)
	for len(r.traces) > r.cfg.MaxTrackedTraces && len(r.order) > 0 {
		delete(r.traces, r.order[0])
		r.order = r.order[1:]
	}
	if len(r.order) > 2*r.cfg.MaxTrackedTraces { // compact ids of traces already forgotten
		r.order = slices.DeleteFunc(r.order, func(id pcommon.TraceID) bool { _, ok := r.traces[id]; return !ok })
	}
}

func attrStr(span, res pcommon.Map, key string) string {
	if v, ok := span.Get(key); ok {
		return v.AsString()
	}
	if v, ok := res.Get(key); ok {
		return v.AsString()
	}
	return ""
}

// refMatch is a session matched to a dataset case.
type refMatch struct {
	index     int
	runID     string
	matchedBy string
}

// matchSession finds the session's case: the case id seen on its traces, else its first
// user message. It forgets the session's traces. A nil runner matches nothing.
func (r *refRunner) matchSession(s *session.AgentSession) (refMatch, bool) {
	if r == nil {
		return refMatch{}, false
	}
	var ref traceRef
	r.mu.Lock()
	for _, t := range s.Turns {
		tid, err := decodeTraceID(t.TraceID)
		if err != nil {
			continue
		}
		if tr, ok := r.traces[tid]; ok {
			ref.caseID = cmp.Or(ref.caseID, tr.caseID)
			ref.runID = cmp.Or(ref.runID, tr.runID)
			delete(r.traces, tid)
		}
	}
	r.mu.Unlock()
	if ref.caseID != "" {
		if i, ok := r.byCase[ref.caseID]; ok {
			return refMatch{index: i, runID: ref.runID, matchedBy: r.cfg.CaseIDAttribute}, true
		}
		r.logger.Debug("session names a case that no dataset holds", zap.String("session_id", s.ID), zap.String("case", ref.caseID))
	}
	if r.cfg.MatchFirstUserMessage && len(s.Turns) > 0 {
		if i, ok := r.byInput[foldText(s.Turns[0].UserMessage)]; ok {
			return refMatch{index: i, runID: ref.runID, matchedBy: matchedByFirstUserMsg}, true
		}
	}
	return refMatch{}, false
}

func foldText(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// sessionOutput is what the evaluators read from a session: its tool calls in order
// (name and arguments), its agent interactions (node_name = agent, messages = output),
// and the last final response as output and classification.
func sessionOutput(s *session.AgentSession) map[string]any {
	calls := []any{}
	inters := []any{}
	final := ""
	for ti := range s.Turns {
		t := &s.Turns[ti]
		if t.FinalResponse != "" {
			final = t.FinalResponse
		}
		for ii := range t.Interactions {
			in := &t.Interactions[ii]
			inters = append(inters, map[string]any{"node_name": in.AgentID, "messages": in.Output})
			for _, st := range in.Steps {
				if st.Kind != session.StepToolCall || st.ToolCall == nil {
					continue
				}
				c := map[string]any{"name": st.ToolCall.ToolName}
				var args map[string]any
				if json.Unmarshal(st.ToolCall.Parameters, &args) == nil {
					c["args"] = args
				}
				calls = append(calls, c)
			}
		}
	}
	return map[string]any{"tool_calls": calls, "interactions": inters, "output": final, "classification": final}
}

// evaluate runs the deterministic reference evaluators on a matched session.
func (r *refRunner) evaluate(ctx context.Context, s *session.AgentSession, m refMatch) (reference.CaseResult, *evaluation.ReferenceScores) {
	ex := r.examples[m.index]
	cr := reference.Run(ctx, r.evaluators, ex, sessionOutput(s))
	cr.RunID, cr.CaseID, cr.SessionID, cr.MatchedBy = m.runID, r.caseIDs[m.index], s.ID, m.matchedBy
	rs := &evaluation.ReferenceScores{Results: cr}
	for _, name := range refToolUse {
		if res, ok := cr.Results[name]; ok {
			rs.ToolUse = append(rs.ToolUse, evaluation.NamedScore{Name: name, Score: res.Score})
		}
	}
	if res, ok := cr.Results[refInteractions]; ok {
		if v, ok := res.Details["dependency_compliance"].(float64); ok {
			rs.DependencyCompliance = &v
		}
	}
	return cr, rs
}

// putReferences adds the case result to the session span: case and run ids, pass and
// mean score, and one gen_ai.evaluation.result event per evaluator with its provenance.
func (r *refRunner) putReferences(sp ptrace.Span, cr *reference.CaseResult) {
	a := sp.Attributes()
	a.PutStr(semconv.GenAIEvaluationCaseName, cr.CaseID)
	if cr.RunID != "" {
		a.PutStr(semconv.AgentEvalDatasetRunID, cr.RunID)
	}
	a.PutBool(semconv.AgentEvalReferencePass, cr.Pass)
	a.PutDouble(semconv.AgentEvalReferenceScore, cr.Score)
	for _, ev := range r.evaluators {
		name := ev.Name()
		if res, ok := cr.Results[name]; ok {
			e := putScore(sp, name, &res.Score, res.Reason)
			label := semconv.EvalLabelFail
			if res.Pass {
				label = semconv.EvalLabelPass
			}
			e.Attributes().PutStr(semconv.GenAIEvaluationScoreLabel, label)
			putProvenance(e.Attributes(), name, semconv.EvaluatorTypeReference, r.versions[name])
		} else if msg, ok := cr.Errors[name]; ok {
			e := putScore(sp, name, nil, msg)
			e.Attributes().PutStr(semconv.ErrorType, semconv.EvalErrorTypeReferenceError)
			putProvenance(e.Attributes(), name, semconv.EvaluatorTypeReference, r.versions[name])
		}
	}
}

func putProvenance(m pcommon.Map, id, typ, version string) {
	m.PutStr(semconv.AgentEvalEvaluatorID, id)
	m.PutStr(semconv.AgentEvalEvaluatorType, typ)
	m.PutStr(semconv.AgentEvalEvaluatorVersion, version)
}

// wantsJudge reports whether the session's case gets a judge verdict: a judge is
// configured, the case expects interactions and the session is in the sample.
func (r *refRunner) wantsJudge(s *session.AgentSession, m refMatch) bool {
	if r.judge == nil {
		return false
	}
	if _, ok := r.examples[m.index].Metadata[reference.MetaExpectedInteractions]; !ok {
		return false
	}
	// A case that would pass max_calls_per_session (one call per interaction) or
	// max_tokens_per_session is still submitted: its job records the cost limit instead
	// of calling (planJudge).
	return r.judge.sampled(s.ID, judge.MetricInteractions)
}

// submitJudge queues the judge's evaluation of the session's interactions on the judge
// pool and returns at once; the job emits an "evaluate reference" span (a child of the
// last turn's root) with the verdict, and one GenAI chat span per judge call marked
// agent_eval.judge so that it is never evaluated. A full queue drops the job: the
// deterministic result already emitted stays, and the span, emitted with chunk (the
// batch of the shard's chunk that evaluated the session), records judge_error "judge
// queue full" (submitJob).
func (p *agentSessionProcessor) submitJudge(chunk *evalBatch, s *session.AgentSession, m refMatch, caseID string, revision int) {
	r := p.refs
	ex := r.examples[m.index]
	output := sessionOutput(s)
	last := s.Turns[len(s.Turns)-1]
	sid, traceID, parentID := s.ID, last.TraceID, last.RootSpanID
	p.submitJob(chunk, sid, func(ctx context.Context, b *evalBatch) {
		sink := &callSink{}
		var res reference.Result
		// A job refused (queue full) or shut down before it ran records why as the
		// case's judge_error (submitJob).
		err := context.Cause(ctx)
		if err == nil {
			var run *caseCost
			if run, err = r.planJudge(ctx, sid, ex, output); err != nil {
				p.telemetry.ProcessorAgentsessionJudgeCostLimited.Add(ctx, int64(run.total))
			} else {
				jctx := context.WithValue(context.WithValue(ctx, callSinkKey{}, sink), caseCostKey{}, run)
				res, err = r.judgeEval.Evaluate(jctx, ex, output)
				run.reserved.Release() // what the case reserved and did not use
				if run.skipped > 0 {
					p.telemetry.ProcessorAgentsessionJudgeCostLimited.Add(ctx, int64(run.skipped))
				}
			}
			if _, failed := res.Details["judge_error"]; (err != nil || failed) && ctx.Err() != nil {
				err = context.Cause(ctx) // cut off by shutdown
			}
		}
		// The session may continue meanwhile: the job keeps only what it captured.
		sp, serr := b.newSpan(sid, semconv.EvalKindReference, traceID, parentID)
		if serr != nil {
			return // counted in b.skipped, reported when b is emitted
		}
		a := sp.Attributes()
		a.PutStr(semconv.GenAIConversationID, sid)
		a.PutStr(semconv.GenAIEvaluationCaseName, caseID)
		if m.runID != "" {
			a.PutStr(semconv.AgentEvalDatasetRunID, m.runID)
		}
		// The evaluator keeps its deterministic result when the judge fails (judge_error):
		// that is no judge verdict, so the llm_judge one has no score, only the error.
		if je, ok := res.Details["judge_error"].(string); err == nil && ok {
			err = errors.New(je)
		}
		putVerdict(sp, refInteractions, reference.JudgeVerdict{Score: res.Score, Pass: res.Pass, Reason: res.Reason}, err, r.judgeProv)
		p.emitter.sealVerdicts(sp, revision)
		for _, c := range sink.drain() {
			addJudgeCallSpan(b, sp, c)
		}
	})
}

// caseCostKey carries a case judge job's caseCost in its context, for costGuard.
type caseCostKey struct{}

// caseCost is the spending of the judge job of one case's interactions. In a dry run
// (planJudge) the guard only counts the calls and their estimated tokens; in the real
// run it charges them to the case's reservation on the session's ledger.
type caseCost struct {
	dry           bool
	calls, tokens int                // counted by the dry run
	reserved      *judge.Reservation // the real run's reservation (planJudge)
	total         int                // calls the case needs (from the dry run; 0 without a limit)
	skipped       int                // calls skipped by a limit during the real run
}

// costGuard is the interactions evaluator's judge: the judge client, held to the
// per-session cost limits (max_calls_per_session, max_tokens_per_session) through the
// reservation of the job whose caseCost is in the call's context.
type costGuard struct{ j *sessionJudge }

func (g *costGuard) Judge(ctx context.Context, req reference.JudgeRequest) (reference.JudgeVerdict, error) {
	c, ok := ctx.Value(caseCostKey{}).(*caseCost)
	if !ok {
		return g.j.client.Judge(ctx, req)
	}
	est := g.j.estimate(req.System, req.Prompt)
	if c.dry {
		c.calls, c.tokens = c.calls+1, c.tokens+est
		return reference.JudgeVerdict{Score: 1, Pass: true}, nil
	}
	// Charged only when sent (not for a cached verdict nor one refused by
	// calls_per_minute): what the case reserved and did not use is released at its end.
	limited := false
	v, err := g.j.client.Judge(judge.WithCharge(ctx, func() error {
		err := c.reserved.Spend(est)
		limited = err != nil
		return err
	}), req)
	if limited {
		// The evaluator stops at the first error: this call and the ones after it are skipped.
		c.skipped = max(1, c.total-req.Index)
	}
	return v, err
}

// planJudge reserves on the session's ledger what a case's judge job will spend, all or
// nothing, and returns the job's cost record holding the reservation; when the job's
// calls or estimated tokens would pass max_calls_per_session or max_tokens_per_session
// (alone, or with what the session's other judge job has spent or reserved), it returns
// the error (wrapping judge.ErrCostLimit) that skips it whole: the case's verdict needs
// a verdict on every interaction, so a judgement cut short would waste the calls made.
// The job is estimated by a dry run of the evaluator (the same prompts, placeholder
// verdicts with empty reasons); the real last prompts quote the real reasons, a little
// longer, so costGuard charges every call again, drawing any excess over the
// reservation from the ledger.
func (r *refRunner) planJudge(ctx context.Context, sid string, ex reference.Example, output any) (*caseCost, error) {
	j := r.judge
	maxCalls := *j.client.Config().MaxCallsPerSession // defaults applied
	if maxCalls <= 0 && j.cfg.MaxTokensPerSession <= 0 {
		res, _ := j.ledger.Reserve(sid, 0, 0) // no limit: reserves and refuses nothing
		return &caseCost{reserved: res}, nil
	}
	plan := &caseCost{dry: true}
	_, _ = r.judgeEval.Evaluate(context.WithValue(ctx, caseCostKey{}, plan), ex, output)
	run := &caseCost{total: plan.calls}
	if n := maxCalls; n > 0 && plan.calls > n {
		return run, fmt.Errorf("%w: max_calls_per_session %d (the case needs %d calls)", judge.ErrCostLimit, n, plan.calls)
	}
	if n := j.cfg.MaxTokensPerSession; n > 0 && plan.tokens > n {
		return run, fmt.Errorf("%w: max_tokens_per_session %d (the case needs ~%d)", judge.ErrCostLimit, n, plan.tokens)
	}
	res, err := j.ledger.Reserve(sid, plan.calls, plan.tokens)
	if err != nil {
		return run, err
	}
	run.reserved = res
	return run, nil
}
