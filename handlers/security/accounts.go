package security

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"credo/auth"
	"credo/engine"
)

// AccountTTL is how long an account (operator flag and roles) is reused between requests of
// the same caller, and so the longest a change of person or memberships takes to reach the
// authentication of a process. It leaves auth.RevocationBound's margin for the request itself,
// so that such a change is seen within that bound.
const AccountTTL = auth.MaxRevocationTTL

// accounts implements auth.Accounts over the partition's people, memberships and groups, with
// a cache of AccountTTL.
type accounts struct {
	s *Security

	mu      sync.Mutex
	entries map[accountKey]accountEntry
	sweepAt time.Time
}

type accountKey struct{ partition, user, org string }

type accountEntry struct {
	st    standing
	until time.Time
}

// standing is a user's account in an organization and whether it holds it by a person there.
type standing struct {
	auth.Account
	// away says why the user has no person in the organization that lets it act ("its
	// person there is archived", "… had its access revoked on …", "it has no person there"),
	// "" when it has one. An operator of another organization acts there all the same
	// (Operator), but may not act there for another user (checkActing).
	away string
}

var _ auth.Accounts = (*accounts)(nil)

// Account answers from the cache while its entry is younger than AccountTTL. Refusals are not
// cached, so a restored person is usable at once.
func (a *accounts) Account(ctx context.Context, partition, userID, organizationID string) (auth.Account, error) {
	st, err := a.standing(ctx, partition, userID, organizationID)
	return st.Account, err
}

// standing is Account with how the user stands in the organization, from the same cache.
func (a *accounts) standing(ctx context.Context, partition, userID, organizationID string) (standing, error) {
	key := accountKey{partition, userID, organizationID}
	now := a.s.now()
	a.mu.Lock()
	e, ok := a.entries[key]
	a.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.st, nil
	}
	st, err := a.s.account(ctx, partition, userID, organizationID, now)
	if err != nil {
		return standing{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !now.Before(a.sweepAt) {
		for k, e := range a.entries {
			if !now.Before(e.until) {
				delete(a.entries, k)
			}
		}
		a.sweepAt = now.Add(AccountTTL)
	}
	a.entries[key] = accountEntry{st: st, until: now.Add(AccountTTL)}
	return st, nil
}

// account reads a user's standing in an organization now: Operator is the IsOperator flag of
// its person there, and Roles the slugs of its current groups. A user without a person in
// the organization may act there only as an operator (one of its persons is an operator);
// otherwise the answer is an auth.ErrUnauthenticated refusal. An archived user, and a person
// archived or whose access is revoked (see withdrawn), count for nothing; away says why such
// an operator has no person in the organization.
func (s *Security) account(ctx context.Context, partition, userID, organizationID string, now time.Time) (standing, error) {
	st, err := s.store(partition)
	if err != nil {
		return standing{}, err
	}
	if why, err := s.rec.userWithdrawn(ctx, st, userID, now); err != nil || why != "" {
		if err != nil {
			return standing{}, err
		}
		return standing{}, unauthenticated(auth.ReasonRevoked, "the user %s %s", userID, why)
	}
	people := s.rec.person
	persons, err := all(ctx, st, people, personStanding, "UserIdentifier", userID)
	if err != nil {
		return standing{}, fmt.Errorf("security: people of user %s: %w", userID, err)
	}
	var acct standing
	found, operatorElsewhere, withdrawnHere := false, false, ""
	for _, p := range persons {
		op, _ := p.Get(people, "IsOperator").(bool)
		why := s.rec.personWithdrawn(p, now)
		switch {
		case str(people, p, "OrganizationIdentifier") != organizationID:
			operatorElsewhere = operatorElsewhere || op && why == ""
		case why != "":
			withdrawnHere = why
		default:
			found, acct.Operator = true, op
		}
	}
	switch {
	case found:
	case operatorElsewhere:
		acct.Operator, acct.away = true, "it has no person there"
		if withdrawnHere != "" {
			acct.away = "its person there " + withdrawnHere
		}
	case withdrawnHere != "":
		return standing{}, unauthenticated(auth.ReasonRevoked, "the person of user %s in organization %s %s", userID, organizationID, withdrawnHere)
	case len(persons) == 0:
		return standing{}, unauthenticated(auth.ReasonUnknown, "the user %s has no person in the partition", userID)
	default:
		return standing{}, unauthenticated(auth.ReasonUnknown, "the user %s has no person in organization %s", userID, organizationID)
	}
	if acct.Roles, err = s.roles(ctx, st, userID, organizationID, now); err != nil {
		return standing{}, err
	}
	return acct, nil
}

// currentGroups returns the groups of a user's current memberships in an organization
// (decisions §7): memberships of the organization, effective at or before now and not expired
// (MembershipExpiry the zero value, or after now), in groups that belong to the organization.
// A membership recorded in the organization for another organization's group counts for
// neither, so that no one can borrow another organization's role by membership. It returns
// the group records with GroupIdentifier and GroupSlug.
func (rs *records) currentGroups(ctx context.Context, st *engine.Store, userID, orgID string, now time.Time) ([]engine.Record, *engine.Resource, error) {
	r := rs.membership
	recs, err := all(ctx, st, r, []string{"GroupIdentifier", "MembershipEffective", "MembershipExpiry"},
		"UserIdentifier", userID, "OrganizationIdentifier", orgID)
	if err != nil {
		return nil, nil, fmt.Errorf("security: memberships of user %s: %w", userID, err)
	}
	var ids []string
	for _, m := range recs {
		if current(when(r, m, "MembershipEffective"), when(r, m, "MembershipExpiry"), now) {
			ids = append(ids, str(r, m, "GroupIdentifier"))
		}
	}
	groups := rs.group
	if len(ids) == 0 {
		return nil, groups, nil
	}
	found, err := all(ctx, st, groups, []string{"GroupIdentifier", "GroupSlug"}, "GroupIdentifier", ids, "OrganizationIdentifier", orgID)
	if err != nil {
		return nil, nil, fmt.Errorf("security: groups of user %s: %w", userID, err)
	}
	return found, groups, nil
}

// noExpiry is the latest instant a MembershipExpiry may hold and still mean "never expires":
// an omitted expiry is stored as 0001-01-01T00:00:00+00:00.
var noExpiry = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

// current reports whether a membership holds at now.
func current(effective, expiry, now time.Time) bool {
	return !effective.After(now) && (!expiry.After(noExpiry) || expiry.After(now))
}

// roles returns the sorted, distinct GroupSlug of a user's current groups in an organization.
func (s *Security) roles(ctx context.Context, st *engine.Store, userID, orgID string, now time.Time) ([]string, error) {
	recs, groups, err := s.rec.currentGroups(ctx, st, userID, orgID, now)
	if err != nil {
		return nil, err
	}
	roles := []string{} // a membership of a deleted group grants nothing
	for _, g := range recs {
		if sl := str(groups, g, "GroupSlug"); sl != "" && !slices.Contains(roles, sl) {
			roles = append(roles, sl)
		}
	}
	slices.Sort(roles)
	return roles, nil
}

// grants implements auth.Grants over Permission records: the user's current groups in the
// organization, then the permissions on the object.
type grants struct{ s *Security }

var _ auth.Grants = grants{}

func (g grants) Mask(ctx context.Context, partition, userID, orgID string, object uuid.UUID) (int64, error) {
	st, err := g.s.store(partition)
	if err != nil {
		return 0, err
	}
	return g.s.rec.mask(ctx, st, userID, orgID, object, g.s.now())
}

// mask is the OR of the PermissionMask of the permissions on object held by the user's
// current groups in the organization.
func (rs *records) mask(ctx context.Context, st *engine.Store, userID, orgID string, object uuid.UUID, now time.Time) (int64, error) {
	recs, groups, err := rs.currentGroups(ctx, st, userID, orgID, now)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	ids := make([]string, len(recs))
	for i, g := range recs {
		ids[i] = str(groups, g, "GroupIdentifier")
	}
	r := rs.permission
	perms, err := all(ctx, st, r, []string{"PermissionMask"}, "ObjectIdentifier", object.String(), "GroupIdentifier", ids)
	if err != nil {
		return 0, fmt.Errorf("security: permissions on %s: %w", object, err)
	}
	var m int64
	for _, p := range perms {
		v, _ := p.Get(r, "PermissionMask").(int64)
		m |= v
	}
	return m, nil
}
