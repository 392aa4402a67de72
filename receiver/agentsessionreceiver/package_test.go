// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package agentsessionreceiver

import "os"

// removeLifecycleTestData clears the channel's SQLite store of the generated lifecycle
// test (metadata.yaml tests.config.channel.store.dsn) so that every run starts empty.
// TestMain calls it (metadata.yaml tests.goleak.setup).
func removeLifecycleTestData() {
	if err := os.RemoveAll(".lifecycle-test"); err != nil {
		panic(err)
	}
}
