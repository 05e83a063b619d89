package security

import (
	"context"
	"time"

	"credo/engine"
)

// personStanding are the Person members account reads: the organization, the operator flag,
// and those that withdraw a person's access.
var personStanding = []string{"OrganizationIdentifier", "IsOperator", "IsArchived", "AccessRevoked", "UserAccessGranted"}

// personWithdrawn says why a person no longer lets its user act in its organization, "" when
// it does: it is archived (IsArchived), or its access was revoked (AccessRevoked at or before
// now) and not granted again since (UserAccessGranted after AccessRevoked, at or before now).
// api.md names no states; docs/security.md ("Withdrawn access") records this choice.
func (rs *records) personWithdrawn(p engine.Record, now time.Time) string {
	r := rs.person
	if archived, _ := p.Get(r, "IsArchived").(bool); archived {
		return "is archived"
	}
	if revoked := when(r, p, "AccessRevoked"); ended(revoked, when(r, p, "UserAccessGranted"), now) {
		return "had its access revoked on " + engine.DateTime{Time: revoked}.String()
	}
	return ""
}

// userWithdrawn says why a user may no longer act in any organization, "" when it may: it
// no longer exists (its record was deleted, though a person of it may remain), or it was
// archived (UtcArchived at or before now) and not unarchived since (UtcUnarchived after
// UtcArchived, at or before now). A deleted user's tokens, cookies and secrets are refused
// as tokens/generate refuses to issue it one (userEmail): auth.Accounts says a deleted user
// may no longer act.
func (rs *records) userWithdrawn(ctx context.Context, st *engine.Store, userID string, now time.Time) (string, error) {
	r := rs.user
	fields, err := members(r, "UtcArchived", "UtcUnarchived")
	if err != nil {
		return "", err
	}
	rec, err := st.Get(ctx, r, []any{userID}, fields, engine.AllOrganizations())
	switch {
	case engine.IsNotFound(err):
		return "no longer exists", nil
	case err != nil:
		return "", err
	}
	if archived := when(r, rec, "UtcArchived"); ended(archived, when(r, rec, "UtcUnarchived"), now) {
		return "was archived on " + engine.DateTime{Time: archived}.String(), nil
	}
	return "", nil
}

// ended reports whether an ending (end) holds at now: it is set (after the zero datetime an
// omitted member stores), at or before now, and no restart has followed it by now.
func ended(end, restart, now time.Time) bool {
	if !end.After(noExpiry) || end.After(now) {
		return false
	}
	return !restart.After(end) || restart.After(now)
}
