package security

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"

	"credo/auth"
	"credo/engine"
	"credo/handlers"
)

// GrantCheck is the name of the write check that bounds a grant by what the grantor holds;
// the Permission descriptor names it in `hooks: authorize:`.
const GrantCheck = "permission-grant"

// authorizer is the router's Authorizer: permission flags per object, and the write checks
// this package supplies.
type authorizer struct {
	auth.PathAuthorizer
	s *Security
}

var _ handlers.Authorizer = authorizer{}

// WriteCheck supplies GrantCheck.
func (a authorizer) WriteCheck(name string) (engine.WriteCheck, bool) {
	if name == GrantCheck {
		return a.s.checkGrant, true
	}
	return nil, false
}

// checkGrant bounds a change of a Permission record by what the caller holds (decisions §7).
// Besides the route's own flag (Create, Write or Delete on security/permissions), a caller
// who is not an operator must, for the record it replaces (old, on update, patch and delete)
// and the record it stores (new, on create, update and patch):
//   - hold every flag the record grants on the record's object, Administrate there for
//     Administrate, Configure and TrialAccess;
//   - act in the organization of the record's group.
//
// So no one grants more than they have, moves a grant they could not have made, or grants to
// another organization's group. It reads the caller's current grants in the write's
// transaction, not the decision cache, so a grant is bounded by what holds now; and the
// checked writes of a partition run one after another (tx.Serialize), so that no check reads
// grants that a concurrent checked write is replacing: two moves that each the other's old
// place allows are never both taken (READ COMMITTED alone let them both pass on PostgreSQL).
func (s *Security) checkGrant(ctx context.Context, tx *engine.Store, r *engine.Resource, old, new engine.Record) error {
	p := auth.FromContext(ctx)
	if p == nil {
		return unauthenticated(auth.ReasonMissing, "no credential")
	}
	if p.Operator {
		return nil
	}
	if err := tx.Serialize(ctx, GrantCheck); err != nil {
		return err
	}
	for _, rec := range []engine.Record{old, new} {
		if rec != nil {
			if err := s.mayGrant(ctx, tx, r, p, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Security) mayGrant(ctx context.Context, tx *engine.Store, r *engine.Resource, p *auth.Principal, rec engine.Record) error {
	group := str(r, rec, "GroupIdentifier")
	groups := s.rec.group
	found, err := all(ctx, tx, groups, []string{"OrganizationIdentifier"}, "GroupIdentifier", group)
	if err != nil {
		return err
	}
	if len(found) == 0 || str(groups, found[0], "OrganizationIdentifier") != p.OrganizationIdentifier {
		// An unknown group and another organization's answer alike: no probing of other
		// organizations' group identifiers.
		return forbidden("the group %s is not a group of your organization; only operators grant to other organizations", group)
	}
	object, err := uuid.Parse(str(r, rec, "ObjectIdentifier"))
	if err != nil {
		return forbidden("the object of the permission is not a permission object")
	}
	held, err := s.rec.mask(ctx, tx, p.UserIdentifier, p.OrganizationIdentifier, object, s.now())
	if err != nil {
		return err
	}
	if held&auth.Administrate.Bit() != 0 {
		return nil
	}
	var missing []string
	for _, f := range auth.Flags() {
		if rec.Get(r, "Allow"+string(f)) != true {
			continue
		}
		need := f
		if f == auth.Administrate || f == auth.Configure || f == auth.TrialAccess {
			need = auth.Administrate
		}
		if held&need.Bit() == 0 && !slices.Contains(missing, string(need)) {
			missing = append(missing, string(need))
		}
	}
	if len(missing) > 0 {
		return forbidden("granting on object %s needs the caller to hold there what it grants; missing %s", object, strings.Join(missing, ", "))
	}
	return nil
}
