package anonymize

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// KeySize is the length of a key in bytes; its printable form is twice as
// many hexadecimal digits.
const KeySize = 32

// NewKey returns a fresh random key and its printable form, which the
// export prints once so that a later export of the same cluster can be
// given it and map every name the same way.
func NewKey() ([]byte, string) {
	key := make([]byte, KeySize)
	rand.Read(key) // never returns an error (crypto/rand, Go ≥ 1.24)
	return key, hex.EncodeToString(key)
}

// ParseKey reads a key in the printable form NewKey returns.
func ParseKey(s string) ([]byte, error) {
	key, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(key) != KeySize {
		return nil, fmt.Errorf("anonymize key: not %d hexadecimal digits; give the key an earlier --anonymize export printed, or none for a new one", 2*KeySize)
	}
	return key, nil
}
