package engine

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Hash is how a write-only member is stored (FieldSpec.Hash).
type Hash string

// HashArgon2id stores a salted argon2id hash in the PHC string format
// `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>` (unpadded standard base64).
const HashArgon2id Hash = "argon2id"

// The argon2id cost: OWASP's password storage recommendation (19 MiB, two passes, one
// thread), about 30 ms per value on the machines credo is measured on. A hash is made only
// when a client writes the member, never when a record is read.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// hashValue returns the stored form of a value given for a member hashed with h.
func hashValue(h Hash, plain string) (string, error) {
	switch h {
	case HashArgon2id:
		salt := make([]byte, argonSaltLen)
		if _, err := rand.Read(salt); err != nil {
			return "", fmt.Errorf("engine: hash: %w", err)
		}
		key := argon2.IDKey([]byte(plain), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
		b64 := base64.RawStdEncoding
		return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime,
			argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
	}
	return "", fmt.Errorf("engine: unknown hash %q", h)
}

// VerifyHash reports whether plain is the value behind a stored argon2id PHC string. The
// parameters are read from the string, so values hashed with an older cost still verify.
// A string that is not such a hash never matches.
func VerifyHash(encoded, plain string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != string(HashArgon2id) {
		return false
	}
	var version int
	var memory, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil || threads == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(plain), salt, time, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// hashGiven replaces the values a client gave (given) for hashed members by their hashes.
// Only given values are hashed: a PATCH merges the stored hash of a member it does not name,
// and that must be written back as it is, not hashed again. An empty or null value stays as
// it is: it means "none".
func hashGiven(r *Resource, rec Record, given []bool) error {
	for _, f := range r.hashed {
		s, _ := rec[f.Index].(string)
		if !given[f.Index] || s == "" {
			continue
		}
		h, err := hashValue(f.Hash, s)
		if err != nil {
			return err
		}
		rec[f.Index] = h
	}
	return nil
}
