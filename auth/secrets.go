package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// SecretBytes is the number of random bytes in a client secret (decisions §7).
const SecretBytes = 64

// SecretLifetime is how long a client secret stays usable after its creation (api.md,
// Authentication 8).
const SecretLifetime = 90 * 24 * time.Hour

// NewSecret returns a new client secret: SecretBytes bytes from crypto/rand, base64url-encoded
// without padding (86 characters). The value is shown to its owner once and stored only as
// HashSecret's hash. It never starts with '-': one in 64 did, and a command line taking it as
// an argument (credo secret revoke, curl -u) read it as an option. Drawing again drops under
// 0.03 of the 512 bits of entropy.
func NewSecret() (string, error) {
	b := make([]byte, SecretBytes)
	for {
		if _, err := rand.Read(b); err != nil {
			return "", fmt.Errorf("auth: new secret: %w", err)
		}
		if s := base64.RawURLEncoding.EncodeToString(b); s[0] != '-' {
			return s, nil
		}
	}
}

// HashSecret returns the lowercase hex SHA-256 of a secret, the only form in which secrets are
// stored and looked up.
//
// A fast, unsalted hash is right here, unlike for passwords: a secret carries 512 random bits,
// so neither a dictionary nor brute force over the hash can find it, and a salt would only stop
// the lookup by hash that makes checking a secret one indexed query. Looking up by hash also
// means the comparison never touches the secret itself, so its timing reveals nothing useful.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretRecord is a stored client secret. Storage keeps records per partition; the package
// never sees the secret itself after NewSecretRecord.
type SecretRecord struct {
	Identifier             string
	Hash                   string
	UserIdentifier         string
	OrganizationIdentifier string
	Partition              string
	Created                time.Time
	Expires                time.Time
	// Revoked is when the secret was revoked, nil while it is not.
	Revoked *time.Time
}

// NewSecretRecord creates a secret for a user acting in an organization of a partition and
// returns it with the record to store. The record's Identifier is a UUIDv7; it expires lifetime
// after now (SecretLifetime unless the operator asked otherwise).
func NewSecretRecord(partition, userID, organizationID string, now time.Time, lifetime time.Duration) (string, SecretRecord, error) {
	if lifetime <= 0 {
		return "", SecretRecord{}, fmt.Errorf("auth: new secret: lifetime %s is not positive", lifetime)
	}
	secret, err := NewSecret()
	if err != nil {
		return "", SecretRecord{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return "", SecretRecord{}, fmt.Errorf("auth: new secret: %w", err)
	}
	return secret, SecretRecord{
		Identifier:             id.String(),
		Hash:                   HashSecret(secret),
		UserIdentifier:         userID,
		OrganizationIdentifier: organizationID,
		Partition:              partition,
		Created:                now,
		Expires:                now.Add(lifetime),
	}, nil
}

// Check reports whether a secret's record lets it generate tokens at now. A nil record is an
// unknown secret. Errors wrap ErrUnauthenticated and their message is the reason, fit for a
// 401's Detail: "unknown secret", "the secret was revoked", "the secret expired on …". A secret
// is expired from its Expires instant on.
func Check(record *SecretRecord, now time.Time) error {
	switch {
	case record == nil:
		return unauthenticated(ReasonUnknown, "unknown secret")
	case record.Revoked != nil:
		return unauthenticated(ReasonRevoked, "the secret was revoked on %s", formatTime(*record.Revoked))
	case !now.Before(record.Expires):
		return unauthenticated(ReasonExpired, "the secret expired on %s", formatTime(record.Expires))
	}
	return nil
}

// Secrets finds stored client secrets. Another package implements it over the partition's
// database.
type Secrets interface {
	// SecretByHash returns the record with a HashSecret hash in a partition, or nil and no
	// error when there is none.
	SecretByHash(ctx context.Context, partition, hash string) (*SecretRecord, error)
}

// CheckSecret finds a presented secret in a partition and checks it with Check. Errors wrap
// ErrUnauthenticated for a secret that may not be used; a storage error is returned wrapped as
// it is (a 500).
func CheckSecret(ctx context.Context, secrets Secrets, partition, secret string, now time.Time) (*SecretRecord, error) {
	if secret == "" {
		return nil, unauthenticated(ReasonMissing, "no secret")
	}
	rec, err := secrets.SecretByHash(ctx, partition, HashSecret(secret))
	if err != nil {
		return nil, fmt.Errorf("auth: find secret: %w", err)
	}
	if rec != nil && rec.Partition != "" && rec.Partition != partition {
		// Storage is per partition, so this is a bug elsewhere; refuse rather than trust it.
		rec = nil
	}
	if err := Check(rec, now); err != nil {
		return nil, err
	}
	return rec, nil
}

// formatTime writes an instant in UTC in the service's output form (decisions §3).
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05-07:00")
}
