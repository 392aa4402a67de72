// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package conventions

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// stringEndBytewise is stringEnd as it read each byte before it used bytes.IndexByte: a
// backslash escapes the byte after it, the first quote not escaped ends the string.
func stringEndBytewise(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errExSyntax
}

// TestStringEnd compares stringEnd with the byte-wise scan on random strings of quotes,
// backslashes and text (runs of backslashes of every parity before a quote, strings cut
// short), and checks it on what encoding/json writes.
func TestStringEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte{'"', '\\', '\\', 'a', 'é'}
	for n := range 20000 {
		data := make([]byte, 1+rng.IntN(24))
		data[0] = '"'
		for k := 1; k < len(data); k++ {
			data[k] = alphabet[rng.IntN(len(alphabet))]
		}
		wantEnd, wantErr := stringEndBytewise(data, 0)
		gotEnd, gotErr := stringEnd(data, 0)
		require.Equal(t, wantErr, gotErr, "case %d: %q", n, data)
		require.Equal(t, wantEnd, gotEnd, "case %d: %q", n, data)
	}
	for _, s := range []string{``, `a`, `\`, `\\`, `"`, `\"`, `a\\\"b"c`, "\\\\\"\\\"\\", "tab\there"} {
		enc, err := json.Marshal(s)
		require.NoError(t, err)
		doc := append(append([]byte(`x`), enc...), `,"next"`...)
		end, err := stringEnd(doc, 1)
		require.NoError(t, err, "%q", doc)
		require.Equal(t, 1+len(enc), end, "%q", doc)
	}
}

// BenchmarkStringEnd scans a 4 KiB message text with a few escapes, with stringEnd and
// with the byte-wise scan it replaced.
func BenchmarkStringEnd(b *testing.B) {
	text := make([]byte, 0, 4<<10)
	text = append(text, '"')
	for len(text) < 4<<10-2 {
		text = append(text, "The refund of $120.50 for order #12345 is on its way, \\\"as agreed\\\". "...)
	}
	text = append(text, '"')
	for _, bc := range []struct {
		name string
		f    func([]byte, int) (int, error)
	}{{"indexbyte", stringEnd}, {"bytewise", stringEndBytewise}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if end, err := bc.f(text, 0); err != nil || end != len(text) {
					b.Fatal(end, err)
				}
			}
		})
	}
}
