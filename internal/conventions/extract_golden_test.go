// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update is the golden update flag every package uses (-update): here it rewrites
// testdata/extract/*.records.json.
var update = flag.Bool("update", false, "rewrite testdata/extract/*.records.json")

// TestExtractGolden pins the complete SpanRecords of every fixture, so that any change in
// what the adapter reads shows up as a reviewable diff (TestExtractFixtures states the
// expectations that matter by hand; regenerate with -update after checking
// them).
func TestExtractGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.otlp.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	ex := NewExtractor(Config{EndAttribute: "agent_eval.session.end"})
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".otlp.json")
		t.Run(name, func(t *testing.T) {
			_, all := fixtureRecords(t, ex, f)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(all))
			golden := filepath.Join("testdata", "extract", name+".records.json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -run TestExtractGolden -update")
			assert.Equal(t, string(want), buf.String())
		})
	}
}
