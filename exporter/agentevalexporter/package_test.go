// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentevalexporter

import "os"

// removeLifecycleTestData clears the SQLite store of the generated lifecycle test
// (metadata.yaml tests.config.store.dsn) so that every run starts from an empty store.
// TestMain calls it (metadata.yaml tests.goleak.setup).
func removeLifecycleTestData() {
	if err := os.RemoveAll(".lifecycle-test"); err != nil {
		panic(err)
	}
}
