package auth

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// MinKeyBytes is the shortest signing key accepted: HS256 keys shorter than the hash output
// (32 bytes) weaken the MAC.
const MinKeyBytes = 32

// ClockSkew is how far in the past Issue sets iat and nbf, so that a token is usable at once on
// a server whose clock is behind the issuer's (the v24.5 release note).
const ClockSkew = 60 * time.Second

// TokenLeeway is the skew Verify tolerates on exp and nbf. It is small because ClockSkew already
// covers nbf and a token must not outlive its lifetime noticeably.
const TokenLeeway = 10 * time.Second

// signingMethod is the only algorithm issued and accepted.
var signingMethod = jwt.SigningMethodHS256

// Tokens issues and verifies the service's access tokens: JWTs signed with HS256 under one key,
// for one audience and issuer. The key and clock are injected so that tests can forge and age
// tokens. A Tokens is safe for concurrent use.
type Tokens struct {
	key      []byte
	clock    func() time.Time
	audience string
	issuer   string
	verified verified
}

// NewTokens returns a Tokens signing with key (at least MinKeyBytes bytes), reading time from
// clock (time.Now when nil), and issuing and requiring the aud and iss claims given.
func NewTokens(key []byte, clock func() time.Time, audience, issuer string) (*Tokens, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("auth: token key has %d bytes; at least %d are needed", len(key), MinKeyBytes)
	}
	if audience == "" || issuer == "" {
		return nil, errors.New("auth: tokens need an audience and an issuer")
	}
	if clock == nil {
		clock = time.Now
	}
	return &Tokens{key: append([]byte(nil), key...), clock: clock, audience: audience, issuer: issuer}, nil
}

// Claims are the contents of an access token. Issue reads the caller's fields and fills the
// rest; Verify returns them all.
type Claims struct {
	// Subject is the user identifier (sub).
	Subject string
	// Email is the user's email (user_email).
	Email string
	// Organization is the organization identifier the token acts in (org_id).
	Organization string
	// Partition is the slug of the partition the token belongs to (partition_slug).
	Partition string
	// Roles are the slugs of the user's groups when the token was issued (role, an array).
	Roles []string
	// UserDebug and RoleDebug are readable descriptions (user_debug, role_debug), issued only
	// when Debug is set; Issue writes a default for an empty one.
	Debug                bool
	UserDebug, RoleDebug string

	// ID is the token's jti, a UUIDv7, by which it can be revoked.
	ID string
	// Secret is the identifier of the client secret the token was generated with
	// (secret_id), so that revoking the secret ends the token on every process.
	Secret string
	// Audience and Issuer are the aud and iss claims.
	Audience, Issuer string
	// IssuedAt and NotBefore are ClockSkew before the moment of issue; Expires is the lifetime
	// after it.
	IssuedAt, NotBefore, Expires time.Time
}

// wireClaims is the JSON form of Claims.
type wireClaims struct {
	jwt.RegisteredClaims
	Email        string   `json:"user_email"`
	Organization string   `json:"org_id"`
	Partition    string   `json:"partition_slug"`
	Roles        []string `json:"role"`
	UserDebug    string   `json:"user_debug,omitempty"`
	RoleDebug    string   `json:"role_debug,omitempty"`
	Secret       string   `json:"secret_id,omitempty"`
}

// Issue signs a token for c valid for lifetime seconds (MinLifetime..MaxLifetime; otherwise an
// error wrapping ErrMalformed). It returns the token and the claims as issued.
func (t *Tokens) Issue(c Claims, lifetime int) (string, Claims, error) {
	if err := ValidateLifetime(lifetime); err != nil {
		return "", Claims{}, err
	}
	if c.Subject == "" || c.Partition == "" {
		return "", Claims{}, errors.New("auth: issue token: subject and partition are required")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return "", Claims{}, fmt.Errorf("auth: issue token: %w", err)
	}
	now := t.clock().Truncate(time.Second)
	c.ID = id.String()
	c.Audience, c.Issuer = t.audience, t.issuer
	c.IssuedAt = now.Add(-ClockSkew)
	c.NotBefore = c.IssuedAt
	c.Expires = now.Add(time.Duration(lifetime) * time.Second)
	c.Roles = append([]string{}, c.Roles...)
	if c.Debug {
		if c.UserDebug == "" {
			c.UserDebug = fmt.Sprintf("user %s <%s> in organization %s of partition %s",
				c.Subject, c.Email, c.Organization, c.Partition)
		}
		if c.RoleDebug == "" {
			c.RoleDebug = "roles: " + strings.Join(c.Roles, ", ")
		}
	} else {
		c.UserDebug, c.RoleDebug = "", ""
	}
	w := wireClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   c.Subject,
			ID:        c.ID,
			Audience:  jwt.ClaimStrings{c.Audience},
			Issuer:    c.Issuer,
			IssuedAt:  jwt.NewNumericDate(c.IssuedAt),
			NotBefore: jwt.NewNumericDate(c.NotBefore),
			ExpiresAt: jwt.NewNumericDate(c.Expires),
		},
		Email: c.Email, Organization: c.Organization, Partition: c.Partition, Roles: c.Roles,
		UserDebug: c.UserDebug, RoleDebug: c.RoleDebug, Secret: c.Secret,
	}
	s, err := jwt.NewWithClaims(signingMethod, w).SignedString(t.key)
	if err != nil {
		return "", Claims{}, fmt.Errorf("auth: issue token: %w", err)
	}
	return s, c, nil
}

// Verify checks a token for use in a partition and returns its claims. The algorithm is pinned
// to HS256 (so "none" and RS256 headers are refused), and exp, aud and iss are required. Every
// refusal wraps ErrUnauthenticated with the reason as its message: "malformed token", "token
// signature is invalid", "token expired on …", "token is for another audience", "token of
// another partition", and so on. The claims of a token verified before are the ones found then,
// shared by every caller: read them, never change them.
func (t *Tokens) Verify(token, partition string) (*Claims, error) {
	now := t.clock()
	if c, ok := t.verified.get(token, now); ok {
		if c.Partition != partition {
			return nil, unauthenticated(ReasonPartition, "token of another partition (%s)", c.Partition)
		}
		return c, nil
	}
	// Checked after the cache, which holds only tokens verified here: a request's token is
	// not scanned again.
	if hasLineBreak(token) {
		return nil, unauthenticated(ReasonMalformed, "malformed token: %v", errLineBreak)
	}
	var w wireClaims
	tok, err := t.parser().ParseWithClaims(token, &w, t.keyFunc)
	if err != nil {
		return nil, t.refusal(err, tok, &w, partition)
	}
	if w.Subject == "" || w.Partition == "" {
		return nil, unauthenticated(ReasonMalformed, "malformed token: the sub and partition_slug claims are required")
	}
	if w.Partition != partition {
		return nil, unauthenticated(ReasonPartition, "token of another partition (%s)", w.Partition)
	}
	c := fromWire(&w)
	t.verified.put(token, &c, now)
	return &c, nil
}

// parser returns the pinned parser; a new one per call keeps Tokens free of shared state.
func (t *Tokens) parser(extra ...jwt.ParserOption) *jwt.Parser {
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{signingMethod.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithAudience(t.audience),
		jwt.WithIssuer(t.issuer),
		jwt.WithTimeFunc(t.clock),
		jwt.WithLeeway(TokenLeeway),
		jwt.WithStrictDecoding(), // one text per token; Verify refuses line breaks
	}
	return jwt.NewParser(append(opts, extra...)...)
}

// keyFunc hands out the key only for HS256, a second pin behind WithValidMethods.
func (t *Tokens) keyFunc(tok *jwt.Token) (any, error) {
	if tok.Method != signingMethod {
		return nil, fmt.Errorf("unexpected signing method %v", tok.Header["alg"])
	}
	return t.key, nil
}

// refusal turns a parse error into an ErrUnauthenticated error naming the reason. w holds
// the claims as the token states them, unverified: a signature that fails on a token naming
// another partition is said to be one (each partition has its own key, so that is how a
// token of another partition fails), without repeating the name it gives.
func (t *Tokens) refusal(err error, tok *jwt.Token, w *wireClaims, partition string) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return unauthenticated(ReasonMalformed, "malformed token")
	case errors.Is(err, jwt.ErrTokenUnverifiable), errors.Is(err, jwt.ErrTokenSignatureInvalid):
		if tok != nil && (tok.Method == nil || tok.Method.Alg() != signingMethod.Alg()) {
			return unauthenticated(ReasonSignature, "token signing algorithm %v is not accepted; only %s is",
				tok.Header["alg"], signingMethod.Alg())
		}
		if w.Partition != "" && w.Partition != partition {
			return unauthenticated(ReasonSignature,
				"token signature is invalid in partition %s: the token says it is of another partition, and each partition signs with its own key", partition)
		}
		return unauthenticated(ReasonSignature, "token signature is invalid")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return unauthenticated(ReasonClaims, "token is for another audience")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return unauthenticated(ReasonClaims, "token is from another issuer")
	case errors.Is(err, jwt.ErrTokenExpired):
		return unauthenticated(ReasonExpired, "token expired on %s", formatTime(w.ExpiresAt.Time))
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return unauthenticated(ReasonClaims, "token is not valid yet")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		// golang-jwt says "token has invalid claims: token is missing required claim: exp
		// claim is required"; the last part says it all.
		msg := err.Error()
		return unauthenticated(ReasonMalformed, "malformed token: the %s", msg[strings.LastIndex(msg, ": ")+2:])
	}
	return unauthenticated(ReasonMalformed, "invalid token: %v", err)
}

func fromWire(w *wireClaims) Claims {
	c := Claims{
		Subject: w.Subject, Email: w.Email, Organization: w.Organization, Partition: w.Partition,
		Roles: w.Roles, UserDebug: w.UserDebug, RoleDebug: w.RoleDebug,
		Debug: w.UserDebug != "" || w.RoleDebug != "",
		ID:    w.ID, Issuer: w.Issuer, Secret: w.Secret,
	}
	if len(w.Audience) > 0 {
		c.Audience = w.Audience[0]
	}
	if w.IssuedAt != nil {
		c.IssuedAt = w.IssuedAt.Time
	}
	if w.NotBefore != nil {
		c.NotBefore = w.NotBefore.Time
	}
	if w.ExpiresAt != nil {
		c.Expires = w.ExpiresAt.Time
	}
	return c
}
