package people

import (
	"context"
	"fmt"

	"credo/engine"
)

// The directory's hooks: a group's slug derives from its name, and deleting a membership by
// any path records a MembershipDeletion (decisions §6).
func init() {
	engine.RegisterHook(engine.Hook{Name: "group-slug", Members: []string{"GroupName", "GroupSlug"},
		Derives: map[string][]string{"GroupSlug": {"GroupName"}}, BeforeWrite: groupSlug})
	engine.RegisterHook(engine.Hook{Name: "membership-deletion", Members: deletionCopies,
		Uses:        map[string][]string{"MembershipDeletion": append([]string{"DeletionIdentifier", "DeletionWhen"}, deletionCopies...)},
		AfterDelete: membershipDeletion})
}

// deletionCopies are the members a MembershipDeletion copies from the deleted membership.
var deletionCopies = []string{"GroupIdentifier", "MembershipIdentifier", "OrganizationIdentifier", "UserIdentifier"}

// groupSlug sets GroupSlug from GroupName: lower-case words joined by hyphens, or null when
// the name has no letter or digit to make one of (empty, or only punctuation, symbols or
// spaces). Never "": an empty slug is no role (auth compares roles as slugs), no RoleSlug and
// no URL part, and as a unique value it would be every such group's. The name itself is a
// good name, so it is kept (a 400 would refuse groups migrated with such names).
func groupSlug(r *engine.Resource, rec engine.Record) error {
	s, _ := rec.Get(r, "GroupName").(string)
	if slug := engine.Slugify(s); slug != "" {
		rec.Set(r, "GroupSlug", slug)
	} else {
		rec.Set(r, "GroupSlug", nil)
	}
	return nil
}

// membershipDeletion makes the hook that records a MembershipDeletion for a deleted
// Membership, in the delete's transaction; the MembershipDeletion descriptor is resolved (and
// checked) when the descriptor naming the hook loads.
func membershipDeletion(uses map[string]*engine.Resource) engine.AfterDeleteHook {
	del := uses["MembershipDeletion"]
	return func(ctx context.Context, tx *engine.Store, r *engine.Resource, rec engine.Record) error {
		d, err := del.DraftOf(map[string]any{"DeletionIdentifier": engine.NewID(), "DeletionWhen": engine.Now()})
		if err != nil {
			return fmt.Errorf("people: membership-deletion hook: %w", err)
		}
		for _, name := range deletionCopies {
			if err := d.Set(name, rec.Get(r, name)); err != nil {
				return fmt.Errorf("people: membership-deletion hook: %w", err)
			}
		}
		_, err = tx.Create(ctx, del, d, engine.AllOrganizations())
		return err
	}
}
