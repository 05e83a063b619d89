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

// checkGrant bounds a change of a Permission record by what the caller holds (decisions §7),
// and records who made it. A caller who is not an operator must hold the route's own flag
// (Create, Write or Delete on the permissions' group, see mayChange), and, for the record it
// replaces (old, on update, patch and delete) and the record it stores (new, on create,
// update and patch):
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
//
// A record it lets through (new) gets the audit members, whatever the client sent (they are
// read-only, so a body's values never reach it): PermissionGrantedBy is the caller's user,
// PermissionGranted the time of the write and OrganizationIdentifier the organization of the
// record's group, read in the write's transaction (see stamp).
func (s *Security) checkGrant(ctx context.Context, tx *engine.Store, r *engine.Resource, old, new engine.Record) error {
	p := auth.FromContext(ctx)
	if p == nil {
		return unauthenticated(auth.ReasonMissing, "no credential")
	}
	if !p.Operator {
		if err := tx.Serialize(ctx, GrantCheck); err != nil {
			return err
		}
		if err := s.mayChange(ctx, tx, r, p, old, new); err != nil {
			return err
		}
		for i, rec := range []engine.Record{old, new} {
			if rec != nil {
				if err := s.mayGrant(ctx, tx, r, p, rec, i == 0); err != nil {
					return err
				}
			}
		}
	}
	if new == nil {
		return nil
	}
	return s.stamp(ctx, tx, r, p, new)
}

// stamp sets the audit members of a permission record that a caller stores. The organization
// is that of the record's group: for a caller who is not an operator, mayGrant has just found
// it to be the caller's; an operator may grant to a group of any organization, or to one the
// partition does not hold, whose organization is then unknown: the nil UUID, the member's
// value for no organization (it is not nullable, and was the value of an omitted one).
func (s *Security) stamp(ctx context.Context, tx *engine.Store, r *engine.Resource, p *auth.Principal, rec engine.Record) error {
	org := p.OrganizationIdentifier
	if p.Operator {
		var err error
		if org, err = s.groupOrganization(ctx, tx, str(r, rec, "GroupIdentifier")); err != nil {
			return err
		}
		if org == "" {
			org = uuid.Nil.String()
		}
	}
	rec.Set(r, "OrganizationIdentifier", org)
	rec.Set(r, "PermissionGrantedBy", p.UserIdentifier)
	rec.Set(r, "PermissionGranted", dateTime(s.now()))
	return nil
}

// groupOrganization returns the organization of a group, "" when the partition holds no
// such group.
func (s *Security) groupOrganization(ctx context.Context, tx *engine.Store, group string) (string, error) {
	groups := s.rec.group
	found, err := all(ctx, tx, groups, []string{"OrganizationIdentifier"}, "GroupIdentifier", group)
	if err != nil || len(found) == 0 {
		return "", err
	}
	return str(groups, found[0], "OrganizationIdentifier"), nil
}

// mayChange refuses a caller who no longer holds the route's flag on the permissions' group:
// Create for a new record, Delete for a deleted one, Write for a changed one (or
// Administrate). The router decided it from the decision cache, which may be up to
// auth.MaxDecisionTTL old; read again here, in the write's transaction and its turn, it
// makes a revocation of the right to grant bite at once, as a revocation of the flags granted
// does: no grant sent after it answered is taken.
func (s *Security) mayChange(ctx context.Context, tx *engine.Store, r *engine.Resource, p *auth.Principal, old, new engine.Record) error {
	need := auth.Write
	switch {
	case old == nil:
		need = auth.Create
	case new == nil:
		need = auth.Delete
	}
	held, err := s.rec.mask(ctx, tx, p.UserIdentifier, p.OrganizationIdentifier, auth.ObjectID(r.Path), s.now())
	if err != nil {
		return err
	}
	if held&(need.Bit()|auth.Administrate.Bit()) == 0 {
		return forbidden("the %s permission on %q is not granted to the caller", need, r.Path)
	}
	return nil
}

// mayGrant refuses a record that the caller could not have made: one of a group of another
// organization, or granting a flag it does not hold on the record's object. stored says that
// rec is the record the write replaces or deletes, so that the refusal says the caller may not
// touch that grant, rather than that it may not give what it is giving.
func (s *Security) mayGrant(ctx context.Context, tx *engine.Store, r *engine.Resource, p *auth.Principal, rec engine.Record, stored bool) error {
	group := str(r, rec, "GroupIdentifier")
	org, err := s.groupOrganization(ctx, tx, group)
	if err != nil {
		return err
	}
	if org == "" || org != p.OrganizationIdentifier {
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
	if len(missing) == 0 {
		return nil
	}
	if stored {
		return forbidden("the permission %s grants on object %s%s what the caller does not hold there (%s); only a caller who holds every flag a permission grants may change or delete it",
			str(r, rec, "PermissionIdentifier"), object, s.objectPath(object), strings.Join(missing, ", "))
	}
	return forbidden("granting on object %s%s needs the caller to hold there every flag it grants; it lacks %s", object, s.objectPath(object), strings.Join(missing, ", "))
}

// objectPath names a permission object in a refusal: " (directory/people)" for a record
// group's, "" for any other (version 1's, a command's, or no object at all).
func (s *Security) objectPath(object uuid.UUID) string {
	if p, ok := s.objectPaths[object]; ok {
		return " (" + p + ")"
	}
	return ""
}
