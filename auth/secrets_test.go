package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"
)

func TestNewSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 { // a leading '-' came one time in 64
		s, err := NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if s[0] == '-' {
			t.Fatalf("secret %q starts with '-': a command line reads it as an option", s)
		}
		if len(s) != 86 {
			t.Fatalf("secret %q has %d characters; want 86", s, len(s))
		}
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) != SecretBytes {
			t.Fatalf("secret %q is not %d bytes of unpadded base64url: %v", s, SecretBytes, err)
		}
		if seen[s] {
			t.Fatalf("secret %q repeated", s)
		}
		seen[s] = true
	}
}

func TestHashSecret(t *testing.T) {
	tests := []struct {
		name, secret, want string
	}{
		{name: "empty", secret: "", want: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "abc", secret: "abc", want: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HashSecret(tt.secret); got != tt.want {
				t.Fatalf("HashSecret(%q) = %s; want %s", tt.secret, got, tt.want)
			}
		})
	}
}

func TestNewSecretRecord(t *testing.T) {
	secret, rec, err := NewSecretRecord("e01", "u1", "o1", t0, SecretLifetime)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Hash != HashSecret(secret) || rec.Partition != "e01" || rec.UserIdentifier != "u1" ||
		rec.OrganizationIdentifier != "o1" || !rec.Created.Equal(t0) ||
		!rec.Expires.Equal(t0.Add(90*24*time.Hour)) || rec.Revoked != nil || len(rec.Identifier) != 36 {
		t.Fatalf("record %+v", rec)
	}
	if _, _, err := NewSecretRecord("e01", "u1", "o1", t0, 0); err == nil {
		t.Fatal("a zero lifetime was accepted")
	}
}

func TestCheck(t *testing.T) {
	live := &SecretRecord{Created: t0.Add(-time.Hour), Expires: t0.Add(time.Hour)}
	tests := []struct {
		name   string
		record *SecretRecord
		now    time.Time
		want   error
		msg    string
	}{
		{name: "live", record: live, now: t0},
		{name: "unknown", record: nil, now: t0, want: ErrUnauthenticated, msg: "unknown secret"},
		{name: "last instant before expiry", record: live, now: t0.Add(time.Hour - time.Nanosecond)},
		{name: "expired at its instant", record: live, now: t0.Add(time.Hour), want: ErrUnauthenticated,
			msg: "the secret expired on 2026-03-01T13:00:00+00:00"},
		{name: "expired long ago", record: live, now: t0.Add(100 * 24 * time.Hour), want: ErrUnauthenticated,
			msg: "the secret expired on"},
		{name: "revoked", record: &SecretRecord{Expires: t0.Add(time.Hour), Revoked: ptr(t0.Add(-time.Minute))},
			now: t0, want: ErrUnauthenticated, msg: "the secret was revoked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, Check(tt.record, tt.now), tt.want, tt.msg)
		})
	}
}

type secretStore map[string]*SecretRecord

func (s secretStore) SecretByHash(_ context.Context, partition, hash string) (*SecretRecord, error) {
	if partition == "down" {
		return nil, errors.New("database is down")
	}
	return s[hash], nil
}

func TestCheckSecret(t *testing.T) {
	store := secretStore{
		HashSecret("good"):    {Identifier: "s1", Partition: "e01", Expires: t0.Add(time.Hour)},
		HashSecret("expired"): {Identifier: "s2", Partition: "e01", Expires: t0},
		HashSecret("other"):   {Identifier: "s3", Partition: "e02", Expires: t0.Add(time.Hour)},
	}
	tests := []struct {
		name, partition, secret string
		wantID                  string
		want                    error
		msg                     string
	}{
		{name: "good", partition: "e01", secret: "good", wantID: "s1"},
		{name: "unknown", partition: "e01", secret: "nope", want: ErrUnauthenticated, msg: "unknown secret"},
		{name: "empty", partition: "e01", secret: "", want: ErrUnauthenticated, msg: "no secret"},
		{name: "expired", partition: "e01", secret: "expired", want: ErrUnauthenticated, msg: "expired"},
		{name: "record of another partition", partition: "e01", secret: "other", want: ErrUnauthenticated, msg: "unknown secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := CheckSecret(context.Background(), store, tt.partition, tt.secret, t0)
			checkErr(t, err, tt.want, tt.msg)
			if err == nil && rec.Identifier != tt.wantID {
				t.Fatalf("got record %s; want %s", rec.Identifier, tt.wantID)
			}
		})
	}
	t.Run("store failure is not a 401", func(t *testing.T) {
		_, err := CheckSecret(context.Background(), store, "down", "good", t0)
		if err == nil || errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("got %v; want a plain failure", err)
		}
	})
}
