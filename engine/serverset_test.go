package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"credo/engine"
)

// Test hooks that write what they do not declare: test-stray-note sets StraySlug from
// StrayName, as it declares, and also StrayNote, which it does not, when the name is "stray";
// test-stray-code declares StrayName and StrayCode and sets StraySlug, which only
// test-stray-note declares, when the name is "poach".
func init() {
	engine.RegisterHook(engine.Hook{Name: "test-stray-note", Members: []string{"StrayName", "StraySlug"},
		Derives: map[string][]string{"StraySlug": {"StrayName"}},
		BeforeWrite: func(r *engine.Resource, rec engine.Record) error {
			name, _ := rec.Get(r, "StrayName").(string)
			rec.Set(r, "StraySlug", engine.Slugify(name))
			if name == "stray" {
				rec.Set(r, "StrayNote", "written by a hook that does not declare it")
			}
			return nil
		}})
	engine.RegisterHook(engine.Hook{Name: "test-stray-code", Members: []string{"StrayName", "StrayCode"},
		BeforeWrite: func(r *engine.Resource, rec engine.Record) error {
			name, _ := rec.Get(r, "StrayName").(string)
			rec.Set(r, "StrayCode", strings.ToUpper(name))
			if name == "poach" {
				rec.Set(r, "StraySlug", "poached")
			}
			return nil
		}})
}

const strayYAML = `name: Stray
table: strays
summary: Records whose hooks write members they do not declare (tests only).
key: [StrayIdentifier]
fields:
  - {name: StrayIdentifier, type: uuid}
  - {name: StrayName, type: string, required: true}
  - {name: StraySlug, type: string, nullable: true, readOnly: true}
  - {name: StrayCode, type: string, nullable: true, readOnly: true}
  - {name: StrayNote, type: string, nullable: true}
hooks:
  beforeWrite: [test-stray-note, test-stray-code]
`

// TestHookWritingAnUndeclaredMemberIsABug (both stores): a beforeWrite hook that sets a member
// it does not declare (Hook.Members) — one no hook declares, or one another hook of the
// resource declares — fails the write with an error naming the hook and the member, which is
// no *ValidationError (a 500 over the API, logged with that text: a programming error, which
// no client can mend), and nothing is written; the member is not stored unchecked.
func TestHookWritingAnUndeclaredMemberIsABug(t *testing.T) {
	reg, err := engine.Load(fstest.MapFS{"stray.yaml": {Data: []byte(strayYAML)}})
	if err != nil {
		t.Fatal(err)
	}
	r := reg.MustByName("Stray")
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		all := engine.AllOrganizations()
		bug := func(what string, err error, hook, member string) {
			t.Helper()
			if err == nil || errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), hook) || !strings.Contains(err.Error(), "Stray."+member) {
				t.Errorf("%s: %v, want the error of hook %s setting %s, which it does not declare", what, err, hook, member)
			}
		}
		_, err := s.Create(ctx, r, draftOf(t, r, `{"StrayName":"stray"}`), all)
		bug("create", err, "test-stray-note", "StrayNote")
		_, err = s.Create(ctx, r, draftOf(t, r, `{"StrayName":"poach"}`), all)
		bug("create", err, "test-stray-code", "StraySlug")
		if n := count(t, s, r); n != 0 {
			t.Errorf("%d records after the refused creates, want none", n)
		}
		rec, err := s.Create(ctx, r, draftOf(t, r, `{"StrayName":"fine name"}`), all)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Get(r, "StraySlug") != "fine-name" || rec.Get(r, "StrayCode") != "FINE NAME" {
			t.Errorf("the hooks' declared members: %v", rec)
		}
		key := []any{rec.Get(r, "StrayIdentifier")}
		bug("update", s.Update(ctx, r, key, draftOf(t, r, `{"StrayName":"stray"}`), all), "test-stray-note", "StrayNote")
		bug("patch", s.Patch(ctx, r, key, draftOf(t, r, `{"StrayName":"poach"}`), all), "test-stray-code", "StraySlug")
		got, err := s.Get(ctx, r, key, nil, all)
		if err != nil {
			t.Fatal(err)
		}
		if got.Get(r, "StrayName") != "fine name" || got.Get(r, "StrayNote") != nil {
			t.Errorf("after the refused writes: %v", got)
		}
	})
}

// TestWriteCheckValuesObeyTheMemberRules (both stores): the members a write check sets on the
// record it lets through (a grant's grantor, time and organization) are held to the rules a
// beforeWrite hook's are, by the same check: a value that breaks one (null in a member that is
// not nullable) is a *ValidationError naming the member on create, update, patch and a bulk
// load, where it was stored as it was (a null OrganizationIdentifier, answered as null by a
// member the document says is never null); and a check may set only read-only members, so
// setting another is a programming error naming the check and the member. Nothing is written
// either way.
func TestWriteCheckValuesObeyTheMemberRules(t *testing.T) {
	reg := loadGroups(t)
	perm := reg.MustByName("Permission")
	const (
		group  = "0190a6f0-0000-7000-8000-000000000601"
		object = "0190a6f0-0000-7000-8000-000000000701"
	)
	body := `{"GroupIdentifier":"` + group + `","ObjectIdentifier":"` + object + `","AllowRead":true}`
	eachStore(t, reg, func(t *testing.T, s *engine.Store) {
		ctx := context.Background()
		all := engine.AllOrganizations()
		stored, err := s.Create(ctx, perm, draftOf(t, perm, body), all)
		if err != nil {
			t.Fatal(err)
		}
		key := []any{stored.Get(perm, "PermissionIdentifier")}
		setting := func(member string, v any) context.Context {
			return engine.WithWriteCheck(ctx, perm, func(_ context.Context, _ *engine.Store, r *engine.Resource, _, rec engine.Record) error {
				if rec != nil {
					rec.Set(r, member, v)
				}
				return nil
			})
		}
		nullOrg := setting("OrganizationIdentifier", nil)
		// A grant of another object, so that only the check's value can refuse it.
		other := func() string {
			return `{"GroupIdentifier":"` + group + `","ObjectIdentifier":"` + engine.NewID() + `","AllowRead":true}`
		}
		for what, err := range map[string]error{
			"create": func() error { _, err := s.Create(nullOrg, perm, draftOf(t, perm, other()), all); return err }(),
			"update": s.Update(nullOrg, perm, key, draftOf(t, perm, body), all),
			"patch":  s.Patch(nullOrg, perm, key, draftOf(t, perm, `{"AllowWrite":true}`), all),
			"load":   s.InsertAll(nullOrg, perm, []engine.Draft{fileDraft(t, perm, other())}, all),
		} {
			var verr *engine.ValidationError
			if !errors.As(err, &verr) || !strings.Contains(strings.Join(verr.Fields["OrganizationIdentifier"], ";"), "OrganizationIdentifier cannot be null") {
				t.Errorf("%s with a check setting a null organization: %v, want a problem naming OrganizationIdentifier", what, err)
			}
		}
		notReadOnly := setting("ObjectType", "set by the check")
		_, err = s.Create(notReadOnly, perm, draftOf(t, perm, other()), all)
		if err == nil || errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "permission-grant") || !strings.Contains(err.Error(), "Permission.ObjectType") {
			t.Errorf("create with a check setting ObjectType: %v, want the error of a check setting a member that is not read-only", err)
		}
		if n := count(t, s, perm); n != 1 {
			t.Errorf("%d permissions after the refused writes, want 1", n)
		}
		got, err := s.Get(ctx, perm, key, nil, all)
		if err != nil {
			t.Fatal(err)
		}
		if got.Get(perm, "AllowWrite") != false || got.Get(perm, "OrganizationIdentifier") != stored.Get(perm, "OrganizationIdentifier") {
			t.Errorf("after the refused writes: %v", got)
		}
	})
}

func fileDraft(t *testing.T, r *engine.Resource, body string) engine.Draft {
	t.Helper()
	d, err := r.DecodeFileDraft([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return d
}
