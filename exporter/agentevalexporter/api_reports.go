// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter // import "github.com/agenteval/agenteval-collector/exporter/agentevalexporter"

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval-collector/internal/store"
	"github.com/agenteval/agenteval-collector/pkg/reference"
)

// Report formats of GET /api/v1/reports/{run_id}.
const (
	reportFormatJSON     = "json"
	reportFormatMarkdown = "markdown"
	contentTypeMarkdown  = "text/markdown; charset=utf-8"
)

// getReport handles GET /api/v1/reports/{run_id}: the evalaf-style summary of a dataset
// run (reference.Summary: total_examples, passed_examples, pass_rate, average_score,
// evaluator_stats, failures), with the LLM judge's verdicts stored so far on the run's
// sessions (judge_stats, judge_failures; they leave the deterministic figures alone), as
// JSON, or as Markdown with ?format=markdown or an Accept header preferring
// text/markdown. 404 for a run without stored sessions.
func (a *queryAPI) getReport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkParams(q, "format"); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	format := q.Get("format")
	switch format {
	case "":
		format = reportFormatJSON
		if strings.Contains(r.Header.Get("Accept"), "text/markdown") {
			format = reportFormatMarkdown
		}
	case reportFormatJSON, reportFormatMarkdown:
	default:
		writeError(w, http.StatusBadRequest, (&paramError{param: "format", reason: "want json or markdown"}).Error())
		return
	}
	rs, ok := a.store.(store.RunStore)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this result store keeps no dataset runs")
		return
	}
	id := r.PathValue("run_id")
	cases, err := rs.ReferenceRun(r.Context(), id)
	if err != nil {
		a.storeFailure(w, "reading run "+strconv.Quote(id), err)
		return
	}
	if len(cases) == 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("run %q not found", id))
		return
	}
	verdicts, err := rs.RunVerdicts(r.Context(), id)
	if err != nil {
		a.storeFailure(w, "reading the judge verdicts of run "+strconv.Quote(id), err)
		return
	}
	summary := reference.Summarize(id, cases)
	summary.SetJudgeVerdicts(verdicts)
	if format == reportFormatMarkdown {
		w.Header().Set("Content-Type", contentTypeMarkdown)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(summary.Markdown()))
		return
	}
	writeJSON(w, http.StatusOK, summary)
}
