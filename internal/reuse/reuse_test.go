// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package reuse

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSliceClearsItsWholeCapacity(t *testing.T) {
	backing := []*int{new(int), new(int), new(int), new(int)}
	s := Slice(backing[:2], 8)
	assert.Empty(t, s)
	assert.Equal(t, 4, cap(s))
	for i, p := range s[:4] {
		assert.Nil(t, p, "element %d still points at the old value", i)
	}
}

func TestSliceOverTheLimitIsDropped(t *testing.T) {
	assert.Nil(t, Slice(make([]int, 3, 9), 8))
	assert.NotNil(t, Slice(make([]int, 3, 8), 8))
}

func TestMap(t *testing.T) {
	m := Map(map[string]int{"a": 1, "b": 2}, 2)
	assert.NotNil(t, m)
	assert.Empty(t, m)
	assert.Nil(t, Map(map[string]int{"a": 1, "b": 2, "c": 3}, 2))
}
