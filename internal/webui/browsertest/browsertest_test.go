// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package browsertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMissingBrowserFailsInCI(t *testing.T) {
	tests := []struct {
		bin, ci string
		want    verdict
	}{
		{"/usr/bin/chromium", "true", verdictRun},
		{"/usr/bin/chromium", "", verdictRun},
		{"", "true", verdictFail},
		{"", "", verdictSkip},
		{"", "false", verdictSkip},
	}
	for _, tt := range tests {
		got, msg := missing(tt.bin, tt.ci)
		assert.Equal(t, tt.want, got, "bin=%q CI=%q", tt.bin, tt.ci)
		if got != verdictRun {
			assert.Contains(t, msg, "apt-get install chromium")
		}
	}
}

func TestChromiumEnvOverride(t *testing.T) {
	t.Setenv(ChromiumEnv, "/opt/chrome/chrome")
	assert.Equal(t, "/opt/chrome/chrome", Chromium())
	t.Setenv(ChromiumEnv, "")
	t.Setenv("PATH", t.TempDir())
	assert.Empty(t, Chromium())
}
