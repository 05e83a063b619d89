package auth

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestReasonOf: each kind of refused token carries the reason that authentication failures
// are counted by, through any wrapping; other errors have none.
func TestReasonOf(t *testing.T) {
	good := forge(t, jwt.SigningMethodHS256, testKey, goodClaims())
	tests := []struct {
		name, token string
		want        Reason
	}{
		{name: "garbage", token: "not.a.jwt", want: ReasonMalformed},
		{name: "tampered signature", token: tamper(good, 2), want: ReasonSignature},
		{name: "none algorithm", token: forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, goodClaims()), want: ReasonSignature},
		{name: "expired", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "exp", t0.Add(-time.Minute).Unix())), want: ReasonExpired},
		{name: "wrong audience", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "aud", "x")), want: ReasonClaims},
		{name: "another partition", token: forge(t, jwt.SigningMethodHS256, testKey, with(goodClaims(), "partition_slug", "e99")), want: ReasonPartition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newTokens(t, fixed(t0)).Verify(tt.token, "e01")
			if got := ReasonOf(fmt.Errorf("wrapped: %w", err)); got != tt.want {
				t.Errorf("ReasonOf(%v) = %q, want %q", err, got, tt.want)
			}
		})
	}
	if got := ReasonOf(fmt.Errorf("people: %w", ErrUnauthenticated)); got != ReasonOther {
		t.Errorf("a refusal without a reason: %q, want other", got)
	}
	if got := ReasonOf(errors.New("disk full")); got != "" {
		t.Errorf("not a refusal: %q, want none", got)
	}
}
