// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package webui

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (SSE handlers, readers).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
