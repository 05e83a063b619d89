package security

import (
	"context"
	"fmt"
	"sort"
	"time"

	"credo/engine"
)

// SecretInfo describes a client secret for `credo secret list`: who it acts for and when it
// ends. It never holds the secret or its hash.
type SecretInfo struct {
	// Identifier is the SecretIdentifier, by which RevokeSecret can name the secret.
	Identifier             string           `json:"Identifier"`
	UserIdentifier         string           `json:"UserIdentifier"`
	UserEmail              *string          `json:"UserEmail"`
	OrganizationIdentifier string           `json:"OrganizationIdentifier"`
	Created                engine.DateTime  `json:"Created"`
	Expires                engine.DateTime  `json:"Expires"`
	Revoked                *engine.DateTime `json:"Revoked"`
	// Status is "revoked", "expired" or "active", as of the listing.
	Status string `json:"Status"`
}

// ListSecrets returns every client secret of the store's partition, oldest first, with its
// user's Email (null when the user is gone) and its status at now.
func ListSecrets(ctx context.Context, store *engine.Store, now time.Time) ([]SecretInfo, error) {
	rs, err := resolveRecords(store.Registry())
	if err != nil {
		return nil, err
	}
	out, err := rs.listSecrets(ctx, store, now)
	if err != nil {
		return nil, fmt.Errorf("security: list secrets in %s: %w", store.Partition, err)
	}
	return out, nil
}

func (rs *records) listSecrets(ctx context.Context, store *engine.Store, now time.Time) ([]SecretInfo, error) {
	r := rs.clientSecret
	recs, err := all(ctx, store, r, []string{"SecretIdentifier", "UserIdentifier", "OrganizationIdentifier", "Created", "Expires", "Revoked"})
	if err != nil {
		return nil, err
	}
	out := make([]SecretInfo, 0, len(recs))
	var userIDs []string
	seen := map[string]bool{}
	for _, rec := range recs {
		info := SecretInfo{
			Identifier: str(r, rec, "SecretIdentifier"), UserIdentifier: str(r, rec, "UserIdentifier"),
			OrganizationIdentifier: str(r, rec, "OrganizationIdentifier"),
		}
		info.Created, _ = rec.Get(r, "Created").(engine.DateTime)
		info.Expires, _ = rec.Get(r, "Expires").(engine.DateTime)
		if d, ok := rec.Get(r, "Revoked").(engine.DateTime); ok {
			info.Revoked = &d
		}
		switch {
		case info.Revoked != nil:
			info.Status = "revoked"
		case !info.Expires.After(now):
			info.Status = "expired"
		default:
			info.Status = "active"
		}
		if !seen[info.UserIdentifier] {
			seen[info.UserIdentifier] = true
			userIDs = append(userIDs, info.UserIdentifier)
		}
		out = append(out, info)
	}
	if len(userIDs) > 0 {
		users := rs.user
		found, err := all(ctx, store, users, []string{"UserIdentifier", "Email"}, "UserIdentifier", userIDs)
		if err != nil {
			return nil, err
		}
		emails := map[string]string{}
		for _, u := range found {
			emails[str(users, u, "UserIdentifier")] = str(users, u, "Email")
		}
		for i := range out {
			if e, ok := emails[out[i].UserIdentifier]; ok {
				out[i].UserEmail = &e
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created.Time) {
			return out[i].Created.Before(out[j].Created.Time)
		}
		return out[i].Identifier < out[j].Identifier
	})
	return out, nil
}
