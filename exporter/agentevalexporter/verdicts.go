// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/semconv"
	"github.com/agenteval/agenteval-collector/internal/store"
)

// decodeVerdicts reads the late judge verdicts of an authenticated `evaluate judge` or
// `evaluate reference` span: the parallel arrays semconv.AgentEvalVerdict*, one row per
// element. A span without them (from a processor that predates them) has none; arrays of
// different lengths or wrong types are an error.
func decodeVerdicts(span ptrace.Span) ([]store.JudgeVerdict, error) {
	a := span.Attributes()
	names, ok := a.Get(semconv.AgentEvalVerdictNames)
	if !ok {
		return nil, nil
	}
	sid, _ := a.Get(semconv.AgentEvalSessionID)
	kind, _ := a.Get(semconv.AgentEvalKind)
	rev, _ := a.Get(semconv.AgentEvalVerdictRevision)
	if sid.Str() == "" {
		return nil, fmt.Errorf("%s is empty", semconv.AgentEvalSessionID)
	}
	n := names.Slice().Len()
	slice := func(k string, typ pcommon.ValueType) (pcommon.Slice, error) {
		v, ok := a.Get(k)
		if !ok || v.Type() != pcommon.ValueTypeSlice || v.Slice().Len() != n {
			return pcommon.Slice{}, fmt.Errorf("%s: want %d elements", k, n)
		}
		for i := 0; i < n; i++ {
			if v.Slice().At(i).Type() != typ {
				return pcommon.Slice{}, fmt.Errorf("%s[%d]: want %s", k, i, typ)
			}
		}
		return v.Slice(), nil
	}
	cols := map[string]pcommon.ValueType{
		semconv.AgentEvalVerdictNames: pcommon.ValueTypeStr, semconv.AgentEvalVerdictAgents: pcommon.ValueTypeStr,
		semconv.AgentEvalVerdictScores: pcommon.ValueTypeDouble, semconv.AgentEvalVerdictPasses: pcommon.ValueTypeBool,
		semconv.AgentEvalVerdictReasons: pcommon.ValueTypeStr, semconv.AgentEvalVerdictErrors: pcommon.ValueTypeStr,
		semconv.AgentEvalVerdictVersions: pcommon.ValueTypeStr,
	}
	got := map[string]pcommon.Slice{}
	for k, typ := range cols {
		s, err := slice(k, typ)
		if err != nil {
			return nil, err
		}
		got[k] = s
	}
	out := make([]store.JudgeVerdict, n)
	for i := range out {
		v := store.JudgeVerdict{
			SessionID: sid.Str(), AnalysisRevision: int(rev.Int()), Kind: kind.Str(),
			Name:  got[semconv.AgentEvalVerdictNames].At(i).Str(),
			Agent: got[semconv.AgentEvalVerdictAgents].At(i).Str(),
			Pass:  got[semconv.AgentEvalVerdictPasses].At(i).Bool(), Reason: got[semconv.AgentEvalVerdictReasons].At(i).Str(),
			JudgeError:       got[semconv.AgentEvalVerdictErrors].At(i).Str(),
			EvaluatorVersion: got[semconv.AgentEvalVerdictVersions].At(i).Str(),
		}
		if sc := got[semconv.AgentEvalVerdictScores].At(i).Double(); !math.IsNaN(sc) && !math.IsInf(sc, 0) {
			v.Score = &sc
		}
		out[i] = v
	}
	return out, nil
}

// saveVerdicts stores late judge verdicts once the store is open (errStoreNotConnected
// before: the queue retries); a store without verdict support keeps none.
func (e *agentEvalExporter) saveVerdicts(ctx context.Context, vs []store.JudgeVerdict) error {
	if !e.isReady() {
		return errStoreNotConnected
	}
	if s, ok := e.store.(store.VerdictStore); ok {
		return s.SaveVerdicts(ctx, vs)
	}
	return nil
}

// JudgeVerdicts is the body of GET /api/v1/agent_sessions/{session_id}/judge_verdicts.
type JudgeVerdicts struct {
	SessionID string `json:"session_id"`
	// Verdicts are ordered by analysis revision, kind, name and agent; never null.
	Verdicts []store.JudgeVerdict `json:"verdicts"`
}

// getVerdicts handles GET /api/v1/agent_sessions/{session_id}/judge_verdicts: the judge's
// verdicts stored for the session, usually after its analysis (an empty list when it
// was not judged, or not yet).
func (a *queryAPI) getVerdicts(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("session_id")
	vs := []store.JudgeVerdict{}
	if s, ok := a.store.(store.VerdictStore); ok {
		got, err := s.JudgeVerdicts(r.Context(), id)
		if err != nil {
			a.storeFailure(w, "reading the judge verdicts of session "+strconv.Quote(echoID(id)), err)
			return
		}
		vs = got
	}
	writeJSON(w, http.StatusOK, JudgeVerdicts{SessionID: id, Verdicts: vs})
}
