// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyRoundTrip(t *testing.T) {
	key, id, hash := newKey()
	assert.Len(t, key, len(KeyPrefix)+16+1+43)
	gotID, gotHash, ok := parseKey(key)
	require.True(t, ok)
	assert.Equal(t, id, gotID)
	assert.True(t, keyMatches(hash, gotHash))
	assert.NotContains(t, string(hash), key[len(key)-43:], "the hash is not the secret")

	other, _, _ := newKey()
	assert.NotEqual(t, key, other)
	_, otherHash, _ := parseKey(other)
	assert.False(t, keyMatches(hash, otherHash))
	assert.False(t, keyMatches(hash, hash[:16]), "a truncated hash never matches")
}

func TestParseKeyRejects(t *testing.T) {
	key, _, _ := newKey()
	for _, k := range []string{
		"",
		"Bearer " + key,
		strings.TrimPrefix(key, KeyPrefix),
		key[:len(key)-1],
		key + "A",
		strings.Replace(key, "_", "-", 2),
		KeyPrefix + "zzzzzzzzzzzzzzzz_" + strings.Repeat("A", 43),
	} {
		_, _, ok := parseKey(k)
		assert.False(t, ok, "%q", k)
	}
}
