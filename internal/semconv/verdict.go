// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package semconv // import "github.com/agenteval/agenteval-collector/internal/semconv"

// Late judge verdicts (docs/decisions/reference-and-judge.md): the `evaluate judge` and
// `evaluate reference` spans carry their verdicts, besides the gen_ai.evaluation.result
// events, as typed parallel arrays (one element per verdict) under the signed
// agent_eval.session. prefix, so that the exporter stores them as verdict rows of the
// session without decoding events, and only when the processor signed them.
const (
	AgentEvalVerdictPrefix = AgentEvalSessionPrefix + "verdict."
	// AgentEvalVerdictRevision (int) is the analysis revision the verdicts judge.
	AgentEvalVerdictRevision = AgentEvalVerdictPrefix + "analysis_revision"
	// Per verdict: the metric or evaluator name, the agent ("" for the session), the
	// score (double; NaN without one), pass (bool), the judge's reason, the judge
	// error ("" when judged) and the evaluator version (provenance).
	AgentEvalVerdictNames    = AgentEvalVerdictPrefix + "names"
	AgentEvalVerdictAgents   = AgentEvalVerdictPrefix + "agents"
	AgentEvalVerdictScores   = AgentEvalVerdictPrefix + "scores"
	AgentEvalVerdictPasses   = AgentEvalVerdictPrefix + "passes"
	AgentEvalVerdictReasons  = AgentEvalVerdictPrefix + "reasons"
	AgentEvalVerdictErrors   = AgentEvalVerdictPrefix + "errors"
	AgentEvalVerdictVersions = AgentEvalVerdictPrefix + "evaluator_versions"
)

// IsVerdictKind reports whether an agent_eval.kind carries late judge verdicts.
func IsVerdictKind(kind string) bool { return kind == EvalKindJudge || kind == EvalKindReference }
