// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
	"github.com/agenteval/agenteval-collector/internal/text"
)

// TestEvaluatorListsAreConsistent: the lists name each component once, and an entry's
// name, weight and fields agree: the fields it locates are the ones whose JSON name is its
// name, its weight the AgentWeights field of that name, and a coordination component's
// explanation key is "coordination." + its name.
func TestEvaluatorListsAreConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, ev := range interactionEvaluators {
		assert.False(t, seen[ev.name], "%s listed twice", ev.name)
		seen[ev.name] = true
		var r InteractionResult
		var as AgentScores
		assert.Equal(t, ev.name, fieldTag(t, &r, ev.field(&r), "json"))
		assert.Equal(t, ev.name, fieldTag(t, &as, ev.agentField(&as), "json"))
		wv := reflect.ValueOf(&AgentWeights{}).Elem()
		for i := range wv.NumField() {
			var w AgentWeights
			reflect.ValueOf(&w).Elem().Field(i).SetFloat(1)
			own := wv.Type().Field(i).Tag.Get("mapstructure") == ev.name
			assert.Equal(t, own, ev.weight(w) == 1, "%s: weight %s", ev.name, wv.Type().Field(i).Name)
		}
	}

	seen = map[string]bool{}
	for _, comp := range coordinationComponents {
		assert.False(t, seen[comp.name()], "%s listed twice", comp.name())
		seen[comp.name()] = true
		assert.Equal(t, "coordination."+comp.name(), comp.key)
		var cc CoordinationComponents
		assert.Equal(t, comp.name(), fieldTag(t, &cc, comp.field(&cc), "json"))
	}
	assert.Len(t, turnDetectors, 4)
	assert.IsType(t, followUpDetector{}, turnDetectors[0], "RDM and CCM have the highest priority")
}

// fieldTag is the name in the tag key of the field of the struct *s at address f.
func fieldTag(t *testing.T, s any, f **float64, key string) string {
	t.Helper()
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if v.Field(i).Addr().Interface() == any(f) {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get(key), ",")
			return name
		}
	}
	require.Failf(t, "not a field", "%p is no field of %T", f, s)
	return ""
}

// TestFactsDedupesPastTheSmallSet: facts keeps the first occurrence of each fact, in
// order, whether it searches its slice (up to smallFacts) or a set (past it).
func TestFactsDedupesPastTheSmallSet(t *testing.T) {
	c := newEval(t).newCtx(&session.AgentSession{})
	var texts []string
	for i := range 3 {
		var b strings.Builder
		for j := range 25 {
			fmt.Fprintf(&b, "order ORD-%d%03d ", j%2, 100+j+i*10) // overlaps across texts
		}
		texts = append(texts, b.String())
	}
	var want []text.Fact
	seen := map[text.Fact]bool{}
	for _, s := range texts {
		for _, f := range text.SalientFacts(s) {
			if !seen[f] {
				seen[f] = true
				want = append(want, f)
			}
		}
	}
	require.Greater(t, len(want), smallFacts)
	require.Equal(t, want, c.facts(texts))
}
