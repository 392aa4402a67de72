// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package pdatautil holds the pdata traversal the components share.
package pdatautil // import "github.com/agenteval/agenteval-collector/internal/pdatautil"

import (
	"iter"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// SpanRef is one span of a ptrace.Traces with its resource and instrumentation scope.
type SpanRef struct {
	Resource pcommon.Resource
	Scope    pcommon.InstrumentationScope
	Span     ptrace.Span
}

// Spans yields every span of td in order: resource spans, then scope spans, then spans.
func Spans(td ptrace.Traces) iter.Seq[SpanRef] {
	return func(yield func(SpanRef) bool) {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rs := rss.At(i)
			sss := rs.ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j)
				spans := ss.Spans()
				for k := 0; k < spans.Len(); k++ {
					if !yield(SpanRef{Resource: rs.Resource(), Scope: ss.Scope(), Span: spans.At(k)}) {
						return
					}
				}
			}
		}
	}
}
