// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package handofftest helps the tests of the handoff's users: a stand-in for the
// agenteval_handoff extension and for a host offering it, and the check that a
// handed-off result is what its evaluation span carries.
package handofftest // import "github.com/agenteval/agenteval-collector/internal/handoff/handofftest"

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agenteval/agenteval-collector/internal/evalspan"
	"github.com/agenteval/agenteval-collector/internal/evaluation"
	"github.com/agenteval/agenteval-collector/internal/handoff"
)

// ID is the id tests give the handoff extension.
var ID = component.MustNewID("agenteval_handoff")

// Extension stands in for the agenteval_handoff extension: a component that provides H.
type Extension struct {
	component.StartFunc
	component.ShutdownFunc
	H *handoff.Handoff
}

// Handoff returns H (handoff.Provider).
func (x Extension) Handoff() *handoff.Handoff { return x.H }

// Host is a component.Host that offers the extensions it holds.
type Host map[component.ID]component.Component

// GetExtensions returns the host's extensions (component.Host).
func (h Host) GetExtensions() map[component.ID]component.Component { return h }

// NewHost returns a Host holding one Extension of h under ID.
func NewHost(h *handoff.Handoff) Host { return Host{ID: Extension{H: h}} }

// Result is one turn or session evaluation span with the result handed off for it
// (Turn or Analysis set).
type Result struct {
	Span     ptrace.Span
	Turn     *evaluation.TurnResult
	Analysis *evaluation.Analysis
}

// AssertDecoded checks that every result equals what the exporter decodes from its span
// (evalspan.DecodeTurn, DecodeAnalysis): what makes skipping the decode safe. The only
// normalisation: an analysis' StartedAt and EndedAt are compared as instants (the wire
// carries them as RFC 3339 strings with nanoseconds and the zone offset, which lose the
// location's name and the monotonic reading). Run once the processor and the exporter
// are done, it also shows that nothing modified a result after it was handed off.
func AssertDecoded(t *testing.T, rs []Result) {
	t.Helper()
	require.NotEmpty(t, rs)
	for _, r := range rs {
		if r.Turn != nil {
			got, err := evalspan.DecodeTurn(r.Span.Attributes())
			require.NoError(t, err)
			assert.Equal(t, got, *r.Turn, "turn span %s", r.Span.SpanID())
			continue
		}
		got, err := evalspan.DecodeAnalysis(r.Span.Attributes())
		require.NoError(t, err)
		want := *r.Analysis
		assert.True(t, want.StartedAt.Equal(got.StartedAt) && want.EndedAt.Equal(got.EndedAt), "session span %s times", r.Span.SpanID())
		want.StartedAt, want.EndedAt = got.StartedAt, got.EndedAt
		assert.Equal(t, got, want, "session span %s", r.Span.SpanID())
	}
}
