package engine

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// BeforeWriteHook derives members of a record before it is created or updated.
type BeforeWriteHook func(r *Resource, rec Record) error

// AfterDeleteHook runs in the delete's transaction with the deleted record's stored members.
type AfterDeleteHook func(ctx context.Context, tx *Store, r *Resource, rec Record) error

// The hooks a descriptor may name. Per-resource behaviour that cannot be data lives here,
// referred to by name, never by `if resource == …` in handlers.
var (
	beforeWriteHooks = map[string]BeforeWriteHook{
		"permission-mask": permissionMask,
		"group-slug":      groupSlug,
	}
	afterDeleteHooks = map[string]AfterDeleteHook{
		"membership-deletion": membershipDeletion,
	}
)

// PermissionBits are the bits of PermissionMask (decisions §6); TrialAccess has none.
var PermissionBits = []struct {
	Flag string
	Bit  int64
}{
	{"AllowExecute", 1}, {"AllowRead", 2}, {"AllowWrite", 4}, {"AllowCreate", 8},
	{"AllowDelete", 16}, {"AllowAdministrate", 32}, {"AllowConfigure", 64},
}

// permissionMask sets PermissionMask from the Allow flags, ignoring any client value.
func permissionMask(r *Resource, rec Record) error {
	mask, ok := r.byName["PermissionMask"]
	if !ok {
		return fmt.Errorf("engine: permission-mask hook on %s needs a PermissionMask field", r.Name)
	}
	var m int64
	for _, b := range PermissionBits {
		if f, ok := r.byName[b.Flag]; ok && rec[f.Index] == true {
			m |= b.Bit
		}
	}
	rec[mask.Index] = m
	return nil
}

// groupSlug sets GroupSlug from GroupName: lower-case words joined by hyphens.
func groupSlug(r *Resource, rec Record) error {
	name, ok1 := r.byName["GroupName"]
	slug, ok2 := r.byName["GroupSlug"]
	if !ok1 || !ok2 {
		return fmt.Errorf("engine: group-slug hook on %s needs GroupName and GroupSlug", r.Name)
	}
	s, _ := rec[name.Index].(string)
	if s == "" {
		rec[slug.Index] = nil
		return nil
	}
	rec[slug.Index] = Slugify(s)
	return nil
}

// Slugify lower-cases letters and digits and joins the words between them with hyphens.
func Slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}

// membershipDeletion records a MembershipDeletion for a deleted Membership.
func membershipDeletion(ctx context.Context, tx *Store, r *Resource, rec Record) error {
	del, ok := tx.reg.ByName("MembershipDeletion")
	if !ok {
		return fmt.Errorf("engine: membership-deletion hook needs the MembershipDeletion descriptor")
	}
	d, err := del.DraftOf(map[string]any{"DeletionIdentifier": NewID(), "DeletionWhen": Now()})
	if err != nil {
		return fmt.Errorf("engine: membership-deletion hook: %w", err)
	}
	for _, name := range []string{"GroupIdentifier", "MembershipIdentifier", "OrganizationIdentifier", "UserIdentifier"} {
		if err := d.Set(name, rec.Get(r, name)); err != nil {
			return fmt.Errorf("engine: membership-deletion hook: %w", err)
		}
	}
	_, err = tx.Create(ctx, del, d, AllOrganizations())
	return err
}
