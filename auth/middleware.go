package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// DefaultCookieName is the base of the session cookie's name when an Authenticator names none
// (see SessionCookieName). Until the cookie carried CookiePrefix it was the whole name, with
// the partition's path; a cookie of that name no longer authenticates (noLongerAccepted).
const DefaultCookieName = "credo_session"

// CookiePrefix begins every session cookie's name. A browser keeps a cookie of such a name only
// when it is Secure, names no Domain and has Path=/ (RFC 6265bis, "the __Host- prefix"), so a
// page of a sibling subdomain (user content on x.example.com beside the API on api.example.com)
// cannot plant one for the API's host: it could set credo_session for .example.com and sign the
// user in as its own account (cookie tossing, login CSRF), never __Host-credo_session-e01.
const CookiePrefix = "__Host-"

// SessionCookieName returns the name of a partition's session cookie: CookiePrefix, base,
// "-", partition. A partition slug (a lower-case letter, then lower-case letters and digits)
// is a cookie-name token as it is, so it needs no encoding. Each partition has its own name
// because a prefixed cookie's path is "/": the browser sends every partition's cookie with
// every request to the host, and each partition reads only its own.
func SessionCookieName(base, partition string) string {
	return CookiePrefix + base + "-" + partition
}

// Account is what storage says of a user now, as opposed to when its credential was issued.
type Account struct {
	// Operator is the person's IsOperator flag.
	Operator bool
	// Roles are the slugs of the user's current groups; they replace the credential's roles.
	Roles []string
}

// Accounts re-reads a caller's operator status and roles from storage on each request, so that
// a long-lived token cannot keep privileges its user has lost. Another package implements it.
type Accounts interface {
	// Account returns the account of a user acting in an organization of a partition. When
	// the user may no longer act there (deleted, no person in the organization), it returns an
	// error wrapping ErrUnauthenticated whose message says so; any other error is a failure.
	Account(ctx context.Context, partition, userID, organizationID string) (Account, error)
}

// AccountsFunc adapts a function to Accounts.
type AccountsFunc func(ctx context.Context, partition, userID, organizationID string) (Account, error)

// Account calls f.
func (f AccountsFunc) Account(ctx context.Context, partition, userID, organizationID string) (Account, error) {
	return f(ctx, partition, userID, organizationID)
}

// Authenticator establishes the caller of a request from its credential: an access token in
// "Authorization: Bearer <token>" first, otherwise the session cookie. Build it with its
// fields; only Tokens is required.
type Authenticator struct {
	// Tokens verifies bearer tokens.
	Tokens *Tokens
	// Cookies validates session cookies; nil accepts bearer tokens only.
	Cookies *Cookies
	// CookieName is the base of the session cookie's name, DefaultCookieName when empty: the
	// cookie read is SessionCookieName(CookieName, partition), which carries CookiePrefix
	// whatever the base, so no configuration can name a cookie another subdomain could set.
	// The base must be a cookie-name token (letters, digits, "_", "-").
	CookieName string
	// Revocations, when set, refuses revoked tokens and cookies. Wrap the store in a
	// RevocationCache.
	Revocations Revocations
	// Accounts, when set, supplies Operator and the current Roles; without it the principal
	// has the credential's roles and is never an operator.
	Accounts Accounts
}

// Authenticate returns the principal of a request to a partition. Every refusal of the
// credential wraps ErrUnauthenticated and its message says why: "no credential", "token
// expired on …", "token of another partition", "token revoked", and so on. A valid session
// cookie on a write that the browser marks as sent from another origin is refused with
// ErrForbidden instead (checkCookieOrigin). Failures of Revocations or Accounts are
// returned wrapped as they are (500s): a store outage must not read as a bad credential.
func (a *Authenticator) Authenticate(r *http.Request, partition string) (*Principal, error) {
	p, err := a.credential(r, partition)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	if a.Revocations != nil && p.TokenID != "" {
		for i := range 1 + len(p.Lineage) {
			id := p.TokenID
			if i > 0 {
				id = p.Lineage[i-1]
			}
			revoked, err := a.Revocations.IsRevoked(ctx, partition, id)
			if err != nil {
				return nil, fmt.Errorf("auth: check revocation: %w", err)
			}
			switch {
			case !revoked:
			case i > 0:
				return nil, unauthenticated(ReasonRevoked, "the credential this %s was made from was revoked", strings.ToLower(string(p.Credential)))
			case p.Credential == CredentialCookie:
				return nil, unauthenticated(ReasonRevoked, "cookie revoked")
			default:
				return nil, unauthenticated(ReasonRevoked, "token revoked")
			}
		}
	}
	if a.Accounts != nil {
		acct, err := a.Accounts.Account(ctx, partition, p.UserIdentifier, p.OrganizationIdentifier)
		if err != nil {
			if errors.Is(err, ErrUnauthenticated) {
				return nil, err
			}
			return nil, fmt.Errorf("auth: look up account: %w", err)
		}
		p.Operator = acct.Operator
		p.Roles = append([]string{}, acct.Roles...)
	}
	return p, nil
}

// credential reads and checks the request's bearer token or session cookie.
func (a *Authenticator) credential(r *http.Request, partition string) (*Principal, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(strings.TrimSpace(h), " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return nil, unauthenticated(ReasonMalformed, `the Authorization header must be "Bearer <token>"`)
		}
		c, err := a.Tokens.Verify(token, partition)
		if err != nil {
			return nil, err
		}
		return &Principal{
			UserIdentifier: c.Subject, Email: c.Email, OrganizationIdentifier: c.Organization,
			Partition: c.Partition, Roles: c.Roles, TokenID: c.ID, Lineage: lineage(c.Secret), Secret: c.Secret,
			Credential: CredentialBearer,
		}, nil
	}
	if a.Cookies != nil {
		name := a.SessionCookie(partition)
		if ck, err := r.Cookie(name); err == nil {
			c, err := a.Cookies.Validate(ck.Value, partition)
			if err != nil {
				return nil, err
			}
			if c.User == "" {
				return nil, unauthenticated(ReasonMalformed, "malformed cookie: no user")
			}
			if err := checkCookieOrigin(r); err != nil {
				return nil, err
			}
			return &Principal{
				UserIdentifier: c.User, Email: c.Email, OrganizationIdentifier: c.Organization,
				Partition: c.Partition, Roles: c.Roles, TokenID: c.Identifier, Lineage: c.Lineage(), Secret: c.Secret,
				Credential: CredentialCookie,
			}, nil
		}
	}
	if a.Cookies != nil {
		if _, err := r.Cookie(a.base()); err == nil {
			return nil, noLongerAccepted(a.base(), a.SessionCookie(partition))
		}
	}
	return nil, unauthenticated(ReasonMissing, `no credential: send "Authorization: Bearer <token>"`)
}

// SessionCookie returns the name of the session cookie a reads in a partition:
// SessionCookieName of its CookieName.
func (a *Authenticator) SessionCookie(partition string) string {
	return SessionCookieName(a.base(), partition)
}

// base is the base of the session cookie's name.
func (a *Authenticator) base() string {
	if a.CookieName == "" {
		return DefaultCookieName
	}
	return a.CookieName
}

// noLongerAccepted is the refusal of a request whose only credential is a cookie of the name
// without CookiePrefix (the name of earlier releases). Such a cookie never authenticates, not
// even during an upgrade: any page of the site's other subdomains can set one, which is the
// hole the prefix closes. The user signs in again.
func noLongerAccepted(old, name string) error {
	return unauthenticated(ReasonMissing,
		"no credential: a session cookie named %s is no longer accepted, since another subdomain's page could have set it; get a new one from security/cookies/generate (it is named %s), or send \"Authorization: Bearer <token>\"",
		old, name)
}
