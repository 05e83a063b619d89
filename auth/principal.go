package auth

import (
	"context"

	"credo/internal/reqctx"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	// UserIdentifier is the user the credential acts as (the token's sub).
	UserIdentifier string
	// Email is the user's email (the token's user_email).
	Email string
	// OrganizationIdentifier is the organization the caller acts in (the token's org_id).
	OrganizationIdentifier string
	// Partition is the partition slug the credential belongs to.
	Partition string
	// Roles are the slugs of the caller's current groups.
	Roles []string
	// Operator callers may do everything in every organization of the partition.
	Operator bool
	// TokenID is the id by which the presented credential can be revoked: the jti of a bearer
	// token or the Identifier of a session cookie ("" for other credentials).
	TokenID string
	// Lineage are the identifiers whose revocation also ends the credential: the client
	// secret a token was generated with; for a cookie, that secret, the token it descends
	// from and the cookie it was made from.
	Lineage []string
	// Secret is the identifier of the client secret the credential descends from (a token's
	// secret_id, a cookie's Secret), "" when unknown: the secret's user is who generated it,
	// which may be an operator acting for UserIdentifier.
	Secret string
	// Credential is how the caller authenticated; "" for principals not made by an
	// Authenticator.
	Credential Credential
}

// Credential is the kind of credential a request presented.
type Credential string

// The credentials an Authenticator accepts.
const (
	// CredentialBearer is an access token in "Authorization: Bearer".
	CredentialBearer Credential = "Bearer"
	// CredentialCookie is a session cookie.
	CredentialCookie Credential = "Cookie"
)

type principalKey struct{}

// WithPrincipal returns a context carrying p. On a request's own context (reqctx) that carries
// no principal yet, p is added to that context, which is returned (see reqctx.With): the caller
// is a fact of the whole request.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return reqctx.With(ctx, principalKey{}, p)
}

// FromContext returns the request's principal, or nil when the request is anonymous.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
