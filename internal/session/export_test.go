// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package session

// Invariant checks of assembled turns, for the external tests.
var (
	CheckTurn        = asCheckTurn
	FirstOccurrences = asFirstOccurrences
)
