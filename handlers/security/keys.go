package security

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"credo/auth"
	"credo/engine"
)

// signingKeyRow is the KeyName of the one signing key a partition stores.
const signingKeyRow = "tokens"

// storedKeyBytes is the size of a stored random signing key.
const storedKeyBytes = 32

// storedKey returns the partition's stored signing key, creating it on first use. When two
// processes create it at once, the second insert fails on the key and that process reads the
// first one's key, so every process of the partition signs alike.
func (rs *records) storedKey(ctx context.Context, st *engine.Store, now time.Time) ([]byte, error) {
	r := rs.signingKey
	if key, err := readKey(ctx, st, r); err == nil || !engine.IsNotFound(err) {
		return key, err
	}
	b := make([]byte, storedKeyBytes)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("security: new signing key: %w", err)
	}
	_, err := insert(ctx, st, r, map[string]any{
		"KeyName":    signingKeyRow,
		"KeyValue":   base64.StdEncoding.EncodeToString(b),
		"KeyCreated": dateTime(now),
	})
	if err != nil && !errors.Is(err, engine.ErrConflict) {
		return nil, fmt.Errorf("security: store the signing key of %s: %w", st.Partition, err)
	}
	return readKey(ctx, st, r)
}

func readKey(ctx context.Context, st *engine.Store, r *engine.Resource) ([]byte, error) {
	rec, err := st.Get(ctx, r, []any{signingKeyRow}, nil, engine.AllOrganizations())
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(str(r, rec, "KeyValue"))
	if err != nil || len(key) < auth.MinKeyBytes {
		return nil, fmt.Errorf("security: the stored signing key of %s is not %d+ bytes of base64", st.Partition, auth.MinKeyBytes)
	}
	return key, nil
}
