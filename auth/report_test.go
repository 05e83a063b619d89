package auth

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestReport(t *testing.T) {
	otherKey := []byte("ffffffffffffffffffffffffffffffff")
	hs := func(c jwt.MapClaims) string { return forge(t, jwt.SigningMethodHS256, testKey, c) }
	tests := []struct {
		name  string
		token string
		now   time.Time
		want  *Report
		err   error
	}{
		{name: "good", token: hs(goodClaims()), now: t0,
			want: &Report{Subject: "u1", SignatureVerification: "Passed", ExpiryVerification: "Not Expired (60 minutes remaining)",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "minutes round down", token: hs(goodClaims()), now: t0.Add(90 * time.Second),
			want: &Report{Subject: "u1", SignatureVerification: "Passed", ExpiryVerification: "Not Expired (58 minutes remaining)",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "under a minute left", token: hs(goodClaims()), now: t0.Add(time.Hour - time.Second),
			want: &Report{Subject: "u1", SignatureVerification: "Passed", ExpiryVerification: "Not Expired (0 minutes remaining)",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "expired at exp", token: hs(goodClaims()), now: t0.Add(time.Hour),
			want: &Report{Subject: "u1", SignatureVerification: "Passed", ExpiryVerification: "Expired",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "no exp", token: hs(with(goodClaims(), "exp", nil)), now: t0,
			want: &Report{Subject: "u1", SignatureVerification: "Passed", ExpiryVerification: "Expired",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "another key, audience and issuer", token: forge(t, jwt.SigningMethodHS256, otherKey, with(goodClaims(), "aud", "x", "iss", "y")), now: t0,
			want: &Report{Subject: "u1", SignatureVerification: "Failed", ExpiryVerification: "Not Expired (60 minutes remaining)",
				AudienceVerification: "Failed", IssuerVerification: "Failed"}},
		{name: "tampered", token: swapClaims(hs(goodClaims()), with(goodClaims(), "sub", "admin")), now: t0,
			want: &Report{Subject: "admin", SignatureVerification: "Failed", ExpiryVerification: "Not Expired (60 minutes remaining)",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "none algorithm", token: forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, goodClaims()), now: t0,
			want: &Report{Subject: "u1", SignatureVerification: "Failed", ExpiryVerification: "Not Expired (60 minutes remaining)",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "RS256 header", token: forgeHeader(map[string]any{"alg": "RS256"}, goodClaims(), testKey), now: t0,
			want: &Report{Subject: "u1", SignatureVerification: "Failed", ExpiryVerification: "Not Expired (60 minutes remaining)",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "unknown algorithm", token: forgeHeader(map[string]any{"alg": "XX1"}, goodClaims(), testKey), now: t0,
			want: &Report{Subject: "u1", SignatureVerification: "Failed", ExpiryVerification: "Not Expired (60 minutes remaining)",
				AudienceVerification: "Passed", IssuerVerification: "Passed"}},
		{name: "empty", token: "", now: t0, err: ErrMalformed},
		{name: "not a JWT", token: "hello", now: t0, err: ErrMalformed},
		{name: "bad base64", token: "a.b.c", now: t0, err: ErrMalformed},
		{name: "ill-typed exp", token: hs(with(goodClaims(), "exp", "tomorrow")), now: t0, err: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newTokens(t, fixed(tt.now)).Report(tt.token)
			checkErr(t, err, tt.err)
			if err != nil {
				return
			}
			if *got != *tt.want {
				t.Fatalf("Report = %+v; want %+v", *got, *tt.want)
			}
		})
	}
}
