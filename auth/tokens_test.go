package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

const (
	testAudience = "credo-api"
	testIssuer   = "credo"
)

func newTokens(t *testing.T, now func() time.Time) *Tokens {
	t.Helper()
	tk, err := NewTokens(testKey, now, testAudience, testIssuer)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// forge signs arbitrary claims with a method and key, as an attacker (or a test) would.
func forge(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forgeHeader builds a token with any header, MAC-signed with key under HS256 whatever the
// header says: the algorithm-confusion attack.
func forgeHeader(header, claims map[string]any, key []byte) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	text := enc(header) + "." + enc(claims)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(text))
	return text + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// goodClaims are valid claims for partition e01 at t0.
func goodClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"sub": "u1", "user_email": "a@example.com", "org_id": "o1", "partition_slug": "e01",
		"role": []string{"learners"}, "jti": "j1", "aud": testAudience, "iss": testIssuer,
		"iat": t0.Add(-time.Minute).Unix(), "nbf": t0.Add(-time.Minute).Unix(), "exp": t0.Add(time.Hour).Unix(),
	}
}

func with(c jwt.MapClaims, kv ...any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

func TestNewTokens(t *testing.T) {
	tests := []struct {
		name          string
		key           []byte
		audience, iss string
		ok            bool
	}{
		{name: "good", key: testKey, audience: "a", iss: "i", ok: true},
		{name: "short key", key: testKey[:31], audience: "a", iss: "i"},
		{name: "no audience", key: testKey, iss: "i"},
		{name: "no issuer", key: testKey, audience: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewTokens(tt.key, nil, tt.audience, tt.iss)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v; want ok %v", err, tt.ok)
			}
		})
	}
}

func TestIssue(t *testing.T) {
	tk := newTokens(t, fixed(t0))
	tests := []struct {
		name     string
		claims   Claims
		lifetime int
		want     error
		wantJSON map[string]any // claims that must be present with these values
		absent   []string
	}{
		{
			name:     "default lifetime",
			claims:   Claims{Subject: "u1", Email: "a@example.com", Organization: "o1", Partition: "e01", Roles: []string{"learners", "staff"}},
			lifetime: DefaultLifetime,
			wantJSON: map[string]any{
				"sub": "u1", "user_email": "a@example.com", "org_id": "o1", "partition_slug": "e01",
				"role": []any{"learners", "staff"}, "aud": []any{testAudience}, "iss": testIssuer,
				"iat": float64(t0.Unix() - 60), "nbf": float64(t0.Unix() - 60), "exp": float64(t0.Unix() + 86400),
			},
			absent: []string{"user_debug", "role_debug"},
		},
		{
			name:     "no roles is an empty array",
			claims:   Claims{Subject: "u1", Partition: "e01"},
			lifetime: MinLifetime,
			wantJSON: map[string]any{"role": []any{}, "exp": float64(t0.Unix() + 60)},
		},
		{
			name:     "debug",
			claims:   Claims{Subject: "u1", Email: "a@example.com", Partition: "e01", Roles: []string{"staff"}, Debug: true},
			lifetime: MaxLifetime,
			wantJSON: map[string]any{"role_debug": "roles: staff", "exp": float64(t0.Unix() + 31536000)},
		},
		{
			name:     "debug strings dropped without Debug",
			claims:   Claims{Subject: "u1", Partition: "e01", UserDebug: "x", RoleDebug: "y"},
			lifetime: 3600,
			absent:   []string{"user_debug", "role_debug"},
		},
		{name: "lifetime 59", claims: Claims{Subject: "u1", Partition: "e01"}, lifetime: 59, want: ErrMalformed},
		{name: "lifetime 31536001", claims: Claims{Subject: "u1", Partition: "e01"}, lifetime: 31536001, want: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, err := tk.Issue(tt.claims, tt.lifetime)
			checkErr(t, err, tt.want)
			if err != nil {
				return
			}
			parts := strings.Split(s, ".")
			var header, payload map[string]any
			for i, dst := range []*map[string]any{&header, &payload} {
				b, err := base64.RawURLEncoding.DecodeString(parts[i])
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, dst); err != nil {
					t.Fatal(err)
				}
			}
			if header["alg"] != "HS256" {
				t.Fatalf("alg = %v", header["alg"])
			}
			for k, v := range tt.wantJSON {
				got, _ := json.Marshal(payload[k])
				want, _ := json.Marshal(v)
				if string(got) != string(want) {
					t.Errorf("claim %s = %s; want %s", k, got, want)
				}
			}
			for _, k := range tt.absent {
				if _, ok := payload[k]; ok {
					t.Errorf("claim %s present", k)
				}
			}
			id, err := uuid.Parse(c.ID)
			if err != nil || id.Version() != 7 || payload["jti"] != c.ID {
				t.Errorf("jti %v is not the UUIDv7 %s", payload["jti"], c.ID)
			}
			if tt.claims.Debug && (c.UserDebug == "" || payload["user_debug"] != c.UserDebug) {
				t.Errorf("user_debug %v; claims %q", payload["user_debug"], c.UserDebug)
			}
			// What Issue signs, Verify accepts and returns unchanged.
			got, err := tk.Verify(s, tt.claims.Partition)
			if err != nil {
				t.Fatalf("Verify of an issued token: %v", err)
			}
			if got.ID != c.ID || got.Subject != c.Subject || !got.Expires.Equal(c.Expires) ||
				!got.IssuedAt.Equal(c.IssuedAt) || len(got.Roles) != len(c.Roles) || got.Audience != testAudience {
				t.Errorf("Verify = %+v; issued %+v", got, c)
			}
		})
	}
	t.Run("subject required", func(t *testing.T) {
		if _, _, err := tk.Issue(Claims{Partition: "e01"}, 3600); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestVerify(t *testing.T) {
	otherKey := []byte("ffffffffffffffffffffffffffffffff")
	good := forge(t, jwt.SigningMethodHS256, testKey, goodClaims())
	tests := []struct {
		name      string
		token     string
		partition string
		now       time.Time
		want      error
		msg       string
	}{
		{name: "good", token: good, partition: "e01", now: t0},
		{name: "empty", token: "", partition: "e01", now: t0, want: ErrUnauthenticated, msg: "malformed token"},
		{name: "garbage", token: "not.a.jwt", partition: "e01", now: t0, want: ErrUnauthenticated, msg: "malformed token"},
		{name: "two segments", token: "abc.def", partition: "e01", now: t0, want: ErrUnauthenticated, msg: "malformed token"},
		{name: "tampered payload", token: swapClaims(good, with(goodClaims(), "sub", "admin")), partition: "e01", now: t0,
			want: ErrUnauthenticated, msg: "signature is invalid"},
		{name: "flipped payload character", token: tamper(good, 1), partition: "e01", now: t0, want: ErrUnauthenticated},
		{name: "tampered signature", token: tamper(good, 2), partition: "e01", now: t0, want: ErrUnauthenticated, msg: "signature is invalid"},
		{name: "signed with another key", token: forge(t, jwt.SigningMethodHS256, otherKey, goodClaims()),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "signature is invalid"},
		{name: "expired, forged with the test key", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "exp", t0.Add(-time.Minute).Unix())),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "token expired on 2026-03-01T11:59:00+00:00"},
		{name: "expired within leeway", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "exp", t0.Add(-5*time.Second).Unix())),
			partition: "e01", now: t0},
		{name: "expired by the clock", token: good, partition: "e01", now: t0.Add(time.Hour + TokenLeeway + time.Second),
			want: ErrUnauthenticated, msg: "token expired"},
		{name: "no exp", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "exp", nil)),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "malformed token: the exp claim is required"},
		{name: "not yet valid", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "nbf", t0.Add(time.Minute).Unix())),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "not valid yet"},
		{name: "another partition's token", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "partition_slug", "e99")),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "token of another partition"},
		{name: "another partition's token, signed with its key", token: forge(t, jwt.SigningMethodHS256, otherKey, with(goodClaims(), "partition_slug", "e99")),
			partition: "e01", now: t0, want: ErrUnauthenticated,
			msg: "token signature is invalid in partition e01: the token says it is of another partition, and each partition signs with its own key"},
		{name: "good token presented to another partition", token: good, partition: "e99", now: t0,
			want: ErrUnauthenticated, msg: "token of another partition"},
		{name: "no partition claim", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "partition_slug", nil)),
			partition: "", now: t0, want: ErrUnauthenticated, msg: "partition_slug"},
		{name: "no subject", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "sub", nil)),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "sub"},
		{name: "wrong audience", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "aud", "someone-else")),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "another audience"},
		{name: "no audience", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "aud", nil)),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "aud"},
		{name: "audience among several", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "aud", []string{"x", testAudience})),
			partition: "e01", now: t0},
		{name: "wrong issuer", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "iss", "evil")),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "another issuer"},
		{name: "none algorithm refused", token: forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, goodClaims()),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "algorithm none is not accepted"},
		{name: "RS256 header with the key as MAC secret refused", token: forgeHeader(map[string]any{"alg": "RS256", "typ": "JWT"}, goodClaims(), testKey),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "algorithm RS256 is not accepted"},
		{name: "HS512 with the right key refused", token: forge(t, jwt.SigningMethodHS512, testKey, goodClaims()),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "algorithm HS512 is not accepted"},
		{name: "unknown algorithm refused", token: forgeHeader(map[string]any{"alg": "XX1"}, goodClaims(), testKey),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "algorithm XX1 is not accepted"},
		{name: "no algorithm refused", token: forgeHeader(map[string]any{"typ": "JWT"}, goodClaims(), testKey),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "is not accepted"},
		{name: "role not an array", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "role", "staff")),
			partition: "e01", now: t0, want: ErrUnauthenticated, msg: "malformed token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newTokens(t, fixed(tt.now)).Verify(tt.token, tt.partition)
			checkErr(t, err, tt.want, tt.msg)
			if err == nil && (c.Subject != "u1" || c.Partition != "e01" || c.Organization != "o1" ||
				c.Email != "a@example.com" || c.ID != "j1") {
				t.Fatalf("claims %+v", c)
			}
		})
	}
}

// swapClaims replaces a token's claims, keeping its header and signature.
func swapClaims(token string, claims jwt.MapClaims) string {
	parts := strings.Split(token, ".")
	b, _ := json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}

// tamper flips one character in a segment of a token.
func tamper(token string, segment int) string {
	parts := strings.Split(token, ".")
	b := []byte(parts[segment])
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	parts[segment] = string(b)
	return strings.Join(parts, ".")
}
