package security

import (
	"context"
	"errors"
	"sync"

	"credo/auth"
	"credo/engine"
)

// maxSecretOwners bounds the cache of secret owners; when full it is emptied and refills with
// the secrets in use.
const maxSecretOwners = 10000

// secretOwner is the user and organization a client secret was made for.
type secretOwner struct{ user, org string }

// secretOwners caches the owner of each client secret by partition and identifier: a secret's
// owner never changes, so an entry never goes stale (a revoked secret is refused through
// revocation, not here). An unknown secret is not cached: it may be created later, and a
// credential naming it is refused anyway (checkActing).
type secretOwners struct {
	mu      sync.Mutex
	entries map[[2]string]secretOwner
}

// secretOwner returns the user and organization of a partition's client secret, ok false when the
// partition holds no such secret.
func (s *Security) secretOwner(ctx context.Context, partition, secret string) (secretOwner, bool, error) {
	key := [2]string{partition, secret}
	c := &s.owners
	c.mu.Lock()
	o, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return o, true, nil
	}
	st, err := s.store(partition)
	if err != nil {
		return secretOwner{}, false, err
	}
	r := s.rec.clientSecret
	fields, err := members(r, "UserIdentifier", "OrganizationIdentifier")
	if err != nil {
		return secretOwner{}, false, err
	}
	rec, err := st.Get(ctx, r, []any{secret}, fields, engine.AllOrganizations())
	switch {
	case engine.IsNotFound(err), errors.Is(err, engine.ErrInvalid):
		return secretOwner{}, false, nil
	case err != nil:
		return secretOwner{}, false, err
	}
	o = secretOwner{user: str(r, rec, "UserIdentifier"), org: str(r, rec, "OrganizationIdentifier")}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxSecretOwners {
		c.entries = make(map[[2]string]secretOwner, 64)
	}
	c.entries[key] = o
	return o, true, nil
}

// checkActing refuses a credential whose client secret is not one of the partition's: every
// credential credo issues names the stored secret it descends from, and secrets are never
// deleted, so a token without one, or naming none (signed with a key another environment
// shares, say), is refused like a revoked one. It then refuses a credential that acts for
// another user than the owner of that secret — a token an operator generated with Agent or
// Subject, and the cookies made from it — once that owner may no longer act in the secret's
// organization (withdrawn, deleted: see account), has no person there that lets it act (its
// person archived, its access revoked, the person deleted: an operator of another
// organization still acts there as itself, but not for others), or is no longer an operator
// there: only operators may act for another user, and an operator's impersonations must not
// outlive its own standing. A credential that acts as its secret's own user (in any
// organization) is the account check's alone. The owner is cached per secret and its
// standing for AccountTTL, so a change bites within that; an unknown secret is not cached.
func (s *Security) checkActing(ctx context.Context, partition, secret, user string) error {
	if secret == "" {
		return unauthenticated(auth.ReasonUnknown, "the credential names no client secret")
	}
	o, ok, err := s.secretOwner(ctx, partition, secret)
	if err != nil {
		return err
	}
	if !ok {
		return unauthenticated(auth.ReasonUnknown, "the client secret this credential was made from is unknown")
	}
	if o.user == user {
		return nil
	}
	acct, err := s.accounts.standing(ctx, partition, o.user, o.org)
	if errors.Is(err, auth.ErrUnauthenticated) {
		return unauthenticated(auth.ReasonRevoked, "the operator who generated this credential for user %s may no longer act: %v", user, err)
	}
	if err != nil {
		return err
	}
	if !acct.Operator {
		return unauthenticated(auth.ReasonRevoked, "the user %s, who generated this credential for user %s, is no longer an operator", o.user, user)
	}
	if acct.away != "" {
		return unauthenticated(auth.ReasonRevoked, "the operator %s, who generated this credential for user %s, may no longer act for others in organization %s: %s",
			o.user, user, o.org, acct.away)
	}
	return nil
}
