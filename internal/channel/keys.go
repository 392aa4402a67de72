// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel // import "github.com/agenteval/agenteval-collector/internal/channel"

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// KeyPrefix starts every API key: "aek_<key id: 16 hex digits>_<secret: 43 base64url
// characters (32 random bytes)>". The key id is stored in clear to find the key; the
// secret only as its SHA-256 (the secret is random and long, so a fast hash is enough: no
// dictionary applies), compared in constant time.
const KeyPrefix = "aek_"

const (
	keyIDBytes     = 8
	keySecretBytes = 32
)

// newKey returns a new API key and its stored form (without agent and time).
func newKey() (key string, keyID string, hash []byte) {
	var id [keyIDBytes]byte
	var secret [keySecretBytes]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go 1.24+)
	_, _ = rand.Read(secret[:])
	keyID = hex.EncodeToString(id[:])
	enc := base64.RawURLEncoding.EncodeToString(secret[:])
	sum := sha256.Sum256([]byte(enc))
	return KeyPrefix + keyID + "_" + enc, keyID, sum[:]
}

// parseKey splits a key into its id and the SHA-256 of its secret; ok is false for
// anything not shaped like a key.
func parseKey(key string) (keyID string, hash []byte, ok bool) {
	rest, found := strings.CutPrefix(key, KeyPrefix)
	if !found {
		return "", nil, false
	}
	keyID, secret, found := strings.Cut(rest, "_")
	if !found || len(keyID) != 2*keyIDBytes || len(secret) != base64.RawURLEncoding.EncodedLen(keySecretBytes) {
		return "", nil, false
	}
	if _, err := hex.DecodeString(keyID); err != nil {
		return "", nil, false
	}
	sum := sha256.Sum256([]byte(secret))
	return keyID, sum[:], true
}

// dummyHash is compared against when the key id is unknown.
var dummyHash = sha256.Sum256([]byte("agenteval-channel-unknown-key"))

// keyMatches compares two secret hashes in constant time.
func keyMatches(stored, presented []byte) bool {
	return subtle.ConstantTimeCompare(stored, presented) == 1
}

// newID returns prefix + 24 random hex digits (e.g. "eval_sess_3f9c...").
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
