package people_test

import (
	"context"
	"testing"

	"credo/engine"
	"credo/internal/testenv"
)

// TestGroupSlugOfNoWordIsNull (both stores): a GroupName with no letter or digit (only
// punctuation, symbols or spaces) gives no slug, and GroupSlug is null, as for an empty name,
// never "": an empty string is a trap as a role (auth compares roles as slugs), as a
// permission's RoleSlug and as a URL part. Two such groups in one organization are both kept,
// each with a null slug, and a rename to such a name clears a slug that was there; a
// permission of such a group has a null RoleSlug.
func TestGroupSlugOfNoWordIsNull(t *testing.T) {
	eachStore(t, func(t *testing.T, st *engine.Store) {
		ctx := context.Background()
		reg := st.Registry()
		group, perm := reg.MustByName("Group"), reg.MustByName("Permission")
		slugOf := func(id string) any {
			t.Helper()
			rec, err := st.Get(ctx, group, []any{id}, nil, engine.AllOrganizations())
			if err != nil {
				t.Fatal(err)
			}
			return rec.Get(group, "GroupSlug")
		}
		ids := map[string]string{}
		for name, want := range map[string]any{
			"!!!":             nil,
			"— · —":           nil,
			"   ":             nil,
			"":                nil,
			"Year 9 Teachers": "year-9-teachers",
			"¿Qué?":           "qué",
		} {
			rec, err := testenv.CreateJSON(ctx, st, group, []byte(`{"OrganizationIdentifier":"`+orgA+`","GroupName":"`+name+`"}`), engine.AllOrganizations())
			if err != nil {
				t.Fatalf("create group %q: %v", name, err)
			}
			id := rec.Get(group, "GroupIdentifier").(string)
			ids[name] = id
			if got := slugOf(id); got != want {
				t.Errorf("GroupName %q: GroupSlug %#v, want %#v", name, got, want)
			}
		}
		// A rename to a name with no word clears the slug.
		renamed := ids["Year 9 Teachers"]
		if err := testenv.UpdateJSON(ctx, st, group, []any{renamed}, []byte(`{"OrganizationIdentifier":"`+orgA+`","GroupName":"???"}`), engine.AllOrganizations()); err != nil {
			t.Fatal(err)
		}
		if got := slugOf(renamed); got != nil {
			t.Errorf("renamed to ???: GroupSlug %#v, want null", got)
		}
		// A grant to such a group has no role slug.
		p, err := testenv.CreateJSON(ctx, st, perm, []byte(`{"GroupIdentifier":"`+ids["!!!"]+`","ObjectIdentifier":"`+engine.NewID()+`","AllowRead":true}`), engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Get(ctx, perm, []any{p.Get(perm, "PermissionIdentifier")}, nil, engine.AllOrganizations())
		if err != nil {
			t.Fatal(err)
		}
		if slug := got.Get(perm, "RoleSlug"); slug != nil {
			t.Errorf("RoleSlug of a grant to group !!!: %#v, want null", slug)
		}
	})
}
