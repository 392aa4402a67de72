// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenteval/agenteval-collector/internal/session"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenSessions are the hand-built sessions whose analyses are kept in testdata/:
// <name>.session.json is the input (for reading), <name>.analysis.json the output.
var goldenSessions = map[string]func() *session.AgentSession{
	"refund":     refundSession,
	"correction": correctionSession,
	"reask":      reaskSession,
	"clean":      cleanSession,
	"no_content": noContentSession,
	"errors":     errorSession,
}

func TestGoldenAnalyses(t *testing.T) {
	e := newEval(t)
	for name, build := range goldenSessions {
		t.Run(name, func(t *testing.T) {
			s := build()
			in, out := indentJSON(t, s), indentJSON(t, e.AnalyzeSession(s))
			inPath := filepath.Join("testdata", name+".session.json")
			outPath := filepath.Join("testdata", name+".analysis.json")
			if *update {
				require.NoError(t, os.WriteFile(inPath, in, 0o600))
				require.NoError(t, os.WriteFile(outPath, out, 0o600))
			}
			wantIn, err := os.ReadFile(inPath)
			require.NoError(t, err, "run go test -update to create the golden files")
			assert.Equal(t, string(wantIn), string(in), "the session built in Go differs from %s", inPath)
			wantOut, err := os.ReadFile(outPath)
			require.NoError(t, err)
			assert.Equal(t, string(wantOut), string(out), "analysis differs from %s (review, then go test -update)", outPath)

			// The golden session JSON decodes back to a session with the same analysis.
			var back session.AgentSession
			require.NoError(t, json.Unmarshal(wantIn, &back))
			assert.Equal(t, string(out), string(indentJSON(t, e.AnalyzeSession(&back))))
		})
	}
}

// indentJSON renders v as the goldens store it: indented, "<" and ">" unescaped.
func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	return b.Bytes()
}
