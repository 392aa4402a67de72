// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package pdatautil

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestSpans(t *testing.T) {
	td := ptrace.NewTraces()
	for _, svc := range []string{"a", "b"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		for _, scope := range []string{"s1", "s2"} {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(scope)
			for _, name := range []string{"x", "y"} {
				ss.Spans().AppendEmpty().SetName(name)
			}
		}
	}
	rs := td.ResourceSpans().AppendEmpty() // empty scope spans: nothing yielded
	rs.ScopeSpans().AppendEmpty()

	var got []string
	for ref := range Spans(td) {
		svc, _ := ref.Resource.Attributes().Get("service.name")
		got = append(got, svc.Str()+"/"+ref.Scope.Name()+"/"+ref.Span.Name())
	}
	assert.Equal(t, []string{
		"a/s1/x", "a/s1/y", "a/s2/x", "a/s2/y",
		"b/s1/x", "b/s1/y", "b/s2/x", "b/s2/y",
	}, got)

	// Breaking out of the loop stops the walk.
	n := 0
	for range Spans(td) {
		n++
		if n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)
}
