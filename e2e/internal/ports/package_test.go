// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package ports

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when one leaves a goroutine running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
