package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

var testEncKey = bytes.Repeat([]byte{7}, EncryptionKeyBytes)

func newCookies(t *testing.T, signKey, encKey []byte, now func() time.Time) *Cookies {
	t.Helper()
	c, err := NewCookies(signKey, encKey, now)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewCookies(t *testing.T) {
	tests := []struct {
		name             string
		signKey, encKey  []byte
		ok, wantEncrypts bool
	}{
		{name: "signed only", signKey: testKey, ok: true},
		{name: "encrypted", signKey: testKey, encKey: testEncKey, ok: true, wantEncrypts: true},
		{name: "short signing key", signKey: testKey[:16]},
		{name: "16-byte encryption key", signKey: testKey, encKey: testEncKey[:16]},
		{name: "33-byte encryption key", signKey: testKey, encKey: append(testEncKey, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCookies(tt.signKey, tt.encKey, nil)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v; want ok %v", err, tt.ok)
			}
			if err == nil && c.Encrypts() != tt.wantEncrypts {
				t.Fatalf("Encrypts = %v", c.Encrypts())
			}
		})
	}
}

func samplePayload() CookiePayload {
	return CookiePayload{User: "u1", Email: "a@example.com", Organization: "o1", Partition: "e01",
		Roles: []string{"staff"}, Expiry: t0.Add(time.Hour)}
}

func TestCookiesRoundTrip(t *testing.T) {
	for _, encKey := range [][]byte{nil, testEncKey} {
		c := newCookies(t, testKey, encKey, fixed(t0))
		s, p, err := c.Encode(samplePayload())
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(s, "+/=") {
			t.Fatalf("token %q is not unpadded base64url", s)
		}
		if !p.Created.Equal(t0) || p.Identifier == "" {
			t.Fatalf("Encode did not fill Created and Identifier: %+v", p)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(s)
		if shown := bytes.Contains(raw, []byte("a@example.com")); shown == (encKey != nil) {
			t.Fatalf("encrypted %v, email in clear %v", encKey != nil, shown)
		}
		got, err := c.Validate(s, "e01")
		if err != nil {
			t.Fatal(err)
		}
		if got.Identifier != p.Identifier || got.User != "u1" || got.Email != "a@example.com" || got.Organization != "o1" ||
			got.Partition != "e01" || len(got.Roles) != 1 || !got.Created.Equal(t0) || !got.Expiry.Equal(t0.Add(time.Hour)) {
			t.Fatalf("Validate = %+v; encoded %+v", got, p)
		}
	}
	t.Run("nonce is random", func(t *testing.T) {
		c := newCookies(t, testKey, testEncKey, fixed(t0))
		p := samplePayload()
		p.Identifier = "fixed"
		a, _, _ := c.Encode(p)
		b, _, _ := c.Encode(p)
		if a == b {
			t.Fatal("two encryptions of one payload are equal")
		}
	})
	t.Run("expiry required", func(t *testing.T) {
		if _, _, err := newCookies(t, testKey, nil, fixed(t0)).Encode(CookiePayload{User: "u1"}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("too large", func(t *testing.T) {
		p := samplePayload()
		p.Roles = []string{strings.Repeat("r", MaxCookieBytes)}
		if _, _, err := newCookies(t, testKey, nil, fixed(t0)).Encode(p); err == nil {
			t.Fatal("no error")
		}
	})
}

// flip changes one byte of a cookie token's decoded form at offset (negative: from the end).
func flip(token string, offset int) string {
	raw, _ := base64.RawURLEncoding.DecodeString(token)
	if offset < 0 {
		offset += len(raw)
	}
	raw[offset] ^= 0x01
	return base64.RawURLEncoding.EncodeToString(raw)
}

// forgeCookie builds a version-1 cookie over any JSON with a MAC key derived from signKey.
func forgeCookie(signKey []byte, j string) string {
	m := hmac.New(sha256.New, signKey)
	m.Write([]byte(cookieMACContext))
	tag := hmac.New(sha256.New, m.Sum(nil))
	tag.Write([]byte{cookieSigned})
	tag.Write([]byte(j))
	return base64.RawURLEncoding.EncodeToString(append(append([]byte{cookieSigned}, j...), tag.Sum(nil)...))
}

func TestCookiesDecode(t *testing.T) {
	otherKey := []byte("ffffffffffffffffffffffffffffffff")
	signer := newCookies(t, testKey, nil, fixed(t0))
	sealer := newCookies(t, testKey, testEncKey, fixed(t0))
	signed, _, _ := signer.Encode(samplePayload())
	sealed, _, _ := sealer.Encode(samplePayload())
	expired := samplePayload()
	expired.Expiry = t0.Add(-time.Second)
	signedExpired, _, _ := signer.Encode(expired)

	tests := []struct {
		name     string
		codec    *Cookies
		token    string
		decrypt  bool
		validate bool   // Validate instead of Decode
		in       string // the partition it is read in; e01 (the payload's) when empty
		want     error
		msg      string
	}{
		{name: "signed", codec: signer, token: signed},
		{name: "signed, read by the encrypting codec", codec: sealer, token: signed},
		{name: "encrypted with decrypt", codec: sealer, token: sealed, decrypt: true},
		{name: "encrypted without decrypt", codec: sealer, token: sealed, want: ErrMalformed, msg: "encrypted"},
		{name: "encrypted, no key configured", codec: signer, token: sealed, decrypt: true, want: ErrUnauthenticated, msg: "no decryption key"},
		{name: "encrypted under another key", codec: newCookies(t, testKey, bytes.Repeat([]byte{8}, 32), nil), token: sealed,
			decrypt: true, want: ErrUnauthenticated, msg: "cannot be decrypted"},
		{name: "tampered payload", codec: signer, token: flip(signed, 5), want: ErrUnauthenticated, msg: "signature is invalid"},
		{name: "tampered tag", codec: signer, token: flip(signed, -1), want: ErrUnauthenticated, msg: "signature is invalid"},
		{name: "tampered ciphertext", codec: sealer, token: flip(sealed, 20), decrypt: true, want: ErrUnauthenticated, msg: "cannot be decrypted"},
		{name: "tampered nonce", codec: sealer, token: flip(sealed, 2), decrypt: true, want: ErrUnauthenticated, msg: "cannot be decrypted"},
		{name: "signed version claimed encrypted", codec: sealer, token: func() string {
			raw, _ := base64.RawURLEncoding.DecodeString(sealed)
			raw[0] = cookieSigned
			return base64.RawURLEncoding.EncodeToString(raw)
		}(), want: ErrUnauthenticated, msg: "signature is invalid"},
		{name: "signed with another key", codec: newCookies(t, otherKey, nil, nil), token: signed, want: ErrUnauthenticated, msg: "signature is invalid"},
		{name: "token key's MAC is not a cookie MAC", codec: signer, token: func() string {
			m := hmac.New(sha256.New, testKey)
			j := `{"User":"u1"}`
			m.Write(append([]byte{cookieSigned}, j...))
			return base64.RawURLEncoding.EncodeToString(append(append([]byte{cookieSigned}, j...), m.Sum(nil)...))
		}(), want: ErrUnauthenticated, msg: "signature is invalid"},
		{name: "unknown member", codec: signer, token: forgeCookie(testKey, `{"User":"u1","Admin":true}`), want: ErrUnauthenticated, msg: "malformed cookie"},
		{name: "unknown version", codec: signer, token: base64.RawURLEncoding.EncodeToString(append([]byte{9}, make([]byte, 40)...)),
			want: ErrUnauthenticated, msg: "unknown version"},
		{name: "empty", codec: signer, token: "", want: ErrUnauthenticated, msg: "malformed cookie"},
		{name: "not base64", codec: signer, token: "!!!", want: ErrUnauthenticated, msg: "malformed cookie"},
		{name: "padded base64", codec: signer, token: signed + "=", want: ErrUnauthenticated, msg: "malformed cookie"},
		{name: "too long", codec: signer, token: strings.Repeat("A", MaxCookieBytes+1), want: ErrUnauthenticated, msg: "longer than"},
		{name: "expired decodes", codec: signer, token: signedExpired},
		{name: "expired does not validate", codec: signer, token: signedExpired, validate: true, want: ErrUnauthenticated,
			msg: "cookie expired on 2026-03-01T11:59:59+00:00"},
		{name: "validate at the expiry instant", codec: newCookies(t, testKey, nil, fixed(t0.Add(time.Hour))), token: signed, validate: true,
			want: ErrUnauthenticated, msg: "cookie expired"},
		{name: "validate just before expiry", codec: newCookies(t, testKey, nil, fixed(t0.Add(time.Hour-time.Nanosecond))), token: signed, validate: true},
		{name: "validate decrypts", codec: sealer, token: sealed, validate: true},
		{name: "validate refuses tampering", codec: sealer, token: flip(sealed, 20), validate: true, want: ErrUnauthenticated},
		// Each partition signs with its own key: a cookie of e01 fails in e02 by its signature,
		// and is said to be of another partition, without repeating the name it gives.
		{name: "another partition's key, signed", codec: newCookies(t, otherKey, nil, nil), token: signed, in: "e02", validate: true,
			want: ErrUnauthenticated, msg: "the cookie signature is invalid in partition e02: the cookie says it is of another partition, and each partition signs with its own key"},
		{name: "another partition's key, encrypted", codec: newCookies(t, otherKey, testEncKey, fixed(t0)), token: sealed, in: "e02", validate: true,
			want: ErrUnauthenticated, msg: "the cookie signature is invalid in partition e02: the cookie says it is of another partition"},
		{name: "another partition's key, decode says so too", codec: newCookies(t, otherKey, nil, nil), token: signed, in: "e02",
			want: ErrUnauthenticated, msg: "invalid in partition e02: the cookie says it is of another partition"},
		{name: "validate refuses a genuine cookie of another partition", codec: signer, token: signed, in: "e02", validate: true,
			want: ErrUnauthenticated, msg: "cookie of another partition (e01)"},
		{name: "decode reads a genuine cookie of another partition", codec: signer, token: signed, in: "e02"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p *CookiePayload
			var err error
			in := tt.in
			if in == "" {
				in = "e01"
			}
			if tt.validate {
				p, err = tt.codec.Validate(tt.token, in)
			} else {
				p, err = tt.codec.Decode(tt.token, in, tt.decrypt)
			}
			checkErr(t, err, tt.want, tt.msg)
			if err == nil && p.User != "u1" {
				t.Fatalf("payload %+v", p)
			}
		})
	}
}
