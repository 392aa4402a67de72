// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSIP(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "SIP-5.md"))
	require.NoError(t, err)
	d, err := ParseSIP(data)
	require.NoError(t, err)
	assert.Equal(t, "non-spamminess", d.ID)
	assert.Equal(t, "Non-Spamminess", d.Name)
	assert.Equal(t, KindProctored, d.Type)
	assert.Equal(t, 5, d.SIP)
	assert.Equal(t, "safety", d.Module)
	assert.Equal(t, "draft", d.Status)
	assert.Equal(t, "1.0.0", d.Version)
	assert.Contains(t, d.Description, "# SIP-5: Non-Spamminess (proctored)")
	assert.NotContains(t, d.Description, "---")
}

func TestParseSIPErrors(t *testing.T) {
	tests := []struct {
		name, text, err string
	}{
		{"no front matter", "# SIP-9\nbody", "no YAML front matter"},
		{"unclosed", "---\nid: x\ntype: proctored\n", "not closed"},
		{"bad YAML", "---\nid: [x\n---\n", "YAML front matter"},
		{"missing id", "---\ntype: proctored\n---\n", `id: "" must be`},
		{"single-agent type", "---\nid: poaw\ntype: simple_pass_fail\n---\n", `type: "simple_pass_fail" is not served`},
		{"wrong YAML type", "---\nid: x\ntype: proctored\nsip: five\n---\n", "YAML front matter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSIP([]byte(tt.text))
			assert.ErrorContains(t, err, tt.err)
		})
	}
}

func TestParseSIPWindowsLineEndingsAndNameDefault(t *testing.T) {
	d, err := ParseSIP([]byte("\ufeff---\r\nid: class-1\r\ntype: live_class_work\r\n---\r\nWork together.\r\n"))
	require.NoError(t, err)
	assert.Equal(t, Definition{ID: "class-1", Name: "class-1", Type: KindLiveClassWork, Description: "Work together."}, d)
}

func TestLoadDefinitions(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.md"), []byte("---\nid: b\ntype: live_class_work\n---\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.md"), []byte("---\nid: a\ntype: proctored\n---\n"), 0o600))
	defs, err := LoadDefinitions([]Definition{{ID: "conf", Type: KindProctored}}, []string{filepath.Join(dir, "*.md")})
	require.NoError(t, err)
	var ids []string
	for _, d := range defs {
		ids = append(ids, d.ID)
	}
	assert.Equal(t, []string{"conf", "a", "b"}, ids, "configured first, then files by path")

	_, err = LoadDefinitions([]Definition{{ID: "a", Type: KindProctored}}, []string{filepath.Join(dir, "a.md")})
	assert.ErrorContains(t, err, `evaluation id "a" already defined by evaluations[0]`)
	_, err = LoadDefinitions([]Definition{{ID: "x"}}, nil)
	assert.ErrorContains(t, err, `evaluations[0]: type: "" is not served`)
	_, err = LoadDefinitions(nil, []string{"[bad"})
	assert.ErrorContains(t, err, "evaluation_files")
}

// FuzzParseSIP: any input gives a valid definition or an error, never a panic.
func FuzzParseSIP(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "SIP-5.md")); err == nil {
		f.Add(data)
	}
	f.Add([]byte("---\nid: a\ntype: proctored\n---\n"))
	f.Add([]byte("---\n---"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseSIP(data)
		if err == nil {
			require.NoError(t, d.Validate())
		}
	})
}
