// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionprocessor // import "github.com/agenteval/agenteval-collector/processor/agentsessionprocessor"

import (
	"math"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
)

// sealVerdicts writes the verdicts of a judge or reference span sp (its
// gen_ai.evaluation.result events) as the typed arrays of semconv.AgentEvalVerdict*,
// with the analysis revision they judge, and signs sp, so that the exporter stores them
// as late verdict rows of the session (docs/decisions/reference-and-judge.md). Call it
// once every verdict event is on sp.
func (e *emitter) sealVerdicts(sp ptrace.Span, revision int) {
	a := sp.Attributes()
	a.PutInt(semconv.AgentEvalVerdictRevision, int64(revision))
	names := a.PutEmptySlice(semconv.AgentEvalVerdictNames)
	agents := a.PutEmptySlice(semconv.AgentEvalVerdictAgents)
	scores := a.PutEmptySlice(semconv.AgentEvalVerdictScores)
	passes := a.PutEmptySlice(semconv.AgentEvalVerdictPasses)
	reasons := a.PutEmptySlice(semconv.AgentEvalVerdictReasons)
	errs := a.PutEmptySlice(semconv.AgentEvalVerdictErrors)
	versions := a.PutEmptySlice(semconv.AgentEvalVerdictVersions)
	str := func(ev ptrace.SpanEvent, k string) string {
		if v, ok := ev.Attributes().Get(k); ok {
			return v.AsString()
		}
		return ""
	}
	for i := 0; i < sp.Events().Len(); i++ {
		ev := sp.Events().At(i)
		if ev.Name() != semconv.EventEvaluationResult {
			continue
		}
		score := math.NaN()
		if v, ok := ev.Attributes().Get(semconv.GenAIEvaluationScoreValue); ok {
			score = v.Double()
		}
		reason, judgeErr := str(ev, semconv.GenAIEvaluationExplanation), ""
		if str(ev, semconv.ErrorType) == semconv.EvalErrorTypeJudgeError {
			// A judge error is a verdict without a score, its error as explanation
			// (putVerdict): stored as score null with judge_error.
			judgeErr, reason = reason, ""
		}
		names.AppendEmpty().SetStr(str(ev, semconv.GenAIEvaluationName))
		agents.AppendEmpty().SetStr(str(ev, semconv.GenAIAgentName))
		scores.AppendEmpty().SetDouble(score)
		passes.AppendEmpty().SetBool(str(ev, semconv.GenAIEvaluationScoreLabel) == semconv.EvalLabelPass)
		reasons.AppendEmpty().SetStr(reason)
		errs.AppendEmpty().SetStr(judgeErr)
		versions.AppendEmpty().SetStr(str(ev, semconv.AgentEvalEvaluatorVersion))
	}
	e.signer.Sign(a)
}
