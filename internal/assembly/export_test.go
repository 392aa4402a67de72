// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package assembly

// Invariant checks of assembled turns, for the external tests.
var (
	CheckTurn        = checkTurn
	FirstOccurrences = firstOccurrences
)
