package security

import (
	"context"
	"fmt"
	"time"

	"credo/auth"
	"credo/engine"
)

// revocations implements auth.Revocations over RevokedToken records; Security wraps it in an
// auth.RevocationCache.
type revocations struct{ s *Security }

var _ auth.Revocations = revocations{}

func (x revocations) IsRevoked(ctx context.Context, partition, jti string) (bool, error) {
	st, err := x.s.store(partition)
	if err != nil {
		return false, err
	}
	return st.Exists(ctx, x.s.rec.revokedToken, []any{jti}, engine.AllOrganizations())
}

// revoke records a token, cookie or client secret identifier as revoked until expires, and
// every cookie registered as made from it (ParentIdentifier), and the cookies made from those,
// until their own expiry. It returns the identifiers it revoked, so that the caller can drop
// them from this process's revocation cache. An identifier already revoked stays as it was.
// It checks before inserting rather than after a conflict, because a failed statement aborts
// a PostgreSQL transaction.
//
// The cascade is the database's half of revocation; the other half is the lineage each
// credential carries (auth.Principal.Lineage), which refuses a cookie made from a revoked
// credential even when it was registered after the cascade ran.
func (rs *records) revoke(ctx context.Context, st *engine.Store, id string, now, expires time.Time) ([]string, error) {
	r, issuedRes := rs.revokedToken, rs.issuedToken
	type pending struct {
		id      string
		expires time.Time
	}
	var done []string
	seen := map[string]bool{}
	queue := []pending{{id, expires}}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		if seen[next.id] {
			continue
		}
		seen[next.id] = true
		found, err := st.Exists(ctx, r, []any{next.id}, engine.AllOrganizations())
		if err != nil {
			return nil, err
		}
		if !found {
			_, err = insert(ctx, st, r, map[string]any{
				"TokenIdentifier": next.id, "Revoked": dateTime(now), "Expires": dateTime(next.expires),
			})
			if err != nil {
				return nil, fmt.Errorf("security: revoke %s: %w", next.id, err)
			}
			done = append(done, next.id)
		}
		children, err := all(ctx, st, issuedRes, []string{"TokenIdentifier", "Expires"}, "ParentIdentifier", next.id)
		if err != nil {
			return nil, fmt.Errorf("security: cookies made from %s: %w", next.id, err)
		}
		for _, c := range children {
			if exp := when(issuedRes, c, "Expires"); exp.After(now) {
				queue = append(queue, pending{str(issuedRes, c, "TokenIdentifier"), exp})
			}
		}
	}
	return done, nil
}

// issued is a registered token or cookie. Secret is the client secret behind it, Parent what
// a cookie was made from (a token's jti or a cookie's Identifier).
type issued struct {
	ID, Kind, User, Organization, Secret, Parent string
	Issued, Expires                              time.Time
}

// register records an issued token or cookie, so that its owner can revoke it by identifier.
func (rs *records) register(ctx context.Context, st *engine.Store, t issued) error {
	values := map[string]any{
		"TokenIdentifier": t.ID, "TokenKind": t.Kind, "UserIdentifier": t.User,
		"OrganizationIdentifier": t.Organization, "Issued": dateTime(t.Issued), "Expires": dateTime(t.Expires),
	}
	if t.Secret != "" {
		values["SecretIdentifier"] = t.Secret
	}
	if t.Parent != "" {
		values["ParentIdentifier"] = t.Parent
	}
	if _, err := insert(ctx, st, rs.issuedToken, values); err != nil {
		return fmt.Errorf("security: register %s %s: %w", t.Kind, t.ID, err)
	}
	return nil
}

// lookupIssued returns a registered token or cookie, or nil when the identifier is unknown.
func (rs *records) lookupIssued(ctx context.Context, st *engine.Store, id string) (*issued, error) {
	r := rs.issuedToken
	rec, err := st.Get(ctx, r, []any{id}, nil, engine.AllOrganizations())
	if engine.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &issued{
		ID: id, Kind: str(r, rec, "TokenKind"), User: str(r, rec, "UserIdentifier"),
		Organization: str(r, rec, "OrganizationIdentifier"), Secret: str(r, rec, "SecretIdentifier"),
		Parent: str(r, rec, "ParentIdentifier"), Issued: when(r, rec, "Issued"), Expires: when(r, rec, "Expires"),
	}, nil
}
