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
	r, err := resource(st, revokedTokenName)
	if err != nil {
		return false, err
	}
	return st.Exists(ctx, r, []any{jti}, "")
}

// revoke records a token or cookie identifier as revoked until its expiry; an identifier
// already revoked stays as it was. It checks before inserting rather than after a conflict,
// because a failed statement aborts a PostgreSQL transaction.
func revoke(ctx context.Context, st *engine.Store, id string, now, expires time.Time) error {
	r, err := resource(st, revokedTokenName)
	if err != nil {
		return err
	}
	done, err := st.Exists(ctx, r, []any{id}, "")
	if err != nil || done {
		return err
	}
	_, err = insert(ctx, st, r, map[string]any{
		"TokenIdentifier": id, "Revoked": dateTime(now), "Expires": dateTime(expires),
	})
	if err != nil {
		return fmt.Errorf("security: revoke %s: %w", id, err)
	}
	return nil
}

// issued is a registered token or cookie.
type issued struct {
	ID, Kind, User, Organization, Secret string
	Issued, Expires                      time.Time
}

// register records an issued token or cookie, so that its owner can revoke it by identifier.
func register(ctx context.Context, st *engine.Store, t issued) error {
	r, err := resource(st, issuedTokenName)
	if err != nil {
		return err
	}
	values := map[string]any{
		"TokenIdentifier": t.ID, "TokenKind": t.Kind, "UserIdentifier": t.User,
		"OrganizationIdentifier": t.Organization, "Issued": dateTime(t.Issued), "Expires": dateTime(t.Expires),
	}
	if t.Secret != "" {
		values["SecretIdentifier"] = t.Secret
	}
	if _, err := insert(ctx, st, r, values); err != nil {
		return fmt.Errorf("security: register %s %s: %w", t.Kind, t.ID, err)
	}
	return nil
}

// lookupIssued returns a registered token or cookie, or nil when the identifier is unknown.
func lookupIssued(ctx context.Context, st *engine.Store, id string) (*issued, error) {
	r, err := resource(st, issuedTokenName)
	if err != nil {
		return nil, err
	}
	rec, err := st.Get(ctx, r, []any{id}, nil, "")
	if engine.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &issued{
		ID: id, Kind: str(r, rec, "TokenKind"), User: str(r, rec, "UserIdentifier"),
		Organization: str(r, rec, "OrganizationIdentifier"), Secret: str(r, rec, "SecretIdentifier"),
		Issued: when(r, rec, "Issued"), Expires: when(r, rec, "Expires"),
	}, nil
}
