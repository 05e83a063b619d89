package auth

import (
	"errors"
	"fmt"
	"slices"

	"github.com/golang-jwt/jwt/v5"
)

// The values of a Report's verifications.
const (
	passed     = "Passed"
	failed     = "Failed"
	expired    = "Expired"
	notExpired = "Not Expired (%d minutes remaining)"
)

// Report is the answer of tokens/validate (decisions §7): what holds of a token, checked claim
// by claim rather than refused at the first failure.
type Report struct {
	// Subject is the token's sub, read whether or not the signature holds.
	Subject string `json:"Subject"`
	// SignatureVerification is Passed when the token is HS256 and signed with the service's key.
	SignatureVerification string `json:"SignatureVerification"`
	// ExpiryVerification is "Not Expired (N minutes remaining)", N the whole minutes left
	// (rounded down), or Expired; a token without exp is reported expired, since no use
	// accepts it.
	ExpiryVerification string `json:"ExpiryVerification"`
	// AudienceVerification and IssuerVerification are Passed when aud holds the service's
	// audience and iss is its issuer, Failed otherwise.
	AudienceVerification string `json:"AudienceVerification"`
	IssuerVerification   string `json:"IssuerVerification"`
}

// Report examines a token without refusing it. Only a token that is not a JWT at all (wrong
// number of segments, bad base64 or JSON) is an error, wrapping ErrMalformed (a 400). Expiry is
// judged strictly at the clock's time, without TokenLeeway; partition is not examined.
func (t *Tokens) Report(token string) (*Report, error) {
	if hasLineBreak(token) {
		return nil, malformed("the token is not a well-formed JWT: %v", errLineBreak)
	}
	var rc jwt.RegisteredClaims
	_, _, err := jwt.NewParser(jwt.WithStrictDecoding()).ParseUnverified(token, &rc)
	if err != nil && errors.Is(err, jwt.ErrTokenMalformed) {
		return nil, malformed("the token is not a well-formed JWT: %v", err)
	}
	// An unknown or missing alg is not malformed: its signature simply fails below.
	r := &Report{
		Subject:               rc.Subject,
		SignatureVerification: failed,
		ExpiryVerification:    expired,
		AudienceVerification:  failed,
		IssuerVerification:    failed,
	}
	if _, err := t.parser(jwt.WithoutClaimsValidation()).ParseWithClaims(token, &jwt.RegisteredClaims{}, t.keyFunc); err == nil {
		r.SignatureVerification = passed
	}
	if rc.ExpiresAt != nil {
		if left := rc.ExpiresAt.Sub(t.clock()); left > 0 {
			r.ExpiryVerification = fmt.Sprintf(notExpired, int64(left.Minutes()))
		}
	}
	if slices.Contains(rc.Audience, t.audience) {
		r.AudienceVerification = passed
	}
	if rc.Issuer == t.issuer {
		r.IssuerVerification = passed
	}
	return r, nil
}
