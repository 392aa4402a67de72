// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLatency(t *testing.T) {
	trs := []TurnResult{
		{LatencyMs: 100, Interactions: []InteractionResult{{LatencyMs: 50, ToolCalls: []ToolCallResult{{LatencyMs: lat(10)}, {}}}}},
		{LatencyMs: 300, Interactions: []InteractionResult{{LatencyMs: 150, ToolCalls: []ToolCallResult{{LatencyMs: lat(30)}}}}},
	}
	assert.Equal(t, LatencySummary{TotalMs: 400, MeanTurnMs: 200, MaxTurnMs: 300, MeanInteractionMs: 100,
		ToolCalls: 2, MeanToolCallMs: 20, MaxToolCallMs: 30}, latency(0, trs))
	// The session's own total wins over the sum of the turns'.
	assert.InDelta(t, 1000, latency(1000, trs).TotalMs, 0)
	assert.Equal(t, LatencySummary{}, latency(0, nil))
}
